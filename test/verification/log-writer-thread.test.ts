/**
 * The verification log written by a writer thread (src/storage/writer-thread.ts; what `serve`
 * does): acknowledged only once committed, group-committed in call order, failures
 * reject every caller of the batch and write nothing, the thread starts on the first write and
 * again after it died, and close() waits for everything recorded.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { UNKNOWN } from "../../src/storage/data-version.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { openDatabase } from "../../src/storage/db.ts";
import { migrate } from "../../src/storage/migrate.ts";
import { createWriterThread, WriterBusyError } from "../../src/storage/writer-thread.ts";
import type { VerificationLogRow } from "../../src/verification/log/page.ts";
import { createVerificationLog } from "../../src/verification/log/service.ts";
import { logDrivers } from "../support/drivers.ts";
import { cleanup, onCleanup, tempDir } from "../support/env.ts";
import { sqliteStore } from "../../src/storage/store.ts";

afterAll(cleanup);

const HASH = "sha256:" + "ef".repeat(32);

function setup() {
  const path = join(tempDir(), "docverify.db");
  const db = openDatabase({ path });
  migrate(db);
  onCleanup(() => db.$client.close());
  db.$client.run("INSERT INTO organisations (id, name, created_at, system_key_fingerprint) VALUES ('org-1', 'Org', 1, x'00')");
  const store = sqliteStore(db);
  const log = createVerificationLog({ store: logDrivers(store, { writerThread: { path } }).log, clock: manualClock(Date.UTC(2026, 10, 24)), cursorKey: new Uint8Array(32) });
  onCleanup(() => log.close());
  const other = new Database(path, { readonly: true });
  onCleanup(() => other.close());
  const count = () => (other.query("SELECT count(*) AS n FROM verifications").get() as { n: number }).n;
  return { db, store, path, log, other, count };
}

const row = (n: number): VerificationLogRow => ({ orgId: "org-1", environment: "live", keyId: "k1", verdict: "no_record", docHash: HASH, reference: `ref ${n}` });

describe("the verification log on a writer thread", () => {
  test("a recorded row is committed before record() resolves: another connection sees it", async () => {
    const { log, other } = setup();
    const { verificationId } = await log.record(row(1));
    expect(other.query("SELECT reference FROM verifications WHERE id = ?").get(verificationId)).toEqual({ reference: "ref 1" });
  });

  test("concurrent rows are group-committed in call order: fewer transactions than rows, ids increasing, every row once", async () => {
    const { log, other } = setup();
    const results = await Promise.all(Array.from({ length: 300 }, (_, i) => log.record(row(i))));
    const ids = results.map((r) => r.verificationId);
    expect([...ids].sort()).toEqual(ids);
    const stored = other.query("SELECT id, reference FROM verifications ORDER BY id").all() as { id: string; reference: string }[];
    expect(stored.map((r) => r.id)).toEqual(ids);
    expect(stored.map((r) => r.reference)).toEqual(results.map((_, i) => `ref ${i}`));
    expect(log.stats().rows).toBe(300);
    expect(log.stats().batches).toBeLessThan(300);
    expect(log.stats().batches).toBeGreaterThanOrEqual(1);
  });

  test("list() and get() see a row as soon as its record() resolved", async () => {
    const { log } = setup();
    const { verificationId } = await log.record(row(7));
    expect(log.get({ orgId: "org-1", environment: "live", verificationId }).reference).toBe("ref 7");
    expect(log.list({ orgId: "org-1", environment: "live", filters: {}, limit: 10 }).data.map((r) => r.verificationId)).toEqual([verificationId]);
  });

  test("another connection holding the write lock past the busy timeout: every caller of the batch gets 503 SERVICE_UNAVAILABLE, nothing is written", async () => {
    const { log, path, count } = setup();
    const blocker = new Database(path);
    onCleanup(() => blocker.close());
    blocker.run("BEGIN IMMEDIATE");
    const settled = await Promise.allSettled([log.record(row(1)), log.record(row(2))]);
    blocker.run("ROLLBACK");
    for (const s of settled) {
      expect(s.status).toBe("rejected");
      expect((s as PromiseRejectedResult).reason).toMatchObject({ code: "SERVICE_UNAVAILABLE", retryAfterSeconds: 1 });
    }
    expect(count()).toBe(0);
    expect(log.stats().failedBatches).toBeGreaterThanOrEqual(1);
    // and the log goes on
    await log.record(row(3));
    expect(count()).toBe(1);
  }, 20_000);

  test("its commits are claimed: the main connection's others() stays across log batches, moves with any other commit; the thread checkpoints its WAL", async () => {
    const { db, store, path, log, count } = setup();
    // The store's own version: the one whose claims the log's writer thread was given.
    const version = store.version;
    await log.record(row(0));
    const others = version.others();
    const current = version.current();
    expect(others).not.toBe(UNKNOWN);
    const salts = new Set<string>();
    for (let batch = 0; batch < 40; batch++) {
      await Promise.all(Array.from({ length: 50 }, (_, i) => log.record(row(batch * 100 + i))));
      salts.add(readFileSync(`${path}-shm`).subarray(32, 40).toString("hex"));
      expect(version.others()).toBe(others);
    }
    expect(count()).toBe(2001);
    expect(version.current()).not.toBe(current);
    expect(salts.size).toBeGreaterThan(1); // the WAL was checkpointed and restarted, by claimed commits
    expect(statSync(`${path}-wal`).size).toBeLessThan(16 * 1024 * 1024);
    // A commit of the main connection moves it.
    db.$client.run("UPDATE organisations SET name = 'Org 2' WHERE id = 'org-1'");
    expect(version.others()).not.toBe(others);
  });

  test("close() waits for every row recorded, then ends the thread", async () => {
    const { log, count } = setup();
    const pending = Array.from({ length: 50 }, (_, i) => log.record(row(i)));
    await log.close();
    expect(count()).toBe(50);
    expect((await Promise.allSettled(pending)).every((s) => s.status === "fulfilled")).toBe(true);
  });
});

describe("the writer thread", () => {
  const SQL = "INSERT INTO t (x) VALUES (?)";
  function database() {
    const path = join(tempDir(), "w.db");
    const db = new Database(path);
    db.run("PRAGMA journal_mode = WAL");
    db.run("CREATE TABLE t (x INTEGER NOT NULL)");
    onCleanup(() => db.close());
    return { path, db, count: () => (db.query("SELECT count(*) AS n FROM t").get() as { n: number }).n };
  }

  test("is started by the first write, not before", async () => {
    const { path, count } = database();
    const w = createWriterThread({ path, statements: [SQL] });
    expect(w.started).toBe(false);
    await w.write(SQL, [[1], [2]]);
    expect(w.started).toBe(true);
    expect(count()).toBe(2);
    await w.close();
    expect(w.started).toBe(false);
    await expect(w.write(SQL, [[3]])).rejects.toThrow(/closed/);
  });

  test("a batch that fails writes none of its rows; only registered statements run", async () => {
    const { path, count } = database();
    const w = createWriterThread({ path, statements: [SQL] });
    onCleanup(() => w.close());
    await expect(w.write(SQL, [[1], [null]])).rejects.toThrow(/NOT NULL/);
    expect(count()).toBe(0);
    await expect(w.write("DELETE FROM t", [[]])).rejects.toThrow(/not registered/);
    await w.write(SQL, [[5]]);
    expect(count()).toBe(1);
  });

  test("values cross to the thread exactly: text, integers, floats, nulls, blobs and bigints", async () => {
    const { path, db } = database();
    db.run("CREATE TABLE v (t TEXT, i INTEGER, r REAL, n, b BLOB)");
    const sql = "INSERT INTO v (t, i, r, n, b) VALUES (?, ?, ?, ?, ?)";
    const w = createWriterThread({ path, statements: [sql] });
    onCleanup(() => w.close());
    await w.write(sql, [["quote \" \u2028 \ud83d\ude42", 2 ** 53 - 1, 0.1, null, null]]); // as JSON text
    await w.write(sql, [["blob row", 7, -1.5, null, new Uint8Array([0, 255, 7])], ["big", 9007199254740993n, 0, null, null]]); // cloned
    expect(db.query("SELECT t, CAST(i AS TEXT) AS i, r, n, hex(b) AS b FROM v ORDER BY rowid").all()).toEqual([
      { t: "quote \" \u2028 \ud83d\ude42", i: String(2 ** 53 - 1), r: 0.1, n: null, b: "" },
      { t: "blob row", i: "7", r: -1.5, n: null, b: "00FF07" },
      { t: "big", i: "9007199254740993", r: 0, n: null, b: "" },
    ]);
  });

  test("a busy database is a WriterBusyError", async () => {
    const { path, db } = database();
    const w = createWriterThread({ path, statements: [SQL] });
    onCleanup(() => w.close());
    db.run("BEGIN IMMEDIATE");
    const failed = w.write(SQL, [[1]]).catch((e: unknown) => e);
    const e = await failed;
    db.run("ROLLBACK");
    expect(e).toBeInstanceOf(WriterBusyError);
  }, 20_000);

  test("a worker that dies rejects what it held, and the next write starts another", async () => {
    const { path } = database();
    const dir = tempDir();
    const crashing = join(dir, "crashing-worker.ts");
    await Bun.write(crashing, `self.onmessage = (e) => { if (e.data.type === "batch") throw new Error("boom"); };\n`);
    const w = createWriterThread({ path, statements: [SQL], entry: new URL(`file://${crashing}`) });
    onCleanup(() => w.close());
    await expect(w.write(SQL, [[1]])).rejects.toThrow(/writer thread failed/);
    expect(w.started).toBe(false);
    await expect(w.write(SQL, [[2]])).rejects.toThrow(/writer thread failed/);
  });

  test("a database it cannot open fails the write with the reason", async () => {
    const w = createWriterThread({ path: join(tempDir(), "missing", "no.db"), statements: [SQL] });
    onCleanup(() => w.close());
    await expect(w.write(SQL, [[1]])).rejects.toThrow(/could not open the database/);
  });
});
