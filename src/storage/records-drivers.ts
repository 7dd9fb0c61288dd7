/**
 * The records capability's ports (records/ports.ts) for a store, on its engine: what the
 * composition root hands to the records factories. Loads no PostgreSQL client: the PostgreSQL
 * drivers use only the store they are given.
 */
import type { RecordCountReads, RecordKeyStore, RecordWrites, SyncRecordKeyStore } from "../records/ports.ts";
import type { PostgresStore } from "./pg-store.ts";
import { postgresRecordCountReads } from "./postgres/record-count-reads.ts";
import { postgresRecordKeyStore } from "./postgres/record-key-store.ts";
import { postgresRecordWrites } from "./postgres/record-writes.ts";
import { sqliteRecordCountReads } from "./sqlite/record-count-reads.ts";
import { sqliteRecordKeyStore } from "./sqlite/record-key-store.ts";
import { sqliteRecordWrites } from "./sqlite/record-writes.ts";
import type { SqliteStore, Store } from "./store.ts";

export interface RecordsDrivers {
  /** Record writes: SQLite's shared group commit of the connection; PostgreSQL READ COMMITTED. */
  readonly writes: RecordWrites;
  readonly keys: RecordKeyStore;
  readonly counts: RecordCountReads;
}

export function recordsDrivers(store: SqliteStore): RecordsDrivers & { readonly keys: SyncRecordKeyStore };
export function recordsDrivers(store: Store): RecordsDrivers;
export function recordsDrivers(store: Store): RecordsDrivers {
  if (store.engine === "sqlite") {
    const sqlite = store as SqliteStore;
    return { writes: sqliteRecordWrites(sqlite), keys: sqliteRecordKeyStore(sqlite), counts: sqliteRecordCountReads(sqlite) };
  }
  const postgres = store as PostgresStore;
  return { writes: postgresRecordWrites(postgres), keys: postgresRecordKeyStore(postgres), counts: postgresRecordCountReads(postgres) };
}
