/**
 * The anchor queue (src/anchoring/queue.ts) on its own: every state change of
 * `ledger_transactions` and of the record that follows it, the revocation re-queue, attempts
 * journaled and taken back, batched reschedules, topic provisioning, key announcements (queued,
 * exactly once, re-queued, and gating record messages) and the status summary.
 * No ledger: a data folder and a manual clock.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { AnchorJournal, insertPendingMessage, insertPendingPersonKeyAnnouncement, queueSummary, type LedgerTransactionRow } from "../../src/anchoring/queue.ts";
import { revocationRequeueDelay, topicRequeueDelay, WAITING_RECHECK_MS } from "../../src/anchoring/journal/rules.ts";
import { ANNOUNCED, WANTING_ANNOUNCEMENT } from "../../src/storage/journal-sql.ts";
import { ANNOUNCED_SQL, DUE_SQL, NEXT_DUE_SQL } from "../../src/storage/sqlite/journal-statements.ts";
import { sqliteStore } from "../../src/storage/store.ts";
import { createTransactionIds, type NewTransaction } from "../../src/anchoring/transaction-ids.ts";
import type { KeyAnnouncement } from "../../src/anchoring/types.ts";
import { openDatabase } from "../../src/storage/db.ts";
import { manualClock } from "../../src/lib/clock.ts";
import type { Db } from "../../src/storage/db.ts";
import { ledgerTransactions, organisations, records } from "../../src/storage/schema.ts";
import { cleanup } from "../support/env.ts";
import { createRecordsFixture, docHashOf, TOPIC_ID as TOPIC, type FixtureOrg, type RecordsFixture } from "../support/records-fixture.ts";
import { countingTransactions } from "../support/counting-transactions.ts";

afterEach(cleanup);

const CONFIRMED = { sequenceNumber: 7, consensusAt: "1767225600.000000123", runningHash: new Uint8Array(48).fill(9) };

let fixture: RecordsFixture;
let db: Db;
let clock: ReturnType<typeof manualClock>;
let ids: () => NewTransaction;
let journal: AnchorJournal;
let org: FixtureOrg;
let orgId: string;

beforeEach(async () => {
  clock = manualClock(Date.UTC(2026, 0, 1));
  fixture = createRecordsFixture({ clock });
  db = fixture.db;
  ids = createTransactionIds({ db, clock, operator: "0.0.2", validSeconds: 30, backdateMs: 0 });
  journal = new AnchorJournal(db, clock, ids);
  org = await fixture.createOrg(`Org ${Math.random()}`, { addon: true });
  orgId = org.id;
});

const row = (id: string): LedgerTransactionRow => db.select().from(ledgerTransactions).where(eq(ledgerTransactions.transactionId, id)).get()!;
const record = (id: string) => db.select().from(records).where(eq(records.id, id)).get()!;
const rowsOf = (recordId: string, kind: LedgerTransactionRow["kind"]) =>
  db
    .select()
    .from(ledgerTransactions)
    .where(eq(ledgerTransactions.recordId, recordId))
    .all()
    .filter((r) => r.kind === kind);

/** A pending record and its creation message, under the record's transaction id, as the records service writes them. */
function queueRecord(message = new TextEncoder().encode('{"v":1}')): { recordId: string; transactionId: string } {
  const recordId = fixture.addOrgRecord(org, { docHash: docHashOf(Bun.randomUUIDv7()), anchorState: "pending" });
  const { transactionId, signedAtMs } = record(recordId);
  insertPendingMessage(db, { kind: "record_message", transactionId, validStartMs: signedAtMs, validSeconds: 30, orgId, recordId, topicId: TOPIC, message, now: clock.now() });
  return { recordId, transactionId };
}

/** An announcement of `key` (default: the organisation's current key) with bytes of its own. */
function announcement(key: Uint8Array = org.systemKey.fingerprint, generation = 0): KeyAnnouncement {
  return { keyFingerprint: key, generation, message: new TextEncoder().encode(`{"v":1,"type":"key","n":"${Bun.randomUUIDv7()}"}`) };
}

const setTopic = (topicId: string | null) => db.update(organisations).set({ topicId }).where(eq(organisations.id, orgId)).run();
const setKey = (key: Uint8Array) => db.update(organisations).set({ systemKeyFingerprint: Buffer.from(key) }).where(eq(organisations.id, orgId)).run();
const announcements = () => db.select().from(ledgerTransactions).where(eq(ledgerTransactions.kind, "key_announcement")).all();

/** The organisation gets its topic and an anchored announcement of its current key: its record messages may go. */
function announceAnchored(): string {
  setTopic(TOPIC);
  const queued = journal.queueAnnouncement(orgId, announcement())!;
  journal.toAnchoredMessage(queued, { ...CONFIRMED, sequenceNumber: 1 });
  return queued.transactionId;
}

/** A revocation of `recordId` and its pending message, written together as the records service does. */
function queueRevocation(recordId: string, message = new TextEncoder().encode('{"v":1,"revoke":true}')): string {
  const reserved = ids();
  db.transaction((tx) => {
    tx.update(records).set({ revokedAt: clock.now(), revocationReason: "SUPERSEDED", revocationTransactionId: reserved.transactionId }).where(eq(records.id, recordId)).run();
    insertPendingMessage(tx, { kind: "revocation_message", ...reserved, orgId, recordId, topicId: TOPIC, message, now: clock.now() });
  });
  return reserved.transactionId;
}

describe("the one insert", () => {
  test("a message row is pending, due now, with no bytes and no attempt, under the id and window it was given", () => {
    const { recordId, transactionId } = queueRecord(new Uint8Array([1, 2, 3]));
    expect(row(transactionId)).toMatchObject({
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
    expect([...row(transactionId).message!]).toEqual([1, 2, 3]);
    expect(row(transactionId).transactionId).toMatch(/^0\.0\.2@\d+\.\d{9}$/);
  });

  test("a message of 0 or more than 1024 bytes is refused before anything is written", () => {
    for (const size of [0, 1025]) {
      const reserved = ids();
      expect(() => insertPendingMessage(db, { kind: "record_message", ...reserved, orgId, recordId: "r", topicId: TOPIC, message: new Uint8Array(size), now: clock.now() })).toThrow("1 to 1024 bytes");
      expect(db.select().from(ledgerTransactions).where(eq(ledgerTransactions.transactionId, reserved.transactionId)).get()).toBeUndefined();
    }
  });
});

describe("state changes", () => {
  test("pending → accepted: the record follows; due again after the poll interval; a second call changes nothing", () => {
    const { recordId, transactionId } = queueRecord();
    clock.advance(100);
    expect(journal.toAccepted(row(transactionId), 250)).toBe(clock.now());
    expect(row(transactionId)).toMatchObject({ state: "accepted", nextAttemptAt: clock.now() + 250, updatedAt: clock.now(), lastError: null });
    expect(record(recordId).anchorState).toBe("accepted");
    clock.advance(100);
    expect(journal.toAccepted(row(transactionId), 250)).toBeNull();
    expect(row(transactionId).updatedAt).toBe(clock.now() - 100);
  });

  test("accepted → anchored: sequence number, consensus time and running hash on the row, the first two on its record; final", () => {
    const { recordId, transactionId } = queueRecord();
    journal.toAccepted(row(transactionId), 0);
    clock.advance(3000);
    expect(journal.toAnchoredMessage(row(transactionId), CONFIRMED)).toBe(clock.now());
    const r = row(transactionId);
    expect(r).toMatchObject({ state: "anchored", sequenceNumber: 7, consensusAt: CONFIRMED.consensusAt, updatedAt: clock.now() });
    expect([...r.runningHash!]).toEqual([...CONFIRMED.runningHash]);
    expect(record(recordId)).toMatchObject({ anchorState: "anchored", sequenceNumber: 7, consensusAt: CONFIRMED.consensusAt });
    // Final: neither abandoned nor anchored again.
    expect(journal.abandon(r, "late")).toBeNull();
    expect(journal.toAnchoredMessage(r, { ...CONFIRMED, sequenceNumber: 8 })).toBeNull();
    expect(row(transactionId)).toMatchObject({ state: "anchored", sequenceNumber: 7, lastError: null });
  });

  test("pending → anchored directly (consensus found through the mirror node after a crash)", () => {
    const { recordId, transactionId } = queueRecord();
    expect(journal.toAnchoredMessage(row(transactionId), CONFIRMED)).not.toBeNull();
    expect(row(transactionId).state).toBe("anchored");
    expect(record(recordId).anchorState).toBe("anchored");
  });

  test("a record that no longer carries the transaction is left alone", () => {
    const { recordId, transactionId } = queueRecord();
    db.update(records).set({ transactionId: "0.0.2@1.000000001" }).where(eq(records.id, recordId)).run();
    journal.toAnchoredMessage(row(transactionId), CONFIRMED);
    expect(row(transactionId).state).toBe("anchored");
    expect(record(recordId).anchorState).toBe("pending");
  });

  test("topic creation → anchored: the organisation gets its topic; one it already has is kept", () => {
    const created = journal.queueTopicCreate(orgId)!;
    expect(created).toMatchObject({ kind: "topic_create", state: "pending", topicId: null, message: null, recordId: null });
    expect(journal.toAnchoredTopic(row(created.transactionId), "0.0.5005", "1767225600.000000001")).not.toBeNull();
    expect(row(created.transactionId)).toMatchObject({ state: "anchored", topicId: "0.0.5005", consensusAt: "1767225600.000000001" });
    expect(db.select().from(organisations).where(eq(organisations.id, orgId)).get()!.topicId).toBe("0.0.5005");
    // A second creation (it cannot normally be queued): its topic does not replace the first.
    db.update(ledgerTransactions).set({ state: "abandoned" }).where(eq(ledgerTransactions.transactionId, created.transactionId)).run();
    clock.advance(topicRequeueDelay(1));
    const again = journal.queueTopicCreate(orgId)!;
    journal.toAnchoredTopic(row(again.transactionId), "0.0.6006", null);
    expect(db.select().from(organisations).where(eq(organisations.id, orgId)).get()!.topicId).toBe("0.0.5005");
  });

  test("abandon a record message (pending or accepted): the record is abandoned, nothing is queued again", () => {
    for (const accept of [false, true]) {
      const { recordId, transactionId } = queueRecord();
      if (accept) journal.toAccepted(row(transactionId), 0);
      clock.advance(10);
      expect(journal.abandon(row(transactionId), "refused at precheck: INVALID_SIGNATURE")).toEqual({ at: clock.now(), requeued: null });
      expect(row(transactionId)).toMatchObject({ state: "abandoned", lastError: "refused at precheck: INVALID_SIGNATURE", updatedAt: clock.now() });
      expect(record(recordId).anchorState).toBe("abandoned");
      expect(rowsOf(recordId, "record_message")).toHaveLength(1);
      expect(journal.abandon(row(transactionId), "again")).toBeNull();
      expect(row(transactionId).lastError).toBe("refused at precheck: INVALID_SIGNATURE");
    }
  });
});

describe("an abandoned revocation is queued again", () => {
  test("same bytes, new transaction, the record's revocation moved to it, all in the transaction that abandons it; the first at once", () => {
    const { recordId, transactionId } = queueRecord();
    journal.toAnchoredMessage(row(transactionId), CONFIRMED);
    const first = queueRevocation(recordId);
    db.update(ledgerTransactions).set({ attempts: 1, signedBytes: Buffer.from([7]) }).where(eq(ledgerTransactions.transactionId, first)).run();
    clock.advance(60_000);
    const done = journal.abandon(row(first), "did not reach consensus within its validity window")!;
    expect(done.requeued).not.toBeNull();
    const next = row(done.requeued!);
    expect(next).toMatchObject({ kind: "revocation_message", state: "pending", orgId, recordId, topicId: TOPIC, attempts: 0, signedBytes: null, createdAt: clock.now(), nextAttemptAt: clock.now() });
    expect(Buffer.from(next.message!).equals(Buffer.from(row(first).message!))).toBe(true);
    expect(next.validStartMs).toBeGreaterThan(row(first).validStartMs);
    expect(record(recordId).revocationTransactionId).toBe(done.requeued!);
    // The record's anchor is the creation's: untouched by the revocation's fate.
    expect(record(recordId).anchorState).toBe("anchored");
  });

  test("repeated failures back off (30 s doubling to an hour); rows that never reached a node do not count", () => {
    expect([1, 2, 3, 4, 10, 50].map(revocationRequeueDelay)).toEqual([0, 30_000, 60_000, 120_000, 3_600_000, 3_600_000]);
    const { recordId, transactionId } = queueRecord();
    journal.toAnchoredMessage(row(transactionId), CONFIRMED);
    let current = queueRevocation(recordId);
    const delays: number[] = [];
    for (let i = 0; i < 3; i++) {
      // Sent once (it may have reached a node).
      db.update(ledgerTransactions).set({ attempts: 1, signedBytes: Buffer.from([i]) }).where(eq(ledgerTransactions.transactionId, current)).run();
      current = journal.abandon(row(current), "failed at consensus: INVALID_TOPIC_ID")!.requeued!;
      delays.push(row(current).nextAttemptAt - clock.now());
    }
    expect(delays).toEqual([0, 30_000, 60_000]);
    // Every submission unsent (attempts 0, bytes stored): not counted, the next is as soon as the last.
    db.update(ledgerTransactions).set({ attempts: 0, signedBytes: Buffer.from([9]) }).where(eq(ledgerTransactions.transactionId, current)).run();
    current = journal.abandon(row(current), "the validity window closed before the transaction could reach a node")!.requeued!;
    expect(row(current).nextAttemptAt - clock.now()).toBe(60_000);
    expect(rowsOf(recordId, "revocation_message").filter((r) => r.state === "pending")).toHaveLength(1);
  });

  test("a revocation that is not the record's current one still gets its successor; the record keeps pointing at its own", () => {
    const { recordId, transactionId } = queueRecord();
    journal.toAnchoredMessage(row(transactionId), CONFIRMED);
    const stale = queueRevocation(recordId);
    db.update(records).set({ revocationTransactionId: "0.0.2@2.000000002" }).where(eq(records.id, recordId)).run();
    const done = journal.abandon(row(stale), "x")!;
    expect(done.requeued).not.toBeNull();
    expect(record(recordId).revocationTransactionId).toBe("0.0.2@2.000000002");
  });
});

describe("attempts", () => {
  test("beginAttempt stores the bytes the first time and counts each attempt; other bytes, or a row that moved on, are refused", () => {
    const { transactionId } = queueRecord();
    const bytes = new Uint8Array([1, 2, 3]);
    clock.advance(5);
    expect(journal.beginAttempt(row(transactionId), bytes)).toBe(1);
    expect(row(transactionId)).toMatchObject({ attempts: 1, updatedAt: clock.now() });
    expect([...row(transactionId).signedBytes!]).toEqual([1, 2, 3]);
    expect(journal.beginAttempt(row(transactionId), bytes)).toBe(2);
    expect(journal.beginAttempt(row(transactionId), new Uint8Array([9]))).toBeNull();
    expect(row(transactionId).attempts).toBe(2);
    journal.toAccepted(row(transactionId), 0);
    expect(journal.beginAttempt(row(transactionId), bytes)).toBeNull();
    expect(row(transactionId).attempts).toBe(2);
  });

  test("takeBack uncounts an attempt only at the count it was given, only while pending", () => {
    const { transactionId } = queueRecord();
    const bytes = new Uint8Array([4]);
    journal.beginAttempt(row(transactionId), bytes);
    journal.beginAttempt(row(transactionId), bytes);
    expect(journal.takeBack(row(transactionId), 1)).toBe(1); // stale count: nothing changes
    expect(row(transactionId).attempts).toBe(2);
    expect(journal.takeBack(row(transactionId), 2)).toBe(1);
    expect(journal.takeBack(row(transactionId), 1)).toBe(0);
    expect(row(transactionId)).toMatchObject({ attempts: 0, state: "pending" });
    expect(row(transactionId).signedBytes).not.toBeNull(); // the bytes stay: every submission was unsent
    journal.beginAttempt(row(transactionId), bytes);
    journal.toAccepted(row(transactionId), 0);
    expect(journal.takeBack(row(transactionId), 1)).toBe(1);
    expect(row(transactionId).attempts).toBe(1);
  });
});

describe("group commit (grouped)", () => {
  /** A journal over `db` that counts the transactions it begins outside any other. */
  function countingJournal() {
    const { db: counted, counts } = countingTransactions(db);
    // A window long enough for the test's tasks on a loaded machine (the product's is 1 ms).
    return { journal: new AnchorJournal(counted, clock, ids, 200), counts };
  }

  test("changes made in separate tasks within the window commit in one transaction, each as its synchronous method would; the reschedules waiting go with them", async () => {
    const { journal: grouped, counts } = countingJournal();
    const [a, b, c] = [queueRecord(), queueRecord(), queueRecord()];
    const bytes = new Uint8Array([1, 2, 3]);
    clock.advance(5);
    const attempt = grouped.grouped.beginAttempt(row(a.transactionId), bytes);
    await new Promise((r) => setImmediate(r));
    const accepted = grouped.grouped.toAccepted(row(b.transactionId), 250);
    await new Promise((r) => setImmediate(r));
    const anchored = grouped.grouped.toAnchoredMessage(row(c.transactionId), CONFIRMED);
    grouped.reschedule(row(a.transactionId), 1000, "waiting");
    // Nothing is written before the group commits.
    expect(row(a.transactionId).attempts).toBe(0);
    expect(await Promise.all([attempt, accepted, anchored])).toEqual([1, clock.now(), clock.now()]);
    expect(counts.top).toBe(1);
    expect(row(a.transactionId)).toMatchObject({ attempts: 1, nextAttemptAt: clock.now() + 1000, lastError: "waiting" });
    expect([...row(a.transactionId).signedBytes!]).toEqual([1, 2, 3]);
    expect(row(b.transactionId)).toMatchObject({ state: "accepted", nextAttemptAt: clock.now() + 250 });
    expect(record(b.recordId).anchorState).toBe("accepted");
    expect(row(c.transactionId)).toMatchObject({ state: "anchored", sequenceNumber: 7 });
    expect(record(c.recordId)).toMatchObject({ anchorState: "anchored", sequenceNumber: 7 });
    // Later changes: a transaction of their own; a row that moved on reports null, as the synchronous method does.
    expect(await grouped.grouped.toAccepted(row(b.transactionId), 250)).toBeNull();
    expect(await grouped.grouped.beginAttempt(row(a.transactionId), new Uint8Array([9]))).toBeNull();
    expect(counts.top).toBe(3);
  });

  test("a change that throws is undone alone and rejects alone; the others of its transaction commit", async () => {
    const [a, b] = [queueRecord(), queueRecord()];
    // A trigger that makes one row's acceptance fail inside the group's transaction.
    db.$client.run(`CREATE TEMP TRIGGER refuse_b BEFORE UPDATE OF state ON ledger_transactions WHEN new.transaction_id = '${b.transactionId}' BEGIN SELECT RAISE(ABORT, 'refused'); END`);
    try {
      const results = await Promise.allSettled([journal.grouped.toAccepted(row(a.transactionId), 0), journal.grouped.toAccepted(row(b.transactionId), 0)]);
      expect(results[0]).toEqual({ status: "fulfilled", value: clock.now() });
      expect(results[1]!.status).toBe("rejected");
      expect(row(a.transactionId).state).toBe("accepted");
      expect(record(a.recordId).anchorState).toBe("accepted");
      expect(row(b.transactionId).state).toBe("pending");
      expect(record(b.recordId).anchorState).toBe("pending");
    } finally {
      db.$client.run("DROP TRIGGER refuse_b");
    }
  });

  test("a group whose transaction cannot begin (the write lock held elsewhere) rejects every change and stores none", async () => {
    const { Database } = await import("bun:sqlite");
    const a = queueRecord();
    const other = new Database(db.$client.filename);
    other.run("PRAGMA busy_timeout = 0");
    db.$client.run("PRAGMA busy_timeout = 50");
    other.run("BEGIN IMMEDIATE");
    try {
      const results = await Promise.allSettled([journal.grouped.beginAttempt(row(a.transactionId), new Uint8Array([1])), journal.grouped.toAccepted(row(a.transactionId), 0)]);
      expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    } finally {
      other.run("ROLLBACK");
      other.close();
    }
    expect(row(a.transactionId)).toMatchObject({ state: "pending", attempts: 0, signedBytes: null });
    expect(await journal.grouped.beginAttempt(row(a.transactionId), new Uint8Array([1]))).toBe(1);
  });
});

describe("reading the queue and rescheduling", () => {
  test("reschedules are written only at flush, in one batch, guarded by state; a null error keeps the last one", () => {
    const a = queueRecord().transactionId;
    const b = queueRecord().transactionId;
    journal.reschedule(row(a), 1000, "precheck BUSY");
    journal.reschedule(row(b), 2000, "no answer: timeout");
    expect(row(a).nextAttemptAt).toBe(clock.now());
    journal.toAccepted(row(b), 500); // b moved on: its reschedule (as pending) is dropped
    journal.flush();
    expect(row(a)).toMatchObject({ nextAttemptAt: clock.now() + 1000, lastError: "precheck BUSY" });
    expect(row(b)).toMatchObject({ state: "accepted", nextAttemptAt: clock.now() + 500, lastError: null });
    journal.reschedule(row(a), -5, null);
    journal.flush();
    expect(row(a)).toMatchObject({ nextAttemptAt: clock.now(), lastError: "precheck BUSY" });
  });

  test("due: the unfinished rows due now, soonest first, up to the limit, leaving out those in flight; reads see pending reschedules", () => {
    announceAnchored();
    const [a, b, c] = [queueRecord(), queueRecord(), queueRecord()].map((r) => r.transactionId) as [string, string, string];
    const done = queueRecord().transactionId;
    journal.abandon(row(done), "x");
    journal.reschedule(row(a), 10, null); // not flushed yet
    const due = (limit: number, busy: string[] = []) => journal.due(limit, new Set(busy)).map((r) => r.transactionId);
    expect(due(10)).toEqual([b, c]);
    expect(due(1)).toEqual([b]);
    expect(due(10, [b])).toEqual([c]);
    expect(due(0)).toEqual([]);
    expect(journal.nextDueAt()).toBe(clock.now());
    clock.advance(10);
    expect(due(10)).toEqual([b, c, a]);
  });

  test("due and nextDueAt over both states: the soonest of pending and accepted rows together, in due order", () => {
    announceAnchored();
    const t0 = clock.now();
    const [p1, p2, a1, a2] = [queueRecord(), queueRecord(), queueRecord(), queueRecord()].map((r) => r.transactionId) as [string, string, string, string];
    journal.toAccepted(row(a1), 10);
    journal.toAccepted(row(a2), 30);
    journal.reschedule(row(p1), 20, null);
    journal.reschedule(row(p2), 40, null);
    expect(journal.nextDueAt()).toBe(t0 + 10);
    clock.advance(100);
    const due = (limit: number, busy: string[] = []) => journal.due(limit, new Set(busy)).map((r) => r.transactionId);
    expect(due(10)).toEqual([a1, p1, a2, p2]);
    expect(due(3)).toEqual([a1, p1, a2]);
    expect(due(2, [a1])).toEqual([p1, a2]);
    journal.toAnchoredMessage(row(a1), CONFIRMED);
    expect(journal.nextDueAt()).toBe(t0 + 20);
  });

  test("unfinished: counts by state and the oldest pending row's creation; nextDueAt is null on an empty queue", () => {
    expect(journal.unfinished()).toEqual({ pending: 0, accepted: 0, oldestPendingAt: null });
    expect(journal.nextDueAt()).toBeNull();
    const first = clock.now();
    const a = queueRecord().transactionId;
    clock.advance(1000);
    queueRecord();
    journal.toAccepted(row(a), 0);
    expect(journal.unfinished()).toEqual({ pending: 1, accepted: 1, oldestPendingAt: first + 1000 });
  });

  test("retryAllNow makes every unfinished row waiting on a backoff due now; finished rows keep theirs", () => {
    announceAnchored();
    const a = queueRecord().transactionId;
    const b = queueRecord().transactionId;
    journal.toAccepted(row(b), 60_000);
    journal.reschedule(row(a), 30_000, "not sent: refused");
    journal.flush();
    clock.advance(1000);
    journal.retryAllNow();
    expect(row(a).nextAttemptAt).toBe(clock.now());
    expect(row(b).nextAttemptAt).toBe(clock.now());
    expect(journal.due(10, new Set())).toHaveLength(2);
  });
});

describe("topic provisioning", () => {
  test("an organisation with the add-on and no topic wants one until a creation is live; one creation at a time", () => {
    expect(journal.organisationsWantingTopic()).toEqual([orgId]);
    const created = journal.queueTopicCreate(orgId)!;
    expect(journal.organisationsWantingTopic()).toEqual([]);
    expect(journal.queueTopicCreate(orgId)).toBeNull(); // ledger_transactions_one_topic
    journal.abandon(row(created.transactionId), "x");
    expect(journal.organisationsWantingTopic()).toEqual([orgId]);
  });

  test("abandoned creations that reached a node back off (10 s doubling to an hour) from the last; unsent ones do not count", () => {
    expect([1, 2, 3, 20].map(topicRequeueDelay)).toEqual([10_000, 20_000, 40_000, 3_600_000]);
    const first = journal.queueTopicCreate(orgId)!;
    db.update(ledgerTransactions).set({ attempts: 1, signedBytes: Buffer.from([1]) }).where(eq(ledgerTransactions.transactionId, first.transactionId)).run();
    journal.abandon(row(first.transactionId), "refused at precheck: INSUFFICIENT_PAYER_BALANCE");
    clock.advance(9_999);
    expect(journal.queueTopicCreate(orgId)).toBeNull();
    clock.advance(1);
    const second = journal.queueTopicCreate(orgId)!;
    // Unsent: abandoned without reaching a node. The count stays 1, so 10 s again from its end.
    db.update(ledgerTransactions).set({ attempts: 0, signedBytes: Buffer.from([2]) }).where(eq(ledgerTransactions.transactionId, second.transactionId)).run();
    journal.abandon(row(second.transactionId), "the validity window closed before the transaction could reach a node");
    expect(journal.queueTopicCreate(orgId)).not.toBeNull();
  });
});

describe("key announcements", () => {
  test("a topic's anchoring queues the announcement in the same transaction: pending, due now, on the new topic, for the given key and bytes", () => {
    const created = journal.queueTopicCreate(orgId)!;
    clock.advance(500);
    const a = announcement();
    const done = journal.toAnchoredTopic(row(created.transactionId), "0.0.5005", null, a)!;
    expect(done.at).toBe(clock.now());
    expect(done.announced).not.toBeNull();
    const queued = row(done.announced!.transactionId);
    expect(queued).toMatchObject({ kind: "key_announcement", state: "pending", orgId, recordId: null, topicId: "0.0.5005", attempts: 0, signedBytes: null, nextAttemptAt: clock.now(), createdAt: clock.now() });
    expect(Buffer.from(queued.keyFingerprint!).equals(Buffer.from(org.systemKey.fingerprint))).toBe(true);
    expect(Buffer.from(queued.message!).equals(Buffer.from(a.message))).toBe(true);
    expect(done.announced).toEqual(queued);
    expect(journal.organisationsWantingAnnouncement()).toEqual([]);
  });

  test("a topic's anchoring queues nothing without an announcement, or when the organisation already had a topic; the topic is anchored all the same", () => {
    const first = journal.queueTopicCreate(orgId)!;
    expect(journal.toAnchoredTopic(row(first.transactionId), "0.0.5005", null, null)).toEqual({ at: clock.now(), announced: null });
    expect(announcements()).toEqual([]);
    // The organisation has a topic: a second creation's anchoring announces nothing on its topic.
    db.update(ledgerTransactions).set({ state: "abandoned" }).where(eq(ledgerTransactions.transactionId, first.transactionId)).run();
    clock.advance(topicRequeueDelay(1));
    const again = journal.queueTopicCreate(orgId)!;
    expect(journal.toAnchoredTopic(row(again.transactionId), "0.0.6006", null, announcement())!.announced).toBeNull();
    expect(row(again.transactionId).state).toBe("anchored");
    expect(announcements()).toEqual([]);
    // Provisioning's turn: the organisation has a topic and no announcement.
    expect(journal.organisationsWantingAnnouncement()).toEqual([orgId]);
  });

  test("a topic's anchoring with the key already announced live: the UNIQUE violation queues nothing, and the topic's change still commits", () => {
    setTopic(TOPIC);
    const live = journal.queueAnnouncement(orgId, announcement())!;
    setTopic(null);
    const created = journal.queueTopicCreate(orgId)!;
    expect(journal.toAnchoredTopic(row(created.transactionId), "0.0.5005", null, announcement())!.announced).toBeNull();
    expect(row(created.transactionId).state).toBe("anchored");
    expect(db.select().from(organisations).where(eq(organisations.id, orgId)).get()!.topicId).toBe("0.0.5005");
    expect(announcements().map((r) => r.transactionId)).toEqual([live.transactionId]);
  });

  test("provisioning: an organisation with a topic and no live announcement of its current key wants one; one per organisation and key", () => {
    expect(journal.organisationsWantingAnnouncement()).toEqual([]); // no topic yet
    expect(journal.queueAnnouncement(orgId, announcement())).toBeNull();
    setTopic(TOPIC);
    expect(journal.organisationsWantingAnnouncement()).toEqual([orgId]);
    const queued = journal.queueAnnouncement(orgId, announcement())!;
    expect(queued).toMatchObject({ kind: "key_announcement", state: "pending", topicId: TOPIC, orgId });
    expect(journal.organisationsWantingAnnouncement()).toEqual([]);
    expect(journal.queueAnnouncement(orgId, announcement())).toBeNull(); // ledger_transactions_one_announcement
    journal.toAnchoredMessage(queued, CONFIRMED);
    expect(journal.queueAnnouncement(orgId, announcement())).toBeNull(); // anchored is live too
    expect(announcements()).toHaveLength(1);
    // A new key: the old one's announcement does not cover it, and one built for the old key is refused.
    const oldKey = org.systemKey.fingerprint;
    setKey(fixture.seal.fingerprint);
    expect(journal.organisationsWantingAnnouncement()).toEqual([orgId]);
    expect(journal.queueAnnouncement(orgId, announcement(oldKey))).toBeNull();
    const next = journal.queueAnnouncement(orgId, announcement(fixture.seal.fingerprint))!;
    expect(Buffer.from(next.keyFingerprint!).equals(Buffer.from(fixture.seal.fingerprint))).toBe(true);
    expect(journal.organisationsWantingAnnouncement()).toEqual([]);
  });

  test("a change of domain raises the generation: wanted again, once; one built at another generation is refused; records never wait for it", async () => {
    const generation = () => db.select().from(organisations).where(eq(organisations.id, orgId)).get()!.announcementGeneration;
    setTopic(TOPIC);
    const first = journal.queueAnnouncement(orgId, announcement())!;
    journal.toAnchoredMessage(first, { ...CONFIRMED, sequenceNumber: 1 });
    const { transactionId: rec } = queueRecord();
    expect(journal.organisationsWantingAnnouncement()).toEqual([]);

    await fixture.orgs.set(orgId, { domain: "Example.ORG" }, "test");
    expect(generation()).toBe(1);
    // The same domain again (or any other flag) is no change of what the announcement says.
    await fixture.orgs.set(orgId, { domain: "example.org", validated: true }, "test");
    expect(generation()).toBe(1);
    expect(journal.organisationsWantingAnnouncement()).toEqual([orgId]);
    // Built before the change: refused; built after it: queued once, beside the anchored one.
    expect(journal.queueAnnouncement(orgId, announcement(org.systemKey.fingerprint, 0))).toBeNull();
    const second = journal.queueAnnouncement(orgId, announcement(org.systemKey.fingerprint, 1))!;
    expect(second).toMatchObject({ kind: "key_announcement", state: "pending", announcementGeneration: 1 });
    expect(journal.queueAnnouncement(orgId, announcement(org.systemKey.fingerprint, 1))).toBeNull();
    expect(journal.organisationsWantingAnnouncement()).toEqual([]);
    // The key was announced (generation 0, anchored): its records go while the new one is pending.
    expect(journal.due(10, new Set()).map((r) => r.transactionId).sort()).toEqual([rec, second.transactionId].sort());
    // Abandoned, it is queued again at its own generation.
    const requeued = journal.abandon(row(second.transactionId), "x")!.requeued!;
    expect(row(requeued)).toMatchObject({ state: "pending", announcementGeneration: 1 });
    expect(Buffer.from(row(requeued).message!).equals(Buffer.from(second.message!))).toBe(true);
    expect(journal.organisationsWantingAnnouncement()).toEqual([]);
    // Cleared: a third generation, a third announcement.
    await fixture.orgs.set(orgId, { domain: null }, "test");
    expect(generation()).toBe(2);
    expect(journal.organisationsWantingAnnouncement()).toEqual([orgId]);
    expect(journal.queueAnnouncement(orgId, announcement(org.systemKey.fingerprint, 2))).toMatchObject({ announcementGeneration: 2 });
    expect(announcements().filter((r) => r.state !== "abandoned").map((r) => r.announcementGeneration).sort()).toEqual([0, 1, 2]);
  });

  test("a topic's anchoring with an announcement built before a change of domain queues none: provisioning builds it afresh", async () => {
    const created = journal.queueTopicCreate(orgId)!;
    const stale = announcement(org.systemKey.fingerprint, 0);
    await fixture.orgs.set(orgId, { domain: "example.org" }, "test");
    expect(journal.toAnchoredTopic(row(created.transactionId), "0.0.5005", null, stale)!.announced).toBeNull();
    expect(row(created.transactionId).state).toBe("anchored");
    expect(journal.organisationsWantingAnnouncement()).toEqual([orgId]);
    expect(journal.queueAnnouncement(orgId, announcement(org.systemKey.fingerprint, 1))).toMatchObject({ topicId: "0.0.5005", announcementGeneration: 1 });
  });

  test("two processes racing to queue it: one row; the second's UNIQUE violation means someone else queued it", () => {
    setTopic(TOPIC);
    const other = openDatabase({ path: db.$client.filename });
    try {
      const theirs = new AnchorJournal(other, clock, ids);
      const mine = journal.queueAnnouncement(orgId, announcement());
      expect(mine).not.toBeNull();
      expect(theirs.queueAnnouncement(orgId, announcement())).toBeNull();
      expect(announcements().map((r) => r.transactionId)).toEqual([mine!.transactionId]);
    } finally {
      other.$client.close();
    }
  });

  test("a message of 0 or more than 1024 bytes is refused before anything is written", () => {
    setTopic(TOPIC);
    for (const size of [0, 1025]) {
      expect(() => journal.queueAnnouncement(orgId, { keyFingerprint: org.systemKey.fingerprint, generation: 0, message: new Uint8Array(size) })).toThrow("1 to 1024 bytes");
    }
    expect(announcements()).toEqual([]);
  });

  test("anchored: sequence number, consensus time and running hash on the row; no record is touched", () => {
    setTopic(TOPIC);
    const { recordId } = queueRecord();
    const queued = journal.queueAnnouncement(orgId, announcement())!;
    journal.toAccepted(queued, 0);
    expect(journal.toAnchoredMessage(row(queued.transactionId), CONFIRMED)).toBe(clock.now());
    const r = row(queued.transactionId);
    expect(r).toMatchObject({ state: "anchored", sequenceNumber: 7, consensusAt: CONFIRMED.consensusAt, recordId: null });
    expect([...r.runningHash!]).toEqual([...CONFIRMED.runningHash]);
    expect(record(recordId)).toMatchObject({ anchorState: "pending", sequenceNumber: null, consensusAt: null });
  });

  test("abandoned: queued again in the same transaction with the same bytes, key and topic under a new id; the first at once, repeated failures back off", () => {
    setTopic(TOPIC);
    let current = journal.queueAnnouncement(orgId, announcement())!.transactionId;
    const first = row(current);
    const delays: number[] = [];
    for (let i = 0; i < 3; i++) {
      db.update(ledgerTransactions).set({ attempts: 1, signedBytes: Buffer.from([i]) }).where(eq(ledgerTransactions.transactionId, current)).run();
      clock.advance(60_000);
      const done = journal.abandon(row(current), "did not reach consensus within its validity window")!;
      expect(done.requeued).not.toBeNull();
      const next = row(done.requeued!);
      expect(next).toMatchObject({ kind: "key_announcement", state: "pending", orgId, recordId: null, topicId: TOPIC, attempts: 0, signedBytes: null, createdAt: clock.now() });
      expect(Buffer.from(next.message!).equals(Buffer.from(first.message!))).toBe(true);
      expect(Buffer.from(next.keyFingerprint!).equals(Buffer.from(first.keyFingerprint!))).toBe(true);
      expect(next.transactionId).not.toBe(current);
      delays.push(next.nextAttemptAt - clock.now());
      current = next.transactionId;
    }
    expect(delays).toEqual([0, 30_000, 60_000]);
    // Every submission unsent: not counted.
    db.update(ledgerTransactions).set({ attempts: 0, signedBytes: Buffer.from([9]) }).where(eq(ledgerTransactions.transactionId, current)).run();
    current = journal.abandon(row(current), "the validity window closed before the transaction could reach a node")!.requeued!;
    expect(row(current).nextAttemptAt - clock.now()).toBe(60_000);
    expect(announcements().filter((r) => r.state !== "abandoned").map((r) => r.transactionId)).toEqual([current]);
    expect(journal.organisationsWantingAnnouncement()).toEqual([]);
  });

  test("gating: a record message is not due until its organisation's current key has an anchored announcement; set aside meanwhile, it goes when one is anchored", async () => {
    const { transactionId: rec } = queueRecord();
    setTopic(TOPIC);
    const other = await fixture.createOrg(`Other ${Math.random()}`, { addon: true });
    // Topic creations and revocations never wait.
    const topic = journal.queueTopicCreate(other.id)!.transactionId;
    expect(journal.due(10, new Set()).map((r) => r.transactionId)).toEqual([topic]);
    journal.abandon(row(topic), "x");
    // The record was looked at and set aside: due again after WAITING_RECHECK_MS, not before.
    expect(journal.nextDueAt()).toBe(clock.now() + WAITING_RECHECK_MS);
    expect(row(rec).nextAttemptAt).toBe(clock.now() + WAITING_RECHECK_MS);
    // Pending, then accepted: the announcement is due itself, the record is not.
    const ann = journal.queueAnnouncement(orgId, announcement())!.transactionId;
    expect(journal.due(10, new Set()).map((r) => r.transactionId)).toEqual([ann]);
    journal.toAccepted(row(ann), 1000);
    expect(journal.due(10, new Set())).toEqual([]);
    expect(journal.nextDueAt()).toBe(clock.now() + 1000);
    journal.toAnchoredMessage(row(ann), { ...CONFIRMED, sequenceNumber: 1 });
    expect(journal.due(10, new Set()).map((r) => r.transactionId)).toEqual([rec]);
    expect(journal.nextDueAt()).toBe(row(rec).nextAttemptAt);
    // A new key: the old key's announcement no longer lets record messages go.
    setKey(fixture.seal.fingerprint);
    expect(journal.due(10, new Set())).toEqual([]);
    expect(journal.nextDueAt()).toBe(clock.now() + WAITING_RECHECK_MS);
    // Looked at again when its time comes, it is set aside again: never returned, never lost.
    clock.advance(WAITING_RECHECK_MS);
    expect(journal.due(10, new Set())).toEqual([]);
    expect(journal.nextDueAt()).toBe(clock.now() + WAITING_RECHECK_MS);
    // An abandoned announcement of the new key does not let it go either.
    const fresh = journal.queueAnnouncement(orgId, announcement(fixture.seal.fingerprint))!;
    db.update(ledgerTransactions).set({ state: "abandoned" }).where(eq(ledgerTransactions.transactionId, fresh.transactionId)).run();
    clock.advance(WAITING_RECHECK_MS);
    expect(journal.due(10, new Set())).toEqual([]);
    // The new key's announcement anchored: the record goes at once, not after its recheck time.
    const third = journal.queueAnnouncement(orgId, announcement(fixture.seal.fingerprint))!.transactionId;
    expect(journal.due(10, new Set()).map((r) => r.transactionId)).toEqual([third]);
    journal.toAnchoredMessage(row(third), { ...CONFIRMED, sequenceNumber: 2 });
    expect(journal.nextDueAt()).toBe(clock.now());
    expect(journal.due(10, new Set()).map((r) => r.transactionId)).toEqual([rec]);
  });

  test("a record set aside and not yet written is not held back by it when the announcement is anchored first", () => {
    setTopic(TOPIC);
    const ann = journal.queueAnnouncement(orgId, announcement())!.transactionId;
    const { transactionId: rec } = queueRecord();
    // One pass: the announcement goes, the record is set aside (in memory, written at the next flush).
    expect(journal.due(10, new Set()).map((r) => r.transactionId)).toEqual([ann]);
    journal.toAnchoredMessage(row(ann), { ...CONFIRMED, sequenceNumber: 1 });
    expect(journal.due(10, new Set()).map((r) => r.transactionId)).toEqual([rec]);
    expect(row(rec).nextAttemptAt).toBeLessThanOrEqual(clock.now());
  });

  test("a backlog waiting for an announcement is looked at once per recheck, not on every pass", () => {
    setTopic(TOPIC);
    const waiting = Array.from({ length: 30 }, () => queueRecord().transactionId);
    const looks = () => (db.$client.query("SELECT count(*) AS n FROM ledger_transactions WHERE state = 'pending' AND next_attempt_at <= ?").get(clock.now()) as { n: number }).n;
    expect(looks()).toBe(30);
    // Passes of 10 rows: three set the whole backlog aside, the fourth finds nothing to look at.
    for (let i = 0; i < 3; i++) expect(journal.due(10, new Set())).toEqual([]);
    journal.flush();
    expect(looks()).toBe(0);
    expect(journal.due(10, new Set())).toEqual([]);
    expect(journal.nextDueAt()).toBe(clock.now() + WAITING_RECHECK_MS);
    expect(waiting.map((id) => row(id).state)).toEqual(waiting.map(() => "pending"));
  });

  test("gating of a person's record: its message waits for the announcement of the person's key, not the organisation's", () => {
    setTopic(TOPIC);
    const ann = journal.queueAnnouncement(orgId, announcement())!.transactionId;
    journal.toAnchoredMessage(row(ann), { ...CONFIRMED, sequenceNumber: 1 });
    const personKey = fixture.seal.fingerprint;
    const recordId = fixture.addOrgRecord(org, { docHash: docHashOf(Bun.randomUUIDv7()), anchorState: "pending" });
    const { transactionId: rec, signedAtMs } = record(recordId);
    insertPendingMessage(db, { kind: "record_message", transactionId: rec, validStartMs: signedAtMs, validSeconds: 30, orgId, recordId, topicId: TOPIC, message: new TextEncoder().encode('{"v":1}'), now: clock.now(), keyFingerprint: personKey });
    // The organisation's key is announced and anchored: not enough.
    expect(journal.due(10, new Set())).toEqual([]);
    expect(journal.nextDueAt()).toBe(clock.now() + WAITING_RECHECK_MS);
    const personal = ids();
    insertPendingPersonKeyAnnouncement(db, { ...personal, orgId, topicId: TOPIC, message: new TextEncoder().encode('{"v":1,"type":"person_key"}'), keyFingerprint: personKey, now: clock.now() });
    expect(journal.due(10, new Set()).map((r) => r.transactionId)).toEqual([personal.transactionId]);
    journal.toAnchoredMessage(row(personal.transactionId), { ...CONFIRMED, sequenceNumber: 2 });
    expect(journal.due(10, new Set()).map((r) => r.transactionId)).toEqual([rec]);
    // Only a record message may wait for a person's key.
    expect(() =>
      insertPendingMessage(db, { kind: "revocation_message", transactionId: "0.0.2@1.000000001", validStartMs: 1, validSeconds: 30, orgId, recordId, topicId: TOPIC, message: new Uint8Array([1]), now: 1, keyFingerprint: personKey }),
    ).toThrow(TypeError);
  });

  test("due's rows are exactly drizzle's rows (its prepared statement maps every column)", () => {
    setTopic(TOPIC);
    const ann = journal.queueAnnouncement(orgId, announcement())!.transactionId;
    db.update(ledgerTransactions).set({ signedBytes: Buffer.from([1, 2, 3]), runningHash: Buffer.from([4]), lastError: "e", attempts: 2 }).where(eq(ledgerTransactions.transactionId, ann)).run();
    const [due] = journal.due(10, new Set());
    expect(due).toEqual(row(ann));
    expect(Object.keys(due!).sort()).toEqual(Object.keys(row(ann)).sort());
    expect(Buffer.isBuffer(due!.message)).toBe(true);
  });

  test("due and nextDueAt read the work index in order; the announcement is read through indexes (the partial unique index, the organisation's key), never a scan", () => {
    // The statements the journal runs (per state): in index order, no sort of all the due rows.
    for (const q of [DUE_SQL, NEXT_DUE_SQL]) {
      const plan = (db.$client.query(`EXPLAIN QUERY PLAN ${q}`).all() as { detail: string }[]).map((r) => r.detail);
      expect(plan.filter((d) => /TEMP B-TREE/.test(d))).toEqual([]);
      expect(plan.some((d) => /^SEARCH ledger_transactions USING (COVERING )?INDEX ledger_transactions_work/.test(d))).toBe(true);
      expect(plan.filter((d) => /^SCAN/.test(d))).toEqual([]);
    }
    const announced = (db.$client.query(`EXPLAIN QUERY PLAN ${ANNOUNCED_SQL}`).all() as { detail: string }[]).map((r) => r.detail);
    expect(announced.some((d) => /^SEARCH ledger_transactions USING INDEX sqlite_autoindex_ledger_transactions_1/.test(d))).toBe(true);
    expect(announced.some((d) => /^SEARCH a USING INDEX ledger_transactions_one_announcement/.test(d))).toBe(true);
    expect(announced.some((d) => /^SEARCH o USING (INDEX sqlite_autoindex_organisations_1|INTEGER PRIMARY KEY)/.test(d))).toBe(true);
    expect(announced.filter((d) => /^SCAN/.test(d))).toEqual([]);
    const wanting = (db.$client.query(`EXPLAIN QUERY PLAN ${WANTING_ANNOUNCEMENT}`).all() as { detail: string }[]).map((r) => r.detail);
    expect(wanting.some((d) => /USING INDEX ledger_transactions_one_announcement \(org_id=\? AND key_fingerprint=\? AND announcement_generation=\?\)/.test(d))).toBe(true);
  });
});

test("queueSummary: counts by state, the oldest unfinished row, the last error", () => {
  expect(sqliteStore(db).readSync(queueSummary(clock.now()))).toEqual({ pending: 0, accepted: 0, anchored: 0, abandoned: 0, oldestUnfinished: null, lastError: null });
  const a = queueRecord().transactionId;
  clock.advance(2000);
  const b = queueRecord().transactionId;
  const c = queueRecord().transactionId;
  journal.toAccepted(row(b), 0);
  journal.abandon(row(c), "refused at precheck: BUSY_FOREVER");
  clock.advance(3000);
  expect(sqliteStore(db).readSync(queueSummary(clock.now()))).toEqual({
    pending: 1,
    accepted: 1,
    anchored: 0,
    abandoned: 1,
    oldestUnfinished: { transactionId: a, kind: "record_message", state: "pending", ageSeconds: 5 },
    lastError: { transactionId: c, state: "abandoned", error: "refused at precheck: BUSY_FOREVER", at: new Date(clock.now() - 3000).toISOString() },
  });
});
