/**
 * The ledger messages (decisions §5). Contract file: docs/records.md §3 describes the format
 * field by field and test/records/messages.test.ts pins it.
 *
 * What every encoder here MUST guarantee:
 * - Compact JSON (no whitespace), UTF-8, keys in the fixed order written below, ASCII only (every
 *   value is an id, a hash, an enum or a timestamp), so the same inputs give the same bytes.
 * - A version field `v` first: readers branch on it; a layout is never changed in place.
 * - One chunk: at most MAX_MESSAGE_BYTES (1,024) bytes, checked here, so a message is never
 *   split across several ledger transactions.
 * - Nothing private and nothing the spec keeps off the ledger: never the `filename` (spec §2.7),
 *   never a key, never the organisation's name.
 *
 * Creation commits to the record through digests rather than carrying signatures (3,309 bytes
 * each would not fit one chunk): anyone holding the record's public key and signatures can hash
 * them and compare with the message.
 */
import { createHash } from "node:crypto";
import { DOC_HASH_PATTERN, DOC_HASH_RE, rfc3339Ms, UUID_RE } from "../lib/formats.ts";

/** Largest message the ledger takes in a single chunk. */
export const MAX_MESSAGE_BYTES = 1024;
export const MESSAGE_VERSION = 1;

export interface CreationMessageFields {
  readonly recordId: string;
  readonly docHash: string;
  readonly signedAtMs: number;
  /** The organisation's raw public key (FIPS 204 pkEncode). */
  readonly signerPublicKey: Uint8Array;
  /** The organisation's signature over the record payload. */
  readonly signature: Uint8Array;
  /** The service seal key's signature over the seal payload. */
  readonly sealSignature: Uint8Array;
}

export interface RevocationMessageFields {
  readonly recordId: string;
  readonly reason: string;
  readonly revokedAtMs: number;
}

/** The parsed form of either message, for readers (tests, tools, the verify page's docs). */
export type LedgerMessage =
  | { v: 1; type: "record"; recordId: string; originalDocHash: string; signedAt: string; signerPublicKeySha256: string; signatureSha256: string; sealSignatureSha256: string }
  | { v: 1; type: "revocation"; recordId: string; reason: string; revokedAt: string };

const REASON_RE = /^[A-Z_]{1,64}$/;

/** `sha256:` + lowercase hex, the same spelling as a DocHash. */
export function sha256Text(bytes: Uint8Array): string {
  return "sha256:" + createHash("sha256").update(bytes).digest("hex");
}

/**
 * A message's time: RFC 3339 with milliseconds (src/lib/formats.ts), and never before 1970, since
 * the times a message carries are this service's own clock (the record payload's is unsigned too).
 */
function messageTime(ms: number): string {
  if (!(ms >= 0)) throw new RangeError("time must be whole milliseconds between 1970 and 9999");
  return rfc3339Ms(ms);
}

function encode(message: LedgerMessage): Uint8Array {
  const bytes = new TextEncoder().encode(JSON.stringify(message));
  if (bytes.length > MAX_MESSAGE_BYTES) throw new RangeError(`ledger message of ${bytes.length} bytes exceeds one ${MAX_MESSAGE_BYTES}-byte chunk`);
  return bytes;
}

/** The message submitted to the organisation's topic when a record is created. */
export function encodeCreationMessage(f: CreationMessageFields): Uint8Array {
  if (!UUID_RE.test(f.recordId)) throw new TypeError("recordId must be a lowercase canonical UUID");
  if (!DOC_HASH_RE.test(f.docHash)) throw new TypeError(`docHash must match ${DOC_HASH_PATTERN}`);
  for (const [name, b] of [["signerPublicKey", f.signerPublicKey], ["signature", f.signature], ["sealSignature", f.sealSignature]] as const) {
    if (!(b instanceof Uint8Array) || b.length === 0) throw new TypeError(`${name} must be non-empty bytes`);
  }
  // Key order is the literal's order; JSON.stringify keeps it.
  return encode({
    v: MESSAGE_VERSION,
    type: "record",
    recordId: f.recordId,
    originalDocHash: f.docHash,
    signedAt: messageTime(f.signedAtMs),
    signerPublicKeySha256: sha256Text(f.signerPublicKey),
    signatureSha256: sha256Text(f.signature),
    sealSignatureSha256: sha256Text(f.sealSignature),
  });
}

/** The message submitted to the organisation's topic when a record is revoked. */
export function encodeRevocationMessage(f: RevocationMessageFields): Uint8Array {
  if (!UUID_RE.test(f.recordId)) throw new TypeError("recordId must be a lowercase canonical UUID");
  if (!REASON_RE.test(f.reason)) throw new TypeError("reason must be a RevocationReason");
  return encode({ v: MESSAGE_VERSION, type: "revocation", recordId: f.recordId, reason: f.reason, revokedAt: messageTime(f.revokedAtMs) });
}

/** Parses a message's bytes; throws on anything that is not a version-1 message of a known type. */
export function decodeLedgerMessage(bytes: Uint8Array): LedgerMessage {
  if (bytes.length > MAX_MESSAGE_BYTES) throw new RangeError("message larger than one chunk");
  const value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes)) as Record<string, unknown>;
  if (value === null || typeof value !== "object" || value.v !== MESSAGE_VERSION) throw new TypeError("not a version-1 docverify ledger message");
  if (value.type !== "record" && value.type !== "revocation") throw new TypeError(`unknown message type ${String(value.type)}`);
  return value as LedgerMessage;
}
