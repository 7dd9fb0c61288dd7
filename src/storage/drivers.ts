/**
 * Each capability's ports, implemented for the engine of a store: the one place outside the
 * composition (src/app/) that tells the engines apart. SQLite's drivers are in storage/sqlite/,
 * PostgreSQL's in storage/postgres/ (docs/storage.md, "Ports and drivers"; docs/architecture.md,
 * "Where things go"). The composition and the tests that run on both engines call these; a
 * capability never does (test/layout.test.ts): it is handed its ports.
 */
import type { AdminReads } from "../admin/ports.ts";
import type { CredentialReads } from "../keys/ports.ts";
import type { Journal, JournalRules } from "../anchoring/journal/ports.ts";
import type { LogStore, SyncLogStore } from "../verification/log/ports.ts";
import type { LoopStorage, LoopStorageNow } from "../anchoring/loop/ports.ts";
import type { PostgresStore } from "./pg-store.ts";
import type { ReceiptSource } from "../receipts/ports.ts";
import type { RecordCountReads, RecordKeyStore, RecordWrites, SyncRecordKeyStore } from "../records/ports.ts";
import type { SqliteStore, Store } from "./store.ts";
import type { SyncVerificationReads, VerificationReads } from "../verification/ports.ts";
import { postgresAdminReads } from "./postgres/admin-reads.ts";
import { postgresCredentialReads } from "./postgres/credential-reads.ts";
import { postgresJournal } from "./postgres/journal.ts";
import { postgresLogStore } from "./postgres/log-store.ts";
import { postgresLoopStorage } from "./postgres/loop-storage.ts";
import { postgresReceiptReads } from "./postgres/receipt-reads.ts";
import { postgresRecordCountReads } from "./postgres/record-count-reads.ts";
import { postgresRecordKeyStore } from "./postgres/record-key-store.ts";
import { postgresRecordWrites } from "./postgres/record-writes.ts";
import { postgresVerificationReads } from "./postgres/verification-reads.ts";
import { sqliteAdminReads } from "./sqlite/admin-reads.ts";
import { sqliteCredentialReads } from "./sqlite/credential-reads.ts";
import { sqliteJournal } from "./sqlite/journal.ts";
import { sqliteLogStore, type SqliteLogStoreOptions } from "./sqlite/log-store.ts";
import { sqliteLoopStorage } from "./sqlite/loop-storage.ts";
import { sqliteReceiptReads } from "./sqlite/receipt-reads.ts";
import { sqliteRecordCountReads } from "./sqlite/record-count-reads.ts";
import { sqliteRecordKeyStore } from "./sqlite/record-key-store.ts";
import { sqliteRecordWrites } from "./sqlite/record-writes.ts";
import { sqliteVerificationReads } from "./sqlite/verification-reads.ts";

// ---- verification --------------------------------------------------------------------------------

/**
 * Verification's storage drivers for a store's engine (verification/ports.ts): what the
 * composition root hands `createVerifier`.
 */
export function verificationDrivers(store: SqliteStore): { readonly reads: SyncVerificationReads };
export function verificationDrivers(store: Store): { readonly reads: VerificationReads };
export function verificationDrivers(store: Store): { readonly reads: VerificationReads } {
  return { reads: store.engine === "sqlite" ? sqliteVerificationReads(store as SqliteStore) : postgresVerificationReads(store as PostgresStore) };
}

// ---- log -----------------------------------------------------------------------------------------

/**
 * The verification log's storage driver for the store's engine (verification/log/ports.ts): what
 * the composition root hands to createVerificationLog and createLogRetention.
 */
export function logDrivers(store: SqliteStore, options?: SqliteLogStoreOptions): { log: SyncLogStore };
export function logDrivers(store: Store, options?: SqliteLogStoreOptions): { log: LogStore };
/** `options.writerThread` is for SQLite only (a TypeError on PostgreSQL). */
export function logDrivers(store: Store, options: SqliteLogStoreOptions = {}): { log: LogStore } {
  if (store.engine === "sqlite") return { log: sqliteLogStore(store as SqliteStore, options) };
  if (options.writerThread !== undefined) throw new TypeError("writerThread is for SQLite only");
  return { log: postgresLogStore(store) };
}

// ---- records -------------------------------------------------------------------------------------

/**
 * The records capability's ports (records/ports.ts) for a store, on its engine: what the
 * composition root hands to the records factories. Loads no PostgreSQL client: the PostgreSQL
 * drivers use only the store they are given.
 */
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

// ---- receipts ------------------------------------------------------------------------------------

/**
 * The storage drivers of receipts (receipts/ports.ts) for the store's engine. The PostgreSQL
 * driver names pg-store.ts by type only: the embedded appliance loads no PostgreSQL client.
 */
export function receiptsDrivers(store: Store): { readonly reads: ReceiptSource } {
  return { reads: store.engine === "sqlite" ? sqliteReceiptReads(store as SqliteStore) : postgresReceiptReads(store as PostgresStore) };
}

// ---- keys ----------------------------------------------------------------------------------------

/**
 * The storage drivers of the keys capability (keys/ports.ts) for the store's engine. The
 * PostgreSQL driver names pg-store.ts by type only: the embedded appliance loads no PostgreSQL
 * client.
 */
export function keysDrivers(store: Store): { readonly credentials: CredentialReads } {
  return { credentials: store.engine === "sqlite" ? sqliteCredentialReads(store as SqliteStore) : postgresCredentialReads(store as PostgresStore) };
}

// ---- admin ---------------------------------------------------------------------------------------

/**
 * The storage drivers of the administrator's views (admin/ports.ts) for the store's engine. The
 * PostgreSQL driver names pg-store.ts by type only: the embedded appliance loads no PostgreSQL
 * client.
 */
export function adminDrivers(store: Store): { readonly reads: AdminReads } {
  return { reads: store.engine === "sqlite" ? sqliteAdminReads(store as SqliteStore) : postgresAdminReads(store as PostgresStore) };
}

// ---- anchoring -----------------------------------------------------------------------------------

/**
 * The anchor loop's storage drivers for a store (anchoring/loop/ports.ts): the composition root
 * calls this and hands the ports to the loop.
 */
export function anchoringDrivers(store: SqliteStore): { loop: LoopStorageNow };
export function anchoringDrivers(store: Store): { loop: LoopStorage };
export function anchoringDrivers(store: Store): { loop: LoopStorage } {
  return { loop: store.engine === "sqlite" ? sqliteLoopStorage(store as SqliteStore) : postgresLoopStorage(store as PostgresStore) };
}

// ---- journal -------------------------------------------------------------------------------------

/**
 * The anchor journal's driver for the store's engine (the `Journal` port,
 * anchoring/journal/ports.ts): the embedded SQLite's, group-committed with record writes on its
 * connection, or PostgreSQL's, every change fenced by `epoch` (the anchor loop's leader's, null
 * while this node does not lead). The journal is built once the loop has its clock and
 * transaction ids: the composition root passes `rules` (anchoring/journal/rules.ts `journalRules`).
 * Neither driver loads the PostgreSQL client (storage/pg-store.ts).
 */
export function journalDrivers(store: Store, options: { readonly epoch?: () => number | null } = {}): { journal(rules: JournalRules): Journal } {
  if (store.engine === "sqlite") {
    const sqlite = store as SqliteStore;
    return { journal: (rules) => sqliteJournal(sqlite, rules) };
  }
  const epoch = options.epoch;
  if (epoch === undefined) throw new TypeError("the PostgreSQL journal needs the leader's epoch");
  return { journal: (rules) => postgresJournal(store as PostgresStore, rules, epoch) };
}
