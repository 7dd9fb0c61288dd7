/**
 * Composition root: builds storage, services and the HTTP surface from the settings, and
 * returns one `close()` that undoes it all in reverse. Nothing here is a module-level
 * singleton; tests build as many apps as they like, each on its own data folder.
 */
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "./config/index.ts";
import { createHttp, type AnyElysia, type Http } from "./http/server.ts";
import { systemClock, type Clock } from "./lib/clock.ts";
import type { Logger } from "./lib/log.ts";
import { openDatabase, type Db } from "./storage/db.ts";
import { metaValue } from "./storage/meta.ts";
import { migrate } from "./storage/migrate.ts";
import { createApiKeys, type ApiKeys } from "./keys/api-keys.ts";
import { createOrganisations, type Organisations } from "./keys/organisations.ts";
import { VERSION, COMMIT } from "./version.ts";
import { createSigner, loadOrCreateMasterKey, MasterKeyMissingError, type Signer } from "./crypto/index.ts";

/** Storage and services, without HTTP: what `serve` and the admin command line share. */
export interface Core {
  readonly config: Config;
  readonly db: Db;
  readonly instanceId: string;
  readonly clock: Clock;
  /** Signs with sealed keys; `canSign` is false while the key store is sealed (no master key). */
  readonly signer: Signer;
  readonly organisations: Organisations;
  readonly apiKeys: ApiKeys;
  /** Closes storage. Idempotent. */
  close(): Promise<void>;
}

export interface App extends Core {
  readonly http: Http;
}

export interface AppOptions {
  readonly config: Config;
  readonly log: Logger;
  readonly clock?: Clock;
  /** Extra route plugins, for tests of the shared HTTP machinery. */
  readonly plugins?: readonly AnyElysia[];
}

export const DATABASE_FILE = "docverify.db";

/** Opens (and migrates) the data folder and builds the services over it. */
export function openCore(options: Omit<AppOptions, "plugins">): Core {
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
  const signer = createSigner({ masterKey: openKeyStore(db, config, log) });

  let closed = false;
  return {
    config,
    db,
    instanceId,
    clock,
    signer,
    organisations: createOrganisations({ db, signer, clock }),
    apiKeys: createApiKeys({ db, clock }),
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

export async function createApp(options: AppOptions): Promise<App> {
  const core = openCore(options);
  const http = createHttp({
    log: options.log,
    version: `${VERSION} (${COMMIT})`,
    readiness: { storage: () => storageWritable(core.db) },
    plugins: options.plugins,
  });
  return { ...core, http };
}

/**
 * The master key, or null when the key store must stay sealed (signing then answers 503).
 *
 * A new master key is created only in the default place inside the data folder, and only on
 * a database that has never had one: the database remembers a check value of the first master
 * key, so a lost or swapped key file is reported instead of silently replaced by a new key
 * that could not open anything sealed under the old one.
 */
function openKeyStore(db: Db, config: Config, log: Logger): Uint8Array | null {
  const rememberedRow = db.$client.query("SELECT value FROM service_meta WHERE key = 'master_key_check'").get() as { value: string } | null;
  const remembered = rememberedRow?.value ?? null;
  let loaded;
  try {
    loaded = loadOrCreateMasterKey({ file: config.masterKeyFile, create: config.masterKeyFileIsDefault && remembered === null });
  } catch (e) {
    if (!(e instanceof MasterKeyMissingError)) throw e;
    log.error("master key missing: the key store is sealed and signing answers 503", {
      file: config.masterKeyFile,
      hint: remembered === null ? "set DOCVERIFY_MASTER_KEY_FILE or provide the systemd credential master-key" : "restore the master key file this data folder was created with",
    });
    return null;
  }
  for (const warning of loaded.warnings) log.warn("master key file", { file: loaded.file, warning });
  const check = createHash("sha256").update("docverify/master-key-check/v1\0").update(loaded.key).digest("hex");
  if (remembered === null) {
    metaValue(db, "master_key_check", () => check);
  } else if (remembered !== check) {
    log.error("master key does not match this data folder: the key store is sealed and signing answers 503", { file: loaded.file });
    return null;
  }
  if (loaded.created) {
    log.warn("master key created; back it up apart from the data folder: without it no private key can be opened", { file: loaded.file });
  }
  return loaded.key;
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
