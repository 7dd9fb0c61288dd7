/**
 * Applies the PostgreSQL migrations embedded in the binary (migrations/pg/index.ts), as
 * migrate.ts does for SQLite: the same migration list, split on drizzle-kit's breakpoint marker
 * and hashed with SHA-256 of the whole file, and the same rows in drizzle's own table
 * (`drizzle.__drizzle_migrations`), so drizzle-kit's migrator could take over.
 *
 * Several nodes start against one database (docs/storage.md "Two engines"): the whole run is one
 * transaction that first takes a transaction-scoped advisory lock, so whichever node gets the lock
 * first migrates and every other waits for it, then finds nothing left to do. A failed migration
 * rolls back whole. A database with a migration this binary does not know was written by a newer
 * docverify and is refused before anything runs. Then organisations written by an earlier release
 * get their name key (org-name-keys.ts, computed in code), in a write of its own that nodes
 * starting together may each run: the second finds nothing left to fill.
 */
import { sql } from "drizzle-orm";
import { journal, sqlByTag } from "../../migrations/pg/index.ts";
import { embeddedFrom, SchemaTooNewError } from "./migrate.ts";
import { fillNameKeys } from "./org-name-keys.ts";
import type { PostgresStore } from "./pg-store.ts";

/** The advisory lock key migrations take (any fixed 64-bit number no other lock uses). */
export const MIGRATION_LOCK = 0x646f6376_0001n; // "docv", 1

export function embeddedPgMigrations() {
  return embeddedFrom(journal, sqlByTag);
}

export async function migratePostgres(store: PostgresStore): Promise<{ applied: number }> {
  const migrations = embeddedPgMigrations();
  const known = new Set(migrations.map((m) => m.hash));
  const result = await store.db.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK.toString()}::bigint)`);
    await tx.execute(sql`CREATE SCHEMA IF NOT EXISTS drizzle`);
    await tx.execute(sql`CREATE TABLE IF NOT EXISTS drizzle.__drizzle_migrations (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`);
    const rows = (await tx.execute(sql`SELECT hash FROM drizzle.__drizzle_migrations ORDER BY id`)) as unknown as { hash: string }[];
    const applied = new Set(rows.map((r) => r.hash));
    for (const hash of applied) {
      if (!known.has(hash)) {
        throw new SchemaTooNewError(
          "the database was written by a newer docverify (it has a migration this binary does not know); run the newer binary on every node, or restore a backup",
        );
      }
    }
    let count = 0;
    for (const m of migrations) {
      if (applied.has(m.hash)) continue;
      for (const statement of m.sql) if (statement.trim() !== "") await tx.execute(sql.raw(statement));
      await tx.execute(sql`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES (${m.hash}, ${m.folderMillis})`);
      count++;
    }
    return { applied: count };
  });
  await store.write(fillNameKeys);
  return result;
}
