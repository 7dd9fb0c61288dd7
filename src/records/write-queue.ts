/**
 * Group commit. With `synchronous=FULL` every commit costs an fsync; concurrent record writes
 * share one instead of paying one each (issue 5's benchmark target). Work submitted within
 * GROUP_WINDOW_MS of the first item waiting runs in a single IMMEDIATE transaction, each item in
 * its own savepoint, and every promise settles only after that transaction has committed, so a
 * caller that answers after `await run(...)` answers with a durable write.
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
import type { Db } from "../storage/db.ts";
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

interface Item {
  work: (tx: Tx) => unknown;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/** Milliseconds the first waiting item waits for others to share its transaction. */
export const GROUP_WINDOW_MS = 1;

/** Most items one transaction carries; a longer queue is written in several. */
const MAX_BATCH = 256;

/** Seconds a caller refused for a busy database waits before retrying. */
export const BUSY_RETRY_SECONDS = 1;

/** SQLITE_BUSY or SQLITE_LOCKED, extended codes included: another connection held the lock past busy_timeout. */
export function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"));
}

/** A busy database as the domain's 503 (Retry-After, the SQLite error as `cause`); any other error unchanged. */
export function busyAsUnavailable(e: unknown): unknown {
  if (!isBusy(e)) return e;
  return Object.assign(new DomainError("SERVICE_UNAVAILABLE", "The service is busy. Retry shortly.", undefined, BUSY_RETRY_SECONDS), { cause: e });
}

export function createWriteQueue(db: Db): WriteQueue {
  let queue: Item[] = [];
  let scheduled = false;

  function flush(): void {
    scheduled = false;
    while (queue.length > 0) {
      const batch = queue.slice(0, MAX_BATCH);
      queue = queue.slice(MAX_BATCH);
      const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
      try {
        db.transaction(
          (tx) => {
            for (const item of batch) {
              try {
                outcomes.push({ ok: true, value: tx.transaction((sp) => item.work(sp)) });
              } catch (error) {
                outcomes.push({ ok: false, error: busyAsUnavailable(error) });
              }
            }
          },
          { behavior: "immediate" },
        );
      } catch (error) {
        const refusal = busyAsUnavailable(error);
        for (const item of batch) item.reject(refusal);
        continue;
      }
      batch.forEach((item, i) => {
        const o = outcomes[i]!;
        if (o.ok) item.resolve(o.value);
        else item.reject(o.error);
      });
    }
  }

  function run<T>(work: (tx: Tx) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      queue.push({ work, resolve: resolve as (v: unknown) => void, reject });
      if (!scheduled) {
        scheduled = true;
        // After the handlers and signing answers of the next millisecond have queued their writes too.
        setTimeout(flush, GROUP_WINDOW_MS);
      }
    });
  }

  return {
    run,
    write: (body) => run((tx) => runInSqliteTransaction(db, tx, body)),
  };
}
