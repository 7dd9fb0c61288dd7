/**
 * The storage drivers of the administrator's views (admin/ports.ts) for the store's engine. The
 * PostgreSQL driver names pg-store.ts by type only: the embedded appliance loads no PostgreSQL
 * client.
 */
import type { AdminReads } from "../admin/ports.ts";
import type { PostgresStore } from "./pg-store.ts";
import { postgresAdminReads } from "./postgres/admin-reads.ts";
import { sqliteAdminReads } from "./sqlite/admin-reads.ts";
import type { SqliteStore, Store } from "./store.ts";

export function adminDrivers(store: Store): { readonly reads: AdminReads } {
  return { reads: store.engine === "sqlite" ? sqliteAdminReads(store as SqliteStore) : postgresAdminReads(store as PostgresStore) };
}
