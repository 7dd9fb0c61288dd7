/**
 * What the records capability needs of storage, beyond the engine-neutral `Store` (its `read` of
 * an operation): three ports, each implemented by a driver per engine in storage/sqlite/ and
 * storage/postgres/, given by each engine's drivers.ts. The capability is written once over
 * them; what differs between the engines (the embedded SQLite answers synchronously and shares one
 * group commit per connection, PostgreSQL answers with promises) stays in the drivers.
 */
import type { Maybe } from "../lib/maybe.ts";
import type { Body } from "../storage/store.ts";

/** Where a record's write operation runs (and the person application's request-path writes). */
export interface RecordWrites {
  /**
   * Runs `body` (storage/store.ts: an operation yielding its queries) as one write, all of it or
   * nothing, as if alone as far as the record's guards go (the unique index `records_one_active`,
   * "only while not revoked", a challenge taken once).
   * - MUST settle only once what `body` wrote is committed and durable: a caller that answers
   *   after it answers with a durable write.
   * - SQLite: MUST run `body` synchronously in its own savepoint of the store's shared group
   *   commit (storage/store.ts `SqliteStore.group`): work queued within GROUP_WINDOW_MS, by records, the person
   *   application and the anchor loop's journal, shares one IMMEDIATE transaction and one fsync;
   *   a `body` that throws is undone alone and the others still commit.
   * - PostgreSQL: one READ COMMITTED transaction per operation, run again from the start on a
   *   serialization failure or deadlock (the store's rule): the guards above keep it correct.
   * - A failure of `body`, or of the transaction that carries it (the write lock not obtained
   *   within busy_timeout, a failing commit), MUST reject with `refused(error)`, and nothing of
   *   `body` is stored. Never answers synchronously.
   */
  write<T>(body: Body<T>, refused: (error: unknown) => unknown): Promise<T>;
}

/**
 * The store as the seal key and key announcements use it: answered synchronously on the embedded
 * SQLite (the anchor loop asks for announcements on its own synchronous path), with promises on
 * PostgreSQL.
 */
export interface RecordKeyStore {
  /** Runs a read-only operation; each query sees what is committed. SQLite MUST answer synchronously. */
  read<T>(body: Body<T>): Maybe<T>;
  /**
   * Runs a write operation as one transaction of its own, all or nothing, as if alone (SQLite:
   * IMMEDIATE, synchronously; PostgreSQL: SERIALIZABLE, run again on a serialization failure).
   * MUST NOT be called inside another transaction. A failure rejects (or throws) with the
   * database's own error; nothing is written then.
   */
  write<T>(body: Body<T>): Maybe<T>;
}

/** `RecordKeyStore` on the embedded SQLite: every answer synchronous. */
export interface SyncRecordKeyStore extends RecordKeyStore {
  read<T>(body: Body<T>): T;
  write<T>(body: Body<T>): T;
}

/** The states a record passes through (docs/records.md). */
export type RecordAnchorState = "pending" | "accepted" | "anchored" | "abandoned";

/** Records counted by anchor state, for /metrics. */
export interface RecordCountReads {
  /**
   * The number of records in each of the four states, every state present (0 when none), in one
   * statement over the `records_anchor_state` index, never a scan of the records table (each row
   * holds kilobytes of signatures). SQLite MUST answer synchronously; PostgreSQL answers with a
   * promise, which rejects with the database's error on a fault.
   */
  count(): Maybe<Record<RecordAnchorState, number>>;
  /**
   * How long, ms, counts may be shown again before a scrape counts anew: 0 where `count` answers
   * synchronously (SQLite: counted at every scrape, 40 ms on a million records), otherwise the
   * least time between two counts (PostgreSQL: 1000, so scrapers never load the database).
   */
  readonly refreshMs: number;
}

/** The records capability's ports over one store, as an engine's drivers give them. */
export interface RecordPorts {
  /** Record writes: SQLite's shared group commit of the connection; PostgreSQL READ COMMITTED. */
  readonly writes: RecordWrites;
  readonly keys: RecordKeyStore;
  readonly counts: RecordCountReads;
}
