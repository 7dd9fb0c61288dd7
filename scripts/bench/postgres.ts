/**
 * PostgreSQL for `npm run bench -- --postgres` (docs/benchmarks.md "PostgreSQL (`--postgres`)"): a
 * server of its own, set up as a service would run it rather than as the tests do, and a bench
 * dataset copied into it.
 *
 * The server. test/support/postgres.ts runs its clusters with fsync and full-page writes off
 * (tests measure behaviour, not the disk); a benchmark that compares "every 201 durable" on two
 * engines cannot: here the durability settings are PostgreSQL's defaults (fsync, synchronous_commit
 * and full_page_writes on), as SQLite's side runs with its own (WAL, synchronous FULL). What is
 * set: shared buffers large enough to hold the dataset (it fits in memory on SQLite too, through
 * the page cache), room for every node's connections, and a WAL large enough that the load never
 * forces a checkpoint. The programs are Debian's, found (or installed) as the tests find them.
 *
 * The data. The engines serve the same dataset: the SQLite bench dataset (dataset.ts, built once
 * with the product's code and cached) is copied into a database migrated by the product's own
 * PostgreSQL migrations, table by table and column by column (the two schemas are kept in
 * lockstep, test/storage/schema-lockstep.test.ts). The same master key then opens the same sealed
 * keys, and the same API keys authenticate on both. The copy runs with triggers off (the change
 * counter and the audit log's append-only guard are for the service's writes, and the rows arrive
 * in no particular order for the references), then sets the audit log's sequence past its rows,
 * gathers the planner's statistics (VACUUM ANALYZE: a database in service has them) and
 * checkpoints, so that neither autovacuum nor the copy's writes run during a measurement.
 */
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { chmodSync, chownSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { migratePostgres } from "../../src/storage/pg-migrate.ts";
import { postgresStore } from "../../src/storage/pg-store.ts";
import { postgresBin } from "../../test/support/postgres.ts";
import { cpuSecondsOf, spawnLogged, statFields, stopProcess } from "./processes.ts";

const SUPERUSER = "docverify";

/** The server's settings beyond initdb's defaults (durability left at the defaults: on). */
export const SERVER_SETTINGS: Readonly<Record<string, string>> = {
  listen_addresses: "127.0.0.1",
  max_connections: "200",
  shared_buffers: "2GB",
  effective_cache_size: "8GB",
  max_wal_size: "8GB",
};

export interface BenchPostgres {
  /** The URL of database `name`, as the superuser, without a password (trust on loopback). */
  url(name: string): string;
  /** Creates an empty database (UTF-8, ICU en-US collation, as test/support/postgres.ts does). */
  createDatabase(name: string): string;
  psql(sql: string, name?: string): string;
  /** CPU seconds (user and system) the server's processes have used so far: the postmaster and its live children. */
  cpuSeconds(): number;
  /** Stops the server (fast shutdown). */
  stop(): Promise<void>;
}

/** Runs `argv` as the unprivileged `postgres` user when we are root: PostgreSQL refuses to run as root. */
function asOwner(argv: string[]): string[] {
  if (process.getuid?.() !== 0) return argv;
  return ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--", ...argv];
}

function freePort(): number {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const { port } = listener;
  listener.stop(true);
  return port;
}

/** A new cluster in `dir` (logs there too), started on a free loopback port. */
export async function startBenchPostgres(dir: string): Promise<BenchPostgres> {
  const bin = postgresBin();
  mkdirSync(dir, { recursive: true });
  if (process.getuid?.() === 0) {
    const id = (flag: string) => Number(Bun.spawnSync(["id", flag, "postgres"]).stdout.toString().trim());
    // The cluster's owner must reach its folder: the run's folder (0700) is opened to passing
    // through, not to listing; what else is in it keeps its own modes (keys 0600, data folders 0700).
    chmodSync(dirname(dir), 0o711);
    chmodSync(dir, 0o755);
    chownSync(dir, id("-u"), id("-g"));
  }
  const dataDir = join(dir, "data");
  const init = Bun.spawnSync(asOwner([join(bin, "initdb"), "-D", dataDir, "-U", SUPERUSER, "--auth=trust", "-E", "UTF8", "--locale=C"]), { cwd: dir });
  if (init.exitCode !== 0) throw new Error(`initdb failed:\n${init.stdout}\n${init.stderr}`);
  const port = freePort();
  const settings = Object.entries({ ...SERVER_SETTINGS, port: String(port), unix_socket_directories: dir }).flatMap(([k, v]) => ["-c", `${k}=${v}`]);
  const spawned = spawnLogged(asOwner([join(bin, "postgres"), "-D", dataDir, ...settings]), {}, join(dir, "log"));
  const url = (name: string) => `postgres://${SUPERUSER}@127.0.0.1:${port}/${name}`;
  const psql = (sql: string, name = "postgres"): string => {
    const out = Bun.spawnSync([join(bin, "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", url(name), "-c", sql]);
    if (out.exitCode !== 0) throw new Error(`psql failed: ${out.stderr.toString()}`);
    return out.stdout.toString().trim();
  };
  const deadline = performance.now() + 30_000;
  while (Bun.spawnSync([join(bin, "pg_isready"), "-q", "-h", "127.0.0.1", "-p", String(port), "-U", SUPERUSER]).exitCode !== 0) {
    if (spawned.proc.exitCode !== null || performance.now() > deadline) {
      spawned.proc.kill("SIGKILL");
      throw new Error(`PostgreSQL did not start:\n${readFileSync(spawned.stderrFile, "utf8").slice(-2000)}`);
    }
    await Bun.sleep(100);
  }
  const postmaster = spawned.proc.pid;
  return {
    url,
    psql,
    cpuSeconds: () => cpuSecondsOfTree(postmaster),
    createDatabase(name) {
      psql(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C.UTF-8' LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`);
      return url(name);
    },
    async stop() {
      // SIGINT is PostgreSQL's fast shutdown: clients disconnected, a clean checkpoint, exit.
      if (spawned.proc.exitCode === null) spawned.proc.kill("SIGINT");
      await stopProcess(spawned.proc, 60_000);
    },
  };
}

/** CPU seconds of `pid` and its live children (utime + stime: fields 14 and 15 of /proc/<pid>/stat). */
export function cpuSecondsOfTree(pid: number): number {
  const seconds = (p: number) => {
    const f = statFields(`/proc/${p}/stat`);
    return f === null ? 0 : cpuSecondsOf(f);
  };
  let total = seconds(pid);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const f = statFields(`/proc/${entry}/stat`);
    if (f !== null && Number(f[1]) === pid) total += seconds(Number(entry));
  }
  return total;
}

/** Rows sent per INSERT: every table's columns × this stays under PostgreSQL's 65,535 parameters. */
const COPY_BATCH = 500;
/** Tables that are the engine's own bookkeeping, not docverify's data. */
const NOT_COPIED = new Set(["__drizzle_migrations", "sqlite_sequence"]);

/**
 * Migrates the empty database at `url` with the product's migrations and copies every table of
 * the SQLite database `sqliteFile` into it (see the file's comment). Returns the rows copied.
 */
export async function copySqliteIntoPostgres(sqliteFile: string, url: string): Promise<number> {
  const store = postgresStore(url, { max: 2 });
  try {
    await migratePostgres(store);
  } finally {
    await store.close();
  }
  const source = new Database(sqliteFile, { readonly: true });
  const pg = new SQL({ url, max: 1 });
  let copied = 0;
  try {
    const columns = (await pg`SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`) as {
      table_name: string;
      column_name: string;
      data_type: string;
    }[];
    const tables = new Map<string, { name: string; type: string }[]>();
    for (const c of columns) {
      if (!tables.has(c.table_name)) tables.set(c.table_name, []);
      tables.get(c.table_name)!.push({ name: c.column_name, type: c.data_type });
    }
    const sourceTables = (source.query("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name).filter((n) => !NOT_COPIED.has(n));
    await pg.begin(async (tx) => {
      // No triggers (and so no foreign-key checks) for the copy: see the file's comment.
      await tx`SET LOCAL session_replication_role = replica`;
      await tx`SET LOCAL synchronous_commit = off`;
      for (const table of sourceTables) {
        const cols = tables.get(table);
        if (cols === undefined) throw new Error(`table ${table} is in the SQLite schema and not in PostgreSQL's: the schemas are out of step`);
        const sourceCols = new Set((source.query(`PRAGMA table_info("${table}")`).all() as { name: string }[]).map((c) => c.name));
        for (const c of cols) if (!sourceCols.has(c.name)) throw new Error(`column ${table}.${c.name} is in PostgreSQL's schema and not in SQLite's`);
        const convert = cols.map((c) => {
          if (c.type === "boolean") return (v: unknown) => (v === null ? null : v !== 0);
          if (c.type === "bytea") return (v: unknown) => (v === null ? null : Buffer.from(v as Uint8Array));
          return (v: unknown) => v;
        });
        // Rows the migrations put there (the change counter's one row) are replaced by the source's.
        await tx.unsafe(`DELETE FROM "${table}"`);
        const names = cols.map((c) => `"${c.name}"`).join(", ");
        const select = source.query(`SELECT ${names} FROM "${table}"`);
        let batch: unknown[][] = [];
        const flush = async () => {
          if (batch.length === 0) return;
          const params: unknown[] = [];
          const tuples = batch.map((row) => `(${row.map((v) => (params.push(v), `$${params.length}`)).join(", ")})`);
          await tx.unsafe(`INSERT INTO "${table}" (${names}) VALUES ${tuples.join(", ")}`, params);
          copied += batch.length;
          batch = [];
        };
        // Row by row: a whole table at once would hold the records' signatures (gigabytes) in memory.
        for (const row of select.iterate() as IterableIterator<Record<string, unknown>>) {
          batch.push(cols.map((c, i) => convert[i]!(row[c.name])));
          if (batch.length === COPY_BATCH) await flush();
        }
        await flush();
      }
      await tx`SELECT setval(pg_get_serial_sequence('audit_log', 'id'), GREATEST((SELECT max(id) FROM audit_log), 1))`;
    });
    await pg`VACUUM ANALYZE`;
    await pg`CHECKPOINT`;
  } finally {
    source.close();
    await pg.close();
  }
  return copied;
}
