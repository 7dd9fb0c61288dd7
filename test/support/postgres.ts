/**
 * A real PostgreSQL server for the tests of the PostgreSQL engine: a fresh cluster made
 * with `initdb` in a temporary folder, run as an unprivileged user, on a free loopback port. The
 * server comes from Debian's `postgresql` package, which `npm test` installs before the first test
 * (test/support/program-list.ts); without it the test fails with the install command. Never skipped.
 *
 * One cluster per run, shared by the test files (`sharedPostgres()` in `beforeAll`; `destroy()` in
 * `afterAll` drops the databases the file made); a file that stops and starts the server starts
 * one of its own (`startPostgres()`). Each test that needs a clean slate asks for its own database
 * with `createDatabase()`.
 */
import { chmodSync, chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { installCommand } from "../../scripts/test-programs.ts";
import { requireProgram } from "./programs.ts";
import { atRunEnd } from "./run-end.ts";
import { waitFor } from "./wait.ts";

export interface Postgres {
  /** The server's URL for database `name` (default `postgres`), user `docverify`, no password. */
  url(name?: string): string;
  readonly port: number;
  /** Creates an empty database and returns its URL. */
  createDatabase(prefix?: string): Promise<string>;
  /** Runs SQL as the superuser on database `name`; returns psql's output (unaligned, tuples only). */
  psql(sql: string, name?: string): string;
  /** Stops the server (fast shutdown) and keeps its files: `start()` brings it back on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the server and removes its folder. */
  destroy(): Promise<void>;
}

const SUPERUSER = "docverify";
/** The one role that must give a password (scram-sha-256); create it with one to use it. */
export const PASSWORD_ROLE = "docverify_pw";

/** The folder of the server's programs (`initdb`, `postgres`, `psql`, `pg_isready`: one version's). */
export function postgresBin(): string {
  const bin = dirname(requireProgram("initdb"));
  for (const name of ["postgres", "psql", "pg_isready"] as const) {
    if (dirname(requireProgram(name)) !== bin) throw new Error(`PostgreSQL's ${name} is not in ${bin} with initdb: install one version's server and client (Debian's postgresql package)`);
  }
  return bin;
}

/** Runs a command as the unprivileged owner of the cluster: `postgres` refuses to run as root. */
function asOwner(argv: string[]): string[] {
  if (process.getuid?.() !== 0) return argv;
  // setpriv execs the program itself (runuser would stay as its parent and not pass on signals).
  return ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--", ...argv];
}

async function freePort(): Promise<number> {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

export async function startPostgres(): Promise<Postgres> {
  const bin = postgresBin();
  const root = mkdtempSync(join(tmpdir(), "docverify-pg-"));
  const dataDir = join(root, "data");
  if (process.getuid?.() === 0) {
    // The cluster's owner must be able to reach and own its folder.
    chmodSync(root, 0o755);
    const owner = Bun.spawnSync(["id", "-u", "postgres"]);
    const group = Bun.spawnSync(["id", "-g", "postgres"]);
    if (owner.exitCode !== 0) throw new Error(`the postgres system user is missing: Debian's postgresql package makes it (${installCommand(["postgresql"])})`);
    chownSync(root, Number(owner.stdout.toString().trim()), Number(group.stdout.toString().trim()));
  }
  const init = Bun.spawnSync(asOwner([join(bin, "initdb"), "-D", dataDir, "-U", SUPERUSER, "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"]), { cwd: root });
  if (init.exitCode !== 0) throw new Error(`initdb failed:\n${init.stdout}\n${init.stderr}`);
  // Every role is trusted, except PASSWORD_ROLE, which must give its password (scram-sha-256): for
  // the tests of DOCVERIFY_DATABASE_PASSWORD_FILE. The first matching line wins.
  const hba = join(dataDir, "pg_hba.conf");
  writeFileSync(hba, `host all ${PASSWORD_ROLE} 127.0.0.1/32 scram-sha-256\n` + readFileSync(hba, "utf8"));

  let port = await freePort();
  let proc: ReturnType<typeof Bun.spawn> | null = null;

  const url = (name = "postgres") => `postgres://${SUPERUSER}@127.0.0.1:${port}/${name}`;

  const psql = (sql: string, name = "postgres"): string => {
    const out = Bun.spawnSync([join(bin, "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", url(name), "-c", sql]);
    if (out.exitCode !== 0) throw new Error(`psql failed: ${out.stderr.toString()}`);
    return out.stdout.toString().trim();
  };

  const ready = (): boolean => Bun.spawnSync([join(bin, "pg_isready"), "-q", "-h", "127.0.0.1", "-p", String(port), "-U", SUPERUSER]).exitCode === 0;

  async function start(): Promise<void> {
    proc = Bun.spawn(
      asOwner([
        join(bin, "postgres"),
        "-D",
        dataDir,
        "-p",
        String(port),
        "-k",
        root,
        "-c",
        "listen_addresses=127.0.0.1",
        // A test cluster: speed over crash safety of the cluster itself (the product's own
        // durability is tested against its own storage, and a stopped server is stopped cleanly).
        "-c",
        "fsync=off",
        "-c",
        "full_page_writes=off",
        "-c",
        "max_connections=200",
        "-c",
        "shared_buffers=64MB",
      ]),
      { stdout: "ignore", stderr: "pipe" },
    );
    await waitFor("PostgreSQL to accept connections", () => (ready() || proc!.exitCode !== null ? true : null), 30_000, 100);
    if (proc.exitCode !== null) throw new Error(`postgres exited with ${proc.exitCode}: ${await new Response(proc.stderr as ReadableStream).text()}`);
  }

  async function stop(): Promise<void> {
    if (proc === null) return;
    const p = proc;
    proc = null;
    p.kill("SIGINT"); // fast shutdown: disconnects clients, then exits cleanly
    await p.exited;
  }

  try {
    await start();
  } catch (e) {
    // The port may have been taken between choosing and binding it: one more try on another.
    port = await freePort();
    try {
      await start();
    } catch {
      rmSync(root, { recursive: true, force: true });
      throw e;
    }
  }

  let databases = 0;
  return {
    url,
    get port() {
      return port;
    },
    async createDatabase(prefix = "t") {
      const name = `${prefix}_${process.pid}_${++databases}`;
      // A linguistic default collation (ICU, English), as production databases usually have, so
      // that an ORDER BY that relies on byte order without saying so fails here too.
      psql(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C.UTF-8' LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`);
      return url(name);
    },
    psql,
    stop,
    start,
    async destroy() {
      await stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

let shared: Promise<Postgres> | null = null;

/**
 * The run's one cluster, started at the first call (a cluster takes over a second to make and
 * start, and most files only ever ask it for databases): a view of it for one test file. Its
 * `createDatabase()` names are unique across the run; its `destroy()` drops, with their
 * connections, the databases this view made, so a file leaves nothing behind on the server but
 * roles; `stop()` and `start()` are refused: a file that takes the server away uses a server of
 * its own (`startPostgres()`). The cluster itself is removed after the run's last file.
 */
export async function sharedPostgres(): Promise<Postgres> {
  if (shared === null) {
    const starting = startPostgres();
    shared = starting;
    atRunEnd(async () => {
      shared = null;
      await (await starting.catch(() => null))?.destroy();
    });
  }
  const pg = await shared;
  const made: string[] = [];
  const refused = async () => {
    throw new Error("the run's shared PostgreSQL server is never stopped by a test file: start a server of its own with startPostgres()");
  };
  return {
    url: (name?: string) => pg.url(name),
    get port() {
      return pg.port;
    },
    async createDatabase(prefix?: string) {
      const url = await pg.createDatabase(prefix);
      made.push(new URL(url).pathname.slice(1));
      return url;
    },
    psql: (sql: string, name?: string) => pg.psql(sql, name),
    stop: refused,
    start: refused,
    async destroy() {
      for (const name of made.splice(0)) pg.psql(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}
