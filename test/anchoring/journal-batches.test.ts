/**
 * The anchor journal's batches (the `Journal` port's "Batches", src/anchoring/journal/ports.ts;
 * docs/anchoring.md "Batches") on both storage engines: the waiting leaves read, a batch formed
 * (and refused, changing nothing), leaves never sent themselves, and what a batch's acceptance,
 * anchoring and abandonment carry to its leaves and their records. Each test runs on the embedded
 * SQLite and on a real PostgreSQL server (where the journal's changes are fenced by the leader's
 * epoch: this node leads at epoch 1); what only PostgreSQL has, its fence, is at the end.
 * Leaves are queued as the records capability queues them (`pendingMessage`, in the write of their
 * record or revocation). No ledger: a database and a manual clock.
 */
import { describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import type { Journal, LedgerTransactionRow, NewBatch } from "../../src/anchoring/journal/ports.ts";
import { journalRules, pendingValues } from "../../src/anchoring/journal/rules.ts";
import { pendingMessage } from "../../src/anchoring/queue.ts";
import { createTransactionIds } from "../../src/anchoring/transaction-ids.ts";
import { createSigner } from "../../src/crypto/index.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { DeposedError } from "../../src/storage/pg-cluster.ts";
import { NotLeadingError } from "../../src/storage/postgres/journal.ts";
import { q } from "../../src/storage/store.ts";
import { journalDrivers } from "../support/drivers.ts";
import { createStoreRecordsFixture, docHashOf, TOPIC_ID as TOPIC, type FixtureOrg } from "../support/records-fixture.ts";
import { useStoreEngines, type StoreEngine } from "../support/store-engines.ts";

/** Each test's databases are closed and dropped after it: a PostgreSQL server allows so many connections. */
const { engines: ENGINES } = useStoreEngines({ eachTest: true });
const POSTGRES = ENGINES[1];
const signer = createSigner({ masterKey: new Uint8Array(32).fill(7), workers: 0 });
const CONFIRMED = { sequenceNumber: 41, consensusAt: "1767225603.000000041", runningHash: new Uint8Array(48).fill(5) };
const VALID_SECONDS = 30;
const encode = (text: string) => new TextEncoder().encode(text);
/** A leaf's inclusion path in a test batch: `n` node hashes of 32 bytes. */
const pathOf = (i: number, n = 2) => new Uint8Array(32 * n).fill(i + 1);

async function setup(engine: StoreEngine) {
  const store = await engine.open();
  const clock = manualClock(Date.UTC(2026, 0, 1));
  const fixture = await createStoreRecordsFixture({ store, signer, clock });
  const ids = createTransactionIds({ clock, operator: "0.0.2", validSeconds: VALID_SECONDS, backdateMs: 0, lastValidStartNs: 0n });
  let epoch: number | null = 1;
  if (store.engine === "postgres") {
    await store.write(function* (tx) {
      yield* q(tx.execute(sql`UPDATE anchor_leader SET epoch = 1, node = 'test' WHERE id = 1`));
    });
  }
  const journal: Journal = journalDrivers(store, { epoch: () => epoch }).journal(journalRules(clock, ids));
  const withTopic = async (name: string): Promise<FixtureOrg> => {
    const org = await fixture.createOrg(`${name} ${Math.random()}`, { addon: true });
    await store.write((tx, t) => q(tx.update(t.organisations).set({ topicId: TOPIC }).where(eq(t.organisations.id, org.id))));
    return org;
  };
  const org = await withTopic("Org");

  const row = async (id: string): Promise<LedgerTransactionRow> =>
    (await store.read((db, t) => q(db.select().from(t.ledgerTransactions).where(eq(t.ledgerTransactions.transactionId, id)))))[0] as unknown as LedgerTransactionRow;
  const rows = async () => (await store.read((db, t) => q(db.select().from(t.ledgerTransactions)))) as unknown as LedgerTransactionRow[];
  const batches = async () => (await rows()).filter((r) => r.kind === "batch_message");
  const record = async (id: string) => (await store.read((db, t) => q(db.select().from(t.records).where(eq(t.records.id, id)))))[0]!;
  const setRow = (id: string, values: Partial<LedgerTransactionRow>) =>
    store.write((tx, t) => q(tx.update(t.ledgerTransactions).set(values).where(eq(t.ledgerTransactions.transactionId, id))));

  /** A pending record and its creation leaf, written together as the records capability does. */
  async function creationLeaf(of: FixtureOrg = org): Promise<{ recordId: string; transactionId: string }> {
    const reserved = ids();
    const recordId = await fixture.addOrgRecord(of, { docHash: docHashOf(Bun.randomUUIDv7()), anchorState: "pending", transactionId: reserved.transactionId });
    const now = clock.now();
    await store.write((tx, t) =>
      pendingMessage(tx, t, { kind: "record_message", ...reserved, orgId: of.id, recordId, topicId: TOPIC, message: encode(`{"v":1,"type":"record","id":"${recordId}"}`), now, keyFingerprint: of.systemKey.fingerprint }),
    );
    return { recordId, transactionId: reserved.transactionId };
  }

  /** An anchored record (sent before batches) and its revocation's leaf, written together as the records capability does. */
  async function revocationLeaf(recordId?: string): Promise<{ recordId: string; transactionId: string }> {
    const id = recordId ?? (await fixture.addOrgRecord(org, { docHash: docHashOf(Bun.randomUUIDv7()), anchorState: "anchored" }));
    const reserved = ids();
    const now = clock.now();
    await store.write(function* (tx, t) {
      yield* q(tx.update(t.records).set({ revokedAt: now, revocationReason: "SUPERSEDED", revocationTransactionId: reserved.transactionId }).where(eq(t.records.id, id)));
      yield* pendingMessage(tx, t, { kind: "revocation_message", ...reserved, orgId: org.id, recordId: id, topicId: TOPIC, message: encode(`{"v":1,"type":"revocation","id":"${id}"}`), now });
    });
    return { recordId: id, transactionId: reserved.transactionId };
  }

  /** An ordinary revocation message (sent on its own, as every one was before batches). */
  async function ordinaryRevocation(): Promise<string> {
    const recordId = await fixture.addOrgRecord(org, { docHash: docHashOf(Bun.randomUUIDv7()), anchorState: "anchored" });
    const reserved = ids();
    const now = clock.now();
    await store.write(function* (tx, t) {
      yield* q(tx.update(t.records).set({ revokedAt: now, revocationReason: "SUPERSEDED", revocationTransactionId: reserved.transactionId }).where(eq(t.records.id, recordId)));
      yield* q(tx.insert(t.ledgerTransactions).values(pendingValues(reserved, { kind: "revocation_message", orgId: org.id, recordId, topicId: TOPIC, message: encode("{}") }, now)));
    });
    return reserved.transactionId;
  }

  /** An anchored announcement of the organisation's key with the fixture's seal key: its record leaves may go. */
  async function announceAnchored(of: FixtureOrg = org): Promise<string> {
    const a = (await journal.queueAnnouncement(of.id, { keyFingerprint: of.systemKey.fingerprint, generation: 0, sealFingerprint: fixture.seal.fingerprint, message: encode(`{"v":1,"type":"key","n":"${Bun.randomUUIDv7()}"}`) }))!;
    await journal.grouped.toAnchoredMessage(a, { ...CONFIRMED, sequenceNumber: 1 });
    return a.transactionId;
  }

  /** The batch of `leaves` (in leaf order) at `sequence` (default: the next). */
  async function batchOf(leaves: string[], sequence?: number, of: FixtureOrg = org): Promise<NewBatch> {
    const n = sequence ?? (await journal.nextBatchSequence(of.id));
    return { orgId: of.id, topicId: TOPIC, sequence: n, message: encode(`{"v":1,"type":"batch","batch":${n},"size":${leaves.length}}`), leaves: leaves.map((transactionId, i) => ({ transactionId, path: pathOf(i) })) };
  }
  const form = async (leaves: string[], sequence?: number) => journal.formBatch(await batchOf(leaves, sequence));

  return { store, clock, fixture, ids, journal, org, withTopic, row, rows, batches, record, setRow, creationLeaf, revocationLeaf, ordinaryRevocation, announceAnchored, batchOf, form, setEpoch: (e: number | null) => (epoch = e) };
}

/** Everything the tests look at, to show that a refused change changed nothing. */
async function snapshot(h: Awaited<ReturnType<typeof setup>>) {
  const all = await h.store.read(function* (db, t) {
    return [yield* q(db.select().from(t.ledgerTransactions)), yield* q(db.select().from(t.records))] as const;
  });
  const byId = <T extends object>(list: readonly T[], key: keyof T) => [...list].sort((a, b) => String(a[key]).localeCompare(String(b[key])));
  return { ledger: byId(all[0], "transactionId"), records: byId(all[1], "id") };
}

for (const engine of ENGINES) {
  describe(`the anchor journal's batches on ${engine.name}`, () => {
    describe("reading the waiting leaves", () => {
      test("waitingLeaves: per organisation, the waiting leaves and the oldest's creation; ordinary rows, batched and finished leaves are not waiting", async () => {
        const h = await setup(engine);
        expect(await h.journal.waitingLeaves()).toEqual([]);
        const t0 = h.clock.now();
        await h.creationLeaf();
        h.clock.advance(100);
        await h.revocationLeaf();
        const batched = await h.creationLeaf();
        const done = await h.creationLeaf();
        await h.ordinaryRevocation();
        const other = await h.withTopic("Other");
        h.clock.advance(50);
        await h.creationLeaf(other);
        await h.creationLeaf(other);
        expect(await h.form([batched.transactionId])).not.toBeNull();
        await h.setRow(done.transactionId, { state: "abandoned" });
        const byOrg = <T extends { readonly orgId: string }>(list: readonly T[]) => [...list].sort((x, y) => x.orgId.localeCompare(y.orgId));
        expect(byOrg(await h.journal.waitingLeaves())).toEqual(
          byOrg([
            { orgId: h.org.id, leaves: 2, oldestAt: t0 },
            { orgId: other.id, leaves: 2, oldestAt: t0 + 150 },
          ]),
        );
      });

      test("batchableLeaves: oldest first (creation, then transaction id), up to the limit; a record leaf waits for its key's announcement anchored with its record's seal key; a revocation leaf never waits", async () => {
        const h = await setup(engine);
        const first = await h.creationLeaf();
        h.clock.advance(5);
        const revocation = await h.revocationLeaf();
        const second = await h.creationLeaf();
        const third = await h.creationLeaf();
        const ids = async (limit = 10) => (await h.journal.batchableLeaves(h.org.id, limit)).map((r) => r.transactionId);
        // No announcement yet: only the revocation may go.
        expect(await ids()).toEqual([revocation.transactionId]);
        await h.announceAnchored();
        const sameTime = [revocation.transactionId, second.transactionId, third.transactionId].sort();
        expect(await ids()).toEqual([first.transactionId, ...sameTime]);
        expect(await ids(2)).toEqual([first.transactionId, sameTime[0]!]);
        expect(await ids(0)).toEqual([]);
        // Rows as a select of the table returns them.
        expect((await h.journal.batchableLeaves(h.org.id, 1))[0]).toEqual(await h.row(first.transactionId));
        // A record sealed with another seal key: the key's announcement with the fixture's seal does not cover it.
        const otherSeal = (await h.fixture.createPerson()).fingerprint;
        await h.store.write((tx, t) => q(tx.update(t.records).set({ sealFingerprint: Buffer.from(otherSeal) }).where(eq(t.records.id, third.recordId))));
        expect(await ids()).toEqual([first.transactionId, ...sameTime.filter((id) => id !== third.transactionId)]);
        // Another organisation's leaves are its own; a batched leaf no longer waits.
        expect(await h.journal.batchableLeaves((await h.withTopic("Other")).id, 10)).toEqual([]);
        await h.form([first.transactionId]);
        expect(await ids()).not.toContain(first.transactionId);
      });

      test("nextBatchSequence: 1 for an organisation's first batch, then one more than its highest, an abandoned one included; another organisation's do not count", async () => {
        const h = await setup(engine);
        expect(await h.journal.nextBatchSequence(h.org.id)).toBe(1);
        const b1 = (await h.form([(await h.revocationLeaf()).transactionId]))!;
        expect(b1.batchSequence).toBe(1);
        expect(await h.journal.nextBatchSequence(h.org.id)).toBe(2);
        const b5 = (await h.form([(await h.revocationLeaf()).transactionId], 5))!;
        expect(await h.journal.nextBatchSequence(h.org.id)).toBe(6);
        await h.journal.abandon(b5, "the validity window closed");
        expect(await h.journal.nextBatchSequence(h.org.id)).toBe(6);
        expect(await h.journal.nextBatchSequence((await h.withTopic("Other")).id)).toBe(1);
      });
    });

    describe("forming a batch", () => {
      test("formBatch: the batch row (pending, due now, batch_message, sequence, size, message, topic); each leaf's batch, index and path; the records moved to the batch's transaction id", async () => {
        const h = await setup(engine);
        const a = await h.creationLeaf();
        const r = await h.revocationLeaf();
        const b = await h.creationLeaf();
        h.clock.advance(250);
        const batch = await h.batchOf([a.transactionId, r.transactionId, b.transactionId]);
        const formed = (await h.journal.formBatch(batch))!;
        expect(formed).not.toBeNull();
        const stored = await h.row(formed.transactionId);
        expect(formed).toEqual(stored);
        expect(stored).toMatchObject({
          kind: "batch_message",
          orgId: h.org.id,
          recordId: null,
          topicId: TOPIC,
          state: "pending",
          attempts: 0,
          signedBytes: null,
          nextAttemptAt: h.clock.now(),
          createdAt: h.clock.now(),
          batchLeaf: 0,
          batchTransactionId: null,
          batchSequence: 1,
          batchSize: 3,
        });
        expect(Buffer.from(stored.message!).equals(Buffer.from(batch.message))).toBe(true);
        expect(stored.transactionId).not.toBe(a.transactionId);
        for (const [i, leaf] of [a, r, b].entries()) {
          const l = await h.row(leaf.transactionId);
          expect(l).toMatchObject({ batchLeaf: 1, batchTransactionId: formed.transactionId, leafIndex: i, state: "pending" });
          expect(Buffer.from(l.inclusionPath!).equals(Buffer.from(pathOf(i)))).toBe(true);
        }
        expect(await h.record(a.recordId)).toMatchObject({ transactionId: formed.transactionId, anchorState: "pending" });
        expect(await h.record(b.recordId)).toMatchObject({ transactionId: formed.transactionId, anchorState: "pending" });
        expect((await h.record(r.recordId)).revocationTransactionId).toBe(formed.transactionId);
        // The batch is a message like any other: due now.
        expect((await h.journal.due(10, new Set())).map((x) => x.transactionId)).toEqual([formed.transactionId]);
        expect(await h.journal.waitingLeaves()).toEqual([]);
      });

      test("formBatch moves only a record that still carries its leaf's transaction", async () => {
        const h = await setup(engine);
        const a = await h.creationLeaf();
        await h.store.write((tx, t) => q(tx.update(t.records).set({ transactionId: "0.0.2@1.000000009" }).where(eq(t.records.id, a.recordId))));
        const formed = (await h.form([a.transactionId]))!;
        expect((await h.row(a.transactionId)).batchTransactionId).toBe(formed.transactionId);
        expect((await h.record(a.recordId)).transactionId).toBe("0.0.2@1.000000009");
      });

      test("formBatch refuses (null), changing nothing: a leaf already batched, a leaf of another organisation, a leaf no longer pending, a taken sequence", async () => {
        const h = await setup(engine);
        const a = await h.creationLeaf();
        const b = await h.creationLeaf();
        const r = await h.revocationLeaf();
        expect(await h.form([a.transactionId])).not.toBeNull();
        const other = await h.withTopic("Other");
        const theirs = await h.creationLeaf(other);
        const finished = await h.creationLeaf();
        await h.setRow(finished.transactionId, { state: "abandoned" });
        const before = await snapshot(h);
        // The waiting leaves come first, so that the refusal has something to undo.
        expect(await h.form([b.transactionId, r.transactionId, a.transactionId])).toBeNull();
        expect(await h.form([b.transactionId, theirs.transactionId])).toBeNull();
        expect(await h.form([r.transactionId, finished.transactionId])).toBeNull();
        expect(await h.form([b.transactionId, "0.0.2@9.000000009"])).toBeNull();
        expect(await h.form([b.transactionId, b.transactionId])).toBeNull();
        expect(await h.form([b.transactionId, r.transactionId], 1)).toBeNull(); // ledger_transactions_one_batch
        expect(await snapshot(h)).toEqual(before);
        expect(await h.journal.nextBatchSequence(h.org.id)).toBe(2);
        // Still waiting, they go in the next batch.
        expect(await h.form([b.transactionId, r.transactionId], 2)).not.toBeNull();
      });

      test("a batch of no leaves, or whose message is not 1 to 1024 bytes, is refused before anything is written", async () => {
        const h = await setup(engine);
        const a = await h.creationLeaf();
        const before = await snapshot(h);
        const batch = await h.batchOf([a.transactionId]);
        await expect(Promise.resolve().then(() => h.journal.formBatch({ ...batch, leaves: [] }))).rejects.toThrow(TypeError);
        await expect(Promise.resolve().then(() => h.journal.formBatch({ ...batch, message: new Uint8Array(1025) }))).rejects.toThrow("1 to 1024 bytes");
        expect(await snapshot(h)).toEqual(before);
      });
    });

    describe("leaves are never sent themselves", () => {
      test("not due, not in nextDueAt, topicsAwaitingConfirmation or unfinishedMessage, waiting or batched; retryAllNow and an announcement's wake-up leave them alone", async () => {
        const h = await setup(engine);
        const waiting = await h.creationLeaf();
        const revocation = await h.revocationLeaf();
        const batched = await h.creationLeaf();
        expect(await h.journal.due(10, new Set())).toEqual([]);
        expect(await h.journal.nextDueAt()).toBeNull();
        // As if sent (they never are): still not awaiting confirmation.
        for (const id of [waiting.transactionId, revocation.transactionId]) await h.setRow(id, { attempts: 1, signedBytes: Buffer.from([1]) });
        expect(await h.journal.topicsAwaitingConfirmation()).toEqual([]);
        expect(await h.journal.unfinishedMessage(waiting.transactionId)).toBeNull();
        expect(await h.journal.unfinishedMessage(revocation.transactionId)).toBeNull();
        const formed = (await h.form([batched.transactionId]))!;
        expect((await h.journal.due(10, new Set())).map((r) => r.transactionId)).toEqual([formed.transactionId]);
        expect(await h.journal.nextDueAt()).toBe(h.clock.now());
        expect(await h.journal.unfinishedMessage(batched.transactionId)).toBeNull();
        expect((await h.journal.unfinishedMessage(formed.transactionId))?.transactionId).toBe(formed.transactionId);
        await h.journal.grouped.toAccepted(formed, 60_000);
        expect(await h.journal.topicsAwaitingConfirmation()).toEqual([{ topicId: TOPIC, validStartMs: formed.validStartMs }]);
        expect(await h.journal.unfinishedMessage(batched.transactionId)).toBeNull();
        // Far in the future: retryAllNow and an announcement anchored bring back only the rows that are sent.
        const later = h.clock.now() + 3_600_000;
        for (const id of [waiting.transactionId, batched.transactionId]) await h.setRow(id, { nextAttemptAt: later });
        h.clock.advance(1000);
        await h.journal.retryAllNow();
        expect((await h.row(formed.transactionId)).nextAttemptAt).toBe(h.clock.now());
        expect((await h.row(waiting.transactionId)).nextAttemptAt).toBe(later);
        expect((await h.row(batched.transactionId)).nextAttemptAt).toBe(later);
        // The organisation's key announced and anchored: its record messages set aside go now, its leaves do not.
        await h.announceAnchored();
        expect((await h.row(waiting.transactionId)).nextAttemptAt).toBe(later);
        expect((await h.journal.due(10, new Set())).map((r) => r.transactionId)).toEqual([formed.transactionId]);
      });

      test("unsentPastCutoff: a waiting leaf past its window is returned (the loop abandons it); a batched one is not, it follows its batch", async () => {
        const h = await setup(engine);
        const waiting = await h.creationLeaf();
        const batched = await h.creationLeaf();
        const formed = (await h.form([batched.transactionId]))!;
        expect(await h.journal.unsentPastCutoff(10_000, 100)).toEqual([]);
        h.clock.advance(VALID_SECONDS * 1000 - 10_000 + 2);
        const ids = (await h.journal.unsentPastCutoff(10_000, 100)).map((r) => r.transactionId).sort();
        expect(ids).toEqual([waiting.transactionId, formed.transactionId].sort());
        expect(await h.journal.unsentPastCutoff(10_000, 100)).toContainEqual(await h.row(waiting.transactionId));
      });

      test("a batched leaf abandoned alone has moved on (it follows its batch): null, nothing changes", async () => {
        const h = await setup(engine);
        const leaf = await h.creationLeaf();
        const formed = (await h.form([leaf.transactionId]))!;
        expect(await h.journal.abandon(await h.row(leaf.transactionId), "the validity window closed")).toBeNull();
        expect((await h.row(leaf.transactionId)).state).toBe("pending");
        expect(await h.record(leaf.recordId)).toMatchObject({ anchorState: "pending", transactionId: formed.transactionId });
      });

      test("unfinished: leaves are counted, waiting or batched, and batch rows are not; the oldest pending leaf's creation", async () => {
        const h = await setup(engine);
        const t0 = h.clock.now();
        const a = await h.creationLeaf();
        h.clock.advance(1000);
        const b = await h.creationLeaf();
        const c = await h.revocationLeaf();
        await h.creationLeaf();
        expect(await h.journal.unfinished()).toMatchObject({ pending: 4, accepted: 0, oldestPendingAt: t0 });
        h.clock.advance(1000);
        const first = (await h.form([a.transactionId, b.transactionId]))!;
        const second = (await h.form([c.transactionId]))!;
        expect(await h.journal.unfinished()).toMatchObject({ pending: 4, accepted: 0, oldestPendingAt: t0 });
        await h.journal.grouped.toAccepted(first, 1000);
        expect(await h.journal.unfinished()).toMatchObject({ pending: 2, accepted: 2, oldestPendingAt: t0 + 1000 });
        await h.journal.grouped.toAnchoredMessage(await h.row(first.transactionId), CONFIRMED);
        await h.journal.abandon(second, "refused at precheck");
        // The abandoned revocation is queued again as a waiting leaf.
        expect(await h.journal.unfinished()).toMatchObject({ pending: 2, accepted: 0, oldestPendingAt: t0 + 1000 });
        expect(await h.ordinaryRevocation()).toBeDefined();
        expect(await h.journal.unfinished()).toMatchObject({ pending: 3, accepted: 0 });
      });
    });

    describe("a batch's state changes carry its leaves and their records", () => {
      test("accepted: its pending leaves accepted, and the pending records carrying its transaction id", async () => {
        const h = await setup(engine);
        const a = await h.creationLeaf();
        const r = await h.revocationLeaf();
        const moved = await h.creationLeaf();
        const formed = (await h.form([a.transactionId, r.transactionId, moved.transactionId]))!;
        // A record that no longer carries the batch is left alone.
        await h.store.write((tx, t) => q(tx.update(t.records).set({ transactionId: "0.0.2@1.000000009" }).where(eq(t.records.id, moved.recordId))));
        h.clock.advance(100);
        expect(await h.journal.grouped.toAccepted(formed, 500)).toBe(h.clock.now());
        expect(await h.row(formed.transactionId)).toMatchObject({ state: "accepted", nextAttemptAt: h.clock.now() + 500 });
        for (const leaf of [a, r, moved]) expect((await h.row(leaf.transactionId)).state).toBe("accepted");
        expect((await h.record(a.recordId)).anchorState).toBe("accepted");
        expect((await h.record(moved.recordId)).anchorState).toBe("pending");
        expect((await h.record(r.recordId)).anchorState).toBe("anchored"); // the revoked record's anchor is its creation's
        expect(await h.journal.grouped.toAccepted(formed, 500)).toBeNull();
      });

      test("anchored: its leaves anchored with its sequence number, consensus time and running hash; its records with the sequence number and consensus time; final", async () => {
        const h = await setup(engine);
        const a = await h.creationLeaf();
        const r = await h.revocationLeaf();
        const b = await h.creationLeaf();
        const formed = (await h.form([a.transactionId, r.transactionId, b.transactionId]))!;
        await h.journal.grouped.toAccepted(formed, 0);
        h.clock.advance(3000);
        expect(await h.journal.grouped.toAnchoredMessage(await h.row(formed.transactionId), CONFIRMED)).toBe(h.clock.now());
        for (const [i, leaf] of [a, r, b].entries()) {
          const l = await h.row(leaf.transactionId);
          expect(l).toMatchObject({ state: "anchored", sequenceNumber: CONFIRMED.sequenceNumber, consensusAt: CONFIRMED.consensusAt, batchTransactionId: formed.transactionId, leafIndex: i });
          expect([...l.runningHash!]).toEqual([...CONFIRMED.runningHash]);
        }
        for (const leaf of [a, b]) {
          expect(await h.record(leaf.recordId)).toMatchObject({ anchorState: "anchored", sequenceNumber: CONFIRMED.sequenceNumber, consensusAt: CONFIRMED.consensusAt, transactionId: formed.transactionId });
        }
        // The revoked record keeps its creation's anchor.
        expect((await h.record(r.recordId)).sequenceNumber).not.toBe(CONFIRMED.sequenceNumber);
        expect(await h.journal.abandon(await h.row(formed.transactionId), "late")).toBeNull();
        expect((await h.row(a.transactionId)).state).toBe("anchored");
        expect((await h.record(a.recordId)).anchorState).toBe("anchored");
      });

      test("pending → anchored directly (consensus found through the mirror node after a crash): the leaves and records follow", async () => {
        const h = await setup(engine);
        const a = await h.creationLeaf();
        const formed = (await h.form([a.transactionId]))!;
        expect(await h.journal.grouped.toAnchoredMessage(formed, CONFIRMED)).not.toBeNull();
        expect((await h.row(a.transactionId)).state).toBe("anchored");
        expect((await h.record(a.recordId)).anchorState).toBe("anchored");
      });

      test("abandoned: each leaf abandoned in the same transaction; a creation leaf's record abandoned; a revocation leaf queued again as a waiting leaf with the same bytes, the record's revocation moved to it", async () => {
        const h = await setup(engine);
        const a = await h.creationLeaf();
        const r = await h.revocationLeaf();
        const formed = (await h.form([a.transactionId, r.transactionId]))!;
        await h.journal.grouped.toAccepted(formed, 0);
        h.clock.advance(60_000);
        expect(await h.journal.abandon(await h.row(formed.transactionId), "did not reach consensus within its validity window")).toEqual({ at: h.clock.now(), requeued: null });
        expect((await h.row(formed.transactionId)).state).toBe("abandoned");
        for (const leaf of [a, r]) expect(await h.row(leaf.transactionId)).toMatchObject({ state: "abandoned", updatedAt: h.clock.now(), batchTransactionId: formed.transactionId });
        expect((await h.record(a.recordId)).anchorState).toBe("abandoned");
        const again = (await h.rows()).filter((x) => x.kind === "revocation_message" && x.recordId === r.recordId && x.state === "pending");
        expect(again).toHaveLength(1);
        const next = again[0]!;
        expect(next).toMatchObject({ batchLeaf: 1, batchTransactionId: null, leafIndex: null, inclusionPath: null, orgId: h.org.id, topicId: TOPIC, attempts: 0, signedBytes: null, createdAt: h.clock.now() });
        expect(next.transactionId).not.toBe(r.transactionId);
        expect(Buffer.from(next.message!).equals(Buffer.from((await h.row(r.transactionId)).message!))).toBe(true);
        expect((await h.record(r.recordId)).revocationTransactionId).toBe(next.transactionId);
        // A waiting leaf: it goes in the next batch, never on its own.
        expect((await h.journal.batchableLeaves(h.org.id, 10)).map((x) => x.transactionId)).toEqual([next.transactionId]);
        expect(await h.journal.due(10, new Set())).toEqual([]);
        expect(await h.journal.abandon(await h.row(formed.transactionId), "again")).toBeNull();
      });

      test("a waiting leaf abandoned (its window closed before a batch took it): as an ordinary message, its record abandoned, or its revocation queued again as a waiting leaf", async () => {
        const h = await setup(engine);
        const a = await h.creationLeaf();
        const r = await h.revocationLeaf();
        h.clock.advance(VALID_SECONDS * 1000);
        expect(await h.journal.abandon(await h.row(a.transactionId), "the validity window closed")).toEqual({ at: h.clock.now(), requeued: null });
        expect((await h.record(a.recordId)).anchorState).toBe("abandoned");
        const done = (await h.journal.abandon(await h.row(r.transactionId), "the validity window closed"))!;
        expect(done.requeued).not.toBeNull();
        expect(await h.row(done.requeued!)).toMatchObject({ kind: "revocation_message", batchLeaf: 1, batchTransactionId: null, state: "pending" });
        expect((await h.record(r.recordId)).revocationTransactionId).toBe(done.requeued!);
        expect(await h.journal.waitingLeaves()).toEqual([{ orgId: h.org.id, leaves: 1, oldestAt: h.clock.now() }]);
      });
    });
  });
}

describe("the anchor journal's batches on PostgreSQL only", () => {
  test("PostgreSQL only (the leader's epoch): formBatch by a node that does not lead, or no longer leads, is refused and changes nothing", async () => {
    const h = await setup(POSTGRES);
    const a = await h.creationLeaf();
    const batch = await h.batchOf([a.transactionId]);
    const before = await snapshot(h);
    h.setEpoch(null);
    await expect(h.journal.formBatch(batch)).rejects.toBeInstanceOf(NotLeadingError);
    h.setEpoch(1);
    await h.store.write(function* (tx) {
      yield* q(tx.execute(sql`UPDATE anchor_leader SET epoch = 2, node = 'other' WHERE id = 1`));
    });
    await expect(h.journal.formBatch(batch)).rejects.toBeInstanceOf(DeposedError);
    expect(await snapshot(h)).toEqual(before);
    expect(await h.journal.waitingLeaves()).toEqual([{ orgId: h.org.id, leaves: 1, oldestAt: (await h.row(a.transactionId)).createdAt }]);
  });

  test("PostgreSQL only (several connections): two batches formed at once over one leaf: one takes it, the other is refused and leaves nothing behind", async () => {
    const h = await setup(POSTGRES);
    const leaves = [];
    for (let i = 0; i < 5; i++) leaves.push((await h.creationLeaf()).transactionId);
    const outcomes = await Promise.all([h.journal.formBatch(await h.batchOf(leaves, 1)), h.journal.formBatch(await h.batchOf([...leaves].reverse(), 2))]);
    expect(outcomes.filter((o) => o !== null)).toHaveLength(1);
    expect(await h.batches()).toHaveLength(1);
    const [formed] = await h.batches();
    for (const id of leaves) expect((await h.row(id)).batchTransactionId).toBe(formed!.transactionId);
  });
});
