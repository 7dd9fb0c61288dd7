/**
 * The anchor journal's batches (the `Journal` port's "Batches", src/anchoring/journal/ports.ts;
 * docs/anchoring.md "Batches") on both storage engines: a record or revocation joining an open
 * batch in its own write (anchoring/queue.ts `pendingMessage`), the open batches read, a batch
 * closed (and refused, changing nothing), the queue's rules for open batches and leaves, what a
 * batch's acceptance, anchoring and abandonment carry to its leaves and their records, and a batch
 * put again (`rebatch`). Each test runs on the embedded SQLite and on a real PostgreSQL server
 * (where the journal's changes are fenced by the leader's epoch: this node leads at epoch 1); what
 * only PostgreSQL has, several connections at once and its fence, is at the end. Records are
 * written as the records capability writes them: the record carries its leaf's transaction id
 * until its message joins a batch, in the next write here (in one with it, in the service). No
 * ledger: a database and a manual clock.
 */
import { describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import type { BatchBuilder, BatchLeaf, BatchPolicy, Journal, LedgerTransactionRow } from "../../src/anchoring/journal/ports.ts";
import { journalRules, WAITING_RECHECK_MS } from "../../src/anchoring/journal/rules.ts";
import { pendingMessage } from "../../src/anchoring/queue.ts";
import { createTransactionIds } from "../../src/anchoring/transaction-ids.ts";
import { createSigner } from "../../src/crypto/index.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { DeposedError } from "../../src/storage/pg-cluster.ts";
import { NotLeadingError } from "../../src/storage/postgres/journal.ts";
import { INSERT_OPEN_BATCH } from "../../src/storage/statements.ts";
import { changes, q } from "../../src/storage/store.ts";
import { journalDrivers } from "../support/drivers.ts";
import { createStoreRecordsFixture, docHashOf, TOPIC_ID as TOPIC, type FixtureOrg } from "../support/records-fixture.ts";
import { useStoreEngines, type StoreEngine } from "../support/store-engines.ts";

/** Each test's databases are closed and dropped after it: a PostgreSQL server allows so many connections. */
const { engines: ENGINES } = useStoreEngines({ eachTest: true });
const POSTGRES = ENGINES[1];
const signer = createSigner({ masterKey: new Uint8Array(32).fill(7), workers: 0 });
const CONFIRMED = { sequenceNumber: 41, consensusAt: "1767225603.000000041", runningHash: new Uint8Array(48).fill(5) };
const VALID_SECONDS = 30;
/** Small batches, so that a test fills one. */
const POLICY: BatchPolicy = { windowMs: 250, max: 3, maxRevocations: 2 };
const encode = (text: string) => new TextEncoder().encode(text);
const same = (a: Uint8Array | null, b: Uint8Array | null) => a !== null && b !== null && Buffer.from(a).equals(Buffer.from(b));
/** A leaf's inclusion path in a test batch: two node hashes of 32 bytes. */
const pathOf = (i: number) => new Uint8Array(64).fill(i + 1);

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
  const journal: Journal = journalDrivers(store, { epoch: () => epoch }).journal(journalRules(clock, ids, POLICY));
  const batches = { policy: POLICY, newBatchId: ids };
  const withTopic = async (name: string): Promise<FixtureOrg> => {
    const org = await fixture.createOrg(`${name} ${Math.random()}`, { addon: true });
    await store.write((tx, t) => q(tx.update(t.organisations).set({ topicId: TOPIC }).where(eq(t.organisations.id, org.id))));
    return org;
  };
  const org = await withTopic("Org");

  const row = async (id: string): Promise<LedgerTransactionRow> =>
    (await store.read((db, t) => q(db.select().from(t.ledgerTransactions).where(eq(t.ledgerTransactions.transactionId, id)))))[0] as unknown as LedgerTransactionRow;
  const rows = async () => (await store.read((db, t) => q(db.select().from(t.ledgerTransactions)))) as unknown as LedgerTransactionRow[];
  const batchRows = async () => (await rows()).filter((r) => r.kind === "batch_message");
  const leavesOf = async (batchId: string) =>
    (await rows()).filter((r) => r.batchTransactionId === batchId).sort((a, b) => a.createdAt - b.createdAt || a.transactionId.localeCompare(b.transactionId));
  const record = async (id: string) => (await store.read((db, t) => q(db.select().from(t.records).where(eq(t.records.id, id)))))[0]!;
  const setRow = (id: string, values: Partial<LedgerTransactionRow>) =>
    store.write((tx, t) => q(tx.update(t.ledgerTransactions).set(values).where(eq(t.ledgerTransactions.transactionId, id))));

  interface Leaf {
    readonly recordId: string;
    /** The leaf's own row. */
    readonly leafId: string;
    /** The batch it joined: what the record (or its revocation) carries. */
    readonly batchId: string;
  }

  /** A pending record, then its creation message, which joins its open batch (`pendingMessage`), as the records capability writes them. */
  async function creationLeaf(options: { of?: FixtureOrg; key?: Uint8Array; seal?: Uint8Array } = {}): Promise<Leaf> {
    const of = options.of ?? org;
    const reserved = ids();
    const recordId = await fixture.addOrgRecord(of, { docHash: docHashOf(Bun.randomUUIDv7()), anchorState: "pending", transactionId: reserved.transactionId });
    const now = clock.now();
    const batchId = await store.write((tx, t) =>
      pendingMessage(tx, t, {
        kind: "record_message",
        ...reserved,
        orgId: of.id,
        recordId,
        topicId: TOPIC,
        message: encode(`{"v":1,"type":"record","id":"${recordId}"}`),
        now,
        keyFingerprint: options.key ?? of.systemKey.fingerprint,
        sealFingerprint: options.seal ?? fixture.seal.fingerprint,
        batches,
      }),
    );
    return { recordId, leafId: reserved.transactionId, batchId };
  }

  /** An anchored record (sent before batches) revoked, its revocation's message joining the organisation's open batch of revocations, in one write. */
  async function revocationLeaf(of: FixtureOrg = org): Promise<Leaf> {
    const recordId = await fixture.addOrgRecord(of, { docHash: docHashOf(Bun.randomUUIDv7()), anchorState: "anchored" });
    const reserved = ids();
    const now = clock.now();
    const batchId = await store.write(function* (tx, t) {
      yield* q(tx.update(t.records).set({ revokedAt: now, revocationReason: "SUPERSEDED", revocationTransactionId: reserved.transactionId }).where(eq(t.records.id, recordId)));
      return yield* pendingMessage(tx, t, { kind: "revocation_message", ...reserved, orgId: of.id, recordId, topicId: TOPIC, message: encode(`{"v":1,"type":"revocation","id":"${recordId}"}`), now, batches });
    });
    return { recordId, leafId: reserved.transactionId, batchId };
  }

  /** A pending record and its message sent on its own (`batchLeaf: 0`), as every one was before batches. */
  async function ordinaryRecord(): Promise<{ recordId: string; transactionId: string }> {
    const reserved = ids();
    const recordId = await fixture.addOrgRecord(org, { docHash: docHashOf(Bun.randomUUIDv7()), anchorState: "pending", transactionId: reserved.transactionId });
    const now = clock.now();
    await store.write((tx, t) =>
      pendingMessage(tx, t, { kind: "record_message", ...reserved, orgId: org.id, recordId, topicId: TOPIC, message: encode("{}"), now, keyFingerprint: org.systemKey.fingerprint, batchLeaf: 0 }),
    );
    return { recordId, transactionId: reserved.transactionId };
  }

  /** An open batch no leaf joined (its first leaf's write undone, say): the statement `pendingMessage` opens one with. */
  async function emptyOpenBatch(): Promise<string> {
    const id = ids();
    const now = clock.now();
    await store.write(() => q(changes(INSERT_OPEN_BATCH, id.transactionId, org.id, TOPIC, org.systemKey.fingerprint, fixture.seal.fingerprint, id.validStartMs, id.validSeconds, now + POLICY.windowMs, now, now)));
    return id.transactionId;
  }

  /** The organisation's key announced with the fixture's seal key, and anchored: its batches of records may go. */
  async function announceAnchored(of: FixtureOrg = org): Promise<string> {
    const a = (await journal.queueAnnouncement(of.id, { keyFingerprint: of.systemKey.fingerprint, generation: 0, sealFingerprint: fixture.seal.fingerprint, message: encode(`{"v":1,"type":"key","n":"${Bun.randomUUIDv7()}"}`) }))!;
    await journal.grouped.toAnchoredMessage(a, { ...CONFIRMED, sequenceNumber: 1 });
    return a.transactionId;
  }

  /** A builder that remembers what it was given: a message naming the sequence and size, leaf `i`'s path `pathOf(i)`. */
  const built: { orgId: string; sequence: number; leaves: readonly BatchLeaf[] }[] = [];
  const build: BatchBuilder = (batch) => {
    built.push(batch);
    return { message: encode(`{"v":1,"type":"batch","batch":${batch.sequence},"size":${batch.leaves.length}}`), paths: batch.leaves.map((_, i) => pathOf(i)) };
  };
  const close = async (batchId: string) => journal.closeBatch(await row(batchId), build);

  return {
    store, clock, fixture, ids, journal, org, withTopic, row, rows, batchRows, leavesOf, record, setRow, creationLeaf, revocationLeaf, ordinaryRecord, emptyOpenBatch,
    announceAnchored, built, build, close, batches, setEpoch: (e: number | null) => (epoch = e),
  };
}

type Harness = Awaited<ReturnType<typeof setup>>;

/** Everything the tests look at, to show that a refused change changed nothing. */
async function snapshot(h: Harness) {
  const all = await h.store.read(function* (db, t) {
    return [yield* q(db.select().from(t.ledgerTransactions)), yield* q(db.select().from(t.records))] as const;
  });
  const byId = <T extends object>(list: readonly T[], key: keyof T) => [...list].sort((a, b) => String(a[key]).localeCompare(String(b[key])));
  return { ledger: byId(all[0], "transactionId"), records: byId(all[1], "id") };
}

for (const engine of ENGINES) {
  describe(`the anchor journal's batches on ${engine.name}`, () => {
    describe("joining, in the record's or revocation's own write", () => {
      test("a record message opens its organisation's batch for its key and seal key: the batch open, one leaf counted, its window's end due; the leaf pending under it; the record carries the batch's id", async () => {
        const h = await setup(engine);
        const t0 = h.clock.now();
        const a = await h.creationLeaf();
        expect(a.batchId).not.toBe(a.leafId);
        const batch = await h.row(a.batchId);
        expect(batch).toMatchObject({ kind: "batch_message", state: "open", orgId: h.org.id, recordId: null, topicId: TOPIC, message: null, batchLeaf: 0, batchSize: 1, batchSequence: null, attempts: 0, nextAttemptAt: t0 + POLICY.windowMs, createdAt: t0 });
        expect(same(batch.keyFingerprint, h.org.systemKey.fingerprint)).toBe(true);
        expect(same(batch.sealFingerprint, h.fixture.seal.fingerprint)).toBe(true);
        expect(await h.row(a.leafId)).toMatchObject({ kind: "record_message", state: "pending", batchLeaf: 1, batchTransactionId: a.batchId, leafIndex: null, inclusionPath: null, recordId: a.recordId });
        expect((await h.record(a.recordId)).transactionId).toBe(a.batchId);
      });

      test("a second record of the same key and seal key joins the same batch; another key, another seal key or another organisation opens its own", async () => {
        const h = await setup(engine);
        const a = await h.creationLeaf();
        h.clock.advance(10);
        const b = await h.creationLeaf();
        expect(b.batchId).toBe(a.batchId);
        expect((await h.row(a.batchId)).batchSize).toBe(2);
        expect((await h.record(b.recordId)).transactionId).toBe(a.batchId);
        const person = await h.fixture.createPerson();
        const otherKey = await h.creationLeaf({ key: person.fingerprint });
        const otherSeal = await h.creationLeaf({ seal: new Uint8Array(32).fill(9) });
        const otherOrg = await h.creationLeaf({ of: await h.withTopic("Other") });
        const opened = new Set([a.batchId, otherKey.batchId, otherSeal.batchId, otherOrg.batchId]);
        expect(opened.size).toBe(4);
        for (const id of [otherKey.batchId, otherSeal.batchId, otherOrg.batchId]) expect(await h.row(id)).toMatchObject({ state: "open", batchSize: 1 });
        expect(same((await h.row(otherKey.batchId)).keyFingerprint, person.fingerprint)).toBe(true);
        expect(same((await h.row(otherSeal.batchId)).sealFingerprint, new Uint8Array(32).fill(9))).toBe(true);
        expect((await h.row(otherOrg.batchId)).orgId).not.toBe(h.org.id);
      });

      test("a full batch (`max` leaves) takes no more: the next record opens another", async () => {
        const h = await setup(engine);
        const joined: string[] = [];
        for (let i = 0; i < POLICY.max + 1; i++) joined.push((await h.creationLeaf()).batchId);
        expect(joined.slice(0, POLICY.max).every((id) => id === joined[0])).toBe(true);
        expect(joined[POLICY.max]).not.toBe(joined[0]);
        expect((await h.row(joined[0]!)).batchSize).toBe(POLICY.max);
        expect((await h.row(joined[POLICY.max]!)).batchSize).toBe(1);
      });

      test("a batch whose window has ended takes no more, closed or not: the next record (or revocation) opens another", async () => {
        const h = await setup(engine);
        const a = await h.creationLeaf();
        const r = await h.revocationLeaf();
        h.clock.advance(POLICY.windowMs);
        const b = await h.creationLeaf();
        const r2 = await h.revocationLeaf();
        expect(b.batchId).not.toBe(a.batchId);
        expect(r2.batchId).not.toBe(r.batchId);
        for (const id of [a.batchId, r.batchId]) expect(await h.row(id)).toMatchObject({ state: "open", batchSize: 1 });
      });

      test("a revocation joins its organisation's batch of revocations (no key, no seal key), at most `maxRevocations` in one; the record's revocation carries the batch's id; records never join it", async () => {
        const h = await setup(engine);
        const record = await h.creationLeaf();
        const r = [await h.revocationLeaf(), await h.revocationLeaf(), await h.revocationLeaf()];
        expect(r[1]!.batchId).toBe(r[0]!.batchId);
        expect(r[2]!.batchId).not.toBe(r[0]!.batchId);
        expect(r[0]!.batchId).not.toBe(record.batchId);
        const batch = await h.row(r[0]!.batchId);
        expect(batch).toMatchObject({ kind: "batch_message", state: "open", keyFingerprint: null, sealFingerprint: null, batchSize: POLICY.maxRevocations });
        for (const x of r) {
          expect(await h.row(x.leafId)).toMatchObject({ kind: "revocation_message", state: "pending", batchLeaf: 1, batchTransactionId: x.batchId });
          expect((await h.record(x.recordId)).revocationTransactionId).toBe(x.batchId);
        }
        expect((await h.row(record.batchId)).batchSize).toBe(1);
      });

      test("a message sent on its own (`batchLeaf: 0`, rows of an earlier release) joins no batch: the record keeps its own transaction", async () => {
        const h = await setup(engine);
        const o = await h.ordinaryRecord();
        expect(await h.row(o.transactionId)).toMatchObject({ batchLeaf: 0, batchTransactionId: null, state: "pending" });
        expect(await h.batchRows()).toEqual([]);
        expect((await h.record(o.recordId)).transactionId).toBe(o.transactionId);
      });
    });

    describe("the open batches", () => {
      test("openBatches: every open batch, soonest window end first, with the leaves joined so far; a closed one no longer", async () => {
        const h = await setup(engine);
        expect(await h.journal.openBatches()).toEqual([]);
        const a = await h.creationLeaf();
        await h.creationLeaf();
        h.clock.advance(100);
        const r = await h.revocationLeaf();
        const open = await h.journal.openBatches();
        expect(open.map((b) => [b.transactionId, b.batchSize, b.nextAttemptAt])).toEqual([
          [a.batchId, 2, (await h.row(a.batchId)).nextAttemptAt],
          [r.batchId, 1, h.clock.now() + POLICY.windowMs],
        ]);
        expect(open.every((b) => b.state === "open" && b.kind === "batch_message")).toBe(true);
        await h.close(a.batchId);
        expect((await h.journal.openBatches()).map((b) => b.transactionId)).toEqual([r.batchId]);
      });
    });

    describe("closing a batch", () => {
      test("stores the message, the organisation's first sequence (1), the number of leaves, pending and due now; each leaf its index and path in the order it joined; `build` given them once", async () => {
        const h = await setup(engine);
        const leaves = [];
        for (let i = 0; i < 3; i++) {
          leaves.push(await h.creationLeaf());
          h.clock.advance(5);
        }
        const batchId = leaves[0]!.batchId;
        h.clock.advance(POLICY.windowMs);
        const closed = (await h.close(batchId))!;
        expect(h.built).toHaveLength(1);
        expect(h.built[0]!.orgId).toBe(h.org.id);
        expect(h.built[0]!.sequence).toBe(1);
        expect(h.built[0]!.leaves.map((l) => [l.kind, l.recordId, new TextDecoder().decode(l.message)])).toEqual(
          leaves.map((l) => ["record_message", l.recordId, `{"v":1,"type":"record","id":"${l.recordId}"}`]),
        );
        const message = encode(`{"v":1,"type":"batch","batch":1,"size":3}`);
        const stored = await h.row(batchId);
        expect(stored).toMatchObject({ state: "pending", batchSequence: 1, batchSize: 3, nextAttemptAt: h.clock.now(), updatedAt: h.clock.now(), attempts: 0, signedBytes: null });
        expect(same(stored.message, message)).toBe(true);
        expect(closed).toMatchObject({ transactionId: batchId, kind: "batch_message", state: "pending", batchSequence: 1, batchSize: 3, nextAttemptAt: h.clock.now(), orgId: h.org.id, topicId: TOPIC });
        expect(same(closed.message, message)).toBe(true);
        for (const [i, l] of leaves.entries()) {
          const leaf = await h.row(l.leafId);
          expect(leaf).toMatchObject({ state: "pending", leafIndex: i, batchTransactionId: batchId });
          expect(same(leaf.inclusionPath, pathOf(i))).toBe(true);
        }
        expect(await h.journal.openBatches()).toEqual([]);
      });

      test("leaves joined at the same time are in transaction id order", async () => {
        const h = await setup(engine);
        const leaves = [await h.creationLeaf(), await h.creationLeaf()];
        await h.close(leaves[0]!.batchId);
        const order = [...leaves].sort((a, b) => (a.leafId < b.leafId ? -1 : 1));
        expect(h.built[0]!.leaves.map((l) => l.recordId)).toEqual(order.map((l) => l.recordId));
        for (const [i, l] of order.entries()) expect((await h.row(l.leafId)).leafIndex).toBe(i);
      });

      test("the sequence is one more than the organisation's highest, each organisation its own; an abandoned batch leaves its gap", async () => {
        const h = await setup(engine);
        const first = (await h.close((await h.creationLeaf()).batchId))!;
        const revocations = (await h.close((await h.revocationLeaf()).batchId))!;
        const other = await h.withTopic("Other");
        const ofOther = (await h.close((await h.creationLeaf({ of: other })).batchId))!;
        expect([first.batchSequence, revocations.batchSequence, ofOther.batchSequence]).toEqual([1, 2, 1]);
        expect(await h.journal.abandon(await h.row(revocations.transactionId), "did not reach consensus")).not.toBeNull();
        expect((await h.close((await h.creationLeaf()).batchId))!.batchSequence).toBe(3);
      });

      test("a batch no longer open is refused (null): `build` is not called and nothing changes", async () => {
        const h = await setup(engine);
        const a = await h.creationLeaf();
        const open = await h.row(a.batchId);
        expect(await h.journal.closeBatch(open, h.build)).not.toBeNull();
        const before = await snapshot(h);
        h.clock.advance(1000);
        expect(await h.journal.closeBatch(open, h.build)).toBeNull();
        expect(h.built).toHaveLength(1);
        expect(await snapshot(h)).toEqual(before);
      });

      test("a `build` that throws changes nothing: the batch stays open with its leaves, and closes later", async () => {
        const h = await setup(engine);
        const a = await h.creationLeaf();
        await h.creationLeaf();
        const before = await snapshot(h);
        h.clock.advance(1000);
        const failing: BatchBuilder = () => {
          throw new Error("the builder failed");
        };
        const attempt = async () => h.journal.closeBatch(await h.row(a.batchId), failing);
        await expect(attempt()).rejects.toThrow("the builder failed");
        expect(await snapshot(h)).toEqual(before);
        expect((await h.close(a.batchId))!.batchSize).toBe(2);
      });

      test("an open batch no leaf joined is abandoned instead (null); nothing is built", async () => {
        const h = await setup(engine);
        const id = await h.emptyOpenBatch();
        expect((await h.journal.openBatches()).map((b) => b.transactionId)).toEqual([id]);
        expect(await h.close(id)).toBeNull();
        expect(h.built).toEqual([]);
        expect(await h.row(id)).toMatchObject({ state: "abandoned", message: null, batchSequence: null });
        expect(await h.journal.openBatches()).toEqual([]);
      });
    });

    describe("the queue's rules", () => {
      test("an open batch is never due, but nextDueAt counts its window's end; its leaves are never due", async () => {
        const h = await setup(engine);
        await h.announceAnchored();
        const a = await h.creationLeaf();
        expect(await h.journal.nextDueAt()).toBe(h.clock.now() + POLICY.windowMs);
        h.clock.advance(POLICY.windowMs * 4);
        expect(await h.journal.due(10, new Set())).toEqual([]);
        expect(await h.journal.nextDueAt()).toBe((await h.row(a.batchId)).nextAttemptAt);
        await h.close(a.batchId);
        expect((await h.journal.due(10, new Set())).map((r) => r.transactionId)).toEqual([a.batchId]);
      });

      test("a closed batch of records is due only once its key's announcement naming its seal key is anchored; the anchored announcement wakes it", async () => {
        const h = await setup(engine);
        const a = await h.creationLeaf();
        const otherSeal = await h.creationLeaf({ seal: new Uint8Array(32).fill(9) });
        await h.close(a.batchId);
        await h.close(otherSeal.batchId);
        expect(await h.journal.due(10, new Set())).toEqual([]);
        // Set aside: looked at again later.
        expect(await h.journal.nextDueAt()).toBe(h.clock.now() + WAITING_RECHECK_MS);
        h.clock.advance(1000);
        await h.announceAnchored();
        // Woken at once; the batch of another seal key still waits for that seal key's announcement.
        expect((await h.journal.due(10, new Set())).map((r) => r.transactionId)).toEqual([a.batchId]);
        expect((await h.row(a.batchId)).nextAttemptAt).toBe(h.clock.now());
      });

      test("a closed batch of revocations is due at once, without an announcement", async () => {
        const h = await setup(engine);
        const r = await h.revocationLeaf();
        await h.close(r.batchId);
        expect((await h.journal.due(10, new Set())).map((x) => x.transactionId)).toEqual([r.batchId]);
      });

      test("leaves are never in due, nextDueAt, unfinishedMessage, topicsAwaitingConfirmation or unsentPastCutoff; retryAllNow leaves them and open batches alone", async () => {
        const h = await setup(engine);
        await h.announceAnchored();
        const a = await h.creationLeaf();
        const r = await h.revocationLeaf();
        const open = await h.row(r.batchId);
        await h.close(a.batchId);
        await h.journal.grouped.beginAttempt(await h.row(a.batchId), encode("signed batch"));
        // Leaves looking as if they had been sent themselves, due long ago, then later.
        for (const leaf of [a.leafId, r.leafId]) await h.setRow(leaf, { attempts: 1, nextAttemptAt: 0 });
        expect((await h.journal.due(10, new Set())).map((x) => x.transactionId)).toEqual([a.batchId]);
        expect(await h.journal.nextDueAt()).toBe(h.clock.now());
        for (const leaf of [a.leafId, r.leafId]) expect(await h.journal.unfinishedMessage(leaf)).toBeNull();
        expect(await h.journal.unfinishedMessage(a.batchId)).not.toBeNull();
        expect(await h.journal.unfinishedMessage(r.batchId)).toBeNull(); // open: no message yet
        expect(await h.journal.topicsAwaitingConfirmation()).toEqual([{ topicId: TOPIC, validStartMs: (await h.row(a.batchId)).validStartMs }]);
        h.clock.advance(VALID_SECONDS * 1000 * 10);
        for (const leaf of [a.leafId, r.leafId]) await h.setRow(leaf, { attempts: 0, nextAttemptAt: h.clock.now() + 3_600_000 });
        await h.setRow(r.batchId, { nextAttemptAt: h.clock.now() + 3_600_000 });
        const past = (await h.journal.unsentPastCutoff(0, 10)).map((x) => x.transactionId);
        expect(past).not.toContain(a.leafId);
        expect(past).not.toContain(r.leafId);
        await h.journal.retryAllNow();
        for (const leaf of [a.leafId, r.leafId]) expect((await h.row(leaf)).nextAttemptAt).toBe(h.clock.now() + 3_600_000);
        expect(await h.row(r.batchId)).toMatchObject({ state: "open", nextAttemptAt: h.clock.now() + 3_600_000, batchSize: open.batchSize });
      });

      test("unsentPastCutoff: an open batch whose validity window closes is returned (after the ordinary rows), never its leaves", async () => {
        const h = await setup(engine);
        const o = await h.ordinaryRecord();
        const a = await h.creationLeaf();
        expect(await h.journal.unsentPastCutoff(0, 10)).toEqual([]);
        h.clock.advance(VALID_SECONDS * 1000 + 2);
        expect((await h.journal.unsentPastCutoff(0, 10)).map((x) => x.transactionId)).toEqual([o.transactionId, a.batchId]);
        expect((await h.journal.unsentPastCutoff(0, 1)).map((x) => x.transactionId)).toEqual([o.transactionId]);
        const [, batch] = await h.journal.unsentPastCutoff(0, 10);
        expect(batch).toMatchObject({ state: "open", kind: "batch_message" });
        // The loop abandons it: its record with it.
        expect(await h.journal.abandon(batch!, "its validity window closed before it was sent")).toEqual({ at: h.clock.now(), requeued: null });
        expect((await h.record(a.recordId)).anchorState).toBe("abandoned");
      });

      test("unfinished: an open or pending batch counts its leaves as pending, an accepted one as accepted; a row sent on its own counts one; leaves not alone; the oldest is the oldest open or pending row's", async () => {
        const h = await setup(engine);
        expect(await h.journal.unfinished()).toMatchObject({ pending: 0, accepted: 0, oldestPendingAt: null });
        const t0 = h.clock.now();
        const accepted = await h.creationLeaf();
        await h.close(accepted.batchId);
        await h.journal.grouped.toAccepted(await h.row(accepted.batchId), 60_000);
        h.clock.advance(10);
        const t1 = h.clock.now();
        const pending = [await h.revocationLeaf(), await h.revocationLeaf()];
        await h.close(pending[0]!.batchId);
        h.clock.advance(10);
        const open = [await h.creationLeaf(), await h.creationLeaf(), await h.creationLeaf()];
        const ordinary = await h.ordinaryRecord();
        await h.journal.grouped.toAccepted(await h.row(ordinary.transactionId), 60_000);
        await h.ordinaryRecord();
        expect(t0).toBeLessThan(t1);
        expect(await h.journal.unfinished()).toMatchObject({ pending: 2 + 3 + 1, accepted: 1 + 1, oldestPendingAt: t1 });
        expect((await h.row(open[0]!.batchId)).batchSize).toBe(3);
      });
    });

    describe("what a batch's state changes carry", () => {
      test("accepted: its pending leaves accepted, and their pending records", async () => {
        const h = await setup(engine);
        const a = await h.creationLeaf();
        const b = await h.creationLeaf();
        const closed = (await h.close(a.batchId))!;
        h.clock.advance(50);
        expect(await h.journal.grouped.toAccepted(closed, 1000)).toBe(h.clock.now());
        expect(await h.row(a.batchId)).toMatchObject({ state: "accepted", nextAttemptAt: h.clock.now() + 1000 });
        for (const l of [a, b]) {
          expect(await h.row(l.leafId)).toMatchObject({ state: "accepted", updatedAt: h.clock.now() });
          expect((await h.record(l.recordId)).anchorState).toBe("accepted");
        }
        expect(await h.journal.grouped.toAccepted(closed, 1000)).toBeNull();
      });

      test("anchored: its leaves anchored with its sequence number, consensus time and running hash; their records with its sequence number and consensus time; a revocation's record keeps its state", async () => {
        const h = await setup(engine);
        const a = await h.creationLeaf();
        const closed = (await h.close(a.batchId))!;
        await h.journal.grouped.toAccepted(closed, 0);
        h.clock.advance(50);
        expect(await h.journal.grouped.toAnchoredMessage(await h.row(a.batchId), CONFIRMED)).toBe(h.clock.now());
        const leaf = await h.row(a.leafId);
        expect(leaf).toMatchObject({ state: "anchored", sequenceNumber: CONFIRMED.sequenceNumber, consensusAt: CONFIRMED.consensusAt, updatedAt: h.clock.now() });
        expect(same(leaf.runningHash, CONFIRMED.runningHash)).toBe(true);
        expect(await h.record(a.recordId)).toMatchObject({ anchorState: "anchored", sequenceNumber: CONFIRMED.sequenceNumber, consensusAt: CONFIRMED.consensusAt, transactionId: a.batchId });
        const r = await h.revocationLeaf();
        await h.close(r.batchId);
        expect(await h.journal.grouped.toAnchoredMessage(await h.row(r.batchId), { ...CONFIRMED, sequenceNumber: 42 })).not.toBeNull();
        expect(await h.row(r.leafId)).toMatchObject({ state: "anchored", sequenceNumber: 42 });
        expect(await h.record(r.recordId)).toMatchObject({ anchorState: "anchored", revocationTransactionId: r.batchId });
        expect((await h.record(r.recordId)).sequenceNumber).not.toBe(42);
      });

      test("pending → anchored directly (consensus found through the mirror node after a crash): the leaves and records follow", async () => {
        const h = await setup(engine);
        const a = await h.creationLeaf();
        const closed = (await h.close(a.batchId))!;
        expect(await h.journal.grouped.toAnchoredMessage(closed, CONFIRMED)).not.toBeNull();
        expect((await h.row(a.leafId)).state).toBe("anchored");
        expect((await h.record(a.recordId)).anchorState).toBe("anchored");
      });

      for (const from of ["open", "pending", "accepted"] as const) {
        test(`abandoned from ${from}: each leaf abandoned in the same transaction; a creation leaf's record abandoned; \`requeued\` null`, async () => {
          const h = await setup(engine);
          const a = await h.creationLeaf();
          const b = await h.creationLeaf();
          if (from !== "open") await h.close(a.batchId);
          if (from === "accepted") await h.journal.grouped.toAccepted(await h.row(a.batchId), 0);
          h.clock.advance(60_000);
          expect(await h.journal.abandon(await h.row(a.batchId), "did not reach consensus")).toEqual({ at: h.clock.now(), requeued: null });
          expect(await h.row(a.batchId)).toMatchObject({ state: "abandoned", lastError: "did not reach consensus" });
          for (const l of [a, b]) {
            expect(await h.row(l.leafId)).toMatchObject({ state: "abandoned", updatedAt: h.clock.now(), batchTransactionId: a.batchId });
            expect((await h.record(l.recordId)).anchorState).toBe("abandoned");
          }
          expect(await h.journal.abandon(await h.row(a.batchId), "again")).toBeNull();
          // The next record opens a new batch.
          expect((await h.creationLeaf()).batchId).not.toBe(a.batchId);
        });

        test(`abandoned from ${from}: a revocation leaf queued again (same bytes, a new leaf) in an open batch of revocations, the record's revocation moved to it`, async () => {
          const h = await setup(engine);
          const r = await h.revocationLeaf();
          const r2 = await h.revocationLeaf();
          if (from !== "open") await h.close(r.batchId);
          if (from === "accepted") await h.journal.grouped.toAccepted(await h.row(r.batchId), 0);
          h.clock.advance(60_000);
          expect(await h.journal.abandon(await h.row(r.batchId), "did not reach consensus")).toEqual({ at: h.clock.now(), requeued: null });
          const open = await h.journal.openBatches();
          expect(open).toHaveLength(1);
          const into = open[0]!;
          expect(into).toMatchObject({ kind: "batch_message", state: "open", keyFingerprint: null, sealFingerprint: null, batchSize: 2, orgId: h.org.id, nextAttemptAt: h.clock.now() + POLICY.windowMs });
          expect(into.transactionId).not.toBe(r.batchId);
          const again = await h.leavesOf(into.transactionId);
          expect(again.map((x) => x.recordId).sort()).toEqual([r.recordId, r2.recordId].sort());
          for (const l of [r, r2]) {
            const old = await h.row(l.leafId);
            expect(old).toMatchObject({ state: "abandoned", batchTransactionId: r.batchId });
            const next = again.find((x) => x.recordId === l.recordId)!;
            expect(next).toMatchObject({ kind: "revocation_message", state: "pending", batchLeaf: 1, leafIndex: null, inclusionPath: null, attempts: 0, signedBytes: null, createdAt: h.clock.now(), topicId: TOPIC });
            expect(next.transactionId).not.toBe(l.leafId);
            expect(same(next.message, old.message)).toBe(true);
            expect((await h.record(l.recordId)).revocationTransactionId).toBe(into.transactionId);
          }
          // It closes and goes as any batch of revocations.
          expect((await h.close(into.transactionId))!.batchSize).toBe(2);
        });
      }

      test("a revocation queued again joins an open batch of revocations with room, and opens another once it is full", async () => {
        const h = await setup(engine);
        const r = await h.revocationLeaf();
        const r2 = await h.revocationLeaf();
        await h.close(r.batchId);
        const waiting = await h.revocationLeaf(); // a new open batch of revocations, one leaf
        await h.journal.abandon(await h.row(r.batchId), "did not reach consensus");
        const open = await h.journal.openBatches();
        expect(open.map((b) => b.batchSize)).toEqual([POLICY.maxRevocations, 1]);
        expect(open[0]!.transactionId).toBe(waiting.batchId);
        const carried = [(await h.record(r.recordId)).revocationTransactionId, (await h.record(r2.recordId)).revocationTransactionId];
        expect(carried.sort()).toEqual([open[0]!.transactionId, open[1]!.transactionId].sort());
      });

      for (const from of ["pending", "accepted"] as const) {
        test(`rebatch from ${from} (its transaction carried other bytes): abandoned; each leaf put again, a new leaf with the same bytes, in an open batch of its key and seal key (a revocation's: of revocations); its record follows, a creation pending again`, async () => {
          const h = await setup(engine);
          const a = await h.creationLeaf();
          const b = await h.creationLeaf();
          const r = await h.revocationLeaf();
          await h.close(a.batchId);
          await h.close(r.batchId);
          if (from === "accepted") for (const id of [a.batchId, r.batchId]) await h.journal.grouped.toAccepted(await h.row(id), 0);
          h.clock.advance(1000);
          const done = (await h.journal.rebatch(await h.row(a.batchId), "the bytes differ"))!;
          expect(done.at).toBe(h.clock.now());
          expect(done.batches).toHaveLength(1);
          const into = done.batches[0]!;
          expect(await h.row(a.batchId)).toMatchObject({ state: "abandoned", lastError: "the bytes differ" });
          const open = await h.row(into);
          expect(open).toMatchObject({ kind: "batch_message", state: "open", batchSize: 2, orgId: h.org.id, nextAttemptAt: h.clock.now() + POLICY.windowMs });
          expect(same(open.keyFingerprint, h.org.systemKey.fingerprint) && same(open.sealFingerprint, h.fixture.seal.fingerprint)).toBe(true);
          const again = await h.leavesOf(into);
          expect(again.map((l) => l.recordId)).toEqual([a.recordId, b.recordId]);
          for (const l of [a, b]) {
            const old = await h.row(l.leafId);
            expect(old).toMatchObject({ state: "abandoned", lastError: "its batch was put again: the bytes differ" });
            const next = again.find((x) => x.recordId === l.recordId)!;
            expect(next).toMatchObject({ kind: "record_message", state: "pending", batchLeaf: 1, leafIndex: null, inclusionPath: null, attempts: 0, createdAt: h.clock.now() });
            expect(next.transactionId).not.toBe(l.leafId);
            expect(same(next.message, old.message)).toBe(true);
            expect(await h.record(l.recordId)).toMatchObject({ transactionId: into, anchorState: "pending" });
          }
          // Once more, or an open batch: null, nothing changed.
          expect(await h.journal.rebatch(await h.row(a.batchId), "again")).toBeNull();
          expect(await h.journal.rebatch(open, "open")).toBeNull();
          // A batch of revocations: its leaves go to an open batch of revocations.
          const revocations = (await h.journal.rebatch(await h.row(r.batchId), "the bytes differ"))!;
          expect(revocations.batches).toHaveLength(1);
          expect(await h.row(revocations.batches[0]!)).toMatchObject({ state: "open", keyFingerprint: null, sealFingerprint: null, batchSize: 1 });
          expect((await h.record(r.recordId)).revocationTransactionId).toBe(revocations.batches[0]!);
          expect((await h.leavesOf(revocations.batches[0]!)).map((l) => [l.kind, l.recordId])).toEqual([["revocation_message", r.recordId]]);
        });
      }

      test("a batch abandoned carries its own leaves and records only: another open batch of the organisation, its leaves and records untouched", async () => {
        const h = await setup(engine);
        const a = await h.creationLeaf();
        const other = await h.creationLeaf({ key: (await h.fixture.createPerson()).fingerprint });
        await h.close(a.batchId);
        await h.journal.abandon(await h.row(a.batchId), "did not reach consensus");
        expect((await h.record(a.recordId)).anchorState).toBe("abandoned");
        expect((await h.record(other.recordId)).anchorState).toBe("pending");
        expect((await h.row(other.leafId)).state).toBe("pending");
        expect((await h.row(other.batchId)).state).toBe("open");
      });
    });
  });
}

describe("the anchor journal's batches on PostgreSQL only", () => {
  /** A record whose message joins its batch in a write held open (after the join, before commit) until `release`. */
  async function heldJoin(h: Harness, options: { beforeJoin?: boolean } = {}) {
    const reserved = h.ids();
    const recordId = await h.fixture.addOrgRecord(h.org, { docHash: docHashOf(Bun.randomUUIDv7()), anchorState: "pending", transactionId: reserved.transactionId });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const atGate = new Promise<void>((resolve) => (reached = resolve));
    const now = h.clock.now();
    const written = h.store.write(function* (tx, t) {
      // Its snapshot taken before the gate (SERIALIZABLE: at its first statement).
      yield* q(tx.execute(sql`SELECT 1`));
      if (options.beforeJoin === true) {
        reached();
        yield* q(gate);
      }
      const batchId = yield* pendingMessage(tx, t, {
        kind: "record_message",
        ...reserved,
        orgId: h.org.id,
        recordId,
        topicId: TOPIC,
        message: encode(`{"v":1,"type":"record","id":"${recordId}"}`),
        now,
        keyFingerprint: h.org.systemKey.fingerprint,
        sealFingerprint: h.fixture.seal.fingerprint,
        batches: h.batches,
      });
      if (options.beforeJoin !== true) {
        reached();
        yield* q(gate);
      }
      return batchId;
    });
    await atGate;
    return { recordId, leafId: reserved.transactionId, written, release };
  }

  test("PostgreSQL only (several connections): a join in flight holds the batch's row; closeBatch waits for it to commit and takes its leaf", async () => {
    const h = await setup(POSTGRES);
    const a = await h.creationLeaf();
    const held = await heldJoin(h);
    let settled = false;
    const closing = h.close(a.batchId).then((row) => {
      settled = true;
      return row;
    });
    await Bun.sleep(200);
    expect(settled).toBe(false);
    held.release();
    expect(await held.written).toBe(a.batchId);
    const closed = (await closing)!;
    expect(closed.batchSize).toBe(2);
    expect(h.built[0]!.leaves.map((l) => l.recordId)).toEqual([a.recordId, held.recordId]);
    expect(await h.row(held.leafId)).toMatchObject({ leafIndex: 1, batchTransactionId: a.batchId });
    expect((await h.record(held.recordId)).transactionId).toBe(a.batchId);
    // A join after the close finds the batch closed: it opens a new one.
    const later = await h.creationLeaf();
    expect(later.batchId).not.toBe(a.batchId);
    expect(await h.row(later.batchId)).toMatchObject({ state: "open", batchSize: 1 });
    expect((await h.row(a.batchId)).batchSize).toBe(2);
  });

  test("PostgreSQL only (several connections): a join whose write began before the close but joins after it opens a new batch, never a closed one", async () => {
    const h = await setup(POSTGRES);
    const a = await h.creationLeaf();
    const held = await heldJoin(h, { beforeJoin: true });
    const closed = (await h.close(a.batchId))!;
    expect(closed.batchSize).toBe(1);
    held.release();
    const batchId = await held.written;
    expect(batchId).not.toBe(a.batchId);
    expect(await h.row(batchId)).toMatchObject({ state: "open", batchSize: 1 });
    expect(await h.row(held.leafId)).toMatchObject({ batchTransactionId: batchId, leafIndex: null });
    expect((await h.row(a.batchId)).batchSize).toBe(1);
    expect((await h.leavesOf(a.batchId)).map((l) => l.transactionId)).toEqual([a.leafId]);
  });

  test("PostgreSQL only (the leader's epoch): closeBatch and rebatch by a node that does not lead, or no longer leads, are refused and change nothing", async () => {
    const h = await setup(POSTGRES);
    const r = await h.revocationLeaf();
    const closed = (await h.close(r.batchId))!;
    const a = await h.creationLeaf();
    const open = await h.row(a.batchId);
    const before = await snapshot(h);
    h.setEpoch(null);
    await expect(h.journal.closeBatch(open, h.build) as Promise<unknown>).rejects.toBeInstanceOf(NotLeadingError);
    await expect(h.journal.rebatch(closed, "the bytes differ") as Promise<unknown>).rejects.toBeInstanceOf(NotLeadingError);
    h.setEpoch(1);
    await h.store.write(function* (tx) {
      yield* q(tx.execute(sql`UPDATE anchor_leader SET epoch = 2, node = 'other' WHERE id = 1`));
    });
    await expect(h.journal.closeBatch(open, h.build) as Promise<unknown>).rejects.toBeInstanceOf(DeposedError);
    await expect(h.journal.rebatch(closed, "the bytes differ") as Promise<unknown>).rejects.toBeInstanceOf(DeposedError);
    expect(h.built).toHaveLength(1);
    expect(await snapshot(h)).toEqual(before);
    expect((await h.journal.openBatches()).map((b) => b.transactionId)).toEqual([a.batchId]);
  });
});
