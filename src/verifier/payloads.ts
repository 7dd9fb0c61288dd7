/**
 * The signed bytes, written a second time from docs/signing.md §2–§3 alone (not imported from
 * src/crypto/, which signs them): a verifier that shared the signer's encoder would share its
 * mistakes. A test holds both to the document's worked example and to each other.
 *
 *   fingerprint     = SHA-256("docverify/public-key/v1" 0x00 || u32be-prefixed algorithm || u32be-prefixed public key)
 *   record payload  = "docverify/record/v1" 0x00 || [16] record id || [32] doc hash || [8] u64be ms || [32] fingerprint
 *   seal payload    = "docverify/seal/v1" 0x00 || [n] record payload || [n] org signature || [32] seal key fingerprint
 * where [n] is a u32be length prefix.
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, hexToBytes } from "./encoding.ts";

const ascii = (text: string): Uint8Array => Uint8Array.from(text, (c) => c.charCodeAt(0));

/** `tag` followed by its NUL terminator. */
function tagged(tag: string): Uint8Array {
  const out = new Uint8Array(tag.length + 1);
  out.set(ascii(tag));
  return out;
}

/** The fields in order, each after its u32be length, behind the NUL-terminated tag. */
function lengthPrefixed(tag: string, fields: readonly Uint8Array[]): Uint8Array {
  const head = tagged(tag);
  const out = new Uint8Array(head.length + fields.reduce((n, f) => n + 4 + f.length, 0));
  out.set(head);
  const view = new DataView(out.buffer);
  let at = head.length;
  for (const f of fields) {
    view.setUint32(at, f.length);
    out.set(f, at + 4);
    at += 4 + f.length;
  }
  return out;
}

/** docs/signing.md §2: the key's identity, SHA-256 over its algorithm-tagged public key. */
export function keyFingerprint(algorithm: string, publicKey: Uint8Array): Uint8Array {
  return sha256(lengthPrefixed("docverify/public-key/v1", [ascii(algorithm), publicKey]));
}

export interface RecordFields {
  /** Lowercase canonical UUID. */
  readonly recordId: string;
  /** `sha256:` + 64 lowercase hex. */
  readonly docHash: string;
  /** Whole milliseconds since 1970-01-01T00:00:00Z. */
  readonly signedAtMs: number;
  readonly signerFingerprint: Uint8Array;
}

/** docs/signing.md §3.1: record payload v1, 124 bytes. The caller has checked the spellings. */
export function recordPayloadV1(f: RecordFields): Uint8Array {
  const time = new Uint8Array(8);
  new DataView(time.buffer).setBigUint64(0, BigInt(f.signedAtMs));
  return lengthPrefixed("docverify/record/v1", [hexToBytes(f.recordId.replaceAll("-", "")), hexToBytes(f.docHash.slice("sha256:".length)), time, f.signerFingerprint]);
}

/** docs/signing.md §3.2: seal payload v1. */
export function sealPayloadV1(recordPayload: Uint8Array, orgSignature: Uint8Array, sealFingerprint: Uint8Array): Uint8Array {
  return lengthPrefixed("docverify/seal/v1", [recordPayload, orgSignature, sealFingerprint]);
}

/** `sha256:` + lowercase hex, the ledger messages' spelling of a digest. */
export function sha256Text(bytes: Uint8Array): string {
  return "sha256:" + bytesToHex(sha256(bytes));
}
