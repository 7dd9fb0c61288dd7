/**
 * The anchor loop's state machine: what a ledger answer means for a row (anchorer.ts's header
 * says what it guarantees). `step` takes one due row one step on: a pending row is prepared,
 * committed and submitted (store, then submit, then store); an accepted one is asked for its
 * receipt; a row whose window has closed is settled by its receipt, then the mirror node.
 */
import type { Ledger } from "../ledger.ts";
import type { LedgerTransactionRow } from "../queue.ts";
import { retryBeforeCutoff } from "../retry.ts";
import { CLOCK_STEP_TOLERANCE_MS } from "../transaction-ids.ts";
import { SUBMIT_MARGIN_MS, windowEnd, type LoopContext } from "./context.ts";
import type { StateChanges } from "./state-changes.ts";

/**
 * The leader looks this often for rows that can no longer be submitted (`unsentPastCutoff`), and
 * takes at most SWEEP_LIMIT of them a look: a record is abandoned within about this long of its
 * window closing, whatever its backoff.
 */
export const SWEEP_EVERY_MS = 1_000;
const SWEEP_LIMIT = 500;

export function createStateMachine(ctx: LoopContext, changes: StateChanges) {
  const { ledger, journal, metrics, errors, health, inFlight, now, backoff, reschedule, topicMemo } = ctx;
  const { receiptPollMs, backoffMaxMs, settleGraceMs } = ctx.timing;
  const { event, toAccepted, toAnchoredMessage, toAnchoredTopic, abandon, rebatch, mirrorUnreachable } = changes;

  const prepare = async (row: LedgerTransactionRow): Promise<Uint8Array | null> => {
    if (row.kind !== "topic_create" && (row.topicId === null || row.message === null)) {
      await abandon(row, "malformed row: a message needs a topic id and message bytes");
      return null;
    }
    const key = await ctx.submitKey();
    if (key === null) {
      reschedule(row, backoffMaxMs, "key store sealed: no master key to open the ledger submit key");
      return null;
    }
    if (row.kind === "topic_create") {
      return await ledger.prepareTopicCreate({ transactionId: row.transactionId, validSeconds: row.validSeconds, submitPublicKey: key.publicKey, memo: topicMemo });
    }
    return await ledger.prepareMessage({
      transactionId: row.transactionId,
      validSeconds: row.validSeconds,
      topicId: row.topicId!,
      message: new Uint8Array(row.message!),
      submitPrivateKey: key.privateKey,
    });
  };

  /** Receipt SUCCESS for a message: confirm it on the mirror before calling it anchored. */
  const confirm = async (row: LedgerTransactionRow, by: { sequenceNumber: number } | { consensusAt: string }) => {
    if (row.state === "pending") await toAccepted(row, false);
    const current = { ...row, state: "accepted" as const };
    const c = await ledger.confirmMessage({ topicId: row.topicId!, transactionId: row.transactionId, message: new Uint8Array(row.message!), ...by });
    switch (c.kind) {
      case "confirmed":
        return toAnchoredMessage(current, c.value);
      case "not_found":
        // Mirror nodes trail consensus by a few seconds.
        return reschedule(current, receiptPollMs, "reached consensus; waiting for the mirror node");
      case "mismatch":
        // Our batch's transaction carried another batch's bytes: its leaves go in a new batch.
        if (c.otherBytes === true && row.kind === "batch_message") return rebatch(current, `its transaction reached consensus carrying other bytes: ${c.reason}`);
        errors.warn(`mismatch:${row.transactionId}`, "mirror node does not confirm an anchored message; the record stays accepted", {
          transactionId: row.transactionId,
          reason: c.reason,
        });
        return reschedule(current, backoffMaxMs, `mirror mismatch: ${c.reason}`);
      case "unreachable":
        return mirrorUnreachable(current, c.error);
    }
  };

  /** The window has closed (or the receipt is gone): find out from the receipt, then the mirror, whether it landed. */
  const settle = async (row: LedgerTransactionRow): Promise<void> => {
    const t = now();
    const end = windowEnd(row);
    if (t < end) return reschedule(row, end - t, null);
    const r = await ledger.receipt(row.transactionId);
    if (r.kind !== "not_found") return onReceipt(row, r);
    const m = await ledger.lookupTransaction(row.transactionId);
    if (m.kind === "unreachable") return mirrorUnreachable(row, m.error);
    if (m.kind === "found") {
      if (m.value.result !== "SUCCESS") return abandon(row, `failed at consensus: ${m.value.result}`);
      if (row.kind === "topic_create") {
        if (m.value.entityId === null) return reschedule(row, backoffMaxMs, "mirror node names no topic for the topic creation");
        return toAnchoredTopic(row, m.value.entityId, m.value.consensusAt);
      }
      return confirm(row, { consensusAt: m.value.consensusAt });
    }
    if (t >= end + settleGraceMs) return abandon(row, "did not reach consensus within its validity window");
    return reschedule(row, Math.min(receiptPollMs * 2, end + settleGraceMs - t), null);
  };

  const onReceipt = async (row: LedgerTransactionRow, r: Awaited<ReturnType<Ledger["receipt"]>>): Promise<void> => {
    if (r.kind !== "unreachable") health.ok();
    switch (r.kind) {
      case "success":
        if (row.kind === "topic_create") {
          if (r.topicId === null) return abandon(row, "receipt of a topic creation names no topic");
          if (row.state === "pending") await toAccepted(row, false);
          return toAnchoredTopic({ ...row, state: "accepted" }, r.topicId, null);
        }
        if (r.sequenceNumber === null) return reschedule(row, backoffMaxMs, "receipt names no sequence number");
        return confirm(row, { sequenceNumber: r.sequenceNumber });
      case "failed":
        metrics.ledgerError("permanent");
        return abandon(row, `failed at consensus: ${r.status}`);
      case "pending":
        if (row.state === "pending") await toAccepted(row, false);
        return reschedule({ ...row, state: "accepted" }, receiptPollMs, null);
      case "not_found":
        if (now() >= windowEnd(row)) return settle(row);
        // Accepted but unknown to the receipt service: dropped, or not there yet. Only the end
        // of the window can settle it.
        return reschedule(row, Math.min(receiptPollMs * 2, windowEnd(row) - now()), null);
      case "unreachable":
        metrics.ledgerError("unknown");
        health.down(r.error);
        return reschedule(row, backoff(health.failures), r.error);
    }
  };

  /** Why a row no submission of which reached a node is abandoned. */
  const neverSent = (row: LedgerTransactionRow): string =>
    row.signedBytes === null
      ? "the validity window closed before the transaction could be submitted"
      : "the validity window closed before the transaction could reach a node: every submission was refused before anything was sent";

  /**
   * Rows that can no longer be submitted are abandoned when their window closes, not when their
   * turn comes: a backoff, a wait for the organisation's key announcement or a long queue ahead
   * of them would otherwise keep such a record the organisation's active one after it has failed.
   */
  const sweepUnsent = async (): Promise<void> => {
    for (const row of await journal.unsentPastCutoff(SUBMIT_MARGIN_MS, SWEEP_LIMIT)) {
      if (!inFlight.has(row.transactionId)) await abandon(row, neverSent(row));
    }
  };

  const step = async (row: LedgerTransactionRow): Promise<void> => {
    if (row.state === "accepted") return onReceipt(row, await ledger.receipt(row.transactionId));
    // pending
    const t = now();
    if (row.attempts === 0) {
      // No submission can have reached a node: never sent, or every one refused before anything
      // was sent (`unsent`, also while the ledger stays down). It can never reach consensus.
      if (t > windowEnd(row) - SUBMIT_MARGIN_MS) return abandon(row, neverSent(row));
    } else if (t >= windowEnd(row)) {
      return settle(row);
    }
    const bytes = row.signedBytes !== null ? new Uint8Array(row.signedBytes) : await prepare(row);
    if (bytes === null) return;
    // Committed before the bytes leave (store, then submit).
    const attempts = await journal.grouped.beginAttempt(row, bytes);
    if (attempts === null) return;
    const current = { ...row, attempts, signedBytes: Buffer.from(bytes) };
    const outcome = await ledger.submit(bytes);
    if (outcome.kind !== "unknown" && outcome.kind !== "unsent") health.ok();
    switch (outcome.kind) {
      case "accepted":
        return toAccepted(current, outcome.duplicate);
      case "retryable":
        metrics.ledgerError("retryable");
        // Refused on the first submission that reached a node because its valid start is in the
        // nodes' future, and in ours by more than jitter: made before the clock stepped back. The
        // same bytes would wait out the step; it was never accepted, so it is abandoned now (a
        // record's client creates it again, under an id that follows the clock).
        if (outcome.status === "INVALID_TRANSACTION_START" && attempts === 1 && row.validStartMs > now() + CLOCK_STEP_TOLERANCE_MS) {
          return abandon(current, "refused at precheck: INVALID_TRANSACTION_START: its valid start is ahead of the clock, which stepped back");
        }
        event("retry", current, { status: outcome.status, attempts });
        return reschedule(current, backoff(attempts), `precheck ${outcome.status}`);
      case "expired":
        metrics.ledgerError("expired");
        return reschedule(current, Math.max(0, windowEnd(current) - now()), `precheck ${outcome.status}`);
      case "permanent":
        metrics.ledgerError("permanent");
        // Refused on the first submission that reached a node (any before it were `unsent`): it
        // was never accepted, and these bytes never will be.
        if (attempts === 1) return abandon(current, `refused at precheck: ${outcome.status}`);
        // An earlier submission went unanswered and might have been accepted: let the window decide.
        return reschedule(current, Math.max(0, windowEnd(current) - now()), `precheck ${outcome.status}`);
      case "unknown":
        metrics.ledgerError("unknown");
        health.down(outcome.error);
        return reschedule(current, retryBeforeCutoff(backoff(health.failures), windowEnd(current) - SUBMIT_MARGIN_MS - now()), `no answer: ${outcome.error}`);
      case "unsent": {
        metrics.ledgerError("unknown");
        health.down(outcome.error);
        // Nothing left: the attempt is taken back, so `attempts` counts only submissions that may have reached a node.
        const left = await journal.takeBack(current, attempts);
        // Back at 0: the next try comes no later than the moment the check above abandons it.
        const untilCutoff = windowEnd(current) - SUBMIT_MARGIN_MS - now();
        const delay = left === 0 ? Math.min(backoff(health.failures), Math.max(0, untilCutoff + 1)) : retryBeforeCutoff(backoff(health.failures), untilCutoff);
        return reschedule({ ...current, attempts: left }, delay, `not sent: ${outcome.error}`);
      }
    }
  };

  return { step, sweepUnsent };
}
