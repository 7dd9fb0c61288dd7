/**
 * Records by anchor state on the embedded SQLite (records/ports.ts `RecordCountReads`): counted
 * synchronously at every scrape, each state one count over the `records_anchor_state` index
 * (a table scan took 3.4 s on a million records, the index 40 ms).
 */
import type { RecordAnchorState, RecordCountReads } from "../../records/ports.ts";
import { RECORD_COUNTS } from "../receipt-statements.ts";
import { firstRow, q, type Body, type SqliteStore } from "../store.ts";

export function sqliteRecordCountReads(store: SqliteStore): RecordCountReads {
  return { count: () => store.readSync(byState), refreshMs: 0 };
}

/** The four counts in one statement, every state present. */
const byState: Body<Record<RecordAnchorState, number>> = function* () {
  const row = yield* q(firstRow(RECORD_COUNTS));
  return { pending: row?.pending ?? 0, accepted: row?.accepted ?? 0, anchored: row?.anchored ?? 0, abandoned: row?.abandoned ?? 0 };
};
