/**
 * The anchor loop: takes `ledger_transactions` rows from `pending` to `accepted` to `anchored`
 * (or `abandoned`), in the background of `serve`. The table is both its queue and its crash
 * journal; docs/anchoring.md walks through the states with the failure cases.
 *
 * This file is the loop: its passes, and the parts it is made of, put together. The parts are in
 * loop/: the timer (ticker.ts), the state changes and their log lines (state-changes.ts), the
 * state machine, what a ledger answer means for a row (state-machine.ts), provisioning
 * (provisioning.ts) and confirmation in batches (confirm-batches.ts), sharing one context
 * (context.ts). The rest is beside it: queue.ts writes every change to the journal,
 * transaction-ids.ts chooses the ids, back-pressure.ts decides when record creation must wait,
 * retry.ts holds the backoff curve and the rate-limited log lines.
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
 *   of the topic's messages (confirmation in batches, loop/confirm-batches.ts), or, confirmed
 *   alone, at the receipt's sequence number.
 * - Topic provisioning: an organisation that holds the add-on and has no topic gets a
 *   `topic_create` row within one tick (≤ 1 s), whichever process flipped the flag.
 * - Key announcements (docs/anchoring.md "Key announcements"): the transaction that records an
 *   organisation's new topic queues the announcement of its key; each pass queues one for every
 *   organisation with a topic whose current key has none live (topics that predate announcements:
 *   at the first pass after a start). Exactly once across processes and crashes (the journal's
 *   unique index); the organisation's record messages wait until it is anchored
 *   (`Journal.due`, anchoring/journal/ports.ts). An announcement is confirmed on the mirror node byte for byte, like a
 *   record message.
 * - Every state change is one JSON log line (`msg: "anchor"`); keys never appear in a log line.
 *   Ledger errors are logged at most once a minute per kind, with a count of those skipped;
 *   the memory of kinds is bounded (`ErrorLogLimiter`).
 */
import { BackPressure, backPressureError } from "./back-pressure.ts";
import type { SubmitKeyPair } from "./ledger.ts";
import type { LoopStorageNow } from "./loop/ports.ts";
import type { BatchPolicy, Journal, JournalRules } from "./journal/ports.ts";
import { DEFAULT_BATCH_POLICY, journalRules } from "./journal/rules.ts";
import type { LedgerTransactionRow } from "./queue.ts";
import { backoffDelay, ErrorLog, jittered, LedgerHealth } from "./retry.ts";
import { loadOrCreateSubmitKey } from "./submit-key.ts";
import { TopicWatches } from "./topic-watches.ts";
import { CLOCK_STEP_TOLERANCE_MS, createTransactionIds } from "./transaction-ids.ts";
import type { AnchorMetrics, Anchoring, AnchoringOptions, AnchorStorage } from "./types.ts";
import { createBatcher } from "./loop/batcher.ts";
import { createBatchConfirmation } from "./loop/confirm-batches.ts";
import type { LoopContext } from "./loop/context.ts";
import { createProvisioning } from "./loop/provisioning.ts";
import { createStateChanges } from "./loop/state-changes.ts";
import { createStateMachine, SWEEP_EVERY_MS } from "./loop/state-machine.ts";
import { Ticker } from "./loop/ticker.ts";

export type { AnchorMetrics, AnnouncementFor, Anchoring, AnchoringOptions, AnchorQueue, AnchorStorage, BackPressureCause, KeyAnnouncement, LedgerErrorKind, LedgerLinks } from "./types.ts";

const NO_METRICS: AnchorMetrics = { anchored() {}, ledgerError() {} };

/**
 * Back-pressure works on counts of the queue at most this old (timer passes). Between two counts
 * creation at 1,500 records/s adds up to 150 rows the bound has not seen: the bound is 5,000.
 */
export const COUNTS_EVERY_MS = 100;

/**
 * The leader reads the open batches at least this often (a batch opened on another node wakes
 * nothing here), and otherwise when the earliest one's window ends or when none was open.
 */
const BATCH_LOOK_EVERY_MS = 1_000;

/** A node that does not lead and found the ledger unreachable asks it again this often. */
const INACTIVE_PROBE_MS = 2_000;

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
  return { anchored: quietly(sink.anchored), ledgerError: quietly(sink.ledgerError), backPressure: quietly(sink.backPressure), batchAnchored: quietly(sink.batchAnchored) };
}

/**
 * The journal on the embedded SQLite (one node: it always runs the loop), built by its driver
 * (`journal`, storage/engine-drivers.ts) under the rules, with the rest of the loop's storage on
 * the same database (`loop`).
 */
export function sqliteAnchorStorage(journal: (rules: JournalRules) => Journal, loop: LoopStorageNow): AnchorStorage {
  return {
    journal: (clock, newTransactionId, batches) => journal(journalRules(clock, newTransactionId, batches)),
    transactionIds: (o) => createTransactionIds({ ...o, journal: loop.transactionIds }),
    submitKey: (masterKey, generate) => loadOrCreateSubmitKey(loop.submitKey, masterKey, generate),
  };
}

export function createAnchoring(options: AnchoringOptions): Anchoring {
  const { clock, log, ledger, links } = options;
  if (options.storage === undefined && (options.journal === undefined || options.loop === undefined)) throw new TypeError("createAnchoring needs journal and loop, or storage");
  const storage = options.storage ?? sqliteAnchorStorage(options.journal!, options.loop!);
  // Several nodes: only the leader works the queue; the others count it for back-pressure.
  const active = storage.active ?? (() => true);
  const newTransactionId = storage.transactionIds({ clock, operator: ledger.operatorAccountId, validSeconds: options.validSeconds, backdateMs: options.validStartBackdateMs ?? 0 });
  const concurrency = options.concurrency ?? 64;
  const idlePollMs = options.idlePollMs ?? 1000;
  const receiptPollMs = options.receiptPollMs ?? 1000;
  // Confirmation in batches (loop/confirm-batches.ts), when the ledger lists a topic's messages.
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
  // `health` the ledger's, `ticker` the timer, `inFlight` the steps under way, `watches` the
  // topics read for confirmation in batches.
  const batchPolicy: BatchPolicy = {
    windowMs: options.batchWindowMs ?? DEFAULT_BATCH_POLICY.windowMs,
    max: options.batchMax ?? DEFAULT_BATCH_POLICY.max,
    maxRevocations: DEFAULT_BATCH_POLICY.maxRevocations,
  };
  const journal = storage.journal(clock, newTransactionId, batchPolicy);
  const pressure = new BackPressure({ backlogLimit: options.backlogLimit, maxQueueAgeMs: options.maxQueueAgeMs, windowMs: options.backlogWindowMs, floor: options.backlogFloor });
  const errors = new ErrorLog(log);
  const ticker = new Ticker(() => tick());
  // The first answer after failures: every row waiting on a backoff is due at the next pass.
  const health = new LedgerHealth(errors, () => ticker.schedule(0));
  const inFlight = new Map<string, Promise<void>>();
  // Which topics confirmation in batches reads, and from where (loop/confirm-batches.ts).
  const watches = new TopicWatches(confirmPollMs, confirmFallbackMs);
  // Loaded at first use and kept, null included (a sealed key store stays sealed for this loop).
  const submitKey: { value?: SubmitKeyPair | null } = {};
  const getSubmitKey = async (): Promise<SubmitKeyPair | null> => {
    if (!("value" in submitKey)) submitKey.value = await storage.submitKey(options.masterKey, () => ledger.generateSubmitKey());
    return submitKey.value ?? null;
  };

  /** The loop's retry delay after `n` failures: capped exponential, with jitter. */
  const backoff = (n: number) => jittered(backoffDelay(n, backoffBaseMs, backoffMaxMs));
  const reschedule = (row: LedgerTransactionRow, delayMs: number, lastError: string | null) => journal.reschedule(row, delayMs, lastError);

  // The parts of the loop (loop/), over one context.
  const ctx: LoopContext = {
    now,
    log,
    ledger,
    listing,
    journal,
    metrics,
    errors,
    health,
    ticker,
    pressure,
    watches,
    inFlight,
    timing: { receiptPollMs, confirmPollMs, confirmFallbackMs, backoffMaxMs, settleGraceMs },
    topicMemo,
    announcementFor: options.announcementFor,
    compromiseMessageFor: options.compromiseMessageFor ?? null,
    batchMessageFor: options.batchMessageFor,
    personAnnouncementFor: options.personAnnouncementFor ?? null,
    submitKey: getSubmitKey,
    backoff,
    reschedule,
  };
  const changes = createStateChanges(ctx);
  const { step, sweepUnsent } = createStateMachine(ctx, changes);
  const { provision, announce } = createProvisioning(ctx, changes);
  const batches = createBatchConfirmation(ctx, changes);
  const batcher = createBatcher(ctx, changes, batchPolicy);

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
  // When the leader last looked at the open batches (performance.now()).
  let batchedAt = Number.NEGATIVE_INFINITY;
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
      batches.forget();
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
    // Batches whose window has passed are closed before the queue is read: they go in this pass.
    const closeAt = batcher.nextAt();
    if (fresh || closeAt === null || closeAt <= wall || t - batchedAt >= BATCH_LOOK_EVERY_MS) {
      batchedAt = t;
      await batcher.close();
    }
    if (fresh || t - countedAt >= COUNTS_EVERY_MS) {
      pressure.observe(await journal.unfinished());
      countedAt = t;
    }
    const steps = (await journal.due(concurrency - inFlight.size, inFlight)).map(startRow);
    return { steps, reads: await batches.readTopics() };
  };

  const nextDelay = async (): Promise<number> => {
    if (!active()) return Math.min(idlePollMs, COUNTS_EVERY_MS * 2);
    await journal.flush();
    const rowAt = inFlight.size >= concurrency ? null : await journal.nextDueAt();
    const at = [rowAt, watches.nextAt(), batcher.nextAt()].reduce<number | null>((a, b) => (a === null ? b : b === null ? a : Math.min(a, b)), null);
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
      await Promise.allSettled([...inFlight.values(), ...batches.reading]);
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
    openBatches() {
      return batcher.open();
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
