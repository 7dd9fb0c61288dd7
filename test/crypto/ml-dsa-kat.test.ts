/**
 * Known answers for ML-DSA-65 across both implementations. Round trips alone would pass if both
 * sides changed together (noble's sign/verify argument order has changed between releases, and
 * an encoding change would be symmetric too), so the digests below are hard-coded: a release
 * that derives another public key from the same seed, or signs deterministically differently,
 * fails here.
 */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { ml_dsa65 } from "@noble/post-quantum/ml-dsa.js";
import { algorithmSpec, createSigner, publicKeyFromSeedWithNoble, signWithNoble, verifyWithNoble } from "../../src/crypto/index.ts";

const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
const ML_DSA_65 = algorithmSpec("ML-DSA-65");

/** ξ = 00 01 02 … 1f */
const SEED = Uint8Array.from({ length: 32 }, (_, i) => i);
const MESSAGE = new TextEncoder().encode("docverify known-answer message");
const EXPECTED_PUBLIC_KEY_SHA256 = "d666806e11cee19a7c989f7445f90dd419cf4d2d51db8c0fdb4c0f0a542238c9";
const EXPECTED_PUBLIC_KEY_PREFIX = "48683d91978e31eb3dddb8b0473482d2";
const EXPECTED_DETERMINISTIC_SIGNATURE_SHA256 = "7bce46e6154f54e247e575b770dc1271a1dc17b4d53de5c5669497caa62c6d49";

const verifier = createSigner({ masterKey: null });

function flipBit(bytes: Uint8Array, index: number): Uint8Array {
  const copy = new Uint8Array(bytes);
  copy[index] = (copy[index] ?? 0) ^ 0x01;
  return copy;
}

describe("ML-DSA-65 key derivation", () => {
  test("noble and native derive the same, pinned, public key from a fixed seed", () => {
    const noblePk = publicKeyFromSeedWithNoble("ML-DSA-65", SEED);
    const nativePk = ML_DSA_65.importSeed(SEED).publicKey;
    expect(noblePk.length).toBe(1952);
    expect(Buffer.from(nativePk).toString("hex")).toBe(Buffer.from(noblePk).toString("hex"));
    expect(sha256(noblePk)).toBe(EXPECTED_PUBLIC_KEY_SHA256);
    expect(Buffer.from(noblePk.subarray(0, 16)).toString("hex")).toBe(EXPECTED_PUBLIC_KEY_PREFIX);
  });

  test("different seeds give different keys", () => {
    const other = flipBit(SEED, 31);
    expect(sha256(ML_DSA_65.importSeed(other).publicKey)).not.toBe(EXPECTED_PUBLIC_KEY_SHA256);
  });

  test("noble 0.7.1 argument order: sign(msg, secretKey, opts), verify(sig, msg, publicKey)", () => {
    const { publicKey, secretKey } = ml_dsa65.keygen(SEED);
    const sig = ml_dsa65.sign(MESSAGE, secretKey, { extraEntropy: false });
    expect(ml_dsa65.verify(sig, MESSAGE, publicKey)).toBe(true);
    // The pre-0.5 order (publicKey, msg, sig) must not silently verify.
    expect(() => (ml_dsa65.verify as (...a: Uint8Array[]) => boolean)(publicKey, MESSAGE, sig)).toThrow();
  });
});

describe("ML-DSA-65 signatures", () => {
  const publicKey = publicKeyFromSeedWithNoble("ML-DSA-65", SEED);

  test("deterministic noble signature matches the pinned digest and repeats exactly", () => {
    const a = signWithNoble("ML-DSA-65", SEED, MESSAGE, { deterministic: true });
    const b = signWithNoble("ML-DSA-65", SEED, MESSAGE, { deterministic: true });
    expect(a.length).toBe(3309);
    expect(sha256(a)).toBe(EXPECTED_DETERMINISTIC_SIGNATURE_SHA256);
    expect(sha256(b)).toBe(sha256(a));
  });

  test("hedged noble signatures differ from each other and from the deterministic one", () => {
    const a = signWithNoble("ML-DSA-65", SEED, MESSAGE, { deterministic: false });
    const b = signWithNoble("ML-DSA-65", SEED, MESSAGE, { deterministic: false });
    expect(sha256(a)).not.toBe(sha256(b));
    expect(sha256(a)).not.toBe(EXPECTED_DETERMINISTIC_SIGNATURE_SHA256);
  });

  test("native verifies noble's signature (deterministic and hedged)", () => {
    for (const deterministic of [true, false]) {
      const sig = signWithNoble("ML-DSA-65", SEED, MESSAGE, { deterministic });
      expect(verifier.verify("ML-DSA-65", publicKey, MESSAGE, sig)).toBe(true);
    }
  });

  test("noble verifies native's signature; native signing is hedged", () => {
    const { privateKey } = ML_DSA_65.importSeed(SEED);
    const a = ML_DSA_65.sign(privateKey, MESSAGE);
    const b = ML_DSA_65.sign(privateKey, MESSAGE);
    expect(a.length).toBe(3309);
    expect(verifyWithNoble("ML-DSA-65", publicKey, MESSAGE, a)).toBe(true);
    expect(verifyWithNoble("ML-DSA-65", publicKey, MESSAGE, b)).toBe(true);
    expect(sha256(a)).not.toBe(sha256(b));
  });

  describe("tampering: one flipped bit makes both implementations refuse", () => {
    const sig = signWithNoble("ML-DSA-65", SEED, MESSAGE, { deterministic: true });
    const both = (pk: Uint8Array, msg: Uint8Array, s: Uint8Array) => [verifier.verify("ML-DSA-65", pk, msg, s), verifyWithNoble("ML-DSA-65", pk, msg, s)];

    test("untampered inputs verify with both", () => {
      expect(both(publicKey, MESSAGE, sig)).toEqual([true, true]);
    });
    test.each([0, 7, MESSAGE.length - 1])("message byte %d", (i) => {
      expect(both(publicKey, flipBit(MESSAGE, i), sig)).toEqual([false, false]);
    });
    test.each([0, 100, 1500, 3308])("signature byte %d", (i) => {
      expect(both(publicKey, MESSAGE, flipBit(sig, i))).toEqual([false, false]);
    });
    test.each([0, 31, 32, 1000, 1951])("public key byte %d", (i) => {
      expect(both(flipBit(publicKey, i), MESSAGE, sig)).toEqual([false, false]);
    });
    test("truncated, extended and empty inputs are false, not a throw", () => {
      expect(both(publicKey, MESSAGE, sig.subarray(1))).toEqual([false, false]);
      expect(both(publicKey, MESSAGE, new Uint8Array([...sig, 0]))).toEqual([false, false]);
      expect(both(publicKey.subarray(1), MESSAGE, sig)).toEqual([false, false]);
      expect(both(publicKey, MESSAGE, new Uint8Array(0))).toEqual([false, false]);
      expect(both(new Uint8Array(1952), MESSAGE, sig)).toEqual([false, false]);
    });
  });

  test("an unknown algorithm is an error, not a verdict", () => {
    expect(() => verifier.verify("ML-DSA-87" as "ML-DSA-65", publicKey, MESSAGE, new Uint8Array(3309))).toThrow(/unsupported signature algorithm/);
    expect(() => verifyWithNoble("Ed25519" as "ML-DSA-65", publicKey, MESSAGE, new Uint8Array(3309))).toThrow(/unsupported signature algorithm/);
  });
});
