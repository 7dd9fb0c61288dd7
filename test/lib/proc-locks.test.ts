/** lib/proc-locks.ts: who holds a lock on a file, from /proc/locks. */
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { devOf, lockHolders } from "../../src/lib/proc-locks.ts";
import { BUN, cleanup, tempDir } from "../support/env.ts";

afterAll(cleanup);

test("devOf splits stat's dev into /proc/locks' major:minor, minors above 255 included", () => {
  // Linux's encoding: (minor & 0xff) | (major << 8) | ((minor & ~0xff) << 12).
  expect(devOf((254 << 8) | 1)).toBe("fe:01");
  expect(devOf((259 << 8) | 3)).toBe("103:03");
  expect(devOf((300 & 0xff) | (8 << 8) | ((300 & ~0xff) << 12))).toBe("08:12c");
  expect(devOf(0)).toBe("00:00");
});

test.skipIf(!existsSync("/proc/locks"))("a process with an SQLite WAL database open is listed until it exits; this process never is", async () => {
  const dir = tempDir();
  const db = join(dir, "x.db");
  const mine = new Database(db);
  mine.run("PRAGMA journal_mode = WAL");
  mine.run("CREATE TABLE t (x)");
  const files = [db, `${db}-shm`, `${db}-wal`];
  expect(lockHolders(files)).toEqual([]);

  const child = Bun.spawn(
    [BUN, "-e", `const { Database } = require("bun:sqlite"); const d = new Database(${JSON.stringify(db)}); d.query("SELECT * FROM t").all(); console.log("open"); await Bun.stdin.text();`],
    { stdin: "pipe", stdout: "pipe" },
  );
  const reader = child.stdout.getReader();
  expect(new TextDecoder().decode((await reader.read()).value)).toContain("open");
  expect(lockHolders(files)).toEqual([child.pid]);
  expect(lockHolders([join(dir, "missing")])).toEqual([]);
  child.stdin.end();
  await child.exited;
  expect(lockHolders(files)).toEqual([]);
  mine.close();
});
