/**
 * Composition root: builds storage, services and the HTTP surface from the settings, and
 * returns one `close()` that undoes it all in reverse. Nothing here is a module-level
 * singleton; tests build as many apps as they like, each on its own data folder.
 */
import { createHash, randomBytes } from "node:crypto";
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
import { createCredentials, type Credentials } from "./keys/credentials.ts";
import { createRateLimiter } from "./keys/rate-limit.ts";
import { createAccess, type Access } from "./http/access.ts";
import { VERSION, COMMIT } from "./version.ts";
import { createSigner, loadOrCreateMasterKey, MasterKeyMissingError, type Signer } from "./crypto/index.ts";
import { startAnchoring, type AppAnchoring } from "./anchoring/index.ts";
import { createRecords, type Records } from "./records/service.ts";
import { recordLedgerOf } from "./records/ledger.ts";
import { recordsRoutes } from "./http/routes/v1-records.ts";
import { verifyPages } from "./http/pages/verify.ts";
import { verificationRoutes } from "./http/routes/v1-verifications.ts";
import { createVerifier, type Verifier } from "./verification/verify.ts";
import { createVerificationLog, type VerificationLog } from "./verification/log.ts";

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
  /** Authenticates presented API keys; records last use in batches. */
  readonly credentials: Credentials;
  /** The ledger queue, its links and the anchor loop: only in `serve` (createApp); null in the admin command line. */
  readonly anchoring: AppAnchoring | null;
  /** Closes storage. Idempotent. */
  close(): Promise<void>;
}

export interface App extends Core {
  readonly http: Http;
  /** Who may call which /v1 operation: credentials, rate limits, scopes (decisions §3). */
  readonly access: Access;
  readonly anchoring: AppAnchoring;
  /** Authenticating and revoking documents (POST /v1/records…, the verify page). */
  readonly records: Records;
  /** Verdicts recomputed per request, and the verification log. */
  readonly verifier: Verifier;
  readonly verificationLog: VerificationLog;
}

export interface AppOptions {
  readonly config: Config;
  readonly log: Logger;
  readonly clock?: Clock;
  /**
   * Base of `verifyUrl` when it is known only once the listener is up (the default public URL
   * with port 0). Default: the settings' public URL.
   */
  readonly publicUrl?: () => string;
  /** Extra route plugins, for tests of the shared HTTP machinery. */
  readonly plugins?: readonly AnyElysia[];
  /**
   * False: verification checks every signature from scratch instead of answering repeats from
   * the memo (createVerifier's `memo: false`). For the benchmark's memo-off run
   * (scripts/bench/memo-off-server.ts) and tests only; deliberately not a DOCVERIFY_* setting,
   * since an operator has no reason to turn it off. Default true.
   */
  readonly verificationMemo?: boolean;
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
  const masterKey = openKeyStore(db, config, log);
  const signer = createSigner({ masterKey });

  const credentials = createCredentials({ db, clock, log });
  let closed = false;
  const core: Core = {
    config,
    db,
    instanceId,
    clock,
    signer,
    organisations: createOrganisations({ db, signer, clock }),
    apiKeys: createApiKeys({ db, clock }),
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

export async function createApp(options: AppOptions): Promise<App> {
  const core = openCore(options);
  let anchoring: AppAnchoring;
  try {
    anchoring = await startAnchoring({ config: core.config, db: core.db, clock: core.clock, log: options.log, masterKey: masterKeys.get(core) ?? null });
  } catch (e) {
    await core.close();
    throw e;
  }
  const access = createAccess({ config: core.config, credentials: core.credentials, limiter: createRateLimiter({ clock: core.clock }) });
  const records = createRecords({ db: core.db, signer: core.signer, clock: core.clock, ledger: recordLedgerOf(anchoring), publicUrl: options.publicUrl ?? core.config.publicUrl });
  const verifier = createVerifier({
    db: core.db,
    signer: core.signer,
    clock: core.clock,
    links: anchoring.links,
    ...(options.verificationMemo === false ? { memo: false as const } : {}),
  });
  // Authenticates verification-log cursors; made once per installation, never leaves the database.
  const cursorKey = Buffer.from(metaValue(core.db, "cursor_key", () => randomBytes(32).toString("hex")), "hex");
  const verificationLog = createVerificationLog({ db: core.db, clock: core.clock, cursorKey });
  const routePlugins: AnyElysia[] = [
    verificationRoutes({ access, verifier, log: verificationLog, clock: core.clock }),
    recordsRoutes({ access, records }),
    verifyPages({ records }),
  ];
  const http = createHttp({
    log: options.log,
    version: `${VERSION} (${COMMIT})`,
    readiness: { storage: () => storageWritable(core.db), ledger: () => anchoring.readiness() },
    plugins: [...routePlugins, ...(options.plugins ?? [])],
  });
  return {
    ...core,
    http,
    access,
    anchoring,
    records,
    verifier,
    verificationLog,
    async close() {
      // Queued log rows first, then the loop (it may still store an answer), then the ledger, then storage.
      verificationLog.flush();
      await anchoring.close();
      await core.close();
    },
  };
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
