/**
 * `docverify backup FILE` and `docverify restore FILE`: a consistent copy of the database taken
 * while `serve` runs on it, and putting such a copy back into a data folder no process uses.
 *
 * Backup is SQLite's `VACUUM INTO` on a read-only connection: it copies the database as of one
 * read transaction (a snapshot, WAL included), so writers carry on meanwhile and every commit
 * is either wholly in the copy or wholly absent. bun:sqlite exposes neither the page-by-page
 * backup API (sqlite3_backup_step) nor the sqlite_dbpage table, and `serialize()` holds the whole
 * database in memory; `VACUUM INTO` streams to the file and leaves out free pages. It blocks this
 * thread until done, so progress comes from a worker that watches the target file grow against
 * the source's used pages (an upper bound: the copy is compacted, so the last step may jump).
 *
 * Both commands write to a temporary name beside the target (mode 0600), fsync, check, and only
 * then put it in place: a crash or a failed check leaves the previous file untouched. A backup
 * never replaces an existing FILE without --force (link(2), which refuses to replace, rather
 * than rename(2), so a file that appears meanwhile is not clobbered either).
 *
 * Restore refuses, and changes nothing, while any process has the database open (see
 * `openedBy`), when the file is not a docverify database this binary can run (integrity, tables,
 * migration history), or when a database exists and --force is not given.
 *
 * A backup never writes over what the service lives on: FILE may not be (by real path, through any
 * link or bind mount) the database, its side files, the master key or the serve lock, nor be
 * anything in the ledger's folder (`refuseProtectedTarget`). It never reads the database through
 * a symbolic link either.
 *
 * The master key is never in a backup: it lives in its own file or systemd credential, and
 * both commands say so. Exit codes: 0 done, 1 refused or failed, 2 bad usage (UsageError).
 */
import { constants, Database } from "bun:sqlite";
import { createHash, randomBytes } from "node:crypto";
import {
  chownSync,
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmdirSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { DATABASE_FILE } from "../core.ts";
import { parseConfig, type Config } from "../config/index.ts";
import { parseMasterKey } from "../crypto/index.ts";
import { LEDGER_DIR } from "../anchoring/paths.ts";
import { parseFlags, UsageError, type FlagSpec } from "../lib/args.ts";
import { OpsError } from "../lib/errors.ts";
import { refuseSymlinks, SERVE_LOCK_FILE, withSideFiles } from "../storage/data-folder.ts";
import { BUSY_TIMEOUT_MS, openDatabase } from "../storage/db.ts";
import { embeddedMigrations, migrate } from "../storage/migrate.ts";

type Env = Readonly<Record<string, string | undefined>>;
type Out = { write(s: string): void };
export interface Io {
  readonly out: Out;
  readonly err: Out;
  /** Whether stderr is a terminal: progress is shown there by default. */
  readonly errIsTTY: boolean;
}

/** A refusal or failure the operator can act on: exit code 1, message on stderr. */
export { OpsError };

const SQLITE_MAGIC = "SQLite format 3\0";
/** How often the progress line is refreshed. */
const PROGRESS_MS = 100;
/** The embedded local ledger's lock file (anchoring/local-ledger), inside DATA_DIR/ledger. */
const LEDGER_LOCK = "ledger.lock";

function parse(command: string, args: readonly string[], options: FlagSpec) {
  const usage = `usage: docverify ${command} FILE [--data DIR] [--force]${command === "backup" ? " [--progress]" : ""} [--json]`;
  try {
    return parseFlags(args, { data: { type: "string" }, json: { type: "boolean" }, force: { type: "boolean" }, ...options }, 1);
  } catch (e) {
    if (e instanceof UsageError) throw new UsageError(`${command}: ${e.message}; ${usage}`);
    throw e;
  }
}

const mib = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;

function tempBeside(target: string, tag: string): string {
  return join(dirname(target), `.${basename(target)}.${tag}-${process.pid}-${randomBytes(4).toString("hex")}`);
}

function fsyncFile(path: string): void {
  const fd = openSync(path, "r+");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Makes a rename or link in `dir` durable. */
function fsyncDir(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* already gone */
  }
}

// ---------------------------------------------------------------------------------------------
// Checking a database file: the same checks after a backup and before a restore.

export interface DatabaseCheck {
  readonly pages: number;
  readonly pageSize: number;
  /** Migrations applied in the file. */
  readonly migrations: number;
  /** Migrations this binary has; more than `migrations` means `serve` migrates at start. */
  readonly knownMigrations: number;
  /** The database's remembered master key check value (app.ts), or null if it never had a key. */
  readonly masterKeyCheck: string | null;
}

/** Tables a fully migrated database has: those the embedded migrations create. */
function expectedTables(): Set<string> {
  const db = openDatabase({ path: ":memory:" });
  try {
    migrate(db);
    return new Set(tableNames(db.$client));
  } finally {
    db.$client.close();
  }
}

function tableNames(sqlite: Database): string[] {
  return sqlite
    .query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    .values()
    .map((r) => String(r[0]));
}

/**
 * Checks that `path` is an intact docverify database this binary can run: SQLite's
 * integrity_check, docverify's tables, and a migration history that is a prefix of the
 * embedded one (a migration this binary does not know means a newer binary wrote it).
 * Throws OpsError saying what is wrong.
 */
export function checkDatabase(path: string, what: string): DatabaseCheck {
  let sqlite: Database;
  try {
    sqlite = new Database(path, { readonly: true });
  } catch (e) {
    throw new OpsError(`${what} cannot be opened as an SQLite database: ${(e as Error).message}`);
  }
  try {
    sqlite.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    let integrity: string[];
    try {
      integrity = sqlite.query("PRAGMA integrity_check").values().map((r) => String(r[0]));
    } catch (e) {
      throw new OpsError(`${what} is not an intact SQLite database: ${(e as Error).message}`);
    }
    if (integrity.length !== 1 || integrity[0] !== "ok") {
      throw new OpsError(`${what} fails SQLite's integrity check: ${integrity.slice(0, 5).join("; ")}${integrity.length > 5 ? "; …" : ""}`);
    }
    const tables = new Set(tableNames(sqlite));
    if (!tables.has("__drizzle_migrations")) throw new OpsError(`${what} is an SQLite database but not docverify's: it has no migration history`);
    const applied = sqlite.query("SELECT hash FROM __drizzle_migrations ORDER BY created_at, id").values().map((r) => String(r[0]));
    const known = embeddedMigrations().map((m) => m.hash);
    for (let i = 0; i < applied.length; i++) {
      if (known[i] !== applied[i]) {
        throw new OpsError(
          known.includes(applied[i]!)
            ? `${what} has a migration history this binary does not recognise (migration ${i + 1} out of order)`
            : `${what} was written by a newer docverify (migration ${i + 1} of ${applied.length} is unknown to this binary, which has ${known.length}); use that docverify or a newer one`,
        );
      }
    }
    if (applied.length === 0) throw new OpsError(`${what} has an empty migration history: it is not a docverify database`);
    if (applied.length === known.length) {
      const missing = [...expectedTables()].filter((t) => !tables.has(t));
      if (missing.length > 0) throw new OpsError(`${what} lacks docverify's tables: ${missing.join(", ")}`);
    } else {
      for (const t of ["service_meta", "organisations"]) if (!tables.has(t)) throw new OpsError(`${what} lacks docverify's table ${t}`);
    }
    const pages = Number((sqlite.query("PRAGMA page_count").values()[0] ?? [0])[0]);
    const pageSize = Number((sqlite.query("PRAGMA page_size").values()[0] ?? [0])[0]);
    const check = tables.has("service_meta")
      ? ((sqlite.query("SELECT value FROM service_meta WHERE key = 'master_key_check'").get() as { value: string } | null)?.value ?? null)
      : null;
    return { pages, pageSize, migrations: applied.length, knownMigrations: known.length, masterKeyCheck: check };
  } finally {
    sqlite.close();
  }
}

/**
 * Whether the configured master key file opens the database whose check value is `check`.
 * The check value is app.ts `openKeyStore`'s: SHA-256 of a domain string and the key
 * (test/ops/backup.test.ts fails if the two drift apart).
 */
function masterKeyState(config: Config, check: string | null): "matches" | "differs" | "missing" | "unreadable" | "none-needed" {
  if (check === null) return "none-needed";
  let contents: Uint8Array;
  try {
    contents = readFileSync(config.masterKeyFile);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ENOENT" ? "missing" : "unreadable";
  }
  const parsed = parseMasterKey(contents);
  if ("error" in parsed) return "unreadable";
  const mine = createHash("sha256").update("docverify/master-key-check/v1\0").update(parsed.key).digest("hex");
  return mine === check ? "matches" : "differs";
}

// ---------------------------------------------------------------------------------------------
// Progress: VACUUM INTO blocks this thread, so a worker watches the file grow.

const PROGRESS_WORKER = `
const { statSync, writeSync } = require("node:fs");
let last = "";
self.onmessage = (event) => {
  const { file, total, tty, intervalMs } = event.data;
  const mib = (b) => (b / 1048576).toFixed(1) + " MiB";
  setInterval(() => {
    let size = 0;
    try { size = statSync(file).size; } catch {}
    const pct = total > 0 ? Math.min(99, Math.floor((size * 100) / total)) : 0;
    const line = "backup: " + mib(size) + " of about " + mib(total) + " copied (" + pct + "%)";
    if (line === last) return;
    last = line;
    writeSync(2, tty ? "\\r" + line + "\\u001b[K" : line + "\\n");
  }, intervalMs);
};
`;

function startProgress(file: string, total: number, tty: boolean): () => void {
  let worker: Worker | null = null;
  try {
    worker = new Worker(URL.createObjectURL(new Blob([PROGRESS_WORKER], { type: "application/javascript" })));
    worker.postMessage({ file, total, tty, intervalMs: PROGRESS_MS });
  } catch {
    worker = null; // progress is a courtesy; the backup goes on without it
  }
  return () => worker?.terminate();
}

// ---------------------------------------------------------------------------------------------
// backup

/** The file's identity (device and inode), following links; null if it does not exist. */
function identity(path: string): string | null {
  try {
    const st = statSync(path);
    return `${st.dev}:${st.ino}`;
  } catch {
    return null;
  }
}

/**
 * Refuses a backup target that is one of the files the service lives on: the database and its
 * side files, the master key (the configured one, wherever it is, and `master.key` in the data
 * folder), the serve lock, or anything in the ledger's folder. Compared by identity, not by the
 * spelling of the path: the target's folder against each file's folder (device and inode, so a
 * symbolic link or a bind mount to the data folder is seen through) with the same name, and an
 * existing target against each file itself.
 */
function refuseProtectedTarget(target: string, config: Config): void {
  const dataDir = config.dataDir;
  const database = join(dataDir, DATABASE_FILE);
  const guarded = [...withSideFiles(database), join(dataDir, "master.key"), config.masterKeyFile, ...withSideFiles(join(dataDir, SERVE_LOCK_FILE))];
  const targetDir = identity(dirname(target));
  const targetItself = identity(target);
  for (const file of guarded) {
    const sameName = targetDir !== null && basename(target) === basename(file) && identity(dirname(file)) === targetDir;
    const sameFile = targetItself !== null && identity(file) === targetItself;
    if (sameName || sameFile) {
      const what =
        file === config.masterKeyFile || basename(file) === "master.key"
          ? "the master key file"
          : basename(file).startsWith(SERVE_LOCK_FILE)
            ? "the serve lock"
            : file === database
              ? "the live database itself"
              : "a side file of the live database";
      throw new OpsError(`${target} is ${what}: a backup never writes over it; back up to another file`);
    }
  }
  const ledger = identity(join(dataDir, LEDGER_DIR));
  if (ledger !== null && targetDir === ledger) throw new OpsError(`${target} is in the ledger's folder ${join(dataDir, LEDGER_DIR)}; back up to another folder`);
}

export async function runBackup(args: readonly string[], env: Env, io: Io): Promise<number> {
  const { values, positionals } = parse("backup", args, { progress: { type: "boolean" } });
  const config = parseConfig(env, { dataDir: typeof values.data === "string" ? values.data : undefined });
  const source = join(config.dataDir, DATABASE_FILE);
  const target = resolve(positionals[0]!);
  const force = values.force === true;

  // Never read through a link: run as root, a planted docverify.db link would copy any file out.
  refuseSymlinks(withSideFiles(source));
  if (!existsSync(source)) throw new OpsError(`no database at ${source} (set --data or DOCVERIFY_DATA_DIR to the service's data folder)`);
  if (!existsSync(dirname(target)) || !statSync(dirname(target)).isDirectory()) throw new OpsError(`folder ${dirname(target)} does not exist`);
  refuseProtectedTarget(target, config);
  if (existsSync(target)) {
    if (statSync(target).isDirectory()) throw new OpsError(`${target} is a folder; name the backup file`);
    if (!force) throw new OpsError(`${target} exists; pass --force to replace it`);
  }

  const started = Date.now();
  const tmp = tempBeside(target, "partial");
  // Created empty, owner-only, before SQLite writes a byte: VACUUM INTO accepts an empty file,
  // and the copy holds key digests and sealed private keys.
  closeSync(openSync(tmp, "wx", 0o600));
  let placed = false;
  try {
    let sqlite: Database;
    try {
      // Read-only: the backup never writes to the live database (nor migrates it). NOFOLLOW: a
      // link planted since the check above is refused by SQLite itself.
      sqlite = new Database(source, constants.SQLITE_OPEN_READONLY | constants.SQLITE_OPEN_NOFOLLOW);
      sqlite.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    } catch (e) {
      throw new OpsError(`cannot open ${source}: ${(e as Error).message}`);
    }
    let total: number;
    try {
      const one = (pragma: string) => Number((sqlite.query(`PRAGMA ${pragma}`).values()[0] ?? [0])[0]);
      total = (one("page_count") - one("freelist_count")) * one("page_size");
      const showProgress = values.progress === true || io.errIsTTY;
      const stopProgress = showProgress ? startProgress(tmp, total, io.errIsTTY) : () => {};
      // Let the worker start before this thread blocks in VACUUM.
      if (showProgress) await Bun.sleep(20);
      try {
        sqlite.query("VACUUM INTO ?").run(tmp);
      } catch (e) {
        throw new OpsError(`backup of ${source} failed: ${(e as Error).message}`);
      } finally {
        stopProgress();
      }
      if (showProgress) io.err.write(`${io.errIsTTY ? "\r\u001b[K" : ""}backup: ${mib(statSync(tmp).size)} copied\n`);
    } finally {
      sqlite.close();
    }
    // SQLite does not fsync a VACUUM INTO target; the rename must not outrun the data.
    fsyncFile(tmp);
    const check = checkDatabase(tmp, "the backup");
    if (check.migrations !== check.knownMigrations) {
      throw new OpsError(
        `the database has ${check.migrations} of this binary's ${check.knownMigrations} migrations: back it up with the docverify that serves it`,
      );
    }
    if (force) renameSync(tmp, target);
    else {
      try {
        linkSync(tmp, target);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "EEXIST") throw new OpsError(`${target} appeared meanwhile; pass --force to replace it`);
        throw e;
      }
      unlinkSync(tmp);
    }
    placed = true;
    fsyncDir(dirname(target));
    const bytes = statSync(target).size;
    const result = {
      file: target,
      bytes,
      pages: check.pages,
      migrations: check.migrations,
      integrity: "ok",
      durationMs: Date.now() - started,
      masterKeyIncluded: false,
    };
    io.out.write(
      values.json
        ? JSON.stringify(result) + "\n"
        : `backup written: ${target} (${mib(bytes)}, ${check.migrations} migrations, integrity ok, ${result.durationMs} ms)\n`,
    );
    io.err.write(
      `docverify: the master key is not in the backup. Keep a copy of ${config.masterKeyFile} ` +
        `(under systemd: /etc/docverify/credentials/master-key) apart from it: without that key no private key in the backup can be opened.\n`,
    );
    return 0;
  } finally {
    if (!placed) removeQuietly(tmp);
  }
}

// ---------------------------------------------------------------------------------------------
// restore

/** The device numbers /proc/locks prints ("fe:01"), as stat's dev splits into them on Linux. */
function devOf(dev: number): string {
  const d = BigInt(dev);
  const major = ((d >> 8n) & 0xfffn) | ((d >> 32n) & ~0xfffn);
  const minor = (d & 0xffn) | ((d >> 12n) & ~0xffn);
  return `${major.toString(16).padStart(2, "0")}:${minor.toString(16).padStart(2, "0")}`;
}

/**
 * Which processes hold the database open, judged from the kernel's lock table.
 *
 * Every SQLite connection to a WAL database holds a shared POSIX lock on the database file and
 * on byte 128 of its `-shm` file for as long as it is open, idle or not (the WAL index's
 * "dead man switch"), and the kernel drops them the moment the process exits, however it exits.
 * So a lock on either file in /proc/locks means a live process (`serve`, or an admin command)
 * has this very database open, with no pid file that could be stale. `/proc/locks` is readable
 * by every user and lists the locks of every process in this pid namespace (systemd services
 * included: the unit does not set PrivatePIDs).
 *
 * Returns the holders' pids (0 when the kernel does not say), or null when /proc/locks cannot
 * be read (not Linux): the caller then says it could not tell.
 */
export function openedBy(databasePath: string): number[] | null {
  let table: string;
  try {
    table = readFileSync("/proc/locks", "utf8");
  } catch {
    return null;
  }
  const ids = new Set<string>();
  for (const file of [databasePath, `${databasePath}-shm`, `${databasePath}-wal`]) {
    try {
      const st = statSync(file);
      ids.add(`${devOf(st.dev)}:${st.ino}`);
    } catch {
      /* not there */
    }
  }
  const pids = new Set<number>();
  for (const line of table.split("\n")) {
    // "12: POSIX  ADVISORY  READ 4242 fe:01:131090 128 128"; blocked waiters carry a "->".
    const fields = line.replace(/->\s*/, "").trim().split(/\s+/);
    if (fields.length < 6) continue;
    const pid = Number(fields[4]);
    const id = fields[5]!;
    if (pid === process.pid) continue;
    if (ids.has(id.toLowerCase())) pids.add(pid);
  }
  return [...pids];
}

/** The live process holding the embedded local ledger's lock in DATA_DIR/ledger, if any. */
function ledgerLockHolder(dataDir: string): number | null {
  let owner: number;
  try {
    owner = Number(readFileSync(join(dataDir, LEDGER_DIR, LEDGER_LOCK), "utf8").trim());
  } catch {
    return null;
  }
  if (!Number.isInteger(owner) || owner <= 0 || owner === process.pid) return null;
  try {
    process.kill(owner, 0);
    return owner;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM" ? owner : null;
  }
}

/** Cheap checks of the file's first page, before anything is written anywhere. */
function checkHeader(file: string): void {
  const st = statSync(file);
  if (!st.isFile()) throw new OpsError(`${file} is not a file`);
  const fd = openSync(file, "r");
  const header = Buffer.alloc(100);
  let got: number;
  try {
    got = readSync(fd, header, 0, 100, 0);
  } finally {
    closeSync(fd);
  }
  if (got < 100 || header.subarray(0, 16).toString("latin1") !== SQLITE_MAGIC) throw new OpsError(`${file} is not an SQLite database`);
  const rawPageSize = header.readUInt16BE(16);
  const pageSize = rawPageSize === 1 ? 65536 : rawPageSize;
  if (pageSize < 512 || (pageSize & (pageSize - 1)) !== 0) throw new OpsError(`${file} has a damaged header (page size ${rawPageSize})`);
  // The page count in the header is valid when the change counter matches "version valid for".
  const pagesInHeader = header.readUInt32BE(28);
  const headerCountValid = header.readUInt32BE(24) === header.readUInt32BE(92) && pagesInHeader > 0;
  if (st.size % pageSize !== 0 || (headerCountValid && st.size < pagesInHeader * pageSize)) {
    throw new OpsError(
      `${file} is truncated: ${st.size} bytes, ${headerCountValid ? `its header promises ${pagesInHeader * pageSize}` : `not a whole number of ${pageSize}-byte pages`}`,
    );
  }
}

function copyInto(from: string, to: string): number {
  const src = openSync(from, "r");
  const dst = openSync(to, "wx", 0o600);
  let total = 0;
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    for (;;) {
      const n = readSync(src, buf, 0, buf.length, null);
      if (n === 0) break;
      let off = 0;
      while (off < n) off += writeSync(dst, buf, off, n - off);
      total += n;
    }
    fsyncSync(dst);
  } finally {
    closeSync(src);
    closeSync(dst);
  }
  return total;
}

export function runRestore(args: readonly string[], env: Env, io: Io): number {
  const { values, positionals } = parse("restore", args, {});
  const config = parseConfig(env, { dataDir: typeof values.data === "string" ? values.data : undefined });
  const file = resolve(positionals[0]!);
  const force = values.force === true;
  const dataDir = config.dataDir;
  const target = join(dataDir, DATABASE_FILE);

  // 1. The file itself, read only.
  if (!existsSync(file)) throw new OpsError(`${file} does not exist`);
  if ([target, `${target}-wal`, `${target}-shm`].includes(file)) throw new OpsError(`${file} is the data folder's own database`);
  checkHeader(file);

  // 2. Nothing may have the database open: replacing it under a running service would leave the
  //    service writing to a deleted file, and every later acknowledgement would be lost.
  const holders = openedBy(target);
  if (holders === null) {
    io.err.write("docverify: cannot read /proc/locks to tell whether a process has the database open; make sure the service is stopped\n");
  } else if (holders.length > 0) {
    throw new OpsError(
      `${target} is open in another process (pid ${holders.join(", ")}): stop the service first (systemctl stop docverify) and any admin command using ${dataDir}`,
    );
  }
  const ledgerOwner = ledgerLockHolder(dataDir);
  if (ledgerOwner !== null) {
    throw new OpsError(`a docverify process (pid ${ledgerOwner}) runs the local ledger in ${join(dataDir, LEDGER_DIR)}: stop the service first`);
  }

  // 3. An existing database is replaced only on request.
  const exists = existsSync(target) || existsSync(`${target}-wal`);
  if (exists && !force) throw new OpsError(`${target} exists; pass --force to replace it (its contents are lost: take a backup of it first)`);

  // 4. Copy beside the target, check the copy (exactly the bytes that will be installed).
  const createdDir = !existsSync(dataDir);
  if (!createdDir && !statSync(dataDir).isDirectory()) throw new OpsError(`${dataDir} is not a folder`);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const tmp = tempBeside(target, "restoring");
  let placed = false;
  try {
    const bytes = copyInto(file, tmp);
    // Run as root into a service's folder (systemd's StateDirectory), the file must belong to
    // the service's user like the folder does, or the service could not open it.
    const folder = lstatSync(dataDir);
    if (process.getuid?.() === 0 && (folder.uid !== 0 || folder.gid !== 0)) chownSync(tmp, folder.uid, folder.gid);
    const check = checkDatabase(tmp, file);
    // A copy taken with cp from a stopped WAL database may leave SQLite's side files after the check.
    removeQuietly(`${tmp}-wal`);
    removeQuietly(`${tmp}-shm`);

    // 5. The old database's WAL and index go first: a WAL left beside the new file would be
    //    replayed into it. Then the rename, atomic, and the folder fsync that makes it durable.
    removeQuietly(`${target}-wal`);
    removeQuietly(`${target}-shm`);
    renameSync(tmp, target);
    placed = true;
    fsyncDir(dataDir);

    const key = masterKeyState(config, check.masterKeyCheck);
    const keyAdvice: Record<typeof key, string> = {
      matches: `the master key at ${config.masterKeyFile} matches this backup`,
      differs: `the master key at ${config.masterKeyFile} is NOT the one this backup was made with: put the matching key there before starting the service, or signing answers 503`,
      missing: `restore the master key this backup was made with to ${config.masterKeyFile} (under systemd: /etc/docverify/credentials/master-key) before starting the service`,
      unreadable: `the master key file ${config.masterKeyFile} cannot be read here; make sure it is the key this backup was made with`,
      "none-needed": "this backup has never had a master key",
    };
    const result = {
      restored: target,
      from: file,
      bytes,
      migrations: check.migrations,
      knownMigrations: check.knownMigrations,
      integrity: "ok",
      masterKey: key,
    };
    io.out.write(
      values.json
        ? JSON.stringify(result) + "\n"
        : `restored ${file} into ${target} (${mib(bytes)}, ${check.migrations} migrations, integrity ok)` +
            (check.migrations < check.knownMigrations ? `; serve applies the ${check.knownMigrations - check.migrations} newer migrations at start` : "") +
            "\n",
    );
    io.err.write(`docverify: ${keyAdvice[key]}\n`);
    return 0;
  } finally {
    if (!placed) {
      removeQuietly(tmp);
      removeQuietly(`${tmp}-wal`);
      removeQuietly(`${tmp}-shm`);
      if (createdDir) {
        try {
          rmdirSync(dataDir);
        } catch {
          /* not empty: leave it */
        }
      }
    }
  }
}
