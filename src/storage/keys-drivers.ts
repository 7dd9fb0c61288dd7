/**
 * The storage drivers of the keys capability (keys/ports.ts) for the store's engine. The
 * PostgreSQL driver names pg-store.ts by type only: the embedded appliance loads no PostgreSQL
 * client.
 */
import type { CredentialReads } from "../keys/ports.ts";
import type { PostgresStore } from "./pg-store.ts";
import { postgresCredentialReads } from "./postgres/credential-reads.ts";
import { sqliteCredentialReads } from "./sqlite/credential-reads.ts";
import type { SqliteStore, Store } from "./store.ts";

export function keysDrivers(store: Store): { readonly credentials: CredentialReads } {
  return { credentials: store.engine === "sqlite" ? sqliteCredentialReads(store as SqliteStore) : postgresCredentialReads(store as PostgresStore) };
}
