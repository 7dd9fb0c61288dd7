/**
 * Storage that cannot store (a full disk, a read-only file system, an I/O error, a PostgreSQL
 * server that is full, read-only or gone) as a caller and an operator meet it: 503
 * SERVICE_UNAVAILABLE with Retry-After, never 500; one log line when it begins (never a stack
 * trace per request) and one when it ends; `/readyz` failing `storage` meanwhile. The SQLite
 * error is a real one: a database whose `max_page_count` is reached reports SQLITE_FULL as a full
 * disk does.
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { join } from "node:path";
import { createHttp } from "../src/http/server.ts";
import { memoryLogger } from "../src/lib/log.ts";
import { createStorageFaults, isBusy, isUnavailable, storageFault } from "../src/lib/storage-faults.ts";
import { tempDir } from "./support/env.ts";

/** A real SQLite database that is full: every insert fails with SQLITE_FULL. */
function fullDatabase(): Database {
  const db = new Database(join(tempDir(), "full.db"));
  db.run("CREATE TABLE t (v BLOB)");
  const pages = (db.query("PRAGMA page_count").get() as { page_count: number }).page_count;
  db.run(`PRAGMA max_page_count = ${pages}`);
  return db;
}

const pgError = (errno: string) => Object.assign(new Error(`PostgreSQL says ${errno}`), { code: "ERR_POSTGRES_SERVER_ERROR", errno });

describe("storageFault: each engine's codes, once", () => {
  test("a real SQLITE_FULL from bun:sqlite is a full disk", () => {
    const db = fullDatabase();
    let error: unknown;
    try {
      db.run("INSERT INTO t VALUES (randomblob(100000))");
    } catch (e) {
      error = e;
    }
    expect((error as { code?: string }).code).toBe("SQLITE_FULL");
    expect(storageFault(error)).toBe("full");
    db.close();
  });

  const cases: [string, unknown, ReturnType<typeof storageFault>][] = [
    ["SQLITE_BUSY", { code: "SQLITE_BUSY" }, "busy"],
    ["SQLITE_BUSY_SNAPSHOT", { code: "SQLITE_BUSY_SNAPSHOT" }, "busy"],
    ["SQLITE_LOCKED", { code: "SQLITE_LOCKED" }, "busy"],
    ["SQLITE_READONLY", { code: "SQLITE_READONLY" }, "read-only"],
    ["SQLITE_READONLY_DBMOVED", { code: "SQLITE_READONLY_DBMOVED" }, "read-only"],
    ["SQLITE_IOERR_WRITE", { code: "SQLITE_IOERR_WRITE" }, "io"],
    ["SQLITE_IOERR_FSYNC", { code: "SQLITE_IOERR_FSYNC" }, "io"],
    ["SQLITE_CANTOPEN", { code: "SQLITE_CANTOPEN" }, "unavailable"],
    ["PostgreSQL disk_full (53100)", pgError("53100"), "full"],
    ["PostgreSQL read_only_sql_transaction (25006)", pgError("25006"), "read-only"],
    ["PostgreSQL io_error (58030)", pgError("58030"), "io"],
    ["PostgreSQL admin_shutdown (57P01)", pgError("57P01"), "unavailable"],
    ["PostgreSQL connection_failure (08006)", pgError("08006"), "unavailable"],
    ["Bun.SQL connection closed", { code: "ERR_POSTGRES_CONNECTION_CLOSED" }, "unavailable"],
    ["Bun.SQL connection failed", { code: "ERR_POSTGRES_CONNECTION_FAILED" }, "unavailable"],
    ["a fault as the cause of another error", new Error("insert failed", { cause: { code: "SQLITE_FULL" } }), "full"],
    ["SQLITE_CONSTRAINT (a caller's conflict, not a fault)", { code: "SQLITE_CONSTRAINT_UNIQUE" }, null],
    ["SQLITE_CORRUPT (not something to wait out)", { code: "SQLITE_CORRUPT" }, null],
    ["PostgreSQL unique_violation (23505)", pgError("23505"), null],
    ["PostgreSQL serialization_failure (40001)", pgError("40001"), null],
    ["a TypeError", new TypeError("x is undefined"), null],
    ["null", null, null],
  ];
  for (const [what, error, kind] of cases) {
    test(`${what}: ${kind ?? "not a storage fault"}`, () => {
      expect(storageFault(error)).toBe(kind);
    });
  }
});

/**
 * isBusy and isUnavailable, the one definition each of the callers that decide on an engine's
 * error they have just caught (the verification log, its retention sweep, record writes, the
 * writer thread, the serve lock, the PostgreSQL store): the error's own code, never its causes,
 * so an error already turned into a 503 elsewhere is not decided on again.
 */
describe("isBusy and isUnavailable: the error's own code", () => {
  const sqliteBusy = (code: string) => Object.assign(new Error(code), { code });
  const cases: [string, unknown, { busy: boolean; unavailable: boolean }][] = [
    ["SQLITE_BUSY", sqliteBusy("SQLITE_BUSY"), { busy: true, unavailable: false }],
    ["SQLITE_BUSY_SNAPSHOT", sqliteBusy("SQLITE_BUSY_SNAPSHOT"), { busy: true, unavailable: false }],
    ["SQLITE_BUSY_RECOVERY", sqliteBusy("SQLITE_BUSY_RECOVERY"), { busy: true, unavailable: false }],
    ["SQLITE_BUSY_TIMEOUT", sqliteBusy("SQLITE_BUSY_TIMEOUT"), { busy: true, unavailable: false }],
    ["SQLITE_LOCKED", sqliteBusy("SQLITE_LOCKED"), { busy: true, unavailable: false }],
    ["SQLITE_LOCKED_SHAREDCACHE", sqliteBusy("SQLITE_LOCKED_SHAREDCACHE"), { busy: true, unavailable: false }],
    ["SQLITE_CANTOPEN", sqliteBusy("SQLITE_CANTOPEN"), { busy: false, unavailable: true }],
    ["SQLITE_FULL", sqliteBusy("SQLITE_FULL"), { busy: false, unavailable: false }],
    ["SQLITE_CONSTRAINT_UNIQUE", sqliteBusy("SQLITE_CONSTRAINT_UNIQUE"), { busy: false, unavailable: false }],
    // The PostgreSQL store runs these transactions again itself: never a 503 from here.
    ["PostgreSQL serialization_failure (40001)", pgError("40001"), { busy: false, unavailable: false }],
    ["PostgreSQL deadlock_detected (40P01)", pgError("40P01"), { busy: false, unavailable: false }],
    ["PostgreSQL lock_not_available (55P03)", pgError("55P03"), { busy: false, unavailable: false }],
    ["PostgreSQL admin_shutdown (57P01)", pgError("57P01"), { busy: false, unavailable: true }],
    ["PostgreSQL crash_shutdown (57P02)", pgError("57P02"), { busy: false, unavailable: true }],
    ["PostgreSQL cannot_connect_now (57P03)", pgError("57P03"), { busy: false, unavailable: true }],
    ["PostgreSQL connection_exception (08000)", pgError("08000"), { busy: false, unavailable: true }],
    ["PostgreSQL connection_failure (08006)", pgError("08006"), { busy: false, unavailable: true }],
    ["PostgreSQL sqlclient_unable_to_establish_sqlconnection (08001)", pgError("08001"), { busy: false, unavailable: true }],
    ["PostgreSQL out_of_memory (53200)", pgError("53200"), { busy: false, unavailable: true }],
    ["PostgreSQL too_many_connections (53300)", pgError("53300"), { busy: false, unavailable: true }],
    ["PostgreSQL disk_full (53100)", pgError("53100"), { busy: false, unavailable: false }],
    ["PostgreSQL unique_violation (23505)", pgError("23505"), { busy: false, unavailable: false }],
    ["Bun.SQL connection refused", { code: "ERR_POSTGRES_CONNECTION_REFUSED" }, { busy: false, unavailable: true }],
    ["Bun.SQL connection closed", { code: "ERR_POSTGRES_CONNECTION_CLOSED" }, { busy: false, unavailable: true }],
    ["Bun.SQL connection failed", { code: "ERR_POSTGRES_CONNECTION_FAILED" }, { busy: false, unavailable: true }],
    ["Bun.SQL connection timeout", { code: "ERR_POSTGRES_CONNECTION_TIMEOUT" }, { busy: false, unavailable: true }],
    ["Bun.SQL idle timeout", { code: "ERR_POSTGRES_IDLE_TIMEOUT" }, { busy: false, unavailable: true }],
    ["Bun.SQL lifetime timeout", { code: "ERR_POSTGRES_LIFETIME_TIMEOUT" }, { busy: false, unavailable: true }],
    ["busy only as a cause (already decided on)", new Error("wrapped", { cause: sqliteBusy("SQLITE_BUSY") }), { busy: false, unavailable: false }],
    ["unavailable only as a cause (the store's 503)", new Error("wrapped", { cause: pgError("57P01") }), { busy: false, unavailable: false }],
    ["a TypeError", new TypeError("x is undefined"), { busy: false, unavailable: false }],
    ["null", null, { busy: false, unavailable: false }],
    ["undefined", undefined, { busy: false, unavailable: false }],
    ["a string", "SQLITE_BUSY", { busy: false, unavailable: false }],
  ];
  for (const [what, error, expected] of cases) {
    test(`${what}: ${expected.busy ? "busy" : expected.unavailable ? "unavailable" : "neither"}`, () => {
      expect({ busy: isBusy(error), unavailable: isUnavailable(error) }).toEqual(expected);
    });
  }

  test("a real SQLITE_BUSY from bun:sqlite: another connection holds the write lock", () => {
    const file = join(tempDir(), "busy.db");
    const holder = new Database(file);
    holder.run("PRAGMA journal_mode = WAL");
    holder.run("CREATE TABLE t (v INTEGER)");
    holder.run("BEGIN IMMEDIATE");
    const other = new Database(file);
    other.run("PRAGMA busy_timeout = 0");
    let error: unknown;
    try {
      other.run("BEGIN IMMEDIATE");
    } catch (e) {
      error = e;
    }
    expect(isBusy(error)).toBe(true);
    expect(isUnavailable(error)).toBe(false);
    holder.run("ROLLBACK");
    other.close();
    holder.close();
  });
});

describe("a request meeting a storage fault", () => {
  function service(error: () => unknown, probe: () => Promise<void>) {
    const log = memoryLogger();
    const faults = createStorageFaults(log);
    const http = createHttp({
      log,
      version: "test",
      storageFaults: faults,
      readiness: { storage: () => faults.readiness(() => true, probe) },
      plugins: [
        new Elysia().post("/write", () => {
          throw error();
        }),
      ],
    });
    const request = (path: string, init?: RequestInit) => http.handle(new Request(`http://localhost${path}`, init));
    return { log, request };
  }
  const faultLines = (log: ReturnType<typeof memoryLogger>) => log.lines.filter((l) => String(l.msg).startsWith("storage"));

  test("a full disk (a real SQLITE_FULL): 503 with Retry-After, one log line, /readyz failing storage until a write passes again", async () => {
    const db = fullDatabase();
    let canStore = false;
    const { log, request } = service(
      () => {
        try {
          db.run("INSERT INTO t VALUES (randomblob(100000))");
        } catch (e) {
          return e;
        }
        return new Error("the insert was expected to fail");
      },
      async () => {
        if (!canStore) db.run("INSERT INTO t VALUES (randomblob(100000))");
      },
    );
    for (let i = 0; i < 3; i++) {
      const res = await request("/write", { method: "POST" });
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("5");
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("SERVICE_UNAVAILABLE");
      expect(body.error.message).toBe("The service cannot store anything right now. Retry later; nothing was modified.");
      expect(JSON.stringify(body)).not.toContain("SQLITE");
    }
    // One line for the three requests, no stack, no "unhandled error".
    expect(faultLines(log).map((l) => [l.level, l.msg, l.fault])).toEqual([["error", "storage fault: answering 503 until it passes", "full"]]);
    expect(log.lines.some((l) => l.msg === "unhandled error")).toBe(false);
    expect(JSON.stringify(log.lines)).not.toContain("stack");

    const notReady = await request("/readyz");
    expect(notReady.status).toBe(503);
    expect(((await notReady.json()) as { checks: Record<string, string> }).checks.storage).toBe("storage unavailable");
    // Space again: the probe's write passes, the fault ends, once.
    canStore = true;
    expect((await request("/readyz")).status).toBe(200);
    expect((await request("/readyz")).status).toBe(200);
    expect(faultLines(log).map((l) => l.msg)).toEqual(["storage fault: answering 503 until it passes", "storage works again"]);
    db.close();
  });

  for (const [what, error, kind] of [
    ["PostgreSQL full (53100)", () => pgError("53100"), "full"],
    ["PostgreSQL read-only (25006)", () => pgError("25006"), "read-only"],
    ["a read-only file system (SQLITE_READONLY)", () => Object.assign(new Error("attempt to write a readonly database"), { code: "SQLITE_READONLY" }), "read-only"],
    ["an I/O error (SQLITE_IOERR_WRITE)", () => Object.assign(new Error("disk I/O error"), { code: "SQLITE_IOERR_WRITE" }), "io"],
  ] as const) {
    test(`${what}: 503 with Retry-After, logged once as ${kind}`, async () => {
      const { log, request } = service(error, async () => {
        throw error();
      });
      for (let i = 0; i < 2; i++) expect((await request("/write", { method: "POST" })).status).toBe(503);
      expect(faultLines(log).map((l) => l.fault)).toEqual([kind]);
      expect((await request("/readyz")).status).toBe(503);
    });
  }

  test("a busy lock is a moment, not a state: 503 with Retry-After 1, nothing logged, /readyz unaffected", async () => {
    const { log, request } = service(
      () => Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" }),
      async () => {},
    );
    const res = await request("/write", { method: "POST" });
    expect([res.status, res.headers.get("retry-after")]).toEqual([503, "1"]);
    expect(faultLines(log)).toEqual([]);
    expect((await request("/readyz")).status).toBe(200);
  });

  test("any other error is still the generic 500, logged with its detail", async () => {
    const { log, request } = service(
      () => new TypeError("x is undefined"),
      async () => {},
    );
    expect((await request("/write", { method: "POST" })).status).toBe(500);
    expect(log.lines.some((l) => l.msg === "unhandled error")).toBe(true);
  });
});
