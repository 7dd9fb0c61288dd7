/**
 * The pragmas every connection to the service's database runs first, in this order: the main
 * connection (src/storage/db.ts) and the writer thread's (src/storage/writer-worker.ts), which
 * must not load drizzle to get them.
 */
export const BUSY_TIMEOUT_MS = 5000;

export const PRAGMAS = [
  `PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`,
  "PRAGMA journal_mode = WAL",
  "PRAGMA foreign_keys = ON",
  "PRAGMA synchronous = FULL",
] as const;
