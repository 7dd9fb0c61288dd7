/**
 * Opening the product's SQLite database. The pragmas are set in this order on purpose:
 *
 * 1. `busy_timeout` first: every later statement, even `journal_mode`, may need a lock that a
 *    concurrent process holds (the admin command line works on the same file while `serve`
 *    runs), and without a timeout it would fail at once with SQLITE_BUSY.
 * 2. `journal_mode=WAL`: readers never block the writer and the writer never blocks readers,
 *    so verification reads keep flowing while records are written. It is persistent in the file.
 * 3. `foreign_keys=ON`: off by default in SQLite and per connection; without it the schema's
 *    references are decoration.
 * 4. `synchronous=FULL`: in WAL mode, NORMAL may lose the last commits on power loss (they are
 *    durable only once checkpointed). We promise that an acknowledged 201 is never lost, so
 *    every commit syncs the WAL. Throughput comes from grouping writes, not from weaker sync.
 *
 * The database file and its side files are never symbolic links (data-folder.ts says why): a
 * link is refused with a message before SQLite opens anything, and once more after. (SQLite's
 * own SQLITE_OPEN_NOFOLLOW would close the gap between check and open, but bun:sqlite takes open
 * flags only without its `strict` option, which this connection keeps.)
 */
import { Database } from "bun:sqlite";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { refuseSymlinks, withSideFiles } from "./data-folder.ts";
import { PRAGMAS } from "./db-pragmas.ts";
import * as schema from "./schema.ts";

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database };

export { BUSY_TIMEOUT_MS, PRAGMAS } from "./db-pragmas.ts";

export interface OpenOptions {
  /** Path of the database file; `:memory:` for a throwaway database. */
  readonly path: string;
  readonly readonly?: boolean;
}

export function openDatabase(options: OpenOptions): Db {
  const onDisk = options.path !== ":memory:";
  if (onDisk) refuseSymlinks(withSideFiles(options.path));
  const isNew = onDisk && !existsSync(options.path);
  if (onDisk) mkdirSync(dirname(options.path), { recursive: true, mode: 0o700 });
  const sqlite = new Database(options.path, options.readonly ? { readonly: true } : { create: true, readwrite: true, strict: true });
  try {
    for (const pragma of PRAGMAS) {
      if (options.readonly && pragma.includes("journal_mode")) continue;
      sqlite.run(pragma);
    }
    // Again, now that SQLite holds the files open (the pragmas open the WAL and its index): a link
    // swapped in since the first check is refused too, before anything is written or chmodded.
    if (onDisk) refuseSymlinks(withSideFiles(options.path));
  } catch (e) {
    sqlite.close();
    throw e;
  }
  // The database holds key digests and encrypted private keys: owner-only, whatever the umask.
  // SQLite gives the -wal and -shm files the database file's permissions.
  if (isNew && !options.readonly) chmodSync(options.path, 0o600);
  return drizzle(sqlite, { schema }) as Db;
}

/**
 * Whether the database can be written: the write lock can be taken. `BEGIN IMMEDIATE` takes it
 * without writing a page, so a readiness probe every second costs no fsync.
 */
export function storageWritable(db: Db): true | string {
  try {
    db.$client.run("BEGIN IMMEDIATE");
    db.$client.run("ROLLBACK");
    return true;
  } catch (e) {
    return `storage not writable: ${(e as Error).message}`;
  }
}

/**
 * Gives back the connection's page cache (storage/db-pragmas.ts, up to 64 MiB): what it held is
 * read again from the file (from the system's page cache) when next needed.
 */
export function shrinkMemory(db: Db): void {
  db.$client.run("PRAGMA shrink_memory");
}
