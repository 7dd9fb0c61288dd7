/**
 * The verification log's storage on SQLite (verification/log/ports.ts `LogStore`): every read
 * answered synchronously on the main connection, with its data version (pages kept in memory).
 *
 * Appends: without `writerThread` (tests, tools), one IMMEDIATE transaction on the calling thread,
 * synchronously. With it (what `serve` uses), a worker thread with its own connection to the same
 * file writes each batch (storage/writer-thread.ts): the inserts, the commit and its fsync never
 * hold the event loop; its commits are claimed in the main connection's data version, as they only
 * insert rows no read kept under `others()` depends on.
 *
 * Expired rows are deleted on the main connection, in a transaction that never waits for the
 * write lock (busy_timeout 0 for that moment).
 */
import type { LogPageQuery, LogRow, LogSummaryRow, SyncLogStore } from "../../verification/log/ports.ts";
import { isBusy } from "../../lib/storage-faults.ts";
import { logPageArgs } from "../log-page.ts";
import { DELETE_EXPIRED_LOG_ROWS } from "../statements.ts";
import type { SqliteStore } from "../store.ts";
import { onFirstUse } from "./first-use.ts";
import { LOG_ROW_BY_ID, logPage, logPageIds, NEWEST_LOG_ID, SQLITE_INSERT_LOG_ROW } from "../verification-statements.ts";
import { createWriterThread, WriterBusyError, type WriterThread } from "../writer-thread.ts";

export interface SqliteLogStoreOptions {
  /**
   * Write on a worker thread with its own connection to this database file (`path`, the main
   * connection's). `entry` is for tests only. Default: on the calling thread.
   */
  readonly writerThread?: { readonly path: string; readonly entry?: URL };
}

type Values = [string, string, string, string, string, string, string | null, number, number | null];

/** A row's values in the insert's column order. */
function valuesOf(r: LogRow): Values {
  return [r.id, r.org_id, r.environment, r.key_id, r.verdict, r.doc_hash, r.reference, r.verified_at_ms, r.retry_after_seconds ?? null];
}

export function sqliteLogStore(store: SqliteStore, options: SqliteLogStoreOptions = {}): SyncLogStore {
  const client = store.db.$client;
  const newest = onFirstUse(() => client.prepare<{ id: string }, []>(NEWEST_LOG_ID.sqlite));
  const insertRow = onFirstUse(() => client.prepare<never, Values>(SQLITE_INSERT_LOG_ROW));
  const insertBatch = client.transaction((rows: readonly LogRow[]) => {
    for (const r of rows) insertRow().run(...valuesOf(r));
  });
  const writer: WriterThread | null =
    options.writerThread === undefined ? null : createWriterThread({ ...options.writerThread, statements: [SQLITE_INSERT_LOG_ROW], ...(store.version.claims === null ? {} : { claims: store.version.claims }) });

  const listStatements = new Map<number, ReturnType<typeof client.prepare<LogSummaryRow, (string | number)[]>>>();
  const listStatement = (mask: number) => {
    let st = listStatements.get(mask);
    if (st === undefined) listStatements.set(mask, (st = client.prepare<LogSummaryRow, (string | number)[]>(logPage(mask).sqlite)));
    return st;
  };
  const idStatements = new Map<number, ReturnType<typeof client.prepare<{ id: string }, (string | number)[]>>>();
  const idStatement = (mask: number) => {
    let st = idStatements.get(mask);
    if (st === undefined) idStatements.set(mask, (st = client.prepare<{ id: string }, (string | number)[]>(logPageIds(mask).sqlite)));
    return st;
  };
  const byId = onFirstUse(() => client.prepare<LogRow, [string, string, string]>(LOG_ROW_BY_ID.sqlite));
  const deleteOldest = onFirstUse(() => client.prepare<never, [string, number]>(DELETE_EXPIRED_LOG_ROWS.sqlite));
  const busyTimeout = onFirstUse(() => client.prepare<{ timeout: number }, []>("PRAGMA busy_timeout"));

  const page = (query: LogPageQuery): LogSummaryRow[] => {
    const { mask, args } = logPageArgs(query);
    return listStatement(mask).all(...args);
  };
  const pageIds = (query: LogPageQuery): string[] => {
    const { mask, args } = logPageArgs(query);
    return idStatement(mask)
      .values(...args)
      .map((r) => r[0] as string);
  };

  return {
    newestId: () => newest().get()?.id ?? null,

    append(rows) {
      if (writer === null) {
        // IMMEDIATE: take the write lock first, so the transaction cannot fail half-way on an upgrade.
        insertBatch.immediate(rows);
        return;
      }
      return writer.write(SQLITE_INSERT_LOG_ROW, rows.map(valuesOf)).catch((e: unknown) => {
        // The thread's connection was refused the lock for its whole busy timeout: SQLite's code, as the port says.
        throw e instanceof WriterBusyError ? Object.assign(e, { code: "SQLITE_BUSY" }) : e;
      });
    },

    page,
    row: (id, orgId, environment) => byId().get(id, orgId, environment) ?? undefined,
    kept: { dataVersion: () => store.version.current(), page, pageIds },

    /**
     * One batch in one IMMEDIATE transaction that does not wait for the write lock: busy_timeout
     * is 0 for that moment (nothing else runs in between: this is synchronous) and restored after.
     * Null when another connection holds the lock.
     */
    deleteExpired(floor, limit) {
      const saved = busyTimeout().get()?.timeout ?? 5000;
      client.run("PRAGMA busy_timeout = 0");
      try {
        return client.transaction(() => deleteOldest().run(floor, limit).changes).immediate();
      } catch (e) {
        if (isBusy(e)) return null;
        throw e;
      } finally {
        client.run(`PRAGMA busy_timeout = ${Math.trunc(saved)}`);
      }
    },

    releaseMemory() {
      writer?.releaseMemory();
    },

    async close() {
      await writer?.close();
    },
  };
}
