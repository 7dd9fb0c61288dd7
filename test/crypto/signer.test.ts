/**
 * The signer end to end: keys generated and sealed, signatures made natively and cross-checked
 * with noble, key-store failures typed, and the verification memo.
 */
import { describe, expect, mock, test } from "bun:test";
import { createHash } from "node:crypto";
import {
  createSigner,
  createVerificationMemo,
  deriveSeedEncryptionKey,
  encodeRecordPayload,
  encodeSealPayload,
  KeyDecryptionError,
  keyFingerprint,
  MasterKeyMissingError,
  sealSeed,
  verificationMemoKey,
  verifyWithNoble,
  type SealedKey,
} from "../../src/crypto/index.ts";

const MASTER = new Uint8Array(32).fill(1);
const signer = createSigner({ masterKey: MASTER });
const message = new TextEncoder().encode("a message");

describe("generateKey", () => {
  test("returns an algorithm-tagged key with its fingerprint and a sealed seed", () => {
    const key = signer.generateKey("org:0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d");
    expect(key.algorithm).toBe("ML-DSA-65");
    expect(key.publicKey.length).toBe(1952);
    expect(Buffer.from(key.fingerprint)).toEqual(Buffer.from(keyFingerprint({ algorithm: key.algorithm, publicKey: key.publicKey })));
    expect(key.purpose).toBe("org:0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d");
    expect(key.sealedSeed.length).toBe(65);
    expect(Buffer.from(key.sealedSeed.subarray(0, 5)).toString("hex")).toBe("4456535301");
  });

  test("keys are fresh each time", () => {
    const a = signer.generateKey("service-seal");
    const b = signer.generateKey("service-seal");
    expect(Buffer.from(a.publicKey)).not.toEqual(Buffer.from(b.publicKey));
  });

  test("refuses a bad purpose or algorithm", () => {
    expect(() => signer.generateKey("")).toThrow(/purpose/);
    expect(() => signer.generateKey("org: x")).toThrow(/purpose/);
    expect(() => signer.generateKey("service-seal", "ML-DSA-87" as "ML-DSA-65")).toThrow(/unsupported/);
  });
});

describe("sign and verify", () => {
  const org = signer.generateKey("org:1");
  const seal = signer.generateKey("service-seal");

  test("a record and its seal, as the product makes them, verify natively and with noble", () => {
    const recordPayload = encodeRecordPayload({
      recordId: "0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d",
      docHash: `sha256:${"ab".repeat(32)}`,
      signedAtMs: 1768469400123,
      signerKeyFingerprint: org.fingerprint,
    });
    const orgSignature = signer.sign(org, recordPayload);
    const sealPayload = encodeSealPayload(recordPayload, orgSignature, seal.fingerprint);
    const sealSignature = signer.sign(seal, sealPayload);
    for (const [pk, msg, sig] of [
      [org.publicKey, recordPayload, orgSignature],
      [seal.publicKey, sealPayload, sealSignature],
    ] as const) {
      expect(sig.length).toBe(3309);
      expect(signer.verify("ML-DSA-65", pk, msg, sig)).toBe(true);
      expect(verifyWithNoble("ML-DSA-65", pk, msg, sig)).toBe(true);
    }
    expect(signer.verify("ML-DSA-65", seal.publicKey, recordPayload, orgSignature)).toBe(false);
    expect(verifyWithNoble("ML-DSA-65", seal.publicKey, recordPayload, orgSignature)).toBe(false);
  });

  test("a fresh signer with the same master key signs with a stored key (the seed is really decrypted)", () => {
    const restarted = createSigner({ masterKey: new Uint8Array(MASTER) });
    const stored: SealedKey = { algorithm: org.algorithm, publicKey: org.publicKey, purpose: org.purpose, sealedSeed: org.sealedSeed };
    const sig = restarted.sign(stored, message);
    expect(verifyWithNoble("ML-DSA-65", org.publicKey, message, sig)).toBe(true);
  });

  test("a wrong master key fails with the typed error, not a signature", () => {
    const wrong = createSigner({ masterKey: new Uint8Array(32).fill(2) });
    let caught: unknown;
    try {
      wrong.sign(org, message);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(KeyDecryptionError);
    expect((caught as KeyDecryptionError).reason).toBe("authentication_failed");
    expect((caught as KeyDecryptionError).keyId).toBe(Buffer.from(org.fingerprint).toString("hex"));
  });

  test("a row whose sealed seed belongs to another key cannot sign (fresh signer, no cache)", () => {
    const fresh = createSigner({ masterKey: MASTER });
    const other = signer.generateKey("org:1");
    const swapped: SealedKey = { algorithm: org.algorithm, publicKey: org.publicKey, purpose: org.purpose, sealedSeed: other.sealedSeed };
    expect(() => fresh.sign(swapped, message)).toThrow(KeyDecryptionError);
    // Relabelled purpose: the cache is keyed on purpose too, so even this signer must decrypt and fail.
    expect(() => signer.sign({ ...org, purpose: "org:2" }, message)).toThrow(KeyDecryptionError);
  });

  test("a seed sealed under the right binding that derives another public key is refused", () => {
    const fresh = createSigner({ masterKey: MASTER });
    const forged = sealSeed(deriveSeedEncryptionKey(MASTER), new Uint8Array(32).fill(5), {
      algorithm: org.algorithm,
      fingerprint: org.fingerprint,
      purpose: org.purpose,
    });
    let caught: unknown;
    try {
      fresh.sign({ ...org, sealedSeed: forged }, message);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(KeyDecryptionError);
    expect((caught as KeyDecryptionError).reason).toBe("key_mismatch");
  });

  test("a stored fingerprint that is not the key's is refused", () => {
    let caught: unknown;
    try {
      signer.sign({ ...org, fingerprint: seal.fingerprint }, message);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(KeyDecryptionError);
    expect((caught as KeyDecryptionError).reason).toBe("key_mismatch");
  });

  test("verify: tampering gives false; wrong lengths give false; wrong types throw", () => {
    const sig = signer.sign(org, message);
    expect(signer.verify("ML-DSA-65", org.publicKey, message, sig)).toBe(true);
    const flipped = new Uint8Array(sig);
    flipped[10] = (flipped[10] ?? 0) ^ 1;
    expect(signer.verify("ML-DSA-65", org.publicKey, message, flipped)).toBe(false);
    expect(signer.verify("ML-DSA-65", org.publicKey, message, sig.subarray(0, 100))).toBe(false);
    expect(signer.verify("ML-DSA-65", org.publicKey.subarray(0, 100), message, sig)).toBe(false);
    expect(() => signer.verify("ML-DSA-65", org.publicKey, "a message" as never, sig)).toThrow(/Uint8Array/);
  });

  test("sealed keys are checked strictly", () => {
    expect(() => signer.sign({ ...org, orgId: "x" } as SealedKey, message)).toThrow(/unknown option "orgId"/);
    expect(() => signer.sign({ ...org, publicKey: org.publicKey.subarray(1) }, message)).toThrow(/1952 bytes/);
  });
});

describe("without a master key", () => {
  const sealed = signer.generateKey("org:1");
  const locked = createSigner({ masterKey: null });

  test("generating and signing answer MasterKeyMissingError (503); verification still works", () => {
    expect(locked.canSign).toBe(false);
    expect(signer.canSign).toBe(true);
    for (const f of [() => locked.generateKey("org:1"), () => locked.sign(sealed, message)]) {
      let caught: unknown;
      try {
        f();
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(MasterKeyMissingError);
      expect((caught as MasterKeyMissingError).code).toBe("SERVICE_UNAVAILABLE");
    }
    const sig = signer.sign(sealed, message);
    expect(locked.verify("ML-DSA-65", sealed.publicKey, message, sig)).toBe(true);
  });

  test("options are checked strictly", () => {
    expect(() => createSigner({} as never)).toThrow(/masterKey/);
    expect(() => createSigner({ masterKey: new Uint8Array(16) })).toThrow(/32 bytes/);
    expect(() => createSigner({ masterKey: null, cache: 5 } as never)).toThrow(/unknown option "cache"/);
  });
});

describe("verification memo", () => {
  const key = signer.generateKey("org:memo");
  const sig = signer.sign(key, message);

  test("answers identical inputs from memory and recomputes on any byte change", () => {
    const inner = mock(signer.verify);
    const memo = createVerificationMemo({ verify: inner, maxEntries: 10 });
    expect(memo.verify("ML-DSA-65", key.publicKey, message, sig)).toBe(true);
    expect(memo.verify("ML-DSA-65", key.publicKey, new Uint8Array(message), new Uint8Array(sig))).toBe(true);
    expect(inner).toHaveBeenCalledTimes(1);
    const other = new Uint8Array(message);
    other[0] = (other[0] ?? 0) ^ 1;
    expect(memo.verify("ML-DSA-65", key.publicKey, other, sig)).toBe(false);
    expect(memo.verify("ML-DSA-65", key.publicKey, other, sig)).toBe(false);
    expect(inner).toHaveBeenCalledTimes(2);
    expect([memo.hits, memo.misses, memo.size]).toEqual([2, 2, 2]);
  });

  test("is bounded, least recently used first", () => {
    const inner = mock(() => true);
    const memo = createVerificationMemo({ verify: inner, maxEntries: 2 });
    const m = (i: number) => new Uint8Array([i]);
    memo.verify("ML-DSA-65", key.publicKey, m(1), sig);
    memo.verify("ML-DSA-65", key.publicKey, m(2), sig);
    memo.verify("ML-DSA-65", key.publicKey, m(1), sig); // 1 is now the most recent
    memo.verify("ML-DSA-65", key.publicKey, m(3), sig); // evicts 2
    expect(memo.size).toBe(2);
    expect(inner).toHaveBeenCalledTimes(3);
    memo.verify("ML-DSA-65", key.publicKey, m(1), sig);
    expect(inner).toHaveBeenCalledTimes(3);
    memo.verify("ML-DSA-65", key.publicKey, m(2), sig);
    expect(inner).toHaveBeenCalledTimes(4);
  });

  test("never stores an exception", () => {
    let calls = 0;
    const memo = createVerificationMemo({
      verify: () => {
        calls++;
        if (calls === 1) throw new Error("transient");
        return true;
      },
      maxEntries: 4,
    });
    expect(() => memo.verify("ML-DSA-65", key.publicKey, message, sig)).toThrow("transient");
    expect(memo.verify("ML-DSA-65", key.publicKey, message, sig)).toBe(true);
    expect(memo.size).toBe(1);
  });

  test("the key is the documented length-prefixed SHA-256, so field boundaries matter", () => {
    const enc = (b: Uint8Array) => {
      const len = Buffer.alloc(4);
      len.writeUInt32BE(b.length);
      return Buffer.concat([len, b]);
    };
    const expected = createHash("sha256")
      .update(Buffer.concat([Buffer.from("docverify/verify-memo/v1\0"), enc(Buffer.from("ML-DSA-65")), enc(key.publicKey), enc(message), enc(sig)]))
      .digest("hex");
    expect(verificationMemoKey("ML-DSA-65", key.publicKey, message, sig)).toBe(expected);
    // Moving a byte from the message to the signature changes the key.
    const a = verificationMemoKey("ML-DSA-65", key.publicKey, new Uint8Array([1, 2]), new Uint8Array([3]));
    const b = verificationMemoKey("ML-DSA-65", key.publicKey, new Uint8Array([1]), new Uint8Array([2, 3]));
    expect(a).not.toBe(b);
  });

  test("options are checked strictly", () => {
    expect(() => createVerificationMemo({ verify: signer.verify, maxEntries: 0 })).toThrow(/maxEntries/);
    expect(() => createVerificationMemo({ verify: signer.verify, maxEntries: 5, ttl: 1 } as never)).toThrow(/unknown option "ttl"/);
  });
});
