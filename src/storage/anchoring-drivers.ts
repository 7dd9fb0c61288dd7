/**
 * The anchor loop's storage drivers for a store (anchoring/ports-loop.ts): the composition root
 * calls this and hands the ports to the loop.
 */
import type { LoopStorage, LoopStorageNow } from "../anchoring/ports-loop.ts";
import type { PostgresStore } from "./pg-store.ts";
import { postgresLoopStorage } from "./postgres/loop-storage.ts";
import { sqliteLoopStorage } from "./sqlite/loop-storage.ts";
import type { SqliteStore, Store } from "./store.ts";

export function anchoringDrivers(store: SqliteStore): { loop: LoopStorageNow };
export function anchoringDrivers(store: Store): { loop: LoopStorage };
export function anchoringDrivers(store: Store): { loop: LoopStorage } {
  return { loop: store.engine === "sqlite" ? sqliteLoopStorage(store as SqliteStore) : postgresLoopStorage(store as PostgresStore) };
}
