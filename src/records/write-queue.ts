/**
 * Record writes, group-committed. With `synchronous=FULL` every commit costs an fsync; concurrent
 * record writes share one instead of paying one each (docs/benchmarks.md "Record creation"). The
 * group commit is the connection's (src/storage/group-commit.ts), shared with the anchor loop's
 * journal: work submitted within GROUP_WINDOW_MS of the first item waiting, by either, runs in a
 * single IMMEDIATE transaction, each item in its own savepoint, and every promise settles only
 * after that transaction has committed, so a caller that answers after `await run(...)` answers
 * with a durable write.
 *
 * Why a window rather than the end of the current turn: records are signed on worker threads
 * (src/crypto/sign-pool.ts), and their answers arrive as separate tasks, so "the same turn" held
 * three or four writes per commit under load; a window of one millisecond holds all that arrive
 * meanwhile (measured: 4 → 17 per commit), for at most 1 ms more per answer.
 *
 * Guarantees:
 * - `work` runs synchronously inside the transaction (never `await` in it: bun:sqlite would
 *   commit at the first await). It sees every earlier item's writes of the same batch.
 * - An item that throws is rolled back to its savepoint and its promise rejects with that error;
 *   the other items of the batch still commit.
 * - If the transaction itself fails (the write lock not obtained within busy_timeout, a failing
 *   commit), every item of the batch rejects and nothing of it is stored. When the cause is a
 *   lock held by another connection (SQLITE_BUSY, SQLITE_LOCKED: the admin command line, a
 *   backup, a second process on the data folder), the rejection is the domain's 503
 *   SERVICE_UNAVAILABLE with Retry-After, the SQLite error as its `cause`: the caller may retry,
 *   and nothing was written. Any other failure rejects with the error itself.
 */
import { DomainError } from "../lib/errors.ts";
import { isBusy } from "../lib/storage-faults.ts";
import type { Db } from "../storage/db.ts";
import { groupCommitOf, type GroupCommit } from "../storage/group-commit.ts";
import { runInSqliteTransaction, type Body } from "../storage/store.ts";

export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

export interface WriteQueue {
  run<T>(work: (tx: Tx) => T): Promise<T>;
  /** A store operation (storage/store.ts), run like `work`: in its own savepoint of the group commit. */
  write<T>(body: Body<T>): Promise<T>;
}

/**
 * Where a record's write operation runs: on SQLite the group commit below, on PostgreSQL the store
 * itself (one transaction per operation; PostgreSQL groups its own commits' WAL flushes).
 */
export interface RecordWriter {
  write<T>(body: Body<T>): Promise<T>;
}

export { GROUP_WINDOW_MS } from "../storage/group-commit.ts";

/** Seconds a caller refused for a busy database waits before retrying. */
export const BUSY_RETRY_SECONDS = 1;

/** A busy database as the domain's 503 (Retry-After, the SQLite error as `cause`); any other error unchanged. */
export function busyAsUnavailable(e: unknown): unknown {
  if (!isBusy(e)) return e;
  return Object.assign(new DomainError("SERVICE_UNAVAILABLE", "The service is busy. Retry shortly.", undefined, BUSY_RETRY_SECONDS), { cause: e });
}

/** Record writes on `db`'s connection, in its shared group commit (tests may pass one of their own). */
export function createWriteQueue(db: Db, group: GroupCommit = groupCommitOf(db.$client)): WriteQueue {
  // Each item in its own savepoint: drizzle's transaction inside the group's open one is one.
  const run = <T>(work: (tx: Tx) => T): Promise<T> => group.run(() => db.transaction((tx) => work(tx)), busyAsUnavailable);
  return {
    run,
    write: (body) => run((tx) => runInSqliteTransaction(db, tx, body)),
  };
}
