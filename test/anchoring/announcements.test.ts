/**
 * Key announcements on the ledger (docs/receipts.md §1), against the local ledger
 * through the real SDK: the announcement is an organisation's first message on a new topic,
 * records wait for it, a topic that predates announcements gets one at the next start, an
 * abandoned one is queued again with the same bytes, and it is queued and submitted exactly once
 * across loops, processes and a `kill -9` of `serve`. Also, without a ledger, how
 * src/records/announcements.ts builds it (the seal key read, created, or not available), and the
 * loop when it cannot be built yet.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { join } from "node:path";
import { openCore, type Core } from "../../src/app/core.ts";
import { createAnchoring } from "../../src/anchoring/anchorer.ts";
import { anchoringDrivers, journalDrivers, recordsDrivers } from "../support/drivers.ts";
import { localLinks } from "../../src/anchoring/setup.ts";
import { parseConfig } from "../../src/config/index.ts";
import { startLocalLedger } from "../../src/local-ledger/index.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { createKeyAnnouncements } from "../../src/records/announcements.ts";
import { sqliteStore } from "../../src/storage/store.ts";
import { decodeLedgerMessage, encodeBatchMessage, encodeKeyAnnouncementMessage } from "../../src/records/messages.ts";
import { SEAL_KEY_META } from "../../src/records/seal-key.ts";
import { ledgerTransactions, organisations, serviceMeta } from "../../src/storage/schema.ts";
import { createSigner } from "../../src/crypto/index.ts";
import { ensureSealKey } from "../../src/records/seal-key.ts";
import { signingKeys } from "../../src/storage/schema.ts";
import { BUN, cleanup, onCleanup, ROOT, startService, tempDir } from "../support/env.ts";
import { createRecordsFixture, MASTER_KEY } from "../support/records-fixture.ts";
import { waitFor } from "../support/wait.ts";
import { makeRig, VALID_SECONDS, type Rig } from "./rig.ts";

afterEach(cleanup);

type Row = typeof ledgerTransactions.$inferSelect;
interface MirrorMessage {
  readonly message: string;
  readonly sequence_number: number;
  readonly running_hash: string;
  readonly consensus_timestamp: string;
}

const orgRow = (core: Core, orgId: string) => core.db.select().from(organisations).where(eq(organisations.id, orgId)).get()!;
const announcementsOf = (core: Core, orgId: string): Row[] =>
  core.db
    .select()
    .from(ledgerTransactions)
    .where(and(eq(ledgerTransactions.orgId, orgId), eq(ledgerTransactions.kind, "key_announcement")))
    .all();

/** The announcement bytes docs/receipts.md §1 prescribes for the organisation, from what the database holds. */
function expectedAnnouncement(core: Core, orgId: string): Uint8Array {
  const org = orgRow(core, orgId);
  const seal = core.db.select().from(serviceMeta).where(eq(serviceMeta.key, SEAL_KEY_META)).get()!;
  return encodeKeyAnnouncementMessage({
    orgId,
    name: org.name,
    algorithm: "ML-DSA-65",
    keyFingerprint: org.systemKeyFingerprint,
    sealKeyFingerprint: Buffer.from(seal.value, "hex"),
  });
}

async function messagesOn(mirrorUrl: string, topicId: string): Promise<MirrorMessage[]> {
  const res = await fetch(`${mirrorUrl}/api/v1/topics/${topicId}/messages?limit=100`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { messages: MirrorMessage[] }).messages;
}

const bytesOf = (m: MirrorMessage) => Buffer.from(m.message, "base64");
const isKeyMessage = (m: MirrorMessage) => {
  try {
    return decodeLedgerMessage(bytesOf(m)).type === "key";
  } catch {
    return false; // the rig's records carry messages of their own shape
  }
};

/** Drives the rig until `done` holds (at most `times` passes). */
async function driveUntil(rig: Rig, what: string, done: () => boolean, times = 40): Promise<void> {
  for (let i = 0; i < times; i++) {
    if (done()) return;
    await rig.drive(1);
  }
  if (!done()) throw new Error(`not reached after ${times} passes: ${what}`);
}

/** An organisation with the add-on; the rig's loop creates its topic (returned once it exists, announcement or not). */
async function newOrgTopic(rig: Rig): Promise<{ orgId: string; topicId: string }> {
  const org = await rig.core.organisations.create({ name: `Announced "Org" \\ ${Math.random()}`, addon: true }, "test");
  await driveUntil(rig, "the topic", () => orgRow(rig.core, org.id).topicId !== null);
  return { orgId: org.id, topicId: orgRow(rig.core, org.id).topicId! };
}

/**
 * An organisation whose topic and anchored records predate announcements, as the version before
 * them left it: topic, records at sequence numbers 1..n, no key_announcement row. That version
 * held no record back, so a stand-in anchored row opens the way while they anchor (and, being
 * live, keeps the topic's creation from queueing an announcement); it is then deleted.
 */
async function orgBeforeAnnouncements(rig: Rig, records = 2): Promise<{ orgId: string; topicId: string; recordIds: string[] }> {
  const org = await rig.core.organisations.create({ name: `Old Org ${Math.random()}`, addon: true }, "test");
  const standIn = "0.0.2@1.000000001";
  rig.core.db
    .insert(ledgerTransactions)
    .values({
      transactionId: standIn,
      kind: "key_announcement",
      orgId: org.id,
      keyFingerprint: orgRow(rig.core, org.id).systemKeyFingerprint,
      message: Buffer.from("stand-in"),
      validStartMs: 0,
      validSeconds: VALID_SECONDS,
      state: "anchored",
      nextAttemptAt: 0,
      createdAt: 0,
      updatedAt: 0,
    })
    .run();
  await driveUntil(rig, "the topic", () => orgRow(rig.core, org.id).topicId !== null);
  const topicId = orgRow(rig.core, org.id).topicId!;
  const recs = Array.from({ length: records }, () => rig.insertRecord(org.id, topicId));
  await driveUntil(rig, "the records anchored", () => recs.every((r) => rig.record(r.recordId).anchorState === "anchored"));
  rig.core.db.delete(ledgerTransactions).where(eq(ledgerTransactions.transactionId, standIn)).run();
  expect(announcementsOf(rig.core, org.id)).toEqual([]);
  expect((await messagesOn(rig.local.mirrorUrl, topicId)).map((m) => m.sequence_number)).toEqual(recs.map((_, i) => i + 1));
  return { orgId: org.id, topicId, recordIds: recs.map((r) => r.recordId) };
}

const anchorLines = (rig: Rig, transactionId: string) => rig.log.lines.filter((l) => l.msg === "anchor" && l.transactionId === transactionId);

describe("announcementFor (src/records/announcements.ts), without a ledger", () => {
  const sealNamed = (f: ReturnType<typeof createRecordsFixture>) => f.db.select().from(serviceMeta).where(eq(serviceMeta.key, SEAL_KEY_META)).get();

  test("the organisation's current key and name, and the seal key named in service_meta", async () => {
    const f = createRecordsFixture();
    const org = await f.createOrg('Quote " and \\ Ltd');
    const seal = ensureSealKey({ db: f.db, signer: f.signer, clock: f.clock });
    const a = createKeyAnnouncements({ keys: recordsDrivers(sqliteStore(f.db)).keys, signer: f.signer, clock: f.clock })(org.id)!;
    expect(Buffer.from(a.keyFingerprint).equals(Buffer.from(org.systemKey.fingerprint))).toBe(true);
    expect(Buffer.from(a.message).equals(Buffer.from(encodeKeyAnnouncementMessage({ orgId: org.id, name: org.name, algorithm: "ML-DSA-65", keyFingerprint: org.systemKey.fingerprint, sealKeyFingerprint: seal.fingerprint })))).toBe(true);
  });

  test("the organisation's domain after its name, and the announcement generation the domain was read at (a change raises it)", async () => {
    const f = createRecordsFixture();
    const org = await f.createOrg("Domain Ltd");
    const seal = ensureSealKey({ db: f.db, signer: f.signer, clock: f.clock });
    const announce = createKeyAnnouncements({ keys: recordsDrivers(sqliteStore(f.db)).keys, signer: f.signer, clock: f.clock });
    expect(announce(org.id)!.generation).toBe(0);
    await f.orgs.set(org.id, { domain: "domain.example" }, "test");
    const a = announce(org.id)!;
    expect(a.generation).toBe(1);
    const expected = encodeKeyAnnouncementMessage({ orgId: org.id, name: org.name, domain: "domain.example", algorithm: "ML-DSA-65", keyFingerprint: org.systemKey.fingerprint, sealKeyFingerprint: seal.fingerprint });
    expect(Buffer.from(a.message).equals(Buffer.from(expected))).toBe(true);
    expect(Buffer.from(a.message).toString()).toContain(`"name":"Domain Ltd","domain":"domain.example","algorithm"`);
    await f.orgs.set(org.id, { domain: null }, "test");
    const cleared = announce(org.id)!;
    expect(cleared.generation).toBe(2);
    expect(decodeLedgerMessage(cleared.message)).not.toHaveProperty("domain");
  });

  test("no seal key yet: created as record creation creates it, and the one record creation then uses", async () => {
    const f = createRecordsFixture();
    const org = await f.createOrg("Fresh Ltd");
    expect(sealNamed(f)).toBeUndefined();
    const a = createKeyAnnouncements({ keys: recordsDrivers(sqliteStore(f.db)).keys, signer: f.signer, clock: f.clock })(org.id)!;
    const named = sealNamed(f)!;
    expect((decodeLedgerMessage(a.message) as { sealKeyFingerprint: string }).sealKeyFingerprint).toBe(named.value);
    expect(f.db.select().from(signingKeys).where(eq(signingKeys.fingerprint, Buffer.from(named.value, "hex"))).get()).toMatchObject({ purpose: "service-seal" });
    expect(Buffer.from(ensureSealKey({ db: f.db, signer: f.signer, clock: f.clock }).fingerprint).toString("hex")).toBe(named.value);
  });

  test("no seal key and a sealed key store (no master key): null, and nothing written; the organisation unknown: null", async () => {
    const f = createRecordsFixture();
    const org = await f.createOrg("Sealed Ltd");
    const sealed = createKeyAnnouncements({ keys: recordsDrivers(sqliteStore(f.db)).keys, signer: createSigner({ masterKey: null }), clock: f.clock });
    expect(sealed(org.id)).toBeNull();
    expect(sealNamed(f)).toBeUndefined();
    // Once a seal key exists (made by a process that has the master key), the sealed one can announce.
    ensureSealKey({ db: f.db, signer: createSigner({ masterKey: MASTER_KEY }), clock: f.clock });
    expect(sealed(org.id)).not.toBeNull();
    expect(sealed(Bun.randomUUIDv7())).toBeNull();
  });

  test("an organisation whose key is not in signing_keys: an error naming it, never a message", async () => {
    const f = createRecordsFixture();
    const org = await f.createOrg("Broken Ltd");
    f.db.update(organisations).set({ systemKeyFingerprint: Buffer.alloc(32, 9) }).where(eq(organisations.id, org.id)).run();
    expect(() => createKeyAnnouncements({ keys: recordsDrivers(sqliteStore(f.db)).keys, signer: f.signer, clock: f.clock })(org.id)).toThrow("is not in signing_keys");
  });
});

describe("the loop when the announcement cannot be built", () => {
  test("null or an error: logged, the topic is still recorded, records wait; built at a later pass, it is queued then", async () => {
    const rig = await makeRig();
    const real = createKeyAnnouncements({ keys: recordsDrivers(rig.core.store).keys, signer: rig.core.signer, clock: rig.clock });
    let mode: "null" | "throw" | "real" = "null";
    const loop = createAnchoring({
      journal: journalDrivers(rig.core.store).journal,
      loop: anchoringDrivers(rig.core.store).loop,
      batchMessageFor: encodeBatchMessage,
      clock: rig.clock,
      log: rig.log,
      ledger: rig.ledger,
      links: localLinks(rig.local.mirrorUrl),
      masterKey: rig.masterKey,
      announcementFor: (orgId) => {
        if (mode === "throw") throw new Error("storage busy");
        return mode === "null" ? null : real(orgId);
      },
      validSeconds: VALID_SECONDS,
    });
    onCleanup(() => loop.stop());
    const pass = async () => {
      rig.clock.advance(1100);
      await rig.local.runConsensus();
      await loop.runOnce();
    };
    const org = await rig.core.organisations.create({ name: `Late Ltd ${Math.random()}`, addon: true }, "test");
    for (let i = 0; i < 40 && orgRow(rig.core, org.id).topicId === null; i++) await pass();
    const topicId = orgRow(rig.core, org.id).topicId!;
    expect(topicId).toMatch(/^0\.0\.\d+$/);
    const rec = rig.insertRecord(org.id, topicId);
    for (let i = 0; i < 3; i++) await pass();
    expect(announcementsOf(rig.core, org.id)).toEqual([]);
    expect(rig.row(rec.transactionId)).toMatchObject({ state: "pending", attempts: 0 });
    expect(rig.log.lines.filter((l) => String(l.msg).startsWith("key announcement cannot be built yet"))).toHaveLength(1); // once a minute
    mode = "throw";
    await pass();
    expect(rig.log.lines.some((l) => String(l.msg).startsWith("key announcement could not be built") && JSON.stringify(l).includes("storage busy"))).toBe(true);
    expect(announcementsOf(rig.core, org.id)).toEqual([]);
    mode = "real";
    for (let i = 0; i < 40 && rig.record(rec.recordId).anchorState !== "anchored"; i++) await pass();
    const [announcement] = announcementsOf(rig.core, org.id);
    expect(announcement).toMatchObject({ state: "anchored", sequenceNumber: 1 });
    expect(rig.record(rec.recordId).sequenceNumber).toBe(2);
  }, 30_000);
});

describe("a new organisation's topic", () => {
  test("the key announcement is sequence 1, its first record sequence 2; the mirror holds the announcement's exact bytes", async () => {
    const rig = await makeRig();
    const { orgId, topicId } = await newOrgTopic(rig);
    const [queued] = announcementsOf(rig.core, orgId);
    expect(queued).toMatchObject({ kind: "key_announcement", topicId, recordId: null });
    // Queued in the transaction that recorded the topic: logged as such, right after the topic's line.
    const topicRow = rig.core.db.select().from(ledgerTransactions).where(and(eq(ledgerTransactions.orgId, orgId), eq(ledgerTransactions.kind, "topic_create"))).get()!;
    const anchoredAt = rig.log.lines.findIndex((l) => l.msg === "anchor" && l.transactionId === topicRow.transactionId && l.event === "anchored");
    const queuedAt = rig.log.lines.findIndex((l) => l.msg === "anchor" && l.transactionId === queued!.transactionId && l.event === "queued");
    expect(queuedAt).toBe(anchoredAt + 1);
    expect(rig.log.lines[queuedAt]).toMatchObject({ kind: "key_announcement", orgId, topicId });

    const rec = rig.insertRecord(orgId, topicId);
    await driveUntil(rig, "the record anchored", () => rig.record(rec.recordId).anchorState === "anchored");
    const announcement = rig.row(queued!.transactionId);
    expect(announcement).toMatchObject({ state: "anchored", sequenceNumber: 1, attempts: 1 });
    expect(announcement.consensusAt).toMatch(/^\d+\.\d{9}$/);
    expect(announcement.runningHash).toHaveLength(48);
    expect(Buffer.from(announcement.keyFingerprint!).equals(orgRow(rig.core, orgId).systemKeyFingerprint)).toBe(true);
    expect(rig.record(rec.recordId).sequenceNumber).toBe(2);
    expect(anchorLines(rig, queued!.transactionId).map((l) => l.event)).toEqual(["queued", "accepted", "anchored"]);

    // On the mirror node, byte for byte: the message, its consensus time and the running hash.
    const expected = expectedAnnouncement(rig.core, orgId);
    expect(Buffer.from(announcement.message!).equals(Buffer.from(expected))).toBe(true);
    const res = await fetch(`${rig.local.mirrorUrl}/api/v1/topics/${topicId}/messages/1`);
    expect(res.status).toBe(200);
    const one = (await res.json()) as MirrorMessage;
    expect(bytesOf(one).equals(Buffer.from(expected))).toBe(true);
    expect(one.consensus_timestamp).toBe(announcement.consensusAt!);
    expect(Buffer.from(one.running_hash, "base64").equals(announcement.runningHash!)).toBe(true);
    expect(decodeLedgerMessage(expected)).toMatchObject({ type: "key", orgId, name: orgRow(rig.core, orgId).name });
    const all = await messagesOn(rig.local.mirrorUrl, topicId);
    expect(all.map((m) => m.sequence_number)).toEqual([1, 2]);
    expect(bytesOf(all[1]!).equals(Buffer.from(rec.message))).toBe(true);
  }, 30_000);

  test("records created while the announcement is pending wait: submitted only once it is anchored", async () => {
    const rig = await makeRig();
    const { orgId, topicId } = await newOrgTopic(rig);
    rig.local.faults.pauseConsensus();
    const recs = [rig.insertRecord(orgId, topicId), rig.insertRecord(orgId, topicId)];
    for (let i = 0; i < 5; i++) await rig.drive(1);
    const [announcement] = announcementsOf(rig.core, orgId);
    expect(announcement!.state).toBe("accepted"); // submitted, held at consensus
    for (const r of recs) {
      // Never prepared nor sent: no bytes, no attempt, no line.
      expect(rig.row(r.transactionId)).toMatchObject({ state: "pending", attempts: 0, signedBytes: null });
      expect(anchorLines(rig, r.transactionId)).toEqual([]);
    }
    rig.local.faults.resumeConsensus();
    await driveUntil(rig, "the records anchored", () => recs.every((r) => rig.record(r.recordId).anchorState === "anchored"));
    expect(rig.row(announcement!.transactionId)).toMatchObject({ state: "anchored", sequenceNumber: 1 });
    expect(recs.map((r) => rig.record(r.recordId).sequenceNumber).sort()).toEqual([2, 3]);
    // The records' first line comes after the announcement's anchored line.
    const anchoredAt = rig.log.lines.findIndex((l) => l.transactionId === announcement!.transactionId && l.event === "anchored");
    for (const r of recs) expect(rig.log.lines.findIndex((l) => l.transactionId === r.transactionId)).toBeGreaterThan(anchoredAt);
    expect((await messagesOn(rig.local.mirrorUrl, topicId)).filter(isKeyMessage).map((m) => m.sequence_number)).toEqual([1]);
  }, 30_000);

  test("an abandoned announcement is queued again with the same bytes under a new id, and anchors; the records wait for it", async () => {
    const rig = await makeRig();
    const org = await rig.core.organisations.create({ name: `Refused Org ${Math.random()}`, addon: true }, "test");
    // The topic's creation, then the announcement's first submission refused for good.
    await driveUntil(rig, "the topic", () => orgRow(rig.core, org.id).topicId !== null);
    const topicId = orgRow(rig.core, org.id).topicId!;
    const [first] = announcementsOf(rig.core, org.id);
    expect(first!.state).toBe("pending");
    rig.local.faults.rejectNext(1, "INSUFFICIENT_PAYER_BALANCE");
    const rec = rig.insertRecord(org.id, topicId);
    await rig.anchoring.runOnce();
    expect(rig.row(first!.transactionId)).toMatchObject({ state: "abandoned", lastError: "refused at precheck: INSUFFICIENT_PAYER_BALANCE" });
    const rows = announcementsOf(rig.core, org.id);
    expect(rows).toHaveLength(2);
    const again = rows.find((r) => r.transactionId !== first!.transactionId)!;
    expect(again).toMatchObject({ state: "pending", topicId, attempts: 0, signedBytes: null });
    expect(Buffer.from(again.message!).equals(first!.message!)).toBe(true);
    expect(Buffer.from(again.keyFingerprint!).equals(first!.keyFingerprint!)).toBe(true);
    expect(anchorLines(rig, again.transactionId)).toEqual([expect.objectContaining({ event: "requeued", replaces: first!.transactionId, kind: "key_announcement" })]);
    expect(rig.row(rec.transactionId)).toMatchObject({ state: "pending", attempts: 0 });

    await driveUntil(rig, "the record anchored", () => rig.record(rec.recordId).anchorState === "anchored");
    expect(rig.row(again.transactionId)).toMatchObject({ state: "anchored", sequenceNumber: 1 });
    expect(rig.record(rec.recordId).sequenceNumber).toBe(2);
    const msgs = await messagesOn(rig.local.mirrorUrl, topicId);
    expect(bytesOf(msgs[0]!).equals(first!.message!)).toBe(true);
    expect(msgs.filter(isKeyMessage)).toHaveLength(1);
  }, 30_000);
});

describe("a topic that predates announcements", () => {
  test("gets exactly one announcement at the next start, after its existing records; its new records follow it", async () => {
    const rig = await makeRig();
    const { orgId, topicId } = await orgBeforeAnnouncements(rig, 2);
    // A record queued before the restart (as the old version left it): it waits for the announcement.
    const waiting = rig.insertRecord(orgId, topicId);
    await rig.anchoring.stop();

    rig.restart();
    await rig.anchoring.runOnce(); // the first pass queues it
    const [queued] = announcementsOf(rig.core, orgId);
    expect(queued).toMatchObject({ state: "accepted", topicId }); // and, due at once, submits it
    expect(rig.row(waiting.transactionId)).toMatchObject({ state: "pending", attempts: 0 });
    await driveUntil(rig, "the waiting record anchored", () => rig.record(waiting.recordId).anchorState === "anchored");
    for (let i = 0; i < 3; i++) await rig.drive(1); // later passes queue nothing more
    expect(announcementsOf(rig.core, orgId).map((r) => [r.transactionId, r.state])).toEqual([[queued!.transactionId, "anchored"]]);
    expect(rig.row(queued!.transactionId).sequenceNumber).toBe(3);
    expect(rig.record(waiting.recordId).sequenceNumber).toBe(4);
    const msgs = await messagesOn(rig.local.mirrorUrl, topicId);
    expect(msgs.map((m) => m.sequence_number)).toEqual([1, 2, 3, 4]);
    expect(msgs.filter(isKeyMessage).map((m) => m.sequence_number)).toEqual([3]);
    expect(bytesOf(msgs[2]!).equals(Buffer.from(expectedAnnouncement(rig.core, orgId)))).toBe(true);
    expect(rig.log.lines.filter((l) => l.msg === "anchor" && l.event === "queued" && l.kind === "key_announcement" && l.orgId === orgId)).toHaveLength(1);
  }, 60_000);

  test("two loops on two connections, as two processes, passing at once: one announcement row, one queued line", async () => {
    const rig = await makeRig();
    const { orgId, topicId } = await orgBeforeAnnouncements(rig, 1);
    const otherCore = openCore({ config: parseConfig({ DOCVERIFY_DATA_DIR: rig.dir, DOCVERIFY_PORT: "0" }), log: memoryLogger(), clock: rig.clock });
    onCleanup(() => otherCore.close());
    const otherLog = memoryLogger();
    const other = createAnchoring({
      journal: journalDrivers(otherCore.store).journal,
      loop: anchoringDrivers(otherCore.store).loop,
      clock: rig.clock,
      log: otherLog,
      ledger: rig.ledger,
      links: localLinks(rig.local.mirrorUrl),
      masterKey: rig.masterKey,
      announcementFor: createKeyAnnouncements({ keys: recordsDrivers(otherCore.store).keys, signer: otherCore.signer, clock: rig.clock }),
      batchMessageFor: encodeBatchMessage,
      validSeconds: VALID_SECONDS,
    });
    onCleanup(() => other.stop());
    for (let i = 0; i < 3; i++) await Promise.all([rig.anchoring.runOnce(), other.runOnce()]);
    const rows = announcementsOf(rig.core, orgId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ topicId });
    const queuedLines = [...rig.log.lines, ...otherLog.lines].filter((l) => l.msg === "anchor" && l.event === "queued" && l.kind === "key_announcement");
    expect(queuedLines).toHaveLength(1);
    await driveUntil(rig, "the announcement anchored", () => rig.row(rows[0]!.transactionId).state === "anchored");
    expect((await messagesOn(rig.local.mirrorUrl, topicId)).filter(isKeyMessage)).toHaveLength(1);
  }, 60_000);
});

describe("serve killed with SIGKILL around the announcement", () => {
  test("the restarted service lands it once: one announcement of the key on the topic, one live row", async () => {
    const data = tempDir();
    // The ledger runs in this process so consensus can be held, in the folder where serve looks
    // for the operator key by default (as test/anchoring/commands.test.ts does).
    // One consensus batch a second: the hold below comes well before the announcement's batch.
    const ledger = await startLocalLedger({ dataDir: join(data, "ledger"), consensusMs: 1000 });
    onCleanup(() => ledger.close());
    const env = { DOCVERIFY_DATA_DIR: data, DOCVERIFY_LOCAL_LEDGER_URL: ledger.mirrorUrl };
    const admin = openCore({ config: parseConfig({ DOCVERIFY_DATA_DIR: data }), log: memoryLogger() });
    onCleanup(() => admin.close());
    const svc = await startService({ env });
    const org = await admin.organisations.create({ name: "Killed Ltd", addon: true }, "test");
    const topicId = await waitFor("the topic", () => orgRow(admin, org.id).topicId, 15_000, 5);
    // Queued with the topic; hold consensus so the kill comes after submission, before the answer.
    ledger.faults.pauseConsensus();
    const journaled = await waitFor(
      "the announcement's submission journaled",
      () => announcementsOf(admin, org.id).find((r) => r.signedBytes !== null && r.attempts >= 1),
      15_000,
      5,
    );
    expect(["pending", "accepted"]).toContain(journaled.state); // sent, not yet known to have landed
    svc.proc.kill("SIGKILL");
    await svc.proc.exited;
    ledger.faults.resumeConsensus();

    const svc2 = await startService({ env });
    await waitFor("the announcement anchored", () => (announcementsOf(admin, org.id).some((r) => r.state === "anchored") ? true : null), 20_000);
    const rows = announcementsOf(admin, org.id);
    expect(rows.map((r) => [r.transactionId, r.state])).toEqual([[journaled.transactionId, "anchored"]]);
    const onTopic = (await messagesOn(ledger.mirrorUrl, topicId)).filter(isKeyMessage);
    expect(onTopic).toHaveLength(1);
    expect(bytesOf(onTopic[0]!).equals(journaled.message!)).toBe(true);
    expect(decodeLedgerMessage(bytesOf(onTopic[0]!))).toMatchObject({ orgId: org.id, keyFingerprint: Buffer.from(orgRow(admin, org.id).systemKeyFingerprint).toString("hex") });
    // Neither the restart's provisioning nor the reconciliation queued another.
    expect(svc2.logLines().filter((l) => l.msg === "anchor" && l.kind === "key_announcement" && l.event === "queued")).toEqual([]);
    expect(await svc2.stop()).toBe(0);
  }, 60_000);

  test("killed right after queueing it at start-up (a topic that predates announcements): still exactly one", async () => {
    const data = tempDir();
    const ledger = await startLocalLedger({ dataDir: join(data, "ledger"), consensusMs: 100 });
    onCleanup(() => ledger.close());
    const env = { DOCVERIFY_DATA_DIR: data, DOCVERIFY_LOCAL_LEDGER_URL: ledger.mirrorUrl };
    const admin = openCore({ config: parseConfig({ DOCVERIFY_DATA_DIR: data }), log: memoryLogger() });
    onCleanup(() => admin.close());
    const org = await admin.organisations.create({ name: "Old Topic Ltd", addon: true }, "test");
    const svc = await startService({ env });
    const topicId = await waitFor("the topic", () => orgRow(admin, org.id).topicId, 15_000, 5);
    await waitFor("the announcement anchored", () => announcementsOf(admin, org.id).find((r) => r.state === "anchored"), 15_000);
    expect(await svc.stop()).toBe(0);
    // As a database from before announcements: the row is gone (the topic's message stays on the
    // ledger; what counts is that the restarts add exactly one more).
    admin.db.delete(ledgerTransactions).where(eq(ledgerTransactions.kind, "key_announcement")).run();
    const before = (await messagesOn(ledger.mirrorUrl, topicId)).filter(isKeyMessage).length;
    expect(before).toBe(1);

    // Start, and kill it as soon as its provisioning pass has queued the announcement.
    const killed = Bun.spawn([BUN, join(ROOT, "src", "main.ts"), "serve"], {
      cwd: tempDir(),
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", DOCVERIFY_PORT: "0", ...env },
      stdin: "ignore",
      stdout: "ignore",
      stderr: "ignore",
    });
    onCleanup(() => killed.kill("SIGKILL"));
    const queued = await waitFor("the announcement queued at start-up", () => announcementsOf(admin, org.id)[0], 20_000, 2);
    killed.kill("SIGKILL");
    await killed.exited;

    const svc2 = await startService({ env });
    await waitFor("the announcement anchored", () => (announcementsOf(admin, org.id).some((r) => r.state === "anchored") ? true : null), 20_000);
    expect(announcementsOf(admin, org.id).filter((r) => r.state !== "abandoned").map((r) => r.transactionId)).toEqual([queued.transactionId]);
    expect((await messagesOn(ledger.mirrorUrl, topicId)).filter(isKeyMessage)).toHaveLength(before + 1);
    expect(await svc2.stop()).toBe(0);
  }, 60_000);
});
