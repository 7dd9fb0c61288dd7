/**
 * The signed bytes: golden encodings, the worked example of docs/signing.md §3.4 (read from the
 * document itself, so the page and the code cannot drift apart), and input strictness.
 */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { join } from "node:path";
import {
  createSigner,
  encodeRecordPayload,
  encodeSealPayload,
  encodeTaggedPublicKey,
  keyFingerprint,
  publicKeyFromSeedWithNoble,
  signWithNoble,
  verifyWithNoble,
  type RecordPayloadFields,
} from "../../src/crypto/index.ts";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

const ORG_SEED = Uint8Array.from({ length: 32 }, (_, i) => i);
const SEAL_SEED = Uint8Array.from({ length: 32 }, (_, i) => 0x20 + i);
const orgPublicKey = publicKeyFromSeedWithNoble("ML-DSA-65", ORG_SEED);
const sealPublicKey = publicKeyFromSeedWithNoble("ML-DSA-65", SEAL_SEED);
const orgFingerprint = keyFingerprint({ algorithm: "ML-DSA-65", publicKey: orgPublicKey });
const sealFingerprint = keyFingerprint({ algorithm: "ML-DSA-65", publicKey: sealPublicKey });

const FIELDS: RecordPayloadFields = {
  recordId: "0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d",
  docHash: "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
  signedAtMs: Date.parse("2026-01-15T09:30:00.123Z"),
  signerKeyFingerprint: orgFingerprint,
};

// Hard-coded here as well as in the document: a change to both code and document together
// still fails.
const GOLDEN = {
  orgFingerprint: "0fb9f606f7863cd5ff4ab3a0cf0a2b1b9293f7c8b3aa0c12f02ceb3ed3cd70d2",
  sealFingerprint: "dda5467cd931c22f8ac70114e78f4b7aff1bd4af713fa126cf06b6a8a528fc43",
  recordPayload:
    "646f637665726966792f7265636f72642f763100" +
    "00000010" + "0190f5a37c1e7d2a9b4c3e5f6a7b8c9d" +
    "00000020" + "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824" +
    "00000008" + "0000019bc0fd8a3b" +
    "00000020" + "0fb9f606f7863cd5ff4ab3a0cf0a2b1b9293f7c8b3aa0c12f02ceb3ed3cd70d2",
  orgSignatureSha256: "651a791b34f0c262ab044a426c8011bd59731fa9e6af59287e1287bf06a2782b",
  sealPayloadSha256: "a68315e209cfbb7e7e5ea4d4f4d0ef22b8f5cc21426e5ec0f7ef05f119047cee",
  sealSignatureSha256: "8e220e2d110523c0a6f451e6c0f7f6a42840dffa80291151edcf4fd2aeef75a6",
};

/** The hex block that follows `<!-- example:NAME -->` in docs/signing.md, whitespace removed. */
async function docExample(name: string): Promise<string> {
  const doc = await Bun.file(join(import.meta.dir, "../../docs/signing.md")).text();
  const m = doc.match(new RegExp(`<!-- example:${name} -->\\s*\`\`\`text\\n([\\s\\S]*?)\`\`\``));
  if (!m?.[1]) throw new Error(`docs/signing.md has no example "${name}"`);
  return m[1].replace(/\s+/g, "");
}

describe("public key fingerprint", () => {
  test("hashes the documented tagged encoding", () => {
    const tagged = encodeTaggedPublicKey({ algorithm: "ML-DSA-65", publicKey: orgPublicKey });
    expect(hex(tagged.subarray(0, 41))).toBe("646f637665726966792f7075626c69632d6b65792f7631" + "00" + "00000009" + "4d4c2d4453412d3635" + "000007a0");
    expect(tagged.length).toBe(24 + 4 + 9 + 4 + 1952);
    expect(hex(tagged.subarray(41))).toBe(hex(orgPublicKey));
    expect(sha256(tagged)).toBe(hex(orgFingerprint));
    expect(hex(orgFingerprint)).toBe(GOLDEN.orgFingerprint);
    expect(hex(sealFingerprint)).toBe(GOLDEN.sealFingerprint);
  });

  test("refuses a public key of the wrong length or an unknown algorithm", () => {
    expect(() => keyFingerprint({ algorithm: "ML-DSA-65", publicKey: orgPublicKey.subarray(1) })).toThrow(/1952 bytes/);
    expect(() => keyFingerprint({ algorithm: "ML-DSA-44" as "ML-DSA-65", publicKey: orgPublicKey })).toThrow(/unsupported/);
  });
});

describe("record payload v1", () => {
  test("golden bytes", () => {
    const payload = encodeRecordPayload(FIELDS);
    expect(payload.length).toBe(124);
    expect(hex(payload)).toBe(GOLDEN.recordPayload);
  });

  test("the worked example in docs/signing.md is what the code produces", async () => {
    expect(await docExample("record-payload")).toBe(hex(encodeRecordPayload(FIELDS)));
    const orgSignature = signWithNoble("ML-DSA-65", ORG_SEED, encodeRecordPayload(FIELDS), { deterministic: true });
    expect(await docExample("org-signature-sha256")).toBe(sha256(orgSignature));
    const seal = encodeSealPayload(encodeRecordPayload(FIELDS), orgSignature, sealFingerprint);
    expect(await docExample("seal-payload-sha256")).toBe(sha256(seal));
    const sealSignature = signWithNoble("ML-DSA-65", SEAL_SEED, seal, { deterministic: true });
    expect(await docExample("seal-signature-sha256")).toBe(sha256(sealSignature));
  });

  test("every field changes the bytes", () => {
    const base = hex(encodeRecordPayload(FIELDS));
    const variants: RecordPayloadFields[] = [
      { ...FIELDS, recordId: "0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9e" },
      { ...FIELDS, docHash: "sha256:" + "0".repeat(64) },
      { ...FIELDS, signedAtMs: FIELDS.signedAtMs + 1 },
      { ...FIELDS, signerKeyFingerprint: sealFingerprint },
    ];
    for (const v of variants) expect(hex(encodeRecordPayload(v))).not.toBe(base);
  });

  test("inputs have exactly one accepted spelling", () => {
    const bad: [Partial<Record<keyof RecordPayloadFields, unknown>>, RegExp][] = [
      [{ recordId: "0190F5A3-7C1E-7D2A-9B4C-3E5F6A7B8C9D" }, /lowercase canonical UUID/],
      [{ recordId: "{0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d}" }, /UUID/],
      [{ recordId: "0190f5a37c1e7d2a9b4c3e5f6a7b8c9d" }, /UUID/],
      [{ docHash: FIELDS.docHash.toUpperCase() }, /sha256/],
      [{ docHash: FIELDS.docHash.slice(7) }, /sha256/],
      [{ docHash: FIELDS.docHash + "0" }, /sha256/],
      [{ signedAtMs: 1.5 }, /signedAtMs/],
      [{ signedAtMs: -1 }, /signedAtMs/],
      [{ signedAtMs: Number.MAX_SAFE_INTEGER + 1 }, /signedAtMs/],
      [{ signedAtMs: "1768469400123" }, /signedAtMs/],
      [{ signerKeyFingerprint: orgFingerprint.subarray(1) }, /32 bytes/],
      [{ signerKeyFingerprint: hex(orgFingerprint) }, /Uint8Array/],
    ];
    for (const [patch, message] of bad) {
      expect(() => encodeRecordPayload({ ...FIELDS, ...patch } as RecordPayloadFields)).toThrow(message);
    }
  });

  test("unknown or missing fields are refused (strict option checking)", () => {
    expect(() => encodeRecordPayload({ ...FIELDS, filename: "x.pdf" } as RecordPayloadFields)).toThrow(/unknown option "filename"/);
    const { signedAtMs: _omit, ...missing } = FIELDS;
    expect(() => encodeRecordPayload(missing as RecordPayloadFields)).toThrow(/signedAtMs/);
  });
});

describe("seal payload v1", () => {
  const recordPayload = encodeRecordPayload(FIELDS);
  const orgSignature = signWithNoble("ML-DSA-65", ORG_SEED, recordPayload, { deterministic: true });

  test("layout: tag, record payload, organisation signature, seal key fingerprint", () => {
    const seal = encodeSealPayload(recordPayload, orgSignature, sealFingerprint);
    expect(seal.length).toBe(18 + 4 + 124 + 4 + 3309 + 4 + 32);
    expect(hex(seal.subarray(0, 18))).toBe(hex(new TextEncoder().encode("docverify/seal/v1\0")));
    expect(hex(seal.subarray(18, 22))).toBe("0000007c");
    expect(hex(seal.subarray(22, 146))).toBe(GOLDEN.recordPayload);
    expect(hex(seal.subarray(146, 150))).toBe("00000ced");
    expect(hex(seal.subarray(150, 150 + 3309))).toBe(hex(orgSignature));
    expect(hex(seal.subarray(-36))).toBe("00000020" + GOLDEN.sealFingerprint);
    expect(sha256(seal)).toBe(GOLDEN.sealPayloadSha256);
    expect(sha256(orgSignature)).toBe(GOLDEN.orgSignatureSha256);
  });

  test("the example signatures verify with both implementations, and not across domains", () => {
    const seal = encodeSealPayload(recordPayload, orgSignature, sealFingerprint);
    const sealSignature = signWithNoble("ML-DSA-65", SEAL_SEED, seal, { deterministic: true });
    expect(sha256(sealSignature)).toBe(GOLDEN.sealSignatureSha256);
    const native = createSigner({ masterKey: null });
    expect(native.verify("ML-DSA-65", orgPublicKey, recordPayload, orgSignature)).toBe(true);
    expect(verifyWithNoble("ML-DSA-65", orgPublicKey, recordPayload, orgSignature)).toBe(true);
    expect(native.verify("ML-DSA-65", sealPublicKey, seal, sealSignature)).toBe(true);
    expect(verifyWithNoble("ML-DSA-65", sealPublicKey, seal, sealSignature)).toBe(true);
    // The seal signature is over the seal payload only.
    expect(native.verify("ML-DSA-65", sealPublicKey, recordPayload, sealSignature)).toBe(false);
  });

  test("refuses something that is not a record payload v1", () => {
    const wrongTag = new Uint8Array(recordPayload);
    wrongTag[18] = 0x32; // "v2"
    expect(() => encodeSealPayload(wrongTag, orgSignature, sealFingerprint)).toThrow(/not a record payload v1/);
    expect(() => encodeSealPayload(recordPayload.subarray(1), orgSignature, sealFingerprint)).toThrow(/124 bytes/);
    expect(() => encodeSealPayload(recordPayload, new Uint8Array(0), sealFingerprint)).toThrow(/empty/);
    expect(() => encodeSealPayload(recordPayload, orgSignature, sealFingerprint.subarray(2))).toThrow(/32 bytes/);
  });
});
