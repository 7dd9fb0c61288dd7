/**
 * The core: storage, the key store and the services every entry point shares, without HTTP and
 * without the ledger. The administration commands open only this, so they start in tens of
 * milliseconds instead of loading Elysia and the ledger SDK; `serve` builds on it in app.ts.
 */
import { dirname, join } from "node:path";
import type { AppAnchoring } from "./anchoring/index.ts";
import { ConfigError, type Config } from "./config/index.ts";
import { createSigner, loadOrCreateMasterKey, masterKeyCheckValue, MasterKeyMissingError, type Signer } from "./crypto/index.ts";
import { createApiKeys, type ApiKeys } from "./keys/api-keys.ts";
import { createCredentials, type Credentials } from "./keys/credentials.ts";
import { createOrganisations, type Organisations } from "./keys/organisations.ts";
import { systemClock, type Clock } from "./lib/clock.ts";
import type { Logger } from "./lib/log.ts";
import { DATABASE_FILE, octal, refuseSymlinks, secureDataFolder } from "./storage/data-folder.ts";
import { openDatabase, type Db } from "./storage/db.ts";
import { sqliteStore, type Store } from "./storage/store.ts";
import { MASTER_KEY_CHECK, metaValue } from "./storage/meta.ts";
import { migrate } from "./storage/migrate.ts";

/** Storage and services, without HTTP: what `serve` and the admin command line share. */
export interface Core {
  readonly config: Config;
  readonly db: Db;
  /** The same database for code written once for both engines (storage/store.ts). */
  readonly store: Store;
  readonly instanceId: string;
  readonly clock: Clock;
  /** Signs with sealed keys; `canSign` is false while the key store is sealed (no master key). */
  readonly signer: Signer;
  readonly organisations: Organisations;
  readonly apiKeys: ApiKeys;
  /** Authenticates presented API keys; records last use in batches. */
  readonly credentials: Credentials;
  /** The ledger queue, its links and the anchor loop: only in `serve` (createApp); null in the admin command line. */
  readonly anchoring: AppAnchoring | null;
  /** Closes storage. Idempotent. */
  close(): Promise<void>;
}

export interface CoreOptions {
  readonly config: Config;
  readonly log: Logger;
  readonly clock?: Clock;
}

export { DATABASE_FILE };

/** Opens (and migrates) the data folder and builds the services over it. */
export function openCore(options: CoreOptions): Core {
  const { config, log } = options;
  if (config.databaseUrl !== null) {
    // Organisations, API keys and the audit trail already run on PostgreSQL (storage/store.ts);
    // records, verification and the anchor queue do not yet. Refused rather than quietly run on
    // the embedded SQLite, which would split the data between two databases.
    throw new ConfigError(
      "DOCVERIFY_DATABASE_URL",
      "this release cannot yet run serve, status or the administrator's commands on PostgreSQL (docs/storage.md, \"Two engines\"); unset it to use the embedded SQLite in DOCVERIFY_DATA_DIR",
    );
  }
  const clock = options.clock ?? systemClock;
  // Owner-only, whatever it was: the folder holds key digests, sealed keys and perhaps the master key.
  const loose = secureDataFolder(config.dataDir);
  if (loose?.tightened === true) {
    log.warn("data folder was open to other users; tightened to 0700", { dir: config.dataDir, mode: octal(loose.was) });
  } else if (loose !== null) {
    log.warn("data folder is open to other users and could not be tightened: chmod 700 it as its owner", { dir: config.dataDir, mode: octal(loose.was), error: loose.error });
  }
  // The master key in the data folder is read (or created) by path: never through a link.
  if (dirname(config.masterKeyFile) === config.dataDir) refuseSymlinks([config.masterKeyFile]);
  const db = openDatabase({ path: join(config.dataDir, DATABASE_FILE) });
  try {
    const { applied } = migrate(db);
    if (applied > 0) log.info("storage migrated", { applied });
  } catch (e) {
    db.$client.close();
    throw e;
  }
  const instanceId = metaValue(db, "instance_id", () => Bun.randomUUIDv7());
  const masterKey = openKeyStore(db, config, log);
  const signer = createSigner({ masterKey });

  const credentials = createCredentials({ db, clock, log });
  const store = sqliteStore(db);
  let closed = false;
  const core: Core = {
    config,
    db,
    store,
    instanceId,
    clock,
    signer,
    organisations: createOrganisations({ store, signer, clock }),
    apiKeys: createApiKeys({ store, clock }),
    credentials,
    anchoring: null,
    async close() {
      if (closed) return;
      closed = true;
      credentials.close();
      // Checkpoint so the WAL does not linger beside a stopped service's database.
      try {
        db.$client.run("PRAGMA wal_checkpoint(TRUNCATE)");
      } catch {
        /* another process holds the database; its own close checkpoints */
      }
      db.$client.close();
    },
  };
  masterKeys.set(core, masterKey);
  return core;
}

/** The master key of each open core, for createApp's anchoring (the ledger submit key is sealed under it). */
const masterKeys = new WeakMap<Core, Uint8Array | null>();

/** The master key `core` opened (null while the key store is sealed). Only the composition root asks. */
export function masterKeyOf(core: Core): Uint8Array | null {
  return masterKeys.get(core) ?? null;
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
  const rememberedRow = db.$client.query("SELECT value FROM service_meta WHERE key = ?").get(MASTER_KEY_CHECK) as { value: string } | null;
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
  const check = masterKeyCheckValue(loaded.key);
  if (remembered === null) {
    metaValue(db, MASTER_KEY_CHECK, () => check);
  } else if (remembered !== check) {
    log.error("master key does not match this data folder: the key store is sealed and signing answers 503", { file: loaded.file });
    return null;
  }
  if (loaded.created) {
    log.warn("master key created; back it up apart from the data folder: without it no private key can be opened", { file: loaded.file });
  }
  return loaded.key;
}
