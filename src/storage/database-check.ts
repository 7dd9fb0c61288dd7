/**
 * Is this file a docverify database this binary can run? The same checks after a backup (on the
 * copy, before it is put in place) and before a restore (the header first, then the copy that
 * will be installed). Both throw OpsError saying what is wrong; neither writes to the file.
 */
import { Database } from "bun:sqlite";
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { OpsError } from "../lib/errors.ts";
import { BUSY_TIMEOUT_MS, openDatabase } from "./db.ts";
import { embeddedMigrations, migrate } from "./migrate.ts";
import { MASTER_KEY_CHECK } from "./meta.ts";

const SQLITE_MAGIC = "SQLite format 3\0";

export interface DatabaseCheck {
  readonly pages: number;
  readonly pageSize: number;
  /** Migrations applied in the file. */
  readonly migrations: number;
  /** Migrations this binary has; more than `migrations` means `serve` migrates at start. */
  readonly knownMigrations: number;
  /** The database's remembered master key check value (crypto's masterKeyCheckValue), or null if it never had a key. */
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
 * `what` names the file in messages ("the backup").
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
      ? ((sqlite.query("SELECT value FROM service_meta WHERE key = ?").get(MASTER_KEY_CHECK) as { value: string } | null)?.value ?? null)
      : null;
    return { pages, pageSize, migrations: applied.length, knownMigrations: known.length, masterKeyCheck: check };
  } finally {
    sqlite.close();
  }
}

/** Cheap checks of the file's first page (an SQLite header, not truncated), before anything is written anywhere. */
export function checkHeader(file: string): void {
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
