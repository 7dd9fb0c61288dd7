import { expect, test } from "bun:test";
import { crcBase62, generateKey, KEY_LENGTH, keyPrefix, parseKey, secretDigest, secretMatches } from "../src/keys/api-key.ts";

test("a minted key has the documented shape and parses back", () => {
  for (const env of ["live", "test"] as const) {
    const k = generateKey(env);
    expect(k.key).toHaveLength(KEY_LENGTH);
    expect(k.key).toMatch(new RegExp(`^dv_${env}_[0-9A-Za-z]{54}$`));
    expect(k.key.slice(8, 24)).toBe(k.keyId);
    expect(k.key.slice(24, 56)).toBe(k.secret);
    expect(parseKey(k.key)).toEqual({ environment: env, keyId: k.keyId, secret: k.secret });
    expect(keyPrefix(k)).toBe(`dv_${env}_${k.keyId}`);
  }
});

test("the checksum is CRC-32 (IEEE) in base62, padded to 6", () => {
  // CRC-32("123456789") = 0xCBF43926 (the standard check value) = "3jZRME" in base62 (0-9A-Za-z),
  // computed independently with Python's zlib.crc32.
  expect(crcBase62("123456789")).toBe("3jZRME");
  expect(crcBase62("")).toBe("000000");
});

test("a fixed key with a known checksum", () => {
  const body = "dv_live_" + "A".repeat(16) + "b".repeat(32);
  const key = body + crcBase62(body);
  expect(parseKey(key)?.keyId).toBe("A".repeat(16));
});

test("any single-character change is caught by the checksum or the format", () => {
  const k = generateKey("live").key;
  for (let i = 8; i < KEY_LENGTH; i++) {
    const c = k[i] === "x" ? "y" : "x";
    expect(parseKey(k.slice(0, i) + c + k.slice(i + 1))).toBeNull();
  }
  expect(parseKey(k.replace("dv_live_", "dv_test_"))).toBeNull();
  expect(parseKey(k.slice(0, -1))).toBeNull();
  expect(parseKey(k + "0")).toBeNull();
  expect(parseKey(" " + k.slice(1))).toBeNull();
  expect(parseKey("")).toBeNull();
  expect(parseKey(k.replace("dv_", "sk_"))).toBeNull();
});

test("keys are random", () => {
  const ids = new Set(Array.from({ length: 200 }, () => generateKey("test").keyId));
  expect(ids.size).toBe(200);
});

test("secrets compare against their digest only", () => {
  const k = generateKey("live");
  const d = secretDigest(k.secret);
  expect(d).toHaveLength(32);
  expect(secretMatches(k.secret, d)).toBe(true);
  expect(secretMatches(k.secret.replace(/.$/, (c) => (c === "a" ? "b" : "a")), d)).toBe(false);
  expect(secretMatches(k.secret, d.subarray(0, 31))).toBe(false);
});

test("a secret's digest is SHA-256 of its UTF-8 bytes, as stored by every earlier release", () => {
  const { createHash } = require("node:crypto") as typeof import("node:crypto");
  for (const secret of [generateKey("live").secret, "", "é ü €", "\u{1F600}"]) {
    expect(secretDigest(secret).equals(createHash("sha256").update(secret, "utf8").digest())).toBe(true);
  }
  // A fixed vector: a stored digest must keep matching after any change of implementation.
  expect(secretDigest("abc").toString("hex")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
});

test("the checksum is compared as crcBase62 writes it: every other value of any of its six characters is refused", () => {
  const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  for (let n = 0; n < 20; n++) {
    const { key } = generateKey(n % 2 === 0 ? "live" : "test");
    expect(key.slice(-6)).toBe(crcBase62(key.slice(0, -6)));
    expect(parseKey(key)).not.toBeNull();
    for (let at = KEY_LENGTH - 6; at < KEY_LENGTH; at++) {
      for (const c of alphabet) {
        if (c === key[at]) continue;
        expect(parseKey(key.slice(0, at) + c + key.slice(at + 1))).toBeNull();
      }
    }
  }
});
