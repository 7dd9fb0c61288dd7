/**
 * Verification's storage drivers for a store's engine (verification/ports.ts): what the
 * composition root hands `createVerifier`.
 */
import type { SyncVerificationReads, VerificationReads } from "../verification/ports.ts";
import type { PostgresStore } from "./pg-store.ts";
import { postgresVerificationReads } from "./postgres/verification-reads.ts";
import { sqliteVerificationReads } from "./sqlite/verification-reads.ts";
import type { SqliteStore, Store } from "./store.ts";

export function verificationDrivers(store: SqliteStore): { readonly reads: SyncVerificationReads };
export function verificationDrivers(store: Store): { readonly reads: VerificationReads };
export function verificationDrivers(store: Store): { readonly reads: VerificationReads } {
  return { reads: store.engine === "sqlite" ? sqliteVerificationReads(store as SqliteStore) : postgresVerificationReads(store as PostgresStore) };
}
