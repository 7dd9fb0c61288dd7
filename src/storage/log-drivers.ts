/**
 * The verification log's storage driver for the store's engine (verification/log/ports.ts): what
 * the composition root hands to createVerificationLog and createLogRetention.
 */
import type { LogStore, SyncLogStore } from "../verification/log/ports.ts";
import { postgresLogStore } from "./postgres/log-store.ts";
import { sqliteLogStore, type SqliteLogStoreOptions } from "./sqlite/log-store.ts";
import type { SqliteStore, Store } from "./store.ts";

export function logDrivers(store: SqliteStore, options?: SqliteLogStoreOptions): { log: SyncLogStore };
export function logDrivers(store: Store, options?: SqliteLogStoreOptions): { log: LogStore };
/** `options.writerThread` is for SQLite only (a TypeError on PostgreSQL). */
export function logDrivers(store: Store, options: SqliteLogStoreOptions = {}): { log: LogStore } {
  if (store.engine === "sqlite") return { log: sqliteLogStore(store as SqliteStore, options) };
  if (options.writerThread !== undefined) throw new TypeError("writerThread is for SQLite only");
  return { log: postgresLogStore(store) };
}
