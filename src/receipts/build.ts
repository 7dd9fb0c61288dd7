/**
 * A receipt's build (receipt.ts says what it MUST guarantee): one synchronous function over the
 * reads of receipts/ports.ts, so the same rows give the same bytes on both engines.
 *
 * Every field but `issuedAt`, the revocation and the mirror nodes is fixed once the record is
 * anchored. That fixed part is kept per record (RECEIPT_MEMO_ENTRIES, least recently used first
 * out) and used only while the record's row still says what it was built from: the change counter
 * (migration 0010: any change to the record's signed columns or to a key row, from any
 * connection; migration 0011: a key announcement reaching consensus) and the columns it does not
 * watch (`kind`, `topic_id`, `transaction_id`), compared with the row on every request. What else
 * it holds cannot change unseen: the creation message is anchored, a final state, and the key
 * announcement carried is the key's latest anchored one, which only a newer anchored announcement
 * replaces: a key is announced again when its organisation's domain changes (docs/receipts.md
 * §1), and receipts issued once that announcement is anchored carry it, never a stale one.
 */
import type { LedgerNetwork } from "../config/index.ts";
import { encodeRecordPayload, encodeSealPayload } from "../crypto/index.ts";
import type { Clock } from "../lib/clock.ts";
import { DomainError } from "../lib/errors.ts";
import { approxBytes, Lru, namedCache, stringBytes, type NamedCache } from "../lib/lru.ts";
import { rfc3339Ms } from "../lib/formats.ts";
import type { RawRecordRow } from "../storage/record-row.ts";
import { retryAfterFor } from "../verification/verdict.ts";
import type { ReceiptReads, ReceiptRecordRow, ReceiptTransactionRow as TransactionRow } from "./ports.ts";
import type { Receipt, ReceiptInclusion, ReceiptKey, ReceiptText } from "./receipt.ts";

export const RECEIPT_VERSION = 1;

/** Records whose receipt's fixed part is kept, at most. */
export const RECEIPT_MEMO_ENTRIES = 2048;
/**
 * Kept receipts' byte budget: a receipt's fixed part as text (the two signatures, payloads and
 * public keys in base64, pretty-printed), about 21 KB a record, some 1,200 records.
 */
export const RECEIPT_MEMO_BYTES = 24 * 1024 * 1024;
/** Signing keys in base64, at most 4,096 (about 2.9 KB each: some 350 keys). */
export const RECEIPT_KEYS_BYTES = 1024 * 1024;

type FixedPart = Omit<Receipt, "revocation" | "mirrorNodes" | "issuedAt">;
/**
 * What is kept of a record's receipt, under what it was built from (`checkOf`): its fixed part,
 * until a route asks for the text; from then on that text alone (`head`), which is all the routes
 * need (the fixed part again only when `receipt()` asks for the object).
 */
type KeptReceipt = { readonly check: string; readonly fixed: FixedPart | null; readonly head: string | null };

/**
 * A property of a pretty-printed (indent 2) object one level down: JSON.stringify nests the value's
 * own lines two spaces further in. No JSON string holds a raw line break, so every one replaced is
 * the layout's.
 */
function nested(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(/\n/g, "\n  ");
}

/** A stored consensus time: the text the ledger's mirror nodes write (src/storage/schema.ts). */
const CONSENSUS_RE = /^\d{1,12}\.\d{9}$/;

export const notFound = () => new DomainError("NOT_FOUND", "No such record.");

/**
 * A stored row that cannot make a receipt: corruption. A plain Error, so the caller gets the
 * generic 500 and only the log gets this (src/http/server.ts).
 */
function corrupt(what: string): Error {
  return new Error(`cannot issue a receipt: ${what}`);
}

/** `seconds.nanoseconds` → RFC 3339 UTC with milliseconds (below a millisecond dropped). */
function consensusIso(consensusAt: string): string {
  const [seconds, nanos] = consensusAt.split(".") as [string, string];
  return rfc3339Ms(Number(seconds) * 1000 + Math.floor(Number(nanos) / 1e6));
}

const b64 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");

export interface ReceiptBuilderDeps {
  readonly clock: Clock;
  /** The ledger network every topic of this installation is on (config.ledger.network). */
  readonly network: LedgerNetwork;
  /** The mirror nodes a receipt suggests, read per receipt. */
  readonly mirrorNodes: () => readonly string[];
}

export interface ReceiptBuilder {
  /** The receipt of `recordId` from `reads`, or the DomainError that answers instead (receipt.ts, `Receipts`). */
  build(reads: ReceiptReads, recordId: string, orgId: string | undefined): Receipt;
  /** `build`'s receipt as JSON text (indent 2), a kept fixed part's text written once. */
  buildText(reads: ReceiptReads, recordId: string, orgId: string | undefined): ReceiptText;
  /** The fixed parts and keys kept. */
  readonly caches: readonly NamedCache[];
}

export function createReceiptBuilder(deps: ReceiptBuilderDeps): ReceiptBuilder {
  const { clock, network } = deps;
  const keptKeys = new Lru<string, { readonly algorithm: string; readonly publicKey: string }>({
    maxEntries: 4096,
    maxBytes: RECEIPT_KEYS_BYTES,
    bytesOf: (id, k) => stringBytes(id) + approxBytes(k),
  });
  /** Receipts' fixed parts, or their pretty-printed text without the closing brace once a route asked for it. */
  const keptReceipts = new Lru<string, KeptReceipt>({
    maxEntries: RECEIPT_MEMO_ENTRIES,
    maxBytes: RECEIPT_MEMO_BYTES,
    bytesOf: (id, kept) => stringBytes(id) + approxBytes(kept),
  });
  /** What a kept fixed part was built from, as the row says it now (null: nothing may be kept). */
  const checkOf = (row: ReceiptRecordRow): string | null =>
    row.gen === null || row.anchor_state !== "anchored" ? null : `${row.gen}|${row.kind}|${row.topic_id}|${row.transaction_id}`;
  let keptGen: number | null = null;

  function key(reads: ReceiptReads, fingerprint: Uint8Array, payload: Uint8Array, signature: Uint8Array, role: string, gen: number | null): ReceiptKey {
    if (gen !== keptGen) {
      keptKeys.clear();
      keptGen = gen;
    }
    const id = gen === null ? null : Buffer.from(fingerprint.buffer, fingerprint.byteOffset, fingerprint.byteLength).toString("hex");
    let kept = id === null ? undefined : keptKeys.get(id);
    if (kept === undefined) {
      const row = reads.key(fingerprint);
      if (row === null) throw corrupt(`the ${role} key is not in signing_keys`);
      kept = { algorithm: row.algorithm, publicKey: b64(row.public_key) };
      if (id !== null) keptKeys.set(id, kept);
    }
    return { algorithm: kept.algorithm, publicKey: kept.publicKey, payload: b64(payload), signature: b64(signature) };
  }

  function consensus(tx: TransactionRow): string {
    if (tx.consensus_at === null || !CONSENSUS_RE.test(tx.consensus_at)) throw corrupt(`transaction ${tx.transaction_id} is anchored without a consensus time`);
    return tx.consensus_at;
  }

  function anchoredMessage(tx: TransactionRow): { topicId: string; sequenceNumber: number; consensusAt: string; message: string; runningHash: string } {
    if (tx.topic_id === null || tx.message === null || tx.sequence_number === null || tx.running_hash === null || tx.running_hash.length === 0) {
      throw corrupt(`transaction ${tx.transaction_id} is anchored without its topic, message, sequence number or running hash`);
    }
    return { topicId: tx.topic_id, sequenceNumber: tx.sequence_number, consensusAt: consensus(tx), message: b64(tx.message), runningHash: b64(tx.running_hash) };
  }

  /**
   * The inclusion proof of record `recordId`'s `kind` message in `tx`, when `tx` is a batch
   * (docs/anchoring.md "Batches"); null for a message anchored on its own.
   */
  function inclusionOf(reads: ReceiptReads, tx: TransactionRow, recordId: string, kind: "record_message" | "revocation_message"): ReceiptInclusion | null {
    if (tx.kind !== "batch_message") return null;
    const leaf = reads.leaf(tx.transaction_id, recordId, kind);
    const placed = leaf?.inclusion_path ?? null;
    if (leaf === null || leaf.leaf_index === null || placed === null || tx.batch_size === null || placed.length % 32 !== 0) throw corrupt(`batch ${tx.transaction_id} holds no placed leaf of ${recordId}`);
    const path: string[] = [];
    for (let at = 0; at < placed.length; at += 32) path.push(b64(placed.subarray(at, at + 32)));
    return { algorithm: "RFC9162-SHA256", leafMessage: b64(leaf.message), leafIndex: leaf.leaf_index, treeSize: tx.batch_size, path };
  }

  /** 409 while `waiting` (the unfinished transaction, or null when none is queued yet) awaits consensus. */
  function notFinal(what: string, waiting: TransactionRow | null): DomainError {
    const now = clock.now();
    const seconds = retryAfterFor(waiting?.created_at ?? now, now);
    return new DomainError("ANCHOR_NOT_FINAL", `The ${what} has not reached consensus on the ledger yet; retry in ${seconds} s.`, undefined, seconds);
  }

  /**
   * The revocation as known now: the record's own, or an anchored compromise of its signer key
   * that covers its signed time (reason KEY_COMPROMISE, revokedAt the compromise message's
   * consensus time), the earlier of the two when both. A hint: verifiers read the topic.
   */
  function revocation(reads: ReceiptReads, row: RawRecordRow): Receipt["revocation"] {
    const own = ownRevocation(reads, row);
    const compromise = compromiseOf(reads, row);
    if (compromise === null) return own;
    return own !== null && Date.parse(own.revokedAt) <= Date.parse(compromise.revokedAt) ? own : compromise;
  }

  function compromiseOf(reads: ReceiptReads, row: RawRecordRow): Receipt["revocation"] {
    const found = reads.compromise(row.signer_fingerprint);
    if (found === null || found.since > row.signed_at_ms) return null;
    const tx = found.transaction;
    // Known once anchored on the record's own topic: before that it is the appliance's word only.
    if (tx.state !== "anchored" || tx.message === null || tx.topic_id !== row.topic_id) return null;
    const done = anchoredMessage(tx);
    return {
      reason: "KEY_COMPROMISE",
      revokedAt: consensusIso(done.consensusAt),
      anchor: { network, topicId: done.topicId, sequenceNumber: done.sequenceNumber, consensusAt: done.consensusAt, transactionId: tx.transaction_id, message: done.message, runningHash: done.runningHash, inclusion: null },
    };
  }

  function ownRevocation(reads: ReceiptReads, row: RawRecordRow): Receipt["revocation"] {
    if (row.revoked_at === null) return null;
    const id = row.revocation_transaction_id;
    const tx = id === null ? null : reads.transaction(id);
    // Until its batch is closed, the batch has no message yet: the revocation's own (its leaf's) stands in.
    const message = tx === null ? null : tx.kind === "batch_message" && tx.message === null ? (reads.leaf(tx.transaction_id, row.id, "revocation_message")?.message ?? null) : tx.message;
    if (tx === null || message === null) throw corrupt(`the revocation of ${row.id} has no ledger transaction`);
    const final = tx.state === "anchored";
    const done = final ? anchoredMessage(tx) : null;
    return {
      reason: row.revocation_reason ?? "UNSPECIFIED",
      revokedAt: rfc3339Ms(row.revoked_at),
      anchor: {
        network,
        topicId: tx.topic_id ?? row.topic_id,
        sequenceNumber: done?.sequenceNumber ?? null,
        consensusAt: done?.consensusAt ?? null,
        transactionId: tx.transaction_id,
        message: b64(message),
        runningHash: done?.runningHash ?? null,
        inclusion: final ? inclusionOf(reads, tx, row.id, "revocation_message") : null,
      },
    };
  }

  /** The record `recordId` names, or the NOT_FOUND that answers instead. */
  function recordOf(reads: ReceiptReads, recordId: string, orgId: string | undefined): ReceiptRecordRow {
    const row = reads.record(recordId);
    if (row === null || row.anchor_state === "abandoned") throw notFound();
    if (orgId !== undefined && row.org_id !== orgId) throw notFound();
    return row;
  }

  /** The receipt of `recordId` from `reads`: the same build, and so the same bytes, on both engines. */
  function build(reads: ReceiptReads, recordId: string, orgId: string | undefined): Receipt {
    const row = recordOf(reads, recordId, orgId);
    return { ...fixedOf(reads, row).fixed, revocation: revocation(reads, row), mirrorNodes: [...deps.mirrorNodes()], issuedAt: rfc3339Ms(clock.now()) };
  }

  /** `build`'s receipt as JSON text (indent 2), a kept fixed part's text written once. */
  function buildText(reads: ReceiptReads, recordId: string, orgId: string | undefined): ReceiptText {
    const row = recordOf(reads, recordId, orgId);
    // The fixed part's text without its closing "\n}", kept while the record's check holds.
    const check = checkOf(row);
    const kept = check === null ? undefined : keptReceipts.get(row.id);
    let head = kept !== undefined && kept.check === check ? kept.head : null;
    let fixed: FixedPart | null = null;
    if (head === null) {
      const found = fixedOf(reads, row);
      if (found.kept === null) fixed = found.fixed;
      else {
        head = JSON.stringify(found.fixed, null, 2).slice(0, -2);
        // The text alone from now on: the fixed part's strings are all in it.
        keptReceipts.set(row.id, { check: found.kept.check, fixed: null, head });
      }
    }
    const own = { revocation: revocation(reads, row), mirrorNodes: [...deps.mirrorNodes()], issuedAt: rfc3339Ms(clock.now()) };
    if (head === null) return { recordId: row.id, text: JSON.stringify({ ...fixed, ...own }, null, 2) };
    // Then this request's own properties, in the order and layout JSON.stringify gives
    // `{ ...fixed, ...own }` (a test compares them).
    return {
      recordId: row.id,
      text: `${head},\n  "revocation": ${nested(own.revocation)},\n  "mirrorNodes": ${nested(own.mirrorNodes)},\n  "issuedAt": ${JSON.stringify(own.issuedAt)}\n}`,
    };
  }

  /**
   * The receipt's fixed part (everything but the revocation, the mirror nodes and `issuedAt`): the
   * one kept for this record while its check holds, or built (and kept when it may be).
   */
  function fixedOf(reads: ReceiptReads, row: ReceiptRecordRow): { readonly fixed: FixedPart; readonly kept: KeptReceipt | null } {
    const check = checkOf(row);
    const kept = check === null ? undefined : keptReceipts.get(row.id);
    if (kept !== undefined && kept.check === check && kept.fixed !== null) return { fixed: kept.fixed, kept };

    const creation = reads.transaction(row.transaction_id);
    if (row.anchor_state !== "anchored" || creation === null || creation.state !== "anchored") {
      throw notFinal("record's ledger message", creation !== null && creation.state !== "anchored" ? creation : null);
    }
    // The announcement of the very pair that signed and sealed, on the record's topic, before the
    // record's message (docs/receipts.md §1): the latest such (after a change of domain, the one
    // with the new domain once anchored); never a later key's or a later seal key's, whose window
    // the record is not in.
    const announcement = row.org_id === null ? null : reads.announcement(row.org_id, row.signer_fingerprint, row.seal_fingerprint, creation.sequence_number);
    if (announcement === null || announcement.state !== "anchored" || announcement.topic_id !== row.topic_id) {
      throw notFinal("organisation's key announcement", announcement !== null && announcement.state !== "anchored" ? announcement : null);
    }

    const recordPayload = encodeRecordPayload({
      recordId: row.id,
      docHash: row.doc_hash,
      signedAtMs: row.signed_at_ms,
      signerKeyFingerprint: row.signer_fingerprint,
    });
    const sealPayload = encodeSealPayload(recordPayload, row.signature, row.seal_fingerprint);
    const created = anchoredMessage(creation);
    const announced = anchoredMessage(announcement);
    const fixed: FixedPart = {
      v: RECEIPT_VERSION,
      recordId: row.id,
      originalDocHash: row.doc_hash,
      authenticatedAt: rfc3339Ms(row.signed_at_ms),
      kind: row.kind,
      signerType: row.signer_type,
      signer: key(reads, row.signer_fingerprint, recordPayload, row.signature, "signer", row.gen),
      seal: key(reads, row.seal_fingerprint, sealPayload, row.seal_signature, "seal", row.gen),
      anchor: {
        network,
        topicId: created.topicId,
        sequenceNumber: created.sequenceNumber,
        consensusAt: created.consensusAt,
        transactionId: creation.transaction_id,
        message: created.message,
        runningHash: created.runningHash,
        inclusion: inclusionOf(reads, creation, row.id, "record_message"),
      },
      keyAnnouncement: { topicId: announced.topicId, sequenceNumber: announced.sequenceNumber, consensusAt: announced.consensusAt, message: announced.message },
    };
    if (check === null) return { fixed, kept: null };
    const made: KeptReceipt = { check, fixed, head: null };
    keptReceipts.set(row.id, made);
    return { fixed, kept: made };
  }

  return { build, buildText, caches: [namedCache("receipts", keptReceipts), namedCache("receipt_keys", keptKeys)] };
}
