/**
 * What the anchor journal decides the same way on every engine, written once: the shape of a new
 * `pending` row, the message's length, the back-off of a re-queue, the wait of a record message
 * for its key's announcement. The drivers (storage/sqlite/journal.ts, storage/postgres/journal.ts)
 * take these as `JournalRules` (ports.ts).
 */
import type { Clock } from "../../lib/clock.ts";
import { backoffDelay } from "../retry.ts";
import type { NewTransaction } from "../transaction-ids.ts";
import type { BatchPolicy, JournalRules, PendingFields, PendingRow } from "./ports.ts";

/** The `pending` row of a new transaction, as the loop expects it. Due at `nextAttemptAt` (default `now`). */
export function pendingValues(id: NewTransaction, row: PendingFields, now: number, nextAttemptAt: number = now): PendingRow {
  return {
    transactionId: id.transactionId,
    kind: row.kind,
    orgId: row.orgId,
    recordId: row.recordId,
    topicId: row.topicId,
    message: row.message === null ? null : Buffer.from(row.message),
    keyFingerprint: row.keyFingerprint == null ? null : Buffer.from(row.keyFingerprint),
    announcementGeneration: row.announcementGeneration ?? 0,
    sealFingerprint: row.sealFingerprint == null ? null : Buffer.from(row.sealFingerprint),
    batchLeaf: row.batchLeaf === 1 ? 1 : 0,
    batchTransactionId: null,
    leafIndex: null,
    inclusionPath: null,
    batchSequence: row.batchSequence ?? null,
    batchSize: row.batchSize ?? null,
    signedBytes: null,
    validStartMs: id.validStartMs,
    validSeconds: id.validSeconds,
    state: "pending" as const,
    attempts: 0,
    nextAttemptAt,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * At most this many revocations in one batch, so that its message (which lists their record ids,
 * so that a verifier scanning the topic finds them: docs/receipts.md) stays within one 1,024-byte
 * chunk: the message without them is at most 225 bytes (a batch sequence and size of 15 digits
 * each), and each listed id adds 39 (its quotes, and a comma). 16 × 39 + 225 = 849.
 */
export const MAX_REVOCATIONS_PER_BATCH = 16;

/** What `insertPendingMessage` refuses before anything is written. */
export function checkLength(message: Uint8Array): void {
  if (message.length === 0 || message.length > 1024) throw new TypeError("a ledger message must be 1 to 1024 bytes");
}

/**
 * A revocation (or key announcement) abandoned for the `n`th time (not counting those that never
 * reached a node) is queued again after this.
 */
export function revocationRequeueDelay(n: number): number {
  // The first retry goes at once (the usual cause is an outage that has ended); repeated
  // failures back off, so a permanent refusal does not spin.
  return n <= 1 ? 0 : backoffDelay(n - 1, 30_000, 3_600_000);
}

/** After `n` abandoned topic creations (not counting those that never reached a node), the next waits this long after the last. */
export function topicRequeueDelay(n: number): number {
  return backoffDelay(n, 10_000, 3_600_000);
}

/**
 * A record message `due` finds waiting for its key's announcement is looked at again this much
 * later, or as soon as an announcement of its organisation is anchored (the anchored change makes
 * them due at once). With the announcement's condition inside `due`'s and `nextDueAt`'s
 * statements, a backlog waiting for an announcement that does not come (refused by the ledger,
 * its topic gone) was read whole on every pass, up to 200 times a second: more than half of the
 * API thread while persons signed (docs/benchmarks.md "How the figures moved").
 */
export const WAITING_RECHECK_MS = 10_000;

/** The rules a journal driver is given: these, with the loop's clock and transaction ids. */
/** DOCVERIFY_BATCH_WINDOW_MS and DOCVERIFY_BATCH_MAX by default (config/index.ts gives the same). */
export const DEFAULT_BATCH_POLICY: BatchPolicy = { windowMs: 250, max: 1024, maxRevocations: MAX_REVOCATIONS_PER_BATCH };

export function journalRules(clock: Clock, newTransactionId: () => NewTransaction, batches: BatchPolicy = DEFAULT_BATCH_POLICY): JournalRules {
  return {
    batches,
    clock,
    newTransactionId,
    pendingRow: pendingValues,
    checkLength,
    requeueDelay: revocationRequeueDelay,
    topicRequeueDelay,
    waitingRecheckMs: WAITING_RECHECK_MS,
  };
}
