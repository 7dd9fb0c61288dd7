/**
 * Record writes as the request path makes them: through the `RecordWrites` port (ports.ts; on
 * SQLite the store's group commit, on PostgreSQL one READ COMMITTED transaction each), with
 * a busy database turned into the domain's answer.
 *
 * Guarantees:
 * - `write` resolves only once what its operation wrote is committed and durable.
 * - An operation that throws rejects with its error; nothing of it is stored.
 * - When the cause is a lock held by another connection (SQLITE_BUSY, SQLITE_LOCKED: the admin
 *   command line, a backup, a second process on the data folder), the rejection is the domain's
 *   503 SERVICE_UNAVAILABLE with Retry-After, the database's error as its `cause`: the caller
 *   may retry, and nothing was written. Any other failure rejects with the error itself.
 */
import { DomainError } from "../lib/errors.ts";
import { isBusy } from "../lib/storage-faults.ts";
import type { Body } from "../storage/store.ts";
import type { RecordWrites } from "./ports.ts";

/** Where a record's write operation runs (and the person application's request-path writes). */
export interface RecordWriter {
  write<T>(body: Body<T>): Promise<T>;
}

/** Seconds a caller refused for a busy database waits before retrying. */
export const BUSY_RETRY_SECONDS = 1;

/** A busy database as the domain's 503 (Retry-After, the database's error as `cause`); any other error unchanged. */
export function busyAsUnavailable(e: unknown): unknown {
  if (!isBusy(e)) return e;
  return Object.assign(new DomainError("SERVICE_UNAVAILABLE", "The service is busy. Retry shortly.", undefined, BUSY_RETRY_SECONDS), { cause: e });
}

/** Record writes through `writes`, a busy database refused as 503. */
export function createWriteQueue(writes: RecordWrites): RecordWriter {
  return { write: (body) => writes.write(body, busyAsUnavailable) };
}
