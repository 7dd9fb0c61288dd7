/**
 * The anchor journal on the embedded SQLite (the `Journal` port, anchoring/journal/ports.ts, whose
 * header is the contract): synchronous, one node. Every change is its own IMMEDIATE transaction,
 * or, through `grouped`, its own savepoint in the store's group commit
 * (storage/store.ts `SqliteStore.group`) shared with record writes: one fsync for all the changes made within
 * GROUP_WINDOW_MS. Nothing here awaits: no transaction can commit half-way (an async bun:sqlite
 * transaction commits at its first `await`).
 *
 * The changes beyond a message's own (topic creation anchored, abandon and re-queue, topic
 * provisioning, key announcements) are in journal-changes.ts; the prepared statements in
 * journal-statements.ts.
 */
import type {
  BatchBuilder,
  Busy,
  Changed,
  CompromisedKey,
  ConfirmedFields,
  Journal,
  JournalRules,
  KeyAnnouncement,
  LedgerTransactionRow,
  PersonKeyAnnouncement,
  QueueCounts,
  TransactionState,
} from "../../anchoring/journal/ports.ts";
import type { Db } from "../db.ts";
import { createGroupCommit, GROUP_WINDOW_MS, type GroupCommit } from "../group-commit.ts";
import type { SqliteStore } from "../store.ts";
import {
  abandonIn,
  rebatchIn,
  anchoredTopicIn,
  changeCounter,
  keysWantingCompromise,
  organisationsWantingAnnouncement,
  organisationsWantingTopic,
  personsWantingAnnouncement,
  queueAnnouncementIn,
  queueCompromiseIn,
  queuePersonAnnouncementIn,
  queueTopicCreate,
} from "./journal-changes.ts";
import { closeBatchIn } from "./journal-batches.ts";
import { journalStatements, toLedgerRow, type JournalStatements } from "./journal-statements.ts";

/** The SQLite journal: the port, answering synchronously (`grouped` aside). */
export interface SqliteJournal extends Journal {
  unfinished(): QueueCounts;
  due(limit: number, busy: Busy): LedgerTransactionRow[];
  unfinishedMessage(transactionId: string): LedgerTransactionRow | null;
  topicsAwaitingConfirmation(): { readonly topicId: string; readonly validStartMs: number }[];
  nextDueAt(): number | null;
  unsentPastCutoff(marginMs: number, limit: number): LedgerTransactionRow[];
  openBatches(): LedgerTransactionRow[];
  closeBatch(row: LedgerTransactionRow, build: BatchBuilder): LedgerTransactionRow | null;
  flush(): void;
  retryAllNow(): void;
  takeBack(row: Pick<LedgerTransactionRow, "transactionId">, attempts: number): number;
  toAnchoredTopic(row: LedgerTransactionRow, topicId: string, consensusAt: string | null, announcement?: KeyAnnouncement | null): { readonly at: number; readonly announced: LedgerTransactionRow | null } | null;
  abandon(row: LedgerTransactionRow, reason: string): { readonly at: number; readonly requeued: string | null } | null;
  rebatch(row: LedgerTransactionRow, reason: string): { readonly at: number; readonly batches: readonly string[] } | null;
  organisationsWantingTopic(): string[];
  queueTopicCreate(orgId: string): LedgerTransactionRow | null;
  organisationsWantingAnnouncement(): string[];
  queueAnnouncement(orgId: string, announcement: KeyAnnouncement): LedgerTransactionRow | null;
  personsWantingAnnouncement(): string[];
  queuePersonAnnouncement(personId: string, announcement: PersonKeyAnnouncement): LedgerTransactionRow | null;
  keysWantingCompromiseMessage(): CompromisedKey[];
  queueCompromise(key: CompromisedKey, message: Uint8Array): LedgerTransactionRow | null;
}

/**
 * The journal over `store`'s connection.
 * @param groupWindowMs how long the first grouped change waits for others: the default shares
 *   the store's group commit (storage/store.ts `SqliteStore.group`) with record writes; another
 *   window (tests lengthen it) gets a group commit of its own.
 */
export function sqliteJournal(store: SqliteStore, rules: JournalRules, groupWindowMs: number = GROUP_WINDOW_MS): SqliteJournal {
  return new SqliteAnchorJournal(store.db, rules, groupWindowMs === GROUP_WINDOW_MS ? store.group : createGroupCommit(store.db.$client, groupWindowMs));
}

class SqliteAnchorJournal implements SqliteJournal {
  private deferred: { id: string; state: string; at: number; t: number; lastError: string | null }[] = [];
  /**
   * Record messages `due` set aside (waiting for an announcement): due again at `at`, written with
   * the reschedules, only if the row is still due at `seen` (the time `due` read). An
   * announcement of the organisation anchored before they are written drops them (`anchoredIn`):
   * its `wakeWaiting` has made them due now, and wins.
   */
  private setAside: { id: string; orgId: string; seen: number; at: number }[] = [];
  /** The change counter when `keysWantingCompromiseMessage` last found none (null: not since the start). */
  private noCompromiseAt: number | null = null;
  /** The change counter when `personsWantingAnnouncement` last found none (null: not since the start). */
  private noPersonAnnouncementAt: number | null = null;
  private readonly s: JournalStatements;

  constructor(
    private readonly db: Db,
    private readonly rules: JournalRules,
    /** Where grouped state changes (`grouped`) are committed: the store's group commit, shared with record writes. */
    private readonly group: GroupCommit,
  ) {
    // After the changes: a reschedule made for a row's new state finds it in that state.
    this.group.beforeCommit(() => this.writeDeferred());
    this.s = journalStatements(db.$client);
  }

  // ---- reading the queue ---------------------------------------------------------------

  /** Unfinished rows by state and the oldest `pending` one's creation. */
  unfinished(): QueueCounts {
    this.flush();
    // An open batch's leaves wait as pending ones do.
    const c = this.s.unfinishedByState.all();
    const n = (state: string) => c.find((r) => r.state === state)?.n ?? 0;
    return { pending: n("pending") + n("open"), accepted: n("accepted"), oldestPendingAt: this.s.oldestPending.get()!.at };
  }

  /**
   * Up to `limit` unfinished rows due now, soonest first, leaving out those in `busy`. A record
   * message whose key is not announced yet (`ANNOUNCED`) is left out too, and due again
   * `waitingRecheckMs` later (written at the next `flush`), or when an announcement of its
   * organisation is anchored.
   */
  due(limit: number, busy: Busy): LedgerTransactionRow[] {
    this.flush();
    if (limit <= 0) return [];
    const now = this.rules.clock.now();
    const n = limit + busy.size;
    const of = (state: TransactionState) => this.s.due.all(state, now, n).map((r) => ({ ...r, state }));
    // The soonest `n` of each state, merged (a stable sort: pending first on equal times, as one
    // scan of the index would return them), then the soonest `n` of both.
    const candidates = [...of("pending"), ...of("accepted")]
      .sort((a, b) => a.next_attempt_at - b.next_attempt_at)
      .slice(0, n)
      .filter((r) => !busy.has(r.transaction_id));
    const rows: LedgerTransactionRow[] = [];
    for (const c of candidates) {
      if (rows.length >= limit) break;
      const gate = this.s.announced.get(c.transaction_id)!; // the same connection, no write between: the row is there
      if (gate.ok !== 1) {
        this.setAside.push({ id: c.transaction_id, orgId: gate.org_id, seen: c.next_attempt_at, at: now + this.rules.waitingRecheckMs });
        continue;
      }
      rows.push(toLedgerRow(this.s.row.get(c.transaction_id)!)); // the same connection, no write between: the row is there
    }
    return rows;
  }

  /**
   * The unfinished (`pending` or `accepted`) message row with this transaction id, or null: what
   * a message listed by the mirror node may confirm (anchorer.ts, batched confirmation).
   */
  unfinishedMessage(transactionId: string): LedgerTransactionRow | null {
    const r = this.s.row.get(transactionId);
    if (r === null || (r.state !== "pending" && r.state !== "accepted") || r.kind === "topic_create" || r.batch_leaf === 1 || r.topic_id === null || r.message === null) return null;
    return toLedgerRow(r);
  }

  /**
   * Topics with messages that may have reached consensus unconfirmed (accepted, or pending with a
   * submission that may have reached a node), each with the earliest valid start among them: no
   * such message reached consensus before it. Read once when a loop starts (batched confirmation).
   */
  topicsAwaitingConfirmation(): { readonly topicId: string; readonly validStartMs: number }[] {
    this.flush();
    return this.s.topicsAwaitingConfirmation.all();
  }

  /**
   * When the next unfinished row is due (null: none). A record message waiting for its
   * announcement counts at the time `due` will look at it again; an open batch at the end of its
   * window, when the loop closes it.
   */
  nextDueAt(): number | null {
    this.flush();
    const times = (["open", "pending", "accepted"] as const).map((state) => this.s.nextDue.get(state)?.at ?? null).filter((at) => at !== null);
    return times.length === 0 ? null : Math.min(...times);
  }

  unsentPastCutoff(marginMs: number, limit: number): LedgerTransactionRow[] {
    this.flush();
    const cutoff = this.rules.clock.now() + marginMs;
    const rows = this.s.unsentPastCutoff.all(cutoff, limit).map(toLedgerRow);
    if (rows.length < limit) for (const r of this.s.openPastCutoff.all(cutoff, limit - rows.length)) rows.push(toLedgerRow(r));
    return rows;
  }

  // ---- batches (closing one: journal-batches.ts) -------------------------------------------

  openBatches(): LedgerTransactionRow[] {
    this.flush();
    return this.s.openBatches.all().map(toLedgerRow);
  }

  closeBatch(row: LedgerTransactionRow, build: BatchBuilder): LedgerTransactionRow | null {
    return closeBatchIn(this.db, this.s, this.rules, row, build);
  }

  // ---- reschedules (batched hints) -----------------------------------------------------

  /** Due again in `delayMs`, with `lastError` if given; written at the next `flush`, if the row is still in `row.state`. */
  reschedule(row: Pick<LedgerTransactionRow, "transactionId" | "state">, delayMs: number, lastError: string | null): void {
    const t = this.rules.clock.now();
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
    for (const d of batch) this.s.reschedule.run(d.at, d.t, d.lastError, d.id, d.state);
    for (const a of aside) this.s.setAside.run(a.at, a.id, a.seen);
    this.deferred = [];
    this.setAside = [];
  }

  /** Every unfinished row waiting on a backoff is due now (the ledger answers again). */
  retryAllNow(): void {
    const t = this.rules.clock.now();
    this.s.retryNow.run(t, t);
  }

  // ---- attempts --------------------------------------------------------------------------

  /**
   * Inside the group's transaction, at `t`: journals an attempt before the bytes leave, storing
   * them (first time) and counting it. The new count, or null if the row moved on (or holds other
   * bytes).
   */
  private attemptIn(row: Pick<LedgerTransactionRow, "transactionId">, bytes: Uint8Array, t: number): number | null {
    const s = this.s;
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
    const changed = this.s.takeBack.run(this.rules.clock.now(), row.transactionId, attempts).changes;
    return changed === 1 ? attempts - 1 : attempts;
  }

  // ---- state changes -------------------------------------------------------------------

  /** Inside the group's transaction: pending → accepted, due again in `pollMs` (for its receipt). */
  private acceptedIn(row: LedgerTransactionRow, pollMs: number, t: number): Changed {
    const s = this.s;
    if (s.stateOf.get(row.transactionId)?.state !== "pending") return null;
    s.accept.run(t + pollMs, t, row.transactionId);
    if (row.kind === "batch_message") {
      s.leafRecordsAccepted.run(row.transactionId, row.transactionId);
      s.leavesAccepted.run(t, row.transactionId);
    }
    if (row.kind === "record_message") {
      if (row.recordId !== null) s.recordAcceptedById.run(row.recordId, row.transactionId);
      else s.recordAcceptedByTransaction.run(row.transactionId);
    }
    return t;
  }

  /** Inside the group's transaction: pending or accepted → anchored, for a message the mirror node confirmed. */
  private anchoredIn(row: LedgerTransactionRow, confirmed: ConfirmedFields, t: number): Changed {
    const s = this.s;
    if (!["pending", "accepted"].includes(s.stateOf.get(row.transactionId)?.state ?? "")) return null;
    s.anchor.run(confirmed.sequenceNumber, confirmed.consensusAt, confirmed.runningHash, t, row.transactionId);
    if (row.kind === "key_compromise" && row.keyFingerprint !== null) s.touchCompromisedKey.run(row.keyFingerprint);
    if (row.kind === "key_announcement") {
      s.wakeWaiting.run(t, row.orgId, t);
      this.setAside = this.setAside.filter((a) => a.orgId !== row.orgId);
    }
    if (row.kind === "batch_message") {
      s.leafRecordsAnchored.run(confirmed.sequenceNumber, confirmed.consensusAt, row.transactionId, row.transactionId);
      s.leavesAnchored.run(confirmed.sequenceNumber, confirmed.consensusAt, confirmed.runningHash, t, row.transactionId);
    }
    if (row.kind === "record_message") {
      if (row.recordId !== null) s.recordAnchoredById.run(confirmed.sequenceNumber, confirmed.consensusAt, row.recordId, row.transactionId);
      else s.recordAnchoredByTransaction.run(confirmed.sequenceNumber, confirmed.consensusAt, row.transactionId);
    }
    return t;
  }

  // ---- the same changes, group-committed -----------------------------------------------

  /**
   * An attempt, accepted and anchored (`attemptIn`, `acceptedIn`, `anchoredIn`), each made at the
   * time of the call and committed with every other grouped change and record write made within
   * GROUP_WINDOW_MS (and the reschedules waiting then) in one IMMEDIATE transaction, each in its
   * own savepoint. The promise resolves with the change's outcome, once that transaction has
   * committed; a change that throws is undone alone and rejects alone; a transaction that fails
   * as a whole rejects them all and stores none. The anchor loop makes three of these per
   * message: one fsync each, on the API's thread, before they were grouped (docs/benchmarks.md
   * "Record creation").
   */
  readonly grouped = {
    beginAttempt: (row: Pick<LedgerTransactionRow, "transactionId">, bytes: Uint8Array): Promise<number | null> => {
      const t = this.rules.clock.now();
      return this.enqueue(() => this.attemptIn(row, bytes, t));
    },
    toAccepted: (row: LedgerTransactionRow, pollMs: number): Promise<Changed> => {
      const t = this.rules.clock.now();
      return this.enqueue(() => this.acceptedIn(row, pollMs, t));
    },
    toAnchoredMessage: (row: LedgerTransactionRow, confirmed: ConfirmedFields): Promise<Changed> => {
      const t = this.rules.clock.now();
      return this.enqueue(() => this.anchoredIn(row, confirmed, t));
    },
  };

  private enqueue<T>(work: () => T): Promise<T> {
    // Nested: a savepoint, so a change that throws is undone alone.
    return this.group.run(() => this.db.$client.transaction(work)());
  }

  // ---- the other changes (journal-changes.ts) ----------------------------------------------

  toAnchoredTopic(row: LedgerTransactionRow, topicId: string, consensusAt: string | null, announcement: KeyAnnouncement | null = null) {
    return anchoredTopicIn(this.db, this.rules, row, topicId, consensusAt, announcement);
  }

  abandon(row: LedgerTransactionRow, reason: string) {
    return abandonIn(this.db, this.rules, row, reason);
  }

  rebatch(row: LedgerTransactionRow, reason: string) {
    return rebatchIn(this.db, this.rules, row, reason);
  }

  organisationsWantingTopic(): string[] {
    return organisationsWantingTopic(this.db);
  }

  queueTopicCreate(orgId: string): LedgerTransactionRow | null {
    return queueTopicCreate(this.db, this.rules, orgId);
  }

  organisationsWantingAnnouncement(): string[] {
    return organisationsWantingAnnouncement(this.db);
  }

  queueAnnouncement(orgId: string, announcement: KeyAnnouncement): LedgerTransactionRow | null {
    return queueAnnouncementIn(this.db, this.rules, orgId, announcement);
  }

  personsWantingAnnouncement(): string[] {
    const gen = changeCounter(this.db);
    if (gen === this.noPersonAnnouncementAt) return [];
    const persons = personsWantingAnnouncement(this.db);
    this.noPersonAnnouncementAt = persons.length === 0 ? gen : null;
    return persons;
  }

  queuePersonAnnouncement(personId: string, announcement: PersonKeyAnnouncement): LedgerTransactionRow | null {
    return queuePersonAnnouncementIn(this.db, this.rules, personId, announcement);
  }

  keysWantingCompromiseMessage(): CompromisedKey[] {
    const gen = changeCounter(this.db);
    if (gen === this.noCompromiseAt) return [];
    const keys = keysWantingCompromise(this.db);
    this.noCompromiseAt = keys.length === 0 ? gen : null;
    return keys;
  }

  queueCompromise(key: CompromisedKey, message: Uint8Array): LedgerTransactionRow | null {
    return queueCompromiseIn(this.db, this.rules, key, message);
  }
}
