import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { join } from "node:path";
import { migrate as stockMigrate } from "drizzle-orm/bun-sqlite/migrator";
import { openDatabase, PRAGMAS } from "../src/storage/db.ts";
import { createOrganisations } from "../src/keys/organisations.ts";
import { embeddedMigrations, migrate, SchemaTooNewError } from "../src/storage/migrate.ts";
import { metaValue } from "../src/storage/meta.ts";
import { sqliteStore } from "../src/storage/store.ts";
import { createVerifier, MAX_MATCHES } from "../src/verification/verify.ts";
import { RECORD_HEADS_BY_HASH_SQL } from "../src/storage/sqlite/verification-reads.ts";
import { verificationDrivers } from "./support/drivers.ts";
import { expectMigrationsInStep } from "./support/drizzle-kit.ts";
import { cleanup, ROOT, tempDir, BUN } from "./support/env.ts";
import { databaseBefore, organisationAsBefore } from "./support/previous-release.ts";
import { createRecordsFixture, docHashOf } from "./support/records-fixture.ts";
import { WINDOW_PASS_SQL } from "./verification/window-pass.ts";

afterAll(cleanup);

const rows = (db: ReturnType<typeof openDatabase>, sql: string) => db.$client.query(sql).all();

/**
 * Every row of `tables` in the columns each has now, to compare after a migration: a later
 * migration may add columns (0011: organisations' domain), never change what was there.
 */
function tableRows(db: ReturnType<typeof openDatabase>, tables: readonly string[]): { columns: string[][]; rows: unknown[][] } {
  const columns = tables.map((t) => (db.$client.query(`PRAGMA table_info(${t})`).all() as { name: string }[]).map((c) => c.name));
  return { columns, rows: rowsIn(db, tables, columns) };
}
const rowsIn = (db: ReturnType<typeof openDatabase>, tables: readonly string[], columns: readonly string[][]) =>
  tables.map((t, i) => rows(db, `SELECT rowid, ${columns[i]!.join(", ")} FROM ${t} ORDER BY rowid`));

/** After an upgrade: the database is sound, and its schema is exactly a fresh installation's. */
function expectSoundAndAsFresh(db: ReturnType<typeof openDatabase>): void {
  expect(rows(db, "PRAGMA integrity_check")).toEqual([{ integrity_check: "ok" }]);
  expect(rows(db, "PRAGMA foreign_key_check")).toEqual([]);
  const fresh = openDatabase({ path: join(tempDir(), "fresh.db") });
  migrate(fresh);
  const schema = "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name";
  expect(rows(db, schema)).toEqual(rows(fresh, schema));
  fresh.$client.close();
}

describe("storage", () => {
  test("pragmas are set in the documented order with durable settings", () => {
    expect(PRAGMAS.map((p) => p.split(" ")[1])).toEqual(["busy_timeout", "journal_mode", "foreign_keys", "synchronous", "cache_size", "temp_store"]);
    const db = openDatabase({ path: join(tempDir(), "a.db") });
    const one = (p: string) => Object.values(db.$client.query(`PRAGMA ${p}`).get() as object)[0];
    expect(one("busy_timeout")).toBe(5000);
    expect(one("journal_mode")).toBe("wal");
    expect(one("foreign_keys")).toBe(1);
    expect(one("synchronous")).toBe(2); // FULL
    expect(one("cache_size")).toBe(-65_536); // 64 MiB, a ceiling (negative: KiB)
    expect(one("temp_store")).toBe(2); // MEMORY
    db.$client.close();
  });

  test("a savepoint's journal stays in memory: a group commit's items open no temporary file", () => {
    const db = openDatabase({ path: join(tempDir(), "a.db") });
    const client = db.$client;
    client.run("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB NOT NULL)");
    const insert = client.query("INSERT INTO t (id, v) VALUES (?, ?)");
    client.transaction(() => {
      for (let i = 0; i < 200; i++) insert.run(i, new Uint8Array(2000));
    })();
    // SQLite's temporary files are open and unlinked (under /var/tmp, as O_TMPFILE here).
    const temporary = () =>
      readdirSync("/proc/self/fd").filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`).endsWith(" (deleted)");
        } catch {
          return false;
        }
      }).length;
    const before = temporary();
    let during = -1;
    const update = client.query("UPDATE t SET v = ? WHERE id = ?");
    client.transaction(() => {
      // Each item in its own savepoint, as the write queue runs them; each changes ~100 KiB of pages
      // that existed before it, more than SQLite keeps of a sub-journal in memory by default (64 KiB).
      for (let item = 0; item < 3; item++) {
        client.transaction(() => {
          for (let i = 0; i < 200; i += 4) update.run(new Uint8Array(2000).fill(item + 1), i);
        })();
      }
      during = temporary();
    }).immediate();
    expect(during).toBe(before);
    expect((client.query("SELECT v FROM t WHERE id = 4").get() as { v: Uint8Array }).v[0]).toBe(3);
    db.$client.close();
  });

  test("a new database file is readable by its owner only", () => {
    const dir = tempDir();
    const db = openDatabase({ path: join(dir, "sub", "x.db") });
    db.$client.close();
    expect(statSync(join(dir, "sub", "x.db")).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, "sub")).mode & 0o777).toBe(0o700);
  });

  test("embedded migrations are recorded exactly as drizzle's stock migrator records them", () => {
    const ours = openDatabase({ path: join(tempDir(), "ours.db") });
    const stock = openDatabase({ path: join(tempDir(), "stock.db") });
    expect(migrate(ours).applied).toBe(embeddedMigrations().length);
    stockMigrate(stock, { migrationsFolder: join(ROOT, "migrations") });
    const q = "SELECT hash, created_at FROM __drizzle_migrations ORDER BY created_at";
    expect(rows(ours, q)).toEqual(rows(stock, q));
    const schema = "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name";
    expect(rows(ours, schema)).toEqual(rows(stock, schema));
    // and the stock migrator finds nothing left to do on our database, and we on its
    stockMigrate(ours, { migrationsFolder: join(ROOT, "migrations") });
    expect(migrate(stock).applied).toBe(0);
    expect(rows(ours, q)).toEqual(rows(stock, q));
  });

  test("migrating twice applies nothing the second time", () => {
    const path = join(tempDir(), "twice.db");
    const db = openDatabase({ path });
    migrate(db);
    expect(migrate(db).applied).toBe(0);
    db.$client.close();
    const again = openDatabase({ path });
    expect(migrate(again).applied).toBe(0);
    again.$client.close();
  });

  test("a database written by a newer binary is refused", () => {
    const db = openDatabase({ path: join(tempDir(), "newer.db") });
    migrate(db);
    db.$client.run("INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('f00d', 99999999999999)");
    expect(() => migrate(db)).toThrow(SchemaTooNewError);
  });

  test("service_meta values are created once", () => {
    const db = openDatabase({ path: join(tempDir(), "meta.db") });
    migrate(db);
    const store = sqliteStore(db);
    const a = store.writeSync(metaValue("k", () => "first"));
    const b = store.writeSync(metaValue("k", () => "second"));
    expect([a, b]).toEqual(["first", "first"]);
  });

  test("migrations/index.ts embeds every migration in the journal", async () => {
    const proc = Bun.spawnSync([BUN, join(ROOT, "scripts", "gen-migrations.ts"), "--check"], { cwd: ROOT });
    expect(proc.stderr.toString()).toBe("");
    expect(proc.exitCode).toBe(0);
    const journal = JSON.parse(readFileSync(join(ROOT, "migrations", "meta", "_journal.json"), "utf8")) as { entries: unknown[] };
    expect(embeddedMigrations().length).toBe(journal.entries.length);
  });

  test(
    "schema and migrations are in step: drizzle-kit generate finds nothing to do",
    () => {
      expectMigrationsInStep("sqlite", "./src/storage/schema.ts", "migrations");
    },
    60_000,
  );

  test("0002 moves each organisation's system key into the key registry and keeps its API keys", () => {
    // A database as the previous release left it: migrations 0000 and 0001, one organisation, one key.
    const db = databaseBefore("0002");
    const pk = new Uint8Array(1952).fill(7);
    const fp = new Uint8Array(32).fill(9);
    const sealed = new Uint8Array(65).fill(1);
    db.$client
      .query("INSERT INTO organisations (id, name, created_at, system_key_algorithm, system_public_key, system_key_fingerprint, system_key_sealed) VALUES (?, ?, ?, ?, ?, ?, ?)")
      .run("org-1", "Acme", 1000, "ML-DSA-65", pk, fp, sealed);
    db.$client.query("INSERT INTO api_keys (key_id, org_id, environment, scopes, secret_digest, created_at) VALUES ('k1', 'org-1', 'live', 'verifications:read', x'00', 1)").run();

    expect(migrate(db).applied).toBe(embeddedMigrations().length - 2);
    const key = db.$client.query("SELECT algorithm, public_key, purpose, sealed_seed, created_at FROM signing_keys WHERE fingerprint = ?").get(fp) as Record<string, unknown>;
    expect(key).toMatchObject({ algorithm: "ML-DSA-65", purpose: "org:org-1", created_at: 1000 });
    expect(Buffer.from(key.public_key as Uint8Array).equals(Buffer.from(pk))).toBe(true);
    expect(Buffer.from(key.sealed_seed as Uint8Array).equals(Buffer.from(sealed))).toBe(true);
    expect(rows(db, "SELECT id, name FROM organisations")).toEqual([{ id: "org-1", name: "Acme" }]);
    expect(rows(db, "PRAGMA foreign_key_check")).toEqual([]);
    // the api_keys foreign key still points at the rebuilt table
    expect(() => db.$client.run("INSERT INTO api_keys (key_id, org_id, environment, scopes, secret_digest, created_at) VALUES ('k2', 'nope', 'live', '', x'00', 1)")).toThrow();
    db.$client.close();
  });

  test("0006 indexes the records of a database as the previous release left it: records intact, verification answers the same", async () => {
    const db = databaseBefore("0006");
    const indexSql = "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = 'records_anchored_by_class'";
    expect(rows(db, indexSql)).toEqual([]);
    const fx = createRecordsFixture({ db });
    const acme = organisationAsBefore(fx, "Acme Certification Ltd");
    const globex = organisationAsBefore(fx, "Globex Registry");
    const alice = fx.createPerson();
    // A hash with more than 100 records, whose verdict rests on a record beyond the first 100;
    // one of at most 100; one awaiting consensus.
    const large = docHashOf("upgrade: large");
    const revoked = Array.from({ length: MAX_MATCHES + 20 }, () => fx.addOrgRecord(acme, { docHash: large, revoked: { reason: "SUPERSEDED" } }));
    const active = fx.addOrgRecord(globex, { docHash: large });
    fx.addPersonRecord(alice, { docHash: large, revoked: { reason: "OTHER" } });
    fx.addOrgRecord(acme, { docHash: large, anchorState: "abandoned" });
    const small = docHashOf("upgrade: small");
    const smallIds = [fx.addOrgRecord(acme, { docHash: small }), fx.addPersonRecord(alice, { docHash: small })];
    const pending = docHashOf("upgrade: pending");
    fx.addOrgRecord(globex, { docHash: pending, anchorState: "accepted", createdAt: fx.clock.now() });
    const allRecords = "SELECT rowid, * FROM records ORDER BY rowid";
    const before = rows(db, allRecords);
    // What the previous release read whole for the large hash: the first 100, then the active record.
    const previous = (db.$client.query(WINDOW_PASS_SQL).all(large, MAX_MATCHES) as { id: string }[]).map((r) => r.id);
    expect(previous).toEqual([...revoked.slice(0, MAX_MATCHES), active]);

    expect(migrate(db).applied).toBe(embeddedMigrations().length - 6);
    expect(rows(db, allRecords)).toEqual(before);
    expect(rows(db, "PRAGMA integrity_check")).toEqual([{ integrity_check: "ok" }]);
    expect((rows(db, indexSql)[0] as { sql: string }).sql).toContain("WHERE anchor_state = 'anchored'");
    // The schema is now exactly a fresh installation's.
    const fresh = openDatabase({ path: join(tempDir(), "fresh.db") });
    migrate(fresh);
    const schema = "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name";
    expect(rows(db, schema)).toEqual(rows(fresh, schema));
    fresh.$client.close();

    const verifier = createVerifier({ ...verificationDrivers(sqliteStore(db)), signer: fx.signer, clock: fx.clock, links: { topicMessageUrl: (t, n) => `http://mirror.test/${t}/${n}` } });
    const answer = verifier.verify({ docHash: large, tier: "public" });
    expect(answer.verdict).toBe("verified_org");
    expect(answer.matches.map((m) => m.recordId)).toEqual(previous.slice(0, MAX_MATCHES));
    const smallAnswer = verifier.verify({ docHash: small, tier: "public" });
    expect(smallAnswer.verdict).toBe("verified");
    expect(smallAnswer.matches.map((m) => m.recordId)).toEqual(smallIds);
    expect(verifier.verify({ docHash: pending, tier: "public" })).toMatchObject({ verdict: "pending_anchor", matches: [] });
    db.$client.close();
  });

  test("0008 adds persons and enrolments to a database as the previous release left it: its records and organisations kept", async () => {
    const db = databaseBefore("0008");
    expect(rows(db, "SELECT name FROM sqlite_master WHERE name IN ('persons', 'enrolments')")).toEqual([]);
    const fx = createRecordsFixture({ db });
    const acme = organisationAsBefore(fx, "Acme Certification Ltd");
    const alice = fx.createPerson();
    const hash = docHashOf("upgrade: 0008");
    const ids = [fx.addOrgRecord(acme, { docHash: hash }), fx.addPersonRecord(alice, { docHash: hash })];
    const tables = ["organisations", "signing_keys", "records", "audit_log"];
    const before = tableRows(db, tables);

    // 0008, and the releases after it.
    expect(migrate(db).applied).toBe(embeddedMigrations().length - 8);
    expect(rowsIn(db, tables, before.columns)).toEqual(before.rows);
    expectSoundAndAsFresh(db);
    // The new tables take rows, with their foreign keys enforced.
    db.$client.query("INSERT INTO persons (id, org_id, name, email, identity_evidence, created_at) VALUES ('p1', ?, 'Alice', 'a@example.org', 'passport', 1)").run(acme.id);
    expect(() => db.$client.run("INSERT INTO persons (id, org_id, name, email, identity_evidence, created_at) VALUES ('p2', 'nope', 'B', 'b@example.org', 'passport', 1)")).toThrow();
    expect(() => db.$client.run("INSERT INTO enrolments (token_digest, person_id, expires_at, created_at) VALUES (x'00', 'nope', 2, 1)")).toThrow();
    const verifier = createVerifier({ ...verificationDrivers(sqliteStore(db)), signer: fx.signer, clock: fx.clock, links: { topicMessageUrl: (t, n) => `http://mirror.test/${t}/${n}` } });
    const answer = verifier.verify({ docHash: hash, tier: "public" });
    expect(answer.verdict).toBe("verified");
    expect(answer.matches.map((m) => [m.recordId, m.signerStanding])).toEqual(ids.map((id) => [id, "good_standing"]));
    db.$client.close();
  });

  test("0009 adds passkeys, challenges and sessions, and lets a person's record share a hash with their organisation's: records, persons and links kept", async () => {
    const db = databaseBefore("0009");
    expect(rows(db, "SELECT name FROM sqlite_master WHERE name IN ('passkeys', 'app_challenges', 'app_sessions')")).toEqual([]);
    const fx = createRecordsFixture({ db });
    const acme = organisationAsBefore(fx, "Acme Certification Ltd");
    const alice = fx.createPerson();
    const hash = docHashOf("upgrade: 0009");
    const ids = [fx.addOrgRecord(acme, { docHash: hash }), fx.addPersonRecord(alice, { docHash: hash })];
    db.$client.query("INSERT INTO persons (id, org_id, name, email, identity_evidence, created_at) VALUES ('p1', ?, 'Alice', 'a@example.org', 'passport', 1)").run(acme.id);
    db.$client.run("INSERT INTO enrolments (token_digest, person_id, expires_at, created_at) VALUES (x'01', 'p1', 2, 1)");
    const tables = ["organisations", "signing_keys", "records", "audit_log", "persons", "enrolments"];
    const before = tableRows(db, tables);
    // Before: one active record per organisation and hash, whoever signed.
    expect(() => fx.addPersonRecord(alice, { docHash: hash, orgId: acme.id })).toThrow(/UNIQUE/);

    // 0009, and the releases after it.
    expect(migrate(db).applied).toBe(embeddedMigrations().length - 9);
    expect(rowsIn(db, tables, before.columns)).toEqual(before.rows);
    expectSoundAndAsFresh(db);
    // After: a person of the organisation may sign the hash the organisation authenticated, once;
    // the organisation still holds one active record per hash.
    const personal = fx.addPersonRecord(alice, { docHash: hash, orgId: acme.id });
    expect(() => fx.addPersonRecord(alice, { docHash: hash, orgId: acme.id })).toThrow(/UNIQUE/);
    expect(() => fx.addOrgRecord(acme, { docHash: hash })).toThrow(/UNIQUE/);
    expect(() => db.$client.run("INSERT INTO passkeys (credential_id, person_id, public_key, counter, created_at) VALUES ('c', 'nope', x'00', 0, 1)")).toThrow();
    db.$client.run("INSERT INTO passkeys (credential_id, person_id, public_key, counter, created_at) VALUES ('c', 'p1', x'00', 0, 1)");
    const verifier = createVerifier({ ...verificationDrivers(sqliteStore(db)), signer: fx.signer, clock: fx.clock, links: { topicMessageUrl: (t, n) => `http://mirror.test/${t}/${n}` } });
    const answer = verifier.verify({ docHash: hash, tier: "public" });
    expect(answer.verdict).toBe("verified");
    expect(answer.matches.map((m) => m.recordId).sort()).toEqual([...ids, personal].sort());
    db.$client.close();
  });

  test("0010 adds the change counter and its triggers and makes the records' hash index and the log's index covering: records, keys and log kept; the counter moves only on what caches hold", async () => {
    const db = databaseBefore("0010");
    expect(rows(db, "SELECT name FROM sqlite_master WHERE name = 'change_counter' OR (type = 'trigger' AND sql LIKE '%change_counter%')")).toEqual([]);
    const fx = createRecordsFixture({ db });
    const acme = organisationAsBefore(fx, "Acme Certification Ltd");
    const hash = docHashOf("upgrade: 0010");
    const id = fx.addOrgRecord(acme, { docHash: hash });
    db.$client.run("INSERT INTO verifications (id, org_id, environment, key_id, verdict, doc_hash, reference, verified_at_ms) VALUES ('01900000-0000-7000-8000-000000000001', ?, 'live', 'k', 'verified_org', ?, 'ref', 1)", [acme.id, hash]);
    const tables = ["organisations", "signing_keys", "records", "verifications", "api_keys", "persons"];
    const before = tableRows(db, tables);

    expect(migrate(db).applied).toBe(embeddedMigrations().length - 10);
    expect(rowsIn(db, tables, before.columns)).toEqual(before.rows);
    expectSoundAndAsFresh(db);
    const counter = () => (db.$client.query("SELECT value FROM change_counter WHERE id = 1").get() as { value: number }).value;
    // Made at 0; the organisation's name key, filled in after the migrations (0012), moved it once.
    expect(counter()).toBe(1);
    // What verification and authentication keep in memory moves the counter, from any connection ...
    const bumps = (sql: string, params: (string | number | Uint8Array)[] = []) => {
      const was = counter();
      db.$client.query(sql).run(...params);
      return counter() - was;
    };
    expect(bumps("UPDATE records SET signature = signature || x'00' WHERE id = ?", [id])).toBe(1);
    expect(bumps("UPDATE records SET seal_fingerprint = seal_fingerprint WHERE id = ?", [id])).toBe(1);
    expect(bumps("UPDATE organisations SET suspended = 1 WHERE id = ?", [acme.id])).toBe(1);
    expect(bumps("UPDATE signing_keys SET created_at = created_at + 1")).toBeGreaterThan(0);
    // ... and what verification reads afresh on every request does not.
    expect(bumps("UPDATE records SET revoked_at = 5, revocation_reason = 'SUPERSEDED' WHERE id = ?", [id])).toBe(0);
    expect(bumps("UPDATE records SET anchor_state = anchor_state WHERE id = ?", [id])).toBe(0);
    expect(bumps("INSERT INTO verifications (id, org_id, environment, key_id, verdict, doc_hash, verified_at_ms) VALUES ('01900000-0000-7000-8000-000000000002', ?, 'live', 'k', 'no_record', ?, 2)", [acme.id, hash])).toBe(0);
    expect(bumps("DELETE FROM records WHERE id = ?", [id])).toBe(1);
    // A verification's hot read is index-only too.
    const heads = db.$client.query(`EXPLAIN QUERY PLAN ${RECORD_HEADS_BY_HASH_SQL}`).all("x") as { detail: string }[];
    expect(heads.map((p) => p.detail)).toContain("SEARCH records USING COVERING INDEX records_doc_hash (doc_hash=?)");
    // The log's first page is read from the covering index alone.
    const plan = db.$client.query("EXPLAIN QUERY PLAN SELECT id, org_id, environment, verdict, doc_hash, reference, verified_at_ms FROM verifications WHERE org_id = ? AND environment = ? ORDER BY id DESC LIMIT 26").all(acme.id, "live") as { detail: string }[];
    expect(plan.map((p) => p.detail)).toEqual(["SEARCH verifications USING COVERING INDEX verifications_scope (org_id=? AND environment=?)"]);
    db.$client.close();
  });

  test("0011 adds organisations' domain and announcement generation, and key announcements' generation: organisations, records and announcements kept; one live announcement per organisation, key and generation; an anchored announcement moves the counter", async () => {
    const db = databaseBefore("0011");
    expect(rows(db, "SELECT name FROM pragma_table_info('organisations') WHERE name IN ('domain', 'announcement_generation')")).toEqual([]);
    const fx = createRecordsFixture({ db });
    const acme = organisationAsBefore(fx, "Acme Certification Ltd");
    const hash = docHashOf("upgrade: 0011");
    const recordId = fx.addOrgRecord(acme, { docHash: hash });
    const announce = (transactionId: string, state: string, generation?: number) =>
      db.$client
        .query(
          `INSERT INTO ledger_transactions (transaction_id, kind, org_id, topic_id, message, key_fingerprint, ${generation === undefined ? "" : "announcement_generation, "}valid_start_ms, valid_seconds, state, next_attempt_at, created_at, updated_at)
           VALUES (?, 'key_announcement', ?, '0.0.1001', x'7b7d', ?, ${generation === undefined ? "" : `${generation}, `}1, 180, ?, 1, 1, 1)`,
        )
        .run(transactionId, acme.id, acme.systemKey.fingerprint, state);
    // The previous release's announcement of the organisation's key, anchored; a second live one is refused.
    announce("0.0.2@1.000000001", "anchored");
    expect(() => announce("0.0.2@1.000000002", "pending")).toThrow(/UNIQUE/);
    const tables = ["organisations", "signing_keys", "records", "ledger_transactions", "audit_log"];
    const before = tableRows(db, tables);

    expect(migrate(db).applied).toBe(embeddedMigrations().length - 11);
    expect(rowsIn(db, tables, before.columns)).toEqual(before.rows);
    expectSoundAndAsFresh(db);
    expect(rows(db, "SELECT domain, announcement_generation FROM organisations")).toEqual([{ domain: null, announcement_generation: 0 }]);
    expect(rows(db, "SELECT transaction_id, announcement_generation FROM ledger_transactions")).toEqual([{ transaction_id: "0.0.2@1.000000001", announcement_generation: 0 }]);
    // One live announcement per organisation, key and generation: the same key again at
    // generation 0 is refused, at generation 1 (a changed domain) it is taken, once.
    expect(() => announce("0.0.2@1.000000002", "pending", 0)).toThrow(/UNIQUE/);
    announce("0.0.2@1.000000003", "pending", 1);
    expect(() => announce("0.0.2@1.000000004", "pending", 1)).toThrow(/UNIQUE/);
    // A key announcement reaching consensus moves the change counter (a kept receipt may carry it
    // now); a record's message reaching it does not.
    const counter = () => (db.$client.query("SELECT value FROM change_counter WHERE id = 1").get() as { value: number }).value;
    const bumps = (sql: string, ...params: string[]) => {
      const was = counter();
      db.$client.query(sql).run(...params);
      return counter() - was;
    };
    expect(bumps("UPDATE ledger_transactions SET state = 'accepted' WHERE transaction_id = ?", "0.0.2@1.000000003")).toBe(0);
    expect(bumps("UPDATE ledger_transactions SET state = 'anchored', sequence_number = 2, consensus_at = '2.000000001' WHERE transaction_id = ?", "0.0.2@1.000000003")).toBe(1);
    expect(bumps("UPDATE ledger_transactions SET last_error = 'x' WHERE transaction_id = ?", "0.0.2@1.000000003")).toBe(0);
    const record = rows(db, `SELECT transaction_id FROM records WHERE id = '${recordId}'`)[0] as { transaction_id: string };
    db.$client.query("INSERT INTO ledger_transactions (transaction_id, kind, org_id, record_id, topic_id, message, valid_start_ms, valid_seconds, state, next_attempt_at, created_at, updated_at) VALUES (?, 'record_message', ?, ?, '0.0.1001', x'7b7d', 1, 180, 'pending', 1, 1, 1)").run(record.transaction_id, acme.id, recordId);
    expect(bumps("UPDATE ledger_transactions SET state = 'anchored' WHERE transaction_id = ?", record.transaction_id)).toBe(0);
    const verifier = createVerifier({ ...verificationDrivers(sqliteStore(db)), signer: fx.signer, clock: fx.clock, links: { topicMessageUrl: (t, n) => `http://mirror.test/${t}/${n}` } });
    expect(verifier.verify({ docHash: hash, tier: "public" })).toMatchObject({ verdict: "verified_org" });
    db.$client.close();
  });

  test("0012 adds organisations' name key and its unique index to a database that holds one name twice: every organisation kept as it was, the later of a name given a key of its own and reported as sharing it; the name refused from then on", async () => {
    const db = databaseBefore("0012");
    const fx = createRecordsFixture({ db });
    // As the previous release allowed: one name twice, once more in another Unicode form and case.
    const first = organisationAsBefore(fx, "Twin Ltd");
    const other = organisationAsBefore(fx, "Other Ltd");
    const second = organisationAsBefore(fx, "Twin Ltd");
    const third = organisationAsBefore(fx, "TWIN LTD");
    const hash = docHashOf("upgrade: 0012");
    fx.addOrgRecord(second, { docHash: hash });
    const tables = ["organisations", "signing_keys", "records", "audit_log"];
    const before = tableRows(db, tables);

    expect(migrate(db).applied).toBe(embeddedMigrations().length - 12);
    expect(rowsIn(db, tables, before.columns)).toEqual(before.rows);
    expectSoundAndAsFresh(db);
    expect(rows(db, "SELECT id, name_key FROM organisations ORDER BY rowid")).toEqual([
      { id: first.id, name_key: "twin ltd" },
      { id: other.id, name_key: "other ltd" },
      { id: second.id, name_key: `twin ltd#${second.id}` },
      { id: third.id, name_key: `twin ltd#${third.id}` },
    ]);
    // Opened again: nothing left to fill, nothing changed.
    expect(migrate(db).applied).toBe(0);
    expect((rows(db, "SELECT count(*) AS n FROM organisations WHERE name_key LIKE '%#%'")[0] as { n: number }).n).toBe(2);

    const orgs = createOrganisations({ store: sqliteStore(db), signer: fx.signer, clock: fx.clock });
    expect((await orgs.sharingNames()).map((s) => [s.name, s.organisations.map((o) => o.id)])).toEqual([["Twin Ltd", [first.id, second.id, third.id]]]);
    await expect(orgs.create({ name: "Twin\u00a0LTD" }, "alice")).rejects.toMatchObject({ holder: { id: first.id, name: "Twin Ltd" } });
    await orgs.set(second.id, { name: "Twin Ltd (North)" }, "alice");
    await orgs.set(third.id, { name: "Twin Ltd (South)" }, "alice");
    expect(await orgs.sharingNames()).toEqual([]);
    // The record of the renamed organisation still verifies.
    const verifier = createVerifier({ ...verificationDrivers(sqliteStore(db)), signer: fx.signer, clock: fx.clock, links: { topicMessageUrl: (t, n) => `http://mirror.test/${t}/${n}` } });
    expect(verifier.verify({ docHash: hash, tier: "public" })).toMatchObject({ verdict: "verified_org" });
    db.$client.close();
  });
});
