/**
 * The anchor queue: `ledger_transactions` as queue and crash journal, and every change to it.
 * Synchronous and ledger-free: the loop (anchorer.ts) decides, this module writes. Records and
 * `docverify status` use it without loading the loop or the ledger SDK.
 *
 * States (docs/anchoring.md, "States"):
 *
 *     pending ──▶ accepted ──▶ anchored
 *        │           │
 *        └───────────┴──▶ abandoned
 *
 * What an implementation MUST guarantee:
 * - Every state change is atomic and guarded by the row's current state: a change to a row that
 *   moved on (another worker, a replay after a crash) changes nothing and reports `false` (null).
 *   Rows only move forward; `anchored` and `abandoned` are final. A change is either its own
 *   synchronous IMMEDIATE transaction (the methods of `AnchorJournal`) or, through `grouped`,
 *   its own savepoint in one IMMEDIATE transaction with the other changes due within
 *   GROUP_WINDOW_MS (group commit: one fsync for all), whose promise resolves only once that
 *   transaction has committed: a caller acts on a change (sends the bytes, logs it) only then.
 * - A `record_message` row's record follows it in the same transaction: `anchor_state`, and on
 *   consensus `sequence_number` and `consensus_at`. The record is found by its primary key
 *   (`recordOf`): never a scan of the records table.
 * - An abandoned `revocation_message` (an acknowledged revocation) is queued again, same bytes
 *   under a new transaction id, with `records.revocation_transaction_id` moved to it, in the
 *   transaction that abandons it: a revocation is never lost. An abandoned `key_announcement`
 *   likewise (same bytes, same key fingerprint, new id).
 * - Key announcements (docs/anchoring.md "Key announcements", docs/receipts.md §1): at most one
 *   live (not abandoned) per organisation, key and announcement generation, by the unique index
 *   `ledger_transactions_one_announcement`, whichever process or pass queues it; one is queued in
 *   the transaction that gives an organisation its topic, and provisioning queues one for the
 *   organisation's current key and generation when none is live (a change of domain or name raises
 *   the generation in the transaction that makes it: the key is announced again, exactly once, also
 *   after a crash between the change and the queueing). An announcement built at another generation
 *   than the organisation's is never queued. A `record_message` row is never returned by `due`
 *   until an `anchored` announcement of its organisation's current system key exists, of any
 *   generation (a key announced once is never waited for again): on a new topic the announcement
 *   always has the lower sequence number. One found waiting is set aside (WAITING_RECHECK_MS), and
 *   made due again when an announcement of its organisation is anchored.
 * - `beginAttempt` commits the signed bytes and the attempt before the caller sends them;
 *   `takeBack` uncounts only an attempt the caller knows sent nothing (`unsent`), so `attempts`
 *   counts the submissions that may have reached a node.
 * - Reschedules are hints, not journal entries: collected and written in one transaction by
 *   `flush`, which runs before the queue is read again (`unfinished`, `due`, `nextDueAt`), so no
 *   row is picked up on a stale due time.
 * - Nothing here awaits: no transaction can commit half-way (an async bun:sqlite transaction
 *   commits at its first `await`).
 *
 * What a caller may assume after a crash:
 * - Every committed state change holds, with its record's; an uncommitted one never happened.
 * - A `pending` row with signed bytes and `attempts ≥ 1` may have reached a node: send the same
 *   bytes again, or settle it once its window has closed. With `attempts = 0` and bytes, every
 *   submission was refused before anything was sent (or the crash came between journaling and
 *   sending: nothing was sent either). A lost take-back leaves one attempt too many: the safe
 *   side (the row waits for the receipt or the mirror node instead of being abandoned).
 * - A lost reschedule leaves the row due at once: it is looked at again sooner, never later.
 * - `accepted` means the ledger took the bytes: only the receipt or the mirror node decides.
 */
import { and, asc, count, desc, eq, inArray, isNotNull, sql } from "drizzle-orm";
import type { Clock } from "../lib/clock.ts";
import type { Db } from "../storage/db.ts";
import { createGroupCommit, GROUP_WINDOW_MS, groupCommitOf, type GroupCommit } from "../storage/group-commit.ts";
import { ledgerTransactions, organisations, records } from "../storage/schema.ts";
import { INSERT_PENDING_MESSAGE } from "../storage/statements.ts";
import { changes, q, type Body, type Op, type StoreDb, type Tables } from "../storage/store.ts";
import type { QueueCounts } from "./back-pressure.ts";
import { backoffDelay } from "./retry.ts";
import type { NewTransaction } from "./transaction-ids.ts";
import type { KeyAnnouncement } from "./types.ts";

export type LedgerTransactionRow = typeof ledgerTransactions.$inferSelect;
export type TransactionKind = LedgerTransactionRow["kind"];
export type TransactionState = LedgerTransactionRow["state"];

/** Anything that can insert: the Db or a transaction handle inside `db.transaction(...)`. */
export type Writer = Pick<Db, "insert">;

/** What a ledger message row carries besides its id. */
interface MessageFields {
  readonly orgId: string;
  readonly recordId: string;
  readonly topicId: string;
  readonly message: Uint8Array;
}

/**
 * The one insert of a `pending` row: a message (record, revocation or key announcement) or a
 * topic creation. Due at `nextAttemptAt` (default `now`).
 */
/** The `pending` row of a new transaction, as the loop expects it. */
export function pendingValues(
  id: NewTransaction,
  row: {
    readonly kind: TransactionKind;
    readonly orgId: string;
    readonly recordId: string | null;
    readonly topicId: string | null;
    readonly message: Uint8Array | null;
    readonly keyFingerprint?: Uint8Array | null;
    /** A key announcement's generation (`KeyAnnouncement.generation`); 0 otherwise. */
    readonly announcementGeneration?: number;
  },
  now: number,
  nextAttemptAt: number = now,
) {
  return {
    transactionId: id.transactionId,
    kind: row.kind,
    orgId: row.orgId,
    recordId: row.recordId,
    topicId: row.topicId,
    message: row.message === null ? null : Buffer.from(row.message),
    keyFingerprint: row.keyFingerprint == null ? null : Buffer.from(row.keyFingerprint),
    announcementGeneration: row.announcementGeneration ?? 0,
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

function insertPending(tx: Writer, id: NewTransaction, row: Parameters<typeof pendingValues>[1], now: number, nextAttemptAt: number = now): LedgerTransactionRow {
  const values = pendingValues(id, row, now, nextAttemptAt);
  tx.insert(ledgerTransactions).values(values).run();
  return { ...values, sequenceNumber: null, consensusAt: null, runningHash: null, lastError: null };
}

/** What `insertPendingMessage` refuses before anything is written. */
export function checkLength(message: Uint8Array): void {
  if (message.length === 0 || message.length > 1024) throw new TypeError("a ledger message must be 1 to 1024 bytes");
}

function checkMessage(input: { readonly kind: string; readonly message: Uint8Array; readonly keyFingerprint?: Uint8Array }): void {
  checkLength(input.message);
  if (input.keyFingerprint !== undefined && input.kind !== "record_message") throw new TypeError("only a record message waits for a person's key");
}

/** `insertPendingPersonKeyAnnouncement` as a step of a store operation, on either engine. */
export function* pendingPersonKeyAnnouncement(tx: StoreDb, t: Tables, input: PersonKeyAnnouncement): Op<void> {
  yield* q(tx.insert(t.ledgerTransactions).values(personKeyAnnouncementValues(input)));
}

/** `insertPendingMessage` as a step of a store operation, on either engine (storage/store.ts). */
export function* pendingMessage(_tx: StoreDb, _t: Tables, input: Parameters<typeof insertPendingMessage>[1]): Op<void> {
  checkMessage(input);
  const v = pendingValues(input, input, input.now);
  yield* q(
    changes(INSERT_PENDING_MESSAGE, v.transactionId, v.kind, v.orgId, v.recordId, v.topicId, v.message, v.keyFingerprint, v.signedBytes, v.validStartMs, v.validSeconds, v.state, v.attempts, v.nextAttemptAt, v.createdAt, v.updatedAt),
  );
}

/**
 * Writes a `pending` message row the way the loop expects it. Call it inside the same
 * transaction that writes the record (or the revocation), then wake the loop after commit.
 */
export function insertPendingMessage(
  tx: Writer,
  input: NewTransaction &
    MessageFields & {
      readonly kind: "record_message" | "revocation_message";
      /** ms since the epoch (the caller's clock). */
      readonly now: number;
      /**
       * A person-signed record's message only: the person's key, whose announcement must be
       * anchored before the message goes (`ANNOUNCED`). Absent: the organisation's current key's.
       */
      readonly keyFingerprint?: Uint8Array;
    },
): void {
  checkMessage(input);
  insertPending(tx, input, input, input.now);
}

/**
 * Writes the `pending` announcement of a person's key (docs/persons.md "What enrolling creates") on
 * their organisation's topic, in the transaction that enrols them: a new key, so never a duplicate.
 * Their record messages wait for it to be anchored; abandoned, it is queued again like any
 * announcement.
 */
export function insertPendingPersonKeyAnnouncement(tx: Writer, input: PersonKeyAnnouncement): void {
  tx.insert(ledgerTransactions).values(personKeyAnnouncementValues(input)).run();
}

type PersonKeyAnnouncement = NewTransaction & { readonly orgId: string; readonly topicId: string; readonly message: Uint8Array; readonly keyFingerprint: Uint8Array; readonly now: number };

/** The pending row of a person's key announcement, for both forms above. */
function personKeyAnnouncementValues(input: PersonKeyAnnouncement) {
  checkLength(input.message);
  return pendingValues(input, { kind: "key_announcement", orgId: input.orgId, recordId: null, topicId: input.topicId, message: input.message, keyFingerprint: input.keyFingerprint }, input.now);
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

/** Rows abandoned without reaching a node (every submission `unsent`) do not count towards a re-queue's backoff. */
export const REACHED_A_NODE = sql`NOT (${ledgerTransactions.attempts} = 0 AND ${ledgerTransactions.signedBytes} IS NOT NULL)`;

const IMMEDIATE = { behavior: "immediate" } as const;

/**
 * Milliseconds the first grouped change waits for others to share its transaction (the
 * connection's group commit's window, src/storage/group-commit.ts): the loop's steps end on
 * separate network answers, so "the same turn" would rarely hold two.
 */
export { GROUP_WINDOW_MS };

/**
 * Organisations with a topic whose current key has no live announcement at the organisation's
 * current announcement generation: a scan of the organisations (as topic provisioning's), each
 * probing the partial unique index by organisation, key and generation. Exported for the plan test.
 */
export const WANTING_ANNOUNCEMENT = `SELECT o.id AS id FROM organisations o
  WHERE o.topic_id IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM ledger_transactions a
                    WHERE a.org_id = o.id AND a.key_fingerprint = o.system_key_fingerprint AND a.announcement_generation = o.announcement_generation
                      AND a.kind = 'key_announcement' AND a.state <> 'abandoned')`;

/**
 * A record message may go once its organisation's current key is announced and anchored
 * (docs/anchoring.md "Key announcements"). Evaluated per candidate row of `due` (`ANNOUNCED_SQL`, which names the outer
 * table `ledger_transactions`): one primary-key read of the organisation and one probe of
 * the partial unique index `ledger_transactions_one_announcement`, whose WHERE terms are
 * repeated word for word so that SQLite may use it; `a.state = 'anchored'` then filters the one
 * live row. Exported for test/anchoring/queue.test.ts, which checks the plan.
 */
export const ANNOUNCED = `(ledger_transactions.kind <> 'record_message'
  OR (ledger_transactions.key_fingerprint IS NULL AND EXISTS (
    SELECT 1 FROM organisations o JOIN ledger_transactions a
      ON a.org_id = o.id AND a.key_fingerprint = o.system_key_fingerprint AND a.kind = 'key_announcement' AND a.state <> 'abandoned'
    WHERE o.id = ledger_transactions.org_id AND a.state = 'anchored'))
  OR (ledger_transactions.key_fingerprint IS NOT NULL AND EXISTS (
    SELECT 1 FROM ledger_transactions a
    WHERE a.org_id = ledger_transactions.org_id AND a.key_fingerprint = ledger_transactions.key_fingerprint AND a.kind = 'key_announcement' AND a.state <> 'abandoned'
      AND a.state = 'anchored')))`;

/** `ledger_transactions` as bun:sqlite returns it (snake_case, blobs as Uint8Array). */
interface RawLedgerRow {
  transaction_id: string;
  kind: TransactionKind;
  org_id: string;
  record_id: string | null;
  topic_id: string | null;
  message: Uint8Array | null;
  key_fingerprint: Uint8Array | null;
  announcement_generation: number;
  signed_bytes: Uint8Array | null;
  valid_start_ms: number;
  valid_seconds: number;
  state: TransactionState;
  sequence_number: number | null;
  consensus_at: string | null;
  running_hash: Uint8Array | null;
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

const LEDGER_COLUMNS =
  "transaction_id, kind, org_id, record_id, topic_id, message, key_fingerprint, announcement_generation, signed_bytes, valid_start_ms, valid_seconds, state, " +
  "sequence_number, consensus_at, running_hash, attempts, next_attempt_at, last_error, created_at, updated_at";

const buffer = (b: Uint8Array | null): Buffer | null => (b === null ? null : Buffer.from(b.buffer, b.byteOffset, b.byteLength));

/**
 * `due`'s statement, run once per unfinished state (state, now, limit): ids and due times only,
 * since most of what it returns are rows in flight that `due` leaves out; the rows it keeps are
 * then checked against `ANNOUNCED_SQL` and read whole by primary key. Exported for the plan test.
 */
export const DUE_SQL = `SELECT transaction_id, next_attempt_at FROM ledger_transactions
  WHERE state = ? AND next_attempt_at <= ?
  ORDER BY next_attempt_at LIMIT ?`;

/** `nextDueAt`'s statement, run once per unfinished state: the first entry of the work index. Exported for the plan test. */
export const NEXT_DUE_SQL = `SELECT next_attempt_at AS at FROM ledger_transactions WHERE state = ? ORDER BY next_attempt_at LIMIT 1`;

/** Whether the row with this transaction id may go (`ANNOUNCED`: ok 1 or 0), and its organisation; one row, by primary key. Exported for the plan test. */
export const ANNOUNCED_SQL = `SELECT CASE WHEN ${ANNOUNCED} THEN 1 ELSE 0 END AS ok, org_id FROM ledger_transactions WHERE transaction_id = ?`;

/**
 * A record message `due` finds waiting for its key's announcement is looked at again this much
 * later, or as soon as an announcement of its organisation is anchored (`anchoredIn` makes them
 * due at once). With the announcement's condition inside `due`'s and `nextDueAt`'s statements, a
 * backlog waiting for an announcement that does not come (refused by the ledger, its topic gone)
 * was read whole on every pass, up to 200 times a second: more than half of the API thread while
 * persons signed (docs/benchmarks.md "How the figures moved").
 */
export const WAITING_RECHECK_MS = 10_000;

/**
 * `unsentPastCutoff`'s statement: the pending rows through the work index (state first), the
 * rest a filter over them (the backlog, not the history). Parameters: now plus the margin, the limit.
 */
export const UNSENT_PAST_CUTOFF_SQL = `SELECT ${LEDGER_COLUMNS} FROM ledger_transactions
  WHERE state = 'pending' AND attempts = 0 AND valid_start_ms + valid_seconds * 1000 + 1 < ?
  ORDER BY next_attempt_at LIMIT ?`;

/** The row as drizzle would have mapped it (blobs as Buffers, columns camelCase). */
function toLedgerRow(r: RawLedgerRow): LedgerTransactionRow {
  return {
    transactionId: r.transaction_id,
    kind: r.kind,
    orgId: r.org_id,
    recordId: r.record_id,
    topicId: r.topic_id,
    message: buffer(r.message),
    keyFingerprint: buffer(r.key_fingerprint),
    announcementGeneration: r.announcement_generation,
    signedBytes: buffer(r.signed_bytes),
    validStartMs: r.valid_start_ms,
    validSeconds: r.valid_seconds,
    state: r.state,
    sequenceNumber: r.sequence_number,
    consensusAt: r.consensus_at,
    runningHash: buffer(r.running_hash),
    attempts: r.attempts,
    nextAttemptAt: r.next_attempt_at,
    lastError: r.last_error,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** What the mirror node confirmed of an anchored message. */
export type ConfirmedFields = { readonly sequenceNumber: number; readonly consensusAt: string; readonly runningHash: Uint8Array };

/** A state change's outcome: when it was made (the row's new `updated_at`), or null if the row had moved on. */
export type Changed = number | null;

/** A value now (SQLite) or later (PostgreSQL). */
export type Maybe<T> = T | Promise<T>;

/**
 * The anchor loop's journal, on either engine: `AnchorJournal` below on the embedded SQLite
 * (synchronous, group-committed), `PgAnchorJournal` (storage/pg-journal.ts) on PostgreSQL, where
 * every change is fenced by the leader's epoch. The guarantees in this file's header hold for
 * both; the loop awaits every answer.
 */
export interface Journal {
  unfinished(): Maybe<QueueCounts>;
  due(limit: number, busy: { readonly size: number; has(transactionId: string): boolean }): Maybe<LedgerTransactionRow[]>;
  unfinishedMessage(transactionId: string): Maybe<LedgerTransactionRow | null>;
  topicsAwaitingConfirmation(): Maybe<{ readonly topicId: string; readonly validStartMs: number }[]>;
  nextDueAt(): Maybe<number | null>;
  /**
   * Up to `limit` pending rows no submission of which can have reached a node (`attempts` 0)
   * whose validity window leaves less than `marginMs` at `now`: they can never be submitted, so
   * the loop abandons them, wherever their backoff or a wait for an announcement has put them.
   */
  unsentPastCutoff(marginMs: number, limit: number): Maybe<LedgerTransactionRow[]>;
  /** A hint, kept in memory and written at the next `flush`. */
  reschedule(row: Pick<LedgerTransactionRow, "transactionId" | "state">, delayMs: number, lastError: string | null): void;
  flush(): Maybe<void>;
  retryAllNow(): Maybe<void>;
  readonly grouped: {
    beginAttempt(row: Pick<LedgerTransactionRow, "transactionId">, bytes: Uint8Array): Promise<number | null>;
    toAccepted(row: LedgerTransactionRow, pollMs: number): Promise<Changed>;
    toAnchoredMessage(row: LedgerTransactionRow, confirmed: ConfirmedFields): Promise<Changed>;
  };
  takeBack(row: Pick<LedgerTransactionRow, "transactionId">, attempts: number): Maybe<number>;
  toAnchoredTopic(
    row: LedgerTransactionRow,
    topicId: string,
    consensusAt: string | null,
    announcement?: KeyAnnouncement | null,
  ): Maybe<{ readonly at: number; readonly announced: LedgerTransactionRow | null } | null>;
  abandon(row: LedgerTransactionRow, reason: string): Maybe<{ readonly at: number; readonly requeued: string | null } | null>;
  organisationsWantingTopic(): Maybe<string[]>;
  queueTopicCreate(orgId: string): Maybe<LedgerTransactionRow | null>;
  organisationsWantingAnnouncement(): Maybe<string[]>;
  queueAnnouncement(orgId: string, announcement: KeyAnnouncement): Maybe<LedgerTransactionRow | null>;
}

export class AnchorJournal implements Journal {
  private deferred: { id: string; state: string; at: number; t: number; lastError: string | null }[] = [];
  /**
   * Record messages `due` set aside (waiting for an announcement): due again at `at`, written with
   * the reschedules, only if the row is still due at `seen` (the time `due` read). An
   * announcement of the organisation anchored before they are written drops them (`anchoredIn`):
   * its `wakeWaiting` has made them due now, and wins.
   */
  private setAside: { id: string; orgId: string; seen: number; at: number }[] = [];
  /** Where grouped state changes (`grouped`) are committed: the connection's group commit, shared with record writes. */
  private readonly group: GroupCommit;
  private readonly rescheduleStatement;
  private readonly takeBackStatement;
  private readonly retryNowStatement;
  private readonly nextDueStatement;
  private readonly dueStatement;
  private readonly announcedStatement;
  private readonly setAsideStatement;
  private readonly rowStatement;
  /**
   * The three changes every message goes through (an attempt, accepted, anchored), prepared once:
   * the loop makes three per record, and drizzle would build and prepare several statements for each. The
   * record is found as recordOf() finds it: by its primary key and this transaction (or, for a
   * row without a record id, by the transaction alone).
   */
  private readonly statements;

  /**
   * @param newTransactionId ids for the rows the journal queues itself (a revocation queued
   *   again, a topic creation).
   * @param groupWindowMs how long the first grouped change waits for others: the default shares
   *   the connection's group commit (src/storage/group-commit.ts) with record writes; another
   *   window (tests lengthen it) gets a group commit of its own.
   */
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly newTransactionId: () => NewTransaction,
    groupWindowMs: number = GROUP_WINDOW_MS,
  ) {
    this.group = groupWindowMs === GROUP_WINDOW_MS ? groupCommitOf(db.$client) : createGroupCommit(db.$client, groupWindowMs);
    // After the changes: a reschedule made for a row's new state finds it in that state.
    this.group.beforeCommit(() => this.writeDeferred());
    this.rescheduleStatement = db.$client.prepare(
      "UPDATE ledger_transactions SET next_attempt_at = ?, updated_at = ?, last_error = coalesce(?, last_error) WHERE transaction_id = ? AND state = ?",
    );
    this.takeBackStatement = db.$client.prepare("UPDATE ledger_transactions SET attempts = attempts - 1, updated_at = ? WHERE transaction_id = ? AND state = 'pending' AND attempts = ?");
    this.retryNowStatement = db.$client.prepare("UPDATE ledger_transactions SET next_attempt_at = ? WHERE state IN ('pending','accepted') AND next_attempt_at > ?");
    // Per state, in the order of the index `ledger_transactions_work (state, next_attempt_at)`:
    // the first row that passes ANNOUNCED ends the scan. Over both states at once (IN), SQLite
    // read every unfinished row to find the minimum, evaluating ANNOUNCED on each: under a
    // backlog of thousands, on every pass.
    this.nextDueStatement = db.$client.prepare<{ at: number }, [TransactionState]>(NEXT_DUE_SQL);
    const client = db.$client;
    this.statements = {
      stateOf: client.prepare<{ state: TransactionState }, [string]>("SELECT state FROM ledger_transactions WHERE transaction_id = ?"),
      attemptOf: client.prepare<{ state: TransactionState; signed_bytes: Uint8Array | null; attempts: number }, [string]>(
        "SELECT state, signed_bytes, attempts FROM ledger_transactions WHERE transaction_id = ?",
      ),
      attempt: client.prepare<never, [Uint8Array, number, number, string]>("UPDATE ledger_transactions SET signed_bytes = ?, attempts = ?, updated_at = ? WHERE transaction_id = ?"),
      accept: client.prepare<never, [number, number, string]>(
        "UPDATE ledger_transactions SET state = 'accepted', next_attempt_at = ?, last_error = NULL, updated_at = ? WHERE transaction_id = ?",
      ),
      recordAcceptedById: client.prepare<never, [string, string]>("UPDATE records SET anchor_state = 'accepted' WHERE id = ? AND transaction_id = ? AND anchor_state = 'pending'"),
      recordAcceptedByTransaction: client.prepare<never, [string]>("UPDATE records SET anchor_state = 'accepted' WHERE transaction_id = ? AND anchor_state = 'pending'"),
      anchor: client.prepare<never, [number, string, Uint8Array, number, string]>(
        "UPDATE ledger_transactions SET state = 'anchored', sequence_number = ?, consensus_at = ?, running_hash = ?, last_error = NULL, updated_at = ? WHERE transaction_id = ?",
      ),
      recordAnchoredById: client.prepare<never, [number, string, string, string]>(
        "UPDATE records SET anchor_state = 'anchored', sequence_number = ?, consensus_at = ? WHERE id = ? AND transaction_id = ?",
      ),
      recordAnchoredByTransaction: client.prepare<never, [number, string, string]>(
        "UPDATE records SET anchor_state = 'anchored', sequence_number = ?, consensus_at = ? WHERE transaction_id = ?",
      ),
      // An announcement anchored: its organisation's record messages set aside by `due` go now
      // (those waiting for another key are set aside again at their next look).
      wakeWaiting: client.prepare<never, [number, string, number]>(
        "UPDATE ledger_transactions SET next_attempt_at = ? WHERE state = 'pending' AND kind = 'record_message' AND org_id = ? AND next_attempt_at > ?",
      ),
    };
    // Prepared once: the loop asks on every pass, and drizzle would build and prepare the
    // statement each time (a fifth of the process's CPU under sustained record creation).
    // One state at a time, for the same reason as nextDue: in index order each scan stops after
    // its LIMIT; over both states (IN) SQLite sorted every due row in a temporary B-tree,
    // evaluating ANNOUNCED on each, to return a few.
    this.dueStatement = db.$client.prepare<{ transaction_id: string; next_attempt_at: number }, [TransactionState, number, number]>(DUE_SQL);
    this.announcedStatement = db.$client.prepare<{ ok: number; org_id: string }, [string]>(ANNOUNCED_SQL);
    this.setAsideStatement = db.$client.prepare<never, [number, string, number]>(
      "UPDATE ledger_transactions SET next_attempt_at = ? WHERE transaction_id = ? AND state = 'pending' AND next_attempt_at = ?",
    );
    this.rowStatement = db.$client.prepare<RawLedgerRow, [string]>(`SELECT ${LEDGER_COLUMNS} FROM ledger_transactions WHERE transaction_id = ?`);
  }

  // ---- reading the queue ---------------------------------------------------------------

  /** Unfinished rows by state and the oldest `pending` one's creation. */
  unfinished(): QueueCounts {
    this.flush();
    const c = this.db.$client.query("SELECT state, count(*) AS n FROM ledger_transactions WHERE state IN ('pending','accepted') GROUP BY state").all() as { state: string; n: number }[];
    const oldest = this.db.$client.query("SELECT min(created_at) AS at FROM ledger_transactions WHERE state = 'pending'").get() as { at: number | null };
    return { pending: c.find((r) => r.state === "pending")?.n ?? 0, accepted: c.find((r) => r.state === "accepted")?.n ?? 0, oldestPendingAt: oldest.at };
  }

  /**
   * Up to `limit` unfinished rows due now, soonest first, leaving out those in `busy`. A record
   * message whose key is not announced yet (`ANNOUNCED`) is left out too, and due again
   * WAITING_RECHECK_MS later (written at the next `flush`), or when an announcement of its
   * organisation is anchored.
   */
  due(limit: number, busy: { readonly size: number; has(transactionId: string): boolean }): LedgerTransactionRow[] {
    this.flush();
    if (limit <= 0) return [];
    const now = this.clock.now();
    const n = limit + busy.size;
    const of = (state: TransactionState) => this.dueStatement.all(state, now, n).map((r) => ({ ...r, state }));
    // The soonest `n` of each state, merged (a stable sort: pending first on equal times, as one
    // scan of the index would return them), then the soonest `n` of both.
    const candidates = [...of("pending"), ...of("accepted")]
      .sort((a, b) => a.next_attempt_at - b.next_attempt_at)
      .slice(0, n)
      .filter((r) => !busy.has(r.transaction_id));
    const rows: LedgerTransactionRow[] = [];
    for (const c of candidates) {
      if (rows.length >= limit) break;
      const gate = this.announcedStatement.get(c.transaction_id)!; // the same connection, no write between: the row is there
      if (gate.ok !== 1) {
        this.setAside.push({ id: c.transaction_id, orgId: gate.org_id, seen: c.next_attempt_at, at: now + WAITING_RECHECK_MS });
        continue;
      }
      rows.push(toLedgerRow(this.rowStatement.get(c.transaction_id)!)); // the same connection, no write between: the row is there
    }
    return rows;
  }

  /**
   * The unfinished (`pending` or `accepted`) message row with this transaction id, or null: what
   * a message listed by the mirror node may confirm (anchorer.ts, batched confirmation).
   */
  unfinishedMessage(transactionId: string): LedgerTransactionRow | null {
    const r = this.rowStatement.get(transactionId);
    if (r === null || (r.state !== "pending" && r.state !== "accepted") || r.kind === "topic_create" || r.topic_id === null || r.message === null) return null;
    return toLedgerRow(r);
  }

  /**
   * Topics with messages that may have reached consensus unconfirmed (accepted, or pending with a
   * submission that may have reached a node), each with the earliest valid start among them: no
   * such message reached consensus before it. Read once when a loop starts (batched confirmation).
   */
  topicsAwaitingConfirmation(): { readonly topicId: string; readonly validStartMs: number }[] {
    this.flush();
    return this.db.$client
      .query(
        `SELECT topic_id AS topicId, min(valid_start_ms) AS validStartMs FROM ledger_transactions
         WHERE state IN ('pending','accepted') AND kind <> 'topic_create' AND topic_id IS NOT NULL AND (state = 'accepted' OR attempts > 0)
         GROUP BY topic_id`,
      )
      .all() as { topicId: string; validStartMs: number }[];
  }

  /** When the next unfinished row is due (null: none). A record message waiting for its announcement counts at the time `due` will look at it again. */
  nextDueAt(): number | null {
    this.flush();
    const pending = this.nextDueStatement.get("pending")?.at ?? null;
    const accepted = this.nextDueStatement.get("accepted")?.at ?? null;
    return pending === null ? accepted : accepted === null ? pending : Math.min(pending, accepted);
  }

  unsentPastCutoff(marginMs: number, limit: number): LedgerTransactionRow[] {
    this.flush();
    return (this.db.$client.query(UNSENT_PAST_CUTOFF_SQL).all(this.clock.now() + marginMs, limit) as RawLedgerRow[]).map(toLedgerRow);
  }

  // ---- reschedules (batched hints) -----------------------------------------------------

  /** Due again in `delayMs`, with `lastError` if given; written at the next `flush`, if the row is still in `row.state`. */
  reschedule(row: Pick<LedgerTransactionRow, "transactionId" | "state">, delayMs: number, lastError: string | null): void {
    const t = this.clock.now();
    this.deferred.push({ id: row.transactionId, state: row.state, at: t + Math.max(0, delayMs), t, lastError });
  }

  /**
   * Writes the collected reschedules in one transaction. Written one by one they were a
   * synchronous, fsynced commit per receipt poll, several per message, on the thread that serves
   * the API.
   */
  flush(): void {
    if (this.deferred.length === 0 && this.setAside.length === 0) return;
    this.db.$client.transaction(() => this.writeDeferred())();
  }

  /** Inside a transaction: the collected reschedules. A transaction that fails loses them: a lost reschedule leaves its row due at once (the header). */
  private writeDeferred(): void {
    const batch = this.deferred;
    const aside = this.setAside;
    if (batch.length === 0 && aside.length === 0) return;
    for (const d of batch) this.rescheduleStatement.run(d.at, d.t, d.lastError, d.id, d.state);
    for (const a of aside) this.setAsideStatement.run(a.at, a.id, a.seen);
    this.deferred = [];
    this.setAside = [];
  }

  /** Every unfinished row waiting on a backoff is due now (the ledger answers again). */
  retryAllNow(): void {
    const t = this.clock.now();
    this.retryNowStatement.run(t, t);
  }

  // ---- attempts --------------------------------------------------------------------------

  /** Journals an attempt before the bytes leave: stores them (first time) and counts it. The new count, or null if the row moved on (or holds other bytes). */
  beginAttempt(row: Pick<LedgerTransactionRow, "transactionId">, bytes: Uint8Array): number | null {
    const t = this.clock.now();
    return this.db.$client.transaction(() => this.attemptIn(row, bytes, t)).immediate();
  }

  /** `beginAttempt` inside the caller's transaction, at `t`. */
  private attemptIn(row: Pick<LedgerTransactionRow, "transactionId">, bytes: Uint8Array, t: number): number | null {
    const s = this.statements;
    const cur = s.attemptOf.get(row.transactionId);
    if (cur === null || cur.state !== "pending") return null;
    if (cur.signed_bytes !== null && !Buffer.from(cur.signed_bytes).equals(Buffer.from(bytes))) return null;
    const attempts = cur.attempts + 1;
    s.attempt.run(Buffer.from(bytes), attempts, t, row.transactionId);
    return attempts;
  }

  /**
   * Uncounts an attempt that provably sent nothing (`unsent`): at 0, with bytes stored, every
   * submission was refused before anything left. Only if the row is still `pending` at
   * `attempts`; returns the count it has now.
   */
  takeBack(row: Pick<LedgerTransactionRow, "transactionId">, attempts: number): number {
    const changed = this.takeBackStatement.run(this.clock.now(), row.transactionId, attempts).changes;
    return changed === 1 ? attempts - 1 : attempts;
  }

  // ---- state changes -------------------------------------------------------------------

  /** pending → accepted, due again in `pollMs` (for its receipt). */
  toAccepted(row: LedgerTransactionRow, pollMs: number): Changed {
    const t = this.clock.now();
    return this.db.$client.transaction(() => this.acceptedIn(row, pollMs, t)).immediate();
  }

  private acceptedIn(row: LedgerTransactionRow, pollMs: number, t: number): Changed {
    const s = this.statements;
    if (s.stateOf.get(row.transactionId)?.state !== "pending") return null;
    s.accept.run(t + pollMs, t, row.transactionId);
    if (row.kind === "record_message") {
      if (row.recordId !== null) s.recordAcceptedById.run(row.recordId, row.transactionId);
      else s.recordAcceptedByTransaction.run(row.transactionId);
    }
    return t;
  }

  /** pending or accepted → anchored, for a message the mirror node confirmed. */
  toAnchoredMessage(row: LedgerTransactionRow, confirmed: ConfirmedFields): Changed {
    const t = this.clock.now();
    return this.db.$client.transaction(() => this.anchoredIn(row, confirmed, t)).immediate();
  }

  private anchoredIn(row: LedgerTransactionRow, confirmed: ConfirmedFields, t: number): Changed {
    const s = this.statements;
    if (!["pending", "accepted"].includes(s.stateOf.get(row.transactionId)?.state ?? "")) return null;
    s.anchor.run(confirmed.sequenceNumber, confirmed.consensusAt, confirmed.runningHash, t, row.transactionId);
    if (row.kind === "key_announcement") {
      s.wakeWaiting.run(t, row.orgId, t);
      this.setAside = this.setAside.filter((a) => a.orgId !== row.orgId);
    }
    if (row.kind === "record_message") {
      if (row.recordId !== null) s.recordAnchoredById.run(confirmed.sequenceNumber, confirmed.consensusAt, row.recordId, row.transactionId);
      else s.recordAnchoredByTransaction.run(confirmed.sequenceNumber, confirmed.consensusAt, row.transactionId);
    }
    return t;
  }

  // ---- the same changes, group-committed -----------------------------------------------

  /**
   * `beginAttempt`, `toAccepted` and `toAnchoredMessage`, each made at the time of the call and
   * committed with every other grouped change and record write made within GROUP_WINDOW_MS (and
   * the reschedules waiting then) in one IMMEDIATE transaction, each in its own savepoint. The promise
   * resolves with what the synchronous method would have returned, once that transaction has
   * committed; a change that throws is undone alone and rejects alone; a transaction that fails
   * as a whole rejects them all and stores none. The anchor loop makes three of these per
   * message: one fsync each, on the API's thread, before they were grouped (docs/benchmarks.md
   * "Record creation").
   */
  readonly grouped = {
    beginAttempt: (row: Pick<LedgerTransactionRow, "transactionId">, bytes: Uint8Array): Promise<number | null> => {
      const t = this.clock.now();
      return this.enqueue(() => this.attemptIn(row, bytes, t));
    },
    toAccepted: (row: LedgerTransactionRow, pollMs: number): Promise<Changed> => {
      const t = this.clock.now();
      return this.enqueue(() => this.acceptedIn(row, pollMs, t));
    },
    toAnchoredMessage: (row: LedgerTransactionRow, confirmed: ConfirmedFields): Promise<Changed> => {
      const t = this.clock.now();
      return this.enqueue(() => this.anchoredIn(row, confirmed, t));
    },
  };

  private enqueue<T>(work: () => T): Promise<T> {
    // Nested: a savepoint, so a change that throws is undone alone.
    return this.group.run(() => this.db.$client.transaction(work)());
  }

  /**
   * Commits the grouped changes waiting now (and whatever record writes share their group), then
   * the reschedules, in one IMMEDIATE transaction. Runs on the group's timer; callable at any time
   * (nothing waiting: nothing happens).
   */
  commitGrouped(): void {
    this.group.commitNow();
  }

  /**
   * pending or accepted → anchored, for a topic creation; the organisation gets its topic (if it
   * has none) and, in the same transaction, the key announcement `announcement` (built by the
   * caller before: nothing is computed under the write lock), unless it is null, was built at
   * another announcement generation than the organisation's (provisioning builds it afresh), or
   * the organisation's key has a live one. `announced` is the queued announcement's row.
   */
  toAnchoredTopic(
    row: LedgerTransactionRow,
    topicId: string,
    consensusAt: string | null,
    announcement: KeyAnnouncement | null = null,
  ): { readonly at: number; readonly announced: LedgerTransactionRow | null } | null {
    const t = this.clock.now();
    return this.db.transaction((tx) => {
      if (!inState(tx, row.transactionId, ["pending", "accepted"])) return null;
      tx.update(ledgerTransactions)
        .set({ state: "anchored", topicId, consensusAt, lastError: null, updatedAt: t })
        .where(eq(ledgerTransactions.transactionId, row.transactionId))
        .run();
      const org = tx
        .select({ topicId: organisations.topicId, generation: organisations.announcementGeneration })
        .from(organisations)
        .where(eq(organisations.id, row.orgId))
        .get();
      if (org === undefined || org.topicId !== null) return { at: t, announced: null };
      tx.update(organisations).set({ topicId }).where(eq(organisations.id, row.orgId)).run();
      // Only on the topic the organisation has just been given: anything else is provisioning's.
      const announced = announcement !== null && announcement.generation === org.generation ? this.insertAnnouncement(tx, row.orgId, topicId, announcement, t) : null;
      return { at: t, announced };
    }, IMMEDIATE);
  }

  /**
   * pending or accepted → abandoned, with `reason`. A record message's record is abandoned too;
   * a revocation or a key announcement is queued again (see the header), due at once the first time and after
   * `revocationRequeueDelay` when it keeps failing. `requeued` is the new row's id.
   */
  abandon(row: LedgerTransactionRow, reason: string): { readonly at: number; readonly requeued: string | null } | null {
    const t = this.clock.now();
    let requeued: string | null = null;
    const changed = this.db.transaction((tx) => {
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
          .where(and(eq(ledgerTransactions.recordId, row.recordId), eq(ledgerTransactions.kind, "revocation_message"), eq(ledgerTransactions.state, "abandoned"), REACHED_A_NODE))
          .get()!.n;
        const next = insertPending(tx, this.newTransactionId(), row, t, t + revocationRequeueDelay(earlier));
        tx.update(records)
          .set({ revocationTransactionId: next.transactionId })
          .where(and(eq(records.id, row.recordId), eq(records.revocationTransactionId, row.transactionId)))
          .run();
        requeued = next.transactionId;
      } else if (row.kind === "key_announcement" && row.message !== null && row.topicId !== null && row.keyFingerprint !== null) {
        // The same for a key announcement: records of the organisation wait for it. Same bytes,
        // key and generation, new transaction; the unique index allows it, this row being
        // abandoned now.
        const earlier = tx
          .select({ n: sql<number>`count(*)` })
          .from(ledgerTransactions)
          .where(
            and(
              eq(ledgerTransactions.orgId, row.orgId),
              eq(ledgerTransactions.keyFingerprint, Buffer.from(row.keyFingerprint)),
              eq(ledgerTransactions.announcementGeneration, row.announcementGeneration),
              eq(ledgerTransactions.kind, "key_announcement"),
              eq(ledgerTransactions.state, "abandoned"),
              REACHED_A_NODE,
            ),
          )
          .get()!.n;
        requeued = insertPending(tx, this.newTransactionId(), row, t, t + revocationRequeueDelay(earlier)).transactionId;
      }
      return true;
    }, IMMEDIATE);
    return changed ? { at: t, requeued } : null;
  }

  // ---- topic provisioning --------------------------------------------------------------

  /** Organisations with the add-on, no topic and no live topic creation. */
  organisationsWantingTopic(): string[] {
    const rows = this.db.$client
      .query(
        `SELECT o.id AS id FROM organisations o
         WHERE o.addon = 1 AND o.topic_id IS NULL
           AND NOT EXISTS (SELECT 1 FROM ledger_transactions t WHERE t.org_id = o.id AND t.kind = 'topic_create' AND t.state <> 'abandoned')`,
      )
      .all() as { id: string }[];
    return rows.map((r) => r.id);
  }

  /**
   * Queues a topic creation for `orgId`, unless its earlier ones (those that reached a node)
   * were abandoned too recently (`topicRequeueDelay`) or another pass or process queued one first
   * (`ledger_transactions_one_topic`). The new row, or null.
   */
  queueTopicCreate(orgId: string): LedgerTransactionRow | null {
    const t = this.clock.now();
    const prior = this.db.$client
      .query(
        `SELECT count(*) AS n, max(updated_at) AS last FROM ledger_transactions
         WHERE org_id = ? AND kind = 'topic_create' AND state = 'abandoned' AND NOT (attempts = 0 AND signed_bytes IS NOT NULL)`,
      )
      .get(orgId) as { n: number; last: number | null };
    if (prior.n > 0 && prior.last !== null && t < prior.last + topicRequeueDelay(prior.n)) return null;
    try {
      return insertPending(this.db, this.newTransactionId(), { kind: "topic_create", orgId, recordId: null, topicId: null, message: null }, t);
    } catch (e) {
      if (/UNIQUE/i.test((e as Error).message)) return null;
      throw e;
    }
  }

  // ---- key announcements ---------------------------------------------------------------

  /**
   * Organisations with a topic whose current system key has no live (not abandoned) key
   * announcement at their current announcement generation: topics that predate announcements, a
   * topic whose announcement could not be built when it was created, a changed key, a changed
   * domain or name.
   */
  organisationsWantingAnnouncement(): string[] {
    const rows = this.db.$client.query(WANTING_ANNOUNCEMENT).all() as { id: string }[];
    return rows.map((r) => r.id);
  }

  /**
   * Queues `announcement` on `orgId`'s topic, unless the organisation has no topic, its current
   * system key or announcement generation is not the one announced (it changed meanwhile: the
   * next pass builds another), or its key has a live announcement at that generation already,
   * queued by another pass or process (`ledger_transactions_one_announcement`). The new row, or null.
   */
  queueAnnouncement(orgId: string, announcement: KeyAnnouncement): LedgerTransactionRow | null {
    const t = this.clock.now();
    return this.db.transaction((tx) => {
      const org = tx
        .select({ topicId: organisations.topicId, key: organisations.systemKeyFingerprint, generation: organisations.announcementGeneration })
        .from(organisations)
        .where(eq(organisations.id, orgId))
        .get();
      if (org === undefined || org.topicId === null || org.generation !== announcement.generation || !Buffer.from(org.key).equals(Buffer.from(announcement.keyFingerprint))) return null;
      return this.insertAnnouncement(tx, orgId, org.topicId, announcement, t);
    }, IMMEDIATE);
  }

  /**
   * Inside an IMMEDIATE transaction: the announcement's pending row, or null if the key has a
   * live one (a UNIQUE violation of `ledger_transactions_one_announcement`: someone else queued
   * it). A failed statement is undone alone; the caller's transaction goes on.
   */
  private insertAnnouncement(tx: Writer, orgId: string, topicId: string, announcement: KeyAnnouncement, t: number): LedgerTransactionRow | null {
    checkLength(announcement.message);
    try {
      return insertPending(
        tx,
        this.newTransactionId(),
        { kind: "key_announcement", orgId, recordId: null, topicId, message: announcement.message, keyFingerprint: announcement.keyFingerprint, announcementGeneration: announcement.generation },
        t,
      );
    } catch (e) {
      if (/UNIQUE/i.test((e as Error).message)) return null;
      throw e;
    }
  }
}

/** Inside an IMMEDIATE transaction: is the row still in one of `states`? Makes every change idempotent. */
function inState(tx: Pick<Db, "select">, id: string, states: readonly TransactionState[]): boolean {
  const cur = tx.select({ state: ledgerTransactions.state }).from(ledgerTransactions).where(eq(ledgerTransactions.transactionId, id)).get();
  return cur !== undefined && states.includes(cur.state);
}

/**
 * The record a `record_message` row anchors: by its primary key, and still carrying this
 * transaction. `records.transaction_id` has no index, and a scan of the records table (each row
 * holds ML-DSA signatures, kilobytes) on every state change made anchoring slow down as the table
 * grew, until it fell behind record creation for good.
 */
function recordOf(row: Pick<LedgerTransactionRow, "recordId" | "transactionId">) {
  return row.recordId !== null ? and(eq(records.id, row.recordId), eq(records.transactionId, row.transactionId)) : eq(records.transactionId, row.transactionId);
}

/** What `docverify status` reports about the queue. Works on any process's view of the database. */
/** What `docverify status` shows of the queue, as a read operation on either engine (storage/store.ts). */
export function queueSummary(nowMs: number): Body<QueueSummary> {
  return function* (db, t) {
    const lt = t.ledgerTransactions;
    const byState = yield* q(db.select({ state: lt.state, n: count() }).from(lt).groupBy(lt.state));
    const [oldest] = yield* q(
      db
        .select({ id: lt.transactionId, kind: lt.kind, state: lt.state, createdAt: lt.createdAt })
        .from(lt)
        .where(inArray(lt.state, ["pending", "accepted"]))
        .orderBy(asc(lt.createdAt))
        .limit(1),
    );
    const [lastError] = yield* q(
      db
        .select({ id: lt.transactionId, state: lt.state, error: lt.lastError, at: lt.updatedAt })
        .from(lt)
        .where(isNotNull(lt.lastError))
        .orderBy(desc(lt.updatedAt))
        .limit(1),
    );
    const n = (s: string) => byState.find((r) => r.state === s)?.n ?? 0;
    return {
      pending: n("pending"),
      accepted: n("accepted"),
      anchored: n("anchored"),
      abandoned: n("abandoned"),
      oldestUnfinished: oldest === undefined ? null : { transactionId: oldest.id, kind: oldest.kind, state: oldest.state, ageSeconds: Math.max(0, Math.round((nowMs - oldest.createdAt) / 1000)) },
      lastError: lastError === undefined ? null : { transactionId: lastError.id, state: lastError.state, error: lastError.error!, at: new Date(lastError.at).toISOString() },
    };
  };
}

export interface QueueSummary {
  readonly pending: number;
  readonly accepted: number;
  readonly anchored: number;
  readonly abandoned: number;
  readonly oldestUnfinished: { readonly transactionId: string; readonly kind: string; readonly state: string; readonly ageSeconds: number } | null;
  readonly lastError: { readonly transactionId: string; readonly state: string; readonly error: string; readonly at: string } | null;
}
