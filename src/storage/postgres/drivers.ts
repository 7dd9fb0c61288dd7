/**
 * Every capability's ports on PostgreSQL, over one store (storage/engine-drivers.ts): promises,
 * the journal's changes fenced by the anchor loop's leader's epoch. What app/postgres.ts and
 * app/core.ts's PostgreSQL core hand the services; loaded only with DOCVERIFY_DATABASE_URL.
 */
import type { EngineDrivers } from "../engine-drivers.ts";
import type { PostgresStore } from "../pg-store.ts";
import { postgresAdminReads } from "./admin-reads.ts";
import { postgresCredentialReads } from "./credential-reads.ts";
import { postgresJournal } from "./journal.ts";
import { postgresLogStore } from "./log-store.ts";
import { postgresLoopStorage } from "./loop-storage.ts";
import { postgresReceiptReads } from "./receipt-reads.ts";
import { postgresRecordCountReads } from "./record-count-reads.ts";
import { postgresRecordKeyStore } from "./record-key-store.ts";
import { postgresRecordWrites } from "./record-writes.ts";
import { postgresVerificationReads } from "./verification-reads.ts";

/**
 * `epoch`: the anchor loop's leader's epoch, null while this node does not lead; the journal's
 * every change is fenced by it. Only a node that runs the loop asks for the journal.
 */
export function postgresDrivers(store: PostgresStore, options: { readonly epoch?: () => number | null } = {}): EngineDrivers {
  return {
    verification: () => ({ reads: postgresVerificationReads(store) }),
    log: (logOptions = {}) => {
      if (logOptions.writerThread !== undefined) throw new TypeError("writerThread is for SQLite only");
      return { log: postgresLogStore(store) };
    },
    records: () => ({ writes: postgresRecordWrites(store), keys: postgresRecordKeyStore(store), counts: postgresRecordCountReads(store) }),
    receipts: () => ({ reads: postgresReceiptReads(store) }),
    keys: () => ({ credentials: postgresCredentialReads(store) }),
    admin: () => ({ reads: postgresAdminReads(store) }),
    anchoring: () => ({ loop: postgresLoopStorage(store) }),
    journal: () => {
      const epoch = options.epoch;
      if (epoch === undefined) throw new TypeError("the PostgreSQL journal needs the leader's epoch");
      return { journal: (rules) => postgresJournal(store, rules, epoch) };
    },
  };
}
