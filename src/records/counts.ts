/**
 * Records by anchor state, for /metrics and `docverify status`. Each state is one count over
 * the `records_anchor_state` index, never the table (each row holds kilobytes of signatures:
 * a table scan took 3.4 s on a million records, the index 40 ms). The counts of the states a
 * record passes through quickly are a handful of index entries; `anchored` is the long one.
 */
import { and, count, eq, isNull } from "drizzle-orm";
import { runMaybe, settled } from "../lib/maybe.ts";
import { q, type Body } from "../storage/store.ts";
import type { RecordAnchorState, RecordCountReads } from "./ports.ts";

export const ANCHOR_STATES = ["pending", "accepted", "anchored", "abandoned"] as const satisfies readonly RecordAnchorState[];

/** Records by anchor state; a state not counted yet is absent. */
export type RecordCounts = Readonly<Partial<Record<RecordAnchorState, number>>>;

export interface RecordCounterOptions {
  /** The least time between two counts, ms. Default: the port's `refreshMs` (0 on SQLite, 1000 on PostgreSQL). */
  readonly refreshMs?: number;
  /** A monotonic clock, ms (tests). Default `performance.now`. */
  readonly now?: () => number;
}

/**
 * The counts for each scrape of /metrics, which renders synchronously, written once over the
 * `RecordCountReads` port (ports.ts).
 * - Where counting answers synchronously (SQLite, `refreshMs` 0): counted at the scrape.
 * - Otherwise (PostgreSQL) the scrape never waits on the database. It gets the counts last
 *   counted (none before the first count, which starts at once, so the series appear once it is
 *   done), and a scrape finding them older than `refreshMs` starts a new count in the background:
 *   at most one count at a time and one a second, whatever the number of scrapers. The counts a
 *   scrape shows are therefore those of the previous scrape, or of about a second ago under
 *   frequent scrapes. A failed count keeps the previous counts and is tried again at the next
 *   scrape.
 */
export function recordCounter(reads: RecordCountReads, options: RecordCounterOptions = {}): () => RecordCounts {
  const { refreshMs = reads.refreshMs, now = () => performance.now() } = options;
  let counts: RecordCounts = {};
  let countedAt = -Infinity;
  let counting = false;
  const refresh = () => {
    counting = true;
    countedAt = now();
    // Synchronous where the port answers at once: `counts` is set (or the scrape throws) before it returns.
    const done = runMaybe(
      (function* () {
        try {
          counts = yield* settled(reads.count());
        } finally {
          counting = false;
        }
      })(),
    );
    // A failed background count keeps the previous counts.
    void Promise.resolve(done).catch(() => {});
  };
  if (reads.refreshMs > 0) refresh();
  return () => {
    if (!counting && now() - countedAt >= refreshMs) refresh();
    return counts;
  };
}

/**
 * The same counts as a read operation on either engine (storage/store.ts), for `docverify status`,
 * with the organisations that hold the add-on and still wait for their ledger topic.
 */
export function statusCounts(): Body<{ records: Record<RecordAnchorState, number>; organisationsAwaitingTopic: number }> {
  return function* (db, t) {
    const records = {} as Record<RecordAnchorState, number>;
    for (const state of ANCHOR_STATES) {
      const [row] = yield* q(db.select({ n: count() }).from(t.records).where(eq(t.records.anchorState, state)));
      records[state] = row?.n ?? 0;
    }
    const [awaiting] = yield* q(db.select({ n: count() }).from(t.organisations).where(and(eq(t.organisations.addon, true), isNull(t.organisations.topicId))));
    return { records, organisationsAwaitingTopic: awaiting?.n ?? 0 };
  };
}
