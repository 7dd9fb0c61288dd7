/**
 * PostgreSQL migration 0004 (byte order for the text keys that order reads), on a database with a
 * linguistic default collation as production databases have (test/support/postgres.ts: ICU en-US):
 * - a database written by the release before (migrations 0000–0003) is migrated with its rows
 *   intact (and through 0005, the leader's reported figure), and the change counter's trigger, dropped and made again around the change, still
 *   raises the counter;
 * - the reads that order by those keys (`COLLATE "C"`, as they must for both engines to return the
 *   same rows) are served by the indexes in order, with no sort of every matching row: before the
 *   migration they were not.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { createSigner } from "../../src/crypto/index.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { embeddedPgMigrations, migratePostgres } from "../../src/storage/pg-migrate.ts";
import { postgresStore, type PostgresStore } from "../../src/storage/pg-store.ts";
import { CLASS_HEAD, logPage } from "../../src/storage/verification-statements.ts";
import { cleanup } from "../support/env.ts";
import { sharedPostgres, type Postgres } from "../support/postgres.ts";

let pg: Postgres;
const stores: PostgresStore[] = [];
beforeAll(async () => {
  pg = await sharedPostgres();
}, 120_000);
afterAll(async () => {
  for (const s of stores) await s.close();
  await pg?.destroy();
  cleanup();
});

/** Applies the first `n` migrations only, as the release that had them did. */
async function migrateTo(store: PostgresStore, n: number): Promise<void> {
  const migrations = embeddedPgMigrations().slice(0, n);
  await store.db.transaction(async (tx) => {
    await tx.execute(sql`CREATE SCHEMA IF NOT EXISTS drizzle`);
    await tx.execute(sql`CREATE TABLE IF NOT EXISTS drizzle.__drizzle_migrations (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`);
    for (const m of migrations) {
      for (const statement of m.sql) if (statement.trim() !== "") await tx.execute(sql.raw(statement));
      await tx.execute(sql`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES (${m.hash}, ${m.folderMillis})`);
    }
  });
}

/** The plan of `text` with `params`, sequential scans and sorts priced out: a Sort left in it means no index gives the order. */
async function plan(store: PostgresStore, text: string, params: unknown[]): Promise<string> {
  return store.client.begin(async (tx) => {
    await tx`SET LOCAL enable_seqscan = off`;
    await tx`SET LOCAL enable_sort = off`;
    const rows = (await tx.unsafe(`EXPLAIN ${text}`, params as never[])) as { "QUERY PLAN": string }[];
    return rows.map((r) => r["QUERY PLAN"]).join("\n");
  }) as Promise<string>;
}

const collation = async (store: PostgresStore, table: string, column: string) =>
  (
    (await store.client`SELECT c.collname AS name FROM pg_attribute a JOIN pg_class t ON t.oid = a.attrelid LEFT JOIN pg_collation c ON c.oid = a.attcollation
      WHERE t.relname = ${table} AND a.attname = ${column}`) as { name: string }[]
  )[0]?.name;

describe("PostgreSQL migration 0004: byte order for the keys reads are ordered by", () => {
  test("a database of the previous release keeps its rows, gets the collation, and its indexes serve the ordered reads", async () => {
    const store = postgresStore(await pg.createDatabase("collation"));
    stores.push(store);
    await migrateTo(store, 4);
    const clock = manualClock(Date.UTC(2026, 10, 25, 10));
    // An organisation as that release wrote one: its columns then (the organisations service writes today's).
    const org = { id: Bun.randomUUIDv7() };
    const key = createSigner({ masterKey: new Uint8Array(32).fill(3), workers: 0 }).generateKey(`org:${org.id}`);
    const fp = Buffer.from(key.fingerprint);
    await store.client`INSERT INTO signing_keys (fingerprint, algorithm, public_key, purpose, sealed_seed, created_at)
      VALUES (${fp}, ${key.algorithm}, ${Buffer.from(key.publicKey)}, ${key.purpose}, ${Buffer.from(key.sealedSeed)}, ${clock.now()})`;
    await store.client`INSERT INTO organisations (id, name, created_at, system_key_fingerprint) VALUES (${org.id}, 'Acme', ${clock.now()}, ${fp})`;
    // Rows as the previous release wrote them (one active record of the hash, the others revoked):
    // ids that a linguistic order and byte order sort differently.
    const ids = ["01a-B", "01a-a", "01a-Z"];
    for (const [i, id] of ids.entries()) {
      await store.client`INSERT INTO records (id, org_id, kind, signer_type, doc_hash, signed_at_ms, signer_fingerprint, signature, seal_fingerprint, seal_signature, topic_id, transaction_id, anchor_state, sequence_number, consensus_at, created_at, revoked_at, revocation_reason)
        VALUES (${id}, ${org.id}, 'document', 'org', 'sha256:' || repeat('a', 64), ${clock.now()}, ${fp}, ${Buffer.alloc(4, i)}, ${fp}, ${Buffer.alloc(4, i)}, '0.0.1001', ${`0.0.2@1.${i}`}, 'anchored', ${i + 1}, ${`17640000${i}.000000000`}, ${clock.now()}, ${i === 0 ? null : clock.now()}, ${i === 0 ? null : "SUPERSEDED"})`;
      await store.client`INSERT INTO verifications (id, org_id, environment, doc_hash, verdict, verified_at_ms, key_id, reference, retry_after_seconds)
        VALUES (${id}, ${org.id}, 'live', 'sha256:' || repeat('b', 64), 'no_record', ${clock.now()}, 'key', NULL, NULL)`;
    }
    const pagePlan = () => plan(store, logPage(0).postgres, [org.id, "live", 2]);
    const headPlan = () => plan(store, CLASS_HEAD.postgres, ["sha256:" + "a".repeat(64), 1]);
    // Before: the linguistic default; the ordered reads sort.
    expect(await collation(store, "verifications", "id")).toBe("default");
    expect(await pagePlan()).toContain("Sort");

    expect(await migratePostgres(store)).toEqual({ applied: embeddedPgMigrations().length - 4 });
    for (const [table, column] of [["records", "id"], ["records", "consensus_at"], ["verifications", "id"]] as const) expect(await collation(store, table, column)).toBe("C");
    // The rows are all there, in byte order.
    expect(((await store.client`SELECT id FROM records ORDER BY id`) as { id: string }[]).map((r) => r.id)).toEqual(["01a-B", "01a-Z", "01a-a"]);
    expect(((await store.client`SELECT id FROM verifications ORDER BY id`) as { id: string }[]).map((r) => r.id)).toEqual(["01a-B", "01a-Z", "01a-a"]);
    // The indexes give the order: no sort of the matching rows.
    expect(await pagePlan()).not.toContain("Sort");
    // A large hash's class heads: each of the two range reads (rows without a consensus time, then
    // the rest) comes from an index in order, LIMIT 100 each; only their union (at most 200 rows) is
    // sorted, never the hash's records.
    const head = await headPlan();
    expect(head.match(/Sort {2}\(/g)?.length).toBe(1);
    expect(head.indexOf("Sort  (")).toBeLessThan(head.indexOf("Append"));
    expect(head).toContain("Index Scan using records_anchored_by_class");
    // Migration 0005 on the previous release's leader row: the figure the leader reports, 0 until it does.
    expect(await store.client`SELECT epoch::int AS epoch, anchored_recently FROM anchor_leader`).toEqual([{ epoch: 0, anchored_recently: 0 }]);
    // The trigger made again: a change to a checked column raises the change counter.
    const counter = async () => Number(((await store.client`SELECT value FROM change_counter WHERE id = 1`) as [{ value: string }])[0].value);
    const before = await counter();
    await store.client`UPDATE records SET signature = ${Buffer.alloc(4, 9)} WHERE id = '01a-a'`;
    expect(await counter()).toBe(before + 1);
  }, 60_000);
});
