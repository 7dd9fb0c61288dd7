/**
 * Records by anchor state, for /metrics and `docverify status`. Each state is one count over
 * the `records_anchor_state` index, never the table (each row holds kilobytes of signatures:
 * a table scan took 3.4 s on a million records, the index 40 ms). The counts of the states a
 * record passes through quickly are a handful of index entries; `anchored` is the long one.
 */
import { and, count, eq, isNull } from "drizzle-orm";
import { RECORD_COUNTS } from "../storage/receipt-statements.ts";
import { firstRow, q, type Body, type SqliteStore, type Store } from "../storage/store.ts";

export const ANCHOR_STATES = ["pending", "accepted", "anchored", "abandoned"] as const;
export type RecordAnchorState = (typeof ANCHOR_STATES)[number];

/** Records by anchor state; a state not counted yet is absent. */
export type RecordCounts = Readonly<Partial<Record<RecordAnchorState, number>>>;

/** The four counts in one statement, as a read operation on either engine. */
export function recordCounts(): Body<Record<RecordAnchorState, number>> {
  return function* () {
    const row = yield* q(firstRow(RECORD_COUNTS));
    const out = {} as Record<RecordAnchorState, number>;
    for (const state of ANCHOR_STATES) out[state] = row?.[state] ?? 0;
    return out;
  };
}

export interface RecordCounterOptions {
  /** PostgreSQL only: the counts are counted again at most this often, ms. Default 1000. */
  readonly refreshMs?: number;
  /** PostgreSQL only: a monotonic clock, ms (tests). Default `performance.now`. */
  readonly now?: () => number;
}

/**
 * The counts for each scrape of /metrics, which renders synchronously.
 * - SQLite: counted at the scrape, synchronously (40 ms on a million records).
 * - PostgreSQL: the scrape never waits on the database. It gets the counts last counted (none
 *   before the first count, which starts at once, so the series appear once it is done), and a
 *   scrape finding them older than `refreshMs` starts a new count in the background: at most one
 *   count at a time and one a second, whatever the number of scrapers. The counts a scrape shows
 *   are therefore those of the previous scrape, or of about a second ago under frequent scrapes. A
 *   failed count keeps the previous counts and is tried again at the next scrape.
 */
export function recordCounter(store: Store, options: RecordCounterOptions = {}): () => RecordCounts {
  if (store.engine === "sqlite") {
    const sqlite = store as SqliteStore;
    return () => sqlite.readSync(recordCounts());
  }
  const { refreshMs = 1000, now = () => performance.now() } = options;
  let counts: RecordCounts = {};
  let countedAt = -Infinity;
  let counting = false;
  const refresh = () => {
    counting = true;
    countedAt = now();
    store.read(recordCounts()).then(
      (c) => {
        counts = c;
        counting = false;
      },
      () => {
        counting = false;
      },
    );
  };
  refresh();
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
