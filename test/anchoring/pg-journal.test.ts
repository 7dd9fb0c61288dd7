/**
 * The anchor journal on PostgreSQL (anchoring/pg-journal.ts) against a real server: the state
 * changes and their guards as queue.ts's header states them, and the fencing that makes a node
 * that lost the lead change nothing (docs/storage.md "The anchor loop on PostgreSQL").
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { postgresAnchorStorage } from "../../src/anchoring/pg-journal.ts";
import { journalRules } from "../../src/anchoring/journal/rules.ts";
import { NotLeadingError, postgresJournal } from "../../src/storage/postgres/journal.ts";
import { pendingMessage, type LedgerTransactionRow } from "../../src/anchoring/queue.ts";
import { createTransactionIds } from "../../src/anchoring/transaction-ids.ts";
import { createSigner } from "../../src/crypto/index.ts";
import { createOrganisations } from "../../src/keys/organisations.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { DeposedError } from "../../src/storage/pg-cluster.ts";
import { migratePostgres } from "../../src/storage/pg-migrate.ts";
import { postgresStore, type PostgresStore } from "../../src/storage/pg-store.ts";
import { q } from "../../src/storage/store.ts";
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

const clock = manualClock(Date.UTC(2026, 10, 25, 9));
const signer = createSigner({ masterKey: new Uint8Array(32).fill(7), workers: 0 });

/** A migrated database, an organisation with a topic, the journal at `epoch` while `leading()`. */
async function setup() {
  const store = postgresStore(await pg.createDatabase("journal"));
  stores.push(store);
  await migratePostgres(store);
  const org = await createOrganisations({ store, signer, clock }).create({ name: "Acme", addon: true }, "test");
  await store.write(function* (tx, t) {
    yield* q(tx.update(t.organisations).set({ topicId: "0.0.1001" }));
  });
  let epoch: number | null = 1;
  await store.write(function* (tx) {
    yield* q(tx.execute(sql`UPDATE anchor_leader SET epoch = 1, node = 'test' WHERE id = 1`));
  });
  const ids = createTransactionIds({ clock, operator: "0.0.2", validSeconds: 120, backdateMs: 0, lastValidStartNs: 0n, lane: { index: 3, lanes: 1000 } });
  const journal = postgresJournal(store, journalRules(clock, ids), () => epoch);
  const queue = async (kind: "record_message" | "revocation_message", recordId = crypto.randomUUID()) => {
    const id = ids();
    await store.write(function* (tx, t) {
      yield* pendingMessage(tx, t, { ...id, kind, orgId: org.id, recordId, topicId: "0.0.1001", message: new TextEncoder().encode(`message ${recordId}`), now: clock.now() });
    });
    return id.transactionId;
  };
  const row = async (transactionId: string) =>
    (await store.read(function* (db, t) {
      return yield* q(db.select().from(t.ledgerTransactions).where(sql`${t.ledgerTransactions.transactionId} = ${transactionId}`));
    }))[0] as unknown as LedgerTransactionRow;
  const all = async () =>
    (await store.read(function* (db, t) {
      return yield* q(db.select().from(t.ledgerTransactions));
    })) as unknown as LedgerTransactionRow[];
  return { store, org, journal, queue, row, all, setEpoch: (e: number | null) => (epoch = e) };
}

describe("the anchor journal on PostgreSQL", () => {
  test("pending → attempt → accepted → anchored, each change guarded by the row's state", async () => {
    const { journal, queue, row } = await setup();
    const id = await queue("revocation_message");
    // A revocation row waits for no announcement: due at once.
    const due = await journal.due(10, new Set());
    expect(due.map((r) => r.transactionId)).toEqual([id]);
    const bytes = new Uint8Array([1, 2, 3]);
    expect(await journal.grouped.beginAttempt(due[0]!, bytes)).toBe(1);
    // Other bytes for the same row are refused: one transaction, one set of bytes.
    expect(await journal.grouped.beginAttempt(due[0]!, new Uint8Array([9]))).toBeNull();
    expect(await journal.takeBack(due[0]!, 1)).toBe(0);
    expect(await journal.grouped.beginAttempt(due[0]!, bytes)).toBe(1);
    const r = await row(id);
    expect(r.attempts).toBe(1);
    expect(Buffer.from(r.signedBytes!)).toEqual(Buffer.from(bytes));
    expect(await journal.grouped.toAccepted(r, 1000)).toBe(clock.now());
    expect(await journal.grouped.toAccepted(r, 1000)).toBeNull();
    expect(await journal.grouped.toAnchoredMessage(r, { sequenceNumber: 7, consensusAt: "1764061200.000000001", runningHash: new Uint8Array(48) })).toBe(clock.now());
    expect(await row(id)).toMatchObject({ state: "anchored", sequenceNumber: 7, consensusAt: "1764061200.000000001" });
    // Final: nothing moves it again.
    expect(await journal.abandon(r, "late")).toBeNull();
    expect((await journal.due(10, new Set())).length).toBe(0);
  });

  test("changes racing on one row (read committed): a state never goes back, attempts are never lost, other bytes never replace the first", async () => {
    const { journal, queue, row } = await setup();
    for (let i = 0; i < 10; i++) {
      const id = await queue("revocation_message");
      const r = await row(id);
      // Acceptance and anchoring of one row at once (a listing confirms it while its own step accepts it).
      const [accepted, anchored] = await Promise.all([
        journal.grouped.toAccepted(r, 1000),
        journal.grouped.toAnchoredMessage(r, { sequenceNumber: i + 1, consensusAt: "1764061200.000000001", runningHash: new Uint8Array(48) }),
      ]);
      expect(anchored).not.toBeNull();
      expect(await row(id)).toMatchObject({ state: "anchored", sequenceNumber: i + 1 });
      expect(accepted === null || typeof accepted === "number").toBe(true);
    }
    const id = await queue("revocation_message");
    const r = await row(id);
    const counts = await Promise.all([1, 2, 3, 4].map(() => journal.grouped.beginAttempt(r, new Uint8Array([7, 7]))));
    expect(counts.sort()).toEqual([1, 2, 3, 4]);
    expect(await journal.grouped.beginAttempt(r, new Uint8Array([8]))).toBeNull();
    expect(await row(id)).toMatchObject({ attempts: 4 });
    expect(Buffer.from((await row(id)).signedBytes!)).toEqual(Buffer.from([7, 7]));
  });

  test("grouped changes made together commit in one transaction; a refused fence refuses them all", async () => {
    const { store, journal, queue, row } = await setup();
    const ids = [];
    for (let i = 0; i < 10; i++) ids.push(await queue("revocation_message"));
    const rows = await Promise.all(ids.map(row));
    const accepted = await Promise.all(rows.map((r) => journal.grouped.toAccepted(r, 1000)));
    expect(accepted.every((a) => a === clock.now())).toBe(true);
    // Rows changed by one transaction carry its id (xmin).
    const xmins = (await store.client`SELECT DISTINCT xmin::text AS x FROM ledger_transactions WHERE state = 'accepted'`) as { x: string }[];
    expect(xmins).toHaveLength(1);
    await store.write(function* (tx) {
      yield* q(tx.execute(sql`UPDATE anchor_leader SET epoch = 9 WHERE id = 1`));
    });
    const refused = await Promise.allSettled(rows.map((r) => journal.grouped.toAnchoredMessage({ ...r, state: "accepted" }, { sequenceNumber: 1, consensusAt: "1764061200.000000001", runningHash: new Uint8Array(48) })));
    expect(refused.every((o) => o.status === "rejected" && o.reason instanceof DeposedError)).toBe(true);
    for (const id of ids) expect((await row(id)).state).toBe("accepted");
  });

  test("a record message waits for its organisation's key announcement, and goes once it is anchored", async () => {
    const { store, journal, queue, org } = await setup();
    const id = await queue("record_message");
    expect(await journal.due(10, new Set())).toEqual([]);
    // The announcement, queued and anchored through the journal.
    expect(await journal.organisationsWantingAnnouncement()).toEqual([org.id]);
    const [stored] = await store.read(function* (db, t) {
      return yield* q(db.select({ key: t.organisations.systemKeyFingerprint }).from(t.organisations));
    });
    const keyFingerprint = new Uint8Array(stored!.key);
    // Another key than the organisation's is not announced.
    expect(await journal.queueAnnouncement(org.id, { keyFingerprint: new Uint8Array(32), generation: 0, message: new TextEncoder().encode("announcement") })).toBeNull();
    const announced = await journal.queueAnnouncement(org.id, { keyFingerprint, generation: 0, message: new TextEncoder().encode("announcement") });
    expect(announced).not.toBeNull();
    // Queued once: the unique index refuses a second live one, without aborting anything.
    expect(await journal.queueAnnouncement(org.id, { keyFingerprint, generation: 0, message: new TextEncoder().encode("announcement") })).toBeNull();
    expect(await journal.organisationsWantingAnnouncement()).toEqual([]);
    await journal.flush();
    const dueNow = await journal.due(10, new Set());
    expect(dueNow.map((r) => r.transactionId)).toEqual([announced!.transactionId]);
    expect(await journal.grouped.toAnchoredMessage(dueNow[0]!, { sequenceNumber: 1, consensusAt: "1764061200.000000001", runningHash: new Uint8Array(48) })).not.toBeNull();
    await journal.flush();
    expect((await journal.due(10, new Set())).map((r) => r.transactionId)).toEqual([id]);
  });

  test("a change of domain raises the generation: the key is wanted again and queued once at it; one built at another is refused; records do not wait for it; abandoned, it is queued again at its generation", async () => {
    const { store, journal, queue, row, all, org } = await setup();
    const orgs = createOrganisations({ store, signer, clock });
    const [stored] = await store.read(function* (db, t) {
      return yield* q(db.select({ key: t.organisations.systemKeyFingerprint }).from(t.organisations));
    });
    const keyFingerprint = new Uint8Array(stored!.key);
    const announce = (generation: number) => journal.queueAnnouncement(org.id, { keyFingerprint, generation, message: new TextEncoder().encode(`announcement ${generation}`) });
    const first = (await announce(0))!;
    expect(await journal.grouped.toAnchoredMessage(first, { sequenceNumber: 1, consensusAt: "1764061200.000000001", runningHash: new Uint8Array(48) })).not.toBeNull();
    const rec = await queue("record_message");

    expect(await orgs.set(org.id, { domain: "example.org" }, "test")).toMatchObject({ domain: "example.org" });
    expect(await journal.organisationsWantingAnnouncement()).toEqual([org.id]);
    expect(await announce(0)).toBeNull();
    const second = (await announce(1))!;
    expect(second).toMatchObject({ state: "pending", announcementGeneration: 1 });
    expect(await announce(1)).toBeNull();
    expect(await journal.organisationsWantingAnnouncement()).toEqual([]);
    await journal.flush();
    expect((await journal.due(10, new Set())).map((r) => r.transactionId).sort()).toEqual([rec, second.transactionId].sort());
    const requeued = (await journal.abandon(await row(second.transactionId), "x"))!.requeued!;
    expect(Number((await row(requeued)).announcementGeneration)).toBe(1);
    expect(await journal.organisationsWantingAnnouncement()).toEqual([]);
    // Anchored, the second announcement raises the change counter (a kept receipt carries it from then on).
    const counter = async () => (await store.read(function* (db, t) {
      return yield* q(db.select({ value: t.changeCounter.value }).from(t.changeCounter));
    }))[0]!.value;
    const was = await counter();
    expect(await journal.grouped.toAnchoredMessage(await row(requeued), { sequenceNumber: 3, consensusAt: "1764061200.000000003", runningHash: new Uint8Array(48) })).not.toBeNull();
    expect(await counter()).toBe(was + 1);
    expect((await all()).filter((r) => r.kind === "key_announcement" && r.state === "anchored").map((r) => Number(r.announcementGeneration)).sort()).toEqual([0, 1]);
  });

  test("an abandoned revocation is queued again with the same bytes; an abandoned topic creation is not queued again at once", async () => {
    const { store, journal, queue, row, all, org } = await setup();
    const id = await queue("revocation_message");
    const done = await journal.abandon(await row(id), "refused");
    expect(done?.requeued).toMatch(/^0\.0\.2@/);
    const again = await row(done!.requeued!);
    expect(again).toMatchObject({ state: "pending", kind: "revocation_message", recordId: (await row(id)).recordId });
    expect(Buffer.from(again.message!)).toEqual(Buffer.from((await row(id)).message!));
    // A topic creation: one live per organisation (its unique index), and after one that reached
    // a node was abandoned, not again before its backoff.
    const other = await createOrganisations({ store, signer, clock }).create({ name: "Beta", addon: true }, "test");
    expect(await journal.organisationsWantingTopic()).toEqual([other.id]);
    const topic = await journal.queueTopicCreate(other.id);
    expect(topic).toMatchObject({ kind: "topic_create", orgId: other.id, state: "pending" });
    expect(await journal.queueTopicCreate(other.id)).toBeNull();
    expect(await journal.organisationsWantingTopic()).toEqual([]);
    expect(await journal.grouped.beginAttempt(topic!, new Uint8Array([4]))).toBe(1);
    expect(await journal.abandon(topic!, "failed at consensus")).toMatchObject({ requeued: null });
    expect(await journal.organisationsWantingTopic()).toEqual([other.id]);
    expect(await journal.queueTopicCreate(other.id)).toBeNull();
    clock.advance(60_000);
    expect(await journal.queueTopicCreate(other.id)).not.toBeNull();
    expect((await all()).filter((r) => r.kind === "topic_create").length).toBe(2);
    expect(org.id).not.toBe(other.id);
  });

  test("rows that can no longer be submitted: pending, no submission that may have reached a node, less than the margin of their window left", async () => {
    const { journal, queue } = await setup();
    const never = await queue("record_message");
    const sent = await queue("record_message");
    expect(await journal.grouped.beginAttempt({ transactionId: sent }, new Uint8Array([1]))).toBe(1);
    const takenBack = await queue("revocation_message");
    expect(await journal.grouped.beginAttempt({ transactionId: takenBack }, new Uint8Array([2]))).toBe(1);
    expect(await journal.takeBack({ transactionId: takenBack }, 1)).toBe(0);
    // A backoff far beyond the window does not hide a row.
    journal.reschedule({ transactionId: never, state: "pending" }, 3_600_000, "not sent: refused");
    expect(await journal.unsentPastCutoff(10_000, 100)).toEqual([]);
    clock.advance(110_000); // 120 s windows: 10 s left, not less
    expect(await journal.unsentPastCutoff(10_000, 100)).toEqual([]);
    clock.advance(2);
    const rows = await journal.unsentPastCutoff(10_000, 100);
    expect(rows.map((r) => r.transactionId).sort()).toEqual([never, takenBack].sort());
    expect(rows.every((r) => r.state === "pending" && r.attempts === 0)).toBe(true);
    expect((await journal.unsentPastCutoff(10_000, 1)).length).toBe(1);
    await journal.abandon(rows.find((r) => r.transactionId === never)!, "the validity window closed");
    expect((await journal.unsentPastCutoff(10_000, 100)).map((r) => r.transactionId)).toEqual([takenBack]);
  });

  test("fenced: a node whose epoch is no longer the leader's changes nothing, and one that does not lead is refused at once", async () => {
    const { store, journal, queue, row, setEpoch } = await setup();
    const id = await queue("revocation_message");
    const [r] = await journal.due(10, new Set());
    // Another node took the lead: epoch 2.
    await store.write(function* (tx) {
      yield* q(tx.execute(sql`UPDATE anchor_leader SET epoch = 2, node = 'other' WHERE id = 1`));
    });
    await expect(journal.grouped.beginAttempt(r!, new Uint8Array([1]))).rejects.toBeInstanceOf(DeposedError);
    await expect(journal.abandon(r!, "late")).rejects.toBeInstanceOf(DeposedError);
    expect(await row(id)).toMatchObject({ state: "pending", attempts: 0, signedBytes: null });
    // Not leading at all: refused before any round trip; reschedule hints are dropped, not written.
    setEpoch(null);
    await expect(journal.grouped.toAccepted(r!, 1000)).rejects.toBeInstanceOf(NotLeadingError);
    journal.reschedule(r!, 60_000, "hint");
    await journal.flush();
    expect(await row(id)).toMatchObject({ state: "pending", lastError: null });
  });

  test("the queue's counts carry what the leader reported it anchored, only while its heartbeat is fresh", async () => {
    const { store, journal, queue } = await setup();
    await queue("revocation_message");
    await store.write(function* (tx) {
      yield* q(tx.execute(sql`UPDATE anchor_leader SET anchored_recently = 321, seen_at = now() WHERE id = 1`));
    });
    expect(await journal.unfinished()).toMatchObject({ pending: 1, accepted: 0, anchoredByLeader: 321 });
    await store.write(function* (tx) {
      yield* q(tx.execute(sql`UPDATE anchor_leader SET seen_at = now() - interval '1 minute' WHERE id = 1`));
    });
    expect((await journal.unfinished()).anchoredByLeader).toBe(0);
  });

  test("the storage: transaction ids in this node's lane, after the last valid start in the journal", async () => {
    const { store, queue } = await setup();
    await queue("revocation_message");
    const storage = await postgresAnchorStorage(store, { epoch: () => 1, lane: { index: 5, lanes: 1000, held: () => true } });
    const next = storage.transactionIds({ clock, operator: "0.0.2", validSeconds: 120, backdateMs: 0 });
    const a = next();
    const ns = BigInt(a.transactionId.split("@")[1]!.replace(".", ""));
    expect(ns % 1000n).toBe(5n);
    expect(storage.active!()).toBe(true);
  });
});
