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
import { assertBytes, checkOptions, domainTag, writeHex, writeLengthPrefixed, writeU32be, writeU64be } from "./bytes.ts";
import { FINGERPRINT_LENGTH } from "./keys.ts";
import { DOC_HASH_RE, UUID_RE } from "../lib/formats.ts";

export const RECORD_DOMAIN = "docverify/record/v1";
export const SEAL_DOMAIN = "docverify/seal/v1";
export const RECORD_PAYLOAD_LENGTH = 124;

export interface RecordPayloadFields {
  /** Lowercase canonical UUID text, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`. */
  readonly recordId: string;
  /** `sha256:` + 64 lowercase hex characters (the API's DocHash). */
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


const DOC_HASH_PREFIX = "sha256:".length;
// Module-private and never handed out (only copied from), so nobody can change them.
const RECORD_TAG = domainTag(RECORD_DOMAIN);
const SEAL_TAG = domainTag(SEAL_DOMAIN);

/** The UUID's 16 bytes. Uppercase and brace forms are refused: one record id, one spelling. */
export function uuidToBytes(uuid: string): Uint8Array {
  if (typeof uuid !== "string" || !UUID_RE.test(uuid)) throw new TypeError("recordId must be a lowercase canonical UUID");
  const out = new Uint8Array(16);
  writeHex(out, 0, uuid, 0, 16);
  return out;
}

/** The 32-byte digest of a DocHash; the text is refused unless it is exactly that form. */
export function docHashToBytes(docHash: string): Uint8Array {
  if (typeof docHash !== "string" || !DOC_HASH_RE.test(docHash)) throw new TypeError("docHash must match ^sha256:[0-9a-f]{64}$");
  const out = new Uint8Array(32);
  writeHex(out, 0, docHash, DOC_HASH_PREFIX, 32);
  return out;
}

// Fixed offsets of the record payload v1 (see the layout above).
const AT_ID = RECORD_TAG.length; // 20
const AT_HASH = AT_ID + 4 + 16; // 40
const AT_TIME = AT_HASH + 4 + 32; // 76
const AT_FINGERPRINT = AT_TIME + 4 + 8; // 88

/**
 * The bytes an organisation's key signs for a record. Pure. Written field by field into one
 * array at the fixed offsets of the layout above (measured: a third of the cost of building
 * each field as its own array and concatenating); the golden-bytes tests pin the result.
 */
export function encodeRecordPayload(fields: RecordPayloadFields): Uint8Array {
  checkOptions(fields, "record payload fields", ["recordId", "docHash", "signedAtMs", "signerKeyFingerprint"]);
  const { recordId, docHash, signedAtMs, signerKeyFingerprint } = fields;
  if (typeof recordId !== "string" || !UUID_RE.test(recordId)) throw new TypeError("recordId must be a lowercase canonical UUID");
  if (typeof docHash !== "string" || !DOC_HASH_RE.test(docHash)) throw new TypeError("docHash must match ^sha256:[0-9a-f]{64}$");
  if (!Number.isSafeInteger(signedAtMs) || signedAtMs < 0) {
    throw new RangeError("signedAtMs must be a non-negative safe integer (milliseconds since the Unix epoch)");
  }
  assertBytes(signerKeyFingerprint, "signerKeyFingerprint", FINGERPRINT_LENGTH);
  const out = new Uint8Array(RECORD_PAYLOAD_LENGTH);
  out.set(RECORD_TAG, 0);
  writeU32be(out, AT_ID, 16);
  writeHex(out, AT_ID + 4, recordId, 0, 16);
  writeU32be(out, AT_HASH, 32);
  writeHex(out, AT_HASH + 4, docHash, DOC_HASH_PREFIX, 32);
  writeU32be(out, AT_TIME, 8);
  writeU64be(out, AT_TIME + 4, signedAtMs);
  writeU32be(out, AT_FINGERPRINT, FINGERPRINT_LENGTH);
  out.set(signerKeyFingerprint, AT_FINGERPRINT + 4);
  if (AT_FINGERPRINT + 4 + FINGERPRINT_LENGTH !== RECORD_PAYLOAD_LENGTH) throw new Error("record payload length invariant broken");
  return out;
}

/**
 * The bytes the service seal key signs: the record payload, the organisation's signature over
 * it, and the seal key's own fingerprint. Sealing the signature (not only the payload) is what
 * lets the seal attest that this exact organisation signature existed when the service sealed it.
 */
export function encodeSealPayload(recordPayload: Uint8Array, orgSignature: Uint8Array, sealKeyFingerprint: Uint8Array): Uint8Array {
  assertBytes(recordPayload, "recordPayload", RECORD_PAYLOAD_LENGTH);
  for (let i = 0; i < RECORD_TAG.length; i++) {
    if (recordPayload[i] !== RECORD_TAG[i]) throw new TypeError("recordPayload is not a record payload v1");
  }
  assertBytes(orgSignature, "orgSignature");
  if (orgSignature.length === 0) throw new RangeError("orgSignature must not be empty");
  if (orgSignature.length > 0xffff_ffff) throw new RangeError("orgSignature is too long for a u32 length prefix");
  assertBytes(sealKeyFingerprint, "sealKeyFingerprint", FINGERPRINT_LENGTH);
  // One allocation, fields written in place (the same bytes as concatenating length-prefixed fields).
  const out = new Uint8Array(SEAL_TAG.length + 4 + recordPayload.length + 4 + orgSignature.length + 4 + sealKeyFingerprint.length);
  out.set(SEAL_TAG, 0);
  let at = writeLengthPrefixed(out, SEAL_TAG.length, recordPayload);
  at = writeLengthPrefixed(out, at, orgSignature);
  writeLengthPrefixed(out, at, sealKeyFingerprint);
  return out;
}
