/**
 * The anchor loop: takes `ledger_transactions` rows from `pending` to `accepted` to `anchored`
 * (or `abandoned`), in the background of `serve`. The table is both its queue and its crash
 * journal; docs/anchoring.md walks through the states with the failure cases.
 *
 * What it guarantees:
 * - Store, then submit, then store: a row's signed bytes and its attempt count are committed
 *   (one synchronous transaction) before the bytes are sent; the answer is committed in another.
 *   Nothing is ever awaited inside a bun:sqlite transaction.
 * - One transaction per purpose while it could still land: after a crash or an unanswered
 *   submission the same bytes are re-submitted (DUPLICATE_TRANSACTION means they were accepted)
 *   or their receipt / mirror entry is consulted. A row is abandoned only once it provably
 *   cannot reach consensus: refused by a precheck on its first submission that reached a node,
 *   failed at consensus, no submission that reached a node before its validity window closed
 *   (never sent, or every submission `unsent`: refused before anything was sent, also while the
 *   ledger stays down; decisions §11), or, once the window has closed, unknown to the receipt
 *   service and to the mirror node. `attempts` counts the submissions that may have reached a
 *   node: an `unsent` one is taken back.
 * - For a `record_message` row, every state change updates the record's `anchor_state` (and on
 *   consensus its `sequence_number` and `consensus_at`) in the same transaction. An abandoned
 *   `revocation_message` is queued again (new id, same bytes) in the same transaction, with
 *   `records.revocation_transaction_id` moved to it: an acknowledged revocation is never lost.
 *   An abandoned `topic_create` is queued again by provisioning, after a backoff.
 * - A record is `anchored` only after the mirror node shows its message on the organisation's
 *   topic, at the receipt's sequence number, paid by our operator, with the exact bytes.
 * - Topic provisioning: an organisation that holds the add-on and has no topic gets a
 *   `topic_create` row within one tick (≤ 1 s), whichever process flipped the flag.
 * - Every state change is one JSON log line (`msg: "anchor"`); keys never appear in a log line.
 *   Ledger errors are logged at most once a minute per kind, with a count of those skipped;
 *   the memory of kinds is bounded (`ErrorLogLimiter`).
 */
import { and, eq, inArray, sql } from "drizzle-orm";
import type { Clock } from "../lib/clock.ts";
import { DomainError } from "../lib/errors.ts";
import type { Logger } from "../lib/log.ts";
import type { Db } from "../storage/db.ts";
import { ledgerTransactions, organisations, records } from "../storage/schema.ts";
import type { ConfirmedMessage, Ledger, SubmitKeyPair } from "./ledger.ts";
import { loadOrCreateSubmitKey } from "./submit-key.ts";

export interface AnchorQueue {
  /** A fresh, unique transaction id for the operator account, valid starting now (clock), e.g. "0.0.2@1768469400.123456789"; validStartMs and validSeconds are what the row must store. Synchronous. Never returns the same id twice in this process (bump nanos). */
  newTransactionId(): { transactionId: string; validStartMs: number; validSeconds: number };
  /** Ask the loop to look at the queue now (after a caller inserted a pending row in its own transaction). */
  wake(): void;
}

export interface LedgerLinks {
  /** hashscanUrl of a transaction: local → the local ledger's own page; public networks → https://hashscan.io/<network>/transaction/<id>. */
  transactionUrl(transactionId: string): string;
  /** mirrorNodeUrl: `<mirror base>/api/v1/topics/<topicId>/messages/<sequenceNumber>`. */
  topicMessageUrl(topicId: string, sequenceNumber: number): string;
}

export type LedgerTransactionRow = typeof ledgerTransactions.$inferSelect;
type Kind = LedgerTransactionRow["kind"];

/** Anything that can insert: the Db or a transaction handle inside `db.transaction(...)`. */
export type Writer = Pick<Db, "insert">;

/**
 * Writes a `pending` message row the way the loop expects it. Call it inside the same
 * transaction that writes the record (or the revocation), then `queue.wake()` after commit.
 */
export function insertPendingMessage(
  tx: Writer,
  input: {
    readonly kind: "record_message" | "revocation_message";
    readonly transactionId: string;
    readonly validStartMs: number;
    readonly validSeconds: number;
    readonly orgId: string;
    readonly recordId: string;
    readonly topicId: string;
    readonly message: Uint8Array;
    /** ms since the epoch (the caller's clock). */
    readonly now: number;
  },
): void {
  if (input.message.length === 0 || input.message.length > 1024) throw new TypeError("a ledger message must be 1 to 1024 bytes");
  tx.insert(ledgerTransactions)
    .values({
      transactionId: input.transactionId,
      kind: input.kind,
      orgId: input.orgId,
      recordId: input.recordId,
      topicId: input.topicId,
      message: Buffer.from(input.message),
      signedBytes: null,
      validStartMs: input.validStartMs,
      validSeconds: input.validSeconds,
      state: "pending",
      attempts: 0,
      nextAttemptAt: input.now,
      createdAt: input.now,
      updatedAt: input.now,
    })
    .run();
}

/** The loop's classes of ledger failure, as `ledgerError` reports them (docs/anchoring.md, "Failure classes"). */
export type LedgerErrorKind = "retryable" | "expired" | "permanent" | "unknown";

/**
 * What the loop reports for monitoring (the composition root turns it into /metrics). Owned
 * here so the loop never imports http/. Implementations MUST be cheap and synchronous; the loop
 * calls them after the state change is committed, and whatever they throw is ignored.
 */
export interface AnchorMetrics {
  /** A row reached `anchored`; `latencyMs` is from its `created_at` (queued) to that moment, on the loop's clock. */
  anchored(kind: Kind, latencyMs: number): void;
  /**
   * A ledger call failed, classified: a precheck refusal (`retryable`, `expired`, `permanent`),
   * a failure at consensus (`permanent`), or no usable answer from a node or the mirror (`unknown`).
   */
  ledgerError(kind: LedgerErrorKind): void;
}

const NO_METRICS: AnchorMetrics = { anchored() {}, ledgerError() {} };

export interface AnchoringOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly log: Logger;
  readonly ledger: Ledger;
  readonly links: LedgerLinks;
  /** The master key, to open (or create) the sealed ledger submit key; null when the key store is sealed. */
  readonly masterKey: Uint8Array | null;
  /** Validity window of every transaction, seconds (DOCVERIFY_ANCHOR_VALID_SECONDS, 15–180). */
  readonly validSeconds: number;
  /** Valid start is set this far before now, for clock skew with public nodes. Default 0. */
  readonly validStartBackdateMs?: number;
  /** Rows worked on at once. Default 64. */
  readonly concurrency?: number;
  /** Real-time interval of the loop when nothing wakes it. Default 1000. */
  readonly idlePollMs?: number;
  /** Receipt and mirror polling while awaiting consensus. Default 1000. */
  readonly receiptPollMs?: number;
  /** Retry backoff: first delay and cap. Default 500 ms and 60 s. */
  readonly backoffBaseMs?: number;
  readonly backoffMaxMs?: number;
  /** After the window closes, how long the mirror may lag before "not found" means "never". Default 20 s. */
  readonly settleGraceMs?: number;
  /** Unfinished rows past which record creation is refused with 503. Default 5000. */
  readonly backlogLimit?: number;
  /**
   * Age of the oldest transaction not yet accepted past which record creation is refused with
   * 503. Default 30 s: nothing waits unsubmitted long enough to risk its validity window
   * (decisions §5: 180 s by default), for instance while the ledger is unreachable.
   */
  readonly maxQueueAgeMs?: number;
  /**
   * Record creation is also refused while the unfinished rows outnumber what the loop anchored
   * in the last `backlogWindowMs` (at least `backlogFloor` rows are always allowed). This keeps
   * the backlog flat under sustained load: records are taken as fast as they are anchored, not
   * faster. A few rows stuck awaiting reconciliation never block creation. Defaults 10 s, 200.
   */
  readonly backlogWindowMs?: number;
  readonly backlogFloor?: number;
  /** How long a ledger health observation stays fresh for readiness. Default 10 s. */
  readonly healthTtlMs?: number;
  /** Topic memo. Default "docverify". */
  readonly topicMemo?: string;
  /** Monitoring sink. Default: reports nothing. */
  readonly metrics?: AnchorMetrics;
}

export interface Anchoring {
  readonly queue: AnchorQueue;
  readonly links: LedgerLinks;
  readonly ledger: Ledger;
  /** Starts the background loop. Idempotent. */
  start(): void;
  /** Stops the loop quietly, letting calls in flight finish and store their answers. Idempotent. */
  stop(): Promise<void>;
  /** One pass: provisioning and every due row, awaiting them. For tests that drive a manual clock. */
  runOnce(): Promise<number>;
  /** Readiness of the ledger: cached, never waits longer than ~1 s. */
  readiness(): Promise<true | string>;
  /** Unfinished rows as of the last pass. */
  backlog(): { readonly pending: number; readonly accepted: number };
  /** Throws 503 SERVICE_UNAVAILABLE with Retry-After when the backlog is past its bound. */
  assertCapacity(): void;
}

/** Margin the nodes require: a transaction with less than 10 s of its window left is refused. */
const SUBMIT_MARGIN_MS = 10_000;
const ERROR_LOG_EVERY_MS = 60_000;
/** Most error kinds the rate limit remembers at once (kinds carry transaction ids and error texts). */
const ERROR_LOG_MAX_KINDS = 256;

/**
 * The rate limit of the loop's error lines: one line per kind per `everyMs`, the next one saying
 * how many were skipped meanwhile. Kinds may carry ids (a transaction, an error's text), so the
 * memory of them is bounded: once a kind's period is over with nothing skipped, it is forgotten
 * (its next line would be logged anyway); and past `maxKinds` the oldest kinds are forgotten
 * first, skipped counts and all.
 */
export class ErrorLogLimiter {
  /** kind → when it was last logged and how many lines were skipped since; oldest first. */
  private readonly seen = new Map<string, { at: number; suppressed: number }>();
  private sweptAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly everyMs: number = ERROR_LOG_EVERY_MS,
    private readonly maxKinds: number = ERROR_LOG_MAX_KINDS,
  ) {
    if (!(everyMs > 0) || !Number.isInteger(maxKinds) || maxKinds < 1) throw new RangeError("ErrorLogLimiter: everyMs > 0 and maxKinds ≥ 1");
  }

  /** Kinds remembered now. */
  get size(): number {
    return this.seen.size;
  }

  /** Null: skip this line. Otherwise log it, with the count of lines of its kind skipped before it. */
  admit(kind: string, now: number): { suppressed: number } | null {
    this.sweep(now);
    const seen = this.seen.get(kind);
    if (seen !== undefined && now - seen.at < this.everyMs) {
      seen.suppressed++;
      return null;
    }
    // Re-inserted, so the map stays ordered by `at` and eviction takes the oldest.
    this.seen.delete(kind);
    while (this.seen.size >= this.maxKinds) this.seen.delete(this.seen.keys().next().value!);
    this.seen.set(kind, { at: now, suppressed: 0 });
    return { suppressed: seen?.suppressed ?? 0 };
  }

  /** At most once a period: forgets the kinds whose period is over with nothing skipped. */
  private sweep(now: number): void {
    if (now - this.sweptAt < this.everyMs) return;
    this.sweptAt = now;
    for (const [kind, e] of this.seen) if (e.suppressed === 0 && now - e.at >= this.everyMs) this.seen.delete(kind);
  }
}

/** The transactions with the newest valid start: through ledger_transactions_valid_start, never a scan (a test checks the plan). */
export const LAST_VALID_START_SQL = "SELECT transaction_id AS id FROM ledger_transactions WHERE valid_start_ms = (SELECT max(valid_start_ms) FROM ledger_transactions)";

export function createAnchoring(options: AnchoringOptions): Anchoring {
  const { db, clock, log, ledger, links } = options;
  const validSeconds = options.validSeconds;
  if (!Number.isInteger(validSeconds) || validSeconds < 15 || validSeconds > 180) throw new TypeError(`validSeconds must be 15 to 180, got ${validSeconds}`);
  const backdateMs = options.validStartBackdateMs ?? 0;
  const concurrency = options.concurrency ?? 64;
  const idlePollMs = options.idlePollMs ?? 1000;
  const receiptPollMs = options.receiptPollMs ?? 1000;
  const backoffBaseMs = options.backoffBaseMs ?? 500;
  const backoffMaxMs = options.backoffMaxMs ?? 60_000;
  const settleGraceMs = options.settleGraceMs ?? 20_000;
  const backlogLimit = options.backlogLimit ?? 5000;
  const maxQueueAgeMs = options.maxQueueAgeMs ?? 30_000;
  const backlogWindowMs = options.backlogWindowMs ?? 10_000;
  const backlogFloor = options.backlogFloor ?? 200;
  /** When recent messages reached consensus, oldest first; entries before `anchoredHead` are spent. */
  const anchoredAt: number[] = [];
  let anchoredHead = 0;
  const noteAnchored = (): void => {
    anchoredAt.push(now());
  };
  const anchoredRecently = (): number => {
    const since = now() - backlogWindowMs;
    while (anchoredHead < anchoredAt.length && anchoredAt[anchoredHead]! < since) anchoredHead++;
    if (anchoredHead > 4096 && anchoredHead * 2 > anchoredAt.length) {
      anchoredAt.splice(0, anchoredHead);
      anchoredHead = 0;
    }
    return anchoredAt.length - anchoredHead;
  };
  const healthTtlMs = options.healthTtlMs ?? 10_000;
  const topicMemo = options.topicMemo ?? "docverify";
  const operator = ledger.operatorAccountId;
  const sink = options.metrics ?? NO_METRICS;
  // Monitoring must never disturb the loop: a sink that throws is ignored.
  const metrics: AnchorMetrics = {
    anchored(kind, latencyMs) {
      try {
        sink.anchored(kind, latencyMs);
      } catch {
        /* ignored */
      }
    },
    ledgerError(kind) {
      try {
        sink.ledgerError(kind);
      } catch {
        /* ignored */
      }
    },
  };

  // ---- transaction ids ---------------------------------------------------------------
  // The last valid start handed out, in ns. Seeded from the journal so a restart (or a clock
  // that went back) never reissues an id that is already a primary key.
  let lastNs = (() => {
    const rows = db.$client
      .query(LAST_VALID_START_SQL)
      .all() as { id: string }[];
    let max = 0n;
    for (const { id } of rows) {
      const m = /@(\d+)\.(\d+)$/.exec(id);
      if (m !== null) {
        const ns = BigInt(m[1]!) * 1_000_000_000n + BigInt(m[2]!);
        if (ns > max) max = ns;
      }
    }
    return max;
  })();

  const newTransactionId = () => {
    // One millisecond back, so the nanosecond bumps that keep ids unique within a millisecond
    // never put a valid start in the ledger's future (INVALID_TRANSACTION_START).
    const nowNs = BigInt(clock.now() - backdateMs - 1) * 1_000_000n;
    lastNs = nowNs > lastNs ? nowNs : lastNs + 1n;
    const seconds = lastNs / 1_000_000_000n;
    const nanos = lastNs % 1_000_000_000n;
    return {
      transactionId: `${operator}@${seconds}.${nanos.toString().padStart(9, "0")}`,
      validStartMs: Number(lastNs / 1_000_000n),
      validSeconds,
    };
  };

  // ---- logging -----------------------------------------------------------------------
  const errorLines = new ErrorLogLimiter();
  let stopping = false;
  const logError = (kind: string, msg: string, fields: Record<string, unknown>) => {
    if (stopping) return;
    const admitted = errorLines.admit(kind, Date.now());
    if (admitted === null) return;
    log.warn(msg, { ...fields, ...(admitted.suppressed > 0 ? { suppressed: admitted.suppressed } : {}) });
  };
  const event = (name: string, row: Pick<LedgerTransactionRow, "transactionId" | "kind" | "orgId" | "recordId">, extra: Record<string, unknown> = {}) => {
    log.info("anchor", { event: name, kind: row.kind, transactionId: row.transactionId, orgId: row.orgId, ...(row.recordId ? { recordId: row.recordId } : {}), ...extra });
  };

  // ---- ledger health -----------------------------------------------------------------
  let health: { value: true | string; at: number } | null = null;
  let failureStreak = 0;
  /** The ledger answered again after failures: the next pass makes every row waiting on a backoff due at once. */
  let recovered = false;
  const ledgerOk = () => {
    if (failureStreak > 0) {
      recovered = true;
      schedule(0);
    }
    failureStreak = 0;
    health = { value: true, at: Date.now() };
  };
  const ledgerDown = (error: string) => {
    failureStreak++;
    health = { value: `ledger unreachable: ${error}`, at: Date.now() };
    logError("ledger-unreachable", "ledger unreachable; anchoring waits and retries", { error, failures: failureStreak });
  };
  const backoff = (n: number) => {
    const base = Math.min(backoffMaxMs, backoffBaseMs * 2 ** Math.max(0, Math.min(30, n - 1)));
    return Math.round(base / 2 + (Math.random() * base) / 2);
  };

  // ---- submit key --------------------------------------------------------------------
  let submitKey: SubmitKeyPair | null | undefined;
  const getSubmitKey = (): SubmitKeyPair | null => {
    if (submitKey === undefined) submitKey = loadOrCreateSubmitKey(db, options.masterKey, () => ledger.generateSubmitKey());
    return submitKey;
  };

  // ---- state changes (each one synchronous transaction) -----------------------------
  const now = () => clock.now();
  /** Inside an IMMEDIATE transaction: is the row still in one of `states`? Makes every change idempotent. */
  const inState = (tx: Pick<Db, "select">, id: string, states: readonly string[]): boolean => {
    const cur = tx.select({ state: ledgerTransactions.state }).from(ledgerTransactions).where(eq(ledgerTransactions.transactionId, id)).get();
    return cur !== undefined && states.includes(cur.state);
  };
  const immediate = { behavior: "immediate" } as const;
  /**
   * The record a `record_message` row anchors: by its primary key, and still carrying this
   * transaction. `records.transaction_id` has no index, and a scan of the records table (each
   * row holds ML-DSA signatures, kilobytes) on every state change made anchoring slow down as
   * the table grew, until it fell behind record creation for good.
   */
  const recordOf = (row: Pick<LedgerTransactionRow, "recordId" | "transactionId">) =>
    row.recordId !== null ? and(eq(records.id, row.recordId), eq(records.transactionId, row.transactionId)) : eq(records.transactionId, row.transactionId);

  const reschedule = (row: LedgerTransactionRow, delayMs: number, lastError: string | null) => {
    const t = now();
    deferred.push({ id: row.transactionId, state: row.state, at: t + Math.max(0, delayMs), t, lastError });
  };
  /**
   * Reschedules (a receipt not there yet, a backoff) are hints, not journal entries: losing one
   * in a crash only makes the row due at once after the restart. Written one by one they were
   * a synchronous, fsynced commit per receipt poll, several per message, on the thread that
   * serves the API. They are collected and written in one transaction before the loop next
   * reads the queue (`pass`, `nextDelay`), so no row is ever picked up on a stale due time.
   * Guarded by state like every change: a row that moved on in between is left alone.
   */
  let deferred: { id: string; state: string; at: number; t: number; lastError: string | null }[] = [];
  const rescheduleStatement = db.$client.prepare(
    "UPDATE ledger_transactions SET next_attempt_at = ?, updated_at = ?, last_error = coalesce(?, last_error) WHERE transaction_id = ? AND state = ?",
  );
  const flushReschedules = () => {
    if (deferred.length === 0) return;
    const batch = deferred;
    db.$client.transaction(() => {
      for (const d of batch) rescheduleStatement.run(d.at, d.t, d.lastError, d.id, d.state);
    })();
    deferred = [];
  };

  const takeBackStatement = db.$client.prepare("UPDATE ledger_transactions SET attempts = attempts - 1, updated_at = ? WHERE transaction_id = ? AND state = 'pending' AND attempts = ?");
  /**
   * Uncounts an attempt that provably sent nothing (`unsent`), so that `attempts` counts only
   * submissions that may have reached a node: at 0, with bytes stored, every submission was
   * refused before anything left. Lost in a crash, the row counts one submission too many: the
   * safe side (it then waits for the receipt or the mirror node instead of being abandoned).
   */
  const takeBack = (row: LedgerTransactionRow, attempts: number): number => {
    const changed = takeBackStatement.run(now(), row.transactionId, attempts).changes;
    return changed === 1 ? attempts - 1 : attempts;
  };

  /** Journals an attempt before the bytes leave: stores them (first time) and counts it. Null if the row moved on. */
  const beginAttempt = (row: LedgerTransactionRow, bytes: Uint8Array): number | null => {
    return db.transaction((tx) => {
      const cur = tx.select().from(ledgerTransactions).where(eq(ledgerTransactions.transactionId, row.transactionId)).get();
      if (cur === undefined || cur.state !== "pending") return null;
      if (cur.signedBytes !== null && !Buffer.from(cur.signedBytes).equals(Buffer.from(bytes))) return null;
      const attempts = cur.attempts + 1;
      tx.update(ledgerTransactions)
        .set({ signedBytes: Buffer.from(bytes), attempts, updatedAt: now() })
        .where(eq(ledgerTransactions.transactionId, row.transactionId))
        .run();
      return attempts;
    }, immediate);
  };

  const toAccepted = (row: LedgerTransactionRow, duplicate: boolean) => {
    const t = now();
    const changed = db.transaction((tx) => {
      if (!inState(tx, row.transactionId, ["pending"])) return false;
      tx.update(ledgerTransactions)
        .set({ state: "accepted", nextAttemptAt: t + receiptPollMs, lastError: null, updatedAt: t })
        .where(eq(ledgerTransactions.transactionId, row.transactionId))
        .run();
      if (row.kind === "record_message") {
        tx.update(records)
          .set({ anchorState: "accepted" })
          .where(and(recordOf(row), eq(records.anchorState, "pending")))
          .run();
      }
      return true;
    }, immediate);
    if (changed) event("accepted", row, duplicate ? { duplicate: true } : {});
  };

  const toAnchoredMessage = (row: LedgerTransactionRow, confirmed: ConfirmedMessage) => {
    const t = now();
    const changed = db.transaction((tx) => {
      if (!inState(tx, row.transactionId, ["pending", "accepted"])) return false;
      tx.update(ledgerTransactions)
        .set({
          state: "anchored",
          sequenceNumber: confirmed.sequenceNumber,
          consensusAt: confirmed.consensusAt,
          runningHash: Buffer.from(confirmed.runningHash),
          lastError: null,
          updatedAt: t,
        })
        .where(eq(ledgerTransactions.transactionId, row.transactionId))
        .run();
      if (row.kind === "record_message") {
        tx.update(records)
          .set({ anchorState: "anchored", sequenceNumber: confirmed.sequenceNumber, consensusAt: confirmed.consensusAt })
          .where(recordOf(row))
          .run();
      }
      return true;
    }, immediate);
    if (changed) {
      noteAnchored();
      event("anchored", row, { topicId: row.topicId, sequenceNumber: confirmed.sequenceNumber, consensusAt: confirmed.consensusAt });
      metrics.anchored(row.kind, t - row.createdAt);
    }
  };

  const toAnchoredTopic = (row: LedgerTransactionRow, topicId: string, consensusAt: string | null) => {
    const t = now();
    const changed = db.transaction((tx) => {
      if (!inState(tx, row.transactionId, ["pending", "accepted"])) return false;
      tx.update(ledgerTransactions)
        .set({ state: "anchored", topicId, consensusAt, lastError: null, updatedAt: t })
        .where(eq(ledgerTransactions.transactionId, row.transactionId))
        .run();
      tx.update(organisations)
        .set({ topicId })
        .where(and(eq(organisations.id, row.orgId), sql`${organisations.topicId} IS NULL`))
        .run();
      return true;
    }, immediate);
    if (changed) {
      event("anchored", row, { topicId });
      metrics.anchored(row.kind, t - row.createdAt);
    }
  };

  const abandon = (row: LedgerTransactionRow, reason: string) => {
    const t = now();
    let requeued: string | null = null;
    const changed = db.transaction((tx) => {
      if (!inState(tx, row.transactionId, ["pending", "accepted"])) return false;
      tx.update(ledgerTransactions)
        .set({ state: "abandoned", lastError: reason, updatedAt: t })
        .where(eq(ledgerTransactions.transactionId, row.transactionId))
        .run();
      if (row.kind === "record_message") {
        tx.update(records).set({ anchorState: "abandoned" }).where(recordOf(row)).run();
      } else if (row.kind === "revocation_message" && row.recordId !== null && row.message !== null && row.topicId !== null) {
        // The revocation was acknowledged: it must reach the ledger. Same bytes, new transaction.
        // Abandoned rows that never reached a node (every submission `unsent`: the ledger was
        // down) do not count: the next goes at once, so the revocation follows the ledger's return.
        const earlier = tx
          .select({ n: sql<number>`count(*)` })
          .from(ledgerTransactions)
          .where(
            and(
              eq(ledgerTransactions.recordId, row.recordId),
              eq(ledgerTransactions.kind, "revocation_message"),
              eq(ledgerTransactions.state, "abandoned"),
              sql`NOT (${ledgerTransactions.attempts} = 0 AND ${ledgerTransactions.signedBytes} IS NOT NULL)`,
            ),
          )
          .get()!.n;
        const next = newTransactionId();
        // The first retry goes at once (the usual cause is an outage that has ended); repeated
        // failures back off, so a permanent refusal does not spin.
        const delay = earlier <= 1 ? 0 : Math.min(3_600_000, 30_000 * 2 ** Math.min(20, earlier - 2));
        tx.insert(ledgerTransactions)
          .values({
            transactionId: next.transactionId,
            kind: "revocation_message",
            orgId: row.orgId,
            recordId: row.recordId,
            topicId: row.topicId,
            message: row.message,
            signedBytes: null,
            validStartMs: next.validStartMs,
            validSeconds: next.validSeconds,
            state: "pending",
            attempts: 0,
            nextAttemptAt: t + delay,
            createdAt: t,
            updatedAt: t,
          })
          .run();
        tx.update(records)
          .set({ revocationTransactionId: next.transactionId })
          .where(and(eq(records.id, row.recordId), eq(records.revocationTransactionId, row.transactionId)))
          .run();
        requeued = next.transactionId;
      }
      return true;
    }, immediate);
    if (changed) {
      event("abandoned", row, { reason });
      if (requeued !== null) event("requeued", { ...row, transactionId: requeued }, { replaces: row.transactionId });
    }
  };

  // ---- the state machine ---------------------------------------------------------------
  const windowEnd = (row: LedgerTransactionRow) => row.validStartMs + row.validSeconds * 1000 + 1;

  const prepare = async (row: LedgerTransactionRow): Promise<Uint8Array | null> => {
    if (row.kind === "topic_create") {
      const key = getSubmitKey();
      if (key === null) {
        reschedule(row, backoffMaxMs, "key store sealed: no master key to open the ledger submit key");
        return null;
      }
      return await ledger.prepareTopicCreate({ transactionId: row.transactionId, validSeconds: row.validSeconds, submitPublicKey: key.publicKey, memo: topicMemo });
    }
    if (row.topicId === null || row.message === null) {
      abandon(row, "malformed row: a message needs a topic id and message bytes");
      return null;
    }
    const key = getSubmitKey();
    if (key === null) {
      reschedule(row, backoffMaxMs, "key store sealed: no master key to open the ledger submit key");
      return null;
    }
    return await ledger.prepareMessage({
      transactionId: row.transactionId,
      validSeconds: row.validSeconds,
      topicId: row.topicId,
      message: new Uint8Array(row.message),
      submitPrivateKey: key.privateKey,
    });
  };

  /** Receipt SUCCESS for a message: confirm it on the mirror before calling it anchored. */
  const confirm = async (row: LedgerTransactionRow, by: { sequenceNumber: number } | { consensusAt: string }) => {
    if (row.state === "pending") toAccepted(row, false);
    const current = { ...row, state: "accepted" as const };
    const c = await ledger.confirmMessage({ topicId: row.topicId!, transactionId: row.transactionId, message: new Uint8Array(row.message!), ...by });
    switch (c.kind) {
      case "confirmed":
        return toAnchoredMessage(current, c.value);
      case "not_found":
        // Mirror nodes trail consensus by a few seconds.
        return reschedule(current, receiptPollMs, "reached consensus; waiting for the mirror node");
      case "mismatch":
        logError(`mismatch:${row.transactionId}`, "mirror node does not confirm an anchored message; the record stays accepted", {
          transactionId: row.transactionId,
          reason: c.reason,
        });
        return reschedule(current, backoffMaxMs, `mirror mismatch: ${c.reason}`);
      case "unreachable":
        metrics.ledgerError("unknown");
        logError("mirror-unreachable", "mirror node unreachable; confirmation waits", { error: c.error });
        return reschedule(current, backoff(failureStreak + 1), c.error);
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
    if (m.kind === "unreachable") {
      metrics.ledgerError("unknown");
      logError("mirror-unreachable", "mirror node unreachable; confirmation waits", { error: m.error });
      return reschedule(row, backoff(failureStreak + 1), m.error);
    }
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
    switch (r.kind) {
      case "success":
        ledgerOk();
        if (row.kind === "topic_create") {
          if (r.topicId === null) return abandon(row, "receipt of a topic creation names no topic");
          if (row.state === "pending") toAccepted(row, false);
          return toAnchoredTopic({ ...row, state: "accepted" }, r.topicId, null);
        }
        if (r.sequenceNumber === null) return reschedule(row, backoffMaxMs, "receipt names no sequence number");
        return confirm(row, { sequenceNumber: r.sequenceNumber });
      case "failed":
        ledgerOk();
        metrics.ledgerError("permanent");
        return abandon(row, `failed at consensus: ${r.status}`);
      case "pending":
        ledgerOk();
        if (row.state === "pending") toAccepted(row, false);
        return reschedule({ ...row, state: "accepted" }, receiptPollMs, null);
      case "not_found":
        ledgerOk();
        if (now() >= windowEnd(row)) return settle(row);
        // Accepted but unknown to the receipt service: dropped, or not there yet. Only the end
        // of the window can settle it.
        return reschedule(row, Math.min(receiptPollMs * 2, windowEnd(row) - now()), null);
      case "unreachable":
        metrics.ledgerError("unknown");
        ledgerDown(r.error);
        return reschedule(row, backoff(failureStreak), r.error);
    }
  };

  const step = async (row: LedgerTransactionRow): Promise<void> => {
    if (row.state === "accepted") return onReceipt(row, await ledger.receipt(row.transactionId));
    // pending
    const t = now();
    if (row.attempts === 0) {
      // No submission can have reached a node: never sent, or every one refused before anything
      // was sent (`unsent`, also while the ledger stays down). It can never reach consensus.
      if (t > windowEnd(row) - SUBMIT_MARGIN_MS) {
        return abandon(
          row,
          row.signedBytes === null
            ? "the validity window closed before the transaction could be submitted"
            : "the validity window closed before the transaction could reach a node: every submission was refused before anything was sent",
        );
      }
    } else if (t >= windowEnd(row)) {
      return settle(row);
    }
    const bytes = row.signedBytes !== null ? new Uint8Array(row.signedBytes) : await prepare(row);
    if (bytes === null) return;
    const attempts = beginAttempt(row, bytes);
    if (attempts === null) return;
    const current = { ...row, attempts, signedBytes: Buffer.from(bytes) };
    const outcome = await ledger.submit(bytes);
    switch (outcome.kind) {
      case "accepted":
        ledgerOk();
        return toAccepted(current, outcome.duplicate);
      case "retryable":
        ledgerOk();
        metrics.ledgerError("retryable");
        event("retry", current, { status: outcome.status, attempts });
        return reschedule(current, backoff(attempts), `precheck ${outcome.status}`);
      case "expired":
        ledgerOk();
        metrics.ledgerError("expired");
        return reschedule(current, Math.max(0, windowEnd(current) - now()), `precheck ${outcome.status}`);
      case "permanent":
        ledgerOk();
        metrics.ledgerError("permanent");
        // Refused on the first submission that reached a node (any before it were `unsent`): it
        // was never accepted, and these bytes never will be.
        if (attempts === 1) return abandon(current, `refused at precheck: ${outcome.status}`);
        // An earlier submission went unanswered and might have been accepted: let the window decide.
        return reschedule(current, Math.max(0, windowEnd(current) - now()), `precheck ${outcome.status}`);
      case "unknown":
        metrics.ledgerError("unknown");
        ledgerDown(outcome.error);
        return reschedule(current, backoff(failureStreak), `no answer: ${outcome.error}`);
      case "unsent": {
        metrics.ledgerError("unknown");
        ledgerDown(outcome.error);
        const left = takeBack(current, attempts);
        // Back at 0: the next try comes no later than the moment the check above abandons it.
        const delay = left === 0 ? Math.min(backoff(failureStreak), Math.max(0, windowEnd(current) - SUBMIT_MARGIN_MS - now() + 1)) : backoff(failureStreak);
        return reschedule({ ...current, attempts: left }, delay, `not sent: ${outcome.error}`);
      }
    }
  };

  // ---- topic provisioning ------------------------------------------------------------
  const provision = () => {
    const wanting = db.$client
      .query(
        `SELECT o.id AS id FROM organisations o
         WHERE o.addon = 1 AND o.topic_id IS NULL
           AND NOT EXISTS (SELECT 1 FROM ledger_transactions t WHERE t.org_id = o.id AND t.kind = 'topic_create' AND t.state <> 'abandoned')`,
      )
      .all() as { id: string }[];
    if (wanting.length === 0) return;
    if (getSubmitKey() === null) {
      logError("sealed", "key store sealed: organisation topics cannot be created until the master key is available", { organisations: wanting.length });
      return;
    }
    for (const { id } of wanting) {
      const t = now();
      // As for revocations, creations that never reached a node (the ledger was down) do not
      // count towards the backoff.
      const prior = db.$client
        .query(
          `SELECT count(*) AS n, max(updated_at) AS last FROM ledger_transactions
           WHERE org_id = ? AND kind = 'topic_create' AND state = 'abandoned' AND NOT (attempts = 0 AND signed_bytes IS NOT NULL)`,
        )
        .get(id) as { n: number; last: number | null };
      if (prior.n > 0 && prior.last !== null && t < prior.last + Math.min(3_600_000, 10_000 * 2 ** Math.min(20, prior.n - 1))) continue;
      const next = newTransactionId();
      const row = {
        transactionId: next.transactionId,
        kind: "topic_create" as Kind,
        orgId: id,
        recordId: null,
        topicId: null,
        message: null,
        signedBytes: null,
        validStartMs: next.validStartMs,
        validSeconds: next.validSeconds,
        state: "pending" as const,
        attempts: 0,
        nextAttemptAt: t,
        createdAt: t,
        updatedAt: t,
      };
      try {
        db.insert(ledgerTransactions).values(row).run();
      } catch (e) {
        // ledger_transactions_one_topic: another pass (or process) queued it first.
        if (/UNIQUE/i.test((e as Error).message)) continue;
        throw e;
      }
      event("queued", row);
    }
  };

  // ---- the loop --------------------------------------------------------------------------
  const inFlight = new Map<string, Promise<void>>();
  let started = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let timerAt = Number.POSITIVE_INFINITY;
  let counts = { pending: 0, accepted: 0 };
  /** created_at of the oldest `pending` row, as of the last pass (null: none). */
  let oldestPendingAt: number | null = null;

  const startRow = (row: LedgerTransactionRow): Promise<void> => {
    const p = step(row)
      .catch((e: unknown) => {
        logError(`step:${(e as Error)?.message ?? e}`, "anchor step failed; it will be retried", { transactionId: row.transactionId, error: e });
        try {
          reschedule(row, backoff(row.attempts + 1), `internal error: ${(e as Error)?.message ?? String(e)}`);
        } catch {
          /* storage busy or closed: the row is still due and is picked up again */
        }
      })
      .finally(() => {
        inFlight.delete(row.transactionId);
        if (started && !stopping) schedule(0);
      });
    inFlight.set(row.transactionId, p);
    return p;
  };

  /** One pass. Returns the steps it started. */
  const retryNowStatement = db.$client.prepare("UPDATE ledger_transactions SET next_attempt_at = ? WHERE state IN ('pending','accepted') AND next_attempt_at > ?");
  const pass = (): Promise<void>[] => {
    flushReschedules();
    if (recovered) {
      // Rows backed off during an outage (up to a minute apart) would otherwise wait out their
      // backoff, and a record created during it could see its window close meanwhile.
      recovered = false;
      const t = now();
      retryNowStatement.run(t, t);
    }
    provision();
    const c = db.$client.query("SELECT state, count(*) AS n FROM ledger_transactions WHERE state IN ('pending','accepted') GROUP BY state").all() as { state: string; n: number }[];
    counts = { pending: c.find((r) => r.state === "pending")?.n ?? 0, accepted: c.find((r) => r.state === "accepted")?.n ?? 0 };
    oldestPendingAt = (db.$client.query("SELECT min(created_at) AS at FROM ledger_transactions WHERE state = 'pending'").get() as { at: number | null }).at;
    const room = concurrency - inFlight.size;
    if (room <= 0) return [];
    const due = db
      .select()
      .from(ledgerTransactions)
      .where(and(inArray(ledgerTransactions.state, ["pending", "accepted"]), sql`${ledgerTransactions.nextAttemptAt} <= ${now()}`))
      .orderBy(ledgerTransactions.nextAttemptAt)
      .limit(room + inFlight.size)
      .all()
      .filter((r) => !inFlight.has(r.transactionId))
      .slice(0, room);
    return due.map(startRow);
  };

  const nextDelay = (): number => {
    flushReschedules();
    if (inFlight.size >= concurrency) return idlePollMs;
    const row = db.$client.query("SELECT min(next_attempt_at) AS at FROM ledger_transactions WHERE state IN ('pending','accepted')").get() as { at: number | null };
    if (row.at === null) return idlePollMs;
    return Math.max(10, Math.min(idlePollMs, row.at - now()));
  };

  const schedule = (delayMs: number) => {
    if (!started || stopping) return;
    const at = Date.now() + delayMs;
    if (timer !== null && timerAt <= at) return;
    if (timer !== null) clearTimeout(timer);
    timerAt = at;
    timer = setTimeout(tick, delayMs);
  };

  const tick = () => {
    timer = null;
    timerAt = Number.POSITIVE_INFINITY;
    if (stopping) return;
    let delay = idlePollMs;
    try {
      pass();
      delay = nextDelay();
    } catch (e) {
      logError("pass", "anchor loop pass failed; retrying", { error: e });
    }
    schedule(delay);
  };

  let probing: Promise<void> | null = null;
  const probe = () => {
    probing ??= ledger
      .ping()
      .then((r) => (r === true ? ledgerOk() : ledgerDown(r)))
      .catch((e: unknown) => ledgerDown(String(e)))
      .finally(() => (probing = null));
    return probing;
  };

  return {
    queue: {
      newTransactionId,
      wake() {
        schedule(0);
      },
    },
    links,
    ledger,
    start() {
      if (started || stopping) return;
      started = true;
      void probe();
      schedule(0);
    },
    async stop() {
      stopping = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
      await Promise.allSettled([...inFlight.values()]);
      await probing?.catch(() => undefined);
      try {
        flushReschedules();
      } catch {
        /* storage closed or busy: the rows are simply due at once on the next start */
      }
    },
    async runOnce() {
      const steps = pass();
      await Promise.allSettled(steps);
      flushReschedules();
      return steps.length;
    },
    async readiness() {
      const h = health;
      if (h !== null && Date.now() - h.at < healthTtlMs) return h.value;
      const p = probe();
      await Promise.race([p, Bun.sleep(1000)]);
      return health?.value ?? "ledger not answering yet";
    },
    backlog() {
      return counts;
    },
    assertCapacity() {
      if (counts.pending + counts.accepted >= backlogLimit) {
        throw new DomainError("SERVICE_UNAVAILABLE", "The ledger queue is full; retry shortly.", undefined, 5);
      }
      if (counts.pending + counts.accepted >= Math.max(backlogFloor, anchoredRecently())) {
        throw new DomainError("SERVICE_UNAVAILABLE", "The ledger is behind: records are accepted again as it catches up; retry shortly.", undefined, 5);
      }
      if (oldestPendingAt !== null && now() - oldestPendingAt > maxQueueAgeMs) {
        throw new DomainError("SERVICE_UNAVAILABLE", "The ledger is behind: records are accepted again once it catches up; retry shortly.", undefined, 5);
      }
    },
  };
}

/** What `docverify status` reports about the queue. Works on any process's view of the database. */
export function queueSummary(db: Db, nowMs: number) {
  const byState = db.$client.query("SELECT state, count(*) AS n FROM ledger_transactions GROUP BY state").all() as { state: string; n: number }[];
  const oldest = db.$client
    .query("SELECT transaction_id AS id, kind, state, created_at AS createdAt FROM ledger_transactions WHERE state IN ('pending','accepted') ORDER BY created_at LIMIT 1")
    .get() as { id: string; kind: string; state: string; createdAt: number } | null;
  const lastError = db.$client
    .query("SELECT transaction_id AS id, state, last_error AS error, updated_at AS at FROM ledger_transactions WHERE last_error IS NOT NULL ORDER BY updated_at DESC LIMIT 1")
    .get() as { id: string; state: string; error: string; at: number } | null;
  const count = (s: string) => byState.find((r) => r.state === s)?.n ?? 0;
  return {
    pending: count("pending"),
    accepted: count("accepted"),
    anchored: count("anchored"),
    abandoned: count("abandoned"),
    oldestUnfinished: oldest === null ? null : { transactionId: oldest.id, kind: oldest.kind, state: oldest.state, ageSeconds: Math.max(0, Math.round((nowMs - oldest.createdAt) / 1000)) },
    lastError: lastError === null ? null : { transactionId: lastError.id, state: lastError.state, error: lastError.error, at: new Date(lastError.at).toISOString() },
  };
}
