/**
 * Records by anchor state on PostgreSQL (records/ports.ts `RecordCountReads`): one statement,
 * answered with a promise; counted again at most once a second, so that scrapers never load the
 * database.
 */
import type { RecordAnchorState, RecordCountReads } from "../../records/ports.ts";
import type { PostgresStore } from "../pg-store.ts";
import { RECORD_COUNTS } from "../receipt-statements.ts";
import { firstRow, q, type Body } from "../store.ts";

export function postgresRecordCountReads(store: PostgresStore): RecordCountReads {
  return { count: () => store.read(byState), refreshMs: 1000 };
}

/** The four counts in one statement, every state present. */
const byState: Body<Record<RecordAnchorState, number>> = function* () {
  const row = yield* q(firstRow(RECORD_COUNTS));
  return { pending: row?.pending ?? 0, accepted: row?.accepted ?? 0, anchored: row?.anchored ?? 0, abandoned: row?.abandoned ?? 0 };
};
