/**
 * The verification log's storage on PostgreSQL (verification/log/ports.ts `LogStore`), through
 * the store (several nodes, one database): each batch is one multi-row INSERT in one transaction;
 * reads answer with a promise; nothing is kept in memory (other nodes write unseen). Expired rows
 * are deleted by their primary key, oldest first, a batch being one transaction among the others.
 * Loaded only by the PostgreSQL path (postgres/drivers.ts); it imports the PostgreSQL client nowhere.
 */
import type { LogPageQuery, LogRow, LogStore } from "../../verification/log/ports.ts";
import { logPageArgs } from "../log-page.ts";
import { DELETE_EXPIRED_LOG_ROWS } from "../statements.ts";
import { changes, firstRow, q, rows, type Store } from "../store.ts";
import { insertLogRows, LOG_ROW_BY_ID, logPage, NEWEST_LOG_ID } from "../verification-statements.ts";

/** A row's values in the insert's column order. */
function valuesOf(r: LogRow): (string | number | null)[] {
  return [r.id, r.org_id, r.environment, r.key_id, r.verdict, r.doc_hash, r.reference, r.verified_at_ms, r.retry_after_seconds ?? null];
}

export function postgresLogStore(store: Store): LogStore {
  /** This log's multi-row inserts, by batch size: built on first use of a size, kept with the log. */
  const inserts = new Map<number, ReturnType<typeof insertLogRows>>();
  const insertOf = (n: number) => {
    let st = inserts.get(n);
    if (st === undefined) inserts.set(n, (st = insertLogRows(n)));
    return st;
  };
  return {
    newestId: () => store.read(() => q(firstRow(NEWEST_LOG_ID))).then((newest) => newest?.id ?? null),

    async append(batch) {
      const values = batch.flatMap(valuesOf);
      await store.write(() => q(changes(insertOf(batch.length), ...values)));
    },

    page(query: LogPageQuery) {
      const { mask, args } = logPageArgs(query);
      return store.read(() => q(rows(logPage(mask), ...args)));
    },

    row: (id, orgId, environment) => store.read(() => q(firstRow(LOG_ROW_BY_ID, id, orgId, environment))),
    kept: null,

    deleteExpired: (floor, limit) => store.write(() => q(changes(DELETE_EXPIRED_LOG_ROWS, floor, limit))),

    releaseMemory() {},
    async close() {},
  };
}
