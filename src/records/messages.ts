/**
 * The ledger messages. Contract file: docs/records.md §3 and docs/receipts.md §1 describe the
 * formats field by field and test/records/messages.test.ts pins them.
 *
 * What every encoder here MUST guarantee:
 * - Compact JSON (no whitespace), UTF-8, keys in the fixed order written below, so the same
 *   inputs give the same bytes. ASCII only (every value is an id, a hash, an enum, a timestamp
 *   or a domain), except the organisation's registered name in a key announcement, written as
 *   JSON.stringify writes it.
 * - A key announcement (`key`, `person_key`) carries `domain` only when the organisation has
 *   one, right after `name` (after `personId`): an organisation without a domain
 *   announces exactly the bytes it announced before domains existed. Likewise `replaces` (the
 *   fingerprint of the key the announced key replaced) only when it replaced one, right after
 *   `keyFingerprint`: a key that replaced nothing is announced with exactly the bytes of before.
 * - A version field `v` first: readers branch on it; a layout is never changed in place.
 * - One chunk: at most MAX_MESSAGE_BYTES (1,024) bytes, checked here, so a message is never
 *   split across several ledger transactions. A key announcement's name is cut at a code point
 *   to fit, never the message refused.
 * - Nothing private: never the `filename` (docs/records.md §3), never a key (only its
 *   fingerprint). The organisation's name appears only in the key announcement, which exists to
 *   bind it to the topic.
 *
 * Creation commits to the record through digests rather than carrying signatures (3,309 bytes
 * each would not fit one chunk): anyone holding the record's public key and signatures can hash
 * them and compare with the message.
 */
import { createHash } from "node:crypto";
import { isAlgorithm } from "../crypto/index.ts";
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

export interface KeyAnnouncementFields {
  readonly orgId: string;
  /** The organisation's registered name; cut at a code point when the message would not fit one chunk. */
  readonly name: string;
  /** The organisation's domain (lowercase DNS name, at most 253 characters), or null / absent: none. */
  readonly domain?: string | null;
  /** The announced key's algorithm, a registry name (`ML-DSA-65`). */
  readonly algorithm: string;
  /** The organisation's system key fingerprint (docs/signing.md §2), 32 bytes. */
  readonly keyFingerprint: Uint8Array;
  /** The fingerprint of the key this one replaced (rotation, compromise), 32 bytes, or null / absent: none. */
  readonly replaces?: Uint8Array | null;
  /** The service seal key's fingerprint, 32 bytes. */
  readonly sealKeyFingerprint: Uint8Array;
}

export interface PersonKeyAnnouncementFields {
  readonly orgId: string;
  /** The person's id: no name, no e-mail, nothing personal goes on the ledger. */
  readonly personId: string;
  /** Their organisation's domain when they enrol, or null / absent: none. */
  readonly domain?: string | null;
  readonly algorithm: string;
  /** The person's key fingerprint (docs/signing.md §2), 32 bytes. */
  readonly keyFingerprint: Uint8Array;
  /** The fingerprint of the person's key this one replaced (re-enrolment), 32 bytes, or null / absent: none. */
  readonly replaces?: Uint8Array | null;
  /** The service seal key's fingerprint, 32 bytes. */
  readonly sealKeyFingerprint: Uint8Array;
}

export interface KeyCompromiseFields {
  readonly orgId: string;
  /** The person whose key it is, or null / absent: the organisation's own key. */
  readonly personId?: string | null;
  /** The compromised key's fingerprint, 32 bytes. */
  readonly keyFingerprint: Uint8Array;
  /** Every record the key signed at or after this time (ms) is revoked. */
  readonly sinceMs: number;
}

export interface BatchMessageFields {
  readonly orgId: string;
  /** The organisation's batch sequence: an integer ≥ 1, unique per organisation, in increasing order. */
  readonly batch: number;
  /** The tree's number of leaves, 1 to MAX_BATCH_SIZE. */
  readonly size: number;
  /** The RFC 9162 Merkle tree head of the leaves in leaf order (anchoring/merkle.ts), 32 bytes. */
  readonly root: Uint8Array;
  /** The record ids of the batch's revocation leaves, in leaf order (empty when none). */
  readonly revoked: readonly string[];
}

/** The parsed form of any message, for readers (tests, tools, the verify page's docs). */
export type LedgerMessage =
  | { v: 1; type: "record"; recordId: string; originalDocHash: string; signedAt: string; signerPublicKeySha256: string; signatureSha256: string; sealSignatureSha256: string }
  | { v: 1; type: "revocation"; recordId: string; reason: string; revokedAt: string }
  | { v: 1; type: "key"; orgId: string; name: string; domain?: string; algorithm: string; keyFingerprint: string; replaces?: string; sealKeyFingerprint: string }
  | { v: 1; type: "person_key"; orgId: string; personId: string; domain?: string; algorithm: string; keyFingerprint: string; replaces?: string; sealKeyFingerprint: string }
  | { v: 1; type: "key_compromise"; orgId: string; personId?: string; keyFingerprint: string; since: string }
  | { v: 1; type: "batch"; orgId: string; batch: number; size: number; root: string; revoked: string[] };

const MESSAGE_TYPES: ReadonlySet<unknown> = new Set(["record", "revocation", "key", "person_key", "key_compromise", "batch"]);

/** Most leaves one batch holds (DOCVERIFY_BATCH_MAX's ceiling): a batch message's `size` is 1 to this. */
export const MAX_BATCH_SIZE = 1024;
const UUID_LENGTH = 36;

const REASON_RE = /^[A-Z_]{1,64}$/;
/** A domain as keys/organisations.ts stores it (lowercase LDH labels, at least two): checked here only for its shape and size. */
const DOMAIN_RE = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?\.[a-z](?:[a-z0-9-]*[a-z0-9])?$/;

/** `{ domain }` when there is one, checked; else nothing (the property is absent). */
function domainField(domain: string | null | undefined): { domain?: string } {
  if (domain === undefined || domain === null) return {};
  if (typeof domain !== "string" || !DOMAIN_RE.test(domain)) throw new TypeError("domain must be a lowercase DNS name");
  return { domain };
}

/** `{ replaces }` (64 lowercase hex) when the key replaced one, checked; else nothing (the property is absent). */
function replacesField(replaces: Uint8Array | null | undefined): { replaces?: string } {
  if (replaces === undefined || replaces === null) return {};
  if (!(replaces instanceof Uint8Array) || replaces.length !== 32) throw new TypeError("replaces must be 32 bytes");
  return { replaces: Buffer.from(replaces).toString("hex") };
}

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

/**
 * The message announcing an organisation's key on its topic (docs/receipts.md §1), queued before
 * its first record message, whenever its key changes, and again whenever its domain or name changes.
 */
export function encodeKeyAnnouncementMessage(f: KeyAnnouncementFields): Uint8Array {
  if (!UUID_RE.test(f.orgId)) throw new TypeError("orgId must be a lowercase canonical UUID");
  if (typeof f.name !== "string" || f.name.length === 0) throw new TypeError("name must be a non-empty string");
  if (!isAlgorithm(f.algorithm)) throw new TypeError("algorithm must be a registry name");
  for (const [field, b] of [["keyFingerprint", f.keyFingerprint], ["sealKeyFingerprint", f.sealKeyFingerprint]] as const) {
    if (!(b instanceof Uint8Array) || b.length !== 32) throw new TypeError(`${field} must be 32 bytes`);
  }
  const domain = domainField(f.domain);
  const replaces = replacesField(f.replaces);
  const message = (name: string): LedgerMessage => ({
    v: MESSAGE_VERSION,
    type: "key",
    orgId: f.orgId,
    name,
    ...domain,
    algorithm: f.algorithm,
    keyFingerprint: Buffer.from(f.keyFingerprint).toString("hex"),
    ...replaces,
    sealKeyFingerprint: Buffer.from(f.sealKeyFingerprint).toString("hex"),
  });
  // Everything but the name is fixed in size (a domain is at most 253 ASCII bytes and `replaces`
  // 77 with its key, so a name of
  // at least one code point always fits): what is left of the chunk is the name's, as
  // JSON.stringify writes it in UTF-8. Code points are escaped independently of their
  // neighbours, so the name's encoded length is the sum of theirs.
  let room = MAX_MESSAGE_BYTES - utf8Length(JSON.stringify(message("")));
  let name = "";
  for (const cp of f.name) {
    const size = utf8Length(JSON.stringify(cp)) - 2;
    if (size > room) break;
    room -= size;
    name += cp;
  }
  return encode(message(name));
}

/**
 * The message announcing a person's key on their organisation's topic (docs/persons.md), queued in
 * the transaction that enrols them, before any record they sign: by fingerprint and person id.
 */
export function encodePersonKeyAnnouncementMessage(f: PersonKeyAnnouncementFields): Uint8Array {
  if (!UUID_RE.test(f.orgId)) throw new TypeError("orgId must be a lowercase canonical UUID");
  if (!UUID_RE.test(f.personId)) throw new TypeError("personId must be a lowercase canonical UUID");
  if (!isAlgorithm(f.algorithm)) throw new TypeError("algorithm must be a registry name");
  for (const [field, b] of [["keyFingerprint", f.keyFingerprint], ["sealKeyFingerprint", f.sealKeyFingerprint]] as const) {
    if (!(b instanceof Uint8Array) || b.length !== 32) throw new TypeError(`${field} must be 32 bytes`);
  }
  return encode({
    v: MESSAGE_VERSION,
    type: "person_key",
    orgId: f.orgId,
    personId: f.personId,
    ...domainField(f.domain),
    algorithm: f.algorithm,
    keyFingerprint: Buffer.from(f.keyFingerprint).toString("hex"),
    ...replacesField(f.replaces),
    sealKeyFingerprint: Buffer.from(f.sealKeyFingerprint).toString("hex"),
  });
}

/**
 * The message declaring a key compromised (docs/receipts.md §1) on its organisation's topic, once
 * per key (docs/signing.md "Key lifecycle"): every record the key signed at or after `since` is
 * revoked with reason KEY_COMPROMISE from this message's consensus time; earlier ones are not.
 * `since` is spelt as a record message's `signedAt`, so a reader compares the two as text of one
 * format or as times alike.
 */
export function encodeKeyCompromiseMessage(f: KeyCompromiseFields): Uint8Array {
  if (!UUID_RE.test(f.orgId)) throw new TypeError("orgId must be a lowercase canonical UUID");
  if (f.personId !== undefined && f.personId !== null && !UUID_RE.test(f.personId)) throw new TypeError("personId must be a lowercase canonical UUID");
  if (!(f.keyFingerprint instanceof Uint8Array) || f.keyFingerprint.length !== 32) throw new TypeError("keyFingerprint must be 32 bytes");
  return encode({
    v: MESSAGE_VERSION,
    type: "key_compromise",
    orgId: f.orgId,
    ...(f.personId === undefined || f.personId === null ? {} : { personId: f.personId }),
    keyFingerprint: Buffer.from(f.keyFingerprint).toString("hex"),
    since: messageTime(f.sinceMs),
  });
}

/**
 * The message carrying a batch's Merkle root (docs/receipts.md §1, "Batches") on the organisation's
 * topic: the organisation, its batch sequence, the tree's size and root, and the record ids of the
 * batch's revocation leaves, so that a verifier scanning the topic finds a revocation without the
 * leaves. The leaves themselves (record and revocation messages, unchanged) never go on the ledger.
 * Refuses (RangeError) a message over one chunk: the batcher takes no more revocation leaves than
 * `maxBatchRevocations` allows.
 */
export function encodeBatchMessage(f: BatchMessageFields): Uint8Array {
  if (!UUID_RE.test(f.orgId)) throw new TypeError("orgId must be a lowercase canonical UUID");
  if (!Number.isSafeInteger(f.batch) || f.batch < 1) throw new TypeError("batch must be an integer ≥ 1");
  if (!Number.isSafeInteger(f.size) || f.size < 1 || f.size > MAX_BATCH_SIZE) throw new TypeError(`size must be an integer from 1 to ${MAX_BATCH_SIZE}`);
  if (!(f.root instanceof Uint8Array) || f.root.length !== 32) throw new TypeError("root must be 32 bytes");
  if (!Array.isArray(f.revoked)) throw new TypeError("revoked must be an array of record ids");
  for (const id of f.revoked) if (typeof id !== "string" || !UUID_RE.test(id)) throw new TypeError("revoked must hold lowercase canonical UUIDs");
  // Each revocation is a leaf of the tree.
  if (f.revoked.length > f.size) throw new TypeError("revoked cannot list more records than the batch has leaves");
  return encode({ v: MESSAGE_VERSION, type: "batch", orgId: f.orgId, batch: f.batch, size: f.size, root: Buffer.from(f.root).toString("hex"), revoked: [...f.revoked] });
}

/**
 * How many revocation ids a batch message of batch sequence `batch` and `size` leaves holds within
 * one chunk (with the widest size when not given: a batcher choosing its leaves knows the sequence
 * before the size). Each id is 38 bytes with its quotes, and a comma between two.
 */
export function maxBatchRevocations(batch: number, size: number = MAX_BATCH_SIZE): number {
  if (!Number.isSafeInteger(batch) || batch < 1) throw new TypeError("batch must be an integer ≥ 1");
  if (!Number.isSafeInteger(size) || size < 1 || size > MAX_BATCH_SIZE) throw new TypeError(`size must be an integer from 1 to ${MAX_BATCH_SIZE}`);
  const empty = `{"v":1,"type":"batch","orgId":"${"0".repeat(36)}","batch":${batch},"size":${size},"root":"${"0".repeat(64)}","revoked":[]}`.length;
  return Math.min(size, Math.floor((MAX_MESSAGE_BYTES - empty + 1) / (UUID_LENGTH + 3)));
}

/** Whether `encodeBatchMessage(f)` fits one chunk (its fields otherwise as it checks them). */
export function fitsBatchMessage(f: Pick<BatchMessageFields, "batch" | "size" | "revoked">): boolean {
  return f.revoked.length <= maxBatchRevocations(f.batch, f.size);
}

function utf8Length(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** Parses a message's bytes; throws on anything that is not a version-1 message of a known type. */
export function decodeLedgerMessage(bytes: Uint8Array): LedgerMessage {
  if (bytes.length > MAX_MESSAGE_BYTES) throw new RangeError("message larger than one chunk");
  const value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes)) as Record<string, unknown>;
  if (value === null || typeof value !== "object" || value.v !== MESSAGE_VERSION) throw new TypeError("not a version-1 docverify ledger message");
  if (!MESSAGE_TYPES.has(value.type)) throw new TypeError(`unknown message type ${String(value.type)}`);
  return value as LedgerMessage;
}
