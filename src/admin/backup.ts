/**
 * `docverify backup FILE` and `docverify restore FILE`: a consistent copy of the database taken
 * while `serve` runs on it, and putting such a copy back into a data folder no process uses.
 *
 * This is the command: arguments, progress, what is printed, exit codes. The mechanics and what
 * they guarantee (VACUUM INTO, the checks, durable placing, restore's in-use check, the files a
 * backup never writes over) are in storage/backup.ts.
 *
 * Progress: VACUUM INTO blocks this thread until done, so a worker watches the target file grow
 * against the source's used pages (an upper bound: the copy is compacted, so the last step may
 * jump). It is shown on a terminal, or with --progress.
 *
 * The master key is never in a backup: it lives in its own file or systemd credential, and
 * both commands say so. Exit codes: 0 done, 1 refused or failed, 2 bad usage (UsageError).
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { ledgerDir } from "../anchoring/paths.ts";
import { parseConfig, type Config } from "../config/index.ts";
import { masterKeyCheckValue, masterKeyId, parseMasterKey } from "../crypto/index.ts";
import { parseFlags, UsageError, type FlagSpec } from "../lib/args.ts";
import { OpsError } from "../lib/errors.ts";
import { backupDatabase, restoreDatabase, type BackupProgress } from "../storage/backup.ts";
import { requireDataFolder } from "../storage/data-folder.ts";

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

/** How often the progress line is refreshed. */
const PROGRESS_MS = 100;

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

/** The progress line on stderr: a worker while the copy runs, then the size copied. */
function progressOn(io: Io): BackupProgress {
  let worker: Worker | null = null;
  return {
    async started(file, total) {
      try {
        worker = new Worker(URL.createObjectURL(new Blob([PROGRESS_WORKER], { type: "application/javascript" })));
        worker.postMessage({ file, total, tty: io.errIsTTY, intervalMs: PROGRESS_MS });
      } catch {
        worker = null; // progress is a courtesy; the backup goes on without it
      }
      // Let the worker start before this thread blocks in VACUUM.
      await Bun.sleep(20);
    },
    ended(copied) {
      worker?.terminate();
      if (copied !== null) io.err.write(`${io.errIsTTY ? "\r\u001b[K" : ""}backup: ${mib(copied)} copied\n`);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// backup

/**
 * Both commands copy the embedded SQLite database. With PostgreSQL the data is the database
 * server's, backed up with its own tools (docs/operations.md "Several nodes"): refused, with the
 * pointer.
 */
function refuseOnPostgres(config: Config, command: "backup" | "restore"): void {
  if (config.databaseUrl === null) return;
  const tools =
    command === "backup"
      ? "back it up with pg_dump (a logical copy) or pg_basebackup (a physical copy; with WAL archiving, to any point in time)"
      : "restore it with pg_restore or psql (from pg_dump), or from a pg_basebackup copy";
  throw new OpsError(
    `${command} works on the embedded SQLite database, and DOCVERIFY_DATABASE_URL puts this service's data in PostgreSQL: ${tools}. ` +
      `The master key is in neither: keep it apart (docs/storage.md).`,
  );
}

export async function runBackup(args: readonly string[], env: Env, io: Io): Promise<number> {
  const { values, positionals } = parse("backup", args, { progress: { type: "boolean" } });
  const config = parseConfig(env, { dataDir: typeof values.data === "string" ? values.data : undefined });
  refuseOnPostgres(config, "backup");
  // It only reads the data folder: one that does not exist is named plainly.
  requireDataFolder(config.dataDir);
  const started = Date.now();
  const { file, bytes, check } = await backupDatabase({
    dataDir: config.dataDir,
    masterKeyFile: config.masterKeyFile,
    ledgerDir: ledgerDir(config.dataDir),
    target: resolve(positionals[0]!),
    force: values.force === true,
    progress: values.progress === true || io.errIsTTY ? progressOn(io) : undefined,
  });
  const result = {
    file,
    bytes,
    pages: check.pages,
    migrations: check.migrations,
    integrity: "ok",
    durationMs: Date.now() - started,
    masterKeyIncluded: false,
    // Which master key opens it (docverify master-key rotate prints the ids it moves between).
    masterKeyId: check.masterKeyCheck === null ? null : masterKeyId(check.masterKeyCheck),
  };
  io.out.write(
    values.json
      ? JSON.stringify(result) + "\n"
      : `backup written: ${file} (${mib(bytes)}, ${check.migrations} migrations, integrity ok, ${result.durationMs} ms)\n`,
  );
  io.err.write(
    `docverify: the master key is not in the backup. Keep a copy of ${config.masterKeyFile} ` +
      `(under systemd: /etc/docverify/credentials/master-key) apart from it: without that key no private key in the backup can be opened.` +
      (result.masterKeyId === null ? "\n" : ` This backup opens with master key ${result.masterKeyId}, also after a master key rotation.\n`),
  );
  return 0;
}

// ---------------------------------------------------------------------------------------------
// restore

/** Whether the configured master key file opens the database whose check value is `check`. */
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
  return masterKeyCheckValue(parsed.key) === check ? "matches" : "differs";
}

export function runRestore(args: readonly string[], env: Env, io: Io): number {
  const { values, positionals } = parse("restore", args, {});
  const config = parseConfig(env, { dataDir: typeof values.data === "string" ? values.data : undefined });
  refuseOnPostgres(config, "restore");
  const file = resolve(positionals[0]!);
  const { target, bytes, check } = restoreDatabase({
    file,
    dataDir: config.dataDir,
    ledgerDir: ledgerDir(config.dataDir),
    force: values.force === true,
    warn: (message) => io.err.write(`docverify: ${message}\n`),
  });

  const key = masterKeyState(config, check.masterKeyCheck);
  const keyAdvice: Record<typeof key, string> = {
    matches: `the master key at ${config.masterKeyFile} matches this backup`,
    differs: `the master key at ${config.masterKeyFile} is NOT the one this backup was made with (master key ${masterKeyId(check.masterKeyCheck ?? "")}, the one in use when it was taken, also if it was rotated since): put that key there before starting the service, or signing answers 503`,
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
    masterKeyId: check.masterKeyCheck === null ? null : masterKeyId(check.masterKeyCheck),
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
}
