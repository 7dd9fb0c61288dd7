/**
 * The service seal key's rotation (src/records/seal-rotation.ts) and what the anchor journal does
 * about it (every organisation's and person's key announced again with the new seal key, each
 * once the signer's messages sealed with the old seal key have settled; messages sealed with the
 * new key wait for it), and a person's key declared compromised in the journal (its one
 * key_compromise message names the person), on both storage engines. No ledger: a database and a manual clock; the
 * journal's changes are made by hand as the loop would make them.
 */
import { describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { DEFAULT_BATCH_POLICY, journalRules } from "../../src/anchoring/journal/rules.ts";
import type { Journal, LedgerTransactionRow } from "../../src/anchoring/journal/ports.ts";
import { pendingMessage } from "../../src/anchoring/queue.ts";
import { createTransactionIds } from "../../src/anchoring/transaction-ids.ts";
import { createSigner } from "../../src/crypto/index.ts";
import { audit } from "../../src/keys/audit.ts";
import { KeyLifecycleRefused } from "../../src/keys/org-keys.ts";
import { createPersonKeys } from "../../src/persons/person-keys.ts";
import { decodeLedgerMessage, encodeKeyCompromiseMessage } from "../../src/records/messages.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { createKeyAnnouncements, createPersonKeyAnnouncements } from "../../src/records/announcements.ts";
import { SEAL_KEY_META } from "../../src/records/seal-key.ts";
import { createSealRotation, SealRotationRefused } from "../../src/records/seal-rotation.ts";
import { q } from "../../src/storage/store.ts";
import { closeBatchNow } from "../support/batches.ts";
import { journalDrivers } from "../support/drivers.ts";
import { createStoreRecordsFixture, docHashOf, TOPIC_ID as TOPIC, type PersonKey } from "../support/records-fixture.ts";
import { useStoreEngines } from "../support/store-engines.ts";

/** Each test's databases are closed and dropped after it: a PostgreSQL server allows so many connections. */
const { engines: ENGINES } = useStoreEngines({ eachTest: true });
const signer = createSigner({ masterKey: new Uint8Array(32).fill(7), workers: 0 });
const CONFIRMED = { sequenceNumber: 1, consensusAt: "1767225600.000000123", runningHash: new Uint8Array(48).fill(9) };
const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

async function setup(engine: (typeof ENGINES)[number], options: { withPerson?: boolean } = {}) {
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
  let person: PersonKey | null = null;
  if (options.withPerson === true) {
    const p = await fixture.createPerson();
    person = p;
    await store.write((tx, t) =>
      q(
        tx.insert(t.persons).values({
          id: p.personId,
          orgId,
          name: "Ada",
          email: "ada@example.org",
          identityEvidence: "passport",
          suspended: false,
          keyFingerprint: Buffer.from(p.fingerprint),
          createdAt: clock.now(),
          enrolledAt: clock.now(),
        }),
      ),
    );
  }
  const announcementFor = createKeyAnnouncements({ keys: store as never, signer, clock });
  const personAnnouncementFor = createPersonKeyAnnouncements({ keys: store as never, signer, clock });
  const rotation = (s: typeof signer = signer) =>
    createSealRotation({ store, signer: s, clock, audit: (tx, t, at, e) => audit(tx, t, at, { actor: "test", action: "seal.key.rotate", subjectType: "seal_key", subjectId: "x", ...e }) });
  const rows = async () => (await store.read((db, t) => q(db.select().from(t.ledgerTransactions)))) as unknown as LedgerTransactionRow[];
  const row = async (id: string) => (await rows()).find((r) => r.transactionId === id)!;

  /** The loop's provisioning pass: organisations' announcements, then persons'. */
  async function provision(): Promise<LedgerTransactionRow[]> {
    const queued: LedgerTransactionRow[] = [];
    for (const id of await journal.organisationsWantingAnnouncement()) {
      const a = await announcementFor(id);
      const r = a === null ? null : await journal.queueAnnouncement(id, a);
      if (r !== null) queued.push(r);
    }
    for (const id of await journal.personsWantingAnnouncement()) {
      const a = await personAnnouncementFor(id);
      const r = a === null ? null : await journal.queuePersonAnnouncement(id, a);
      if (r !== null) queued.push(r);
    }
    return queued;
  }

  /**
   * A pending record signed with the organisation's key (or the person's) and sealed with `seal`
   * (default: the fixture's), its message joining the open batch of that key and seal key, as the
   * records service writes them; then the batch closed, as the loop closes it once its window has
   * passed (one record a batch: each settles on its own here). The batch's transaction id: what the
   * record carries, and what goes to the ledger.
   */
  async function queueRecord(options: { seal?: Uint8Array; person?: PersonKey } = {}): Promise<string> {
    const docHash = docHashOf(Bun.randomUUIDv7());
    const reserved = ids();
    const recordId = options.person
      ? await fixture.addPersonRecord(options.person, { docHash, anchorState: "pending", orgId, transactionId: reserved.transactionId })
      : await fixture.addOrgRecord(org, { docHash, anchorState: "pending", transactionId: reserved.transactionId });
    const seal = options.seal ?? fixture.seal.fingerprint;
    if (options.seal !== undefined) await store.write((tx, t) => q(tx.update(t.records).set({ sealFingerprint: Buffer.from(seal) }).where(eq(t.records.id, recordId))));
    const key = options.person ? options.person.fingerprint : org.systemKey.fingerprint;
    const batchId = await store.write((tx, t) =>
      pendingMessage(tx, t, {
        kind: "record_message",
        ...reserved,
        orgId,
        recordId,
        topicId: TOPIC,
        message: new TextEncoder().encode(`{"v":1,"id":"${recordId}"}`),
        now: clock.now(),
        keyFingerprint: key,
        sealFingerprint: seal,
        batches: { policy: DEFAULT_BATCH_POLICY, newBatchId: ids },
      }),
    );
    await closeBatchNow(store, journal, batchId);
    return batchId;
  }

  const anchor = async (id: string, sequenceNumber: number) => journal.grouped.toAnchoredMessage(await row(id), { ...CONFIRMED, sequenceNumber });
  const dueIds = async () => (await journal.due(10, new Set())).map((x) => x.transactionId).sort();
  const state = async () =>
    store.read(function* (db, t) {
      const [meta] = yield* q(db.select().from(t.serviceMeta).where(eq(t.serviceMeta.key, SEAL_KEY_META)));
      const seals = yield* q(db.select().from(t.signingKeys).where(eq(t.signingKeys.purpose, "service-seal")));
      const [o] = yield* q(db.select().from(t.organisations).where(eq(t.organisations.id, orgId)));
      const audits = yield* q(db.select().from(t.auditLog).where(eq(t.auditLog.action, "seal.key.rotate")));
      return { meta: meta!.value, seals: seals.map((s) => ({ fp: hex(s.fingerprint), retiredAt: s.retiredAt })), generation: Number(o!.announcementGeneration), audits: audits.length };
    });
  return { store, clock, fixture, journal, org, orgId, person, rotation, rows, row, provision, queueRecord, anchor, dueIds, state };
}

for (const engine of ENGINES) {
  describe(`seal key rotation on ${engine.name}`, () => {
    test("one change: a new seal key replacing the old, the old retired, service_meta switched, the generation raised, an audit line; announced once with the same organisation key", async () => {
      const { fixture, org, rotation, provision, anchor, clock, state, store } = await setup(engine);
      await anchor((await provision())[0]!.transactionId, 1);
      const before = await state();
      clock.advance(1000);
      const r = await rotation().rotate();
      expect(r).toMatchObject({ replaces: hex(fixture.seal.fingerprint), at: clock.now(), organisations: 1 });
      const after = await state();
      expect(after.meta).toBe(r.keyFingerprint);
      expect(after.seals).toContainEqual({ fp: r.replaces, retiredAt: clock.now() });
      expect(after.seals).toContainEqual({ fp: r.keyFingerprint, retiredAt: null });
      expect(after.generation).toBe(before.generation + 1);
      expect(after.audits).toBe(1);
      const [replaced] = await store.read((db, t) => q(db.select().from(t.signingKeys).where(eq(t.signingKeys.fingerprint, Buffer.from(r.keyFingerprint, "hex")))));
      expect(hex(replaced!.replaces!)).toBe(r.replaces);
      const [announced] = await provision();
      const message = decodeLedgerMessage(announced!.message!);
      expect(message).toMatchObject({ type: "key", keyFingerprint: hex(org.systemKey.fingerprint), sealKeyFingerprint: r.keyFingerprint });
      expect(message).not.toHaveProperty("replaces");
      expect(hex(announced!.sealFingerprint!)).toBe(r.keyFingerprint);
      expect(await provision()).toEqual([]); // exactly once
    });

    test("records sealed with the new key wait for the new announcement, which waits until the old seal key's messages have settled", async () => {
      const { rotation, provision, anchor, queueRecord, dueIds } = await setup(engine);
      await anchor((await provision())[0]!.transactionId, 1);
      const a = await queueRecord();
      const b = await queueRecord();
      const r = await rotation().rotate();
      const c = await queueRecord({ seal: Buffer.from(r.keyFingerprint, "hex") });
      // Held: two messages sealed with the old key are unsettled.
      expect(await provision()).toEqual([]);
      // The old seal key's messages go on its announcement; the new one's waits.
      expect(await dueIds()).toEqual([a, b].sort());
      await anchor(a, 2);
      expect(await provision()).toEqual([]);
      await anchor(b, 3);
      const [announced] = await provision();
      expect(announced).toBeDefined();
      expect(await dueIds()).toEqual([announced!.transactionId]);
      await anchor(announced!.transactionId, 4);
      expect(await dueIds()).toEqual([c]);
    });

    test("a person's key is announced again with the new seal key once their old-sealed messages settle; their new-sealed messages wait for it", async () => {
      const { rotation, provision, anchor, queueRecord, dueIds, person, row } = await setup(engine, { withPerson: true });
      const first = await provision();
      expect(first.map((x) => decodeLedgerMessage(x.message!).type).sort()).toEqual(["key", "person_key"]);
      for (const [i, x] of first.entries()) await anchor(x.transactionId, i + 1);
      expect(await provision()).toEqual([]);
      const old = await queueRecord({ person: person! });
      const r = await rotation().rotate();
      const fresh = await queueRecord({ person: person!, seal: Buffer.from(r.keyFingerprint, "hex") });
      // The organisation's announcement goes at once (no organisation message is unsettled); the person's is held.
      const queued = await provision();
      expect(queued.map((x) => decodeLedgerMessage(x.message!).type)).toEqual(["key"]);
      await anchor(queued[0]!.transactionId, 3);
      expect(await dueIds()).toEqual([old]);
      await anchor(old, 4);
      const [personal] = await provision();
      expect(decodeLedgerMessage(personal!.message!)).toMatchObject({ type: "person_key", personId: person!.personId, keyFingerprint: hex(person!.fingerprint), sealKeyFingerprint: r.keyFingerprint });
      expect((await row(personal!.transactionId)).announcementGeneration).toBe(1);
      expect(await provision()).toEqual([]); // exactly once
      expect(await dueIds()).toEqual([personal!.transactionId]);
      await anchor(personal!.transactionId, 5);
      expect(await dueIds()).toEqual([fresh]);
    });

    test("refused, nothing changed, while the previous seal announcement is not anchored on some topic; allowed again once it is", async () => {
      const { rotation, provision, anchor, state } = await setup(engine);
      await anchor((await provision())[0]!.transactionId, 1);
      await rotation().rotate();
      const [pending] = await provision();
      const before = await state();
      const refused = rotation().rotate();
      await expect(refused).rejects.toBeInstanceOf(SealRotationRefused);
      await expect(refused).rejects.toThrow("not announced with the current seal key");
      expect(await state()).toEqual(before);
      await anchor(pending!.transactionId, 2);
      await rotation().rotate();
      expect((await state()).seals.length).toBe(3);
    });

    test("an organisation's key rotation is refused while its key's announcement with the new seal key is not anchored", async () => {
      const { rotation, provision, anchor, fixture, orgId, queueRecord } = await setup(engine);
      await anchor((await provision())[0]!.transactionId, 1);
      const old = await queueRecord();
      await rotation().rotate();
      // Held by the message sealed with the old seal key.
      expect(await provision()).toEqual([]);
      await expect(fixture.orgs.rotateKey(orgId, "test")).rejects.toBeInstanceOf(KeyLifecycleRefused);
      await anchor(old, 2);
      const [announced] = await provision();
      await expect(fixture.orgs.rotateKey(orgId, "test")).rejects.toBeInstanceOf(KeyLifecycleRefused);
      await anchor(announced!.transactionId, 3);
      expect((await fixture.orgs.rotateKey(orgId, "test")).orgId).toBe(orgId);
    });

    test("refused, nothing changed, while a key announcement is on its way (a change of domain); an organisation's key rotation likewise", async () => {
      const { rotation, provision, anchor, state, fixture, orgId } = await setup(engine);
      await anchor((await provision())[0]!.transactionId, 1);
      await fixture.orgs.set(orgId, { domain: "example.org" }, "test");
      const [renamed] = await provision();
      const before = await state();
      await expect(rotation().rotate()).rejects.toThrow(`a key announcement on organisation ${orgId}'s topic is not anchored yet`);
      expect(await state()).toEqual(before);
      await expect(fixture.orgs.rotateKey(orgId, "test")).rejects.toThrow("has an announcement on its way to the ledger");
      await anchor(renamed!.transactionId, 2);
      await rotation().rotate();
      expect((await state()).seals.length).toBe(2);
    });

    test("refused, nothing changed: a person's key not yet announced with the current seal key", async () => {
      const { rotation, provision, anchor, state } = await setup(engine, { withPerson: true });
      const [orgAnnouncement] = (await provision()).filter((x) => decodeLedgerMessage(x.message!).type === "key");
      await anchor(orgAnnouncement!.transactionId, 1);
      const before = await state();
      await expect(rotation().rotate()).rejects.toThrow(/person .*'s key is not announced/);
      expect(await state()).toEqual(before);
    });

    test("refused, nothing changed: a sealed key store (no master key), and an installation without a seal key yet", async () => {
      const { rotation, provision, anchor, state, store } = await setup(engine);
      await anchor((await provision())[0]!.transactionId, 1);
      const before = await state();
      const sealed = createSigner({ masterKey: null, workers: 0 });
      await expect(rotation(sealed).rotate()).rejects.toThrow("the key store is sealed");
      expect(await state()).toEqual(before);
      await store.write((tx, t) => q(tx.delete(t.serviceMeta).where(eq(t.serviceMeta.key, SEAL_KEY_META))));
      await expect(rotation().rotate()).rejects.toThrow("no seal key yet");
      expect(await store.read((db, t) => q(db.select().from(t.serviceMeta).where(eq(t.serviceMeta.key, SEAL_KEY_META))))).toEqual([]);
      const seals = await store.read((db, t) => q(db.select().from(t.signingKeys).where(eq(t.signingKeys.purpose, "service-seal"))));
      expect(seals.length).toBe(1);
    });
  });

  describe(`a person's key declared compromised on ${engine.name}`, () => {
    test("the journal wants its one key_compromise message, naming the person; queued once", async () => {
      const { store, clock, journal, orgId, person } = await setup(engine, { withPerson: true });
      clock.advance(1000);
      const declared = await createPersonKeys({ store, clock }).declareKeyCompromised(person!.personId, { sinceMs: clock.now() - 500 }, "test");
      const wanted = await journal.keysWantingCompromiseMessage();
      expect(wanted).toEqual([{ orgId, personId: person!.personId, keyFingerprint: person!.fingerprint, sinceMs: declared.sinceMs }]);
      const row = await journal.queueCompromise(wanted[0]!, encodeKeyCompromiseMessage(wanted[0]!));
      expect(decodeLedgerMessage(row!.message!)).toMatchObject({ type: "key_compromise", orgId, personId: person!.personId, keyFingerprint: hex(person!.fingerprint) });
      expect(await journal.keysWantingCompromiseMessage()).toEqual([]);
      expect(await journal.queueCompromise(wanted[0]!, encodeKeyCompromiseMessage(wanted[0]!))).toBeNull();
    });
  });
}
