/**
 * An organisation's key rotation and declared compromise (src/keys/org-keys.ts), and what the
 * anchor journal does about them (the `Journal` port: the new key's announcement is queued only
 * once every record message of an older key has settled), on both storage engines. No ledger: a
 * database and a manual clock; the journal's changes are made by hand as the loop would make them.
 */
import { describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { DEFAULT_BATCH_POLICY, journalRules } from "../../src/anchoring/journal/rules.ts";
import type { Journal, LedgerTransactionRow } from "../../src/anchoring/journal/ports.ts";
import { pendingMessage } from "../../src/anchoring/queue.ts";
import { createTransactionIds } from "../../src/anchoring/transaction-ids.ts";
import { createSigner } from "../../src/crypto/index.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { KeyLifecycleRefused } from "../../src/keys/org-keys.ts";
import { createKeyAnnouncements } from "../../src/records/announcements.ts";
import { decodeLedgerMessage } from "../../src/records/messages.ts";
import { SEAL_KEY_META } from "../../src/records/seal-key.ts";
import { q } from "../../src/storage/store.ts";
import { closeBatchNow } from "../support/batches.ts";
import { journalDrivers } from "../support/drivers.ts";
import { createStoreRecordsFixture, docHashOf, TOPIC_ID as TOPIC } from "../support/records-fixture.ts";
import { useStoreEngines } from "../support/store-engines.ts";

/** Each test's databases are closed and dropped after it: a PostgreSQL server allows so many connections. */
const { engines: ENGINES } = useStoreEngines({ eachTest: true });
const signer = createSigner({ masterKey: new Uint8Array(32).fill(7), workers: 0 });
const CONFIRMED = { sequenceNumber: 1, consensusAt: "1767225600.000000123", runningHash: new Uint8Array(48).fill(9) };
const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

async function setup(engine: (typeof ENGINES)[number]) {
  const store = await engine.open();
  const clock = manualClock(Date.UTC(2026, 0, 1));
  const fixture = await createStoreRecordsFixture({ store, signer, clock });
  // The fixture's seal key is the installation's: announcements name the key records are sealed with.
  await store.write((tx, t) => q(tx.insert(t.serviceMeta).values({ key: SEAL_KEY_META, value: hex(fixture.seal.fingerprint) })));
  const ids = createTransactionIds({ clock, operator: "0.0.2", validSeconds: 30, backdateMs: 0, lastValidStartNs: 0n });
  if (store.engine === "postgres") await store.write((tx) => q(tx.execute(sql`UPDATE anchor_leader SET epoch = 1, node = 'test' WHERE id = 1`)));
  const journal: Journal = journalDrivers(store, { epoch: () => 1 }).journal(journalRules(clock, ids));
  const org = await fixture.createOrg(`Org ${Math.random()}`, { addon: true });
  const orgId = org.id;
  await store.write((tx, t) => q(tx.update(t.organisations).set({ topicId: TOPIC }).where(eq(t.organisations.id, orgId))));
  const announcementFor = createKeyAnnouncements({ keys: store as never, signer, clock });
  const rows = async () => (await store.read((db, t) => q(db.select().from(t.ledgerTransactions)))) as unknown as LedgerTransactionRow[];
  const row = async (id: string) => (await rows()).find((r) => r.transactionId === id)!;
  const keyRow = async (fp: Uint8Array | string) =>
    (await store.read((db, t) => q(db.select().from(t.signingKeys).where(eq(t.signingKeys.fingerprint, typeof fp === "string" ? Buffer.from(fp, "hex") : Buffer.from(fp))))))[0]!;
  const orgKey = async () => hex((await store.read((db, t) => q(db.select().from(t.organisations).where(eq(t.organisations.id, orgId)))))[0]!.systemKeyFingerprint);
  const audits = async () => (await store.read((db, t) => q(db.select().from(t.auditLog)))).filter((a) => a.subjectId === orgId).map((a) => a.action);

  /** The loop's provisioning pass: queue the announcement of every organisation that wants one. */
  async function provision(): Promise<LedgerTransactionRow[]> {
    const queued: LedgerTransactionRow[] = [];
    for (const id of await journal.organisationsWantingAnnouncement()) {
      const a = await announcementFor(id);
      const r = a === null ? null : await journal.queueAnnouncement(id, a);
      if (r !== null) queued.push(r);
    }
    return queued;
  }

  /**
   * A pending organisation record signed with `key` (hex), its message joining its organisation's
   * open batch for that key, as the records service writes them; then the batch closed, as the loop
   * closes it once its window has passed (one record a batch: each settles on its own here). The
   * batch's transaction id: what the record carries, and what goes to the ledger.
   */
  async function queueRecord(key: string): Promise<string> {
    const reserved = ids();
    const recordId = await fixture.addOrgRecord(org, { docHash: docHashOf(Bun.randomUUIDv7()), anchorState: "pending", transactionId: reserved.transactionId });
    const batchId = await store.write((tx, t) =>
      pendingMessage(tx, t, {
        kind: "record_message",
        ...reserved,
        orgId,
        recordId,
        topicId: TOPIC,
        message: new TextEncoder().encode(`{"v":1,"id":"${recordId}"}`),
        now: clock.now(),
        keyFingerprint: Buffer.from(key, "hex"),
        sealFingerprint: fixture.seal.fingerprint,
        batches: { policy: DEFAULT_BATCH_POLICY, newBatchId: ids },
      }),
    );
    await closeBatchNow(store, journal, batchId);
    return batchId;
  }

  const anchor = async (r: LedgerTransactionRow, sequenceNumber: number) => journal.grouped.toAnchoredMessage(await row(r.transactionId), { ...CONFIRMED, sequenceNumber });
  return { store, clock, fixture, journal, org, orgId, rows, row, keyRow, orgKey, audits, provision, queueRecord, anchor };
}

for (const engine of ENGINES) {
  describe(`key rotation on ${engine.name}`, () => {
    test("one change: a new key replacing the old, the old retired, the organisation switched, an audit line; its announcement names the old key", async () => {
      const { fixture, orgId, org, keyRow, orgKey, audits, provision, anchor, clock } = await setup(engine);
      const first = (await provision())[0]!;
      await anchor(first, 1);
      clock.advance(1000);
      const r = await fixture.orgs.rotateKey(orgId, "test");
      expect(r).toMatchObject({ orgId, replaces: hex(org.systemKey.fingerprint), at: clock.now() });
      expect(await orgKey()).toBe(r.keyFingerprint);
      expect(hex((await keyRow(r.keyFingerprint)).replaces!)).toBe(r.replaces);
      expect(await keyRow(r.keyFingerprint)).toMatchObject({ retiredAt: null, purpose: `org:${orgId}` });
      expect((await keyRow(r.replaces)).retiredAt).toBe(clock.now());
      expect(await audits()).toContain("organisation.key.rotate");
      const [announced] = await provision();
      expect(decodeLedgerMessage(announced!.message!)).toMatchObject({ type: "key", keyFingerprint: r.keyFingerprint, replaces: r.replaces });
      expect(await provision()).toEqual([]); // exactly once
    });

    test("the new key's announcement waits until every record message of the old key has settled, anchored or abandoned", async () => {
      const { fixture, orgId, org, journal, row, provision, queueRecord, anchor } = await setup(engine);
      await anchor((await provision())[0]!, 1);
      const old = hex(org.systemKey.fingerprint);
      const a = await queueRecord(old);
      const b = await queueRecord(old);
      const r = await fixture.orgs.rotateKey(orgId, "test");
      const c = await queueRecord(r.keyFingerprint); // signed with the new key at once
      expect(await journal.organisationsWantingAnnouncement()).toEqual([]);
      expect(await provision()).toEqual([]);
      // The old key's messages go (their key is announced); the new key's waits for its own announcement.
      expect((await journal.due(10, new Set())).map((x) => x.transactionId).sort()).toEqual([a, b].sort());
      await anchor(await row(a), 2);
      expect(await provision()).toEqual([]); // b is still unsettled
      await journal.grouped.toAccepted(await row(b), 1000);
      expect(await provision()).toEqual([]); // accepted is not settled
      await journal.abandon(await row(b), "did not reach consensus within its validity window");
      const [announced] = await provision();
      expect(announced).toBeDefined();
      expect((await journal.due(10, new Set())).map((x) => x.transactionId)).toEqual([announced!.transactionId]);
      await anchor(announced!, 3);
      expect((await journal.due(10, new Set())).map((x) => x.transactionId)).toEqual([c]);
    });

    test("a person's record messages never hold the organisation's announcement back", async () => {
      const { fixture, orgId, journal, provision, queueRecord, anchor } = await setup(engine);
      await anchor((await provision())[0]!, 1);
      const person = await fixture.createPerson();
      await queueRecord(hex(person.fingerprint));
      await fixture.orgs.rotateKey(orgId, "test");
      expect(await journal.organisationsWantingAnnouncement()).toEqual([orgId]);
      expect(await provision()).toHaveLength(1);
    });

    test("refused, nothing changed, while the previous rotation's announcement is not anchored; allowed again once it is", async () => {
      const { fixture, orgId, rows, orgKey, audits, provision, anchor } = await setup(engine);
      await anchor((await provision())[0]!, 1);
      const first = await fixture.orgs.rotateKey(orgId, "test");
      const before = { key: await orgKey(), audits: await audits() };
      await expect(fixture.orgs.rotateKey(orgId, "test")).rejects.toThrow(KeyLifecycleRefused);
      await expect(fixture.orgs.rotateKey(orgId, "test")).rejects.toThrow(/previous key rotation is still under way.*Nothing was changed/);
      const [queued] = await provision();
      await expect(fixture.orgs.rotateKey(orgId, "test")).rejects.toThrow(KeyLifecycleRefused); // queued, not anchored
      expect({ key: await orgKey(), audits: await audits() }).toEqual(before);
      expect(before.key).toBe(first.keyFingerprint);
      await anchor(queued!, 2);
      const second = await fixture.orgs.rotateKey(orgId, "test");
      expect(second.replaces).toBe(first.keyFingerprint);
      expect((await rows()).filter((r) => r.kind === "key_announcement")).toHaveLength(2);
    });

    test("refused, nothing changed, while its first key is not announced yet and record messages signed with it wait; allowed once it is", async () => {
      const { fixture, orgId, org, orgKey, audits, provision, queueRecord, anchor } = await setup(engine);
      await queueRecord(hex(org.systemKey.fingerprint));
      const before = { key: await orgKey(), audits: await audits() };
      // Only the current key is ever announced: replaced now, that message would wait for good.
      await expect(fixture.orgs.rotateKey(orgId, "test")).rejects.toThrow(/is not announced on the ledger yet, and record messages signed with it are waiting.*Nothing was changed/);
      await expect(fixture.orgs.declareKeyCompromised(orgId, { sinceMs: 0 }, "test")).rejects.toThrow(KeyLifecycleRefused);
      expect({ key: await orgKey(), audits: await audits() }).toEqual(before);
      await anchor((await provision())[0]!, 1);
      expect((await fixture.orgs.rotateKey(orgId, "test")).replaces).toBe(hex(org.systemKey.fingerprint));
    });

    test("a first key that signed nothing may be replaced before it is announced", async () => {
      const { fixture, orgId, org } = await setup(engine);
      expect((await fixture.orgs.rotateKey(orgId, "test")).replaces).toBe(hex(org.systemKey.fingerprint));
    });

    test("an organisation without a topic rotates freely (nothing announced, nothing waits); an unknown one is NOT_FOUND", async () => {
      const { fixture } = await setup(engine);
      const other = await fixture.createOrg(`Topicless ${Math.random()}`);
      const a = await fixture.orgs.rotateKey(other.id, "test");
      const b = await fixture.orgs.rotateKey(other.id, "test");
      expect(b.replaces).toBe(a.keyFingerprint);
      await expect(fixture.orgs.rotateKey(Bun.randomUUIDv7(), "test")).rejects.toMatchObject({ code: "NOT_FOUND" });
    });
  });

  describe(`key compromise on ${engine.name}`, () => {
    test("of the current key: since and the declaration's time on the key, rotated in the same change, audited", async () => {
      const { fixture, orgId, org, keyRow, orgKey, audits, provision, anchor, clock } = await setup(engine);
      await anchor((await provision())[0]!, 1);
      const since = clock.now() - 60_000;
      const c = await fixture.orgs.declareKeyCompromised(orgId, { sinceMs: since }, "test");
      expect(c).toMatchObject({ orgId, keyFingerprint: hex(org.systemKey.fingerprint), sinceMs: since, at: clock.now() });
      expect(c.rotation).toMatchObject({ replaces: hex(org.systemKey.fingerprint) });
      expect(await keyRow(org.systemKey.fingerprint)).toMatchObject({ compromisedSince: since, compromisedAt: clock.now(), retiredAt: clock.now() });
      expect(await orgKey()).toBe(c.rotation!.keyFingerprint);
      expect(await audits()).toEqual(expect.arrayContaining(["organisation.key.rotate", "organisation.key.compromised"]));
    });

    test("of an older key (--key): no rotation; refusals change nothing: a time in the future, a key not the organisation's, a key already declared", async () => {
      const { fixture, orgId, org, keyRow, orgKey, audits, provision, anchor, clock } = await setup(engine);
      await anchor((await provision())[0]!, 1);
      const old = org.systemKey.fingerprint;
      await fixture.orgs.rotateKey(orgId, "test");
      const current = await orgKey();
      await expect(fixture.orgs.declareKeyCompromised(orgId, { sinceMs: clock.now() + 1, keyFingerprint: old }, "test")).rejects.toMatchObject({ code: "VALIDATION_FAILED" });
      const person = await fixture.createPerson();
      await expect(fixture.orgs.declareKeyCompromised(orgId, { sinceMs: 0, keyFingerprint: person.fingerprint }, "test")).rejects.toThrow(/is not one of organisation/);
      const before = await audits();
      expect((await keyRow(old)).compromisedAt).toBeNull();
      const c = await fixture.orgs.declareKeyCompromised(orgId, { sinceMs: 0, keyFingerprint: old }, "test");
      expect(c.rotation).toBeNull();
      expect(await orgKey()).toBe(current);
      const after = await audits();
      expect(after.length).toBe(before.length + 1);
      await expect(fixture.orgs.declareKeyCompromised(orgId, { sinceMs: 0, keyFingerprint: old }, "test")).rejects.toThrow(/already declared compromised/);
      expect(await audits()).toEqual(after);
      await expect(fixture.orgs.declareKeyCompromised(Bun.randomUUIDv7(), { sinceMs: 0 }, "test")).rejects.toMatchObject({ code: "NOT_FOUND" });
    });

    test("the journal: one key_compromise row per key, never waiting; queued again when abandoned; anchored, it raises the change counter", async () => {
      const { store, fixture, journal, orgId, org, rows, row, provision, anchor, clock } = await setup(engine);
      await anchor((await provision())[0]!, 1);
      expect(await journal.keysWantingCompromiseMessage()).toEqual([]);
      const since = clock.now() - 1000;
      await fixture.orgs.declareKeyCompromised(orgId, { sinceMs: since }, "test");
      const wanted = await journal.keysWantingCompromiseMessage();
      expect(wanted).toEqual([{ orgId, personId: null, keyFingerprint: new Uint8Array(org.systemKey.fingerprint), sinceMs: since }]);
      const message = new TextEncoder().encode('{"v":1,"type":"key_compromise"}');
      const queued = (await journal.queueCompromise(wanted[0]!, message))!;
      expect(queued).toMatchObject({ kind: "key_compromise", state: "pending", orgId, topicId: TOPIC, recordId: null });
      expect(hex(queued.keyFingerprint!)).toBe(hex(org.systemKey.fingerprint));
      expect(await journal.queueCompromise(wanted[0]!, message)).toBeNull(); // ledger_transactions_one_compromise
      expect(await journal.keysWantingCompromiseMessage()).toEqual([]);
      // Due at once: it waits for no announcement (the new key's is not even queued yet here).
      expect((await journal.due(10, new Set())).map((r) => r.transactionId)).toContain(queued.transactionId);
      const requeued = (await journal.abandon(await row(queued.transactionId), "x"))!.requeued!;
      expect(await row(requeued)).toMatchObject({ kind: "key_compromise", state: "pending" });
      expect(Buffer.from((await row(requeued)).message!).equals(Buffer.from(message))).toBe(true);
      expect((await rows()).filter((r) => r.kind === "key_compromise" && r.state !== "abandoned")).toHaveLength(1);
      const counter = async () => Number((await store.read((db, t) => q(db.select({ value: t.changeCounter.value }).from(t.changeCounter))))[0]!.value);
      const was = await counter();
      await anchor(await row(requeued), 5);
      expect(await counter()).toBeGreaterThan(was);
      expect(await journal.keysWantingCompromiseMessage()).toEqual([]);
    });

    test("the journal: a key of an organisation without a topic waits for the topic; then it is wanted", async () => {
      const { store, fixture, journal } = await setup(engine);
      const other = await fixture.createOrg(`Topicless ${Math.random()}`);
      await fixture.orgs.declareKeyCompromised(other.id, { sinceMs: 0 }, "test");
      expect(await journal.keysWantingCompromiseMessage()).toEqual([]);
      await store.write((tx, t) => q(tx.update(t.organisations).set({ topicId: "0.0.4242" }).where(eq(t.organisations.id, other.id))));
      expect((await journal.keysWantingCompromiseMessage()).map((k) => k.orgId)).toEqual([other.id]);
    });
  });
}
