/**
 * Every capability's ports on the embedded SQLite, over one store (storage/engine-drivers.ts):
 * synchronous where the capability may answer at once (the Sync variants), group-committed with
 * the connection's other writes. What app/sqlite.ts and app/core.ts hand the services.
 */
import type { SyncLogStore } from "../../verification/log/ports.ts";
import type { SyncRecordKeyStore } from "../../records/ports.ts";
import type { SyncVerificationReads } from "../../verification/ports.ts";
import type { LoopStorageNow } from "../../anchoring/loop/ports.ts";
import type { EngineDrivers } from "../engine-drivers.ts";
import type { SqliteStore } from "../store.ts";
import { sqliteAdminReads } from "./admin-reads.ts";
import { sqliteCredentialReads } from "./credential-reads.ts";
import { sqliteJournal } from "./journal.ts";
import { sqliteLogStore, type SqliteLogStoreOptions } from "./log-store.ts";
import { sqliteLoopStorage } from "./loop-storage.ts";
import { sqliteReceiptReads } from "./receipt-reads.ts";
import { sqliteRecordCountReads } from "./record-count-reads.ts";
import { sqliteRecordKeyStore } from "./record-key-store.ts";
import { sqliteRecordWrites } from "./record-writes.ts";
import { sqliteVerificationReads } from "./verification-reads.ts";

export interface SqliteDrivers extends EngineDrivers {
  readonly verification: () => { readonly reads: SyncVerificationReads };
  readonly log: (options?: SqliteLogStoreOptions) => { readonly log: SyncLogStore };
  readonly records: () => ReturnType<EngineDrivers["records"]> & { readonly keys: SyncRecordKeyStore };
  readonly anchoring: () => { readonly loop: LoopStorageNow };
}

export function sqliteDrivers(store: SqliteStore): SqliteDrivers {
  return {
    verification: () => ({ reads: sqliteVerificationReads(store) }),
    log: (options = {}) => ({ log: sqliteLogStore(store, options) }),
    records: () => ({ writes: sqliteRecordWrites(store), keys: sqliteRecordKeyStore(store), counts: sqliteRecordCountReads(store) }),
    receipts: () => ({ reads: sqliteReceiptReads(store) }),
    keys: () => ({ credentials: sqliteCredentialReads(store) }),
    admin: () => ({ reads: sqliteAdminReads(store) }),
    anchoring: () => ({ loop: sqliteLoopStorage(store) }),
    journal: () => ({ journal: (rules) => sqliteJournal(store, rules) }),
  };
}
