/** Seeds at rest: AES-256-GCM envelope v1, bound to algorithm, fingerprint and purpose. */
import { describe, expect, test } from "bun:test";
import { createDecipheriv, hkdfSync } from "node:crypto";
import { deriveSeedEncryptionKey, KeyDecryptionError, openSeed, sealSeed, type SeedBinding } from "../../src/crypto/index.ts";

const MASTER = new Uint8Array(32).fill(7);
const OTHER_MASTER = new Uint8Array(32).fill(8);
const KEY = deriveSeedEncryptionKey(MASTER);
const SEED = Uint8Array.from({ length: 32 }, (_, i) => 255 - i);
const BINDING: SeedBinding = { algorithm: "ML-DSA-65", fingerprint: new Uint8Array(32).fill(0xab), purpose: "org:0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d" };

function failure(f: () => unknown): KeyDecryptionError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(KeyDecryptionError);
    return e as KeyDecryptionError;
  }
  throw new Error("expected a KeyDecryptionError");
}

describe("sealed seed envelope v1", () => {
  test("round trip", () => {
    const env = sealSeed(KEY, SEED, BINDING);
    expect(Buffer.from(openSeed(KEY, env, BINDING))).toEqual(Buffer.from(SEED));
  });

  test("layout: DVSS, version 1, 12-byte nonce, ciphertext, 16-byte tag; fresh nonce each time", () => {
    const a = sealSeed(KEY, SEED, BINDING);
    const b = sealSeed(KEY, SEED, BINDING);
    expect(a.length).toBe(4 + 1 + 12 + 32 + 16);
    expect(Buffer.from(a.subarray(0, 5)).toString("hex")).toBe("4456535301");
    expect(Buffer.from(a.subarray(5, 17))).not.toEqual(Buffer.from(b.subarray(5, 17)));
    expect(Buffer.from(a.subarray(17, 49))).not.toEqual(Buffer.from(SEED));
  });

  test("the documented construction decrypts it independently (HKDF info, AD layout)", () => {
    const env = sealSeed(KEY, SEED, BINDING);
    const key = Buffer.from(hkdfSync("sha256", MASTER, new Uint8Array(0), "docverify/seed-encryption/v1", 32));
    const enc = new TextEncoder();
    const u32 = (n: number) => Buffer.from([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
    const field = (b: Uint8Array) => Buffer.concat([u32(b.length), b]);
    const ad = Buffer.concat([
      enc.encode("docverify/sealed-seed/v1\0"),
      field(enc.encode(BINDING.algorithm)),
      field(BINDING.fingerprint),
      field(enc.encode(BINDING.purpose)),
      enc.encode("DVSS"),
      Buffer.from([1]),
    ]);
    const d = createDecipheriv("aes-256-gcm", key, env.subarray(5, 17));
    d.setAAD(ad);
    d.setAuthTag(env.subarray(-16));
    expect(Buffer.concat([d.update(env.subarray(17, -16)), d.final()])).toEqual(Buffer.from(SEED));
  });

  test("wrong master key: typed error, reason authentication_failed", () => {
    const env = sealSeed(KEY, SEED, BINDING);
    const e = failure(() => openSeed(deriveSeedEncryptionKey(OTHER_MASTER), env, BINDING));
    expect(e.reason).toBe("authentication_failed");
    expect(e.code).toBe("INTERNAL_ERROR");
    expect(e.keyId).toBe("ab".repeat(32));
    expect(e.message).not.toContain("ab".repeat(8)); // nothing internal in what callers see
  });

  test("associated data: a ciphertext cannot move to another key, purpose or algorithm", () => {
    const env = sealSeed(KEY, SEED, BINDING);
    const swaps: SeedBinding[] = [
      { ...BINDING, fingerprint: new Uint8Array(32).fill(0xac) },
      { ...BINDING, purpose: "service-seal" },
      { ...BINDING, purpose: BINDING.purpose + "x" },
      { ...BINDING, algorithm: "ML-DSA-87" as "ML-DSA-65" },
    ];
    for (const b of swaps) expect(failure(() => openSeed(KEY, env, b)).reason).toBe("authentication_failed");
  });

  test("two seeds' ciphertexts cannot be exchanged between their rows", () => {
    const other: SeedBinding = { ...BINDING, fingerprint: new Uint8Array(32).fill(1) };
    const envA = sealSeed(KEY, SEED, BINDING);
    const envB = sealSeed(KEY, new Uint8Array(32).fill(9), other);
    expect(failure(() => openSeed(KEY, envA, other)).reason).toBe("authentication_failed");
    expect(failure(() => openSeed(KEY, envB, BINDING)).reason).toBe("authentication_failed");
  });

  test("any flipped bit in nonce, ciphertext or tag fails", () => {
    const env = sealSeed(KEY, SEED, BINDING);
    for (const i of [5, 16, 17, 48, 49, 64]) {
      const t = new Uint8Array(env);
      t[i] = (t[i] ?? 0) ^ 0x80;
      expect(failure(() => openSeed(KEY, t, BINDING)).reason).toBe("authentication_failed");
    }
  });

  test("envelope version check and malformed envelopes", () => {
    const env = sealSeed(KEY, SEED, BINDING);
    const v2 = new Uint8Array(env);
    v2[4] = 2;
    expect(failure(() => openSeed(KEY, v2, BINDING)).reason).toBe("unsupported_version");
    const v0 = new Uint8Array(env);
    v0[4] = 0;
    expect(failure(() => openSeed(KEY, v0, BINDING)).reason).toBe("unsupported_version");
    const magic = new Uint8Array(env);
    magic[0] = 0x45;
    expect(failure(() => openSeed(KEY, magic, BINDING)).reason).toBe("malformed");
    expect(failure(() => openSeed(KEY, env.subarray(0, 3), BINDING)).reason).toBe("malformed");
    expect(failure(() => openSeed(KEY, env.subarray(0, 33), BINDING)).reason).toBe("malformed");
  });

  test("purpose and key lengths are checked", () => {
    expect(() => sealSeed(KEY, SEED, { ...BINDING, purpose: "" })).toThrow(/purpose/);
    expect(() => sealSeed(KEY, SEED, { ...BINDING, purpose: "has space" })).toThrow(/purpose/);
    expect(() => sealSeed(KEY, SEED, { ...BINDING, purpose: "é" })).toThrow(/purpose/);
    expect(() => sealSeed(KEY, SEED, { ...BINDING, purpose: "x".repeat(201) })).toThrow(/purpose/);
    expect(() => deriveSeedEncryptionKey(new Uint8Array(31))).toThrow(/32 bytes/);
    expect(() => sealSeed(KEY.subarray(1), SEED, BINDING)).toThrow(/32 bytes/);
  });
});
