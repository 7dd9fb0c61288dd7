/**
 * Record writes on PostgreSQL (records/ports.ts `RecordWrites`): one READ COMMITTED transaction
 * per operation. Records and the person application's request-path writes are guarded by their
 * own WHERE clauses and unique indexes (one active record per hash: insert or nothing; a
 * revocation only of a record not revoked; a challenge taken once), so READ COMMITTED keeps them
 * correct; SERIALIZABLE's page-level conflicts aborted concurrent creations and the anchor loop's
 * changes by the thousand under load (docs/storage.md, "The anchor loop on PostgreSQL").
 * PostgreSQL groups its own commits' WAL flushes.
 */
import type { RecordWrites } from "../../records/ports.ts";
import type { PostgresStore } from "../pg-store.ts";

export function postgresRecordWrites(store: PostgresStore): RecordWrites {
  return {
    write: (body, refused) => store.writeAt("read committed", body).catch((e: unknown) => Promise.reject(refused(e))),
  };
}
