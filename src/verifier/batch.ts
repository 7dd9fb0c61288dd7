/**
 * Batched records (docs/receipts.md §1 "Batches", §4.1): a record anchored in a batch is a leaf of
 * an RFC 9162 Merkle tree whose root one ledger message, the batch message, carries. The receipt's
 * `anchor.message` is then the batch message and its `inclusion` the record's leaf message with
 * the proof that the leaf is in the tree; the commitments are read from the leaf message.
 *
 * - `proveInclusion`: the `inclusion` check. With a proof: the anchored message is a version-1
 *   batch message of the record's organisation (the key announcement's `orgId`) whose `size` is
 *   the proof's `treeSize`, and the root recomputed from SHA-256(0x00 ‖ leafMessage), `leafIndex`,
 *   `treeSize` and `path` (inclusion.ts) is its `root`. Without one: the anchored message is not
 *   a batch message (a record anchored alone). A receipt that mixes the two fails.
 * - `batchRevocation`: a batch message on the topic listing the record in `revoked` revokes it
 *   (fail closed); its reason and time are known only from the receipt's own `revocation`, when
 *   its inclusion proof verifies against that very batch message.
 */
import { bytesToBase64, bytesToHex, equalBytes, hexToBytes, jsonObject, utf8 } from "./encoding.ts";
import { leafHashOf, rootFromInclusion } from "./inclusion.ts";
import type { MirrorMessage } from "./mirror.ts";
import { rfc3339MsToMillis, UUID_RE, type Inclusion, type Receipt } from "./receipt.ts";

/** A batch message, read strictly: `{"v":1,"type":"batch","orgId","batch","size","root","revoked"}`. */
export interface BatchMessage {
  readonly orgId: string;
  readonly batch: number;
  readonly size: number;
  readonly root: Uint8Array;
  readonly revoked: readonly string[];
}

const ROOT_RE = /^[0-9a-f]{64}$/;
const REASON_RE = /^[A-Z_]{1,64}$/;
const count = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 1;

/** Whether `bytes` claim to be a batch message (`v` 1, `type` batch), well formed or not. */
export function isBatchMessage(bytes: Uint8Array): boolean {
  const v = jsonObject(bytes);
  return v !== null && v.v === 1 && v.type === "batch";
}

/** The batch message `bytes` hold, or null when they hold anything else or a field is malformed. */
export function batchMessageOf(bytes: Uint8Array): BatchMessage | null {
  const v = jsonObject(bytes);
  if (v === null || v.v !== 1 || v.type !== "batch") return null;
  const { orgId, batch, size, root, revoked } = v;
  if (typeof orgId !== "string" || !UUID_RE.test(orgId) || !count(batch) || !count(size) || typeof root !== "string" || !ROOT_RE.test(root)) return null;
  if (!Array.isArray(revoked) || !revoked.every((id) => typeof id === "string" && UUID_RE.test(id))) return null;
  return { orgId, batch, size, root: hexToBytes(root), revoked: revoked as string[] };
}

/** Whether a message on the topic is a batch message that lists `recordId` among its revocations (however else it is formed). */
export function batchRevokes(bytes: Uint8Array, recordId: string): boolean {
  const v = jsonObject(bytes);
  return v !== null && v.v === 1 && v.type === "batch" && Array.isArray(v.revoked) && v.revoked.includes(recordId);
}

/** The organisation the receipt's key announcement names (the keyAnnouncement check holds it to the ledger's), or null. */
export function announcedOrgId(receipt: Receipt): string | null {
  const a = jsonObject(receipt.keyAnnouncement.message);
  return typeof a?.orgId === "string" ? a.orgId : null;
}

/** The bytes the record's commitments are read from: the leaf message of a batched record, else the ledger's message. */
export function committingMessage(receipt: Receipt, ledgerMessage: Uint8Array): Uint8Array {
  return receipt.anchor.inclusion === null ? ledgerMessage : receipt.anchor.inclusion.leafMessage;
}

export interface ProofResult {
  readonly ok: boolean;
  /** One line for the `inclusion` check. */
  readonly detail: string;
  readonly evidence?: Record<string, unknown>;
}

const showBatch = (b: BatchMessage) => ({ orgId: b.orgId, batch: b.batch, size: b.size, root: bytesToHex(b.root), revoked: b.revoked });

/**
 * Whether `inclusion` proves its leaf message in the tree whose root the anchored `message`
 * carries, for the organisation `orgId`; with no proof, whether `message` stands alone.
 */
export function proveInclusion(message: Uint8Array, inclusion: Inclusion | null, orgId: string | null): ProofResult {
  if (inclusion === null) {
    if (!isBatchMessage(message)) return { ok: true, detail: "none: the record is its own ledger message" };
    const b = batchMessageOf(message);
    return { ok: false, detail: `the anchored message is a batch message${b === null ? "" : ` (batch ${b.batch})`}, but the receipt has no inclusion proof of the record's leaf in it`, evidence: { inclusion: null } };
  }
  const leafHash = leafHashOf(inclusion.leafMessage);
  const evidence: Record<string, unknown> = {
    algorithm: inclusion.algorithm,
    leafIndex: inclusion.leafIndex,
    treeSize: inclusion.treeSize,
    path: inclusion.path.map(bytesToHex),
    leafMessage: utf8(inclusion.leafMessage) ?? bytesToBase64(inclusion.leafMessage),
    leafHash: bytesToHex(leafHash),
  };
  const b = batchMessageOf(message);
  if (b === null) return { ok: false, detail: "the receipt has an inclusion proof, but the anchored message is not a version-1 batch message", evidence };
  evidence.batchMessage = showBatch(b);
  if (orgId === null || b.orgId !== orgId) return { ok: false, detail: `batch ${b.batch} is organisation ${b.orgId}'s, not the key announcement's (${orgId ?? "unreadable"})`, evidence };
  if (b.size !== inclusion.treeSize) return { ok: false, detail: `the proof is for a tree of ${inclusion.treeSize} leaves; batch ${b.batch} has ${b.size}`, evidence };
  const root = rootFromInclusion(leafHash, inclusion.leafIndex, inclusion.treeSize, inclusion.path);
  if (root === null) {
    const why = inclusion.leafIndex >= inclusion.treeSize ? `leaf index ${inclusion.leafIndex} is outside a tree of ${inclusion.treeSize} leaves` : `a path of ${inclusion.path.length} hashes does not fit leaf ${inclusion.leafIndex} of a tree of ${inclusion.treeSize} leaves`;
    return { ok: false, detail: `the proof is malformed: ${why}`, evidence };
  }
  evidence.recomputedRoot = bytesToHex(root);
  if (!equalBytes(root, b.root)) return { ok: false, detail: `the root recomputed from the leaf message, leaf ${inclusion.leafIndex} of ${inclusion.treeSize} and its path is not batch ${b.batch}'s root: the leaf is not in that batch`, evidence };
  return { ok: true, detail: `leaf ${inclusion.leafIndex} of batch ${b.batch} (${b.size} leaves): the root recomputed from the leaf message and its path of ${inclusion.path.length} hashes is the batch message's`, evidence };
}

/** What a batch revocation on the topic says of the record, with what the receipt could prove of it. */
export interface BatchRevocation {
  /** The batch message's `batch`, or null when it is malformed (it revokes all the same). */
  readonly batch: number | null;
  /** The revocation leaf's reason and time, proven by the receipt's `revocation`; null: not on the ledger. */
  readonly proven: { readonly reason: string; readonly revokedAt: string } | null;
  /** Why the reason is, or is not, known. */
  readonly how: string;
}

/**
 * The record's revocation in the batch message `m` (which lists it): its reason and time from the
 * receipt's `revocation` when that names this very message (sequence number and bytes) and its
 * inclusion proves a revocation leaf of this record in it; otherwise revoked all the same, reason
 * and time unknown (the caller reports the message's consensus time).
 */
export function batchRevocation(receipt: Receipt, m: MirrorMessage): BatchRevocation {
  const batch = batchMessageOf(m.message)?.batch ?? null;
  const unknown = (why: string): BatchRevocation => ({ batch, proven: null, how: `reason not on the ledger: ${why}` });
  const r = receipt.revocation;
  if (r === null || r.reason === "KEY_COMPROMISE") return unknown("the receipt names no revocation of the record");
  if (r.anchor.sequenceNumber !== m.sequenceNumber || !equalBytes(r.anchor.message, m.message)) return unknown(`the receipt's revocation is anchored elsewhere (message #${r.anchor.sequenceNumber ?? "not yet known"})`);
  if (r.anchor.inclusion === null) return unknown("the receipt's revocation has no inclusion proof");
  const proof = proveInclusion(m.message, r.anchor.inclusion, announcedOrgId(receipt));
  if (!proof.ok) return unknown(`the receipt's revocation proof does not hold (${proof.detail})`);
  const leaf = jsonObject(r.anchor.inclusion.leafMessage);
  if (leaf === null || leaf.v !== 1 || leaf.type !== "revocation" || leaf.recordId !== receipt.recordId) return unknown("the receipt's proven leaf is not a revocation of this record");
  if (typeof leaf.reason !== "string" || !REASON_RE.test(leaf.reason) || typeof leaf.revokedAt !== "string" || rfc3339MsToMillis(leaf.revokedAt) === null) return unknown("the receipt's proven revocation leaf is malformed");
  return { batch, proven: { reason: leaf.reason, revokedAt: leaf.revokedAt }, how: `the receipt's revocation, leaf ${r.anchor.inclusion.leafIndex} of that batch, proven by its inclusion proof` };
}
