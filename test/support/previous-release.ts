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
import type { FixtureOrg, RecordsFixture } from "./records-fixture.ts";

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

/**
 * An organisation as the releases since migration 0002 wrote one (the columns `organisations` had
 * then), with a real system key sealed by `fx`'s signer: for a database before a migration that
 * added columns to the table, into which the organisations service (which writes today's columns)
 * cannot write. What it returns is what `fx.createOrg` returns for the same row.
 */
export function organisationAsBefore(fx: RecordsFixture, name: string): FixtureOrg {
  const id = Bun.randomUUIDv7();
  const key = fx.signer.generateKey(`org:${id}`);
  const at = fx.clock.now();
  fx.db.$client.transaction(() => {
    fx.db.$client
      .query("INSERT INTO signing_keys (fingerprint, algorithm, public_key, purpose, sealed_seed, created_at) VALUES (?, ?, ?, ?, ?, ?)")
      .run(key.fingerprint, key.algorithm, key.publicKey, key.purpose, key.sealedSeed, at);
    fx.db.$client
      .query("INSERT INTO organisations (id, name, api_access, addon, validated, suspended, created_at, system_key_fingerprint) VALUES (?, ?, 0, 0, 0, 0, ?, ?)")
      .run(id, name, at, key.fingerprint);
  })();
  return {
    id,
    name,
    apiAccess: false,
    addon: false,
    validated: false,
    suspended: false,
    domain: null,
    createdAt: at,
    topicId: null,
    systemKey: { algorithm: key.algorithm, publicKey: key.publicKey, purpose: key.purpose, sealedSeed: key.sealedSeed, fingerprint: key.fingerprint },
  };
}
