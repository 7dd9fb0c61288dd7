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
import { closeSync, openSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { dataVersionOf, UNKNOWN, walDataVersion } from "../../src/storage/data-version.ts";
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
    const v = dataVersionOf(db);
    expect(dataVersionOf(db)).toBe(v); // one per connection
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
    const v = dataVersionOf(db);
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
    const v = dataVersionOf(db);
    expect(v.current()).not.toBe(UNKNOWN);
    db.close();
    expect(v.current()).toBe(UNKNOWN);
  });
});

test("UNKNOWN for an in-memory database, and for a file without a WAL index", () => {
  const memory = new Database(":memory:");
  expect(dataVersionOf(memory).current()).toBe(UNKNOWN);
  memory.close();
  const file = join(tempDir(), "rollback.db");
  const db = new Database(file);
  db.run("PRAGMA journal_mode = DELETE");
  db.run("CREATE TABLE t (x INTEGER)");
  expect(dataVersionOf(db).current()).toBe(UNKNOWN);
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
