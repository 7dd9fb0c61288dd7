/**
 * The verifier's own encoders (src/verifier/payloads.ts, written from docs/signing.md alone)
 * against the document's worked example, read from the document, and against src/crypto's
 * encoders for random inputs: two independent writings of one layout must give the same bytes.
 */
import { describe, expect, test } from "bun:test";
import { ml_dsa65 } from "@noble/post-quantum/ml-dsa.js";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { encodeRecordPayload, encodeSealPayload, keyFingerprint as productFingerprint } from "../../src/crypto/index.ts";
import { keyFingerprint, recordPayloadV1, sealPayloadV1, sha256OfBytes, sha256OfStream } from "../../src/verifier/index.ts";
import { seededRandom } from "../support/random.ts";
import { ORG_SEED, SEAL_SEED } from "./fixtures.ts";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

async function docExample(name: string): Promise<string> {
  const doc = await Bun.file(join(import.meta.dir, "../../docs/signing.md")).text();
  const m = doc.match(new RegExp(`<!-- example:${name} -->\\s*\`\`\`text\\n([\\s\\S]*?)\`\`\``));
  if (!m?.[1]) throw new Error(`docs/signing.md has no example "${name}"`);
  return m[1].replace(/\s+/g, "");
}

describe("the worked example of docs/signing.md §3.4", () => {
  const org = ml_dsa65.keygen(ORG_SEED);
  const seal = ml_dsa65.keygen(SEAL_SEED);
  const orgFp = keyFingerprint("ML-DSA-65", org.publicKey);
  const sealFp = keyFingerprint("ML-DSA-65", seal.publicKey);
  const record = recordPayloadV1({
    recordId: "0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d",
    docHash: "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
    signedAtMs: Date.parse("2026-01-15T09:30:00.123Z"),
    signerFingerprint: orgFp,
  });

  test("fingerprints, as in the table (hard-coded here too)", () => {
    expect(sha256(org.publicKey)).toBe("d666806e11cee19a7c989f7445f90dd419cf4d2d51db8c0fdb4c0f0a542238c9");
    expect(hex(orgFp)).toBe("0fb9f606f7863cd5ff4ab3a0cf0a2b1b9293f7c8b3aa0c12f02ceb3ed3cd70d2");
    expect(hex(sealFp)).toBe("dda5467cd931c22f8ac70114e78f4b7aff1bd4af713fa126cf06b6a8a528fc43");
  });

  test("the record payload is the document's hex, byte for byte", async () => {
    expect(record.length).toBe(124);
    expect(hex(record)).toBe(await docExample("record-payload"));
  });

  test("the seal payload and both deterministic signatures hash as the document says", async () => {
    const signature = ml_dsa65.sign(record, org.secretKey, { extraEntropy: false });
    expect(sha256(signature)).toBe(await docExample("org-signature-sha256"));
    const sealPayload = sealPayloadV1(record, signature, sealFp);
    expect(sealPayload.length).toBe(3495);
    expect(sha256(sealPayload)).toBe(await docExample("seal-payload-sha256"));
    expect(sha256(ml_dsa65.sign(sealPayload, seal.secretKey, { extraEntropy: false }))).toBe(await docExample("seal-signature-sha256"));
  });
});

test("the same bytes as src/crypto's encoders, for 200 random inputs", () => {
  const random = seededRandom(0x5eed);
  const bytes = (n: number) => Uint8Array.from({ length: n }, () => Math.floor(random() * 256));
  const hexOf = (n: number) => hex(bytes(n));
  for (let i = 0; i < 200; i++) {
    const publicKey = bytes(1952);
    const id = hexOf(16);
    const recordId = `${id.slice(0, 8)}-${id.slice(8, 12)}-${id.slice(12, 16)}-${id.slice(16, 20)}-${id.slice(20)}`;
    const docHash = "sha256:" + hexOf(32);
    const signedAtMs = Math.floor(random() * 253402300799999);
    const fp = keyFingerprint("ML-DSA-65", publicKey);
    expect(hex(fp)).toBe(hex(productFingerprint({ algorithm: "ML-DSA-65", publicKey })));
    const ours = recordPayloadV1({ recordId, docHash, signedAtMs, signerFingerprint: fp });
    expect(hex(ours)).toBe(hex(encodeRecordPayload({ recordId, docHash, signedAtMs, signerKeyFingerprint: fp })));
    const signature = bytes(1 + Math.floor(random() * 4000));
    const sealFp = bytes(32);
    expect(hex(sealPayloadV1(ours, signature, sealFp))).toBe(hex(encodeSealPayload(ours, signature, sealFp)));
  }
});

test("sha256OfStream over chunks equals sha256OfBytes over the whole", async () => {
  const whole = Uint8Array.from({ length: 3_000_001 }, (_, i) => (i * 31) & 0xff);
  async function* chunks() {
    for (let at = 0; at < whole.length; at += 65_537) yield whole.subarray(at, at + 65_537);
  }
  expect(await sha256OfStream(chunks())).toBe(sha256OfBytes(whole));
  // A web stream, as a browser File gives it (read through its reader).
  expect(await sha256OfStream(new Blob([whole]).stream())).toBe(sha256OfBytes(whole));
  expect(sha256OfBytes(whole)).toBe("sha256:" + sha256(whole));
  expect(sha256OfBytes(new TextEncoder().encode("hello"))).toBe("sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
});
