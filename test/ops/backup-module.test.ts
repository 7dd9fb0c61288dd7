/**
 * storage/backup.ts called directly (test/ops/backup.test.ts drives the commands): what the
 * progress hook is told, and that a copy or a refusal leaves no temporary file.
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { backupDatabase, restoreDatabase } from "../../src/storage/backup.ts";
import { DATABASE_FILE } from "../../src/storage/data-folder.ts";
import { openDatabase } from "../../src/storage/db.ts";
import { migrate } from "../../src/storage/migrate.ts";
import { cleanup, tempDir } from "../support/env.ts";

afterAll(cleanup);

function dataFolder(): string {
  const dataDir = tempDir();
  const db = openDatabase({ path: join(dataDir, DATABASE_FILE) });
  migrate(db);
  db.$client.close();
  return dataDir;
}

test("backupDatabase tells the progress hook the temporary file and the size before the copy, the copied size after; nothing is left beside the target", async () => {
  const dataDir = dataFolder();
  const out = tempDir();
  const target = join(out, "b.db");
  const events: unknown[] = [];
  const result = await backupDatabase({
    dataDir,
    masterKeyFile: join(dataDir, "master.key"),
    ledgerDir: join(dataDir, "ledger"),
    target,
    force: false,
    progress: {
      async started(file, total) {
        events.push(["started", file.startsWith(join(out, ".b.db.partial-")), total > 0]);
      },
      ended(copied) {
        events.push(["ended", copied]);
      },
    },
  });
  expect(events).toEqual([["started", true, true], ["ended", result.bytes]]);
  expect(result.file).toBe(target);
  expect(result.check.migrations).toBe(result.check.knownMigrations);
  expect(readdirSync(out)).toEqual(["b.db"]);

  // Refused before any copy: the hook hears nothing, the folder is as it was.
  events.length = 0;
  const progress = {
    async started() {
      events.push("started");
    },
    ended() {
      events.push("ended");
    },
  };
  await expect(backupDatabase({ dataDir, masterKeyFile: join(dataDir, "master.key"), ledgerDir: join(dataDir, "ledger"), target, force: false, progress })).rejects.toThrow(
    /exists; pass --force/,
  );
  expect(events).toEqual([]);
  expect(readdirSync(out)).toEqual(["b.db"]);

  // Restored into a new folder: the same database, nothing else beside it.
  const into = join(tempDir(), "data");
  const warnings: string[] = [];
  const restored = restoreDatabase({ file: target, dataDir: into, ledgerDir: join(into, "ledger"), force: false, warn: (m) => warnings.push(m) });
  expect(restored.target).toBe(join(into, DATABASE_FILE));
  expect(restored.bytes).toBe(result.bytes);
  expect(restored.check.migrations).toBe(result.check.migrations);
  expect(readdirSync(into)).toEqual([DATABASE_FILE]);
  expect(warnings).toEqual(existsSync("/proc/locks") ? [] : [expect.stringContaining("cannot read /proc/locks")]);
});
