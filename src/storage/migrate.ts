/**
 * Applies the SQL migrations embedded in the binary (see migrations/index.ts).
 *
 * drizzle's stock `migrate()` reads `meta/_journal.json` and the `.sql` files from disk, which a
 * compiled binary run from another folder does not have. We build the same migration list from
 * the embedded text — split on drizzle-kit's breakpoint marker, hashed with SHA-256 of the whole
 * file — and hand it to drizzle's own dialect migrator, so the `__drizzle_migrations` rows are
 * exactly what the stock migrator would have written and either can take over from the other.
 */
import { createHash } from "node:crypto";
import type { MigrationMeta } from "drizzle-orm/migrator";
import { journal, sqlByTag } from "../../migrations/index.ts";
import type { Db } from "./db.ts";
import { fillNameKeys } from "./org-name-keys.ts";
import { SchemaTooNewError } from "./schema-too-new.ts";
import { sqliteStore } from "./store.ts";

export function embeddedMigrations(): MigrationMeta[] {
  return embeddedFrom(journal, sqlByTag);
}

/** The migration list drizzle's migrator expects, from a journal and the embedded SQL it names. */
export function embeddedFrom(from: { entries: readonly { tag: string; when: number; breakpoints: boolean }[] }, sqlOf: Readonly<Record<string, string>>): MigrationMeta[] {
  return from.entries.map((entry) => {
    const text = sqlOf[entry.tag];
    if (text === undefined) throw new Error(`migration ${entry.tag} is in the journal but not embedded`);
    return {
      sql: text.split("--> statement-breakpoint"),
      bps: entry.breakpoints,
      folderMillis: entry.when,
      hash: createHash("sha256").update(text).digest("hex"),
    };
  });
}

export { SchemaTooNewError };

/**
 * Brings the database up to the binary's schema. Refuses a database written by a newer
 * binary (a migration this binary does not know), since running old code over a newer
 * schema could corrupt it. Then gives organisations written by an earlier release their name
 * key (org-name-keys.ts), in a transaction of its own: the key is computed in code, not SQL.
 */
export function migrate(db: Db): { applied: number } {
  const migrations = embeddedMigrations();
  const known = new Set(migrations.map((m) => m.hash));
  const before = appliedHashes(db);
  for (const h of before) {
    if (!known.has(h)) {
      throw new SchemaTooNewError(
        "the database was written by a newer docverify (it has a migration this binary does not know); run the newer binary or restore a backup",
      );
    }
  }
  try {
    runDialectMigrate(db, migrations);
  } catch (e) {
    // Two processes starting at once (serve and an admin command) can race: the loser read the
    // migration table before the winner committed, then fails on an existing table. Its
    // transaction was rolled back; one more pass sees the winner's rows and does nothing.
    if (appliedHashes(db).length === before.length) throw e;
    runDialectMigrate(db, migrations);
  }
  sqliteStore(db).writeSync(fillNameKeys);
  return { applied: appliedHashes(db).length - before.length };
}

function runDialectMigrate(db: Db, migrations: MigrationMeta[]): void {
  // The dialect and session are drizzle internals the stock migrator uses the same way.
  const internal = db as unknown as { dialect: { migrate(m: MigrationMeta[], s: unknown, c: object): void }; session: unknown };
  internal.dialect.migrate(migrations, internal.session, { migrationsFolder: "(embedded)" });
}

function appliedHashes(db: Db): string[] {
  const exists = db.$client.query("SELECT 1 FROM sqlite_master WHERE type='table' AND name='__drizzle_migrations'").get();
  if (exists === null) return [];
  return db.$client.query("SELECT hash FROM __drizzle_migrations ORDER BY created_at").values().map((r) => String(r[0]));
}
