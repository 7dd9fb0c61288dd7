/**
 * The anchor loop: takes `ledger_transactions` rows from `pending` to `accepted` to `anchored`
 * (or `abandoned`), in the background of `serve`. The table is both its queue and its crash
 * journal; docs/anchoring.md walks through the states with the failure cases.
 *
 * This file is the state machine (what a ledger answer means for a row) and the timer. The rest
 * is beside it: queue.ts writes every change to the journal, transaction-ids.ts chooses the ids,
 * back-pressure.ts decides when record creation must wait, retry.ts holds the backoff curve and
 * the rate-limited log lines.
 *
 * What it guarantees:
 * - Store, then submit, then store: a row's signed bytes and its attempt count are committed
 *   before the bytes are sent; the answer is committed in another transaction. Those changes (and
 *   acceptance and anchoring) are group-committed with the other rows' due in the same
 *   millisecond (queue.ts, `grouped`): a step goes on only once its change has committed.
 *   Nothing is ever awaited inside a bun:sqlite transaction.
 * - One transaction per purpose while it could still land: after a crash or an unanswered
 *   submission the same bytes are re-submitted (DUPLICATE_TRANSACTION means they were accepted)
 *   or their receipt / mirror entry is consulted. A row is abandoned only once it provably
 *   cannot reach consensus: refused by a precheck on its first submission that reached a node,
 *   failed at consensus, no submission that reached a node before its validity window closed
 *   (never sent, or every submission `unsent`: refused before anything was sent, also while the
 *   ledger stays down; docs/anchoring.md "Abandonment"), or, once the window has closed, unknown to
 *   the receipt service and to the mirror node. `attempts` counts the submissions that may have
 *   reached a node: an `unsent` one is taken back.
 * - For a `record_message` row, every state change updates the record's `anchor_state` (and on
 *   consensus its `sequence_number` and `consensus_at`) in the same transaction. An abandoned
 *   `revocation_message` is queued again (new id, same bytes) in the same transaction, with
 *   `records.revocation_transaction_id` moved to it: an acknowledged revocation is never lost.
 *   An abandoned `topic_create` is queued again by provisioning, after a backoff.
 * - A record is `anchored` only after the mirror node shows its message on the organisation's
 *   topic, carried by its transaction, paid by our operator, with the exact bytes: in a listing
 *   of the topic's messages (confirmation in batches, below), or, confirmed alone, at the
 *   receipt's sequence number.
 * - Topic provisioning: an organisation that holds the add-on and has no topic gets a
 *   `topic_create` row within one tick (≤ 1 s), whichever process flipped the flag.
 * - Key announcements (docs/anchoring.md "Key announcements"): the transaction that records an
 *   organisation's new topic queues the announcement of its key; each pass queues one for every
 *   organisation with a topic whose current key has none live (topics that predate announcements:
 *   at the first pass after a start). Exactly once across processes and crashes (the journal's
 *   unique index); the organisation's record messages wait until it is anchored
 *   (`AnchorJournal.due`). An announcement is confirmed on the mirror node byte for byte, like a
 *   record message.
 * - Every state change is one JSON log line (`msg: "anchor"`); keys never appear in a log line.
 *   Ledger errors are logged at most once a minute per kind, with a count of those skipped;
 *   the memory of kinds is bounded (`ErrorLogLimiter`).
 */
import { BackPressure, backPressureError } from "./back-pressure.ts";
import { parseTransactionId, type ConfirmedMessage, type Ledger, type SubmitKeyPair, type TopicMessage, type TopicMessagesFrom } from "./ledger.ts";
import type { Db } from "../storage/db.ts";
import { AnchorJournal, type LedgerTransactionRow } from "./queue.ts";
import { backoffDelay, ErrorLog, jittered, LedgerHealth, retryBeforeCutoff } from "./retry.ts";
import { loadOrCreateSubmitKey } from "./submit-key.ts";
import { TopicWatches } from "./topic-watches.ts";
import { CLOCK_STEP_TOLERANCE_MS, createTransactionIds } from "./transaction-ids.ts";
import type { AnchorMetrics, Anchoring, AnchoringOptions, AnchorStorage, KeyAnnouncement } from "./types.ts";

export type { AnchorMetrics, AnnouncementFor, Anchoring, AnchoringOptions, AnchorQueue, AnchorStorage, BackPressureCause, KeyAnnouncement, LedgerErrorKind, LedgerLinks } from "./types.ts";

const NO_METRICS: AnchorMetrics = { anchored() {}, ledgerError() {} };

/** Margin the nodes require: a transaction with less than 10 s of its window left is refused. */
const SUBMIT_MARGIN_MS = 10_000;

/**
 * Passes start at least this far apart. Every record created wakes the loop and every step that
 * ends asks for a pass, and each pass reads the queue (counts, due rows, provisioning): under
 * sustained creation that was a pass per turn of the event loop, a seventh of the API thread
 * (docs/benchmarks.md "Anchoring under record creation"). Whatever asks within the gap is served by
 * the next pass, at most this much later.
 */
export const MIN_PASS_GAP_MS = 5;

/**
 * Back-pressure works on counts of the queue at most this old (timer passes). Between two counts
 * creation at 1,500 records/s adds up to 150 rows the bound has not seen: the bound is 5,000.
 */
export const COUNTS_EVERY_MS = 100;

/**
 * The leader looks this often for rows that can no longer be submitted (`unsentPastCutoff`), and
 * takes at most SWEEP_LIMIT of them a look: a record is abandoned within about this long of its
 * window closing, whatever its backoff.
 */
const SWEEP_EVERY_MS = 1_000;
const SWEEP_LIMIT = 500;

/** A node that does not lead and found the ledger unreachable asks it again this often. */
const INACTIVE_PROBE_MS = 2_000;

/**
 * The loop's timer and lifecycle: at most one tick pending, the earliest asked for wins, and
 * passes start at least `minGapMs` apart; nothing is scheduled before `start` or after `stop`.
 * `pass` runs one pass and says when to run again. Exported for its test.
 */
export class Ticker {
  private started = false;
  private stopping = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private timerAt = Number.POSITIVE_INFINITY;
  private lastPassAt = Number.NEGATIVE_INFINITY;

  /** A pass is under way (an asynchronous one): a timer that fires meanwhile asks for another after it. */
  private passing = false;
  private again = false;

  constructor(
    private readonly pass: () => number | Promise<number>,
    private readonly minGapMs: number = MIN_PASS_GAP_MS,
  ) {}

  /** Started and not stopping: steps that finish ask for the next pass. */
  get running(): boolean {
    return this.started && !this.stopping;
  }

  /** False if already started or stopped. */
  start(): boolean {
    if (this.started || this.stopping) return false;
    this.started = true;
    return true;
  }

  stop(): void {
    this.stopping = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** A pass in `delayMs` (real time), unless one is already due sooner. */
  schedule(delayMs: number): void {
    if (!this.running) return;
    const now = Date.now();
    const at = Math.max(now + delayMs, this.lastPassAt + this.minGapMs);
    delayMs = at - now;
    if (this.timer !== null && this.timerAt <= at) return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(this.fire, delayMs);
  }

  private readonly fire = (): void => {
    this.timer = null;
    this.timerAt = Number.POSITIVE_INFINITY;
    if (this.stopping) return;
    // Passes never overlap: one asked for while another runs follows it at once.
    if (this.passing) {
      this.again = true;
      return;
    }
    this.lastPassAt = Date.now();
    const next = this.pass();
    if (typeof next === "number") return this.schedule(next);
    this.passing = true;
    const after = (delayMs: number) => {
      this.passing = false;
      const again = this.again;
      this.again = false;
      this.schedule(again ? 0 : delayMs);
    };
    next.then(after, () => after(1000));
  };
}

/** Monitoring must never disturb the loop: a sink that throws is ignored. */
function quietMetrics(sink: AnchorMetrics): Required<AnchorMetrics> {
  const quietly =
    <A extends unknown[]>(f: ((...args: A) => void) | undefined) =>
    (...args: A) => {
      try {
        f?.apply(sink, args);
      } catch {
        /* ignored */
      }
    };
  return { anchored: quietly(sink.anchored), ledgerError: quietly(sink.ledgerError), backPressure: quietly(sink.backPressure) };
}

/** The journal on the embedded SQLite (one node: it always runs the loop). */
export function sqliteAnchorStorage(db: Db): AnchorStorage {
  return {
    journal: (clock, newTransactionId) => new AnchorJournal(db, clock, newTransactionId),
    transactionIds: (o) => createTransactionIds({ ...o, db }),
    submitKey: (masterKey, generate) => loadOrCreateSubmitKey(db, masterKey, generate),
  };
}

export function createAnchoring(options: AnchoringOptions): Anchoring {
  const { clock, log, ledger, links } = options;
  if (options.storage === undefined && options.db === undefined) throw new TypeError("createAnchoring needs db or storage");
  const storage = options.storage ?? sqliteAnchorStorage(options.db!);
  // Several nodes: only the leader works the queue; the others count it for back-pressure.
  const active = storage.active ?? (() => true);
  const newTransactionId = storage.transactionIds({ clock, operator: ledger.operatorAccountId, validSeconds: options.validSeconds, backdateMs: options.validStartBackdateMs ?? 0 });
  const concurrency = options.concurrency ?? 64;
  const idlePollMs = options.idlePollMs ?? 1000;
  const receiptPollMs = options.receiptPollMs ?? 1000;
  // Confirmation in batches (below), when the ledger lists a topic's messages.
  const listing = ledger.topicMessages?.bind(ledger) ?? null;
  const confirmPollMs = options.confirmPollMs ?? 500;
  const confirmFallbackMs = listing === null ? receiptPollMs : Math.max(receiptPollMs, options.confirmFallbackMs ?? 15_000);
  const backoffBaseMs = options.backoffBaseMs ?? 500;
  const backoffMaxMs = options.backoffMaxMs ?? 60_000;
  const settleGraceMs = options.settleGraceMs ?? 20_000;
  const healthTtlMs = options.healthTtlMs ?? 10_000;
  const topicMemo = options.topicMemo ?? "docverify";
  const metrics = quietMetrics(options.metrics ?? NO_METRICS);
  const now = () => clock.now();

  // The loop's state, each part in one place: the journal (queue.ts) holds the rows and the
  // reschedules not yet written, `pressure` the counts of the last pass and the recent anchors,
  // `health` the ledger's, `ticker` the timer, `inFlight` the steps under way.
  const journal = storage.journal(clock, newTransactionId);
  const pressure = new BackPressure({ backlogLimit: options.backlogLimit, maxQueueAgeMs: options.maxQueueAgeMs, windowMs: options.backlogWindowMs, floor: options.backlogFloor });
  const errors = new ErrorLog(log);
  const ticker = new Ticker(() => tick());
  // The first answer after failures: every row waiting on a backoff is due at the next pass.
  const health = new LedgerHealth(errors, () => ticker.schedule(0));
  const inFlight = new Map<string, Promise<void>>();
  // Loaded at first use and kept, null included (a sealed key store stays sealed for this loop).
  const submitKey: { value?: SubmitKeyPair | null } = {};
  const getSubmitKey = async (): Promise<SubmitKeyPair | null> => {
    if (!("value" in submitKey)) submitKey.value = await storage.submitKey(options.masterKey, () => ledger.generateSubmitKey());
    return submitKey.value ?? null;
  };

  /** The loop's retry delay after `n` failures: capped exponential, with jitter. */
  const backoff = (n: number) => jittered(backoffDelay(n, backoffBaseMs, backoffMaxMs));
  const reschedule = (row: LedgerTransactionRow, delayMs: number, lastError: string | null) => journal.reschedule(row, delayMs, lastError);

  // ---- state changes: the journal's, then their log line and metrics -------------------
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
    pressure.noteAnchored(at);
    event("anchored", row, { topicId: row.topicId, sequenceNumber: confirmed.sequenceNumber, consensusAt: confirmed.consensusAt });
    metrics.anchored(row.kind, at - row.createdAt);
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
  /** The provider's announcement, or null (logged) when it cannot be built now: the next pass asks again. */
  const announcementFor = async (orgId: string): Promise<KeyAnnouncement | null> => {
    try {
      const a = await options.announcementFor(orgId);
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
    reschedule(row, backoff(health.failures + 1), error);
  };

  // ---- the state machine -----------------------------------------------------------------
  const windowEnd = (row: LedgerTransactionRow) => row.validStartMs + row.validSeconds * 1000 + 1;

  const prepare = async (row: LedgerTransactionRow): Promise<Uint8Array | null> => {
    if (row.kind !== "topic_create" && (row.topicId === null || row.message === null)) {
      await abandon(row, "malformed row: a message needs a topic id and message bytes");
      return null;
    }
    const key = await getSubmitKey();
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

  // ---- provisioning: topics and key announcements -------------------------------------
  const provision = async () => {
    const wanting = await journal.organisationsWantingTopic();
    if (wanting.length === 0) return;
    if ((await getSubmitKey()) === null) {
      errors.warn("sealed", "key store sealed: organisation topics cannot be created until the master key is available", { organisations: wanting.length });
      return;
    }
    for (const orgId of wanting) {
      const row = await journal.queueTopicCreate(orgId);
      if (row !== null) event("queued", row);
    }
  };

  /** Organisations with a topic whose current key has no live announcement get one (topics that predate announcements, a new key). */
  const announce = async () => {
    for (const orgId of await journal.organisationsWantingAnnouncement()) {
      const a = await announcementFor(orgId);
      if (a === null) continue;
      const row = await journal.queueAnnouncement(orgId, a);
      if (row !== null) event("queued", row, { topicId: row.topicId });
    }
  };

  // ---- confirmation in batches ---------------------------------------------------------------
  // One listing of a topic's messages on the mirror node confirms up to 100 accepted messages,
  // where each would otherwise take a receipt poll per second until consensus and a mirror read
  // of its own (docs/anchoring.md "Confirmation in batches"). A listed message confirms the row
  // with its transaction id only if it is on the row's topic, paid by the transaction's account,
  // with the exact bytes: the checks of `confirmMessage`, the sequence number being the mirror's
  // own. Anything else (a different message, a mirror that does not answer, a message it has not
  // listed yet) is left to the row's own path once `confirmFallbackMs` has passed since its
  // acceptance: a listing only ever anchors, never abandons or delays (topic-watches.ts).
  const watches = new TopicWatches(confirmPollMs, confirmFallbackMs);
  let watchesLoaded = false;
  const reading = new Set<Promise<void>>();
  const LISTING_LIMIT = 100;

  const confirmListed = async (topicId: string, m: TopicMessage): Promise<void> => {
    if (m.transactionId === null) return;
    const row = await journal.unfinishedMessage(m.transactionId);
    if (row === null || row.topicId !== topicId || m.payerAccountId !== parseTransactionId(row.transactionId).account) return;
    if (!Buffer.from(row.message!).equals(Buffer.from(m.message))) return;
    return toAnchoredMessage(row, { sequenceNumber: m.sequenceNumber, consensusAt: m.consensusAt, runningHash: m.runningHash });
  };

  const readTopic = async (topicId: string, from: TopicMessagesFrom): Promise<void> => {
    const got = await listing!(topicId, from, LISTING_LIMIT);
    if (got.kind !== "found") {
      if (got.kind === "unreachable") {
        metrics.ledgerError("unknown");
        errors.warn("mirror-unreachable", "mirror node unreachable; confirmation waits", { error: got.error });
      }
      watches.failed(topicId, now(), backoff);
      return;
    }
    await Promise.all(got.value.map((m) => confirmListed(topicId, m)));
    const last = got.value.at(-1)?.sequenceNumber ?? null;
    watches.read(topicId, last, got.value.length === LISTING_LIMIT, now());
  };

  const readTopics = async (): Promise<Promise<void>[]> => {
    if (listing === null) return [];
    if (!watchesLoaded) {
      watchesLoaded = true;
      for (const t of await journal.topicsAwaitingConfirmation()) watches.watch(t.topicId, t.validStartMs, now());
    }
    return watches.due(now()).map(({ topicId, from }) => {
      const p = readTopic(topicId, from)
        .catch((e: unknown) => {
          errors.warn(`listing:${(e as Error)?.message ?? e}`, "confirming a topic's messages failed; it will be retried", { topicId, error: e });
          watches.failed(topicId, now(), backoff);
        })
        .finally(() => {
          reading.delete(p);
          ticker.schedule(0);
        });
      reading.add(p);
      return p;
    });
  };

  // ---- the loop --------------------------------------------------------------------------
  const startRow = (row: LedgerTransactionRow): Promise<void> => {
    const p = step(row)
      .catch((e: unknown) => {
        errors.warn(`step:${(e as Error)?.message ?? e}`, "anchor step failed; it will be retried", { transactionId: row.transactionId, error: e });
        try {
          reschedule(row, backoff(row.attempts + 1), `internal error: ${(e as Error)?.message ?? String(e)}`);
        } catch {
          /* storage busy or closed: the row is still due and is picked up again */
        }
      })
      .finally(() => {
        inFlight.delete(row.transactionId);
        ticker.schedule(0);
      });
    inFlight.set(row.transactionId, p);
    return p;
  };

  // When the queue was last counted for back-pressure (performance.now(), real time).
  let countedAt = Number.NEGATIVE_INFINITY;
  // The clock at the leader's last pass (the injected clock, which may step).
  let lastPassWall = Number.NEGATIVE_INFINITY;
  // When the leader last looked for rows that can no longer be submitted (performance.now()).
  let sweptAt = Number.NEGATIVE_INFINITY;
  // When a node that does not lead last asked the ledger whether it answers again.
  let probedAt = Number.NEGATIVE_INFINITY;
  // Whether another node led at this node's last pass: the rows' due times are then that node's
  // backoffs, made against a ledger it may not have reached.
  let followed = false;

  /**
   * One pass. Returns the steps it started. The queue's counts for back-pressure are read at most
   * every COUNTS_EVERY_MS on the timer's passes (on every `runOnce`): counting the unfinished rows
   * and finding the oldest pending one read the whole backlog, on every pass.
   */
  const pass = async (fresh: boolean): Promise<{ steps: Promise<void>[]; reads: Promise<void>[] }> => {
    const t = performance.now();
    if (!active()) {
      // Another node leads: count the queue for this node's back-pressure, nothing else. The
      // topics awaiting confirmation are read again when this node leads. A node that found the
      // ledger unreachable (and so stepped down) asks it again now and then, to lead again once
      // it answers.
      watchesLoaded = false;
      followed = true;
      if (health.failures > 0 && t - probedAt >= INACTIVE_PROBE_MS) {
        probedAt = t;
        void probe();
      }
      if (fresh || t - countedAt >= COUNTS_EVERY_MS) {
        pressure.observe(await journal.unfinished());
        countedAt = t;
      }
      return { steps: [], reads: [] };
    }
    await journal.flush();
    // Rows backed off during an outage (up to a minute apart) would otherwise wait out their
    // backoff, and a record created during it could see its window close meanwhile. The same when
    // this node takes the lead: the backoffs are the last leader's, often one that stepped down
    // because it could not reach the ledger, which this node may reach.
    const tookOver = followed;
    followed = false;
    // The clock stepped back: every row's next try was set on the clock before the step, up to
    // its size ahead of the clock now. They are due at once instead.
    const wall = now();
    const steppedBack = wall < lastPassWall - CLOCK_STEP_TOLERANCE_MS;
    if (steppedBack) {
      errors.warn("clock-step", "the clock stepped back; every waiting ledger transaction is tried again now", { byMs: lastPassWall - wall });
      watches.steppedBack(lastPassWall - wall);
    }
    lastPassWall = wall;
    if (health.takeRecovery() || tookOver || steppedBack) await journal.retryAllNow();
    if (fresh || t - sweptAt >= SWEEP_EVERY_MS) {
      sweptAt = t;
      await sweepUnsent();
    }
    await provision();
    await announce();
    if (fresh || t - countedAt >= COUNTS_EVERY_MS) {
      pressure.observe(await journal.unfinished());
      countedAt = t;
    }
    const steps = (await journal.due(concurrency - inFlight.size, inFlight)).map(startRow);
    return { steps, reads: await readTopics() };
  };

  const nextDelay = async (): Promise<number> => {
    if (!active()) return Math.min(idlePollMs, COUNTS_EVERY_MS * 2);
    await journal.flush();
    const rowAt = inFlight.size >= concurrency ? null : await journal.nextDueAt();
    const readAt = watches.nextAt();
    const at = rowAt === null ? readAt : readAt === null ? rowAt : Math.min(rowAt, readAt);
    if (at === null) return idlePollMs;
    return Math.max(10, Math.min(idlePollMs, at - now()));
  };

  /** A timer's pass: the delay to the next one. */
  const tick = async (): Promise<number> => {
    try {
      await pass(false);
      return await nextDelay();
    } catch (e) {
      errors.warn("pass", "anchor loop pass failed; retrying", { error: e });
      return idlePollMs;
    }
  };

  const probe = () => health.probe(() => ledger.ping());

  return {
    queue: {
      newTransactionId,
      wake() {
        ticker.schedule(0);
      },
    },
    links,
    ledger,
    start() {
      if (!ticker.start()) return;
      void probe();
      ticker.schedule(0);
    },
    async stop() {
      ticker.stop();
      errors.silence();
      await Promise.allSettled([...inFlight.values(), ...reading]);
      await health.settled();
      try {
        await journal.flush();
      } catch {
        /* storage closed or busy: the rows are simply due at once on the next start */
      }
    },
    async runOnce() {
      const { steps, reads } = await pass(true);
      await Promise.allSettled([...steps, ...reads]);
      await journal.flush();
      return steps.length;
    },
    async readiness() {
      const fresh = health.fresh(healthTtlMs);
      if (fresh !== null) return fresh;
      await Promise.race([probe(), Bun.sleep(1000)]);
      return health.last ?? "ledger not answering yet";
    },
    backlog() {
      return pressure.backlog();
    },
    anchoredRecently() {
      return pressure.anchoredRecently(now());
    },
    ledgerUnreachableForMs() {
      return health.unreachableForMs();
    },
    assertCapacity() {
      const cause = pressure.check(now());
      if (cause === null) return;
      metrics.backPressure(cause);
      throw backPressureError(cause);
    },
  };
}
