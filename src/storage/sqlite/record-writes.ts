/**
 * Record writes on the embedded SQLite (records/ports.ts `RecordWrites`), group-committed. With
 * `synchronous=FULL` every commit costs an fsync; concurrent record writes share one instead of
 * paying one each (docs/benchmarks.md "Record creation"). The group commit is the store's
 * (storage/store.ts `SqliteStore.group`), shared with the anchor loop's journal: work submitted within
 * GROUP_WINDOW_MS of the first item waiting, by either, runs in a single IMMEDIATE transaction,
 * each item in its own savepoint, and every promise settles only after that transaction has
 * committed, so a caller that answers after `await write(...)` answers with a durable write.
 *
 * Why a window rather than the end of the current turn: records are signed on worker threads
 * (src/crypto/sign-pool.ts), and their answers arrive as separate tasks, so "the same turn" held
 * three or four writes per commit under load; a window of one millisecond holds all that arrive
 * meanwhile, for at most 1 ms more per answer.
 *
 * Guarantees:
 * - The operation runs synchronously inside the transaction (bun:sqlite would commit at the
 *   first await). It sees every earlier item's writes of the same batch.
 * - An item that throws is rolled back to its savepoint and its promise rejects with
 *   `refused(error)`; the other items of the batch still commit.
 * - If the transaction itself fails (the write lock not obtained within busy_timeout, a failing
 *   commit), every item of the batch rejects with its `refused(error)` and nothing of it is stored.
 */
import type { RecordWrites } from "../../records/ports.ts";
import type { GroupCommit } from "../group-commit.ts";
import type { SqliteStore } from "../store.ts";

/** Record writes on `store`'s connection, in its shared group commit (tests may pass one of their own). */
export function sqliteRecordWrites(store: SqliteStore, group: GroupCommit = store.group): RecordWrites {
  const { db } = store;
  return {
    // Each item in its own savepoint: drizzle's transaction inside the group's open one is one.
    write: (body, refused) => group.run(() => db.transaction((tx) => store.runIn(tx, body)), refused),
  };
}
