/**
 * The core: storage, the key store and the services every entry point shares, without HTTP and
 * without the ledger. The administration commands open only this, so they start in tens of
 * milliseconds instead of loading Elysia and the ledger SDK; `serve` builds on it in compose.ts.
 */
import { dirname, join } from "node:path";
import { ConfigError, PASSWORD_TWICE, type Config } from "../config/index.ts";
import { createSigner, loadOrCreateMasterKey, masterKeyCheckValue, MasterKeyMissingError, settleRotation, type Signer } from "../crypto/index.ts";
import { createApiKeys, type ApiKeys } from "../keys/api-keys.ts";
import { createCredentials, type Credentials } from "../keys/credentials.ts";
import type { EngineDrivers } from "../storage/engine-drivers.ts";
import { sqliteDrivers, type SqliteDrivers } from "../storage/sqlite/drivers.ts";
import type { AdminReads } from "../admin/ports.ts";
import { createOrganisations, type Organisations } from "../keys/organisations.ts";
import { systemClock, type Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/log.ts";
import { DATABASE_FILE, DataFolderInUseError, lockDataFolder, octal, refuseSymlinks, requireDataFolder, secureDataFolder } from "../storage/data-folder.ts";
import { openDatabase, type Db } from "../storage/db.ts";
import { MASTER_KEY_CHECK, metaRead, metaValue } from "../storage/meta.ts";
import { sqliteStore, type SqliteStore, type Store } from "../storage/store.ts";
import { migrate, SchemaTooNewError } from "../storage/migrate.ts";
import { OpsError } from "../lib/errors.ts";
import type { PostgresStore } from "../storage/pg-store.ts";

/**
 * What runs on either engine (docs/storage.md): organisations, API keys, persons and their audit
 * trail, over the store. The `org`, `key`, `person` and `status` commands open only this, so they work with
 * DOCVERIFY_DATABASE_URL set.
 */
export interface AdminCore {
  readonly config: Config;
  /** The database, for code written once for both engines (storage/store.ts). */
  readonly store: Store;
  readonly instanceId: string;
  readonly clock: Clock;
  /** Signs with sealed keys; `canSign` is false while the key store is sealed (no master key). */
  readonly signer: Signer;
  readonly organisations: Organisations;
  readonly apiKeys: ApiKeys;
  /** Each capability's ports on this core's engine (storage/engine-drivers.ts). */
  readonly drivers: EngineDrivers;
  /** What the administrator's views read that no service offers (admin/ports.ts). */
  readonly admin: AdminReads;
  /** Closes storage. Idempotent. */
  close(): Promise<void>;
}

/** Storage and services on the embedded SQLite, without HTTP: what `serve` and the admin command line share. */
export interface Core extends AdminCore {
  readonly db: Db;
  readonly store: SqliteStore;
  readonly drivers: SqliteDrivers;
  /** Authenticates presented API keys; records last use in batches. */
  readonly credentials: Credentials;
}

export interface CoreOptions {
  readonly config: Config;
  readonly log: Logger;
  readonly clock?: Clock;
  /**
   * False for a command that only reads: the data folder and its database must exist already
   * (NoDataFolderError otherwise, before anything is made) and no master key is created. True
   * (the default) for `serve` and the commands that change something: a missing data folder,
   * database and master key are created.
   */
  readonly mayCreate?: boolean;
}

export { DATABASE_FILE };

/** Why the administrator's terminal refuses DOCVERIFY_DATABASE_URL (it opens `openCore`). */
export const ADMIN_ON_POSTGRES =
  "the administrator's terminal (docverify admin) does not run on PostgreSQL yet; use the org, key, person and status commands, which do (docs/storage.md, \"Two engines\")";

/**
 * A core and the master key it opened (null while the key store is sealed). Only the composition
 * asks for the key: the ledger submit key is sealed under it. Everything else gets the core.
 */
export interface Opened<C> {
  readonly core: C;
  readonly masterKey: Uint8Array | null;
}

/** Opens (and migrates) the data folder and builds the services over it. */
export function openCore(options: CoreOptions): Core {
  return openCoreAndKey(options).core;
}

/** `openCore`, with the master key it opened (for the composition). */
export function openCoreAndKey(options: CoreOptions): Opened<Core> {
  const { config, log } = options;
  if (config.databaseUrl !== null) {
    // `serve` on PostgreSQL is postgres.ts, the command line's commands openAdminCore. What opens
    // this core (the administrator's terminal) works on the embedded SQLite only: refused rather
    // than quietly run on the embedded database, which would split the data between two.
    throw new ConfigError("DOCVERIFY_DATABASE_URL", ADMIN_ON_POSTGRES);
  }
  const clock = options.clock ?? systemClock;
  const mayCreate = options.mayCreate ?? true;
  if (!mayCreate) requireDataFolder(config.dataDir);
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
  const store = sqliteStore(db);
  const instanceId = store.writeSync(metaValue("instance_id", () => Bun.randomUUIDv7()));
  const keyStore = openKeyStore(store.readSync(metaRead(MASTER_KEY_CHECK)), config, log, { mayCreate });
  if (keyStore.remember !== null) store.writeSync(metaValue(MASTER_KEY_CHECK, () => keyStore.remember!));
  const masterKey = keyStore.key;
  const signer = createSigner({ masterKey });

  const drivers = sqliteDrivers(store);
  const credentials = createCredentials({ ...drivers.keys(), clock, log });
  let closed = false;
  const core: Core = {
    ...adminServices({ config, store, instanceId, clock, signer, drivers }),
    db,
    store,
    drivers,
    credentials,
    async close() {
      if (closed) return;
      closed = true;
      await credentials.close();
      // Checkpoint so the WAL does not linger beside a stopped service's database.
      try {
        db.$client.run("PRAGMA wal_checkpoint(TRUNCATE)");
      } catch {
        /* another process holds the database; its own close checkpoints */
      }
      db.$client.close();
    },
  };
  return { core, masterKey };
}

/** What every core holds over its store, on either engine. */
function adminServices(parts: Pick<AdminCore, "config" | "store" | "instanceId" | "clock" | "signer" | "drivers">): Omit<AdminCore, "close"> {
  const { store, signer, clock } = parts;
  return { ...parts, organisations: createOrganisations({ store, signer, clock }), apiKeys: createApiKeys({ store, clock }), admin: parts.drivers.admin().reads };
}

/** The database password from its file (one trailing newline dropped), if the settings name one. */
async function databasePassword(config: Config): Promise<{ password?: string }> {
  let file = config.databasePasswordFile;
  // The systemd credential, only when systemd handed it over (install.sh's drop-in).
  if (file === null && config.databasePasswordCredential !== null && (await Bun.file(config.databasePasswordCredential).exists())) {
    if (config.databaseUrl !== null && new URL(config.databaseUrl).password !== "") throw new ConfigError("DOCVERIFY_DATABASE_PASSWORD_FILE", PASSWORD_TWICE);
    file = config.databasePasswordCredential;
  }
  if (file === null) return {};
  let text: string;
  try {
    text = await Bun.file(file).text();
  } catch (e) {
    throw new ConfigError("DOCVERIFY_DATABASE_PASSWORD_FILE", `cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const password = text.replace(/\r?\n$/, "");
  if (password === "") throw new ConfigError("DOCVERIFY_DATABASE_PASSWORD_FILE", `${file} is empty`);
  return { password };
}


/** What a mismatching master key usually means, for the log line that reports it. */
const ROTATED_HINT =
  "if docverify master-key rotate ran, this is the previous key: put the new key file in place (on every node, with PostgreSQL); " +
  "if the rotation was interrupted, open the folder once with DOCVERIFY_MASTER_KEY_FILE naming the file it rotated (docverify status) to finish it";

/**
 * Finishes (or rolls back) a master key rotation a crash interrupted, before the key is read
 * (crypto/master-key.ts `settleRotation`): the database's check value says which key file is
 * current. A folder the rotation could not be finished in (no right to write it) is left as it
 * is; the key then does not match and the log says so.
 */
function settleInterruptedRotation(file: string, remembered: string, log: Logger): void {
  try {
    const settled = settleRotation(file, remembered);
    if (settled === "finished") log.warn("an interrupted master key rotation was finished: the new master key is in place", { file });
    else if (settled === "discarded") log.warn("an interrupted master key rotation had changed nothing: its new key file was removed", { file });
    else if (settled === "confirmed") log.warn("an interrupted master key rotation was finished: its previous key file was removed", { file });
  } catch (e) {
    log.warn("could not finish an interrupted master key rotation", { file, error: (e as Error).message });
  }
}

/**
 * The master key, or null when the key store must stay sealed (signing then answers 503), and
 * the check value to remember when the database has none yet. `remembered` is the database's.
 *
 * A new master key is created only in the default place inside the data folder, and only on
 * a database that has never had one: the database remembers a check value of the first master
 * key, so a lost or swapped key file is reported instead of silently replaced by a new key
 * that could not open anything sealed under the old one.
 */
function openKeyStore(remembered: string | null, config: Config, log: Logger, options: { readonly mayCreate?: boolean } = {}): { key: Uint8Array | null; remember: string | null } {
  const sealed = { key: null, remember: null };
  if (remembered !== null) settleInterruptedRotation(config.masterKeyFile, remembered, log);
  let loaded;
  try {
    loaded = loadOrCreateMasterKey({ file: config.masterKeyFile, create: (options.mayCreate ?? true) && config.masterKeyFileIsDefault && remembered === null });
  } catch (e) {
    if (!(e instanceof MasterKeyMissingError)) throw e;
    log.error("master key missing: the key store is sealed and signing answers 503", {
      file: config.masterKeyFile,
      hint:
        remembered !== null
          ? "restore the master key file this data folder was created with"
          : config.databaseUrl !== null
            ? "with DOCVERIFY_DATABASE_URL every node needs the same master key: set DOCVERIFY_MASTER_KEY_FILE or provide the systemd credential master-key"
            : "set DOCVERIFY_MASTER_KEY_FILE or provide the systemd credential master-key",
    });
    return sealed;
  }
  for (const warning of loaded.warnings) log.warn("master key file", { file: loaded.file, warning });
  const check = masterKeyCheckValue(loaded.key);
  if (remembered !== null && remembered !== check) {
    log.error("master key does not match this data folder: the key store is sealed and signing answers 503", { file: loaded.file, hint: ROTATED_HINT });
    return sealed;
  }
  if (loaded.created) {
    log.warn("master key created; back it up apart from the data folder: without it no private key can be opened", { file: loaded.file });
  }
  return { key: loaded.key, remember: remembered === null ? check : null };
}

/**
 * The engine-neutral core on whichever database the settings name: the embedded SQLite (the
 * whole core, opened as `openCore` does) or PostgreSQL, connected and migrated.
 *
 * On PostgreSQL the master key is never created: every node must open the same key, so the
 * operator provides it (DOCVERIFY_MASTER_KEY_FILE or the systemd credential) and the first node
 * to start remembers its check value for the others.
 */
export async function openAdminCore(options: CoreOptions): Promise<AdminCore> {
  if (options.config.databaseUrl === null) return openCore(options);
  return openPostgresCore(options, { connections: 2 });
}

/**
 * The engine-neutral core on PostgreSQL (`DOCVERIFY_DATABASE_URL`): connected, migrated, the
 * master key checked against the one the other nodes use. `connections`: the pool's size (the
 * command line needs 2; `serve` more, postgres.ts).
 */
export async function openPostgresCore(options: CoreOptions, pool: { readonly connections: number }): Promise<AdminCore & { readonly store: PostgresStore }> {
  return (await openPostgresCoreAndKey(options, pool)).core;
}

/** `openPostgresCore`, with the master key it opened (for the composition). */
export async function openPostgresCoreAndKey(options: CoreOptions, pool: { readonly connections: number }): Promise<Opened<AdminCore & { readonly store: PostgresStore }>> {
  const { config, log } = options;
  if (config.databaseUrl === null) throw new TypeError("openPostgresCore needs DOCVERIFY_DATABASE_URL");
  const clock = options.clock ?? systemClock;
  const { postgresStore } = await import("../storage/pg-store.ts");
  const { migratePostgres } = await import("../storage/pg-migrate.ts");
  const store = postgresStore(config.databaseUrl, { max: pool.connections, ...(await databasePassword(config)) });
  try {
    const { applied } = await migratePostgres(store);
    if (applied > 0) log.info("storage migrated", { applied, database: config.databaseUrlRedacted });
    const instanceId = await store.write(metaValue("instance_id", () => Bun.randomUUIDv7()));
    const keyStore = openKeyStore(await store.read(metaRead(MASTER_KEY_CHECK)), config, log, { mayCreate: false });
    let masterKey = keyStore.key;
    if (keyStore.remember !== null) {
      // Two nodes starting at once with different keys: the first check value stored wins, and
      // the other node stays sealed, as it would on its next start.
      const stored = await store.write(metaValue(MASTER_KEY_CHECK, () => keyStore.remember!));
      if (stored !== keyStore.remember) {
        log.error("master key does not match the one the other nodes use: the key store is sealed and signing answers 503", { file: config.masterKeyFile, hint: ROTATED_HINT });
        masterKey = null;
      }
    }
    const signer = createSigner({ masterKey });
    const { postgresDrivers } = await import("../storage/postgres/drivers.ts");
    let closed = false;
    const core = {
      ...adminServices({ config, store, instanceId, clock, signer, drivers: postgresDrivers(store) }),
      store,
      async close() {
        if (closed) return;
        closed = true;
        await store.close();
      },
    };
    return { core, masterKey };
  } catch (e) {
    await store.close();
    if (e instanceof SchemaTooNewError) throw e;
    // Unreachable, refused, or a role without the grants: say which database (without its
    // password) and what it answered.
    throw new OpsError(`cannot use the PostgreSQL database ${config.databaseUrlRedacted}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** A command that needs the data to itself found a `serve` using it; `what` says which (for its message). */
export class ServeRunningError extends OpsError {
  constructor(readonly what: string) {
    super(`${what}: stop it first`);
  }
}

/**
 * The engine-neutral core for a command that must run while no `serve` uses the data (`docverify
 * master-key rotate`), with the master key it opened; `release` lets a serve start again (call it
 * after `core.close()`). Creates nothing: the data folder (or database) must exist.
 *
 * - SQLite: it holds the data folder's serve lock (storage/data-folder.ts) until `release`, so no
 *   serve runs now and none starts meanwhile; one running is refused with its pid.
 * - PostgreSQL: no node may be connected (storage/pg-cluster.ts `connectedNodes`: a session holding
 *   a lane of transaction ids); the nodes are named. A node started meanwhile is not kept out: the
 *   operator stops them all first (docs/operations.md "Rotate the master key").
 *
 * Throws ServeRunningError, with nothing opened or changed, when a serve runs.
 */
export async function openCoreAlone(options: CoreOptions): Promise<Opened<AdminCore> & { release(): void }> {
  const { config } = options;
  if (config.databaseUrl !== null) {
    const opened = await openPostgresCoreAndKey({ ...options, mayCreate: false }, { connections: 2 });
    const { connectedNodes } = await import("../storage/pg-cluster.ts");
    try {
      const nodes = await connectedNodes(opened.core.store);
      if (nodes.sessions > 0) {
        const names = nodes.names.length === 0 ? "" : ` (${nodes.names.join(", ")})`;
        throw new ServeRunningError(`${nodes.sessions} docverify serve node${nodes.sessions === 1 ? " is" : "s are"} connected to the database ${config.databaseUrlRedacted}${names}`);
      }
    } catch (e) {
      await opened.core.close();
      throw e;
    }
    return { ...opened, release() {} };
  }
  requireDataFolder(config.dataDir);
  let lock;
  try {
    lock = lockDataFolder(config.dataDir);
  } catch (e) {
    if (e instanceof DataFolderInUseError) throw new ServeRunningError(`docverify serve (${e.pid === null ? "pid unknown" : `pid ${e.pid}`}) runs on the data folder ${config.dataDir}`);
    throw e;
  }
  try {
    return { ...openCoreAndKey({ ...options, mayCreate: false }), release: () => lock.release() };
  } catch (e) {
    lock.release();
    throw e;
  }
}
