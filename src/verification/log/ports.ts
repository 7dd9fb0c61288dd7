/**
 * What the verification log (service.ts) and its retention (../retention.ts) need of storage: one
 * port, `LogStore`, implemented per engine by src/storage/sqlite/log-store.ts and
 * src/storage/postgres/log-store.ts (each engine's drivers.ts). Types only.
 *
 * A method typed `Maybe<T>` (lib/maybe.ts) MAY answer synchronously (SQLite) or with a promise
 * (PostgreSQL); a synchronous answer that fails throws, an asynchronous one rejects.
 */
import type { Maybe } from "../../lib/maybe.ts";
import type { Environment } from "../types.ts";

/** A `verifications` row as the log stores and reads it (columns as in storage/schema.ts). */
export interface LogRow {
  readonly id: string;
  readonly org_id: string;
  readonly environment: Environment;
  readonly key_id: string;
  readonly verdict: string;
  readonly doc_hash: string;
  readonly reference: string | null;
  readonly verified_at_ms: number;
  readonly retry_after_seconds?: number | null;
}

/** A row as a page shows it. */
export type LogSummaryRow = Omit<LogRow, "key_id" | "retry_after_seconds">;

/** Which rows a page reads: one organisation and environment, its filters, newest first. */
export interface LogPageQuery {
  readonly orgId: string;
  readonly environment: string;
  readonly docHash?: string;
  readonly verdict?: string;
  /** Rows of millisecond `ms` or later; `id` is the smallest id that millisecond can have (ids.ts `idFloor`). */
  readonly from?: { readonly id: string; readonly ms: number };
  /** Rows of millisecond `ms` or earlier; `id` is the largest id that millisecond can have. */
  readonly to?: { readonly id: string; readonly ms: number };
  /** Rows whose id is smaller than this one only (the previous page's last row). */
  readonly before?: string;
  /** Rows to read at most. */
  readonly rows: number;
}

/** What retention needs: expired rows deleted, a batch at a time. */
export interface LogExpiry {
  /**
   * MUST delete, in one transaction of its own, at most `limit` rows whose id is below `floor`,
   * the smallest ids first (the primary key's order, no scan), and return how many it deleted.
   * MUST NOT wait for a write lock another connection holds: it returns null then, deleting
   * nothing (SQLite; PostgreSQL never returns null). Any other fault throws or rejects with the
   * engine's error. MAY answer synchronously.
   */
  deleteExpired(floor: string, limit: number): Maybe<number | null>;
}

/** Reads answered at once, and whether anything was committed since: what pages are kept in memory under. */
export interface KeptLogReads {
  /**
   * MUST return a number that changes whenever anything is committed to the database by any
   * connection or process (storage/data-version.ts `current()`), read at once.
   */
  dataVersion(): number;
  /** As `LogStore.page`, synchronously. */
  page(query: LogPageQuery): LogSummaryRow[];
  /** The ids alone of the rows `page(query)` returns, in the same order, synchronously. */
  pageIds(query: LogPageQuery): string[];
}

export interface LogStore extends LogExpiry {
  /** MUST return the greatest stored id (byte order), or null when the log is empty. MAY answer synchronously. */
  newestId(): Maybe<string | null>;
  /**
   * MUST store every row of `rows` in one transaction, all or none, and answer only once it has
   * committed durably (synced). The service starts an append only once the last one has settled,
   * so appends commit one at a time, in order. On a fault nothing is stored and it throws or
   * rejects with an error lib/storage-faults.ts classifies: `isBusy` on the error itself when
   * another connection held the write lock for the whole busy timeout; `storageFault` gives
   * `unavailable` when the database is not there (the error itself, or the cause of the store's
   * own 503); the engine's own error otherwise (a foreign key refused, ...). Every other method
   * reports faults the same way. MAY answer synchronously (SQLite on the calling thread) or with
   * a promise (SQLite's writer thread, PostgreSQL).
   */
  append(rows: readonly LogRow[]): Maybe<void>;
  /**
   * MUST return at most `query.rows` rows matching it, by id descending (byte order on both
   * engines), reading what is committed when it runs. MAY answer synchronously.
   */
  page(query: LogPageQuery): Maybe<LogSummaryRow[]>;
  /** MUST return the row with this id, organisation and environment, or undefined. MAY answer synchronously. */
  row(id: string, orgId: string, environment: string): Maybe<LogRow | undefined>;
  /**
   * Non-null when reads are answered synchronously and the engine can tell at no cost whether
   * anything was committed since (SQLite): the service then keeps pages and rows' text in memory.
   * Null otherwise (PostgreSQL: other nodes write the same database unseen).
   */
  readonly kept: KeptLogReads | null;
  /** Gives back memory the driver holds beyond its work (a writer thread's page cache). Never throws. */
  releaseMemory(): void;
  /** MUST settle once every append started has settled, then end what the driver started (its writer thread). Never rejects. */
  close(): Promise<void>;
}

/** A LogStore whose reads answer synchronously (SQLite's driver): the log's pages then do too. */
export interface SyncLogStore extends LogStore {
  newestId(): string | null;
  page(query: LogPageQuery): LogSummaryRow[];
  row(id: string, orgId: string, environment: string): LogRow | undefined;
  readonly kept: KeptLogReads;
}
