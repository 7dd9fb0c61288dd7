/**
 * Organisation names are unique per appliance, on both engines (the embedded SQLite and a real
 * PostgreSQL server this file starts): compared by their key (NFKC, then lowercased:
 * src/lib/name-key.ts), enforced by a unique index, a refusal naming the organisation that holds
 * the name and changing nothing. And a PostgreSQL database of the release before the key (pg
 * migration 0007) that holds one name twice keeps both (SQLite's: test/storage.test.ts, "0012").
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { count, eq, sql } from "drizzle-orm";
import { createSigner } from "../../src/crypto/index.ts";
import { listAudit } from "../../src/keys/audit.ts";
import { createOrganisations, NameTakenError, type Organisation } from "../../src/keys/organisations.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { embeddedPgMigrations, migratePostgres } from "../../src/storage/pg-migrate.ts";
import { postgresStore, type PostgresStore } from "../../src/storage/pg-store.ts";
import { q, type Store } from "../../src/storage/store.ts";
import { useStoreEngines } from "../support/store-engines.ts";

const { engines, opened, pg } = useStoreEngines();

const signer = createSigner({ masterKey: new Uint8Array(32).fill(7), workers: 0 });

/** Everything a refused create or rename must leave as it was. */
async function snapshot(store: Store) {
  const rows = await store.read(function* (db, t) {
    const organisations = yield* q(db.select().from(t.organisations).orderBy(t.organisations.id));
    const [keys] = yield* q(db.select({ n: count() }).from(t.signingKeys));
    return { organisations, keys: Number(keys!.n) };
  });
  return { ...rows, audit: (await listAudit(store, 10_000)).map((a) => a.id) };
}

const generationOf = (store: Store, id: string) =>
  store.read(function* (db, t) {
    const [row] = yield* q(db.select({ g: t.organisations.announcementGeneration }).from(t.organisations).where(eq(t.organisations.id, id)));
    return Number(row!.g);
  });

for (const engine of engines) {
  describe(`${engine.name}: organisation names are unique`, () => {
    let store: Store;
    let orgs: ReturnType<typeof createOrganisations>;
    const clock = manualClock(Date.UTC(2026, 11, 1, 9));
    let cafe: Organisation;
    beforeAll(async () => {
      store = await engine.open();
      orgs = createOrganisations({ store, signer, clock });
      cafe = await orgs.create({ name: "Café Ltd" }, "alice");
    });

    // The same name as "Café Ltd" (precomposed é), however it is typed.
    const same: [what: string, name: string][] = [
      ["the same name", "Café Ltd"],
      ["the same with spaces around it", "  Café Ltd "],
      ["another case", "CAFÉ LTD"],
      ["another case, lower", "café ltd"],
      ["another Unicode form: e and a combining acute accent", "Cafe\u0301 Ltd"],
      ["full-width letters", "Ｃａｆé Ｌｔｄ"],
      ["full-width, upper case, decomposed", "ＣＡＦＥ\u0301 ＬＴＤ"],
    ];
    for (const [what, name] of same) {
      test(`create with ${what} (${JSON.stringify(name)}) is refused naming the holder: no organisation, key or audit row written`, async () => {
        const before = await snapshot(store);
        const refused = await orgs.create({ name, addon: true }, "bob").catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(NameTakenError);
        expect(refused).toMatchObject({ code: "VALIDATION_FAILED", holder: { id: cafe.id, name: "Café Ltd" } });
        expect((refused as Error).message.startsWith(`an organisation named "Café Ltd" already exists (${cafe.id})`)).toBe(true);
        expect(await snapshot(store)).toEqual(before);
        expect(await orgs.named(name)).toEqual({ id: cafe.id, name: "Café Ltd" });
      });
    }

    test("names that differ beyond case, width and Unicode form are different names", async () => {
      for (const name of ["Cafe Ltd", "Café  Ltd", "Café Ltd.", "Straße GmbH", "Strasse GmbH"]) {
        expect((await orgs.create({ name }, "alice")).name).toBe(name);
      }
      expect(await orgs.sharingNames()).toEqual([]);
    });

    test("creates of one name racing on two connections (two processes, or two nodes): exactly one wins, the others are refused naming it", async () => {
      const [a, b] = await engine.openPair();
      const sides = [createOrganisations({ store: a, signer, clock }), createOrganisations({ store: b, signer, clock })];
      const names = ["Race Ltd", "RACE LTD", "race ltd", "Race\u00a0Ltd", "Ｒａｃｅ Ｌｔｄ", "Race Ltd", "rACE lTD", "Race Ltd"];
      const outcomes = await Promise.allSettled(names.map((name, i) => sides[i % 2]!.create({ name }, `racer ${i}`)));
      const won = outcomes.filter((o): o is PromiseFulfilledResult<Organisation> => o.status === "fulfilled").map((o) => o.value);
      expect(won).toHaveLength(1);
      for (const o of outcomes) {
        if (o.status === "rejected") expect(o.reason).toMatchObject({ code: "VALIDATION_FAILED", holder: { id: won[0]!.id } });
      }
      const listed = await sides[0]!.list();
      expect(listed.filter((o) => o.name.normalize("NFKC").toLowerCase() === "race ltd").map((o) => o.id)).toEqual([won[0]!.id]);
      const audited = (await listAudit(a, 10_000)).filter((r) => r.action === "organisation.create" && r.actor.startsWith("racer "));
      expect(audited.map((r) => r.subjectId)).toEqual([won[0]!.id]);
    });

    test("rename (set name): to a name another holds is refused, nothing changed; to its own name in another case, or a free one, renamed, audited, announced again once", async () => {
      const org = await orgs.create({ name: "Rename Me Ltd" }, "alice");
      const generation = await generationOf(store, org.id);

      const before = await snapshot(store);
      const refused = await orgs.set(org.id, { name: "CAFE\u0301 LTD", validated: true }, "bob").catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(NameTakenError);
      expect(refused).toMatchObject({ holder: { id: cafe.id } });
      expect(await snapshot(store)).toEqual(before);

      const cased = await orgs.set(org.id, { name: "RENAME ME LTD" }, "bob");
      expect(cased.name).toBe("RENAME ME LTD");
      expect(await generationOf(store, org.id)).toBe(generation + 1);

      const renamed = await orgs.set(org.id, { name: "  Renamed Ltd  " }, "carol");
      expect(renamed).toEqual({ ...org, name: "Renamed Ltd" });
      expect(await orgs.get(org.id)).toEqual(renamed);
      expect(await generationOf(store, org.id)).toBe(generation + 2);
      const [last] = await listAudit(store, 1);
      expect(last).toMatchObject({ actor: "carol", action: "organisation.set", subjectId: org.id });
      expect([JSON.parse(last!.before!).name, JSON.parse(last!.after!).name]).toEqual(["RENAME ME LTD", "Renamed Ltd"]);

      // The same name again, or a flag alone, is no rename: nothing announced again.
      await orgs.set(org.id, { name: "Renamed Ltd", apiAccess: true }, "carol");
      expect(await generationOf(store, org.id)).toBe(generation + 2);
      // The old name is free again; the new one is taken.
      expect((await orgs.create({ name: "rename me ltd" }, "alice")).name).toBe("rename me ltd");
      await expect(orgs.create({ name: "RENAMED LTD" }, "alice")).rejects.toMatchObject({ holder: { id: org.id } });
      // A refused name is refused before anything else is looked at; an empty one as any bad name.
      await expect(orgs.set(org.id, { name: "   " }, "carol")).rejects.toMatchObject({ code: "VALIDATION_FAILED", details: { name: "must not be empty" } });
    });
  });
}

describe("PostgreSQL: a database of the release before name keys (migration 0007) holding one name twice", () => {
  /** Applies the first `n` migrations only, as the release that had them did. */
  async function migrateTo(store: PostgresStore, n: number): Promise<void> {
    await store.db.transaction(async (tx) => {
      await tx.execute(sql`CREATE SCHEMA IF NOT EXISTS drizzle`);
      await tx.execute(sql`CREATE TABLE IF NOT EXISTS drizzle.__drizzle_migrations (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`);
      for (const m of embeddedPgMigrations().slice(0, n)) {
        for (const statement of m.sql) if (statement.trim() !== "") await tx.execute(sql.raw(statement));
        await tx.execute(sql`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES (${m.hash}, ${m.folderMillis})`);
      }
    });
  }

  test("two nodes starting at once migrate it: every organisation kept as it was, the later of a name given a key of its own, reported as sharing it; the name is then refused", async () => {
    const url = await pg().createDatabase("names");
    const [a, b] = [postgresStore(url), postgresStore(url)];
    opened.push(a, b);
    const all = embeddedPgMigrations().length;
    await migrateTo(a, all - 1);
    // Organisations as that release wrote them (its columns): "Twin Ltd" twice, once more in
    // another case, and one other.
    const rows: { id: string; name: string }[] = [];
    for (const [i, name] of ["Twin Ltd", "Other Ltd", "Twin Ltd", "TWIN LTD"].entries()) {
      const id = Bun.randomUUIDv7();
      const key = signer.generateKey(`org:${id}`);
      const fp = Buffer.from(key.fingerprint);
      await a.client`INSERT INTO signing_keys (fingerprint, algorithm, public_key, purpose, sealed_seed, created_at)
        VALUES (${fp}, ${key.algorithm}, ${Buffer.from(key.publicKey)}, ${key.purpose}, ${Buffer.from(key.sealedSeed)}, ${1000 + i})`;
      await a.client`INSERT INTO organisations (id, name, created_at, system_key_fingerprint) VALUES (${id}, ${name}, ${1000 + i}, ${fp})`;
      rows.push({ id, name });
    }
    const before = await a.client`SELECT id, name, api_access, addon, validated, suspended, created_at, domain, announcement_generation FROM organisations ORDER BY id`;

    expect((await Promise.all([migratePostgres(a), migratePostgres(b)])).map((r) => r.applied).sort()).toEqual([0, 1]);
    expect(await a.client`SELECT id, name, api_access, addon, validated, suspended, created_at, domain, announcement_generation FROM organisations ORDER BY id`).toEqual(before);
    const keys = Object.fromEntries(((await a.client`SELECT id, name_key FROM organisations`) as { id: string; name_key: string }[]).map((r) => [r.id, r.name_key]));
    expect(keys).toEqual({
      [rows[0]!.id]: "twin ltd",
      [rows[1]!.id]: "other ltd",
      [rows[2]!.id]: `twin ltd#${rows[2]!.id}`,
      [rows[3]!.id]: `twin ltd#${rows[3]!.id}`,
    });

    const orgs = createOrganisations({ store: a, signer, clock: manualClock(2000) });
    expect(await orgs.sharingNames()).toEqual([
      {
        name: "Twin Ltd",
        organisations: [
          { id: rows[0]!.id, name: "Twin Ltd", createdAt: 1000 },
          { id: rows[2]!.id, name: "Twin Ltd", createdAt: 1002 },
          { id: rows[3]!.id, name: "TWIN LTD", createdAt: 1003 },
        ],
      },
    ]);
    await expect(orgs.create({ name: "twin ltd" }, "alice")).rejects.toMatchObject({ holder: { id: rows[0]!.id } });
    // Renaming the later ones ends it; the first keeps the name.
    await orgs.set(rows[2]!.id, { name: "Twin Ltd (North)" }, "alice");
    await expect(orgs.set(rows[3]!.id, { name: "Twin Ltd" }, "alice")).rejects.toMatchObject({ holder: { id: rows[0]!.id } });
    await orgs.set(rows[3]!.id, { name: "Twin Ltd (South)" }, "alice");
    expect(await orgs.sharingNames()).toEqual([]);
    // A start after that finds nothing to fill.
    expect(await migratePostgres(b)).toEqual({ applied: 0 });
    expect(((await a.client`SELECT count(*)::int AS n FROM organisations WHERE name_key LIKE '%#%'`) as [{ n: number }])[0].n).toBe(0);
  }, 60_000);
});
