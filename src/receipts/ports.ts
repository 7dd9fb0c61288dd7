/**
 * What receipts (receipt.ts, build.ts) need of storage: the rows one receipt is built from. The
 * drivers are storage/sqlite/receipt-reads.ts and storage/postgres/receipt-reads.ts, given by
 * each engine's drivers.ts; the same build runs over either, so the same rows give the same
 * bytes on both engines.
 */
import type { NamedCache } from "../lib/lru.ts";
import type { Maybe } from "../lib/maybe.ts";
import type { RawRecordRow } from "../storage/record-row.ts";

/** A record with the change counter (migration 0010) read in the same statement: what a kept receipt is checked against. */
export type ReceiptRecordRow = RawRecordRow & { readonly gen: number | null };

/** A ledger transaction as a receipt reads it. */
export interface ReceiptTransactionRow {
  readonly transaction_id: string;
  readonly topic_id: string | null;
  readonly message: Uint8Array | null;
  readonly state: "pending" | "accepted" | "anchored" | "abandoned";
  readonly sequence_number: number | null;
  readonly consensus_at: string | null;
  readonly running_hash: Uint8Array | null;
  readonly created_at: number;
  /** `batch_message` for a batch (docs/anchoring.md "Batches"): the record's message is then a leaf of it. */
  readonly kind: string;
  /** A batch's number of leaves; null otherwise. */
  readonly batch_size: number | null;
}

/** A record's or revocation's message as a leaf of its batch: its bytes, and once the batch is closed its index and inclusion path (32-byte hashes concatenated). */
export interface ReceiptLeafRow {
  readonly message: Uint8Array;
  readonly leaf_index: number | null;
  readonly inclusion_path: Uint8Array | null;
}

/** A key's compromise as a receipt reads it: the message's transaction and the declared `since`. */
export interface ReceiptCompromiseRow {
  readonly since: number;
  readonly transaction: ReceiptTransactionRow;
}

export interface ReceiptKeyRow {
  readonly algorithm: string;
  readonly public_key: Uint8Array;
}

/**
 * The reads of one receipt's build. Every method answers synchronously (the build is one
 * synchronous function over them); a driver that must wait reads beforehand (`ReceiptSource`).
 */
export interface ReceiptReads {
  /** The record `recordId` with the change counter read in the same statement, or null when there is none. MUST NOT throw for an unknown id. */
  record(recordId: string): ReceiptRecordRow | null;
  /** The ledger transaction `transactionId`, or null when there is none. */
  transaction(transactionId: string): ReceiptTransactionRow | null;
  /**
   * The announcement a receipt carries of the pair that signed and sealed a record: of
   * `keyFingerprint` for `orgId`, its message naming `sealFingerprint` (the seal key: a seal key
   * rotation announces the same signer key with another), the latest anchored one before
   * `beforeSequence` (the record's message) on the topic; else the earliest anchored after it (a
   * topic older than announcements); else an unfinished one (not abandoned); else null.
   */
  announcement(orgId: string, keyFingerprint: Uint8Array, sealFingerprint: Uint8Array, beforeSequence: number | null): ReceiptTransactionRow | null;
  /**
   * The live (not abandoned) `key_compromise` message of `keyFingerprint` and the key's declared
   * `since` (ms), or null when the key is not declared compromised or has no such message.
   */
  compromise(keyFingerprint: Uint8Array): ReceiptCompromiseRow | null;
  /**
   * Record `recordId`'s leaf of kind `kind` (`record_message`, its creation; `revocation_message`)
   * in the batch `batchTransactionId`, or null.
   */
  leaf(batchTransactionId: string, recordId: string, kind: "record_message" | "revocation_message"): ReceiptLeafRow | null;
  /** The signing key `fingerprint`, or null when it is not in signing_keys. */
  key(fingerprint: Uint8Array): ReceiptKeyRow | null;
}

/** Where the reads of each receipt come from. */
export interface ReceiptSource {
  /**
   * The reads for building the receipt of `recordId` (a canonical UUID: the caller checked it).
   * MUST answer synchronously where the engine answers synchronously (the embedded SQLite: a
   * receipt is then issued, or refused, at once), each read run when the build asks for it and
   * answering what is committed when it runs. A driver that answers later (PostgreSQL) MUST read
   * everything the build may ask of this record in one snapshot beforehand, so the receipt is as
   * consistent as one read transaction makes it, and its reads MUST throw when asked anything
   * else (a build that no longer matches the snapshot fails loudly). A database fault rejects
   * (or throws) with the database's error.
   */
  readsFor(recordId: string): Maybe<ReceiptReads>;
  /** What the driver keeps in memory, each with its size and budget (/metrics), emptied when the service goes quiet. */
  caches(): readonly NamedCache[];
}
