/**
 * The anchor journal's contract (the `Journal` port, src/anchoring/journal/ports.ts) on both
 * storage engines: every state change of `ledger_transactions` and of the record that follows it,
 * the revocation re-queue, attempts journaled and taken back, batched reschedules, topic
 * provisioning, key announcements (queued, exactly once, re-queued, and gating record messages)
 * and the status summary. Each test runs on the embedded SQLite and on a real PostgreSQL server
 * (where the journal's changes are fenced by the leader's epoch: this node leads at epoch 1).
 * What only one engine has is at the end, named for it: the SQLite group commit and its query
 * plans here, the PostgreSQL fence and races in pg-journal.test.ts.
 * No ledger: a database and a manual clock.
 */
import { describe, expect, test } from "bun:test";
import { and, count, eq, lte, sql } from "drizzle-orm";
import { journalRules, revocationRequeueDelay, topicRequeueDelay, WAITING_RECHECK_MS } from "../../src/anchoring/journal/rules.ts";
import type { Journal, LedgerTransactionRow } from "../../src/anchoring/journal/ports.ts";
import { pendingMessage, pendingPersonKeyAnnouncement, queueSummary } from "../../src/anchoring/queue.ts";
import { createTransactionIds, type NewTransaction } from "../../src/anchoring/transaction-ids.ts";
import type { KeyAnnouncement } from "../../src/anchoring/types.ts";
import { createSigner } from "../../src/crypto/index.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { journalDrivers } from "../support/drivers.ts";
import { ANNOUNCED, WANTING_ANNOUNCEMENT } from "../../src/storage/journal-sql.ts";
import { sqliteJournal } from "../../src/storage/sqlite/journal.ts";
import { ANNOUNCED_SQL, DUE_SQL, NEXT_DUE_SQL } from "../../src/storage/sqlite/journal-statements.ts";
import { q, sqliteStore, type SqliteStore, type Store } from "../../src/storage/store.ts";
import { countingTransactions } from "../support/counting-transactions.ts";
import { createStoreRecordsFixture, docHashOf, TOPIC_ID as TOPIC, type FixtureOrg } from "../support/records-fixture.ts";
import { useStoreEngines, type StoreEngine } from "../support/store-engines.ts";

/** Each test's databases are closed and dropped after it: a PostgreSQL server allows so many connections. */
const { engines: ENGINES } = useStoreEngines({ eachTest: true });
const [SQLITE] = ENGINES;
const signer = createSigner({ masterKey: new Uint8Array(32).fill(7), workers: 0 });
const CONFIRMED = { sequenceNumber: 7, consensusAt: "1767225600.000000123", runningHash: new Uint8Array(48).fill(9) };
const LEADER_EPOCH = 1;

/** A journal over `store`; on PostgreSQL this node leads at LEADER_EPOCH. */
async function journalOver(store: Store, clock: ReturnType<typeof manualClock>, ids: () => NewTransaction): Promise<Journal> {
  if (store.engine === "postgres") {
    await store.write(function* (tx) {
      yield* q(tx.execute(sql`UPDATE anchor_leader SET epoch = ${LEADER_EPOCH}, node = 'test' WHERE id = 1`));
    });
  }
  return journalDrivers(store, { epoch: () => LEADER_EPOCH }).journal(journalRules(clock, ids));
}

/** A new database with an organisation (add-on, no topic yet), the journal over it, and the helpers the tests read and write it with. */
async function setup(engine: StoreEngine, stores?: [Store, Store]) {
  const [store, second] = stores ?? [await engine.open(), null];
  const clock = manualClock(Date.UTC(2026, 0, 1));
  const fixture = await createStoreRecordsFixture({ store, signer, clock });
  const ids = createTransactionIds({ clock, operator: "0.0.2", validSeconds: 30, backdateMs: 0, lastValidStartNs: 0n });
  const journal = await journalOver(store, clock, ids);
  const org: FixtureOrg = await fixture.createOrg(`Org ${Math.random()}`, { addon: true });
  const orgId = org.id;

  const row = async (id: string): Promise<LedgerTransactionRow> =>
    (await store.read((db, t) => q(db.select().from(t.ledgerTransactions).where(eq(t.ledgerTransactions.transactionId, id)))))[0] as unknown as LedgerTransactionRow;
  const record = async (id: string) => (await store.read((db, t) => q(db.select().from(t.records).where(eq(t.records.id, id)))))[0]!;
  const ledgerRows = async () => (await store.read((db, t) => q(db.select().from(t.ledgerTransactions)))) as unknown as LedgerTransactionRow[];
  const rowsOf = async (recordId: string, kind: LedgerTransactionRow["kind"]) => (await ledgerRows()).filter((r) => r.recordId === recordId && r.kind === kind);
  const announcements = async () => (await ledgerRows()).filter((r) => r.kind === "key_announcement");
  const setRow = (id: string, values: Partial<LedgerTransactionRow>) =>
    store.write((tx, t) => q(tx.update(t.ledgerTransactions).set(values).where(eq(t.ledgerTransactions.transactionId, id))));
  const setRecord = (id: string, values: { transactionId?: string; revocationTransactionId?: string }) => store.write((tx, t) => q(tx.update(t.records).set(values).where(eq(t.records.id, id))));
  const orgRow = async () => (await store.read((db, t) => q(db.select().from(t.organisations).where(eq(t.organisations.id, orgId)))))[0]!;
  const setTopic = (topicId: string | null) => store.write((tx, t) => q(tx.update(t.organisations).set({ topicId }).where(eq(t.organisations.id, orgId))));
  const setKey = (key: Uint8Array) => store.write((tx, t) => q(tx.update(t.organisations).set({ systemKeyFingerprint: Buffer.from(key) }).where(eq(t.organisations.id, orgId))));
  /** Another key with a row in signing_keys (the organisation's key may be changed to it). */
  const otherKey = async () => (await fixture.createPerson()).fingerprint;

  /** A pending record and its creation message, under the record's transaction id, sent on its own (as every message was before batches; batches have their own suite). */
  async function queueRecord(message = new TextEncoder().encode('{"v":1}'), keyFingerprint?: Uint8Array): Promise<{ recordId: string; transactionId: string }> {
    const recordId = await fixture.addOrgRecord(org, { docHash: docHashOf(Bun.randomUUIDv7()), anchorState: "pending" });
    const { transactionId, signedAtMs } = await record(recordId);
    const now = clock.now();
    await store.write((tx, t) =>
      pendingMessage(tx, t, { kind: "record_message", transactionId, validStartMs: Number(signedAtMs), validSeconds: 30, orgId, recordId, topicId: TOPIC, message, now, batchLeaf: 0, ...(keyFingerprint ? { keyFingerprint } : {}) }),
    );
    return { recordId, transactionId };
  }

  /** An announcement of `key` (default: the organisation's current key) with bytes of its own. */
  const announcement = (key: Uint8Array = org.systemKey.fingerprint, generation = 0): KeyAnnouncement => ({
    keyFingerprint: key,
    generation,
    sealFingerprint: fixture.seal.fingerprint,
    message: new TextEncoder().encode(`{"v":1,"type":"key","n":"${Bun.randomUUIDv7()}"}`),
  });

  /** The organisation gets its topic and an anchored announcement of its current key: its record messages may go. */
  async function announceAnchored(): Promise<string> {
    await setTopic(TOPIC);
    const queued = (await journal.queueAnnouncement(orgId, announcement()))!;
    await journal.grouped.toAnchoredMessage(queued, { ...CONFIRMED, sequenceNumber: 1 });
    return queued.transactionId;
  }

  /** A revocation of `recordId` and its pending message, written together as the records service does. */
  async function queueRevocation(recordId: string, message = new TextEncoder().encode('{"v":1,"revoke":true}')): Promise<string> {
    const reserved = ids();
    const now = clock.now();
    await store.write(function* (tx, t) {
      yield* q(tx.update(t.records).set({ revokedAt: now, revocationReason: "SUPERSEDED", revocationTransactionId: reserved.transactionId }).where(eq(t.records.id, recordId)));
      yield* pendingMessage(tx, t, { kind: "revocation_message", ...reserved, orgId, recordId, topicId: TOPIC, message, now, batchLeaf: 0 });
    });
    return reserved.transactionId;
  }

  const dueIds = async (limit = 10, busy: string[] = []) => (await journal.due(limit, new Set(busy))).map((r) => r.transactionId);

  return {
    store,
    second,
    clock,
    fixture,
    ids,
    journal,
    org,
    orgId,
    row,
    record,
    rowsOf,
    announcements,
    setRow,
    setRecord,
    orgRow,
    setTopic,
    setKey,
    otherKey,
    queueRecord,
    announcement,
    announceAnchored,
    queueRevocation,
    dueIds,
  };
}

for (const engine of ENGINES) {
  describe(`the anchor journal on ${engine.name}`, () => {
    describe("the one insert", () => {
      test("a message row is pending, due now, with no bytes and no attempt, under the id and window it was given", async () => {
        const { queueRecord, row, clock, orgId } = await setup(engine);
        const { recordId, transactionId } = await queueRecord(new Uint8Array([1, 2, 3]));
        expect(await row(transactionId)).toMatchObject({
          kind: "record_message",
          orgId,
          recordId,
          topicId: TOPIC,
          signedBytes: null,
          state: "pending",
          attempts: 0,
          nextAttemptAt: clock.now(),
          createdAt: clock.now(),
          updatedAt: clock.now(),
          validSeconds: 30,
          lastError: null,
        });
        expect([...(await row(transactionId)).message!]).toEqual([1, 2, 3]);
        expect((await row(transactionId)).transactionId).toMatch(/^0\.0\.2@\d+\.\d{9}$/);
      });

      test("a message of 0 or more than 1024 bytes is refused before anything is written", async () => {
        const { store, ids, orgId, clock, row } = await setup(engine);
        for (const size of [0, 1025]) {
          const reserved = ids();
          const write = store.write((tx, t) => pendingMessage(tx, t, { kind: "record_message", ...reserved, orgId, recordId: "r", topicId: TOPIC, message: new Uint8Array(size), now: clock.now() }));
          await expect(write).rejects.toThrow("1 to 1024 bytes");
          expect(await row(reserved.transactionId)).toBeUndefined();
        }
      });
    });

    describe("state changes", () => {
      test("pending → accepted: the record follows; due again after the poll interval; a second call changes nothing", async () => {
        const { queueRecord, row, record, journal, clock } = await setup(engine);
        const { recordId, transactionId } = await queueRecord();
        clock.advance(100);
        expect(await journal.grouped.toAccepted(await row(transactionId), 250)).toBe(clock.now());
        expect(await row(transactionId)).toMatchObject({ state: "accepted", nextAttemptAt: clock.now() + 250, updatedAt: clock.now(), lastError: null });
        expect((await record(recordId)).anchorState).toBe("accepted");
        clock.advance(100);
        expect(await journal.grouped.toAccepted(await row(transactionId), 250)).toBeNull();
        expect((await row(transactionId)).updatedAt).toBe(clock.now() - 100);
      });

      test("accepted → anchored: sequence number, consensus time and running hash on the row, the first two on its record; final", async () => {
        const { queueRecord, row, record, journal, clock } = await setup(engine);
        const { recordId, transactionId } = await queueRecord();
        await journal.grouped.toAccepted(await row(transactionId), 0);
        clock.advance(3000);
        expect(await journal.grouped.toAnchoredMessage(await row(transactionId), CONFIRMED)).toBe(clock.now());
        const r = await row(transactionId);
        expect(r).toMatchObject({ state: "anchored", sequenceNumber: 7, consensusAt: CONFIRMED.consensusAt, updatedAt: clock.now() });
        expect([...r.runningHash!]).toEqual([...CONFIRMED.runningHash]);
        expect(await record(recordId)).toMatchObject({ anchorState: "anchored", sequenceNumber: 7, consensusAt: CONFIRMED.consensusAt });
        // Final: neither abandoned nor anchored again.
        expect(await journal.abandon(r, "late")).toBeNull();
        expect(await journal.grouped.toAnchoredMessage(r, { ...CONFIRMED, sequenceNumber: 8 })).toBeNull();
        expect(await row(transactionId)).toMatchObject({ state: "anchored", sequenceNumber: 7, lastError: null });
      });

      test("pending → anchored directly (consensus found through the mirror node after a crash)", async () => {
        const { queueRecord, row, record, journal } = await setup(engine);
        const { recordId, transactionId } = await queueRecord();
        expect(await journal.grouped.toAnchoredMessage(await row(transactionId), CONFIRMED)).not.toBeNull();
        expect((await row(transactionId)).state).toBe("anchored");
        expect((await record(recordId)).anchorState).toBe("anchored");
      });

      test("a record that no longer carries the transaction is left alone", async () => {
        const { queueRecord, row, record, journal, setRecord } = await setup(engine);
        const { recordId, transactionId } = await queueRecord();
        await setRecord(recordId, { transactionId: "0.0.2@1.000000001" });
        await journal.grouped.toAnchoredMessage(await row(transactionId), CONFIRMED);
        expect((await row(transactionId)).state).toBe("anchored");
        expect((await record(recordId)).anchorState).toBe("pending");
      });

      test("topic creation → anchored: the organisation gets its topic; one it already has is kept", async () => {
        const { journal, orgId, row, orgRow, setRow, clock } = await setup(engine);
        const created = (await journal.queueTopicCreate(orgId))!;
        expect(created).toMatchObject({ kind: "topic_create", state: "pending", topicId: null, message: null, recordId: null });
        expect(await journal.toAnchoredTopic(await row(created.transactionId), "0.0.5005", "1767225600.000000001")).not.toBeNull();
        expect(await row(created.transactionId)).toMatchObject({ state: "anchored", topicId: "0.0.5005", consensusAt: "1767225600.000000001" });
        expect((await orgRow()).topicId).toBe("0.0.5005");
        // A second creation (it cannot normally be queued): its topic does not replace the first.
        await setRow(created.transactionId, { state: "abandoned" });
        clock.advance(topicRequeueDelay(1));
        const again = (await journal.queueTopicCreate(orgId))!;
        await journal.toAnchoredTopic(await row(again.transactionId), "0.0.6006", null);
        expect((await orgRow()).topicId).toBe("0.0.5005");
      });

      test("abandon a record message (pending or accepted): the record is abandoned, nothing is queued again", async () => {
        const { queueRecord, row, record, rowsOf, journal, clock } = await setup(engine);
        for (const accept of [false, true]) {
          const { recordId, transactionId } = await queueRecord();
          if (accept) await journal.grouped.toAccepted(await row(transactionId), 0);
          clock.advance(10);
          expect(await journal.abandon(await row(transactionId), "refused at precheck: INVALID_SIGNATURE")).toEqual({ at: clock.now(), requeued: null });
          expect(await row(transactionId)).toMatchObject({ state: "abandoned", lastError: "refused at precheck: INVALID_SIGNATURE", updatedAt: clock.now() });
          expect((await record(recordId)).anchorState).toBe("abandoned");
          expect(await rowsOf(recordId, "record_message")).toHaveLength(1);
          expect(await journal.abandon(await row(transactionId), "again")).toBeNull();
          expect((await row(transactionId)).lastError).toBe("refused at precheck: INVALID_SIGNATURE");
        }
      });
    });

    describe("an abandoned revocation is queued again", () => {
      test("same bytes, new transaction, the record's revocation moved to it, all in the transaction that abandons it; the first at once", async () => {
        const { queueRecord, queueRevocation, row, record, setRow, journal, clock, orgId } = await setup(engine);
        const { recordId, transactionId } = await queueRecord();
        await journal.grouped.toAnchoredMessage(await row(transactionId), CONFIRMED);
        const first = await queueRevocation(recordId);
        await setRow(first, { attempts: 1, signedBytes: Buffer.from([7]) });
        clock.advance(60_000);
        const done = (await journal.abandon(await row(first), "did not reach consensus within its validity window"))!;
        expect(done.requeued).not.toBeNull();
        const next = await row(done.requeued!);
        expect(next).toMatchObject({ kind: "revocation_message", state: "pending", orgId, recordId, topicId: TOPIC, attempts: 0, signedBytes: null, createdAt: clock.now(), nextAttemptAt: clock.now() });
        expect(Buffer.from(next.message!).equals(Buffer.from((await row(first)).message!))).toBe(true);
        expect(next.validStartMs).toBeGreaterThan((await row(first)).validStartMs);
        expect((await record(recordId)).revocationTransactionId).toBe(done.requeued!);
        // The record's anchor is the creation's: untouched by the revocation's fate.
        expect((await record(recordId)).anchorState).toBe("anchored");
      });

      test("repeated failures back off (30 s doubling to an hour); rows that never reached a node do not count", async () => {
        const { queueRecord, queueRevocation, row, rowsOf, setRow, journal, clock } = await setup(engine);
        expect([1, 2, 3, 4, 10, 50].map(revocationRequeueDelay)).toEqual([0, 30_000, 60_000, 120_000, 3_600_000, 3_600_000]);
        const { recordId, transactionId } = await queueRecord();
        await journal.grouped.toAnchoredMessage(await row(transactionId), CONFIRMED);
        let current = await queueRevocation(recordId);
        const delays: number[] = [];
        for (let i = 0; i < 3; i++) {
          // Sent once (it may have reached a node).
          await setRow(current, { attempts: 1, signedBytes: Buffer.from([i]) });
          current = (await journal.abandon(await row(current), "failed at consensus: INVALID_TOPIC_ID"))!.requeued!;
          delays.push((await row(current)).nextAttemptAt - clock.now());
        }
        expect(delays).toEqual([0, 30_000, 60_000]);
        // Every submission unsent (attempts 0, bytes stored): not counted, the next is as soon as the last.
        await setRow(current, { attempts: 0, signedBytes: Buffer.from([9]) });
        current = (await journal.abandon(await row(current), "the validity window closed before the transaction could reach a node"))!.requeued!;
        expect((await row(current)).nextAttemptAt - clock.now()).toBe(60_000);
        expect((await rowsOf(recordId, "revocation_message")).filter((r) => r.state === "pending")).toHaveLength(1);
      });

      test("a revocation that is not the record's current one still gets its successor; the record keeps pointing at its own", async () => {
        const { queueRecord, queueRevocation, row, record, setRecord, journal } = await setup(engine);
        const { recordId, transactionId } = await queueRecord();
        await journal.grouped.toAnchoredMessage(await row(transactionId), CONFIRMED);
        const stale = await queueRevocation(recordId);
        await setRecord(recordId, { revocationTransactionId: "0.0.2@2.000000002" });
        const done = (await journal.abandon(await row(stale), "x"))!;
        expect(done.requeued).not.toBeNull();
        expect((await record(recordId)).revocationTransactionId).toBe("0.0.2@2.000000002");
      });
    });

    describe("attempts", () => {
      test("beginAttempt stores the bytes the first time and counts each attempt; other bytes, or a row that moved on, are refused", async () => {
        const { queueRecord, row, journal, clock } = await setup(engine);
        const { transactionId } = await queueRecord();
        const bytes = new Uint8Array([1, 2, 3]);
        clock.advance(5);
        expect(await journal.grouped.beginAttempt(await row(transactionId), bytes)).toBe(1);
        expect(await row(transactionId)).toMatchObject({ attempts: 1, updatedAt: clock.now() });
        expect([...(await row(transactionId)).signedBytes!]).toEqual([1, 2, 3]);
        expect(await journal.grouped.beginAttempt(await row(transactionId), bytes)).toBe(2);
        expect(await journal.grouped.beginAttempt(await row(transactionId), new Uint8Array([9]))).toBeNull();
        expect((await row(transactionId)).attempts).toBe(2);
        await journal.grouped.toAccepted(await row(transactionId), 0);
        expect(await journal.grouped.beginAttempt(await row(transactionId), bytes)).toBeNull();
        expect((await row(transactionId)).attempts).toBe(2);
      });

      test("takeBack uncounts an attempt only at the count it was given, only while pending", async () => {
        const { queueRecord, row, journal } = await setup(engine);
        const { transactionId } = await queueRecord();
        const bytes = new Uint8Array([4]);
        await journal.grouped.beginAttempt(await row(transactionId), bytes);
        await journal.grouped.beginAttempt(await row(transactionId), bytes);
        expect(await journal.takeBack(await row(transactionId), 1)).toBe(1); // stale count: nothing changes
        expect((await row(transactionId)).attempts).toBe(2);
        expect(await journal.takeBack(await row(transactionId), 2)).toBe(1);
        expect(await journal.takeBack(await row(transactionId), 1)).toBe(0);
        expect(await row(transactionId)).toMatchObject({ attempts: 0, state: "pending" });
        expect((await row(transactionId)).signedBytes).not.toBeNull(); // the bytes stay: every submission was unsent
        await journal.grouped.beginAttempt(await row(transactionId), bytes);
        await journal.grouped.toAccepted(await row(transactionId), 0);
        expect(await journal.takeBack(await row(transactionId), 1)).toBe(1);
        expect((await row(transactionId)).attempts).toBe(1);
      });
    });

    describe("reading the queue and rescheduling", () => {
      test("reschedules are written at flush at the latest, in one batch, guarded by state; a null error keeps the last one", async () => {
        const { queueRecord, row, journal, clock } = await setup(engine);
        const a = (await queueRecord()).transactionId;
        const b = (await queueRecord()).transactionId;
        journal.reschedule(await row(a), 1000, "precheck BUSY");
        journal.reschedule(await row(b), 2000, "no answer: timeout");
        expect((await row(a)).nextAttemptAt).toBe(clock.now());
        await journal.grouped.toAccepted(await row(b), 500); // b moved on: its reschedule (as pending) is dropped
        await journal.flush();
        expect(await row(a)).toMatchObject({ nextAttemptAt: clock.now() + 1000, lastError: "precheck BUSY" });
        expect(await row(b)).toMatchObject({ state: "accepted", nextAttemptAt: clock.now() + 500, lastError: null });
        journal.reschedule(await row(a), -5, null);
        await journal.flush();
        expect(await row(a)).toMatchObject({ nextAttemptAt: clock.now(), lastError: "precheck BUSY" });
      });

      test("due: the unfinished rows due now, soonest first, up to the limit, leaving out those in flight; reads see pending reschedules", async () => {
        const { announceAnchored, queueRecord, row, journal, clock, dueIds } = await setup(engine);
        await announceAnchored();
        const [a, b, c] = [(await queueRecord()).transactionId, (await queueRecord()).transactionId, (await queueRecord()).transactionId];
        const done = (await queueRecord()).transactionId;
        await journal.abandon(await row(done), "x");
        journal.reschedule(await row(a), 10, null); // not flushed yet
        expect(await dueIds(10)).toEqual([b, c]);
        expect(await dueIds(1)).toEqual([b]);
        expect(await dueIds(10, [b])).toEqual([c]);
        expect(await dueIds(0)).toEqual([]);
        expect(await journal.nextDueAt()).toBe(clock.now());
        clock.advance(10);
        expect(await dueIds(10)).toEqual([b, c, a]);
      });

      test("due and nextDueAt over both states: the soonest of pending and accepted rows together, in due order", async () => {
        const { announceAnchored, queueRecord, row, journal, clock, dueIds } = await setup(engine);
        await announceAnchored();
        const t0 = clock.now();
        const [p1, p2, a1, a2] = [(await queueRecord()).transactionId, (await queueRecord()).transactionId, (await queueRecord()).transactionId, (await queueRecord()).transactionId];
        await journal.grouped.toAccepted(await row(a1), 10);
        await journal.grouped.toAccepted(await row(a2), 30);
        journal.reschedule(await row(p1), 20, null);
        journal.reschedule(await row(p2), 40, null);
        expect(await journal.nextDueAt()).toBe(t0 + 10);
        clock.advance(100);
        expect(await dueIds(10)).toEqual([a1, p1, a2, p2]);
        expect(await dueIds(3)).toEqual([a1, p1, a2]);
        expect(await dueIds(2, [a1])).toEqual([p1, a2]);
        await journal.grouped.toAnchoredMessage(await row(a1), CONFIRMED);
        expect(await journal.nextDueAt()).toBe(t0 + 20);
      });

      test("unfinished: counts by state and the oldest pending row's creation; nextDueAt is null on an empty queue", async () => {
        const { queueRecord, row, journal, clock } = await setup(engine);
        expect(await journal.unfinished()).toMatchObject({ pending: 0, accepted: 0, oldestPendingAt: null });
        expect(await journal.nextDueAt()).toBeNull();
        const first = clock.now();
        const a = (await queueRecord()).transactionId;
        clock.advance(1000);
        await queueRecord();
        await journal.grouped.toAccepted(await row(a), 0);
        expect(await journal.unfinished()).toMatchObject({ pending: 1, accepted: 1, oldestPendingAt: first + 1000 });
      });

      test("retryAllNow makes every unfinished row waiting on a backoff due now; finished rows keep theirs", async () => {
        const { announceAnchored, queueRecord, row, journal, clock } = await setup(engine);
        await announceAnchored();
        const a = (await queueRecord()).transactionId;
        const b = (await queueRecord()).transactionId;
        await journal.grouped.toAccepted(await row(b), 60_000);
        journal.reschedule(await row(a), 30_000, "not sent: refused");
        await journal.flush();
        clock.advance(1000);
        await journal.retryAllNow();
        expect((await row(a)).nextAttemptAt).toBe(clock.now());
        expect((await row(b)).nextAttemptAt).toBe(clock.now());
        expect(await journal.due(10, new Set())).toHaveLength(2);
      });

      test("unsentPastCutoff: pending rows no submission of which may have reached a node, with less than the margin of their window left, wherever their backoff put them", async () => {
        const { queueRecord, row, journal, clock } = await setup(engine);
        const never = (await queueRecord()).transactionId;
        const sent = (await queueRecord()).transactionId;
        expect(await journal.grouped.beginAttempt(await row(sent), new Uint8Array([1]))).toBe(1);
        const takenBack = (await queueRecord()).transactionId;
        expect(await journal.grouped.beginAttempt(await row(takenBack), new Uint8Array([2]))).toBe(1);
        expect(await journal.takeBack(await row(takenBack), 1)).toBe(0);
        // A backoff far beyond the window does not hide a row.
        journal.reschedule(await row(never), 3_600_000, "not sent: refused");
        expect(await journal.unsentPastCutoff(10_000, 100)).toEqual([]);
        clock.advance(20_000); // 30 s windows: 10 s left, not less
        expect(await journal.unsentPastCutoff(10_000, 100)).toEqual([]);
        clock.advance(2);
        const rows = await journal.unsentPastCutoff(10_000, 100);
        expect(rows.map((r) => r.transactionId).sort()).toEqual([never, takenBack].sort());
        expect(rows.every((r) => r.state === "pending" && r.attempts === 0)).toBe(true);
        expect(await journal.unsentPastCutoff(10_000, 1)).toHaveLength(1);
        await journal.abandon(rows.find((r) => r.transactionId === never)!, "the validity window closed");
        expect((await journal.unsentPastCutoff(10_000, 100)).map((r) => r.transactionId)).toEqual([takenBack]);
      });

      test("topicsAwaitingConfirmation: topics with messages accepted or sent, with their earliest valid start; unsent and finished ones are not", async () => {
        const { queueRecord, row, journal } = await setup(engine);
        const sent = (await queueRecord()).transactionId;
        const accepted = (await queueRecord()).transactionId;
        await queueRecord(); // never sent
        expect(await journal.topicsAwaitingConfirmation()).toEqual([]);
        await journal.grouped.beginAttempt(await row(sent), new Uint8Array([1]));
        await journal.grouped.toAccepted(await row(accepted), 0);
        const starts = [(await row(sent)).validStartMs, (await row(accepted)).validStartMs];
        expect(await journal.topicsAwaitingConfirmation()).toEqual([{ topicId: TOPIC, validStartMs: Math.min(...starts) }]);
        expect((await journal.unfinishedMessage(sent))?.transactionId).toBe(sent);
        await journal.grouped.toAnchoredMessage(await row(sent), CONFIRMED);
        expect(await journal.unfinishedMessage(sent)).toBeNull();
      });
    });

    describe("topic provisioning", () => {
      test("an organisation with the add-on and no topic wants one until a creation is live; one creation at a time", async () => {
        const { journal, orgId, row } = await setup(engine);
        expect(await journal.organisationsWantingTopic()).toEqual([orgId]);
        const created = (await journal.queueTopicCreate(orgId))!;
        expect(await journal.organisationsWantingTopic()).toEqual([]);
        expect(await journal.queueTopicCreate(orgId)).toBeNull(); // ledger_transactions_one_topic
        await journal.abandon(await row(created.transactionId), "x");
        expect(await journal.organisationsWantingTopic()).toEqual([orgId]);
      });

      test("abandoned creations that reached a node back off (10 s doubling to an hour) from the last; unsent ones do not count", async () => {
        const { journal, orgId, row, setRow, clock } = await setup(engine);
        expect([1, 2, 3, 20].map(topicRequeueDelay)).toEqual([10_000, 20_000, 40_000, 3_600_000]);
        const first = (await journal.queueTopicCreate(orgId))!;
        await setRow(first.transactionId, { attempts: 1, signedBytes: Buffer.from([1]) });
        await journal.abandon(await row(first.transactionId), "refused at precheck: INSUFFICIENT_PAYER_BALANCE");
        clock.advance(9_999);
        expect(await journal.queueTopicCreate(orgId)).toBeNull();
        clock.advance(1);
        const second = (await journal.queueTopicCreate(orgId))!;
        // Unsent: abandoned without reaching a node. The count stays 1, so 10 s again from its end.
        await setRow(second.transactionId, { attempts: 0, signedBytes: Buffer.from([2]) });
        await journal.abandon(await row(second.transactionId), "the validity window closed before the transaction could reach a node");
        expect(await journal.queueTopicCreate(orgId)).not.toBeNull();
      });
    });

    describe("key announcements", () => {
      test("a topic's anchoring queues the announcement in the same transaction: pending, due now, on the new topic, for the given key and bytes", async () => {
        const { journal, orgId, org, row, announcement, clock } = await setup(engine);
        const created = (await journal.queueTopicCreate(orgId))!;
        clock.advance(500);
        const a = announcement();
        const done = (await journal.toAnchoredTopic(await row(created.transactionId), "0.0.5005", null, a))!;
        expect(done.at).toBe(clock.now());
        expect(done.announced).not.toBeNull();
        const queued = await row(done.announced!.transactionId);
        expect(queued).toMatchObject({ kind: "key_announcement", state: "pending", orgId, recordId: null, topicId: "0.0.5005", attempts: 0, signedBytes: null, nextAttemptAt: clock.now(), createdAt: clock.now() });
        expect(Buffer.from(queued.keyFingerprint!).equals(Buffer.from(org.systemKey.fingerprint))).toBe(true);
        expect(Buffer.from(queued.message!).equals(Buffer.from(a.message))).toBe(true);
        expect(done.announced).toEqual(queued);
        expect(await journal.organisationsWantingAnnouncement()).toEqual([]);
      });

      test("a topic's anchoring queues nothing without an announcement, or when the organisation already had a topic; the topic is anchored all the same", async () => {
        const { journal, orgId, row, setRow, announcement, announcements, clock } = await setup(engine);
        const first = (await journal.queueTopicCreate(orgId))!;
        expect(await journal.toAnchoredTopic(await row(first.transactionId), "0.0.5005", null, null)).toEqual({ at: clock.now(), announced: null });
        expect(await announcements()).toEqual([]);
        // The organisation has a topic: a second creation's anchoring announces nothing on its topic.
        await setRow(first.transactionId, { state: "abandoned" });
        clock.advance(topicRequeueDelay(1));
        const again = (await journal.queueTopicCreate(orgId))!;
        expect((await journal.toAnchoredTopic(await row(again.transactionId), "0.0.6006", null, announcement()))!.announced).toBeNull();
        expect((await row(again.transactionId)).state).toBe("anchored");
        expect(await announcements()).toEqual([]);
        // Provisioning's turn: the organisation has a topic and no announcement.
        expect(await journal.organisationsWantingAnnouncement()).toEqual([orgId]);
      });

      test("a topic's anchoring with the key already announced live: the unique index queues nothing, and the topic's change still commits", async () => {
        const { journal, orgId, row, orgRow, setTopic, announcement, announcements } = await setup(engine);
        await setTopic(TOPIC);
        const live = (await journal.queueAnnouncement(orgId, announcement()))!;
        await setTopic(null);
        const created = (await journal.queueTopicCreate(orgId))!;
        expect((await journal.toAnchoredTopic(await row(created.transactionId), "0.0.5005", null, announcement()))!.announced).toBeNull();
        expect((await row(created.transactionId)).state).toBe("anchored");
        expect((await orgRow()).topicId).toBe("0.0.5005");
        expect((await announcements()).map((r) => r.transactionId)).toEqual([live.transactionId]);
      });

      test("provisioning: an organisation with a topic and no live announcement of its current key wants one; one per organisation and key", async () => {
        const { journal, orgId, org, setTopic, setKey, otherKey, announcement, announcements } = await setup(engine);
        expect(await journal.organisationsWantingAnnouncement()).toEqual([]); // no topic yet
        expect(await journal.queueAnnouncement(orgId, announcement())).toBeNull();
        await setTopic(TOPIC);
        expect(await journal.organisationsWantingAnnouncement()).toEqual([orgId]);
        const queued = (await journal.queueAnnouncement(orgId, announcement()))!;
        expect(queued).toMatchObject({ kind: "key_announcement", state: "pending", topicId: TOPIC, orgId });
        expect(await journal.organisationsWantingAnnouncement()).toEqual([]);
        expect(await journal.queueAnnouncement(orgId, announcement())).toBeNull(); // ledger_transactions_one_announcement
        await journal.grouped.toAnchoredMessage(queued, CONFIRMED);
        expect(await journal.queueAnnouncement(orgId, announcement())).toBeNull(); // anchored is live too
        expect(await announcements()).toHaveLength(1);
        // A new key: the old one's announcement does not cover it, and one built for the old key is refused.
        const oldKey = org.systemKey.fingerprint;
        const newKey = await otherKey();
        await setKey(newKey);
        expect(await journal.organisationsWantingAnnouncement()).toEqual([orgId]);
        expect(await journal.queueAnnouncement(orgId, announcement(oldKey))).toBeNull();
        const next = (await journal.queueAnnouncement(orgId, announcement(newKey)))!;
        expect(Buffer.from(next.keyFingerprint!).equals(Buffer.from(newKey))).toBe(true);
        expect(await journal.organisationsWantingAnnouncement()).toEqual([]);
      });

      test("a change of domain raises the generation: wanted again, once; one built at another generation is refused; records never wait for it", async () => {
        const { store, journal, orgId, org, row, orgRow, setTopic, announcement, announcements, queueRecord, fixture } = await setup(engine);
        const generation = async () => Number((await orgRow()).announcementGeneration);
        await setTopic(TOPIC);
        const first = (await journal.queueAnnouncement(orgId, announcement()))!;
        await journal.grouped.toAnchoredMessage(first, { ...CONFIRMED, sequenceNumber: 1 });
        const { transactionId: rec } = await queueRecord();
        expect(await journal.organisationsWantingAnnouncement()).toEqual([]);

        await fixture.orgs.set(orgId, { domain: "Example.ORG" }, "test");
        expect(await generation()).toBe(1);
        // The same domain again (or any other flag) is no change of what the announcement says.
        await fixture.orgs.set(orgId, { domain: "example.org", validated: true }, "test");
        expect(await generation()).toBe(1);
        expect(await journal.organisationsWantingAnnouncement()).toEqual([orgId]);
        // Built before the change: refused; built after it: queued once, beside the anchored one.
        expect(await journal.queueAnnouncement(orgId, announcement(org.systemKey.fingerprint, 0))).toBeNull();
        const second = (await journal.queueAnnouncement(orgId, announcement(org.systemKey.fingerprint, 1)))!;
        expect(second).toMatchObject({ kind: "key_announcement", state: "pending", announcementGeneration: 1 });
        expect(await journal.queueAnnouncement(orgId, announcement(org.systemKey.fingerprint, 1))).toBeNull();
        expect(await journal.organisationsWantingAnnouncement()).toEqual([]);
        // The key was announced (generation 0, anchored): its records go while the new one is pending.
        expect((await journal.due(10, new Set())).map((r) => r.transactionId).sort()).toEqual([rec, second.transactionId].sort());
        // Abandoned, it is queued again at its own generation.
        const requeued = (await journal.abandon(await row(second.transactionId), "x"))!.requeued!;
        expect(await row(requeued)).toMatchObject({ state: "pending", announcementGeneration: 1 });
        expect(Buffer.from((await row(requeued)).message!).equals(Buffer.from(second.message!))).toBe(true);
        expect(await journal.organisationsWantingAnnouncement()).toEqual([]);
        // Anchored, the announcement at the new generation raises the change counter (a kept receipt carries it from then on).
        const counter = async () => Number((await store.read((db, t) => q(db.select({ value: t.changeCounter.value }).from(t.changeCounter))))[0]!.value);
        const was = await counter();
        expect(await journal.grouped.toAnchoredMessage(await row(requeued), { ...CONFIRMED, sequenceNumber: 3 })).not.toBeNull();
        expect(await counter()).toBe(was + 1);
        // Cleared: a third generation, a third announcement.
        await fixture.orgs.set(orgId, { domain: null }, "test");
        expect(await generation()).toBe(2);
        expect(await journal.organisationsWantingAnnouncement()).toEqual([orgId]);
        expect(await journal.queueAnnouncement(orgId, announcement(org.systemKey.fingerprint, 2))).toMatchObject({ announcementGeneration: 2 });
        expect((await announcements()).filter((r) => r.state !== "abandoned").map((r) => r.announcementGeneration).sort()).toEqual([0, 1, 2]);
      });

      test("a topic's anchoring with an announcement built before a change of domain queues none: provisioning builds it afresh", async () => {
        const { journal, orgId, org, row, announcement, fixture } = await setup(engine);
        const created = (await journal.queueTopicCreate(orgId))!;
        const stale = announcement(org.systemKey.fingerprint, 0);
        await fixture.orgs.set(orgId, { domain: "example.org" }, "test");
        expect((await journal.toAnchoredTopic(await row(created.transactionId), "0.0.5005", null, stale))!.announced).toBeNull();
        expect((await row(created.transactionId)).state).toBe("anchored");
        expect(await journal.organisationsWantingAnnouncement()).toEqual([orgId]);
        expect(await journal.queueAnnouncement(orgId, announcement(org.systemKey.fingerprint, 1))).toMatchObject({ topicId: "0.0.5005", announcementGeneration: 1 });
      });

      test("two processes (or nodes) racing to queue it: one row; the second's unique-index refusal means someone else queued it", async () => {
        const { journal, orgId, second, clock, ids, setTopic, announcement, announcements } = await setup(engine, await engine.openPair());
        await setTopic(TOPIC);
        const theirs = await journalOver(second!, clock, ids);
        const mine = await journal.queueAnnouncement(orgId, announcement());
        expect(mine).not.toBeNull();
        expect(await theirs.queueAnnouncement(orgId, announcement())).toBeNull();
        expect((await announcements()).map((r) => r.transactionId)).toEqual([mine!.transactionId]);
      });

      test("a message of 0 or more than 1024 bytes is refused before anything is written", async () => {
        const { journal, orgId, org, setTopic, announcements, fixture } = await setup(engine);
        await setTopic(TOPIC);
        for (const size of [0, 1025]) {
          const queued = Promise.resolve().then(() => journal.queueAnnouncement(orgId, { keyFingerprint: org.systemKey.fingerprint, generation: 0, sealFingerprint: fixture.seal.fingerprint, message: new Uint8Array(size) }));
          await expect(queued).rejects.toThrow("1 to 1024 bytes");
        }
        expect(await announcements()).toEqual([]);
      });

      test("anchored: sequence number, consensus time and running hash on the row; no record is touched", async () => {
        const { journal, orgId, row, record, setTopic, announcement, queueRecord, clock } = await setup(engine);
        await setTopic(TOPIC);
        const { recordId } = await queueRecord();
        const queued = (await journal.queueAnnouncement(orgId, announcement()))!;
        await journal.grouped.toAccepted(queued, 0);
        expect(await journal.grouped.toAnchoredMessage(await row(queued.transactionId), CONFIRMED)).toBe(clock.now());
        const r = await row(queued.transactionId);
        expect(r).toMatchObject({ state: "anchored", sequenceNumber: 7, consensusAt: CONFIRMED.consensusAt, recordId: null });
        expect([...r.runningHash!]).toEqual([...CONFIRMED.runningHash]);
        expect(await record(recordId)).toMatchObject({ anchorState: "pending", sequenceNumber: null, consensusAt: null });
      });

      test("abandoned: queued again in the same transaction with the same bytes, key and topic under a new id; the first at once, repeated failures back off", async () => {
        const { journal, orgId, row, setRow, setTopic, announcement, announcements, clock } = await setup(engine);
        await setTopic(TOPIC);
        let current = (await journal.queueAnnouncement(orgId, announcement()))!.transactionId;
        const first = await row(current);
        const delays: number[] = [];
        for (let i = 0; i < 3; i++) {
          await setRow(current, { attempts: 1, signedBytes: Buffer.from([i]) });
          clock.advance(60_000);
          const done = (await journal.abandon(await row(current), "did not reach consensus within its validity window"))!;
          expect(done.requeued).not.toBeNull();
          const next = await row(done.requeued!);
          expect(next).toMatchObject({ kind: "key_announcement", state: "pending", orgId, recordId: null, topicId: TOPIC, attempts: 0, signedBytes: null, createdAt: clock.now() });
          expect(Buffer.from(next.message!).equals(Buffer.from(first.message!))).toBe(true);
          expect(Buffer.from(next.keyFingerprint!).equals(Buffer.from(first.keyFingerprint!))).toBe(true);
          expect(next.transactionId).not.toBe(current);
          delays.push(next.nextAttemptAt - clock.now());
          current = next.transactionId;
        }
        expect(delays).toEqual([0, 30_000, 60_000]);
        // Every submission unsent: not counted.
        await setRow(current, { attempts: 0, signedBytes: Buffer.from([9]) });
        current = (await journal.abandon(await row(current), "the validity window closed before the transaction could reach a node"))!.requeued!;
        expect((await row(current)).nextAttemptAt - clock.now()).toBe(60_000);
        expect((await announcements()).filter((r) => r.state !== "abandoned").map((r) => r.transactionId)).toEqual([current]);
        expect(await journal.organisationsWantingAnnouncement()).toEqual([]);
      });

      test("gating: a record message is not due until its organisation's current key has an anchored announcement; set aside meanwhile, it goes when one is anchored", async () => {
        const { journal, orgId, row, setRow, setTopic, setKey, otherKey, announcement, queueRecord, fixture, clock, dueIds } = await setup(engine);
        const { transactionId: rec } = await queueRecord();
        await setTopic(TOPIC);
        const other = await fixture.createOrg(`Other ${Math.random()}`, { addon: true });
        // Topic creations and revocations never wait.
        const topic = (await journal.queueTopicCreate(other.id))!.transactionId;
        expect(await dueIds()).toEqual([topic]);
        await journal.abandon(await row(topic), "x");
        // The record was looked at and set aside: due again after WAITING_RECHECK_MS, not before.
        expect(await journal.nextDueAt()).toBe(clock.now() + WAITING_RECHECK_MS);
        expect((await row(rec)).nextAttemptAt).toBe(clock.now() + WAITING_RECHECK_MS);
        // Pending, then accepted: the announcement is due itself, the record is not.
        const ann = (await journal.queueAnnouncement(orgId, announcement()))!.transactionId;
        expect(await dueIds()).toEqual([ann]);
        await journal.grouped.toAccepted(await row(ann), 1000);
        expect(await dueIds()).toEqual([]);
        expect(await journal.nextDueAt()).toBe(clock.now() + 1000);
        await journal.grouped.toAnchoredMessage(await row(ann), { ...CONFIRMED, sequenceNumber: 1 });
        expect(await dueIds()).toEqual([rec]);
        expect(await journal.nextDueAt()).toBe((await row(rec)).nextAttemptAt);
        // A new key: the old key's announcement no longer lets record messages go.
        const newKey = await otherKey();
        await setKey(newKey);
        expect(await dueIds()).toEqual([]);
        expect(await journal.nextDueAt()).toBe(clock.now() + WAITING_RECHECK_MS);
        // Looked at again when its time comes, it is set aside again: never returned, never lost.
        clock.advance(WAITING_RECHECK_MS);
        expect(await dueIds()).toEqual([]);
        expect(await journal.nextDueAt()).toBe(clock.now() + WAITING_RECHECK_MS);
        // An abandoned announcement of the new key does not let it go either.
        const fresh = (await journal.queueAnnouncement(orgId, announcement(newKey)))!;
        await setRow(fresh.transactionId, { state: "abandoned" });
        clock.advance(WAITING_RECHECK_MS);
        expect(await dueIds()).toEqual([]);
        // The new key's announcement anchored: the record goes at once, not after its recheck time.
        const third = (await journal.queueAnnouncement(orgId, announcement(newKey)))!.transactionId;
        expect(await dueIds()).toEqual([third]);
        await journal.grouped.toAnchoredMessage(await row(third), { ...CONFIRMED, sequenceNumber: 2 });
        expect(await journal.nextDueAt()).toBe(clock.now());
        expect(await dueIds()).toEqual([rec]);
      });

      test("a record set aside and not yet written is not held back by it when the announcement is anchored first", async () => {
        const { journal, orgId, row, setTopic, announcement, queueRecord, clock, dueIds } = await setup(engine);
        await setTopic(TOPIC);
        const ann = (await journal.queueAnnouncement(orgId, announcement()))!.transactionId;
        const { transactionId: rec } = await queueRecord();
        // One pass: the announcement goes, the record is set aside (in memory, written at the next flush).
        expect(await dueIds()).toEqual([ann]);
        await journal.grouped.toAnchoredMessage(await row(ann), { ...CONFIRMED, sequenceNumber: 1 });
        expect(await dueIds()).toEqual([rec]);
        expect((await row(rec)).nextAttemptAt).toBeLessThanOrEqual(clock.now());
      });

      test("a backlog waiting for an announcement is looked at once per recheck, not on every pass", async () => {
        const { store, journal, row, setTopic, queueRecord, clock } = await setup(engine);
        await setTopic(TOPIC);
        const waiting: string[] = [];
        for (let i = 0; i < 30; i++) waiting.push((await queueRecord()).transactionId);
        const looks = async () => {
          const now = clock.now();
          const [r] = await store.read((db, t) => q(db.select({ n: count() }).from(t.ledgerTransactions).where(and(eq(t.ledgerTransactions.state, "pending"), lte(t.ledgerTransactions.nextAttemptAt, now)))));
          return Number(r!.n);
        };
        expect(await looks()).toBe(30);
        // Passes of 10 rows: three set the whole backlog aside, the fourth finds nothing to look at.
        for (let i = 0; i < 3; i++) expect(await journal.due(10, new Set())).toEqual([]);
        await journal.flush();
        expect(await looks()).toBe(0);
        expect(await journal.due(10, new Set())).toEqual([]);
        expect(await journal.nextDueAt()).toBe(clock.now() + WAITING_RECHECK_MS);
        expect(await Promise.all(waiting.map(async (id) => (await row(id)).state))).toEqual(waiting.map(() => "pending"));
      });

      test("gating of a person's record: its message waits for the announcement of the person's key, not the organisation's", async () => {
        const { store, journal, orgId, row, setTopic, announcement, queueRecord, otherKey, ids, clock, dueIds, fixture } = await setup(engine);
        await setTopic(TOPIC);
        const ann = (await journal.queueAnnouncement(orgId, announcement()))!.transactionId;
        await journal.grouped.toAnchoredMessage(await row(ann), { ...CONFIRMED, sequenceNumber: 1 });
        const personKey = await otherKey();
        const { recordId, transactionId: rec } = await queueRecord(new TextEncoder().encode('{"v":1}'), personKey);
        // The organisation's key is announced and anchored: not enough.
        expect(await journal.due(10, new Set())).toEqual([]);
        expect(await journal.nextDueAt()).toBe(clock.now() + WAITING_RECHECK_MS);
        const personal = ids();
        const now = clock.now();
        await store.write((tx, t) => pendingPersonKeyAnnouncement(tx, t, { ...personal, orgId, topicId: TOPIC, message: new TextEncoder().encode('{"v":1,"type":"person_key"}'), keyFingerprint: personKey, sealFingerprint: fixture.seal.fingerprint, now }));
        expect(await dueIds()).toEqual([personal.transactionId]);
        await journal.grouped.toAnchoredMessage(await row(personal.transactionId), { ...CONFIRMED, sequenceNumber: 2 });
        expect(await dueIds()).toEqual([rec]);
        // Only a record message may wait for a person's key.
        const refused = store.write((tx, t) =>
          pendingMessage(tx, t, { kind: "revocation_message", transactionId: "0.0.2@1.000000001", validStartMs: 1, validSeconds: 30, orgId, recordId, topicId: TOPIC, message: new Uint8Array([1]), now: 1, keyFingerprint: personKey }),
        );
        await expect(refused).rejects.toThrow(TypeError);
      });

      test("due's rows are exactly the rows a select of the table returns (every column mapped alike)", async () => {
        const { journal, orgId, row, setRow, setTopic, announcement } = await setup(engine);
        await setTopic(TOPIC);
        const ann = (await journal.queueAnnouncement(orgId, announcement()))!.transactionId;
        await setRow(ann, { signedBytes: Buffer.from([1, 2, 3]), runningHash: Buffer.from([4]), lastError: "e", attempts: 2 });
        const [due] = await journal.due(10, new Set());
        expect(due).toEqual(await row(ann));
        expect(Object.keys(due!).sort()).toEqual(Object.keys(await row(ann)).sort());
        expect(Buffer.isBuffer(due!.message)).toBe(true);
      });
    });

    test("queueSummary: counts by state, the oldest unfinished row, the last error", async () => {
      const { store, journal, row, queueRecord, clock } = await setup(engine);
      const noBatches = { open: 0, waiting: 0, waitingLeaves: 0, oldestWaitingSeconds: null, anchored: 0, anchoredLeaves: 0 };
      expect(await store.read(queueSummary(clock.now()))).toEqual({ batches: noBatches, pending: 0, accepted: 0, anchored: 0, abandoned: 0, oldestUnfinished: null, lastError: null });
      const a = (await queueRecord()).transactionId;
      clock.advance(2000);
      const b = (await queueRecord()).transactionId;
      const c = (await queueRecord()).transactionId;
      await journal.grouped.toAccepted(await row(b), 0);
      await journal.abandon(await row(c), "refused at precheck: BUSY_FOREVER");
      clock.advance(3000);
      expect(await store.read(queueSummary(clock.now()))).toEqual({
        batches: noBatches,
        pending: 1,
        accepted: 1,
        anchored: 0,
        abandoned: 1,
        oldestUnfinished: { transactionId: a, kind: "record_message", state: "pending", ageSeconds: 5 },
        lastError: { transactionId: c, state: "abandoned", error: "refused at precheck: BUSY_FOREVER", at: new Date(clock.now() - 3000).toISOString() },
      });
    });
  });
}

// ---- SQLite only: its group commit (savepoints in one IMMEDIATE transaction shared with record
// writes) and the query plans of its prepared statements. PostgreSQL's fence, its one fenced
// transaction per group and its races are pg-journal.test.ts's.

describe("the anchor journal on SQLite only", () => {
  async function sqliteSetup(windowMs?: number) {
    const h = await setup(SQLITE);
    const { db } = h.store as SqliteStore;
    const { db: counted, counts } = countingTransactions(db);
    // A window long enough for the test's tasks on a loaded machine (the product's is 1 ms).
    const grouping = windowMs === undefined ? null : sqliteJournal(sqliteStore(counted), journalRules(h.clock, h.ids), windowMs);
    return { ...h, db, grouping, counts };
  }

  test("SQLite group commit: changes made in separate tasks within the window commit in one transaction, each as its synchronous method would; the reschedules waiting go with them", async () => {
    const { grouping, counts, queueRecord, row, record, clock } = await sqliteSetup(200);
    const grouped = grouping!;
    const [a, b, c] = [await queueRecord(), await queueRecord(), await queueRecord()];
    const bytes = new Uint8Array([1, 2, 3]);
    clock.advance(5);
    const attempt = grouped.grouped.beginAttempt(await row(a.transactionId), bytes);
    await new Promise((r) => setImmediate(r));
    const accepted = grouped.grouped.toAccepted(await row(b.transactionId), 250);
    await new Promise((r) => setImmediate(r));
    const anchored = grouped.grouped.toAnchoredMessage(await row(c.transactionId), CONFIRMED);
    grouped.reschedule(await row(a.transactionId), 1000, "waiting");
    // Nothing is written before the group commits.
    expect((await row(a.transactionId)).attempts).toBe(0);
    expect(await Promise.all([attempt, accepted, anchored])).toEqual([1, clock.now(), clock.now()]);
    expect(counts.top).toBe(1);
    expect(await row(a.transactionId)).toMatchObject({ attempts: 1, nextAttemptAt: clock.now() + 1000, lastError: "waiting" });
    expect([...(await row(a.transactionId)).signedBytes!]).toEqual([1, 2, 3]);
    expect(await row(b.transactionId)).toMatchObject({ state: "accepted", nextAttemptAt: clock.now() + 250 });
    expect((await record(b.recordId)).anchorState).toBe("accepted");
    expect(await row(c.transactionId)).toMatchObject({ state: "anchored", sequenceNumber: 7 });
    expect(await record(c.recordId)).toMatchObject({ anchorState: "anchored", sequenceNumber: 7 });
    // Later changes: a transaction of their own; a row that moved on reports null, as the synchronous method does.
    expect(await grouped.grouped.toAccepted(await row(b.transactionId), 250)).toBeNull();
    expect(await grouped.grouped.beginAttempt(await row(a.transactionId), new Uint8Array([9]))).toBeNull();
    expect(counts.top).toBe(3);
  });

  test("SQLite group commit (savepoints): a change that throws is undone alone and rejects alone; the others of its transaction commit", async () => {
    const { db, journal, queueRecord, row, record, clock } = await sqliteSetup();
    const [a, b] = [await queueRecord(), await queueRecord()];
    // A trigger that makes one row's acceptance fail inside the group's transaction.
    db.$client.run(`CREATE TEMP TRIGGER refuse_b BEFORE UPDATE OF state ON ledger_transactions WHEN new.transaction_id = '${b.transactionId}' BEGIN SELECT RAISE(ABORT, 'refused'); END`);
    try {
      const results = await Promise.allSettled([journal.grouped.toAccepted(await row(a.transactionId), 0), journal.grouped.toAccepted(await row(b.transactionId), 0)]);
      expect(results[0]).toEqual({ status: "fulfilled", value: clock.now() });
      expect(results[1]!.status).toBe("rejected");
      expect((await row(a.transactionId)).state).toBe("accepted");
      expect((await record(a.recordId)).anchorState).toBe("accepted");
      expect((await row(b.transactionId)).state).toBe("pending");
      expect((await record(b.recordId)).anchorState).toBe("pending");
    } finally {
      db.$client.run("DROP TRIGGER refuse_b");
    }
  });

  test("SQLite write lock: a group whose transaction cannot begin (the lock held by another connection) rejects every change and stores none", async () => {
    const { Database } = await import("bun:sqlite");
    const { db, journal, queueRecord, row } = await sqliteSetup();
    const a = await queueRecord();
    const rowA = await row(a.transactionId);
    const other = new Database(db.$client.filename);
    other.run("PRAGMA busy_timeout = 0");
    db.$client.run("PRAGMA busy_timeout = 50");
    other.run("BEGIN IMMEDIATE");
    try {
      const results = await Promise.allSettled([journal.grouped.beginAttempt(rowA, new Uint8Array([1])), journal.grouped.toAccepted(rowA, 0)]);
      expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    } finally {
      other.run("ROLLBACK");
      other.close();
    }
    expect(await row(a.transactionId)).toMatchObject({ state: "pending", attempts: 0, signedBytes: null });
    expect(await journal.grouped.beginAttempt(rowA, new Uint8Array([1]))).toBe(1);
  });

  test("SQLite query plans: due and nextDueAt read the work index in order; the announcement is read through indexes (the partial unique index, the organisation's key), never a scan", async () => {
    const { db } = await sqliteSetup();
    // The statements the journal runs (per state): in index order, no sort of all the due rows.
    for (const text of [DUE_SQL, NEXT_DUE_SQL]) {
      const plan = (db.$client.query(`EXPLAIN QUERY PLAN ${text}`).all() as { detail: string }[]).map((r) => r.detail);
      expect(plan.filter((d) => /TEMP B-TREE/.test(d))).toEqual([]);
      expect(plan.some((d) => /^SEARCH ledger_transactions USING (COVERING )?INDEX ledger_transactions_work/.test(d))).toBe(true);
      expect(plan.filter((d) => /^SCAN/.test(d))).toEqual([]);
    }
    expect(ANNOUNCED_SQL).toContain(ANNOUNCED);
    const announced = (db.$client.query(`EXPLAIN QUERY PLAN ${ANNOUNCED_SQL}`).all() as { detail: string }[]).map((r) => r.detail);
    expect(announced.some((d) => /^SEARCH ledger_transactions USING INDEX sqlite_autoindex_ledger_transactions_1/.test(d))).toBe(true);
    expect(announced.some((d) => /^SEARCH a USING INDEX ledger_transactions_one_announcement/.test(d))).toBe(true);
    expect(announced.some((d) => /^SEARCH o USING (INDEX sqlite_autoindex_organisations_1|INTEGER PRIMARY KEY)/.test(d))).toBe(true);
    expect(announced.filter((d) => /^SCAN/.test(d))).toEqual([]);
    const wanting = (db.$client.query(`EXPLAIN QUERY PLAN ${WANTING_ANNOUNCEMENT}`).all() as { detail: string }[]).map((r) => r.detail);
    expect(wanting.some((d) => /USING INDEX ledger_transactions_one_announcement \(org_id=\? AND key_fingerprint=\? AND announcement_generation=\?\)/.test(d))).toBe(true);
  });
});
