/**
 * Backup and restore of the database file: the mechanics under `docverify backup` and
 * `docverify restore` (admin/backup.ts, which parses arguments, shows progress and picks exit codes).
 *
 * What `backupDatabase` guarantees:
 * - The copy is the database as of one read transaction: SQLite's `VACUUM INTO` on a read-only,
 *   NOFOLLOW connection (a snapshot, WAL included), so writers carry on meanwhile and every commit
 *   is wholly in the copy or wholly absent. It never writes to the live database (nor migrates
 *   it), and never reads it through a symbolic link. bun:sqlite exposes neither the page-by-page
 *   backup API (sqlite3_backup_step) nor the sqlite_dbpage table, and `serialize()` holds the
 *   whole database in memory; `VACUUM INTO` streams to the file and leaves out free pages. It
 *   blocks this thread until done, hence `BackupProgress`.
 * - The target is written under a temporary name beside it (mode 0600 before a byte is written:
 *   the copy holds key digests and sealed private keys), fsynced (SQLite does not fsync a
 *   `VACUUM INTO` target), checked (`checkDatabase`, and a migration history equal to this
 *   binary's), and only then put in place, by link(2), which never replaces a file, or rename(2)
 *   with `force`; then the folder is fsynced. A crash or a failed check leaves the previous file
 *   untouched and no temporary file behind.
 * - The target is never one of the files the service lives on (`refuseProtectedTarget`).
 *
 * What `restoreDatabase` guarantees: it changes nothing, and removes a data folder it created,
 * unless every check passes: the file is an intact docverify database this binary can run
 * (header, then integrity, tables and migration history of the copy that will be installed), no
 * process has the database open (`openedBy`) nor runs the local ledger in its folder, and an
 * existing database is replaced only with `force`. The copy is fsynced, owned like the data
 * folder, and renamed into place after the old WAL and index are removed; then the folder is
 * fsynced.
 *
 * Refusals are OpsError with a message the operator can act on. The master key is in neither:
 * the caller says so, and whether the configured key matches the restored database's check value.
 */
import { constants, Database } from "bun:sqlite";
import { randomBytes } from "node:crypto";
import { chownSync, closeSync, existsSync, linkSync, lstatSync, mkdirSync, openSync, renameSync, rmdirSync, statSync, unlinkSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { copyToNewFileSync, syncPath } from "../lib/durable.ts";
import { OpsError } from "../lib/errors.ts";
import { LEDGER_LOCK_FILE, lockFileHolder } from "../lib/lock-file.ts";
import { lockHolders } from "../lib/proc-locks.ts";
import { checkDatabase, checkHeader, type DatabaseCheck } from "./database-check.ts";
import { DATABASE_FILE, refuseSymlinks, SERVE_LOCK_FILE, withSideFiles } from "./data-folder.ts";
import { BUSY_TIMEOUT_MS } from "./db.ts";

export type { DatabaseCheck };

/** Where the service lives: what a backup may never write over, and what a restore must find unused. */
export interface ServiceFiles {
  readonly dataDir: string;
  /** The configured master key file (DOCVERIFY_MASTER_KEY_FILE), wherever it is. */
  readonly masterKeyFile: string;
  /** The embedded local ledger's folder (DATA_DIR/ledger). */
  readonly ledgerDir: string;
}

/** Told when `VACUUM INTO` starts and ends, since it blocks this thread meanwhile. */
export interface BackupProgress {
  /** The copy into `file`, about `totalBytes` (the source's used pages), is about to begin. */
  started(file: string, totalBytes: number): Promise<void>;
  /** The copy ended: its size on success, null when it failed. */
  ended(copiedBytes: number | null): void;
}

export interface BackupOptions extends ServiceFiles {
  /** The backup file, an absolute path. */
  readonly target: string;
  /** Replace an existing target. */
  readonly force: boolean;
  readonly progress?: BackupProgress;
}

export interface BackupResult {
  readonly file: string;
  readonly bytes: number;
  readonly check: DatabaseCheck;
}

function tempBeside(target: string, tag: string): string {
  return join(dirname(target), `.${basename(target)}.${tag}-${process.pid}-${randomBytes(4).toString("hex")}`);
}

function removeQuietly(...paths: string[]): void {
  for (const path of paths) {
    try {
      unlinkSync(path);
    } catch {
      /* already gone */
    }
  }
}

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
export function refuseProtectedTarget(target: string, service: ServiceFiles): void {
  const { dataDir, masterKeyFile } = service;
  const database = join(dataDir, DATABASE_FILE);
  const guarded = [...withSideFiles(database), join(dataDir, "master.key"), masterKeyFile, ...withSideFiles(join(dataDir, SERVE_LOCK_FILE))];
  const targetDir = identity(dirname(target));
  const targetItself = identity(target);
  for (const file of guarded) {
    const sameName = targetDir !== null && basename(target) === basename(file) && identity(dirname(file)) === targetDir;
    const sameFile = targetItself !== null && identity(file) === targetItself;
    if (sameName || sameFile) {
      const what =
        file === masterKeyFile || basename(file) === "master.key"
          ? "the master key file"
          : basename(file).startsWith(SERVE_LOCK_FILE)
            ? "the serve lock"
            : file === database
              ? "the live database itself"
              : "a side file of the live database";
      throw new OpsError(`${target} is ${what}: a backup never writes over it; back up to another file`);
    }
  }
  const ledger = identity(service.ledgerDir);
  if (ledger !== null && targetDir === ledger) throw new OpsError(`${target} is in the ledger's folder ${service.ledgerDir}; back up to another folder`);
}

/** Copies the live database of `dataDir` to `target` (see the contract above). */
export async function backupDatabase(options: BackupOptions): Promise<BackupResult> {
  const { target, force, progress } = options;
  const source = join(options.dataDir, DATABASE_FILE);

  // Never read through a link: run as root, a planted docverify.db link would copy any file out.
  refuseSymlinks(withSideFiles(source));
  if (!existsSync(source)) throw new OpsError(`no database at ${source} (set --data or DOCVERIFY_DATA_DIR to the service's data folder)`);
  if (!existsSync(dirname(target)) || !statSync(dirname(target)).isDirectory()) throw new OpsError(`folder ${dirname(target)} does not exist`);
  refuseProtectedTarget(target, options);
  if (existsSync(target)) {
    if (statSync(target).isDirectory()) throw new OpsError(`${target} is a folder; name the backup file`);
    if (!force) throw new OpsError(`${target} exists; pass --force to replace it`);
  }

  const tmp = tempBeside(target, "partial");
  // Created empty, owner-only, before SQLite writes a byte: VACUUM INTO accepts an empty file.
  closeSync(openSync(tmp, "wx", 0o600));
  let placed = false;
  try {
    let sqlite: Database;
    try {
      // NOFOLLOW: a link planted since the check above is refused by SQLite itself.
      sqlite = new Database(source, constants.SQLITE_OPEN_READONLY | constants.SQLITE_OPEN_NOFOLLOW);
      sqlite.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    } catch (e) {
      throw new OpsError(`cannot open ${source}: ${(e as Error).message}`);
    }
    try {
      const one = (pragma: string) => Number((sqlite.query(`PRAGMA ${pragma}`).values()[0] ?? [0])[0]);
      const total = (one("page_count") - one("freelist_count")) * one("page_size");
      await progress?.started(tmp, total);
      let copied = false;
      try {
        sqlite.query("VACUUM INTO ?").run(tmp);
        copied = true;
      } catch (e) {
        throw new OpsError(`backup of ${source} failed: ${(e as Error).message}`);
      } finally {
        progress?.ended(copied ? statSync(tmp).size : null);
      }
    } finally {
      sqlite.close();
    }
    // SQLite does not fsync a VACUUM INTO target; the rename must not outrun the data.
    syncPath(tmp);
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
    syncPath(dirname(target));
    return { file: target, bytes: statSync(target).size, check };
  } finally {
    if (!placed) removeQuietly(tmp);
  }
}

/**
 * Which processes hold the database open, judged from the kernel's lock table.
 *
 * Every SQLite connection to a WAL database holds a shared POSIX lock on the database file and
 * on byte 128 of its `-shm` file for as long as it is open, idle or not (the WAL index's
 * "dead man switch"), and the kernel drops them the moment the process exits, however it exits.
 * So a lock on either file in /proc/locks means a live process (`serve`, or an admin command)
 * has this very database open, with no pid file that could be stale. The systemd unit does not
 * set PrivatePIDs, so the service's locks are in the table too.
 *
 * Returns the holders' pids (0 when the kernel does not say), or null when /proc/locks cannot
 * be read (not Linux): the caller then says it could not tell.
 */
export function openedBy(databasePath: string): number[] | null {
  return lockHolders([databasePath, `${databasePath}-shm`, `${databasePath}-wal`]);
}

/** The live process, other than this one, holding the embedded local ledger's lock in `ledgerDir`. */
function ledgerLockHolder(ledgerDir: string): number | null {
  const holder = lockFileHolder(join(ledgerDir, LEDGER_LOCK_FILE));
  return holder === process.pid ? null : holder;
}

export interface RestoreOptions extends Omit<ServiceFiles, "masterKeyFile"> {
  /** The backup to restore, an absolute path. */
  readonly file: string;
  /** Replace an existing database. */
  readonly force: boolean;
  /** Told what could not be checked (the caller shows it and goes on). */
  warn(message: string): void;
}

export interface RestoreResult {
  /** The database file restored into. */
  readonly target: string;
  readonly bytes: number;
  readonly check: DatabaseCheck;
}

/** Puts the backup `file` in place as the database of `dataDir` (see the contract above). */
export function restoreDatabase(options: RestoreOptions): RestoreResult {
  const { file, force, dataDir } = options;
  const target = join(dataDir, DATABASE_FILE);

  // 1. The file itself, read only.
  if (!existsSync(file)) throw new OpsError(`${file} does not exist`);
  if ([target, `${target}-wal`, `${target}-shm`].includes(file)) throw new OpsError(`${file} is the data folder's own database`);
  checkHeader(file);

  // 2. Nothing may have the database open: replacing it under a running service would leave the
  //    service writing to a deleted file, and every later acknowledgement would be lost.
  const holders = openedBy(target);
  if (holders === null) {
    options.warn("cannot read /proc/locks to tell whether a process has the database open; make sure the service is stopped");
  } else if (holders.length > 0) {
    throw new OpsError(
      `${target} is open in another process (pid ${holders.join(", ")}): stop the service first (systemctl stop docverify) and any admin command using ${dataDir}`,
    );
  }
  const ledgerOwner = ledgerLockHolder(options.ledgerDir);
  if (ledgerOwner !== null) {
    throw new OpsError(`a docverify process (pid ${ledgerOwner}) runs the local ledger in ${options.ledgerDir}: stop the service first`);
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
    const bytes = copyToNewFileSync(file, tmp, 0o600);
    // Run as root into a service's folder (systemd's StateDirectory), the file must belong to
    // the service's user like the folder does, or the service could not open it.
    const folder = lstatSync(dataDir);
    if (process.getuid?.() === 0 && (folder.uid !== 0 || folder.gid !== 0)) chownSync(tmp, folder.uid, folder.gid);
    const check = checkDatabase(tmp, file);
    // A copy taken with cp from a stopped WAL database may leave SQLite's side files after the check.
    removeQuietly(`${tmp}-wal`, `${tmp}-shm`);

    // 5. The old database's WAL and index go first: a WAL left beside the new file would be
    //    replayed into it. Then the rename, atomic, and the folder fsync that makes it durable.
    removeQuietly(`${target}-wal`, `${target}-shm`);
    renameSync(tmp, target);
    placed = true;
    syncPath(dataDir);
    return { target, bytes, check };
  } finally {
    if (!placed) {
      removeQuietly(tmp, `${tmp}-wal`, `${tmp}-shm`);
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
