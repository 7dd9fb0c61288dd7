/**
 * The data folder's own safety, for every entry point that opens it:
 *
 * - Owner-only: the folder is created 0700, and an existing one that is open to other users is
 *   tightened to 0700 when it is opened (the caller logs that it was).
 * - No symbolic links where the database and the master key live: the administration commands
 *   are often run as root, and a `docverify.db` (or `-wal`, `-shm`, `master.key`) planted as a
 *   link by whoever can write the folder would make them read or write a file elsewhere.
 * - One `serve` at a time (docs/operations.md "Administration on the server"): `lockDataFolder`
 *   takes an exclusive lock that the kernel holds for the life of the process and drops however it
 *   ends, SIGKILL included.
 * - A command that only reads (`org list`, `status`, `backup`, …) creates nothing: the data folder
 *   and its database must exist (`requireDataFolder`), or it says so plainly.
 *
 * The lock is SQLite's own file locking on `serve.lock`, a small SQLite database: a write
 * transaction begun with BEGIN IMMEDIATE and never committed holds a RESERVED lock (a POSIX
 * advisory lock, so the kernel releases it with the process). Another process's BEGIN IMMEDIATE
 * then fails at once with SQLITE_BUSY, while it may still read the committed row that names the
 * holder's pid. No pid file decides anything: a row left by a killed holder is just overwritten.
 * Bun offers no flock(2) short of FFI; bun:sqlite is already here and does this portably.
 * Within this process, nothing else may open `serve.lock` (closing any descriptor of a file
 * drops this process's POSIX locks on it); SQLite guards its own connections.
 *
 * Once it listens, `serve` also writes `serve.json` (its pid and the address it really uses, the
 * port included when DOCVERIFY_PORT=0 picked one) and removes it when it stops, so that commands
 * beside it (`person add`, whose enrolment link names that address) can tell where it listens.
 * The lock stays the only thing that decides whether a serve runs: a `serve.json` left by a killed
 * serve is believed only while its pid holds the lock.
 */
import { constants, Database } from "bun:sqlite";
import { chmodSync, closeSync, constants as fsConstants, lstatSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { OpsError } from "../lib/errors.ts";
import { processAlive } from "../lib/lock-file.ts";
import { lockHolders } from "../lib/proc-locks.ts";
import { isBusy } from "../lib/storage-faults.ts";

/** The database's file in the data folder. */
export const DATABASE_FILE = "docverify.db";

/** The serve lock's file in the data folder. */
export const SERVE_LOCK_FILE = "serve.lock";

/** The running serve's address, in the data folder while it runs (`recordServeAddress`). */
export const SERVE_ADDRESS_FILE = "serve.json";

/** A database file with the side files SQLite keeps beside it. */
export function withSideFiles(path: string): string[] {
  return [path, `${path}-wal`, `${path}-shm`, `${path}-journal`];
}

/**
 * Refuses (OpsError) when any of `paths` is a symbolic link; paths that do not exist are fine.
 * Checked right before the open, so only a link planted in between those two moments escapes it.
 */
export function refuseSymlinks(paths: readonly string[]): void {
  for (const path of paths) {
    let isLink: boolean;
    try {
      isLink = lstatSync(path).isSymbolicLink();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw e;
    }
    if (isLink) {
      throw new OpsError(
        `${path} is a symbolic link: docverify does not follow links for its database and master key, which would let ` +
          "whoever can write the data folder make a command run as root read or write a file elsewhere. Replace the link with the file itself",
      );
    }
  }
}

export interface FolderTightening {
  /** The folder's mode before, e.g. 0o755. */
  readonly was: number;
  /** False when it could not be changed (this user does not own it); `error` says why. */
  readonly tightened: boolean;
  readonly error?: string;
}

/**
 * Creates `dir` (mode 0700) if missing; an existing folder that group or others may use is
 * tightened to 0700. Returns what it found when it was looser, for the caller to log; null when
 * the folder was new or already owner-only.
 */
export function secureDataFolder(dir: string): FolderTightening | null {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const was = statSync(dir).mode & 0o7777;
  if ((was & 0o077) === 0) return null;
  try {
    chmodSync(dir, was & 0o7700);
    return { was, tightened: true };
  } catch (e) {
    return { was, tightened: false, error: (e as NodeJS.ErrnoException).code ?? (e as Error).message };
  }
}

/** A command that only reads found no data folder (or no database in it): it created nothing. */
export class NoDataFolderError extends OpsError {
  constructor(
    readonly dataDir: string,
    why: "missing" | "not-a-folder" | "no-database",
  ) {
    const where = "(DOCVERIFY_DATA_DIR or --data)";
    const makes = "docverify serve or org create makes one";
    super(
      why === "missing"
        ? `no data folder at ${dataDir} ${where}; ${makes}`
        : why === "not-a-folder"
          ? `no data folder at ${dataDir}: it is a file, not a folder ${where}`
          : `no data folder at ${dataDir}: it holds no ${DATABASE_FILE} ${where}; ${makes}`,
    );
  }
}

/**
 * For a command that only reads: throws NoDataFolderError unless `dir` is a folder holding a
 * database, and creates nothing. The folder may be a symbolic link (to another disk); a database
 * that is a link passes here and is refused by `refuseSymlinks` where it is opened.
 */
export function requireDataFolder(dir: string): void {
  try {
    if (!statSync(dir).isDirectory()) throw new NoDataFolderError(dir, "not-a-folder");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") throw new NoDataFolderError(dir, "missing");
    throw e;
  }
  try {
    lstatSync(join(dir, DATABASE_FILE));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") throw new NoDataFolderError(dir, "no-database");
    throw e;
  }
}

/** Octal, as `ls` and chmod speak it: 0o755 → "0755". */
export function octal(mode: number): string {
  return mode.toString(8).padStart(4, "0");
}

/** Another `serve` holds the data folder. */
export class DataFolderInUseError extends OpsError {
  constructor(
    readonly dataDir: string,
    /** The holder's pid, when it could be read. */
    readonly pid: number | null,
  ) {
    super(
      `data folder ${dataDir} is in use by another docverify serve (${pid === null ? "pid unknown" : `pid ${pid}`}): ` +
        "one serve per data folder. Stop that one first, or give this one its own --data or DOCVERIFY_DATA_DIR",
    );
  }
}

export interface DataFolderLock {
  readonly file: string;
  /** Drops the lock. Idempotent. The process ending drops it too, however it ends. */
  release(): void;
}

/**
 * The holder's pid, from the row it committed. A holder that has just taken the lock may not have
 * replaced a killed predecessor's row yet; a pid that is not running is asked again a few times.
 */
function holderOf(db: Database): number | null {
  for (let attempt = 0; attempt < 20; attempt++) {
    let pid: number | null = null;
    try {
      const row = db.query("SELECT pid FROM holder").get() as { pid: number } | null;
      pid = row?.pid ?? null;
    } catch {
      /* no table yet, or the holder is committing: ask again */
    }
    if (pid !== null && processAlive(pid)) return pid;
    Bun.sleepSync(10);
  }
  return null;
}

/**
 * Takes the data folder's serve lock, or throws DataFolderInUseError naming the holder's pid.
 * Creates the folder (0700) if needed. Administration commands never take it: they work beside a
 * running `serve` through SQLite's own locking of the database.
 */
export function lockDataFolder(dataDir: string): DataFolderLock {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, SERVE_LOCK_FILE);
  refuseSymlinks(withSideFiles(file));
  // NOFOLLOW as well as the check above: a link planted in between is refused by SQLite itself.
  const db = new Database(file, constants.SQLITE_OPEN_READWRITE | constants.SQLITE_OPEN_CREATE | constants.SQLITE_OPEN_NOFOLLOW);
  // busy_timeout stays 0: a lock held by another serve is the answer, not something to wait for.
  const begin = () => {
    try {
      db.run("BEGIN IMMEDIATE");
    } catch (e) {
      if (isBusy(e)) throw new DataFolderInUseError(dataDir, holderOf(db));
      throw e;
    }
  };
  try {
    begin();
    db.run("CREATE TABLE IF NOT EXISTS holder (pid INTEGER NOT NULL, since TEXT NOT NULL)");
    db.run("DELETE FROM holder");
    db.run("INSERT INTO holder (pid, since) VALUES (?, ?)", [process.pid, new Date().toISOString()]);
    db.run("COMMIT");
    // Held from here on. Another serve that slipped in since the COMMIT wins; this one refuses.
    begin();
  } catch (e) {
    db.close();
    throw e;
  }
  try {
    chmodSync(file, 0o600);
  } catch {
    /* not ours to change (another user's file): the lock holds all the same */
  }
  let released = false;
  return {
    file,
    release() {
      if (released) return;
      released = true;
      try {
        db.run("ROLLBACK");
      } finally {
        db.close();
      }
    },
  };
}

/** Where a running `serve` listens, as it wrote it in `serve.json`. */
export interface ServeAddress {
  readonly pid: number;
  /** The address it listens on, `http(s)://HOST:PORT`, with the port it really bound. */
  readonly url: string;
  /** DOCVERIFY_PUBLIC_URL as that serve was given it; null when it was not set (its links then name `url`). */
  readonly publicUrl: string | null;
}

/**
 * Writes `serve.json` for this process (owner-only, replaced in one rename, so a reader never sees
 * half of it). Only the holder of the serve lock calls it. `remove` deletes it; idempotent.
 */
export function recordServeAddress(dataDir: string, address: Omit<ServeAddress, "pid">): { remove(): void } {
  const file = join(dataDir, SERVE_ADDRESS_FILE);
  const tmp = join(dataDir, `.${SERVE_ADDRESS_FILE}.${process.pid}.tmp`);
  const unlinkQuietly = (path: string) => {
    try {
      unlinkSync(path); // a link planted there is removed itself, never followed
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    }
  };
  unlinkQuietly(tmp);
  const fd = openSync(tmp, "wx", 0o600);
  try {
    writeSync(fd, JSON.stringify({ pid: process.pid, url: address.url, publicUrl: address.publicUrl, since: new Date().toISOString() }) + "\n");
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
  let removed = false;
  return {
    remove() {
      if (removed) return;
      removed = true;
      unlinkQuietly(file);
    },
  };
}

/**
 * The serve running on `dataDir`, or null when none does. `serve.json` names it, and is believed
 * only while that pid holds the serve lock (from the kernel's lock table; where that cannot be
 * read, while that pid runs): a file left by a killed serve names nothing. Never through a link,
 * and anything unreadable or malformed is no serve.
 */
export function runningServe(dataDir: string): ServeAddress | null {
  let text: string;
  try {
    const fd = openSync(join(dataDir, SERVE_ADDRESS_FILE), fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
    try {
      text = readFileSync(fd, "utf8");
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  const { pid, url, publicUrl } = (parsed ?? {}) as Record<string, unknown>;
  const isUrl = (u: unknown): u is string => typeof u === "string" && /^https?:\/\/[^\s]+$/.test(u);
  if (typeof pid !== "number" || !Number.isInteger(pid) || pid <= 0 || !isUrl(url) || !(publicUrl === null || isUrl(publicUrl))) return null;
  if (pid !== process.pid) {
    const holders = lockHolders([join(dataDir, SERVE_LOCK_FILE)]);
    if (holders === null ? !processAlive(pid) : !holders.includes(pid)) return null;
  }
  return { pid, url, publicUrl };
}
