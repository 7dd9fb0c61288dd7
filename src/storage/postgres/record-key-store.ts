/**
 * The seal key's and key announcements' store on PostgreSQL (records/ports.ts `RecordKeyStore`):
 * the store's own reads and SERIALIZABLE writes, with promises.
 */
import type { RecordKeyStore } from "../../records/ports.ts";
import type { PostgresStore } from "../pg-store.ts";

export function postgresRecordKeyStore(store: PostgresStore): RecordKeyStore {
  return { read: (body) => store.read(body), write: (body) => store.write(body) };
}
