/**
 * The signing workers (src/crypto/sign-pool.ts, sign-worker.ts): what a worker signs is exactly
 * what the calling thread signs, checked against both implementations; workers start on first
 * use only, up to the pool's size, and stop when idle; key failures come back as themselves; a
 * worker that dies fails its jobs with SignWorkerError and is replaced.
 */
import { describe, expect, test } from "bun:test";
import {
  createSigner,
  defaultSignWorkers,
  encodeRecordPayload,
  encodeSealPayload,
  KeyDecryptionError,
  SignWorkerError,
  verifyWithNoble,
  type GeneratedKey,
} from "../../src/crypto/index.ts";
import { createSignPool, signWorkerUrl } from "../../src/crypto/sign-pool.ts";
import { deriveSeedEncryptionKey } from "../../src/crypto/sealed-seed.ts";
import { waitFor } from "../support/wait.ts";
import { EXIT_DOC_HASH, THROW_DOC_HASH } from "./support/crash-marker.ts";

const MASTER = new Uint8Array(32).fill(9);
const CRASHING = new URL("./support/crashing-sign-worker.ts", import.meta.url);

function payloadFor(key: GeneratedKey, docHash = "sha256:" + "ab".repeat(32)) {
  return encodeRecordPayload({ recordId: Bun.randomUUIDv7(), docHash, signedAtMs: Date.UTC(2026, 10, 24), signerKeyFingerprint: key.fingerprint });
}

describe("signing workers", () => {
  test("by default one per core, at least one, at most four", () => {
    const cores = navigator.hardwareConcurrency;
    const original = Object.getOwnPropertyDescriptor(navigator, "hardwareConcurrency");
    try {
      for (const [n, expected] of [[1, 1], [2, 2], [4, 4], [64, 4], [0, 1]] as const) {
        Object.defineProperty(navigator, "hardwareConcurrency", { value: n, configurable: true });
        expect(defaultSignWorkers()).toBe(expected);
      }
    } finally {
      if (original === undefined) delete (navigator as { hardwareConcurrency?: number }).hardwareConcurrency;
      else Object.defineProperty(navigator, "hardwareConcurrency", original);
    }
    expect(navigator.hardwareConcurrency).toBe(cores);
  });

  test("a worker signs exactly what the calling thread signs: both signatures verify over the same payloads, natively and with noble", async () => {
    const inThread = createSigner({ masterKey: MASTER, workers: 0 });
    const pooled = createSigner({ masterKey: MASTER, workers: 2 });
    const org = inThread.generateKey("org:0190f000-0000-7000-8000-000000000001");
    const seal = inThread.generateKey("service-seal");
    const payload = payloadFor(org);
    try {
      const a = await inThread.signAndSeal(org, seal, payload);
      const b = await pooled.signAndSeal(org, seal, payload);
      expect(inThread.workersRunning()).toBe(0);
      expect(pooled.workersRunning()).toBe(1);
      for (const { signature, sealSignature } of [a, b]) {
        expect(signature.length).toBe(3309);
        const sealPayload = encodeSealPayload(payload, signature, seal.fingerprint);
        expect(inThread.verify("ML-DSA-65", org.publicKey, payload, signature)).toBe(true);
        expect(inThread.verify("ML-DSA-65", seal.publicKey, sealPayload, sealSignature)).toBe(true);
        expect(verifyWithNoble("ML-DSA-65", org.publicKey, payload, signature)).toBe(true);
        expect(verifyWithNoble("ML-DSA-65", seal.publicKey, sealPayload, sealSignature)).toBe(true);
        // The seal binds this signature and no other.
        expect(inThread.verify("ML-DSA-65", seal.publicKey, encodeSealPayload(payload, signature === a.signature ? b.signature : a.signature, seal.fingerprint), sealSignature)).toBe(false);
        // Not a signature over any other payload.
        expect(inThread.verify("ML-DSA-65", org.publicKey, payloadFor(org), signature)).toBe(false);
      }
    } finally {
      pooled.clearCache();
    }
    expect(pooled.workersRunning()).toBe(0);
  });

  test("no worker before the first job; at most `size` while busy; none after the idle time; a later job starts one again", async () => {
    const signer = createSigner({ masterKey: MASTER, workers: 0 });
    const org = signer.generateKey("org:0190f000-0000-7000-8000-000000000002");
    const seal = signer.generateKey("service-seal");
    const pool = createSignPool({ encryptionKey: deriveSeedEncryptionKey(MASTER), size: 2, cacheSize: 8, idleMs: 100 });
    try {
      expect(pool.running()).toBe(0);
      const results = await Promise.all(Array.from({ length: 12 }, () => pool.signAndSeal(org, seal, payloadFor(org))));
      expect(results).toHaveLength(12);
      expect(pool.running()).toBe(2);
      await waitFor("the idle workers to stop", () => (pool.running() === 0 ? true : null), 5_000, 20);
      const again = payloadFor(org);
      const { signature } = await pool.signAndSeal(org, seal, again);
      expect(signer.verify("ML-DSA-65", org.publicKey, again, signature)).toBe(true);
      expect(pool.running()).toBe(1);
    } finally {
      pool.close();
    }
    expect(pool.running()).toBe(0);
  });

  test("a negative size is refused; the worker entry is a file beside the pool", () => {
    expect(() => createSigner({ masterKey: MASTER, workers: -1 })).toThrow(/workers/);
    expect(() => createSignPool({ encryptionKey: deriveSeedEncryptionKey(MASTER), size: 0, cacheSize: 8 })).toThrow(/size/);
    expect(signWorkerUrl().protocol).toBe("file:");
  });

  test("a sealed seed that does not open is a KeyDecryptionError from the worker too, and the worker goes on", async () => {
    const signer = createSigner({ masterKey: MASTER, workers: 1 });
    const org = signer.generateKey("org:0190f000-0000-7000-8000-000000000003");
    const seal = signer.generateKey("service-seal");
    const tampered = new Uint8Array(org.sealedSeed);
    tampered[tampered.length - 1]! ^= 1;
    try {
      const error = await signer.signAndSeal({ ...org, sealedSeed: tampered }, seal, payloadFor(org)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(KeyDecryptionError);
      expect((error as KeyDecryptionError).reason).toBe("authentication_failed");
      // A key under another master key: the same.
      const other = createSigner({ masterKey: new Uint8Array(32).fill(1), workers: 0 }).generateKey("org:0190f000-0000-7000-8000-000000000004");
      expect(await signer.signAndSeal(other, seal, payloadFor(other)).catch((e: unknown) => e)).toBeInstanceOf(KeyDecryptionError);
      const ok = payloadFor(org);
      expect(signer.verify("ML-DSA-65", org.publicKey, ok, (await signer.signAndSeal(org, seal, ok)).signature)).toBe(true);
      expect(signer.workersRunning()).toBe(1);
    } finally {
      signer.clearCache();
    }
  });

  test("without a master key signAndSeal is the 503 of a sealed key store, and no worker starts", async () => {
    const locked = createSigner({ masterKey: null });
    const key = createSigner({ masterKey: MASTER, workers: 0 }).generateKey("service-seal");
    const error = await locked.signAndSeal(key, key, payloadFor(key)).catch((e: unknown) => e);
    expect((error as { code?: string }).code).toBe("SERVICE_UNAVAILABLE");
    expect(locked.workersRunning()).toBe(0);
  });

  for (const [how, docHash] of [
    ["throws an uncaught error", THROW_DOC_HASH],
    ["ends its thread", EXIT_DOC_HASH],
  ] as const) {
    test(`a worker that ${how} fails the jobs it holds with SignWorkerError, once each; the next job gets a fresh worker`, async () => {
      const signer = createSigner({ masterKey: MASTER, workers: 1, workerEntry: CRASHING });
      const org = signer.generateKey("org:0190f000-0000-7000-8000-000000000005");
      const seal = signer.generateKey("service-seal");
      try {
        // Warm: the worker is running and has signed once.
        await signer.signAndSeal(org, seal, payloadFor(org));
        const doomed = [signer.signAndSeal(org, seal, payloadFor(org, docHash)), signer.signAndSeal(org, seal, payloadFor(org, "sha256:" + "01".repeat(32)))];
        const settled = await Promise.allSettled(doomed);
        expect(settled[0]!.status).toBe("rejected");
        expect((settled[0] as PromiseRejectedResult).reason).toBeInstanceOf(SignWorkerError);
        // The job queued behind it on the same worker is failed too, never left waiting.
        expect(settled[1]!.status).toBe("rejected");
        expect((settled[1] as PromiseRejectedResult).reason).toBeInstanceOf(SignWorkerError);
        expect(signer.workersRunning()).toBe(0);
        const after = payloadFor(org);
        const { signature } = await signer.signAndSeal(org, seal, after);
        expect(signer.verify("ML-DSA-65", org.publicKey, after, signature)).toBe(true);
        expect(signer.workersRunning()).toBe(1);
      } finally {
        signer.clearCache();
      }
    });
  }
});
