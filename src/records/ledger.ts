/**
 * What the records capability needs from the ledger side, owned here by its consumer (style.md).
 * The anchor loop (src/anchoring) implements it, through app/compose.ts, which answers 503 while the
 * ledger is still starting; records never submit anything themselves: they
 * write a `pending` row in `ledger_transactions` in the same transaction as the record, and the
 * loop picks it up.
 */
import type { BatchPolicy } from "../anchoring/types.ts";

/** A transaction id chosen before anything is submitted, so anchoring survives a crash (docs/anchoring.md "Crashes"). */
export interface ReservedTransaction {
  /** `<account>@<seconds>.<nanoseconds>`, the form the API shows a transactionId in. */
  readonly transactionId: string;
  /** Start of the transaction's validity window, ms since the epoch. */
  readonly validStartMs: number;
  /** Length of the validity window, seconds: 15–180 (DOCVERIFY_ANCHOR_VALID_SECONDS). */
  readonly validSeconds: number;
}

export interface RecordLedger {
  /**
   * A fresh transaction id. MUST be synchronous (it is called between the signatures and the
   * write transaction) and MUST never return the same id twice, across processes sharing the
   * database included: the id is the primary key of `ledger_transactions`. An id whose row is
   * never written (the caller lost a race) is simply never used.
   */
  newTransactionId(): ReservedTransaction;
  /**
   * Tells the anchor loop that a committed `pending` row is waiting. MUST NOT throw and MUST NOT
   * do the submission on the caller's stack. A lost wake-up only delays anchoring: the loop
   * also polls the queue.
   */
  wake(): void;
  /**
   * Throws 503 SERVICE_UNAVAILABLE (a DomainError with Retry-After) when the queue of unanchored
   * messages is past its bound, so records are refused rather than queued beyond what the ledger
   * can take; the anchor loop's refusals say why in `details.cause` (`queue_full`, `behind`,
   * `too_old`: src/anchoring/back-pressure.ts). Called before anything is signed or written.
   * MUST be cheap and synchronous.
   */
  assertCapacity(): void;
  /**
   * How a record's or revocation's message joins its organisation's open batch (docs/anchoring.md
   * "Batches"): the batch window and the most leaves (DOCVERIFY_BATCH_WINDOW_MS, DOCVERIFY_BATCH_MAX).
   */
  readonly batches: BatchPolicy;
  /** Public explorer page of a transaction (`hashscanUrl`). Pure. */
  transactionUrl(transactionId: string): string;
  /** Mirror-node REST URL of one topic message (`mirrorNodeUrl`). Pure. */
  topicMessageUrl(topicId: string, sequenceNumber: number): string;
}
