/**
 * The signed bytes. Contract file: docs/signing.md §3 describes these encodings byte by byte and
 * a test recomputes its worked example from this code.
 *
 * What every encoder here MUST guarantee:
 * - Canonical: one input has exactly one encoding, and the input can be read back from it
 *   (fixed field order, every field length-prefixed, inputs in exactly one accepted spelling).
 *   Never JSON, whose spelling (key order, escapes, number formats) is not fixed.
 * - Domain-separated: each encoding starts with its own NUL-terminated ASCII tag carrying a
 *   version, so a record signature can never be replayed as a seal signature, or as a
 *   signature of any later version's bytes, and ML-DSA's empty context string is harmless.
 * - Versioned by tag, never changed in place: a new layout gets a new tag ("…/v2"), and the
 *   v1 encoders stay so existing records keep verifying.
 *
 * Record payload v1 (124 bytes):
 *   "docverify/record/v1" 0x00                                        20 bytes
 *   u32be(16) || record id, the UUID's 16 bytes in RFC 9562 order     20 bytes
 *   u32be(32) || document SHA-256 digest                              36 bytes
 *   u32be(8)  || signed time, ms since the Unix epoch, u64be          12 bytes
 *   u32be(32) || signer key fingerprint (keys.ts)                     36 bytes
 *
 * Seal payload v1:
 *   "docverify/seal/v1" 0x00
 *   u32be(len) || record payload v1
 *   u32be(len) || the organisation's signature over that record payload
 *   u32be(32)  || seal key fingerprint
 */
import { assertBytes, checkOptions, concatBytes, domainTag, lengthPrefixed, u64be } from "./bytes.ts";
import { FINGERPRINT_LENGTH } from "./keys.ts";

export const RECORD_DOMAIN = "docverify/record/v1";
export const SEAL_DOMAIN = "docverify/seal/v1";
export const RECORD_PAYLOAD_LENGTH = 124;

export interface RecordPayloadFields {
  /** Lowercase canonical UUID text, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`. */
  readonly recordId: string;
  /** `sha256:` + 64 lowercase hex characters (spec DocHash). */
  readonly docHash: string;
  /**
   * The signed time in whole milliseconds since the Unix epoch (the record's `authenticatedAt`).
   * Milliseconds so that the RFC 3339 `authenticatedAt` the API shows, written with milliseconds,
   * converts back to exactly the signed integer.
   */
  readonly signedAtMs: number;
  /** The signing key's fingerprint, 32 bytes. */
  readonly signerKeyFingerprint: Uint8Array;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const DOC_HASH_RE = /^sha256:[0-9a-f]{64}$/;

/** The UUID's 16 bytes. Uppercase and brace forms are refused: one record id, one spelling. */
export function uuidToBytes(uuid: string): Uint8Array {
  if (typeof uuid !== "string" || !UUID_RE.test(uuid)) throw new TypeError("recordId must be a lowercase canonical UUID");
  return new Uint8Array(Buffer.from(uuid.replaceAll("-", ""), "hex"));
}

/** The 32-byte digest of a DocHash; the text is refused unless it is exactly the spec's form. */
export function docHashToBytes(docHash: string): Uint8Array {
  if (typeof docHash !== "string" || !DOC_HASH_RE.test(docHash)) throw new TypeError("docHash must match ^sha256:[0-9a-f]{64}$");
  return new Uint8Array(Buffer.from(docHash.slice("sha256:".length), "hex"));
}

/** The bytes an organisation's key signs for a record. Pure. */
export function encodeRecordPayload(fields: RecordPayloadFields): Uint8Array {
  checkOptions(fields, "record payload fields", ["recordId", "docHash", "signedAtMs", "signerKeyFingerprint"]);
  const { recordId, docHash, signedAtMs, signerKeyFingerprint } = fields;
  if (!Number.isSafeInteger(signedAtMs) || signedAtMs < 0) {
    throw new RangeError("signedAtMs must be a non-negative safe integer (milliseconds since the Unix epoch)");
  }
  assertBytes(signerKeyFingerprint, "signerKeyFingerprint", FINGERPRINT_LENGTH);
  const out = concatBytes(
    domainTag(RECORD_DOMAIN),
    lengthPrefixed(uuidToBytes(recordId)),
    lengthPrefixed(docHashToBytes(docHash)),
    lengthPrefixed(u64be(signedAtMs)),
    lengthPrefixed(signerKeyFingerprint),
  );
  if (out.length !== RECORD_PAYLOAD_LENGTH) throw new Error("record payload length invariant broken");
  return out;
}

/**
 * The bytes the service seal key signs: the record payload, the organisation's signature over
 * it, and the seal key's own fingerprint. Sealing the signature (not only the payload) is what
 * lets the seal attest that this exact organisation signature existed when the service sealed it.
 */
export function encodeSealPayload(recordPayload: Uint8Array, orgSignature: Uint8Array, sealKeyFingerprint: Uint8Array): Uint8Array {
  assertBytes(recordPayload, "recordPayload", RECORD_PAYLOAD_LENGTH);
  const tag = domainTag(RECORD_DOMAIN);
  for (let i = 0; i < tag.length; i++) {
    if (recordPayload[i] !== tag[i]) throw new TypeError("recordPayload is not a record payload v1");
  }
  assertBytes(orgSignature, "orgSignature");
  if (orgSignature.length === 0) throw new RangeError("orgSignature must not be empty");
  assertBytes(sealKeyFingerprint, "sealKeyFingerprint", FINGERPRINT_LENGTH);
  return concatBytes(domainTag(SEAL_DOMAIN), lengthPrefixed(recordPayload), lengthPrefixed(orgSignature), lengthPrefixed(sealKeyFingerprint));
}
