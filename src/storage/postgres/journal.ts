/**
 * The anchor journal on PostgreSQL (the `Journal` port, anchoring/journal/ports.ts, whose header
 * is the contract; docs/storage.md "The anchor loop on PostgreSQL"): the same rows, states and
 * guarantees as on SQLite, for several nodes sharing one database, of which only the anchor
 * loop's leader writes the queue. Differences from the SQLite journal, and why:
 * - **Every change is fenced** (storage/pg-cluster.ts `fencedWrite`): its transaction reads the
 *   leader row FOR SHARE and refuses unless this node's epoch is still the leader's. A node that
 *   lost the lead (killed and replaced, paused past the stale window, cut off) changes nothing,
 *   whatever it still believes; the refusal reaches the loop as a failed step, and the row stays
 *   due for the new leader. Reads are not fenced: they change nothing.
 * - **READ COMMITTED, every change guarded** by the row's expected state (`change` below);
 *   `grouped`'s changes are group-committed as on SQLite, the others are transactions of their own.
 * - **Unique indexes refuse with `ON CONFLICT DO NOTHING`**, never a caught error: a failed
 *   statement aborts a PostgreSQL transaction, where SQLite undoes only the statement.
 * - Reschedules and set-aside rows are hints, as on SQLite; a node that does not lead drops them.
 * - **Batches' leaves are left to the batch**: every read of the rows the loop sends says
 *   `batch_leaf = 0`, the condition of the partial index `ledger_transactions_work`.
 * The changes beyond a message's own are operation bodies in journal-changes.ts, those of batches
 * in journal-batches.ts.
 */
import { and, asc, eq, getTableColumns, inArray, isNotNull, isNull, min, ne, or, sql } from "drizzle-orm";
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
import { GROUP_WINDOW_MS } from "../group-commit.ts";
import { ANNOUNCED } from "../journal-sql.ts";
import { DEFAULT_STALE_MS, fencedWrite } from "../pg-cluster.ts";
import type { PostgresStore } from "../pg-store.ts";
import { q, type Body, type Op, type StoreDb, type Tables } from "../store.ts";
import { abandonLeaves, acceptLeaves, anchorLeaves, closeOrAbandon, openBatches, openPastCutoff, rebatch, unfinishedCounts } from "./journal-batches.ts";
import {
  abandon,
  anchoredTopic,
  asRow,
  changeCounter,
  keysWantingCompromise,
  move,
  organisationsWantingAnnouncement,
  organisationsWantingTopic,
  personsWantingAnnouncement,
  queueAnnouncement,
  queuePersonAnnouncement,
  queueTopicCreate,
  recordOf,
  queueCompromise,
} from "./journal-changes.ts";

/** A change asked of a node that does not lead the anchor loop (now). */
export class NotLeadingError extends Error {
  override readonly name = "NotLeadingError";
  constructor() {
    super("this node does not lead the anchor loop");
  }
}

type Row = LedgerTransactionRow;

/** The journal over `store`, its changes fenced by `epoch()` (null: this node does not lead). */
export function postgresJournal(store: PostgresStore, rules: JournalRules, epoch: () => number | null): Journal {
  return new PgAnchorJournal(store, rules, epoch);
}

class PgAnchorJournal implements Journal {
  private deferred: { id: string; state: string; at: number; t: number; lastError: string | null }[] = [];
  private setAside: { id: string; orgId: string; seen: number; at: number }[] = [];
  /** The change counter when `keysWantingCompromiseMessage` last found none (null: not since the start). */
  private noCompromiseAt: number | null = null;
  /** The change counter when `personsWantingAnnouncement` last found none (null: not since the start). */
  private noPersonAnnouncementAt: number | null = null;
  /** Grouped changes waiting for their transaction (`enqueue`), in the order they were made. */
  private waiting: { work: Body<unknown>; resolve: (value: unknown) => void; reject: (error: unknown) => void }[] = [];
  private groupTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly store: PostgresStore,
    private readonly rules: JournalRules,
    private readonly epoch: () => number | null,
  ) {}

  /**
   * One fenced transaction, refused at once when this node does not lead. READ COMMITTED: every
   * change below is made by an UPDATE guarded by the row's expected state (or an insert a unique
   * index refuses), which PostgreSQL re-checks against the newest row version, so a change to a
   * row that moved on changes nothing, as on SQLite. SERIALIZABLE would add nothing to that, and
   * its conflict detection (by index page) made record creation and the loop abort each other by
   * the thousand under load (docs/benchmarks.md, "PostgreSQL").
   */
  private change<T>(body: Body<T>): Promise<T> {
    const epoch = this.epoch();
    if (epoch === null) return Promise.reject(new NotLeadingError());
    return fencedWrite(this.store, epoch, body, DEFAULT_STALE_MS / 2, "read committed");
  }

  // ---- reading the queue ---------------------------------------------------------------

  async unfinished(): Promise<QueueCounts> {
    await this.flush();
    return this.store.read(function* (db) {
      const counts = yield* unfinishedCounts(db);
      // The leader's figure, while its heartbeat is fresh (storage/pg-cluster.ts writes it).
      const [leader] = (yield* q(
        db.execute(sql`SELECT anchored_recently AS n FROM anchor_leader WHERE id = 1 AND seen_at > clock_timestamp() - interval '5 seconds'`),
      )) as unknown as { n: number }[];
      return { ...counts, anchoredByLeader: Number(leader?.n ?? 0) };
    });
  }

  async due(limit: number, busy: Busy): Promise<Row[]> {
    await this.flush();
    if (limit <= 0) return [];
    const now = this.rules.clock.now();
    const n = limit + busy.size;
    const of = (state: TransactionState) =>
      function* (db: StoreDb, t: Tables): Op<(Row & { ok: number })[]> {
        const lt = t.ledgerTransactions;
        const rows = yield* q(
          db
            .select({ ...getTableColumns(lt), ok: sql<number>`CASE WHEN ${sql.raw(ANNOUNCED)} THEN 1 ELSE 0 END`.mapWith(Number) })
            .from(lt)
            .where(and(eq(lt.batchLeaf, 0), eq(lt.state, state), sql`${lt.nextAttemptAt} <= ${now}`))
            .orderBy(asc(lt.nextAttemptAt))
            .limit(n),
        );
        return rows as unknown as (Row & { ok: number })[];
      };
    const [pending, accepted] = await this.store.read(function* (db, t) {
      return [yield* of("pending")(db, t), yield* of("accepted")(db, t)] as const;
    });
    const candidates = [...pending, ...accepted]
      .sort((a, b) => a.nextAttemptAt - b.nextAttemptAt)
      .slice(0, n)
      .filter((r) => !busy.has(r.transactionId));
    const rows: Row[] = [];
    for (const c of candidates) {
      if (rows.length >= limit) break;
      const { ok, ...row } = c;
      if (ok !== 1) {
        this.setAside.push({ id: row.transactionId, orgId: row.orgId, seen: row.nextAttemptAt, at: now + this.rules.waitingRecheckMs });
        continue;
      }
      rows.push(asRow(row));
    }
    return rows;
  }

  unfinishedMessage(transactionId: string): Promise<Row | null> {
    return this.store.read(function* (db, t) {
      const [r] = yield* q(db.select().from(t.ledgerTransactions).where(eq(t.ledgerTransactions.transactionId, transactionId)));
      if (r === undefined || r.batchLeaf !== 0 || (r.state !== "pending" && r.state !== "accepted") || r.kind === "topic_create" || r.topicId === null || r.message === null) return null;
      return asRow(r);
    });
  }

  async unsentPastCutoff(marginMs: number, limit: number): Promise<Row[]> {
    await this.flush();
    const before = this.rules.clock.now() + marginMs;
    return this.store.read(function* (db, t) {
      const lt = t.ledgerTransactions;
      const rows = yield* q(
        db
          .select()
          .from(lt)
          .where(and(eq(lt.state, "pending"), eq(lt.batchLeaf, 0), eq(lt.attempts, 0), sql`${lt.validStartMs} + ${lt.validSeconds} * 1000 + 1 < ${before}`))
          .orderBy(asc(lt.nextAttemptAt))
          .limit(limit),
      );
      // Then the open batches whose validity window closes first: they can never be submitted either.
      return [...rows.map(asRow), ...(yield* openPastCutoff(before, limit - rows.length)(db, t))];
    });
  }

  async topicsAwaitingConfirmation(): Promise<{ readonly topicId: string; readonly validStartMs: number }[]> {
    await this.flush();
    return this.store.read(function* (db, t) {
      const lt = t.ledgerTransactions;
      const rows = yield* q(
        db
          .select({ topicId: lt.topicId, validStartMs: min(lt.validStartMs) })
          .from(lt)
          .where(and(eq(lt.batchLeaf, 0), inArray(lt.state, ["pending", "accepted"]), ne(lt.kind, "topic_create"), isNotNull(lt.topicId), sql`(${lt.state} = 'accepted' OR ${lt.attempts} > 0)`))
          .groupBy(lt.topicId),
      );
      return rows.map((r) => ({ topicId: r.topicId!, validStartMs: Number(r.validStartMs) }));
    });
  }

  async nextDueAt(): Promise<number | null> {
    await this.flush();
    return this.store.read(function* (db, t) {
      const lt = t.ledgerTransactions;
      // An open batch counts at the end of its window, when the loop closes it.
      const [r] = yield* q(db.select({ at: min(lt.nextAttemptAt) }).from(lt).where(and(eq(lt.batchLeaf, 0), inArray(lt.state, ["open", "pending", "accepted"]))));
      return r?.at == null ? null : Number(r.at);
    });
  }

  // ---- reschedules (batched hints) -----------------------------------------------------

  reschedule(row: Pick<Row, "transactionId" | "state">, delayMs: number, lastError: string | null): void {
    const t = this.rules.clock.now();
    this.deferred.push({ id: row.transactionId, state: row.state, at: t + Math.max(0, delayMs), t, lastError });
  }

  async flush(): Promise<void> {
    if (this.deferred.length === 0 && this.setAside.length === 0) return;
    const batch = this.deferred;
    const aside = this.setAside;
    this.deferred = [];
    this.setAside = [];
    // Hints only: a node that does not lead drops them; a failed write loses them (each row is
    // then due at once, looked at sooner, never later).
    if (this.epoch() === null) return;
    await this.change(function* (tx, t) {
      const lt = t.ledgerTransactions;
      for (const d of batch) {
        yield* q(
          tx
            .update(lt)
            .set({ nextAttemptAt: d.at, updatedAt: d.t, lastError: sql`coalesce(${d.lastError}::text, ${lt.lastError})` })
            .where(and(eq(lt.transactionId, d.id), eq(lt.state, d.state as TransactionState))),
        );
      }
      for (const a of aside) {
        yield* q(tx.update(lt).set({ nextAttemptAt: a.at }).where(and(eq(lt.transactionId, a.id), eq(lt.state, "pending"), eq(lt.nextAttemptAt, a.seen))));
      }
    });
  }

  async retryAllNow(): Promise<void> {
    const now = this.rules.clock.now();
    await this.change(function* (tx, t) {
      const lt = t.ledgerTransactions;
      yield* q(tx.update(lt).set({ nextAttemptAt: now }).where(and(eq(lt.batchLeaf, 0), inArray(lt.state, ["pending", "accepted"]), sql`${lt.nextAttemptAt} > ${now}`)));
    });
  }

  // ---- attempts and state changes --------------------------------------------------------

  /**
   * The changes every message goes through (an attempt, accepted, anchored), group-committed as
   * on SQLite: each waits up to GROUP_WINDOW_MS for the others due then, and all of them run in
   * one fenced transaction, in the order they were made. Each promise resolves with its change's
   * outcome once that transaction has committed (a step acts on a change only then); a transaction
   * that fails rejects them all and stores none. Separate, each paid a transaction of its own
   * (the fence's lock included): the node's and the server's CPU per record (docs/benchmarks.md
   * "PostgreSQL (`--postgres`)").
   */
  private enqueue<T>(work: Body<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ work, resolve: resolve as (value: unknown) => void, reject });
      this.groupTimer ??= setTimeout(() => void this.commitGrouped(), GROUP_WINDOW_MS);
    });
  }

  private async commitGrouped(): Promise<void> {
    this.groupTimer = null;
    const batch = this.waiting;
    this.waiting = [];
    if (batch.length === 0) return;
    try {
      const outcomes = await this.change(function* (tx, t) {
        const out: unknown[] = [];
        for (const item of batch) out.push(yield* item.work(tx, t));
        return out;
      });
      batch.forEach((item, i) => item.resolve(outcomes[i]));
    } catch (e) {
      for (const item of batch) item.reject(e);
    }
  }

  readonly grouped = {
    beginAttempt: (row: Pick<Row, "transactionId">, bytes: Uint8Array): Promise<number | null> => {
      const at = this.rules.clock.now();
      return this.enqueue(function* (tx, t) {
        const lt = t.ledgerTransactions;
        const signed = Buffer.from(bytes);
        // Only while pending, and only these bytes: the first attempt stores them, the others must match.
        const [counted] = yield* q(
          tx
            .update(lt)
            .set({ signedBytes: signed, attempts: sql`${lt.attempts} + 1`, updatedAt: at })
            .where(and(eq(lt.transactionId, row.transactionId), eq(lt.state, "pending"), or(isNull(lt.signedBytes), eq(lt.signedBytes, signed))))
            .returning({ attempts: lt.attempts }),
        );
        return counted === undefined ? null : Number(counted.attempts);
      });
    },
    toAccepted: (row: Row, pollMs: number): Promise<Changed> => {
      const at = this.rules.clock.now();
      return this.enqueue(function* (tx, t) {
        if (!(yield* move(tx, t, row.transactionId, ["pending"], { state: "accepted", nextAttemptAt: at + pollMs, lastError: null, updatedAt: at }))) return null;
        if (row.kind === "record_message") {
          yield* q(tx.update(t.records).set({ anchorState: "accepted" }).where(and(recordOf(t, row), eq(t.records.anchorState, "pending"))));
        }
        if (row.kind === "batch_message") yield* acceptLeaves(tx, t, row.transactionId, at);
        return at;
      });
    },
    toAnchoredMessage: (row: Row, confirmed: ConfirmedFields): Promise<Changed> => {
      const at = this.rules.clock.now();
      return this.enqueue(function* (tx, t) {
        const lt = t.ledgerTransactions;
        const anchored = { state: "anchored", sequenceNumber: confirmed.sequenceNumber, consensusAt: confirmed.consensusAt, runningHash: Buffer.from(confirmed.runningHash), lastError: null, updatedAt: at } as const;
        if (!(yield* move(tx, t, row.transactionId, ["pending", "accepted"], anchored))) return null;
        if (row.kind === "key_announcement") {
          // Its organisation's record messages and batches set aside by `due` go now.
          yield* q(
            tx
              .update(lt)
              .set({ nextAttemptAt: at })
              .where(and(eq(lt.batchLeaf, 0), eq(lt.state, "pending"), inArray(lt.kind, ["record_message", "batch_message"]), eq(lt.orgId, row.orgId), sql`${lt.nextAttemptAt} > ${at}`)),
          );
        }
        if (row.kind === "key_compromise" && row.keyFingerprint !== null) {
          // Verification's revocation time becomes the consensus time: raise the change counter (the key's own trigger).
          yield* q(tx.update(t.signingKeys).set({ compromisedAt: sql`${t.signingKeys.compromisedAt}` }).where(eq(t.signingKeys.fingerprint, Buffer.from(row.keyFingerprint))));
        }
        if (row.kind === "record_message") {
          yield* q(tx.update(t.records).set({ anchorState: "anchored", sequenceNumber: confirmed.sequenceNumber, consensusAt: confirmed.consensusAt }).where(recordOf(t, row)));
        }
        if (row.kind === "batch_message") yield* anchorLeaves(tx, t, row.transactionId, confirmed, at);
        return at;
      }).then((changed) => {
        if (changed !== null && row.kind === "key_announcement") this.setAside = this.setAside.filter((a) => a.orgId !== row.orgId);
        return changed;
      });
    },
  };

  takeBack(row: Pick<Row, "transactionId">, attempts: number): Promise<number> {
    const at = this.rules.clock.now();
    return this.change(function* (tx, t) {
      const lt = t.ledgerTransactions;
      const changed = yield* q(
        tx
          .update(lt)
          .set({ attempts: sql`${lt.attempts} - 1`, updatedAt: at })
          .where(and(eq(lt.transactionId, row.transactionId), eq(lt.state, "pending"), eq(lt.attempts, attempts)))
          .returning({ id: lt.transactionId }),
      );
      return changed.length === 1 ? attempts - 1 : attempts;
    });
  }


  // ---- the other changes (journal-changes.ts) ----------------------------------------------

  toAnchoredTopic(row: Row, topicId: string, consensusAt: string | null, announcement: KeyAnnouncement | null = null): Promise<{ readonly at: number; readonly announced: Row | null } | null> {
    return this.change(anchoredTopic(this.rules, row, topicId, consensusAt, announcement, this.rules.clock.now()));
  }

  abandon(row: Row, reason: string): Promise<{ readonly at: number; readonly requeued: string | null } | null> {
    const [rules, at] = [this.rules, this.rules.clock.now()];
    return this.change(function* (tx, t) {
      const done = yield* abandon(rules, row, reason, at)(tx, t);
      if (done !== null && row.kind === "batch_message") yield* abandonLeaves(rules, row.transactionId, reason, at)(tx, t);
      return done;
    });
  }

  // ---- batches (journal-batches.ts) ----------------------------------------------------------

  async openBatches(): Promise<Row[]> {
    await this.flush();
    return this.store.read(openBatches);
  }

  /** One fenced transaction: the batch closed, or abandoned without a leaf; null if no longer open. A `build` that throws rolls it back and rejects. */
  closeBatch(row: Row, build: BatchBuilder): Promise<Row | null> {
    return this.change(closeOrAbandon(this.rules, row, build, this.rules.clock.now()));
  }

  rebatch(row: Row, reason: string): Promise<{ readonly at: number; readonly batches: readonly string[] } | null> {
    return this.change(rebatch(this.rules, row, reason, this.rules.clock.now()));
  }

  organisationsWantingTopic(): Promise<string[]> {
    return this.store.read(organisationsWantingTopic);
  }

  queueTopicCreate(orgId: string): Promise<Row | null> {
    return this.change(queueTopicCreate(this.rules, orgId, this.rules.clock.now()));
  }

  organisationsWantingAnnouncement(): Promise<string[]> {
    return this.store.read(organisationsWantingAnnouncement);
  }

  queueAnnouncement(orgId: string, announcement: KeyAnnouncement): Promise<Row | null> {
    return this.change(queueAnnouncement(this.rules, orgId, announcement, this.rules.clock.now()));
  }

  async personsWantingAnnouncement(): Promise<string[]> {
    const gen = await this.store.read(changeCounter);
    if (gen === this.noPersonAnnouncementAt) return [];
    const persons = await this.store.read(personsWantingAnnouncement);
    this.noPersonAnnouncementAt = persons.length === 0 ? gen : null;
    return persons;
  }

  queuePersonAnnouncement(personId: string, announcement: PersonKeyAnnouncement): Promise<Row | null> {
    return this.change(queuePersonAnnouncement(this.rules, personId, announcement, this.rules.clock.now()));
  }

  async keysWantingCompromiseMessage(): Promise<CompromisedKey[]> {
    const gen = await this.store.read(changeCounter);
    if (gen === this.noCompromiseAt) return [];
    const keys = await this.store.read(keysWantingCompromise);
    this.noCompromiseAt = keys.length === 0 ? gen : null;
    return keys;
  }

  queueCompromise(key: CompromisedKey, message: Uint8Array): Promise<Row | null> {
    return this.change(queueCompromise(this.rules, key, message, this.rules.clock.now()));
  }
}
