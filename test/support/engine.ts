/**
 * Which storage engine the engine-neutral HTTP suites run on (the record, revocation,
 * verification, log and access tests run against both engines).
 *
 * `DOCVERIFY_TEST_ENGINE`: `sqlite` (the default, unset or empty) or `postgres`; anything else is
 * refused, so a typo never runs the suites on SQLite while saying PostgreSQL. `npm test` runs them
 * on SQLite, and test/storage/http-engines.test.ts runs them again as a `bun test` subprocess with
 * `postgres`. By hand:
 *
 *     DOCVERIFY_TEST_ENGINE=postgres bun test test/routes/verifications.test.ts
 *
 * On PostgreSQL each app or harness gets a database of its own on the server named by
 * `DOCVERIFY_TEST_POSTGRES_URL` (a superuser URL; the subprocess is given its parent's), or, when
 * that is unset, on a server this process starts (test/support/postgres.ts) and stops at the
 * file's `cleanup()`.
 *
 * Also here: reading and writing rows by SQL on either engine, for the assertions about the state
 * a call leaves ("the row is there", "nothing was written").
 */
import { SQL } from "bun";
import { describe, test } from "bun:test";
import { getTableColumns, is } from "drizzle-orm";
import { PgTable } from "drizzle-orm/pg-core";
import * as pgSchema from "../../src/storage/pg-schema.ts";
import type { Store } from "../../src/storage/store.ts";
import type { SqliteStore } from "../../src/storage/store.ts";
import type { PostgresStore } from "../../src/storage/pg-store.ts";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createApp } from "../../src/app/sqlite.ts";
import { openCore } from "../../src/app/core.ts";
import { type ServiceApp } from "../../src/app/compose.ts";
import type { Config } from "../../src/config/index.ts";
import { openPostgresCore, type AdminCore } from "../../src/app/core.ts";
import { createSigner, type Signer } from "../../src/crypto/index.ts";
import type { AnyElysia } from "../../src/http/server.ts";
import { createApiKeys, type ApiKeys } from "../../src/keys/api-keys.ts";
import { createOrganisations, type Organisations } from "../../src/keys/organisations.ts";
import { systemClock, type Clock } from "../../src/lib/clock.ts";
import { memoryLogger, type Logger } from "../../src/lib/log.ts";
import { onCleanup, tempDir, testConfig } from "./env.ts";
import { startPostgres, type Postgres } from "./postgres.ts";

export type TestEngine = "sqlite" | "postgres";

export const ENGINE_VARIABLE = "DOCVERIFY_TEST_ENGINE";
export const POSTGRES_URL_VARIABLE = "DOCVERIFY_TEST_POSTGRES_URL";

function engineFrom(value: string | undefined): TestEngine {
  if (value === undefined || value === "" || value === "sqlite") return "sqlite";
  if (value === "postgres") return "postgres";
  throw new Error(`${ENGINE_VARIABLE} must be "sqlite" or "postgres", not ${JSON.stringify(value)}`);
}

export const TEST_ENGINE: TestEngine = engineFrom(process.env[ENGINE_VARIABLE]);

/** "SQLite" or "PostgreSQL", for test names. */
export const ENGINE_NAME = TEST_ENGINE === "postgres" ? "PostgreSQL" : "SQLite";

let databases = 0;
let local: Promise<Postgres> | null = null;
let template: Promise<string> | null = null;

/**
 * A new database for one app or harness, with a linguistic default collation (ICU en-US) as
 * test/support/postgres.ts makes them, its schema migrated: a copy of this process's migrated
 * template (`migratedTemplate`). Returns its URL.
 */
export async function testDatabase(prefix = "http"): Promise<string> {
  const given = process.env[POSTGRES_URL_VARIABLE];
  let server: string;
  if (given === undefined || given === "") {
    local ??= startPostgres().then((pg) => (stopAtExit(pg), pg));
    server = (await local).url();
  } else server = given;
  const source = await migratedTemplate(server);
  const name = `${prefix}_${process.pid}_${++databases}`;
  // A template must have no other session while it is copied: the one that migrated it may take
  // a moment to be gone from the server's view after its close.
  for (let attempt = 1; ; attempt++) {
    try {
      await adminStatement(server, `CREATE DATABASE ${name} TEMPLATE ${source}`);
      break;
    } catch (e) {
      if (attempt >= 50 || !/being accessed by other users/.test(String(e))) throw e;
      await Bun.sleep(20);
    }
  }
  return databaseUrl(server, name);
}

/**
 * The database every test database of this process is copied from, made at the first call: empty,
 * with the collation above, then migrated by the product's own migrations (storage/pg-migrate.ts),
 * and nothing else (the meta rows, the instance id and the master key's check, are written by each
 * core that opens its copy). The migrations then run once per process, not once for each of the
 * suites' hundred-odd apps and harnesses; opening a copy still checks them, finding each applied.
 * Migrating an empty database is what every other PostgreSQL test does (several-nodes, the
 * domain, the binary, postgres-setting, pg-collation).
 */
function migratedTemplate(server: string): Promise<string> {
  template ??= (async () => {
    const name = `template_${process.pid}`;
    await adminStatement(server, `CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C.UTF-8' LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`);
    const [{ postgresStore }, { migratePostgres }] = await Promise.all([import("../../src/storage/pg-store.ts"), import("../../src/storage/pg-migrate.ts")]);
    const store = postgresStore(databaseUrl(server, name), { max: 1 });
    try {
      await migratePostgres(store);
    } finally {
      await store.close();
    }
    return name;
  })();
  return template;
}

async function adminStatement(server: string, statement: string): Promise<void> {
  const admin = new SQL(server, { max: 1 });
  try {
    await admin.unsafe(statement);
  } finally {
    await admin.close();
  }
}

function databaseUrl(server: string, name: string): string {
  const url = new URL(server);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * This process's own server lives as long as the process (files clean up after each test, and
 * the next test would wait for a new cluster): at exit it is stopped, and its folder removed by
 * a detached shell once the server has gone.
 */
function stopAtExit(pg: Postgres): void {
  const dataDir = pg.psql("SHOW data_directory");
  const pid = Number(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
  process.once("exit", () => {
    void pg.stop(); // sends SIGINT at once (fast shutdown)
    const script = `while kill -0 ${pid} 2>/dev/null; do sleep 0.1; done; rm -rf '${dirname(dataDir)}'`;
    Bun.spawn(["sh", "-c", script], { stdio: ["ignore", "ignore", "ignore"] }).unref();
  });
}

/**
 * The rows `sql` gives on either engine. Written with `?` parameters (SQLite's), numbered `$n` on
 * PostgreSQL. Values come back as SQLite gives them: numbers for integers (PostgreSQL's bigint
 * and count), Uint8Array for blobs (a Buffer on PostgreSQL), 0/1 for booleans.
 */
export async function sqlRows(store: Store, sql: string, ...params: unknown[]): Promise<Record<string, unknown>[]> {
  if (store.engine === "sqlite") return (store as SqliteStore).db.$client.query(sql).all(...(params as never[])) as Record<string, unknown>[];
  let n = 0;
  const text = sql.replace(/\?/g, () => `$${++n}`);
  const rows = (await (store as PostgresStore).client.unsafe(text, params as unknown[])) as Record<string, unknown>[];
  return rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, asSqlite(k, v)])));
}

/**
 * Bun.SQL answers int8 as decimal text: the schema's bigint columns (integers on SQLite, read as
 * numbers by the product) and `count(*) AS n`. Only columns of that name are turned into numbers.
 */
const BIGINT_COLUMNS = new Set(
  Object.values(pgSchema)
    .filter((v) => is(v, PgTable))
    .flatMap((table) => Object.values(getTableColumns(table as PgTable)))
    .filter((c) => c.columnType === "PgBigInt53" || c.columnType === "PgBigSerial53")
    .map((c) => c.name)
    .concat("n"),
);

function asSqlite(column: string, v: unknown): unknown {
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "string" && BIGINT_COLUMNS.has(column) && /^-?\d+$/.test(v)) return Number(v);
  return v;
}

/** The first row of `sql`, or undefined. */
export async function sqlRow(store: Store, sql: string, ...params: unknown[]): Promise<Record<string, unknown> | undefined> {
  return (await sqlRows(store, sql, ...params))[0];
}

/** Runs a statement that returns nothing (an UPDATE the test makes as another writer would). */
export async function sqlRun(store: Store, sql: string, ...params: unknown[]): Promise<void> {
  if (store.engine === "sqlite") {
    (store as SqliteStore).db.$client.query(sql).run(...(params as never[]));
    return;
  }
  let n = 0;
  await (store as PostgresStore).client.unsafe(sql.replace(/\?/g, () => `$${++n}`), params as unknown[]);
}

/** How many rows `table` holds. */
export async function countRows(store: Store, table: string): Promise<number> {
  const row = await sqlRow(store, `SELECT count(*) AS n FROM ${table}`);
  return Number(row!.n);
}

/** Whole test services: `serve`'s app on the selected engine. */
export interface TestService {
  readonly engine: TestEngine;
  /** What `serve` runs: createApp (SQLite) or createClusterApp (PostgreSQL, one node). */
  readonly app: ServiceApp;
  readonly config: Config;
  readonly log: ReturnType<typeof memoryLogger>;
  readonly clock: Clock;
  readonly store: Store;
  /** Signs with the app's sealed keys (the same master key), for records written by a fixture. */
  readonly signer: Signer;
  /** The administration services over the same database, as the command line would use them. */
  readonly organisations: Organisations;
  readonly apiKeys: ApiKeys;
  /** Sends a request in-process. Paths are relative to http://localhost. */
  request(path: string, init?: RequestInit, peer?: string): Promise<Response>;
  /** How many rows `table` holds. */
  count(table: string): Promise<number>;
}

/** The master key every PostgreSQL app of these tests is given (PostgreSQL never creates one). */
export const TEST_MASTER_KEY = new Uint8Array(32).fill(11);

/**
 * `serve`'s app, in-process, on the selected engine, ready (its ledger started). On SQLite it is
 * test/support/env.ts `testApp`'s; on PostgreSQL one node on a new database, with the master key
 * from a file and a local ledger of its own (each node of several shares one; these apps share
 * nothing, and two ledgers' transaction ids never meet).
 */
export async function testService(options: { env?: Record<string, string>; plugins?: AnyElysia[]; clock?: Clock } = {}): Promise<TestService> {
  const log = memoryLogger();
  const clock = options.clock ?? systemClock;
  if (TEST_ENGINE === "sqlite") {
    const app = await createApp({ config: testConfig(options.env), log, clock, plugins: options.plugins });
    onCleanup(() => app.close());
    await app.anchoringStarted;
    return serviceOf(app, { log, clock, signer: app.signer, organisations: app.organisations, apiKeys: app.apiKeys });
  }
  const [{ createClusterApp }, { startLocalLedger, LOCAL_LEDGER_FILES }] = await Promise.all([import("../../src/app/postgres.ts"), import("../../src/local-ledger/index.ts")]);
  const url = await testDatabase();
  const keyFile = join(tempDir(), "master.key");
  writeFileSync(keyFile, Buffer.from(TEST_MASTER_KEY).toString("hex") + "\n", { mode: 0o600 });
  const ledgerDir = tempDir("docverify-ledger-");
  const ledger = await startLocalLedger({ dataDir: ledgerDir });
  onCleanup(() => ledger.close());
  const config = testConfig({
    DOCVERIFY_DATABASE_URL: url,
    DOCVERIFY_MASTER_KEY_FILE: keyFile,
    DOCVERIFY_LOCAL_LEDGER_URL: ledger.mirrorUrl,
    DOCVERIFY_LEDGER_OPERATOR_ID: ledger.operator.accountId,
    DOCVERIFY_LEDGER_OPERATOR_KEY_FILE: join(ledgerDir, LOCAL_LEDGER_FILES.operatorKey),
    ...options.env,
  });
  const app = await createClusterApp({ config, log, clock, plugins: options.plugins });
  onCleanup(() => app.close());
  await app.anchoringStarted;
  const signer = createSigner({ masterKey: TEST_MASTER_KEY, workers: 0 });
  const organisations = createOrganisations({ store: app.store, signer, clock });
  const apiKeys = createApiKeys({ store: app.store, clock });
  return serviceOf(app, { log, clock, signer, organisations, apiKeys });
}

function serviceOf(app: ServiceApp, parts: Pick<TestService, "log" | "clock" | "signer" | "organisations" | "apiKeys">): TestService {
  return {
    engine: TEST_ENGINE,
    app,
    config: app.config,
    store: app.store,
    ...parts,
    request: (path, init, peer = "127.0.0.1") => app.http.handle(new Request(`http://localhost${path}`, init), peer),
    count: (table) => countRows(app.store, table),
  };
}

/**
 * The core of the records harness (test/records/fixtures.ts) on the selected engine: storage, the
 * signer and the administration services, without HTTP or the anchor loop.
 */
export async function testCore(options: { env?: Record<string, string>; clock?: Clock; log?: Logger; sameDatabaseAs?: Config } = {}): Promise<AdminCore> {
  const log = options.log ?? memoryLogger();
  const same = options.sameDatabaseAs;
  if (TEST_ENGINE === "sqlite") {
    const core = openCore({ config: testConfig({ ...(same === undefined ? {} : { DOCVERIFY_DATA_DIR: same.dataDir }), ...options.env }), log, clock: options.clock });
    onCleanup(() => core.close());
    return core;
  }
  const keyFile = join(tempDir(), "master.key");
  writeFileSync(keyFile, Buffer.from(TEST_MASTER_KEY).toString("hex") + "\n", { mode: 0o600 });
  const url = same?.databaseUrl ?? (await testDatabase("harness"));
  const config = testConfig({ DOCVERIFY_DATABASE_URL: url, DOCVERIFY_MASTER_KEY_FILE: keyFile, ...options.env });
  const core = await openPostgresCore({ config, log, clock: options.clock }, { connections: 4 });
  onCleanup(() => core.close());
  return core;
}

/** A store of its own on the database `config` names: another connection, as another process has. */
export async function otherConnection(config: Config): Promise<Store> {
  if (config.databaseUrl !== null) {
    const { postgresStore } = await import("../../src/storage/pg-store.ts");
    const store = postgresStore(config.databaseUrl, { max: 1 });
    onCleanup(() => store.close());
    return store;
  }
  const { openDatabase } = await import("../../src/storage/db.ts");
  const { sqliteStore } = await import("../../src/storage/store.ts");
  const { DATABASE_FILE } = await import("../../src/app/core.ts");
  const db = openDatabase({ path: join(config.dataDir, DATABASE_FILE) });
  onCleanup(() => db.$client.close());
  return sqliteStore(db);
}

/**
 * A test of SQLite itself (a pragma, a lock another connection holds, the writer thread): run on
 * SQLite; on PostgreSQL registered as skipped with `why` in its name, so the run lists it
 * (test/storage/http-engines.test.ts prints every one and allows no other skip).
 */
export function sqliteOnly(name: string, why: string, fn: () => unknown, timeout?: number): void {
  if (TEST_ENGINE === "sqlite") test(name, fn as () => Promise<void>, timeout);
  else test.skip(`${name} [SQLite only: ${why}]`, fn as () => Promise<void>);
}

/**
 * Lets `ms` pass for the rate limits: the manual clock moves, and on PostgreSQL, whose shared
 * buckets are refilled by the database's own clock (migrations/pg/0003), every bucket's last
 * refill moves back by as much, which is the same to the lease function.
 */
export async function passTime(service: TestService, clock: { advance(ms: number): void }, ms: number): Promise<void> {
  clock.advance(ms);
  if (service.engine === "postgres") await sqlRun(service.store, `UPDATE rate_buckets SET at = at - interval '${Math.round(ms)} milliseconds'`);
}

/** `sqliteOnly` for a whole describe: on PostgreSQL its tests are listed as skipped, `why` in the name. */
export function sqliteOnlyDescribe(name: string, why: string, fn: () => void): void {
  if (TEST_ENGINE === "sqlite") describe(name, fn);
  else describe.skip(`${name} [SQLite only: ${why}]`, fn);
}
