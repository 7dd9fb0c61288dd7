/**
 * A database as a previous release left it: the embedded migrations before `tag` applied by
 * drizzle's stock migrator (what that release ran), in a fresh temporary folder. For the tests
 * that each schema change opens a data folder made by the release before it.
 */
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { migrate as stockMigrate } from "drizzle-orm/bun-sqlite/migrator";
import { openDatabase, type Db } from "../../src/storage/db.ts";
import { ROOT, tempDir } from "./env.ts";

export function databaseBefore(tag: string): Db {
  const dir = tempDir();
  const old = join(dir, "migrations");
  cpSync(join(ROOT, "migrations"), old, { recursive: true });
  const journalFile = join(old, "meta", "_journal.json");
  const journal = JSON.parse(readFileSync(journalFile, "utf8")) as { entries: { tag: string }[] };
  journal.entries = journal.entries.filter((e) => e.tag < tag);
  writeFileSync(journalFile, JSON.stringify(journal));
  const db = openDatabase({ path: join(dir, "old.db") });
  stockMigrate(db, { migrationsFolder: old });
  return db;
}
