/**
 * `Signer.verifyMany` (src/crypto/signer.ts): each call answered exactly as `verify` answers it
 * (null where `verify` throws), on the calling thread while verification is quiet and on the
 * signing workers while it is busy (more than `verifyOffThreadAbove` calls in the current and
 * the previous second); a worker that stops while it holds calls does not fail them: they are
 * verified on the calling thread instead.
 */
import { describe, expect, test } from "bun:test";
import { createSigner, encodeRecordPayload, VERIFY_OFF_THREAD_ABOVE, type GeneratedKey, type Signer, type VerifyCall } from "../../src/crypto/index.ts";
import { EXIT_DOC_HASH, THROW_DOC_HASH } from "./support/crash-marker.ts";

const MASTER = new Uint8Array(32).fill(7);
const CRASHING = new URL("./support/crashing-sign-worker.ts", import.meta.url);
const keys = createSigner({ masterKey: MASTER, workers: 0 });
const org = keys.generateKey("org:0190f000-0000-7000-8000-000000000011");

function payloadFor(key: GeneratedKey, docHash = "sha256:" + "ab".repeat(32)) {
  return encodeRecordPayload({ recordId: Bun.randomUUIDv7(), docHash, signedAtMs: Date.UTC(2026, 10, 28), signerKeyFingerprint: key.fingerprint });
}

/** A valid call, one with a flipped signature byte, one of the wrong length, one whose algorithm this build does not know. */
function mixedCalls(docHash?: string): { calls: VerifyCall[]; expected: (boolean | null)[] } {
  const message = payloadFor(org, docHash);
  const signature = keys.sign(org, message);
  const flipped = new Uint8Array(signature);
  flipped[100]! ^= 1;
  const calls: VerifyCall[] = [
    { algorithm: org.algorithm, publicKey: org.publicKey, message, signature },
    { algorithm: org.algorithm, publicKey: org.publicKey, message, signature: flipped },
    { algorithm: org.algorithm, publicKey: org.publicKey, message, signature: signature.subarray(1) },
    { algorithm: "ML-DSA-1024" as never, publicKey: org.publicKey, message, signature },
  ];
  return { calls, expected: [true, false, false, null] };
}

async function settle(signer: Signer, calls: VerifyCall[]): Promise<{ off: boolean; results: (boolean | null)[] }> {
  const answer = signer.verifyMany(calls);
  return { off: answer instanceof Promise, results: await answer };
}

describe("verifyMany", () => {
  test("quiet: answered on the calling thread, at once, as `verify` answers (null where it throws); no worker starts", () => {
    const signer = createSigner({ masterKey: MASTER, workers: 2 });
    try {
      const { calls, expected } = mixedCalls();
      const answer = signer.verifyMany(calls);
      expect(answer instanceof Promise).toBe(false);
      expect(answer).toEqual(expected);
      expect(() => signer.verify(calls[3]!.algorithm, calls[3]!.publicKey, calls[3]!.message, calls[3]!.signature)).toThrow();
      expect(signer.verifyMany([])).toEqual([]);
      expect(signer.workersRunning()).toBe(0);
      expect(VERIFY_OFF_THREAD_ABOVE).toBe(200);
    } finally {
      signer.clearCache();
    }
  });

  test("busy: once more calls than the threshold were made in the current and previous second, they go to a worker and answer the same", async () => {
    const signer = createSigner({ masterKey: MASTER, workers: 2, verifyOffThreadAbove: 6 });
    try {
      const { calls, expected } = mixedCalls();
      // 4 calls, then 8: at or under 6 on this thread, over it on a worker.
      expect(await settle(signer, calls)).toEqual({ off: false, results: expected });
      expect(signer.workersRunning()).toBe(0);
      expect(await settle(signer, calls)).toEqual({ off: true, results: expected });
      expect(signer.workersRunning()).toBe(1);
      expect(await settle(signer, calls)).toEqual({ off: true, results: expected });
      // Counted by where they ran, call by call (the /metrics counter).
      expect(signer.verifiedBy()).toEqual({ thread: 4, workers: 8 });
    } finally {
      signer.clearCache();
    }
  });

  test("an invalid threshold is refused", () => {
    expect(() => createSigner({ masterKey: MASTER, verifyOffThreadAbove: -1 })).toThrow(RangeError);
    expect(() => createSigner({ masterKey: MASTER, verifyOffThreadAbove: 1.5 })).toThrow(RangeError);
  });

  test("without a master key the workers still verify (they cannot sign)", async () => {
    const signer = createSigner({ masterKey: null, workers: 1, verifyOffThreadAbove: 0 });
    try {
      const { calls, expected } = mixedCalls();
      expect(await settle(signer, calls)).toEqual({ off: true, results: expected });
      expect(signer.workersRunning()).toBe(1);
    } finally {
      signer.clearCache();
    }
  });

  test("many concurrent batches over two workers each get their own answers, in order", async () => {
    const signer = createSigner({ masterKey: MASTER, workers: 2, verifyOffThreadAbove: 0 });
    try {
      const batches = Array.from({ length: 12 }, (_, i) => mixedCalls("sha256:" + i.toString(16).padStart(2, "0").repeat(32)));
      // Shuffle each batch's order so a mixed-up answer would show.
      const answers = await Promise.all(batches.map((b, i) => signer.verifyMany(i % 2 === 0 ? b.calls : [...b.calls].reverse())));
      answers.forEach((a, i) => expect(a).toEqual(i % 2 === 0 ? batches[i]!.expected : [...batches[i]!.expected].reverse()));
      expect(signer.workersRunning()).toBe(2);
    } finally {
      signer.clearCache();
    }
  });

  for (const [how, docHash] of [
    ["throws an uncaught error", THROW_DOC_HASH],
    ["ends its thread", EXIT_DOC_HASH],
  ] as const) {
    test(`a worker that ${how} while it holds calls: they are verified on the calling thread instead, never failed`, async () => {
      const signer = createSigner({ masterKey: MASTER, workers: 1, verifyOffThreadAbove: 0, workerEntry: CRASHING });
      try {
        const doomed = mixedCalls(docHash);
        const behind = mixedCalls();
        const answers = await Promise.all([signer.verifyMany(doomed.calls), signer.verifyMany(behind.calls)]);
        expect(answers).toEqual([doomed.expected, behind.expected]);
        expect(signer.workersRunning()).toBe(0);
        // Verified here in the end, and counted so.
        expect(signer.verifiedBy()).toEqual({ thread: 8, workers: 0 });
        // The next busy batch gets a fresh worker.
        expect(await settle(signer, behind.calls)).toEqual({ off: true, results: behind.expected });
        expect(signer.workersRunning()).toBe(1);
      } finally {
        signer.clearCache();
      }
    });
  }
});
