/**
 * One contract suite, run against every storage engine (docs/storage.md "Two engines"; Litestream's
 * habit of one suite per interface): embedded SQLite, and a real PostgreSQL server the run shares
 * (test/support/postgres.ts). What is written once over the store (src/storage/store.ts) must
 * behave the same on both: the same results, the same errors, all-or-nothing writes, and the audit
 * row in the same transaction as its change.
 */
import { DEFAULT_BATCH_POLICY } from "../../src/anchoring/journal/rules.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createSigner } from "../../src/crypto/index.ts";
import { createApiKeys } from "../../src/keys/api-keys.ts";
import { keysDrivers, logDrivers, recordsDrivers } from "../support/drivers.ts";
import { createCredentials } from "../../src/keys/credentials.ts";
import type { RecordLedger } from "../../src/records/ledger.ts";
import { createRecords } from "../../src/records/service.ts";
import { createWriteQueue } from "../../src/records/write-queue.ts";
import { ensureSealKeyIn } from "../../src/records/seal-key.ts";
import { createIdentity } from "../../src/receipts/identity.ts";
import { createIdGenerator } from "../../src/verification/log/ids.ts";
import { createLogRetention } from "../../src/verification/retention.ts";
import { createLogger } from "../../src/lib/log.ts";
import { listAudit } from "../../src/keys/audit.ts";
import { createOrganisations } from "../../src/keys/organisations.ts";
import { createEnrolments, createPersons, tokenDigest } from "../../src/persons/persons.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { DomainError } from "../../src/lib/errors.ts";
import { embeddedPgMigrations, migratePostgres } from "../../src/storage/pg-migrate.ts";
import { postgresStore, type PostgresStore } from "../../src/storage/pg-store.ts";
import { q, type Store } from "../../src/storage/store.ts";
import { eq } from "drizzle-orm";
import { expectMigrationsInStep } from "../support/drizzle-kit.ts";
import { cleanup } from "../support/env.ts";
import { sharedPostgres, type Postgres } from "../support/postgres.ts";
import { storeEngines, type StoreEngine } from "../support/store-engines.ts";

let pg: Postgres;
beforeAll(async () => {
  pg = await sharedPostgres();
}, 120_000);
afterAll(async () => {
  await pg?.destroy();
  cleanup();
});

const MASTER_KEY = new Uint8Array(32).fill(9);

type Engine = StoreEngine;

const opened: Store[] = [];
afterAll(async () => {
  for (const s of opened) await s.close();
});

const ENGINES: Engine[] = storeEngines(() => pg, opened);

for (const engine of ENGINES) {
  describe(`${engine.name}: organisations, API keys and the audit trail`, () => {
    let store: Store;
    const clock = manualClock(Date.UTC(2026, 10, 24, 12));
    const signer = createSigner({ masterKey: MASTER_KEY, workers: 0 });
    let orgs: ReturnType<typeof createOrganisations>;
    let keys: ReturnType<typeof createApiKeys>;
    beforeAll(async () => {
      store = await engine.open();
      orgs = createOrganisations({ store, signer, clock });
      keys = createApiKeys({ store, clock });
    });

    test("an organisation is created, read back, listed in creation order, and changed", async () => {
      const a = await orgs.create({ name: "Acme Ltd", addon: true }, "alice");
      clock.advance(1);
      const b = await orgs.create({ name: "  Beta  " }, "alice");
      expect(a).toMatchObject({ name: "Acme Ltd", apiAccess: false, addon: true, validated: false, suspended: false, topicId: null, createdAt: clock.now() - 1 });
      expect(b.name).toBe("Beta");
      expect(await orgs.get(a.id)).toEqual(a);
      const listed = await orgs.list();
      expect(listed.map((o) => o.id)).toEqual([a.id, b.id]);
      const changed = await orgs.set(a.id, { validated: true, suspended: true }, "bob");
      expect(changed).toEqual({ ...a, validated: true, suspended: true });
      expect(await orgs.get(a.id)).toEqual(changed);
    });

    test("an unknown organisation is NOT_FOUND, and a bad name is refused before anything is written", async () => {
      await expect(orgs.get("nope")).rejects.toMatchObject({ code: "NOT_FOUND" });
      await expect(orgs.set("nope", { addon: true }, "bob")).rejects.toMatchObject({ code: "NOT_FOUND" });
      const before = (await orgs.list()).length;
      const auditBefore = (await listAudit(store, 1000)).length;
      await expect(orgs.create({ name: "   " }, "bob")).rejects.toBeInstanceOf(DomainError);
      await expect(orgs.create({ name: "a\u0000b" }, "bob")).rejects.toMatchObject({ code: "VALIDATION_FAILED" });
      expect((await orgs.list()).length).toBe(before);
      expect((await listAudit(store, 1000)).length).toBe(auditBefore);
    });

    test("keys: minted with the scopes of the organisation's state, listed, revoked once", async () => {
      const org = await orgs.create({ name: "Keys Org", addon: true }, "alice");
      const live = await keys.mint({ orgId: org.id, environment: "live", revoke: true }, "alice");
      const test_ = await keys.mint({ orgId: org.id, environment: "test" }, "alice");
      expect(live.scopes).toEqual(["verifications:read", "records:write", "records:revoke"]);
      expect(test_.scopes).toEqual(["verifications:read"]);
      expect(live.key.startsWith("dv_live_")).toBe(true);
      const listed = await keys.list({ orgId: org.id });
      expect(listed.map((k) => k.keyId)).toEqual([live.keyId, test_.keyId]);
      expect(JSON.stringify(listed)).not.toContain(live.key);
      const revoked = await keys.revoke(live.keyId, "bob");
      expect(revoked.revokedAt).toBe(clock.now());
      await expect(keys.revoke(live.keyId, "bob")).rejects.toMatchObject({ code: "VALIDATION_FAILED" });
      await expect(keys.revoke("k_nope", "bob")).rejects.toMatchObject({ code: "NOT_FOUND" });
      await expect(keys.mint({ orgId: "nope", environment: "live" }, "bob")).rejects.toMatchObject({ code: "NOT_FOUND" });
      await expect(keys.mint({ orgId: org.id, environment: "test", revoke: true }, "bob")).rejects.toMatchObject({ code: "VALIDATION_FAILED" });
      expect((await keys.list({ orgId: org.id })).length).toBe(2);
    });

    test("every change wrote its audit row, newest first, with before and after", async () => {
      const org = await orgs.create({ name: "Audited" }, "carol");
      await orgs.set(org.id, { apiAccess: true }, "dave");
      const [last, previous] = await listAudit(store, 2);
      expect(last).toMatchObject({ actor: "dave", action: "organisation.set", subjectType: "organisation", subjectId: org.id });
      expect(JSON.parse(last!.before!)).toMatchObject({ apiAccess: false });
      expect(JSON.parse(last!.after!)).toMatchObject({ apiAccess: true });
      expect(previous).toMatchObject({ actor: "carol", action: "organisation.create", before: null });
      expect(last!.id).toBeGreaterThan(previous!.id);
    });

    test("a write is all or nothing: a failure after the first statement leaves nothing", async () => {
      const org = await orgs.create({ name: "Rollback" }, "erin");
      await expect(
        store.write(function* (tx, t) {
          yield* q(tx.update(t.organisations).set({ name: "changed" }).where(eq(t.organisations.id, org.id)));
          throw new Error("boom");
        }),
      ).rejects.toThrow("boom");
      expect((await orgs.get(org.id)).name).toBe("Rollback");
      // A constraint failing on the second statement undoes the first as well.
      await expect(
        store.write(function* (tx, t) {
          yield* q(tx.update(t.organisations).set({ name: "changed" }).where(eq(t.organisations.id, org.id)));
          yield* q(tx.insert(t.serviceMeta).values([{ key: "dup", value: "1" }, { key: "dup", value: "2" }]));
        }),
      ).rejects.toThrow();
      expect((await orgs.get(org.id)).name).toBe("Rollback");
    });

    test("an error a query raises reaches the operation, which may handle it and go on", async () => {
      const got = await store.write(function* (tx, t) {
        yield* q(tx.insert(t.serviceMeta).values({ key: "once", value: "1" }));
        return "first";
      });
      expect(got).toBe("first");
      const read = await store.read(function* (db, t) {
        try {
          yield* q(db.select().from(t.serviceMeta).where(eq(t.serviceMeta.key, "once")));
        } catch {
          return "unexpected";
        }
        const rows = yield* q(db.select().from(t.serviceMeta).where(eq(t.serviceMeta.key, "once")));
        return rows[0]!.value;
      });
      expect(read).toBe("1");
      // `.returning()` is how an operation learns which rows a change touched, on both engines.
      const touched = await store.write(function* (tx, t) {
        return yield* q(tx.update(t.serviceMeta).set({ value: "2" }).where(eq(t.serviceMeta.key, "once")).returning({ key: t.serviceMeta.key }));
      });
      expect(touched).toEqual([{ key: "once" }]);
    });

    test("the audit log is append-only on this engine too", async () => {
      await expect(
        store.write(function* (tx, t) {
          yield* q(tx.update(t.auditLog).set({ actor: "mallory" }));
        }),
      ).rejects.toThrow(/append-only/);
      await expect(
        store.write(function* (tx, t) {
          yield* q(tx.delete(t.auditLog));
        }),
      ).rejects.toThrow(/append-only/);
    });

    test("binary columns and times in ms come back as written", async () => {
      const org = await orgs.create({ name: "Bytes" }, "frank");
      const [row] = await store.read(function* (db, t) {
        return yield* q(db.select().from(t.signingKeys).innerJoin(t.organisations, eq(t.organisations.systemKeyFingerprint, t.signingKeys.fingerprint)).where(eq(t.organisations.id, org.id)));
      });
      expect(Buffer.isBuffer(row!.signing_keys.fingerprint)).toBe(true);
      expect(row!.signing_keys.fingerprint.length).toBe(32);
      expect(row!.signing_keys.publicKey.length).toBeGreaterThan(1000);
      expect(typeof row!.signing_keys.createdAt).toBe("number");
      expect(row!.signing_keys.createdAt).toBe(org.createdAt);
      expect(row!.organisations.createdAt).toBeGreaterThan(2 ** 32);
    });

    test("persons: added with their first link, listed, a new link replaces the unused one, suspended once", async () => {
      const persons = createPersons({ store, clock, publicUrl: "https://verify.example.org" });
      const org = await orgs.create({ name: "Persons Org" }, "alice");
      const { person, link } = await persons.add({ orgId: org.id, name: "Ada Lovelace", email: "ada@example.org", identity: "Passport …4821, seen by J. Smith" }, "alice");
      expect(person).toMatchObject({ orgId: org.id, name: "Ada Lovelace", suspended: false, keyFingerprint: null, enrolledAt: null });
      expect(link.enrolUrl).toMatch(/^https:\/\/verify\.example\.org\/enrol\/[A-Za-z0-9_-]{43}$/);
      expect(await persons.get(person.id)).toEqual(person);
      expect((await persons.list({ orgId: org.id })).map((p) => p.id)).toEqual([person.id]);
      await expect(persons.list({ orgId: "nope" })).rejects.toMatchObject({ code: "NOT_FOUND" });
      clock.advance(1000);
      const second = await persons.issueLink(person.id, "bob");
      // Only digests are stored; the first link ended when the second was issued.
      const rows = await store.read(function* (db, t) {
        return yield* q(db.select().from(t.enrolments).where(eq(t.enrolments.personId, person.id)));
      });
      const token = (url: string) => url.split("/").pop()!;
      const byDigest = new Map(rows.map((r) => [r.tokenDigest.toString("hex"), r]));
      expect(byDigest.get(tokenDigest(token(link.enrolUrl)).toString("hex"))!.expiresAt).toBe(clock.now());
      expect(byDigest.get(tokenDigest(token(second.enrolUrl)).toString("hex"))!.expiresAt).toBe(second.expiresAt);
      expect(JSON.stringify(rows.map((r) => ({ ...r, tokenDigest: r.tokenDigest.toString("hex") })))).not.toContain(token(second.enrolUrl));
      // The enrolment link as the person application uses it: peeked at, redeemed once.
      const enrolments = createEnrolments({ store, clock });
      const peeked = await enrolments.peekEnrolment(token(second.enrolUrl));
      expect(peeked).toEqual({ person, organisation: { id: org.id, name: "Persons Org" } });
      await expect(enrolments.peekEnrolment(token(link.enrolUrl))).rejects.toMatchObject({ reason: "expired" });
      const twice = await Promise.allSettled([enrolments.redeemEnrolment(token(second.enrolUrl), clock.now()), enrolments.redeemEnrolment(token(second.enrolUrl), clock.now())]);
      expect(twice.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      expect(twice.find((r) => r.status === "rejected")).toMatchObject({ reason: { reason: "used" } });
      const suspended = await persons.suspend(person.id, "bob");
      expect(suspended.suspended).toBe(true);
      const auditCount = (await listAudit(store, 10_000)).length;
      expect(await persons.suspend(person.id, "bob")).toEqual(suspended);
      expect((await listAudit(store, 10_000)).length).toBe(auditCount);
      await expect(persons.issueLink(person.id, "bob")).rejects.toMatchObject({ code: "FORBIDDEN" });
      await expect(persons.add({ orgId: org.id, name: "Bad", email: "no-at-sign", identity: "x" }, "bob")).rejects.toMatchObject({ code: "VALIDATION_FAILED" });
      await expect(persons.add({ orgId: "nope", name: "Nobody", email: "n@example.org", identity: "x" }, "bob")).rejects.toMatchObject({ code: "NOT_FOUND" });
      const actions = (await listAudit(store, 10_000)).filter((a) => a.subjectId === person.id).map((a) => a.action);
      expect(actions).toEqual(["person.suspend", "person.link", "person.link", "person.add"]);
    });

    test("API keys: a key revoked on one node is refused by the other at its next request; last use recorded", async () => {
      const [one, two] = await engine.openPair();
      const admin = { orgs: createOrganisations({ store: one, signer, clock }), keys: createApiKeys({ store: one, clock }) };
      const org = await admin.orgs.create({ name: "Cross-node", apiAccess: true, validated: true }, "alice");
      const minted = await admin.keys.mint({ orgId: org.id, environment: "live" }, "alice");
      const log = createLogger({ level: "error", write: () => {} });
      const nodeA = createCredentials({ ...keysDrivers(one), clock, log });
      const nodeB = createCredentials({ ...keysDrivers(two), clock, log });
      const expected = { keyId: minted.keyId, environment: "live", scopes: ["verifications:read"], org: { id: org.id, name: "Cross-node", apiAccess: true, validated: true, suspended: false, createdAt: org.createdAt, topicId: null } };
      expect(await nodeA.authenticateAsync(minted.key)).toMatchObject(expected);
      expect(await nodeB.authenticateAsync(minted.key)).toMatchObject(expected);
      // Every unusable key is null, on this engine too.
      const wrongSecret = minted.key.slice(0, 20) + (minted.key[20] === "A" ? "B" : "A") + minted.key.slice(21);
      for (const bad of ["", "dv_live_nope", wrongSecret]) expect(await nodeB.authenticateAsync(bad)).toBeNull();
      expect(await nodeB.authenticateAsync(minted.key)).not.toBeNull(); // still kept after refusals of others
      // A change of the organisation on one node is seen by the other at once.
      await admin.orgs.set(org.id, { suspended: true }, "bob");
      expect((await nodeB.authenticateAsync(minted.key))!.org.suspended).toBe(true);
      await admin.keys.revoke(minted.keyId, "bob");
      expect(await nodeB.authenticateAsync(minted.key)).toBeNull();
      expect(await nodeA.authenticateAsync(minted.key)).toBeNull();
      // Last use: written in one batch, at most once a minute per key.
      await nodeB.close();
      await nodeA.close();
      const [row] = await one.read(function* (db, t) {
        return yield* q(db.select({ lastUsedAt: t.apiKeys.lastUsedAt }).from(t.apiKeys).where(eq(t.apiKeys.keyId, minted.keyId)));
      });
      expect(row!.lastUsedAt).toBe(clock.now());
    });

    test("records: one per organisation and hash, its creation message in the same transaction; concurrent creates give one; revocation once anchored", async () => {
      const org = await orgs.create({ name: "Records Org", addon: true, apiAccess: true }, "alice");
      await store.write((tx, t) => q(tx.update(t.organisations).set({ topicId: "0.0.1234" }).where(eq(t.organisations.id, org.id))));
      let issued = 0;
      const ledger: RecordLedger = {
        newTransactionId: () => ({ transactionId: `0.0.2@1768469400.${String(++issued).padStart(9, "0")}`, validStartMs: 1_768_469_400_000, validSeconds: 120 }),
        wake() {},
        assertCapacity() {},
        batches: DEFAULT_BATCH_POLICY,
        transactionUrl: (id) => `https://hashscan.example/tx/${id}`,
        topicMessageUrl: (topic, n) => `https://mirror.example/${topic}/${n}`,
      };
      // As serve writes them: SQLite's group commit; on PostgreSQL READ COMMITTED (storage/drivers.ts),
      // where the writes' own guards (the unique index, "only while not revoked") keep them right.
      const recs = createRecords({ store, signer, clock, ledger, publicUrl: "https://verify.example.org", writes: createWriteQueue(recordsDrivers(store).writes) });
      const hash = (c: string) => `sha256:${c.repeat(64)}`;
      const first = await recs.create(org.id, { docHash: hash("a"), filename: undefined });
      expect(first).toMatchObject({ created: true, record: { originalDocHash: hash("a"), anchorState: "pending", anchor: { topicId: "0.0.1234", transactionId: "0.0.2@1768469400.000000001" } } });
      const again = await recs.create(org.id, { docHash: hash("a"), filename: "ignored.pdf" });
      expect(again).toEqual({ created: false, record: first.record });
      // Eight at once for a new hash: exactly one record, one message.
      const racing = await Promise.all(Array.from({ length: 8 }, () => recs.create(org.id, { docHash: hash("b"), filename: undefined })));
      expect(racing.filter((r) => r.created)).toHaveLength(1);
      expect(new Set(racing.map((r) => r.record.recordId)).size).toBe(1);
      const journal = await store.read((db, t) => q(db.select({ kind: t.ledgerTransactions.kind, recordId: t.ledgerTransactions.recordId, state: t.ledgerTransactions.state }).from(t.ledgerTransactions).where(eq(t.ledgerTransactions.orgId, org.id))));
      expect(journal.map((j) => [j.kind, j.recordId, j.state]).sort()).toEqual(
        [
          ["record_message", first.record.recordId, "pending"],
          ["record_message", racing[0]!.record.recordId, "pending"],
        ].sort(),
      );
      // Revocation: refused until anchored, then once.
      await expect(recs.revoke(org.id, first.record.recordId, "SUPERSEDED")).rejects.toMatchObject({ code: "ANCHOR_NOT_FINAL" });
      await expect(recs.revoke("another-org", first.record.recordId, "SUPERSEDED")).rejects.toMatchObject({ code: "NOT_REVOCABLE" });
      await expect(recs.revoke(org.id, "01a2101e-e342-7772-9429-23ccef3a2acd", "SUPERSEDED")).rejects.toMatchObject({ code: "NOT_FOUND" });
      await store.write((tx, t) =>
        q(tx.update(t.records).set({ anchorState: "anchored", sequenceNumber: 7, consensusAt: "1768469403.420000000" }).where(eq(t.records.id, first.record.recordId))),
      );
      // Six at once: one revokes, the others find it revoked.
      const revoking = await Promise.allSettled(Array.from({ length: 6 }, () => recs.revoke(org.id, first.record.recordId, "SUPERSEDED")));
      expect(revoking.filter((r) => r.status === "fulfilled").map((r) => (r as PromiseFulfilledResult<unknown>).value)).toEqual([{ recordId: first.record.recordId }]);
      for (const r of revoking.filter((r) => r.status === "rejected")) expect((r as PromiseRejectedResult).reason).toMatchObject({ code: "ALREADY_REVOKED" });
      await expect(recs.revoke(org.id, first.record.recordId, "SUPERSEDED")).rejects.toMatchObject({ code: "ALREADY_REVOKED" });
      const shown = await recs.publicRecord(first.record.recordId);
      expect(shown).toMatchObject({
        recordId: first.record.recordId,
        signerType: "org",
        organisationName: "Records Org",
        organisationSuspended: false,
        anchorState: "anchored",
        anchor: { sequenceNumber: 7, consensusAt: "2026-01-15T09:30:03.420000000Z", mirrorNodeUrl: "https://mirror.example/0.0.1234/7" },
        revocation: { reason: "SUPERSEDED" },
      });
      const revocations = await store.read((db, t) => q(db.select({ kind: t.ledgerTransactions.kind }).from(t.ledgerTransactions).where(eq(t.ledgerTransactions.kind, "revocation_message"))));
      expect(revocations).toHaveLength(1);
      // Revoked, the hash can be authenticated again as a new record.
      const renewed = await recs.create(org.id, { docHash: hash("a"), filename: undefined });
      expect(renewed.created).toBe(true);
      expect(renewed.record.recordId).not.toBe(first.record.recordId);
      // A suspended organisation cannot create.
      await orgs.set(org.id, { suspended: true }, "bob");
      await expect(recs.create(org.id, { docHash: hash("c"), filename: undefined })).rejects.toMatchObject({ code: "ORGANISATION_SUSPENDED" });
    });

    test("the verification log's retention deletes the rows older than the cutoff, oldest first, in batches", async () => {
      const org = await orgs.create({ name: "Log Org" }, "alice");
      const at = manualClock(Date.UTC(2025, 0, 1));
      const ids = createIdGenerator(at);
      const row = (verifiedAtMs: number) => ({ id: ids().id, orgId: org.id, environment: "live" as const, keyId: "k1", verdict: "verified_org", docHash: `sha256:${"c".repeat(64)}`, reference: null, verifiedAtMs, retryAfterSeconds: null });
      const old: ReturnType<typeof row>[] = [];
      for (let i = 0; i < 5; i++) {
        old.push(row(at.now()));
        at.advance(1000);
      }
      at.set(Date.UTC(2026, 10, 20));
      const recent = [row(at.now()), row(at.now())];
      await store.write((tx, t) => q(tx.insert(t.verifications).values([...old, ...recent])));
      const now = manualClock(Date.UTC(2026, 10, 25));
      const retention = createLogRetention({ store: logDrivers(store).log, clock: now, log: createLogger({ level: "error", write: () => {} }), days: 400, batchRows: 2, batchPauseMs: 0 });
      expect(await retention.sweep()).toBe(5);
      const left = await store.read((db, t) => q(db.select({ id: t.verifications.id }).from(t.verifications).where(eq(t.verifications.orgId, org.id))));
      expect(left.map((r) => r.id).sort()).toEqual(recent.map((r) => r.id).sort());
      expect(await retention.sweep()).toBe(0);
    });

    test("the identity document: organisations with a topic by the bytes of their names, their keys, the seal key", async () => {
      const fresh = await engine.open();
      const o = createOrganisations({ store: fresh, signer, clock });
      const made = [];
      for (const name of ["alpha", "Ärzte", "Zeta", "No topic"]) made.push(await o.create({ name }, "alice"));
      for (const [i, org] of made.slice(0, 3).entries()) {
        await fresh.write((tx, t) => q(tx.update(t.organisations).set({ topicId: `0.0.${5000 + i}` }).where(eq(t.organisations.id, org.id))));
      }
      const seal = await ensureSealKeyIn({ store: fresh, signer, clock });
      const doc = await createIdentity({ store: fresh, network: "testnet", publicUrl: () => "https://verify.example.org/" }).identity();
      // UTF-8 byte order, the same on both engines: "Z" (0x5A) < "a" (0x61) < "Ä" (0xC3 0x84).
      expect(doc.organisations.map((x) => x.name)).toEqual(["Zeta", "alpha", "Ärzte"]);
      expect(doc.service).toBe("https://verify.example.org");
      for (const entry of doc.organisations) {
        const org = made.find((m) => m.id === entry.orgId)!;
        const [row] = await fresh.read((db, t) => q(db.select({ f: t.organisations.systemKeyFingerprint }).from(t.organisations).where(eq(t.organisations.id, org.id))));
        expect(entry.keys).toEqual([{ algorithm: "ML-DSA-65", fingerprint: row!.f.toString("hex"), announcedAt: null, sequenceNumber: null }]);
        expect(entry.network).toBe("testnet");
      }
      expect(doc.sealKeys).toEqual([{ algorithm: seal.algorithm, fingerprint: Buffer.from(seal.fingerprint).toString("hex") }]);
    });

    if (engine.name === "SQLite") {
      // PostgreSQL awaits whatever it is given; SQLite must know how to run it synchronously.
      test("an operation that yields something that is not a query is refused", async () => {
        await expect(
          store.read(function* () {
            yield Promise.resolve(1);
          }),
        ).rejects.toThrow(/select, insert, update or delete/);
      });
    }

    test("concurrent read-then-write changes of one row all land, each as if alone", async () => {
      const org = await orgs.create({ name: "Contended" }, "gina");
      const auditBefore = (await listAudit(store, 10_000)).length;
      // On PostgreSQL these overlap and conflict (SERIALIZABLE); the store runs the losers again.
      const flips = await Promise.all(Array.from({ length: 16 }, (_, i) => orgs.set(org.id, { validated: i % 2 === 0 }, `admin-${i}`)));
      expect(flips.length).toBe(16);
      const audit = (await listAudit(store, 10_000)).slice(0, (await listAudit(store, 10_000)).length - auditBefore);
      expect(audit.length).toBe(16);
      // Each audit row's "before" is the state the previous change left: no change was lost.
      const chain = [...audit].reverse().map((a) => [JSON.parse(a.before!).validated, JSON.parse(a.after!).validated]);
      for (let i = 1; i < chain.length; i++) expect(chain[i]![0]).toBe(chain[i - 1]![1]);
      expect((await orgs.get(org.id)).validated).toBe(chain.at(-1)![1]);
    });
  });
}

describe("PostgreSQL: migrations", () => {
  test("pg-schema.ts and migrations/pg are in step: drizzle-kit generate finds nothing to do", () => {
    expectMigrationsInStep("postgresql", "./src/storage/pg-schema.ts", "migrations/pg");
  }, 60_000);

  test("a new database gets every migration once; running again applies nothing", async () => {
    const store = postgresStore(await pg.createDatabase());
    opened.push(store);
    expect(await migratePostgres(store)).toEqual({ applied: embeddedPgMigrations().length });
    expect(await migratePostgres(store)).toEqual({ applied: 0 });
    const rows = (await store.client`SELECT hash FROM drizzle.__drizzle_migrations ORDER BY id`) as { hash: string }[];
    expect(rows.map((r) => r.hash)).toEqual(embeddedPgMigrations().map((m) => m.hash));
    const tables = (await store.client`SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`) as { tablename: string }[];
    expect(tables.map((t) => t.tablename)).toContain("records");
    const [counter] = (await store.client`SELECT value FROM change_counter WHERE id = 1`) as { value: string }[];
    expect(Number(counter!.value)).toBe(0);
  });

  test("three nodes starting at once: one migrates, the others find it done", async () => {
    const url = await pg.createDatabase();
    const stores: PostgresStore[] = [postgresStore(url), postgresStore(url), postgresStore(url)];
    opened.push(...stores);
    const results = await Promise.all(stores.map((s) => migratePostgres(s)));
    expect(results.map((r) => r.applied).sort()).toEqual([0, 0, embeddedPgMigrations().length]);
  });

  test("a database written by a newer docverify is refused, and nothing is run", async () => {
    const store = postgresStore(await pg.createDatabase());
    opened.push(store);
    await migratePostgres(store);
    await store.client`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ('from-the-future', 9999999999999)`;
    await expect(migratePostgres(store)).rejects.toThrow(/newer docverify/);
  });

  test("a change to what the service caches raises the change counter in the same transaction", async () => {
    const store = postgresStore(await pg.createDatabase());
    opened.push(store);
    await migratePostgres(store);
    const orgs = createOrganisations({ store, signer: createSigner({ masterKey: MASTER_KEY, workers: 0 }), clock: manualClock() });
    const counter = async () => Number(((await store.client`SELECT value FROM change_counter WHERE id = 1`) as { value: string }[])[0]!.value);
    const org = await orgs.create({ name: "Counted" }, "x");
    const before = await counter();
    await orgs.set(org.id, { suspended: true }, "x");
    expect(await counter()).toBe(before + 1);
  });
});
