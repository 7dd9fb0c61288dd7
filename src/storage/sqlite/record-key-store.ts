/**
 * The seal key's and key announcements' store on the embedded SQLite (records/ports.ts
 * `RecordKeyStore`): every operation synchronous, a write in its own IMMEDIATE transaction.
 */
import type { SyncRecordKeyStore } from "../../records/ports.ts";
import type { SqliteStore } from "../store.ts";

export function sqliteRecordKeyStore(store: SqliteStore): SyncRecordKeyStore {
  return { read: (body) => store.readSync(body), write: (body) => store.writeSync(body) };
}
