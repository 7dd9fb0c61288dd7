/** lib/lock-file.ts: the pid lock file the local ledger takes and restore checks. */
import { afterAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { LEDGER_LOCK_FILE, lockFileHolder, processAlive } from "../../src/lib/lock-file.ts";
import { BUN, cleanup, tempDir } from "../support/env.ts";

afterAll(cleanup);

test("the local ledger's lock file keeps its name (restore on an older data folder looks for it)", () => {
  expect(LEDGER_LOCK_FILE).toBe("ledger.lock");
});

test("lockFileHolder names a running holder, this process included, and nothing for a missing, malformed or dead one", async () => {
  const dir = tempDir();
  const file = join(dir, LEDGER_LOCK_FILE);
  expect(lockFileHolder(file)).toBeNull();
  for (const junk of ["", "abc", "-5", "0", "1.5"]) {
    writeFileSync(file, junk);
    expect(lockFileHolder(file)).toBeNull();
  }
  writeFileSync(file, `${process.pid}\n`);
  expect(lockFileHolder(file)).toBe(process.pid);

  const child = Bun.spawn([BUN, "-e", "await Bun.stdin.text()"], { stdin: "pipe" });
  writeFileSync(file, String(child.pid));
  expect(processAlive(child.pid)).toBe(true);
  expect(lockFileHolder(file)).toBe(child.pid);
  child.stdin.end();
  await child.exited;
  expect(processAlive(child.pid)).toBe(false);
  expect(lockFileHolder(file)).toBeNull();
});
