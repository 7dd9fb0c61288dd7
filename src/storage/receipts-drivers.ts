/**
 * The storage drivers of receipts (receipts/ports.ts) for the store's engine. The PostgreSQL
 * driver names pg-store.ts by type only: the embedded appliance loads no PostgreSQL client.
 */
import type { ReceiptSource } from "../receipts/ports.ts";
import type { PostgresStore } from "./pg-store.ts";
import { postgresReceiptReads } from "./postgres/receipt-reads.ts";
import { sqliteReceiptReads } from "./sqlite/receipt-reads.ts";
import type { SqliteStore, Store } from "./store.ts";

export function receiptsDrivers(store: Store): { readonly reads: ReceiptSource } {
  return { reads: store.engine === "sqlite" ? sqliteReceiptReads(store as SqliteStore) : postgresReceiptReads(store as PostgresStore) };
}
