/**
 * The receipt (docs/receipts.md §2): one JSON document that, with the document and
 * two independent mirror nodes, proves a record without docverify. Contract file: the field
 * names, their order and every encoding are fixed by docs/receipts.md §2.1, which a verifier
 * (src/verifier/) reads; a change here is a change of that contract.
 *
 * What `receipt()` MUST guarantee:
 * - It issues a receipt only for a record whose creation message and whose signer key's
 *   announcement on the same topic have both reached consensus (otherwise ANCHOR_NOT_FINAL, with a
 *   retry time), and never for an unknown, malformed or abandoned id (NOT_FOUND, alike).
 * - The payloads are rebuilt from the stored row with src/crypto's encoders (docs/signing.md §3):
 *   exactly the bytes the keys signed, never stored copies.
 * - Nothing but what the ledger already makes public, the public keys and the signatures: no
 *   filename, no organisation name, nothing about the caller.
 *
 * Reads only: a receipt is issued afresh on every request (`issuedAt`, and the revocation as known
 * then); every other field is fixed once the record is anchored. That fixed part is kept per
 * record (RECEIPT_MEMO_ENTRIES, least recently used first out) and used only while the record's
 * row still says what it was built from: the change counter (migration 0010: any change to the
 * record's signed columns or to a key row, from any connection; migration 0011: a key
 * announcement reaching consensus) and the columns it does not watch (`kind`, `topic_id`,
 * `transaction_id`), compared with the row on every request. What else it holds cannot change
 * unseen: the creation message is anchored, a final state, and the key announcement carried is
 * the key's latest anchored one (RECEIPT_ANNOUNCEMENT), which only a newer anchored announcement
 * replaces: a key is announced again when its organisation's domain changes (docs/receipts.md §1), and
 * receipts issued once that announcement is anchored carry it, never a stale one.
 *
 * On both engines (storage/store.ts), one build over the rows read, so the same rows give the
 * same bytes:
 * - SQLite: each read is a statement prepared once and run when the build needs it; `receipt()`
 *   answers (or throws) synchronously. The record's row and a revocation's message are answered
 *   from memory while the data version's `others()` stands (nothing but the verification log's
 *   own batches committed since, by any connection of any process), as a hash's record heads
 *   are for verification.
 * - PostgreSQL: the record and everything its receipt needs are read in one statement
 *   (`RECEIPT_SNAPSHOT`: one snapshot, one round trip) and `receipt()` returns a promise. The
 *   change counter is read in that statement too; PostgreSQL raises it once per changing
 *   statement, whichever node writes, so what is kept follows another node's change at once.
 */
import type { LedgerNetwork } from "../config/index.ts";
import { encodeRecordPayload, encodeSealPayload } from "../crypto/index.ts";
import type { Clock } from "../lib/clock.ts";
import { DomainError } from "../lib/errors.ts";
import { approxBytes, Lru, namedCache, stringBytes, type NamedCache } from "../lib/lru.ts";
import { rfc3339Ms, UUID_RE } from "../lib/formats.ts";
import type { RawRecordRow } from "../storage/record-row.ts";
import {
  RECEIPT_ANNOUNCEMENT,
  RECEIPT_KEY,
  RECEIPT_RECORD,
  RECEIPT_SNAPSHOT,
  RECEIPT_TRANSACTION,
  type ReceiptKeyRow as KeyRow,
  type ReceiptRecordRow,
  type ReceiptSnapshotRow,
  type ReceiptTransactionRow as TransactionRow,
} from "../storage/receipt-statements.ts";
import { readKept, type KeptRead } from "../storage/data-version.ts";
import { firstRow, q, type SqliteStore, type Store } from "../storage/store.ts";
import { retryAfterFor } from "../verification/verdict.ts";

export const RECEIPT_VERSION = 1;

/** Records whose receipt's fixed part is kept, at most (and records and transactions read, each). */
export const RECEIPT_MEMO_ENTRIES = 2048;
/**
 * Kept receipts' byte budget: a receipt's fixed part as text (the two signatures, payloads and
 * public keys in base64, pretty-printed), about 21 KB a record, some 1,200 records.
 */
export const RECEIPT_MEMO_BYTES = 24 * 1024 * 1024;
/** Records' rows read on SQLite (about 7.9 KB each, both signatures included: some 1,500 rows). */
export const RECEIPT_RECORDS_BYTES = 12 * 1024 * 1024;
/** Ledger transactions' rows read on SQLite (about 1 KB each). */
export const RECEIPT_TRANSACTIONS_BYTES = 2 * 1024 * 1024;
/** Signing keys in base64, at most 4,096 (about 2.9 KB each: some 350 keys). */
export const RECEIPT_KEYS_BYTES = 1024 * 1024;

type FixedPart = Omit<Receipt, "revocation" | "mirrorNodes" | "issuedAt">;
/**
 * What is kept of a record's receipt, under what it was built from (`checkOf`): its fixed part,
 * until a route asks for the text; from then on that text alone (`head`), which is all the routes
 * need (the fixed part again only when `receipt()` asks for the object).
 */
type KeptReceipt = { readonly check: string; readonly fixed: FixedPart | null; readonly head: string | null };
export const RECEIPT_CONTENT_TYPE = "application/vnd.docverify.receipt+json";

/** The file name a receipt is downloaded under. Only ever given a canonical record id. */
export function receiptFilename(recordId: string): string {
  return `docverify-receipt-${recordId}.json`;
}

export interface ReceiptKey {
  readonly algorithm: string;
  /** Base64 (standard alphabet, padded), as every byte string of a receipt. */
  readonly publicKey: string;
  readonly payload: string;
  readonly signature: string;
}

export interface ReceiptAnchor {
  readonly network: LedgerNetwork;
  readonly topicId: string;
  readonly sequenceNumber: number;
  /** `seconds.nanoseconds`, nine digits of nanoseconds, as mirror nodes write it. */
  readonly consensusAt: string;
  readonly transactionId: string;
  readonly message: string;
  readonly runningHash: string;
  /** Always null in version 1: every record is its own ledger message. */
  readonly inclusion: null;
}

/** A revocation's anchor: sequence number, consensus time and running hash null until consensus. */
export type RevocationAnchor = Omit<ReceiptAnchor, "sequenceNumber" | "consensusAt" | "runningHash"> & {
  readonly sequenceNumber: number | null;
  readonly consensusAt: string | null;
  readonly runningHash: string | null;
};

/** docs/receipts.md §2.1, with the properties in the document's order (JSON keeps it). */
export interface Receipt {
  readonly v: typeof RECEIPT_VERSION;
  readonly recordId: string;
  readonly originalDocHash: string;
  readonly authenticatedAt: string;
  readonly kind: string;
  readonly signerType: "org" | "user";
  readonly signer: ReceiptKey;
  readonly seal: ReceiptKey;
  readonly anchor: ReceiptAnchor;
  readonly keyAnnouncement: { readonly topicId: string; readonly sequenceNumber: number; readonly consensusAt: string; readonly message: string };
  readonly revocation: { readonly reason: string; readonly revokedAt: string; readonly anchor: RevocationAnchor } | null;
  readonly mirrorNodes: readonly string[];
  readonly issuedAt: string;
}

export interface ReceiptsDeps {
  /** The database, on either engine (storage/store.ts). */
  readonly store: Store;
  readonly clock: Clock;
  /** The ledger network every topic of this installation is on (config.ledger.network). */
  readonly network: LedgerNetwork;
  /** The mirror nodes a receipt suggests (anchoring/links.ts suggestedMirrorNodes), read per receipt. */
  readonly mirrorNodes: () => readonly string[];
}

export interface Receipts {
  /**
   * The receipt of `recordId`, or the DomainError that answers instead: NOT_FOUND for a
   * malformed, unknown or abandoned id, and for a record of another organisation than `orgId`
   * when given (the credentialed route); ANCHOR_NOT_FINAL with `retryAfterSeconds` while the
   * record's message or its key's announcement awaits consensus.
   *
   * Synchronous on the embedded SQLite (it answers, or throws, at once); a promise on PostgreSQL.
   */
  receipt(recordId: string, options?: { readonly orgId?: string }): Receipt | Promise<Receipt>;
  /**
   * The same receipt as the routes send it: exactly `JSON.stringify(receipt, null, 2)`, with the
   * same refusals. A kept receipt's fixed part is written once, and each request writes only what
   * is its own (the revocation, the mirror nodes, `issuedAt`) after it: the pretty-printed fixed
   * part, ~10 KB of base64, was most of a public receipt's time (docs/benchmarks.md, "How the figures moved").
   */
  receiptText(recordId: string, options?: { readonly orgId?: string }): ReceiptText | Promise<ReceiptText>;
  /** What it keeps in memory, each with its size and budget (/metrics), and emptied when the service goes quiet. */
  caches(): readonly NamedCache[];
}

/** A receipt's JSON text, and the record it is for (the download's file name). */
export interface ReceiptText {
  readonly recordId: string;
  readonly text: string;
}

/**
 * A property of a pretty-printed (indent 2) object one level down: JSON.stringify nests the value's
 * own lines two spaces further in. No JSON string holds a raw line break, so every one replaced is
 * the layout's.
 */
function nested(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(/\n/g, "\n  ");
}

/**
 * The reads a receipt is built from. On SQLite, each a statement prepared once and run when the
 * build needs it (a kept fixed part needs only the record, and the revocation's message when
 * revoked). On PostgreSQL, answered from one row read beforehand (`RECEIPT_SNAPSHOT`): one round
 * trip, one snapshot.
 */
interface ReceiptReads {
  record(recordId: string): ReceiptRecordRow | null;
  transaction(transactionId: string): TransactionRow | null;
  /** The announcement of `keyFingerprint` for `orgId` a receipt carries: its latest anchored, else an unfinished one. */
  announcement(orgId: string, keyFingerprint: Uint8Array): TransactionRow | null;
  key(fingerprint: Uint8Array): KeyRow | null;
}
/** A stored consensus time: the text the ledger's mirror nodes write (src/storage/schema.ts). */
const CONSENSUS_RE = /^\d{1,12}\.\d{9}$/;

const notFound = () => new DomainError("NOT_FOUND", "No such record.");

/**
 * A stored row that cannot make a receipt: corruption. A plain Error, so the caller gets the
 * generic 500 and only the log gets this (src/http/server.ts).
 */
function corrupt(what: string): Error {
  return new Error(`cannot issue a receipt: ${what}`);
}

const b64 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");

/**
 * The SQLite reads: the pairs' SQLite texts prepared once on the connection and run directly, as
 * before the move to the store. Receipts are benchmarked (13 µs in process); a step through the
 * store's generator costs more than some of these reads.
 */
function sqliteReads(store: SqliteStore): ReceiptReads & { readonly caches: readonly NamedCache[] } {
  const client = store.db.$client;
  const recordById = client.prepare<ReceiptRecordRow, [string]>(RECEIPT_RECORD.sqlite);
  const keyByFingerprint = client.prepare<KeyRow, [Uint8Array]>(RECEIPT_KEY.sqlite);
  const transactionById = client.prepare<TransactionRow, [string]>(RECEIPT_TRANSACTION.sqlite);
  const announcementOf = client.prepare<TransactionRow, [string, Uint8Array]>(RECEIPT_ANNOUNCEMENT.sqlite);
  // The record's row and its revocation's message as last read, under the data version they were
  // read at (storage/data-version.ts, `others()`: the log's writer thread's commits, log rows
  // only, leave it unchanged): answered again only while nothing else was committed since, by any
  // connection of any process, as a hash's record heads are for verification. Read only from.
  const bytesOf = (id: string, kept: KeptRead<unknown>) => stringBytes(id) + approxBytes(kept);
  const keptRecords = new Lru<string, KeptRead<ReceiptRecordRow | null>>({ maxEntries: RECEIPT_MEMO_ENTRIES, maxBytes: RECEIPT_RECORDS_BYTES, bytesOf });
  const keptTransactions = new Lru<string, KeptRead<TransactionRow | null>>({ maxEntries: RECEIPT_MEMO_ENTRIES, maxBytes: RECEIPT_TRANSACTIONS_BYTES, bytesOf });
  return {
    caches: [namedCache("receipt_records", keptRecords), namedCache("receipt_transactions", keptTransactions)],
    record: (id) => readKept(keptRecords, store.version.others(), id, () => recordById.get(id)),
    transaction: (id) => readKept(keptTransactions, store.version.others(), id, () => transactionById.get(id)),
    announcement: (orgId, fingerprint) => announcementOf.get(orgId, fingerprint),
    key: (fingerprint) => keyByFingerprint.get(fingerprint),
  };
}

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);

/** A prefixed group of the snapshot's columns (`c_`, `a_`, `v_`), or null when its join found nothing. */
function transactionOf(row: ReceiptSnapshotRow, p: "c_" | "a_" | "v_"): TransactionRow | null {
  const id = row[`${p}transaction_id`];
  if (id === null) return null;
  return {
    transaction_id: id,
    topic_id: row[`${p}topic_id`],
    message: row[`${p}message`],
    state: row[`${p}state`]!,
    sequence_number: row[`${p}sequence_number`],
    consensus_at: row[`${p}consensus_at`],
    running_hash: row[`${p}running_hash`],
    created_at: row[`${p}created_at`]!,
  };
}

function keyOf(row: ReceiptSnapshotRow, p: "sk_" | "lk_"): KeyRow | null {
  const algorithm = row[`${p}algorithm`];
  const publicKey = row[`${p}public_key`];
  return algorithm === null || publicKey === null ? null : { algorithm, public_key: publicKey };
}

/**
 * The reads of one receipt answered from its snapshot row (or none: no such record). Asked only
 * what the build asks of a record (its own creation and revocation messages, its signer's
 * announcement, its two keys); anything else would be a build that no longer matches the
 * snapshot, and fails loudly.
 */
function snapshotReads(recordId: string, row: ReceiptSnapshotRow | undefined): ReceiptReads {
  const mismatch = (what: string) => new Error(`receipt: the build asked for ${what}, which the snapshot of ${recordId} does not hold`);
  const creation = row === undefined ? null : transactionOf(row, "c_");
  const revocation = row === undefined ? null : transactionOf(row, "v_");
  return {
    record: (id) => {
      if (id !== recordId) throw mismatch(`record ${id}`);
      return row ?? null;
    },
    transaction: (id) => {
      if (row !== undefined && id === row.transaction_id) return creation;
      if (row !== undefined && id === row.revocation_transaction_id) return revocation;
      throw mismatch(`transaction ${id}`);
    },
    announcement: (orgId, fingerprint) => {
      if (row === undefined || orgId !== row.org_id || !sameBytes(fingerprint, row.signer_fingerprint)) throw mismatch("another announcement");
      return transactionOf(row, "a_");
    },
    key: (fingerprint) => {
      if (row !== undefined && sameBytes(fingerprint, row.signer_fingerprint)) return keyOf(row, "sk_");
      if (row !== undefined && sameBytes(fingerprint, row.seal_fingerprint)) return keyOf(row, "lk_");
      throw mismatch("another key");
    },
  };
}

export function createReceipts(deps: ReceiptsDeps): Receipts {
  const { store, clock, network } = deps;
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

  /** 409 while `waiting` (the unfinished transaction, or null when none is queued yet) awaits consensus. */
  function notFinal(what: string, waiting: TransactionRow | null): DomainError {
    const now = clock.now();
    const seconds = retryAfterFor(waiting?.created_at ?? now, now);
    return new DomainError("ANCHOR_NOT_FINAL", `The ${what} has not reached consensus on the ledger yet; retry in ${seconds} s.`, undefined, seconds);
  }

  function revocation(reads: ReceiptReads, row: RawRecordRow): Receipt["revocation"] {
    if (row.revoked_at === null) return null;
    const id = row.revocation_transaction_id;
    const tx = id === null ? null : reads.transaction(id);
    if (tx === null || tx.message === null) throw corrupt(`the revocation of ${row.id} has no ledger transaction`);
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
        message: b64(tx.message),
        runningHash: done?.runningHash ?? null,
        inclusion: null,
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
    // The announcement of the very key that signed, on the record's topic (docs/receipts.md §1):
    // its latest anchored one (after a change of domain, the one with the new domain once anchored).
    const announcement = row.org_id === null ? null : reads.announcement(row.org_id, row.signer_fingerprint);
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
        inclusion: null,
      },
      keyAnnouncement: { topicId: announced.topicId, sequenceNumber: announced.sequenceNumber, consensusAt: announced.consensusAt, message: announced.message },
    };
    if (check === null) return { fixed, kept: null };
    const made: KeptReceipt = { check, fixed, head: null };
    keptReceipts.set(row.id, made);
    return { fixed, kept: made };
  }

  const ownCaches = [namedCache("receipts", keptReceipts), namedCache("receipt_keys", keptKeys)];
  if (store.engine === "sqlite") {
    const reads = sqliteReads(store as SqliteStore);
    return {
      caches: () => [...ownCaches, ...reads.caches],
      receipt(recordId, options = {}) {
        if (!UUID_RE.test(recordId)) throw notFound();
        return build(reads, recordId, options.orgId);
      },
      receiptText(recordId, options = {}) {
        if (!UUID_RE.test(recordId)) throw notFound();
        return buildText(reads, recordId, options.orgId);
      },
    };
  }
  const snapshot = async (recordId: string): Promise<ReceiptReads> => {
    if (!UUID_RE.test(recordId)) throw notFound();
    const row = await store.read(() => q(firstRow(RECEIPT_SNAPSHOT, recordId)));
    return snapshotReads(recordId, row);
  };
  return {
    caches: () => ownCaches,
    async receipt(recordId, options = {}) {
      return build(await snapshot(recordId), recordId, options.orgId);
    },
    async receiptText(recordId, options = {}) {
      return buildText(await snapshot(recordId), recordId, options.orgId);
    },
  };
}
