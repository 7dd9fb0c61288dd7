/**
 * The records write queue (src/records/write-queue.ts over src/storage/sqlite/record-writes.ts) when another connection holds the
 * database's write lock past busy_timeout, as the admin command line, a backup or a second
 * process on the data folder can: the domain's 503 with Retry-After, nothing written, and the
 * next batch goes through once the lock is released. Also over HTTP, for creation and revocation.
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { DATABASE_FILE } from "../../src/app/core.ts";
import { DomainError } from "../../src/lib/errors.ts";
import { isBusy } from "../../src/lib/storage-faults.ts";
import { BUSY_RETRY_SECONDS, createWriteQueue, type RecordWriter } from "../../src/records/write-queue.ts";
import { GROUP_WINDOW_MS } from "../../src/storage/group-commit.ts";
import { sqliteRecordWrites } from "../../src/storage/sqlite/record-writes.ts";
import { sqliteStore } from "../../src/storage/store.ts";
import { sqliteJournal } from "../../src/storage/sqlite/journal.ts";
import { journalRules } from "../../src/anchoring/journal/rules.ts";
import { createTransactionIds } from "../../src/anchoring/transaction-ids.ts";
import { sqliteLoopStorage } from "../../src/storage/sqlite/loop-storage.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { openDatabase } from "../../src/storage/db.ts";
import { countingTransactions } from "../support/counting-transactions.ts";
import { createRecordsFixture } from "../support/records-fixture.ts";
import { cleanup, tempDir } from "../support/env.ts";
import { HASH, harness } from "./fixtures.ts";

afterAll(cleanup);

/** A second connection to the same file holding the write lock (BEGIN IMMEDIATE) until released. */
function holdWriteLock(path: string) {
  const other = new Database(path);
  other.run("BEGIN IMMEDIATE");
  return {
    release() {
      other.run("ROLLBACK");
      other.close();
    },
  };
}

/** `work` as an operation of `queue`: run synchronously inside its group transaction. */
function run<T>(queue: RecordWriter, work: () => T): Promise<T> {
  return queue.write(function* () {
    return work();
  });
}

async function refusal(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error("expected a refusal");
}

describe("write queue", () => {
  test("work submitted in separate tasks within the group window shares one transaction; later work gets its own", async () => {
    const real = openDatabase({ path: join(tempDir(), DATABASE_FILE) });
    try {
      const { db, counts } = countingTransactions(real);
      const queue = createWriteQueue(sqliteRecordWrites(sqliteStore(db)));
      const inTx = () => real.$client.inTransaction;
      // Three items, each from its own task (as signing workers' answers arrive), inside the window.
      const items: Promise<boolean>[] = [run(queue, inTx)];
      await new Promise((r) => setImmediate(r));
      items.push(run(queue, inTx));
      await new Promise((r) => setImmediate(r));
      items.push(run(queue, inTx));
      expect(await Promise.all(items)).toEqual([true, true, true]);
      expect(counts.top).toBe(1);
      await Bun.sleep(GROUP_WINDOW_MS * 5);
      expect(await run(queue, inTx)).toBe(true);
      expect(counts.top).toBe(2);
    } finally {
      real.$client.close();
    }
  });

  test("record writes and the anchor loop's grouped changes made within the window share one transaction and one commit", async () => {
    const fixture = createRecordsFixture({ clock: manualClock(Date.UTC(2026, 0, 1)) });
    const { db, counts } = countingTransactions(fixture.db);
    // One store over the connection: its group commit is what the two share.
    const store = sqliteStore(db);
    const queue = createWriteQueue(sqliteRecordWrites(store));
    const journal = sqliteJournal(store, journalRules(fixture.clock, createTransactionIds({ journal: sqliteLoopStorage(store).transactionIds, clock: fixture.clock, operator: "0.0.2", validSeconds: 30, backdateMs: 0 })));
    fixture.db.$client.run("CREATE TABLE t (v INTEGER)");
    const [written, attempted] = await Promise.all([
      run(queue, () => fixture.db.$client.run("INSERT INTO t (v) VALUES (1)").changes),
      // A row that does not exist: the change is made (and finds nothing) inside the same transaction.
      journal.grouped.beginAttempt({ transactionId: "0.0.2@1.000000001" }, new Uint8Array([1])),
    ]);
    expect([written, attempted]).toEqual([1, null]);
    expect(counts.top).toBe(1);
  });

  test("a write lock held elsewhere past busy_timeout: every item of the batch gets 503 SERVICE_UNAVAILABLE with Retry-After, nothing is written; then it works again", async () => {
    const path = join(tempDir(), "queue.db");
    const db = openDatabase({ path });
    db.$client.run("CREATE TABLE t (v INTEGER)");
    db.$client.run("PRAGMA busy_timeout = 50");
    const queue = createWriteQueue(sqliteRecordWrites(sqliteStore(db)));
    // The work runs on the queue's connection, inside its transaction.
    const insert = (v: number) => run(queue, () => db.$client.run("INSERT INTO t (v) VALUES (?)", [v]));
    const lock = holdWriteLock(path);
    const [a, b] = await Promise.all([refusal(insert(1)), refusal(insert(2))]);
    for (const e of [a, b]) {
      expect(e).toBeInstanceOf(DomainError);
      expect(e).toMatchObject({ code: "SERVICE_UNAVAILABLE", retryAfterSeconds: BUSY_RETRY_SECONDS });
      expect(isBusy((e as Error).cause)).toBe(true);
      expect(String(((e as Error).cause as { code: string }).code)).toStartWith("SQLITE_BUSY");
    }
    lock.release();
    expect((db.$client.query("SELECT count(*) AS n FROM t").get() as { n: number }).n).toBe(0);
    await insert(3);
    expect((db.$client.query("SELECT v FROM t").all() as { v: number }[]).map((r) => r.v)).toEqual([3]);
    db.$client.close();
  });

  test("other failures are passed on as they are", async () => {
    const db = openDatabase({ path: join(tempDir(), "queue.db") });
    const queue = createWriteQueue(sqliteRecordWrites(sqliteStore(db)));
    const e = await refusal(run(queue, () => db.$client.run("INSERT INTO no_such_table VALUES (1)")));
    expect(e).not.toBeInstanceOf(DomainError);
    expect(String((e as Error).message)).toContain("no_such_table");
    db.$client.close();
  });
});

describe("over HTTP", () => {
  test("POST /v1/records and revoke while another connection holds the write lock: 503 SERVICE_UNAVAILABLE, Retry-After: 1, nothing written", async () => {
    const h = harness();
    const org = await h.org();
    // A first record: the seal key exists, and one record to revoke.
    const first = (await (await h.create(org, { originalDocHash: HASH("busy 1") })).json()) as { recordId: string };
    h.markAnchored(first.recordId);
    h.core.db.$client.run("PRAGMA busy_timeout = 50");
    const before = { records: h.count("records"), ledger: h.count("ledger_transactions") };
    const lock = holdWriteLock(join(h.config.dataDir, DATABASE_FILE));
    try {
      for (const res of [await h.create(org, { originalDocHash: HASH("busy 2") }), await h.revoke(org, first.recordId)]) {
        expect(res.status).toBe(503);
        expect(res.headers.get("retry-after")).toBe("1");
        expect(res.headers.get("x-request-id")).not.toBeNull();
        const body = (await res.json()) as { error: { code: string; message: string } };
        expect(body.error.code).toBe("SERVICE_UNAVAILABLE");
        expect(body.error.message).not.toContain("SQLITE");
      }
    } finally {
      lock.release();
    }
    expect({ records: h.count("records"), ledger: h.count("ledger_transactions") }).toEqual(before);
    expect(h.core.db.$client.query("SELECT revoked_at FROM records WHERE id = ?").get(first.recordId)).toEqual({ revoked_at: null });
    expect((await h.create(org, { originalDocHash: HASH("busy 2") })).status).toBe(201);
    expect((await h.revoke(org, first.recordId)).status).toBe(200);
  });

  test("the installation's first record, whose seal key is created outside the queue: 503 too, and nothing written", async () => {
    const h = harness();
    const org = await h.org();
    h.core.db.$client.run("PRAGMA busy_timeout = 50");
    const lock = holdWriteLock(join(h.config.dataDir, DATABASE_FILE));
    try {
      const res = await h.create(org, { originalDocHash: HASH("first of all") });
      expect([res.status, res.headers.get("retry-after"), ((await res.json()) as { error: { code: string } }).error.code]).toEqual([503, "1", "SERVICE_UNAVAILABLE"]);
    } finally {
      lock.release();
    }
    expect(h.count("records")).toBe(0);
    expect(h.count("signing_keys")).toBe(1); // the organisation's own key only
    expect((await h.create(org, { originalDocHash: HASH("first of all") })).status).toBe(201);
  });
});
