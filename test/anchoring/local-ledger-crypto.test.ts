/**
 * The local ledger's cryptography against known answers and independent implementations:
 * Keccak-256 and secp256k1 (src/crypto/, over @noble/*), ED25519 and secp256k1 signatures made by
 * @hashgraph/sdk, and the topic running hash (hedera-services' own test vectors).
 */
import { describe, expect, test } from "bun:test";
import { KeyList, PrivateKey } from "@hashgraph/sdk";
import { proto } from "@hashgraph/proto";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { createEd25519Verifier, decompressSecp256k1 as decompressPoint, keccak256, verifySecp256k1 } from "../../src/crypto/index.ts";
import { createSignatureCheck, isValidKey } from "../../src/local-ledger/keys.ts";
import { nextRunningHash } from "../../src/local-ledger/running-hash.ts";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const utf8 = (s: string) => new TextEncoder().encode(s);

describe("keccak256", () => {
  test("known answers", () => {
    expect(hex(keccak256(new Uint8Array()))).toBe("c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
    expect(hex(keccak256(utf8("abc")))).toBe("4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45");
    expect(hex(keccak256(utf8("The quick brown fox jumps over the lazy dog")))).toBe("4d741b6f1eb29cb2a9b9911c82f56fa8d73b04959d3d9d222895df6c0b28aa15");
  });

  test("agrees with @noble/hashes on every length around the block size", () => {
    const data = Uint8Array.from({ length: 700 }, (_, i) => (i * 31 + 7) & 0xff);
    for (const n of [0, 1, 55, 135, 136, 137, 271, 272, 273, 500, 700]) {
      expect(hex(keccak256(data.subarray(0, n)))).toBe(hex(keccak_256(data.subarray(0, n))));
    }
  });
});

describe("secp256k1", () => {
  const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

  test("accepts the SDK's signatures and refuses tampering, other keys and high-S forms", () => {
    const key = PrivateKey.generateECDSA();
    const other = PrivateKey.generateECDSA();
    const pub = key.publicKey.toBytesRaw();
    for (const len of [1, 100, 136, 300, 2000]) {
      const body = crypto.getRandomValues(new Uint8Array(len));
      const sig = key.sign(body);
      expect(key.publicKey.verify(body, sig)).toBe(true);
      expect(verifySecp256k1(pub, body, sig)).toBe(true);
      expect(verifySecp256k1(other.publicKey.toBytesRaw(), body, sig)).toBe(false);
      const tampered = Uint8Array.from(body);
      tampered[0] = tampered[0]! ^ 1;
      expect(verifySecp256k1(pub, tampered, sig)).toBe(false);
      // (r, n - s) is the same signature mathematically; Hedera's nodes refuse it (low-S only).
      const s = BigInt("0x" + hex(sig.subarray(32)));
      const highS = Uint8Array.from([...sig.subarray(0, 32), ...Buffer.from((N - s).toString(16).padStart(64, "0"), "hex")]);
      expect(verifySecp256k1(pub, body, highS)).toBe(false);
    }
  });

  test("malformed keys and signatures are refused, not thrown", () => {
    const key = PrivateKey.generateECDSA();
    const body = utf8("body");
    const sig = key.sign(body);
    expect(verifySecp256k1(key.publicKey.toBytesRaw().subarray(1), body, sig)).toBe(false);
    expect(verifySecp256k1(Uint8Array.of(0x04, ...new Uint8Array(32)), body, sig)).toBe(false);
    expect(verifySecp256k1(key.publicKey.toBytesRaw(), body, sig.subarray(0, 63))).toBe(false);
    expect(verifySecp256k1(key.publicKey.toBytesRaw(), body, new Uint8Array(64))).toBe(false);
    // x = 5 is not on the curve (5^3 + 7 = 132 is not a square mod p).
    expect(decompressPoint(Uint8Array.of(0x02, ...new Uint8Array(31), 5))).toBeNull();
  });
});

describe("topic running hash v3", () => {
  // hedera-services, MerkleTopicTest.toStringWorks: payer 0.0.123, "Hello world!", topic 0.0.s,
  // message i of topic s at Instant.ofEpochSecond(1_234_567 + s * 1_000_000, i).
  test("reproduces the consensus nodes' own test vectors", () => {
    const message = utf8("Hello world!");
    const step = (previous: Uint8Array, topic: number, seconds: number, nanos: number, sequenceNumber: number) =>
      nextRunningHash({
        previousRunningHash: previous,
        payer: { shard: 0, realm: 0, num: 123 },
        topic: { shard: 0, realm: 0, num: topic },
        consensusSeconds: seconds,
        consensusNanos: nanos,
        sequenceNumber,
        message,
      });
    expect(hex(step(new Uint8Array(48), 1, 2_234_567, 0, 1))).toBe(
      "3c8e1604b2cd20068f02976fa10217491561cc864b7bff28451e1f1a0a8c58c02df56f60562f129e845e0ba16e3420eb",
    );
    const first = step(new Uint8Array(48), 2, 3_234_567, 0, 1);
    expect(hex(step(first, 2, 3_234_567, 1, 2))).toBe(
      "a19f77d351424204e3eeec1bb42bcdc728e521483bb99103dc7fa7c527db0c14aeefe4b0a8a7d0924b2f2c4a1d237bc5",
    );
  });

  test("refuses a previous hash of the wrong size", () => {
    expect(() =>
      nextRunningHash({
        previousRunningHash: new Uint8Array(32),
        payer: { shard: 0, realm: 0, num: 2 },
        topic: { shard: 0, realm: 0, num: 1001 },
        consensusSeconds: 1,
        consensusNanos: 0,
        sequenceNumber: 1,
        message: utf8("x"),
      }),
    ).toThrow();
  });
});

describe("keys and signature maps", () => {
  const verifyEd25519 = createEd25519Verifier();
  const body = utf8("transaction body bytes");
  const pair = (key: PrivateKey, prefixLength?: number): proto.ISignaturePair => {
    const raw = key.publicKey.toBytesRaw();
    const sig = key.sign(body);
    const prefix = prefixLength === undefined ? raw : raw.subarray(0, prefixLength);
    return key.type === "ED25519" ? { pubKeyPrefix: prefix, ed25519: sig } : { pubKeyPrefix: prefix, ECDSASecp256k1: sig };
  };
  const keyOf = (key: PrivateKey): proto.IKey => key.publicKey._toProtobufKey();

  test("a primitive key is satisfied by a matching, valid signature, also under a short prefix", async () => {
    const ed = PrivateKey.generateED25519();
    const ec = PrivateKey.generateECDSA();
    const check = createSignatureCheck(body, { sigPair: [pair(ed, 4), pair(ec)] }, verifyEd25519);
    expect(check.satisfies(keyOf(ed))).toBe(true);
    expect(check.satisfies(keyOf(ec))).toBe(true);
    const stranger = PrivateKey.generateED25519();
    expect(check.satisfies(keyOf(stranger))).toBe(false);
  });

  test("a signature over other bytes does not count", async () => {
    const ed = PrivateKey.generateED25519();
    const check = createSignatureCheck(utf8("other bytes"), { sigPair: [pair(ed)] }, verifyEd25519);
    expect(check.satisfies(keyOf(ed))).toBe(false);
  });

  test("key lists need every member, threshold keys their threshold", async () => {
    const [a, b, c] = [PrivateKey.generateED25519(), PrivateKey.generateECDSA(), PrivateKey.generateED25519()];
    const list = new KeyList([a.publicKey, b.publicKey])._toProtobufKey();
    const twoOfThree = new KeyList([a.publicKey, b.publicKey, c.publicKey], 2)._toProtobufKey();
    const onlyA = createSignatureCheck(body, { sigPair: [pair(a)] }, verifyEd25519);
    expect(onlyA.satisfies(list)).toBe(false);
    expect(onlyA.satisfies(twoOfThree)).toBe(false);
    const aAndC = createSignatureCheck(body, { sigPair: [pair(a), pair(c)] }, verifyEd25519);
    expect(aAndC.satisfies(list)).toBe(false);
    expect(aAndC.satisfies(twoOfThree)).toBe(true);
  });

  test("key validation follows the network's attribute rules", () => {
    expect(isValidKey(keyOf(PrivateKey.generateED25519()))).toBe(true);
    expect(isValidKey(keyOf(PrivateKey.generateECDSA()))).toBe(true);
    expect(isValidKey({ ed25519: new Uint8Array(31) })).toBe(false);
    expect(isValidKey({ ECDSASecp256k1: new Uint8Array(33) })).toBe(false);
    expect(isValidKey({ keyList: { keys: [] } })).toBe(false);
    expect(isValidKey({ thresholdKey: { threshold: 3, keys: { keys: [keyOf(PrivateKey.generateED25519())] } } })).toBe(false);
    expect(isValidKey({ contractID: { contractNum: 5 as never } })).toBe(false);
  });
});
