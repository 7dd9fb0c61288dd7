/**
 * Storage faults, told apart once for both engines (here in lib/, as it imports nothing of
 * either engine: the HTTP layer, which maps it to 503, and the PostgreSQL store both use it): a database that cannot store anything right
 * now (a full disk, a read-only file system, an I/O error, a PostgreSQL server that is not there
 * or refuses writes) is the service being unable to answer, 503 with Retry-After, never an
 * internal error; and it is logged once when it begins and once when it ends, not per request.
 *
 * - `storageFault(e)` classifies an error (its `cause` chain included) by the engine's own codes:
 *   SQLite's result codes (`SQLITE_FULL`, `SQLITE_READONLY…`, `SQLITE_IOERR…`, `SQLITE_CANTOPEN…`,
 *   `SQLITE_BUSY…`/`SQLITE_LOCKED…`) and PostgreSQL's SQLSTATE (Bun.SQL's `errno`: 53100
 *   disk_full, 25006 read_only_sql_transaction, 58030 io_error, class 08 and 57P01–57P03, 53200,
 *   53300) or Bun.SQL's connection codes.
 * - `isBusy(e)` and `isUnavailable(e)` ask the same of the error itself, not its causes: what a
 *   caller that has just caught an engine's error decides with (turn it into a 503 with its own
 *   Retry-After, skip a batch, name the serve lock's holder). An error that already wraps one
 *   (the PostgreSQL store's 503, a DomainError) was decided on where it was made.
 * - `createStorageFaults(log)` keeps the one state a service needs (made by the composition
 *   root, app-scoped): the fault in force, if any. `fault()` enters it (logged when it changes);
 *   `readiness()` fails `storage` while it holds: after the engine's usual check (whose own reason
 *   is given when it fails), a small real write, since a full disk may still let the lock be
 *   taken; the write passing ends the fault, logged as such.
 */
import type { Logger } from "./log.ts";

/** `busy`: another connection holds the lock (a moment); the others: nothing can be stored until it passes. */
export type StorageFault = "busy" | "full" | "read-only" | "io" | "unavailable";

const SQLITE_CODES: readonly (readonly [RegExp, StorageFault])[] = [
  [/^SQLITE_(BUSY|LOCKED)/, "busy"],
  [/^SQLITE_FULL$/, "full"],
  [/^SQLITE_READONLY/, "read-only"],
  [/^SQLITE_IOERR/, "io"],
  [/^SQLITE_CANTOPEN/, "unavailable"],
];

/** The SQLSTATE of an error from PostgreSQL (Bun.SQL puts it in `errno`), its causes included; or null. */
export function sqlState(e: unknown): string | null {
  if (e === null || typeof e !== "object") return null;
  const errno = (e as { errno?: unknown }).errno;
  if (typeof errno === "string" && /^[0-9A-Z]{5}$/.test(errno)) return errno;
  const cause = (e as { cause?: unknown }).cause;
  return cause !== undefined && cause !== e ? sqlState(cause) : null;
}

function postgresFault(state: string): StorageFault | null {
  if (state === "53100") return "full";
  if (state === "25006") return "read-only";
  if (state === "58030") return "io";
  if (state.startsWith("08") || state === "57P01" || state === "57P02" || state === "57P03" || state === "53200" || state === "53300") return "unavailable";
  return null;
}

/**
 * The fault `e` itself reports by its engine's code (its causes not looked at), or null. Bun.SQL's
 * connection codes are all "the database is not there": refused, closed, failed, timed out, and a
 * connection ended after its idle time or lifetime.
 */
function ownFault(e: unknown): StorageFault | null {
  if (e === null || typeof e !== "object") return null;
  const code = (e as { code?: unknown }).code;
  if (typeof code === "string") {
    for (const [re, kind] of SQLITE_CODES) if (re.test(code)) return kind;
    if (/^ERR_POSTGRES_(CONNECTION_[A-Z_]+|IDLE_TIMEOUT|LIFETIME_TIMEOUT)$/.test(code)) return "unavailable";
  }
  const errno = (e as { errno?: unknown }).errno;
  if (typeof errno === "string" && /^[0-9A-Z]{5}$/.test(errno)) return postgresFault(errno);
  return null;
}

/** The kind of storage fault `e` is, its `cause` chain included, or null for any other error. */
export function storageFault(e: unknown, depth = 0): StorageFault | null {
  if (e === null || typeof e !== "object" || depth > 8) return null;
  const own = ownFault(e);
  if (own !== null) return own;
  const cause = (e as { cause?: unknown }).cause;
  return cause !== undefined && cause !== e ? storageFault(cause, depth + 1) : null;
}

/**
 * SQLite's `SQLITE_BUSY…` or `SQLITE_LOCKED…` (extended codes included) on `e` itself: another
 * connection held the lock past busy_timeout (0 where a caller chose not to wait). PostgreSQL's
 * serialization failure and deadlock (40001, 40P01) are not busy: its store runs the transaction
 * again itself; nor is 55P03 (lock_not_available), which no statement of docverify's asks for.
 */
export function isBusy(e: unknown): boolean {
  return ownFault(e) === "busy";
}

/**
 * The database is not there, on `e` itself: a lost, refused or failed PostgreSQL connection
 * (Bun.SQL's `ERR_POSTGRES_CONNECTION_…`, idle and lifetime ends), SQLSTATE class 08, the server
 * shutting down or starting up (57P01–57P03), out of memory or connections (53200, 53300);
 * SQLite's `SQLITE_CANTOPEN…`. What a caller is told as 503 with Retry-After, never a 500.
 */
export function isUnavailable(e: unknown): boolean {
  return ownFault(e) === "unavailable";
}

/** Seconds a caller refused for a storage fault waits: a moment for a lock, longer for the rest. */
export function faultRetrySeconds(kind: StorageFault): number {
  return kind === "busy" ? 1 : 5;
}

const MESSAGES: Readonly<Record<Exclude<StorageFault, "busy">, string>> = {
  full: "the disk is full",
  "read-only": "the storage is read-only",
  io: "the storage reports an I/O error",
  unavailable: "the database is not answering",
};

export interface StorageFaults {
  /** A request met `kind` (the error, for the log's first line of it). `busy` is a moment, not a state. */
  fault(kind: StorageFault, error: unknown): void;
  /**
   * The `storage` readiness check: `check` (the engine's usual one), and while a fault holds and
   * `check` passes, `probe` (a small real write) too: passing ends the fault.
   */
  readiness(check: () => Promise<true | string> | true | string, probe: () => Promise<void>): Promise<true | string>;
}

export function createStorageFaults(log: Logger): StorageFaults {
  let current: Exclude<StorageFault, "busy"> | null = null;
  const reason = (e: unknown) => (e instanceof Error ? e.message : String(e)).split("\n")[0]!.slice(0, 300);
  function fault(kind: StorageFault, error: unknown): void {
    if (kind === "busy" || kind === current) return;
    current = kind;
    log.error("storage fault: answering 503 until it passes", { fault: kind, meaning: MESSAGES[kind], error: reason(error) });
  }
  return {
    fault,
    async readiness(check, probe) {
      const checked = await check();
      // The engine's own check says more when it fails (a database not answering).
      if (current === null || checked !== true) return checked;
      try {
        await probe();
      } catch (e) {
        const kind = storageFault(e);
        if (kind !== null) fault(kind, e);
        return `storage unavailable: ${MESSAGES[current]} (${reason(e)})`;
      }
      log.info("storage works again", { fault: current });
      current = null;
      return true;
    },
  };
}
