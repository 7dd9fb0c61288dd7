/**
 * Composition root: builds storage, services and the HTTP surface from the settings, and
 * returns one `close()` that undoes it all in reverse. Nothing here is a module-level
 * singleton; tests build as many apps as they like, each on its own data folder.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "./config/index.ts";
import { createHttp, type AnyElysia, type Http } from "./http/server.ts";
import { systemClock, type Clock } from "./lib/clock.ts";
import type { Logger } from "./lib/log.ts";
import { openDatabase, type Db } from "./storage/db.ts";
import { metaValue } from "./storage/meta.ts";
import { migrate } from "./storage/migrate.ts";
import { VERSION, COMMIT } from "./version.ts";

export interface App {
  readonly config: Config;
  readonly db: Db;
  readonly http: Http;
  readonly instanceId: string;
  readonly clock: Clock;
  /** Stops background work and closes storage. Idempotent. */
  close(): Promise<void>;
}

export interface AppOptions {
  readonly config: Config;
  readonly log: Logger;
  readonly clock?: Clock;
  /** Extra route plugins, for tests of the shared HTTP machinery. */
  readonly plugins?: readonly AnyElysia[];
}

export const DATABASE_FILE = "docverify.db";

export async function createApp(options: AppOptions): Promise<App> {
  const { config, log } = options;
  const clock = options.clock ?? systemClock;
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const db = openDatabase({ path: join(config.dataDir, DATABASE_FILE) });
  try {
    const { applied } = migrate(db);
    if (applied > 0) log.info("storage migrated", { applied });
  } catch (e) {
    db.$client.close();
    throw e;
  }
  const instanceId = metaValue(db, "instance_id", () => Bun.randomUUIDv7());

  const http = createHttp({
    log,
    version: `${VERSION} (${COMMIT})`,
    readiness: { storage: () => storageWritable(db) },
    plugins: options.plugins,
  });

  let closed = false;
  return {
    config,
    db,
    http,
    instanceId,
    clock,
    async close() {
      if (closed) return;
      closed = true;
      // Checkpoint so the WAL does not linger beside a stopped service's database.
      try {
        db.$client.run("PRAGMA wal_checkpoint(TRUNCATE)");
      } catch {
        /* another process holds the database; its own close checkpoints */
      }
      db.$client.close();
    },
  };
}

/**
 * Storage is writable when the write lock can be taken. `BEGIN IMMEDIATE` takes it without
 * writing a page, so a readiness probe every second costs no fsync.
 */
function storageWritable(db: Db): true | string {
  try {
    db.$client.run("BEGIN IMMEDIATE");
    db.$client.run("ROLLBACK");
    return true;
  } catch (e) {
    return `storage not writable: ${(e as Error).message}`;
  }
}
