/**
 * One group commit per store over the embedded database (the main connection's: storage/store.ts
 * `SqliteStore.group`). With `synchronous=FULL` every commit
 * costs a WAL write and an fsync on the thread that makes it; the record write queue
 * (src/records/write-queue.ts) and the anchor loop's journal (src/anchoring/queue.ts) each used
 * to group their own writes, so under record creation the API's thread made two commits a
 * millisecond, one for each, writing the pages both touch (a record's row, its ledger message's
 * row and their indexes) twice. Both now queue here, and whatever either queues within
 * GROUP_WINDOW_MS of the first item waiting commits in one IMMEDIATE transaction
 * (docs/benchmarks.md "Record creation").
 *
 * Guarantees (the callers' own, unchanged):
 * - `work` runs synchronously inside the transaction, after every item queued before it (never
 *   `await` in it: bun:sqlite would commit at the first await). It must be atomic on its own: the
 *   callers run it in a savepoint (bun:sqlite's or drizzle's nested transaction), so an item that
 *   throws is undone alone and rejects alone, with `refused(error)`; the others still commit.
 * - Every promise settles only after the transaction has committed: a caller that answers after
 *   `await run(...)` answers with a durable write.
 * - If the transaction itself fails (the write lock not obtained within busy_timeout, a failing
 *   commit), every item of it rejects with its own `refused(error)` and nothing of it is stored.
 * - `beforeCommit` functions run inside the group transaction that writes the last of the items
 *   waiting, after them (the anchor loop's reschedules); what they write shares its fate.
 */
import type { Database } from "bun:sqlite";

/** Milliseconds the first waiting item waits for others to share its transaction. */
export const GROUP_WINDOW_MS = 1;

/** Most items one transaction carries; a longer queue is written in several. */
export const MAX_GROUP = 256;

export interface GroupCommit {
  /** `work` in the next group transaction; `refused` maps its error (or the transaction's) to what the caller gets. */
  run<T>(work: () => T, refused?: (error: unknown) => unknown): Promise<T>;
  /** Runs inside every group transaction from now on that ends the queue, after its items. */
  beforeCommit(fn: () => void): void;
  /** Commits what is waiting now, without waiting for the window (nothing waiting: nothing happens). */
  commitNow(): void;
}

interface Item {
  readonly work: () => unknown;
  readonly refused: (error: unknown) => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

const same = (error: unknown) => error;

/**
 * A group commit on `client`. The product's is the main store's (storage/store.ts
 * `SqliteStore.group`), made once with it and shared by every writer through it; tests make their
 * own (another window).
 */
export function createGroupCommit(client: Database, windowMs: number = GROUP_WINDOW_MS): GroupCommit {
  let queue: Item[] = [];
  let timer: ReturnType<typeof setTimeout> | null = null;
  const hooks: (() => void)[] = [];

  function commitNow(): void {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    while (queue.length > 0) {
      const batch = queue.length <= MAX_GROUP ? queue : queue.slice(0, MAX_GROUP);
      queue = queue.length <= MAX_GROUP ? [] : queue.slice(MAX_GROUP);
      const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
      try {
        client
          .transaction(() => {
            for (const item of batch) {
              try {
                outcomes.push({ ok: true, value: item.work() });
              } catch (error) {
                outcomes.push({ ok: false, error });
              }
            }
            // Once the queue is written: after every item the caller's reschedules may be about.
            if (queue.length === 0) for (const hook of hooks) hook();
          })
          .immediate();
      } catch (error) {
        for (const item of batch) item.reject(item.refused(error));
        continue;
      }
      batch.forEach((item, i) => {
        const o = outcomes[i]!;
        if (o.ok) item.resolve(o.value);
        else item.reject(item.refused(o.error));
      });
    }
  }

  return {
    run<T>(work: () => T, refused: (error: unknown) => unknown = same): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({ work, refused, resolve: resolve as (value: unknown) => void, reject });
        // After the handlers, signing answers and ledger answers of the window have queued theirs too.
        timer ??= setTimeout(commitNow, windowMs);
      });
    },
    beforeCommit(fn) {
      hooks.push(fn);
    },
    commitNow,
  };
}
