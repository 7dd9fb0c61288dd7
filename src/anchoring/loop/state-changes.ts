/**
 * The anchor loop's state changes: each is the journal's (queue.ts), then, once committed, its
 * log line (`msg: "anchor"`, one per change) and its metrics. Keys never appear in a log line.
 */
import type { ConfirmedMessage } from "../ledger.ts";
import type { LedgerTransactionRow } from "../queue.ts";
import type { KeyAnnouncement } from "../types.ts";
import type { LoopContext } from "./context.ts";

export type StateChanges = ReturnType<typeof createStateChanges>;

export function createStateChanges(ctx: LoopContext) {
  const { log, journal, metrics, errors, watches, ticker, pressure, health, listing, now } = ctx;
  const { receiptPollMs, confirmFallbackMs } = ctx.timing;

  const event = (name: string, row: Pick<LedgerTransactionRow, "transactionId" | "kind" | "orgId" | "recordId">, extra: Record<string, unknown> = {}) => {
    log.info("anchor", { event: name, kind: row.kind, transactionId: row.transactionId, orgId: row.orgId, ...(row.recordId ? { recordId: row.recordId } : {}), ...extra });
  };
  // The three changes every message goes through are group-committed (queue.ts, `grouped`):
  // each resolves once committed, with the other changes due within the same millisecond.
  // An accepted message waits for the listings of its topic (confirmation in batches) until
  // `confirmFallbackMs`; a topic creation is confirmed by its receipt.
  const toAccepted = async (row: LedgerTransactionRow, duplicate: boolean) => {
    const message = row.kind !== "topic_create" && row.topicId !== null;
    if ((await journal.grouped.toAccepted(row, message ? confirmFallbackMs : receiptPollMs)) === null) return;
    event("accepted", row, duplicate ? { duplicate: true } : {});
    if (message && listing !== null) {
      watches.watch(row.topicId!, row.validStartMs, now());
      ticker.schedule(0);
    }
  };
  const toAnchoredMessage = async (row: LedgerTransactionRow, confirmed: ConfirmedMessage) => {
    const at = await journal.grouped.toAnchoredMessage(row, confirmed);
    if (at === null) return;
    // A batch counts its leaves: back-pressure compares what waits with what was anchored.
    const leaves = row.kind === "batch_message" ? (row.batchSize ?? 1) : 1;
    pressure.noteAnchored(at, leaves);
    event("anchored", row, { topicId: row.topicId, sequenceNumber: confirmed.sequenceNumber, consensusAt: confirmed.consensusAt, ...(row.kind === "batch_message" ? { batch: row.batchSequence, leaves } : {}) });
    metrics.anchored(row.kind, at - row.createdAt);
    if (row.kind === "batch_message") metrics.batchAnchored(leaves);
  };
  const toAnchoredTopic = async (row: LedgerTransactionRow, topicId: string, consensusAt: string | null) => {
    // Built before the journal's transaction (it may create the seal key in one of its own).
    const done = await journal.toAnchoredTopic(row, topicId, consensusAt, await announcementFor(row.orgId));
    if (done === null) return;
    event("anchored", row, { topicId });
    metrics.anchored(row.kind, done.at - row.createdAt);
    if (done.announced !== null) event("queued", done.announced, { topicId });
  };
  const abandon = async (row: LedgerTransactionRow, reason: string) => {
    const done = await journal.abandon(row, reason);
    if (done === null) return;
    event("abandoned", row, { reason });
    if (done.requeued !== null) event("requeued", { ...row, transactionId: done.requeued }, { replaces: row.transactionId });
  };
  /** A batch whose transaction carried other bytes: abandoned, its leaves in new open batches, their records following (Journal.rebatch). */
  const rebatch = async (row: LedgerTransactionRow, reason: string) => {
    const done = await journal.rebatch(row, reason);
    if (done === null) return;
    errors.warn(`rebatched:${row.transactionId}`, "a batch's transaction reached consensus with other bytes; its records go in a new batch", { transactionId: row.transactionId, reason });
    event("rebatched", row, { reason, batches: done.batches });
  };
  /** The provider's announcement, or null (logged) when it cannot be built now: the next pass asks again. */
  const announcementFor = async (orgId: string): Promise<KeyAnnouncement | null> => {
    try {
      const a = await ctx.announcementFor(orgId);
      if (a === null) errors.warn("announcement-unavailable", "key announcement cannot be built yet (no seal key, and no master key to create one); record messages of the organisation wait", { orgId });
      return a;
    } catch (e) {
      errors.warn("announcement-failed", "key announcement could not be built; it is tried again at the next pass", { orgId, error: e });
      return null;
    }
  };
  const mirrorUnreachable = (row: LedgerTransactionRow, error: string) => {
    metrics.ledgerError("unknown");
    errors.warn("mirror-unreachable", "mirror node unreachable; confirmation waits", { error });
    ctx.reschedule(row, ctx.backoff(health.failures + 1), error);
  };

  return { event, toAccepted, toAnchoredMessage, toAnchoredTopic, abandon, rebatch, announcementFor, mirrorUnreachable };
}
