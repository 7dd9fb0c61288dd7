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
 * then); every other field is fixed once the record is anchored, and kept (build.ts says how).
 *
 * On both engines, one build (build.ts) over the rows read (receipts/ports.ts, `ReceiptSource`),
 * so the same rows give the same bytes:
 * - SQLite: each read runs when the build needs it; `receipt()` answers (or throws)
 *   synchronously. The record's row and a revocation's message are answered from memory while
 *   the data version's `others()` stands (storage/sqlite/receipt-reads.ts).
 * - PostgreSQL: the record and everything its receipt needs are read in one statement (one
 *   snapshot, one round trip) and `receipt()` returns a promise (storage/postgres/receipt-reads.ts).
 */
import type { LedgerNetwork } from "../config/index.ts";
import type { Clock } from "../lib/clock.ts";
import type { NamedCache } from "../lib/lru.ts";
import { runMaybe, settled, type Maybe } from "../lib/maybe.ts";
import { UUID_RE } from "../lib/formats.ts";
import { createReceiptBuilder, notFound, type RECEIPT_VERSION } from "./build.ts";
import type { ReceiptReads, ReceiptSource } from "./ports.ts";

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
  /** Null for a message anchored on its own; for a leaf of a batch (`message` the batch's), its inclusion proof. */
  readonly inclusion: ReceiptInclusion | null;
}

/** docs/receipts.md §2.1: an RFC 9162 inclusion proof of `leafMessage` in the batch whose root `message` carries; byte strings in base64. */
export interface ReceiptInclusion {
  readonly algorithm: "RFC9162-SHA256";
  readonly leafMessage: string;
  readonly leafIndex: number;
  readonly treeSize: number;
  readonly path: readonly string[];
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
  /** The rows a receipt is built from, on either engine (storage/engine-drivers.ts). */
  readonly reads: ReceiptSource;
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

export function createReceipts(deps: ReceiptsDeps): Receipts {
  const { reads: source } = deps;
  const builder = createReceiptBuilder(deps);
  /** `make` over the reads of `recordId`: at once when the source answers at once (SQLite), a promise otherwise. */
  const over = <T>(recordId: string, make: (reads: ReceiptReads) => T): Maybe<T> => {
    if (!UUID_RE.test(recordId)) throw notFound();
    return runMaybe(
      (function* () {
        return make(yield* settled(source.readsFor(recordId)));
      })(),
    );
  };
  return {
    caches: () => [...builder.caches, ...source.caches()],
    receipt: (recordId, options = {}) => over(recordId, (reads) => builder.build(reads, recordId, options.orgId)),
    receiptText: (recordId, options = {}) => over(recordId, (reads) => builder.buildText(reads, recordId, options.orgId)),
  };
}
