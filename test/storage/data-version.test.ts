/**
 * The data version (src/storage/data-version.ts): read from the WAL index's header, it must
 * change with every commit of every connection and process, never claim "unchanged" while a
 * writer is midway or when the header cannot be read, and stop vouching once its connection
 * closes. The hot reads kept under it (API keys' change counter, a hash's record heads, a log
 * page's ids) are only as right as these properties; their own tests are in test/verification
 * and test/access.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { closeSync, openSync, readFileSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { commitClaimer, connectionDataVersion, UNKNOWN, walDataVersion } from "../../src/storage/data-version.ts";
import { BUN, cleanup, onCleanup, tempDir } from "../support/env.ts";

afterAll(cleanup);

function walDatabase(): { file: string; db: Database } {
  const file = join(tempDir(), "versions.db");
  const db = new Database(file);
  db.run("PRAGMA journal_mode = WAL");
  db.run("CREATE TABLE t (x INTEGER)");
  onCleanup(() => db.close());
  return { file, db };
}

/** Runs `sql` on the file from another process, as the admin command line or an operator's sqlite3 would. */
function inAnotherProcess(file: string, sql: string): void {
  const code = `const { Database } = require("bun:sqlite"); const db = new Database(${JSON.stringify(file)}); db.run("PRAGMA busy_timeout = 5000"); db.run(${JSON.stringify(sql)}); db.close();`;
  const p = Bun.spawnSync([BUN, "-e", code], { stderr: "pipe" });
  expect(p.exitCode, p.stderr.toString()).toBe(0);
}

describe("on a database in WAL mode", () => {
  test("unchanged while nothing is committed, reads included; a new number at every commit", () => {
    const { db } = walDatabase();
    const v = connectionDataVersion(db);
    expect(connectionDataVersion(db)).not.toBe(v); // one per call: the store over the connection makes it once and owns it
    const first = v.current();
    expect(first).not.toBe(UNKNOWN);
    db.query("SELECT count(*) FROM t").get();
    expect(v.current()).toBe(first);
    const seen = new Set([first]);
    for (let i = 0; i < 5; i++) {
      db.run("INSERT INTO t VALUES (?)", [i]);
      const now = v.current();
      expect(seen.has(now)).toBe(false);
      expect(now).not.toBe(UNKNOWN);
      seen.add(now);
      expect(v.current()).toBe(now);
    }
  });

  test("a commit on another connection, and in another process, is a new version; the WAL index outlives other processes", () => {
    const { file, db } = walDatabase();
    const v = connectionDataVersion(db);
    const before = v.current();
    const other = new Database(file);
    other.run("INSERT INTO t VALUES (1)");
    other.close();
    const afterConnection = v.current();
    expect(afterConnection).not.toBe(before);
    inAnotherProcess(file, "INSERT INTO t VALUES (2)");
    const afterProcess = v.current();
    expect(afterProcess).not.toBe(afterConnection);
    // Processes that only read, and one that checkpoints and restarts the WAL, come and go (a
    // closing connection may checkpoint, which rewrites the header: a new version, one read more).
    // The WAL index this connection mapped is still the file's: the next commits, ours and another
    // process's, are seen.
    const shm = statSync(`${file}-shm`).ino;
    inAnotherProcess(file, "SELECT count(*) FROM t");
    inAnotherProcess(file, "PRAGMA wal_checkpoint(TRUNCATE)");
    inAnotherProcess(file, "SELECT count(*) FROM t");
    expect(statSync(`${file}-shm`).ino).toBe(shm);
    const afterCheckpoint = v.current();
    db.run("INSERT INTO t VALUES (3)");
    const afterOurs = v.current();
    expect(afterOurs).not.toBe(afterCheckpoint);
    inAnotherProcess(file, "INSERT INTO t VALUES (4)");
    expect(v.current()).not.toBe(afterOurs);
    expect(db.query("SELECT x FROM t ORDER BY rowid").all()).toEqual([{ x: 1 }, { x: 2 }, { x: 3 }, { x: 4 }]);
  });

  test("UNKNOWN once its connection is closed", () => {
    const file = join(tempDir(), "closing.db");
    const db = new Database(file);
    db.run("PRAGMA journal_mode = WAL");
    db.run("CREATE TABLE t (x INTEGER)");
    const v = connectionDataVersion(db);
    expect(v.current()).not.toBe(UNKNOWN);
    db.close();
    expect(v.current()).toBe(UNKNOWN);
  });
});

test("UNKNOWN for an in-memory database, and for a file without a WAL index", () => {
  const memory = new Database(":memory:");
  expect(connectionDataVersion(memory).current()).toBe(UNKNOWN);
  memory.close();
  const file = join(tempDir(), "rollback.db");
  const db = new Database(file);
  db.run("PRAGMA journal_mode = DELETE");
  db.run("CREATE TABLE t (x INTEGER)");
  expect(connectionDataVersion(db).current()).toBe(UNKNOWN);
  db.close();
});

describe("on a crafted WAL index", () => {
  const HEADER = 48;
  /** A WAL index whose two header copies are `copy0` and `copy1` (12 words each; word 0 the version). */
  function craft(): { file: string; write(copy: 0 | 1, word: number, value: number): void } {
    const file = join(tempDir(), "crafted.db");
    const fd = openSync(`${file}-shm`, "w+");
    onCleanup(() => closeSync(fd));
    const page = Buffer.alloc(4096);
    for (const copy of [0, 1]) page.writeUInt32LE(3007000, copy * HEADER); // native order on the machines docverify runs on
    writeSync(fd, page, 0, page.length, 0);
    return {
      file,
      write(copy, word, value) {
        const b = Buffer.alloc(4);
        b.writeUInt32LE(value);
        writeSync(fd, b, 0, 4, copy * HEADER + word * 4);
      },
    };
  }

  test("a writer midway (the copies differ) is UNKNOWN, and what it publishes is a new version", () => {
    const shm = craft();
    const v = walDataVersion(shm.file);
    const a = v.current();
    expect(a).not.toBe(UNKNOWN);
    expect(v.current()).toBe(a);
    // SQLite writes the second copy first: a reader between the two sees them differ.
    shm.write(1, 4, 17);
    expect(v.current()).toBe(UNKNOWN);
    shm.write(0, 4, 17);
    const b = v.current();
    expect(b).not.toBe(UNKNOWN);
    expect(b).not.toBe(a);
    // Torn and then put back exactly as it was: still a new version, never the old one.
    shm.write(1, 4, 18);
    expect(v.current()).toBe(UNKNOWN);
    shm.write(1, 4, 17);
    const c = v.current();
    expect([UNKNOWN, a, b]).not.toContain(c);
    // Any word of the header counts (the salts, the checksum).
    for (const word of [2, 8, 11]) {
      shm.write(1, word, 99);
      shm.write(0, word, 99);
      const next = v.current();
      expect(next).not.toBe(c);
      expect(next).not.toBe(UNKNOWN);
    }
  });

  test("a header of another format is UNKNOWN; release() makes it UNKNOWN for good", () => {
    const shm = craft();
    const v = walDataVersion(shm.file);
    expect(v.current()).not.toBe(UNKNOWN);
    shm.write(1, 0, 3007001);
    shm.write(0, 0, 3007001);
    expect(v.current()).toBe(UNKNOWN);
    shm.write(1, 0, 3007000);
    shm.write(0, 0, 3007000);
    expect(v.current()).not.toBe(UNKNOWN);
    v.release();
    expect(v.current()).toBe(UNKNOWN);
  });
});

describe("claimed commits (the log's writer thread): others() stays, current() moves", () => {
  /** A second connection that claims its commits, as the writer thread does (writer-worker.ts). */
  function claimingWriter(file: string, claims: SharedArrayBuffer) {
    const w = new Database(file);
    w.run("PRAGMA busy_timeout = 5000");
    onCleanup(() => w.close());
    const claimer = commitClaimer(file, claims);
    const insert = w.transaction((x: number, fail: boolean) => {
      claimer.begin();
      w.run("INSERT INTO t VALUES (?)", [x]);
      if (fail) throw new Error("rolled back");
    }).immediate;
    return {
      commit(x: number, settle = true) {
        insert(x, false);
        if (settle) claimer.committed();
        return () => claimer.committed();
      },
      fail(x: number) {
        expect(() => insert(x, true)).toThrow("rolled back");
        claimer.failed();
      },
    };
  }

  test("claimed commits, one or several in a row, leave others() as it was; any other commit moves it", () => {
    const { file, db } = walDatabase();
    const v = connectionDataVersion(db);
    const writer = claimingWriter(file, v.claims!);
    const o = v.others();
    const c = v.current();
    expect(o).not.toBe(UNKNOWN);
    writer.commit(1);
    expect(v.current()).not.toBe(c);
    expect(v.others()).toBe(o);
    for (let i = 0; i < 5; i++) writer.commit(10 + i); // several before others() looks again
    expect(v.others()).toBe(o);
    // A commit of the main connection, of another connection, of another process: each moves it.
    db.run("INSERT INTO t VALUES (2)");
    const o2 = v.others();
    expect(o2).not.toBe(o);
    const other = new Database(file);
    other.run("INSERT INTO t VALUES (3)");
    other.close();
    const o3 = v.others();
    expect(o3).not.toBe(o2);
    inAnotherProcess(file, "INSERT INTO t VALUES (4)");
    const o4 = v.others();
    expect(o4).not.toBe(o3);
    // Claimed, then another connection's, before others() looks: moved.
    writer.commit(5);
    db.run("INSERT INTO t VALUES (6)");
    const o5 = v.others();
    expect(o5).not.toBe(o4);
    // Another connection's, then claimed: moved.
    db.run("INSERT INTO t VALUES (7)");
    writer.commit(8);
    const o6 = v.others();
    expect(o6).not.toBe(o5);
    expect(v.others()).toBe(o6);
    // The WAL checkpointed in full: the writer's next commit restarts it (new salts), still claimed.
    db.run("PRAGMA wal_checkpoint(PASSIVE)");
    const o7 = v.others();
    const salts = () => readFileSync(`${file}-shm`).subarray(32, 40).toString("hex");
    const before = salts();
    writer.commit(9);
    expect(salts()).not.toBe(before); // the WAL was restarted
    expect(v.others()).toBe(o7);
    expect(db.query("SELECT count(*) AS n FROM t").get()).toEqual({ n: 14 });
  });

  test("a claim rolled back explains nothing; one not yet settled is UNKNOWN, then settles; one never settled stops counting", async () => {
    const { file, db } = walDatabase();
    const v = connectionDataVersion(db);
    const writer = claimingWriter(file, v.claims!);
    const o = v.others();
    writer.fail(1);
    expect(v.others()).toBe(o);
    db.run("INSERT INTO t VALUES (2)"); // from the state the rolled-back claim started at
    const o2 = v.others();
    expect(o2).not.toBe(o);
    const settle = writer.commit(3, false);
    expect(v.others()).toBe(UNKNOWN); // committed, its claim not yet settled: decide later
    settle();
    expect(v.others()).toBe(o2);
    writer.commit(4, false); // never settled (a writer thread ended mid-commit)
    expect(v.others()).toBe(UNKNOWN);
    // A fixed wait on purpose: a claim never settled stops counting once SETTLE_MS (100 ms,
    // storage/data-version.ts) has passed; this is that time and a half.
    await Bun.sleep(150);
    const o3 = v.others();
    expect(o3).not.toBe(UNKNOWN);
    expect(o3).not.toBe(o2);
  });

  test("on a crafted WAL index: a claim names the state it started from; a rebuilt index (iChange back to 0), a commit after a restart no claim explains and a torn read are changes; a restart alone is not", () => {
    const file = join(tempDir(), "claims.db");
    const fd = openSync(`${file}-shm`, "w+");
    onCleanup(() => closeSync(fd));
    const page = Buffer.alloc(4096);
    writeSync(fd, page, 0, page.length, 0);
    const header = (iChange: number, mxFrame: number, salt1 = 11, salt2 = 22) => {
      const h = Buffer.alloc(48);
      h.writeUInt32LE(3007000, 0);
      h.writeUInt32LE(iChange, 8);
      h.writeUInt32LE(mxFrame, 16);
      h.writeUInt32LE(salt1, 32);
      h.writeUInt32LE(salt2, 36);
      writeSync(fd, h, 0, 48, 48); // the second copy first, as SQLite writes them
      writeSync(fd, h, 0, 48, 0);
    };
    header(5, 100);
    const v = walDataVersion(file);
    const claimer = commitClaimer(file, v.claims!);
    const o = v.others();
    claimer.begin();
    header(6, 110);
    claimer.committed();
    expect(v.others()).toBe(o);
    // The index rebuilt (iChange from 0, every frame recovered), then five commits: iChange 5 again,
    // but at frame 120, not where the claim started.
    header(0, 115);
    const o2 = v.others();
    expect(o2).not.toBe(o);
    header(5, 120);
    const o3 = v.others();
    expect(o3).not.toBe(o2);
    header(6, 130);
    expect(v.others()).not.toBe(o3);
    // Exactly the claimed step's iChange, salts and end, from another start: a change all the same.
    header(5, 104);
    const o3b = v.others();
    header(6, 110);
    expect(v.others()).not.toBe(o3b);
    // A claimed commit that restarted the WAL (new salts, frames from 1 again): still claimed.
    const o4 = v.others();
    claimer.begin();
    header(7, 1, 12, 99);
    claimer.committed();
    expect(v.others()).toBe(o4);
    // A restart seen before the claimed commit that made it (SQLite writes it when the
    // transaction begins): no change, and the commit after it is still claimed.
    claimer.begin();
    header(7, 0, 14, 66);
    expect(v.others()).toBe(o4);
    header(8, 40, 14, 66);
    claimer.committed();
    expect(v.others()).toBe(o4);
    // As seen under load: a claimed commit (8 → 9) not yet looked at, then the writer's next
    // transaction restarts the WAL (seen before its commit), then that commit (9 → 10).
    claimer.begin();
    header(9, 70, 14, 66);
    claimer.committed();
    claimer.begin(); // reads (9, 70): the restart comes with its first write
    header(9, 0, 15, 77);
    expect(v.others()).toBe(o4);
    header(10, 30, 15, 77);
    claimer.committed();
    expect(v.others()).toBe(o4);
    // A restart alone (no commit: the data as it was), then another connection's commit: a change.
    header(10, 0, 13, 55);
    expect(v.others()).toBe(o4);
    header(11, 12, 13, 55);
    expect(v.others()).not.toBe(o4);
    // A header torn midway: UNKNOWN, nothing accepted.
    const o5 = v.others();
    const torn = Buffer.alloc(4);
    torn.writeUInt32LE(8);
    writeSync(fd, torn, 0, 4, 48 + 8);
    expect(v.others()).toBe(UNKNOWN);
    writeSync(fd, torn, 0, 4, 8);
    expect(v.others()).not.toBe(o5);
  });
});

test("reading the version keeps SQLite's lock on the WAL index (a closed descriptor would release it, and another process would rebuild the index under us)", () => {
  const { file, db } = walDatabase();
  db.query("SELECT count(*) FROM t").get();
  const ino = statSync(`${file}-shm`).ino;
  const locks = () => readFileSync("/proc/locks", "utf8").split("\n").filter((l) => l.includes(`:${ino} `) && l.includes(` ${process.pid} `)).length;
  const held = locks();
  expect(held).toBeGreaterThan(0);
  const v = connectionDataVersion(db);
  v.current();
  v.others();
  commitClaimer(file, v.claims!).begin();
  expect(locks()).toBe(held);
});
