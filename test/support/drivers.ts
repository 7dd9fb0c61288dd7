/**
 * Each capability's ports for a store of either engine, for the tests that run one suite on both
 * (the service itself never chooses: src/app/sqlite.ts and src/app/postgres.ts each hand their
 * engine's drivers, storage/sqlite/drivers.ts or storage/postgres/drivers.ts).
 */
import type { AdminReads } from "../../src/admin/ports.ts";
import type { Journal, JournalRules } from "../../src/anchoring/journal/ports.ts";
import type { LoopStorage, LoopStorageNow } from "../../src/anchoring/loop/ports.ts";
import type { CredentialReads } from "../../src/keys/ports.ts";
import type { ReceiptSource } from "../../src/receipts/ports.ts";
import type { RecordPorts, SyncRecordKeyStore } from "../../src/records/ports.ts";
import type { EngineDrivers } from "../../src/storage/engine-drivers.ts";
import type { PostgresStore } from "../../src/storage/pg-store.ts";
import { postgresDrivers } from "../../src/storage/postgres/drivers.ts";
import { sqliteDrivers, type SqliteDrivers } from "../../src/storage/sqlite/drivers.ts";
import type { SqliteLogStoreOptions } from "../../src/storage/sqlite/log-store.ts";
import type { SqliteStore, Store } from "../../src/storage/store.ts";
import type { LogStore, SyncLogStore } from "../../src/verification/log/ports.ts";
import type { SyncVerificationReads, VerificationReads } from "../../src/verification/ports.ts";

function driversOf(store: SqliteStore): SqliteDrivers;
function driversOf(store: Store, options?: { readonly epoch?: () => number | null }): EngineDrivers;
function driversOf(store: Store, options: { readonly epoch?: () => number | null } = {}): EngineDrivers {
  return store.engine === "sqlite" ? sqliteDrivers(store as SqliteStore) : postgresDrivers(store as PostgresStore, options);
}

export function verificationDrivers(store: SqliteStore): { readonly reads: SyncVerificationReads };
export function verificationDrivers(store: Store): { readonly reads: VerificationReads };
export function verificationDrivers(store: Store): { readonly reads: VerificationReads } {
  return driversOf(store).verification();
}

export function logDrivers(store: SqliteStore, options?: SqliteLogStoreOptions): { readonly log: SyncLogStore };
export function logDrivers(store: Store, options?: SqliteLogStoreOptions): { readonly log: LogStore };
export function logDrivers(store: Store, options: SqliteLogStoreOptions = {}): { readonly log: LogStore } {
  return store.engine === "sqlite" ? sqliteDrivers(store as SqliteStore).log(options) : driversOf(store).log(options);
}

export function recordsDrivers(store: SqliteStore): RecordPorts & { readonly keys: SyncRecordKeyStore };
export function recordsDrivers(store: Store): RecordPorts;
export function recordsDrivers(store: Store): RecordPorts {
  return driversOf(store).records();
}

export function receiptsDrivers(store: Store): { readonly reads: ReceiptSource } {
  return driversOf(store).receipts();
}

export function keysDrivers(store: Store): { readonly credentials: CredentialReads } {
  return driversOf(store).keys();
}

export function adminDrivers(store: Store): { readonly reads: AdminReads } {
  return driversOf(store).admin();
}

export function anchoringDrivers(store: SqliteStore): { readonly loop: LoopStorageNow };
export function anchoringDrivers(store: Store): { readonly loop: LoopStorage };
export function anchoringDrivers(store: Store): { readonly loop: LoopStorage } {
  return driversOf(store).anchoring();
}

/** On PostgreSQL, `epoch` fences the journal's changes (the leader's; null while it does not lead). */
export function journalDrivers(store: Store, options: { readonly epoch?: () => number | null } = {}): { journal(rules: JournalRules): Journal } {
  return driversOf(store, options).journal();
}
