/**
 * The anchor loop against the local ledger over real gRPC, time driven by a manual clock shared
 * with the ledger: the happy path, each failure class, crashes at each point of the
 * store → submit → store sequence, validity-window expiry, and an unreachable ledger.
 */
import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { DATABASE_FILE } from "../../src/app/core.ts";
import { and, eq } from "drizzle-orm";
import { insertPendingMessage } from "../../src/anchoring/queue.ts";
import { COUNTS_EVERY_MS } from "../../src/anchoring/anchorer.ts";
import { MIN_PASS_GAP_MS, Ticker } from "../../src/anchoring/loop/ticker.ts";
import { ErrorLogLimiter } from "../../src/anchoring/retry.ts";
import { LAST_VALID_START_SQL } from "../../src/storage/sqlite/loop-storage.ts";
import { anchoringDrivers } from "../support/drivers.ts";
import { mirrorFormTransactionId } from "../../src/anchoring/ledger.ts";
import { loadOrCreateSubmitKey } from "../../src/anchoring/submit-key.ts";
import { ledgerTransactions, records } from "../../src/storage/schema.ts";
import { waitFor } from "../support/wait.ts";
import { cleanup } from "../support/env.ts";
import { makeRig, VALID_SECONDS, type Rig } from "./rig.ts";

const mirrorId = mirrorFormTransactionId;

/** Signs a pending row's message and journals it exactly as the loop does before sending. */
async function prepareAsLoopWould(rig: Rig, transactionId: string): Promise<Buffer> {
  const row = rig.row(transactionId);
  const key = (await loadOrCreateSubmitKey(anchoringDrivers(rig.core.store).loop.submitKey, rig.masterKey, () => {
    throw new Error("the submit key exists once a topic does");
  }))!;
  const bytes = Buffer.from(
    await rig.ledger.prepareMessage({ transactionId, validSeconds: row.validSeconds, topicId: row.topicId!, message: new Uint8Array(row.message!), submitPrivateKey: key.privateKey }),
  );
  rig.core.db.update(ledgerTransactions).set({ signedBytes: bytes, attempts: 1 }).where(eq(ledgerTransactions.transactionId, transactionId)).run();
  return bytes;
}

afterEach(cleanup);

/**
 * The topic's messages after the organisation's key announcement, which must be its first
 * (sequence number 1, the bytes the journal queued): what the test's records and revocations put there.
 */
async function messagesOn(rig: Rig, topicId: string): Promise<Record<string, unknown>[]> {
  const { body } = await rig.mirror(`/api/v1/topics/${topicId}/messages?limit=100`);
  const [first, ...rest] = body.messages as Record<string, unknown>[];
  const announced = rig.core.db
    .select()
    .from(ledgerTransactions)
    .where(and(eq(ledgerTransactions.topicId, topicId), eq(ledgerTransactions.kind, "key_announcement"), eq(ledgerTransactions.state, "anchored")))
    .all();
  expect(announced).toHaveLength(1);
  expect(first?.sequence_number).toBe(1);
  expect(Buffer.from(String(first!.message), "base64").equals(Buffer.from(announced[0]!.message!))).toBe(true);
  return rest;
}

function anchorEvents(rig: Rig, transactionId: string): string[] {
  return rig.log.lines.filter((l) => l.msg === "anchor" && l.transactionId === transactionId).map((l) => String(l.event));
}

describe("anchor loop", () => {
  test("provisions a topic, then takes a record pending → accepted → anchored, updating the record in step", async () => {
    const rig = await makeRig();
    const { orgId, topicId } = await rig.orgWithTopic();
    expect(topicId).toMatch(/^0\.0\.\d+$/);
    const topicRow = rig.core.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.kind, "topic_create")).get()!;
    expect(topicRow).toMatchObject({ state: "anchored", topicId, orgId });
    const topic = await rig.mirror(`/api/v1/topics/${topicId}`);
    expect((topic.body.submit_key as { _type: string })._type).toBe("ED25519");
    // The submit key's private half is stored only sealed.
    const meta = rig.core.db.$client.query("SELECT value FROM service_meta WHERE key = 'ledger_submit_key'").get() as { value: string };
    expect(Object.keys(JSON.parse(meta.value)).sort()).toEqual(["algorithm", "publicKey", "sealedSeed", "version"]);

    const rec = rig.insertRecord(orgId, topicId);
    expect(rig.record(rec.recordId).anchorState).toBe("pending");
    await rig.anchoring.runOnce();
    expect(rig.row(rec.transactionId).state).toBe("accepted");
    expect(rig.record(rec.recordId).anchorState).toBe("accepted");
    expect(rig.row(rec.transactionId).signedBytes).not.toBeNull();
    await rig.drive(2);
    const row = rig.row(rec.transactionId);
    // Sequence number 2: the organisation's key announcement is 1.
    expect(row).toMatchObject({ state: "anchored", sequenceNumber: 2, attempts: 1 });
    expect(row.consensusAt).toMatch(/^\d+\.\d{9}$/);
    expect(rig.record(rec.recordId)).toMatchObject({ anchorState: "anchored", sequenceNumber: 2, consensusAt: row.consensusAt });
    expect(anchorEvents(rig, rec.transactionId)).toEqual(["accepted", "anchored"]);
    const msgs = await messagesOn(rig, topicId);
    expect(msgs.length).toBe(1);
    expect(Buffer.from(String(msgs[0]!.message), "base64").equals(Buffer.from(rec.message))).toBe(true);
    expect(rig.anchoring.links.topicMessageUrl(topicId, 2)).toBe(`${rig.local.mirrorUrl}/api/v1/topics/${topicId}/messages/2`);
    const page = await fetch(rig.anchoring.links.transactionUrl(rec.transactionId));
    expect(page.status).toBe(200);
    // No key in any log line.
    const logged = JSON.stringify(rig.log.lines);
    expect(logged).not.toContain(rig.local.operator.privateKeyDer);
    expect(logged).not.toContain(JSON.parse(meta.value).sealedSeed);
  }, 30_000);

  test("newTransactionId never repeats, even within one clock tick and across a restart", async () => {
    const rig = await makeRig();
    const ids = new Set<string>();
    for (let i = 0; i < 1000; i++) ids.add(rig.anchoring.queue.newTransactionId().transactionId);
    expect(ids.size).toBe(1000);
    const one = rig.anchoring.queue.newTransactionId();
    expect(one.transactionId).toMatch(/^0\.0\.2@\d+\.\d{9}$/);
    expect(one.validSeconds).toBe(VALID_SECONDS);
    expect(Math.abs(one.validStartMs - rig.clock.now())).toBeLessThan(5);
    const { orgId, topicId } = await rig.orgWithTopic();
    const last = rig.insertRecord(orgId, topicId).transactionId;
    rig.clock.advance(-60_000); // a clock that went back
    const after = rig.restart().queue.newTransactionId();
    // It follows the clock (ids ahead of it would be refused), in the upper half of its
    // millisecond, where ids made on time never are, and is no row of the journal.
    expect(after.validStartMs).toBeLessThan(rig.clock.now());
    expect(after.validStartMs).toBeGreaterThan(rig.clock.now() - 5);
    const ns = (id: string) => BigInt(id.split("@")[1]!.replace(".", ""));
    expect(ns(after.transactionId) % 1_000_000n).toBeGreaterThanOrEqual(500_000n);
    expect(ns(after.transactionId) < ns(last)).toBe(true);
    expect(rig.core.db.$client.query("SELECT count(*) AS n FROM ledger_transactions WHERE transaction_id = ?").get(after.transactionId)).toEqual({ n: 0 });
  }, 30_000);

  test("the clock steps back two hours, the ledger's with it: a record made before the step is refused as not yet valid and abandoned at once; records made after it anchor", async () => {
    const rig = await makeRig();
    const { orgId, topicId } = await rig.orgWithTopic();
    const before = rig.insertRecord(orgId, topicId);
    rig.clock.advance(-2 * 3_600_000);
    const after = rig.insertRecord(orgId, topicId);
    expect(rig.row(after.transactionId).validStartMs).toBeLessThan(rig.clock.now());
    await rig.anchoring.runOnce();
    expect(rig.row(before.transactionId)).toMatchObject({
      state: "abandoned",
      attempts: 1,
      lastError: "refused at precheck: INVALID_TRANSACTION_START: its valid start is ahead of the clock, which stepped back",
    });
    expect(rig.record(before.recordId).anchorState).toBe("abandoned");
    await rig.drive(3);
    expect(rig.row(after.transactionId)).toMatchObject({ state: "anchored", attempts: 1 });
    expect(rig.record(after.recordId).anchorState).toBe("anchored");
    // Every record made after the step anchors, within one window of it.
    const more = [rig.insertRecord(orgId, topicId), rig.insertRecord(orgId, topicId)];
    await rig.drive(3);
    for (const r of more) expect(rig.row(r.transactionId).state).toBe("anchored");
    // And when the clock steps forward again, past where it was.
    rig.clock.advance(2 * 3_600_000 + 60_000);
    const later = rig.insertRecord(orgId, topicId);
    await rig.drive(3);
    expect(rig.row(later.transactionId)).toMatchObject({ state: "anchored", attempts: 1 });
    const ids = rig.core.db.$client.query("SELECT transaction_id AS id FROM ledger_transactions").all() as { id: string }[];
    expect(new Set(ids.map((r) => r.id)).size).toBe(ids.length);
  }, 30_000);

  test("BUSY at precheck: backs off and re-sends the same bytes; one transaction on the ledger", async () => {
    const rig = await makeRig();
    const { orgId, topicId } = await rig.orgWithTopic();
    rig.local.faults.busyNext(1);
    const rec = rig.insertRecord(orgId, topicId);
    await rig.anchoring.runOnce();
    const first = rig.row(rec.transactionId);
    expect(first).toMatchObject({ state: "pending", attempts: 1, lastError: "precheck BUSY" });
    expect(first.nextAttemptAt).toBeGreaterThan(rig.clock.now());
    const bytes = Buffer.from(first.signedBytes!);
    await rig.anchoring.runOnce(); // not due yet: nothing happens
    expect(rig.row(rec.transactionId).attempts).toBe(1);
    await rig.drive(3);
    const row = rig.row(rec.transactionId);
    expect(row).toMatchObject({ state: "anchored", attempts: 2 });
    expect(Buffer.from(row.signedBytes!).equals(bytes)).toBe(true);
    expect(anchorEvents(rig, rec.transactionId)).toEqual(["retry", "accepted", "anchored"]);
    expect((await messagesOn(rig, topicId)).length).toBe(1);
  }, 30_000);

  test("a permanent refusal at precheck abandons the record at once, with the reason", async () => {
    const rig = await makeRig();
    const { orgId, topicId } = await rig.orgWithTopic();
    rig.local.faults.rejectNext(1, "INSUFFICIENT_PAYER_BALANCE");
    const rec = rig.insertRecord(orgId, topicId);
    await rig.anchoring.runOnce();
    expect(rig.row(rec.transactionId)).toMatchObject({ state: "abandoned", attempts: 1, lastError: "refused at precheck: INSUFFICIENT_PAYER_BALANCE" });
    expect(rig.record(rec.recordId).anchorState).toBe("abandoned");
    await rig.drive(2);
    expect(rig.row(rec.transactionId).attempts).toBe(1); // never retried
    expect((await messagesOn(rig, topicId)).length).toBe(0);
  }, 30_000);

  test("a failure at consensus abandons the record (receipt status as the reason) once the topic's listings have not confirmed it", async () => {
    const rig = await makeRig();
    const { orgId, topicId } = await rig.orgWithTopic();
    rig.local.faults.failNextAtConsensus(1, "INVALID_SIGNATURE");
    const rec = rig.insertRecord(orgId, topicId);
    await rig.anchoring.runOnce();
    expect(rig.row(rec.transactionId).state).toBe("accepted");
    // A failed message is never listed on its topic: the batch confirmation cannot see it, and
    // only its receipt says what became of it, asked once 15 s have passed since its acceptance.
    await rig.drive(3);
    expect(rig.row(rec.transactionId).state).toBe("accepted");
    await rig.drive(1, 13_000);
    await rig.drive(1);
    expect(rig.row(rec.transactionId)).toMatchObject({ state: "abandoned", lastError: "failed at consensus: INVALID_SIGNATURE" });
    expect(rig.record(rec.recordId).anchorState).toBe("abandoned");
    expect(anchorEvents(rig, rec.transactionId)).toEqual(["accepted", "abandoned"]);
  }, 30_000);

  test("group commit: every attempt is committed (another connection reads it) before its bytes are sent, when several rows' attempts share a commit too", async () => {
    const seen: { transactionId: string; attempts: number }[] = [];
    let reader: Database | null = null;
    const rig = await makeRig({
      wrapLedger: (ledger) => ({
        ...ledger,
        async submit(bytes) {
          if (reader !== null) {
            const row = reader.query("SELECT transaction_id, attempts FROM ledger_transactions WHERE signed_bytes = ?").get(bytes) as { transaction_id: string; attempts: number } | null;
            seen.push({ transactionId: row?.transaction_id ?? "(not committed)", attempts: row?.attempts ?? 0 });
          }
          return ledger.submit(bytes);
        },
      }),
    });
    const { orgId, topicId } = await rig.orgWithTopic();
    reader = new Database(join(rig.dir, DATABASE_FILE), { readonly: true });
    try {
      const recs = Array.from({ length: 6 }, () => rig.insertRecord(orgId, topicId));
      await rig.drive(4);
      expect(seen.map((s) => s.transactionId).sort()).toEqual(recs.map((r) => r.transactionId).sort());
      expect(seen.every((s) => s.attempts === 1)).toBe(true);
      for (const r of recs) expect(rig.record(r.recordId).anchorState).toBe("anchored");
      expect((await messagesOn(rig, topicId)).length).toBe(recs.length);
    } finally {
      reader.close();
    }
  }, 30_000);

  test("the running loop's counts for back-pressure follow the queue within COUNTS_EVERY_MS of a pass", async () => {
    const rig = await makeRig();
    const { orgId, topicId } = await rig.orgWithTopic();
    const unfinished = () => rig.anchoring.backlog().pending + rig.anchoring.backlog().accepted;
    const inQueue = () => (rig.core.db.$client.query("SELECT count(*) AS n FROM ledger_transactions WHERE state IN ('pending','accepted')").get() as { n: number }).n;
    rig.anchoring.start();
    for (let i = 0; i < 3; i++) rig.insertRecord(orgId, topicId);
    rig.anchoring.queue.wake();
    // No consensus runs (a manual clock): the three stay unfinished, and the counts catch up.
    const started = performance.now();
    await waitFor("the counts to include the new rows", () => (inQueue() >= 3 && unfinished() === inQueue() ? true : null), 5_000, 5);
    expect(performance.now() - started).toBeLessThan(COUNTS_EVERY_MS + 1_000);
  }, 30_000);

  test("crash after the signed bytes were stored, before they were sent: the restart sends those bytes, once", async () => {
    const rig = await makeRig();
    const { orgId, topicId } = await rig.orgWithTopic();
    const rec = rig.insertRecord(orgId, topicId);
    // What the journal holds when the process dies between beginAttempt and submit.
    const prepared = await prepareAsLoopWould(rig, rec.transactionId);
    await rig.anchoring.stop();
    rig.restart();
    await rig.drive(3);
    const row = rig.row(rec.transactionId);
    expect(row).toMatchObject({ state: "anchored", attempts: 2 });
    expect(Buffer.from(row.signedBytes!).equals(prepared)).toBe(true);
    expect((await messagesOn(rig, topicId)).length).toBe(1);
    const txs = await rig.mirror(`/api/v1/transactions/${mirrorId(rec.transactionId)}`);
    expect((txs.body.transactions as unknown[]).length).toBe(1);
    expect(rig.core.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.recordId, rec.recordId)).all().length).toBe(1);
  }, 30_000);

  test("crash after the bytes were sent, before the answer was stored: DUPLICATE_TRANSACTION on restart, still one message", async () => {
    const rig = await makeRig();
    const { orgId, topicId } = await rig.orgWithTopic();
    const rec = rig.insertRecord(orgId, topicId);
    const prepared = await prepareAsLoopWould(rig, rec.transactionId);
    expect((await rig.ledger.submit(prepared)).kind).toBe("accepted"); // the submission the dead process made
    await rig.anchoring.stop();
    rig.restart();
    await rig.anchoring.runOnce();
    expect(rig.row(rec.transactionId).state).toBe("accepted");
    expect(rig.log.lines.find((l) => l.msg === "anchor" && l.transactionId === rec.transactionId && l.event === "accepted")?.duplicate).toBe(true);
    await rig.drive(2);
    expect(rig.row(rec.transactionId).state).toBe("anchored");
    expect((await messagesOn(rig, topicId)).length).toBe(1);
  }, 30_000);

  test("crash after acceptance, restarted after the receipt expired: confirmed through the mirror node", async () => {
    const rig = await makeRig();
    const { orgId, topicId } = await rig.orgWithTopic();
    const rec = rig.insertRecord(orgId, topicId);
    await rig.anchoring.runOnce();
    expect(rig.row(rec.transactionId).state).toBe("accepted");
    await rig.anchoring.stop();
    rig.clock.advance(1100);
    await rig.local.runConsensus();
    rig.clock.advance(200_000); // receipts are kept 180 s after consensus
    rig.restart();
    await rig.anchoring.runOnce();
    await rig.anchoring.runOnce();
    expect(rig.row(rec.transactionId)).toMatchObject({ state: "anchored", sequenceNumber: 2 }); // after the key announcement
    expect(rig.record(rec.recordId).anchorState).toBe("anchored");
  }, 30_000);

  test("no consensus within the validity window: the record is abandoned and a revocation is queued again", async () => {
    const rig = await makeRig();
    const { orgId, topicId } = await rig.orgWithTopic();
    const anchoredRec = rig.insertRecord(orgId, topicId);
    await rig.drive(2);
    expect(rig.record(anchoredRec.recordId).anchorState).toBe("anchored");

    rig.local.faults.pauseConsensus();
    const rec = rig.insertRecord(orgId, topicId);
    // A revocation of the anchored record, written as the records service does.
    const revocation = rig.anchoring.queue.newTransactionId();
    const revMessage = new TextEncoder().encode('{"v":1,"revoke":true}');
    rig.core.db.transaction((tx) => {
      tx.update(records).set({ revokedAt: rig.clock.now(), revocationReason: "SUPERSEDED", revocationTransactionId: revocation.transactionId }).where(eq(records.id, anchoredRec.recordId)).run();
      insertPendingMessage(tx, { kind: "revocation_message", ...revocation, orgId, recordId: anchoredRec.recordId, topicId, message: revMessage, now: rig.clock.now() });
    });
    await rig.anchoring.runOnce();
    expect(rig.row(rec.transactionId).state).toBe("accepted");
    expect(rig.row(revocation.transactionId).state).toBe("accepted");
    await rig.drive(1, (VALID_SECONDS + 1) * 1000);
    rig.local.faults.resumeConsensus(); // too late: both fail TRANSACTION_EXPIRED at consensus
    await rig.drive(2, 500);
    expect(rig.row(rec.transactionId)).toMatchObject({ state: "abandoned", lastError: "failed at consensus: TRANSACTION_EXPIRED" });
    expect(rig.record(rec.recordId).anchorState).toBe("abandoned");
    expect(rig.row(revocation.transactionId).state).toBe("abandoned");
    const again = rig.record(anchoredRec.recordId).revocationTransactionId!;
    expect(again).not.toBe(revocation.transactionId);
    const retry = rig.row(again);
    expect(retry).toMatchObject({ kind: "revocation_message", recordId: anchoredRec.recordId, topicId });
    expect(Buffer.from(retry.message!).equals(Buffer.from(revMessage))).toBe(true);
    await rig.drive(3);
    expect(rig.row(again).state).toBe("anchored");
    const msgs = await messagesOn(rig, topicId);
    expect(msgs.length).toBe(2); // the first record, and the revocation once
  }, 30_000);

  test("accepted and then lost by the ledger: settled through receipt and mirror after the window, abandoned", async () => {
    const rig = await makeRig();
    const { orgId, topicId } = await rig.orgWithTopic();
    rig.local.faults.dropNext(1);
    const rec = rig.insertRecord(orgId, topicId);
    await rig.anchoring.runOnce();
    expect(rig.row(rec.transactionId).state).toBe("accepted");
    await rig.drive(3);
    expect(rig.row(rec.transactionId).state).toBe("accepted"); // receipt UNKNOWN: still waiting
    await rig.drive(1, VALID_SECONDS * 1000);
    await rig.drive(2);
    expect(rig.row(rec.transactionId)).toMatchObject({ state: "abandoned", lastError: "did not reach consensus within its validity window" });
    expect(rig.record(rec.recordId).anchorState).toBe("abandoned");
  }, 30_000);

  test("never sent before its window closed (key store sealed, say): abandoned without a submission", async () => {
    const rig = await makeRig();
    const { orgId, topicId } = await rig.orgWithTopic();
    await rig.anchoring.stop();
    const rec = rig.insertRecord(orgId, topicId);
    rig.clock.advance((VALID_SECONDS - 5) * 1000);
    rig.restart();
    await rig.anchoring.runOnce();
    expect(rig.row(rec.transactionId)).toMatchObject({ state: "abandoned", attempts: 0, signedBytes: null });
  }, 30_000);

  test("ledger unreachable: work waits, readiness says so, and it drains once the ledger is back", async () => {
    const rig = await makeRig({ grpcDeadlineMs: 500 });
    const { orgId, topicId } = await rig.orgWithTopic();
    expect(await rig.anchoring.readiness()).toBe(true);
    await rig.local.faults.unreachable(true);
    const recs = [rig.insertRecord(orgId, topicId), rig.insertRecord(orgId, topicId)];
    await rig.anchoring.runOnce();
    // The SDK's client had worked, so the bytes went to the SDK, but its call's connection was
    // never made: nothing was sent, and the attempt is not counted.
    for (const r of recs) expect(rig.row(r.transactionId)).toMatchObject({ state: "pending", attempts: 0 });
    expect(rig.row(recs[0]!.transactionId).lastError).toStartWith("not sent:");
    expect(String(await rig.anchoring.readiness())).toStartWith("ledger unreachable");
    await rig.drive(2);
    for (const r of recs) expect(rig.row(r.transactionId).state).toBe("pending");
    await rig.local.faults.unreachable(false);
    // The node is used again at the loop's next pass that is due (the SDK's calls connect afresh
    // after a lost connection, with no reconnect backoff of their own), in real time here.
    await waitFor("the queue to drain", async () => {
      await rig.drive(1);
      return recs.every((r) => rig.row(r.transactionId).state === "anchored") || null;
    }, 15_000, 200);
    expect(await rig.anchoring.readiness()).toBe(true);
    expect((await messagesOn(rig, topicId)).length).toBe(2);
    expect(rig.log.lines.filter((l) => l.msg === "ledger unreachable; anchoring waits and retries").length).toBe(1);
  }, 30_000);

  test("ledger down: a record whose every submission was refused before anything was sent is abandoned when its window closes; one that may have been sent waits; once the ledger is back the queue drains", async () => {
    const rig = await makeRig({ grpcDeadlineMs: 500 });
    const { orgId, topicId } = await rig.orgWithTopic();
    // The node takes the first record's bytes and never answers: whether they were taken is not known.
    rig.local.faults.swallowNext(1);
    const maybe = rig.insertRecord(orgId, topicId);
    await rig.anchoring.runOnce();
    expect(rig.row(maybe.transactionId)).toMatchObject({ state: "pending", attempts: 1 });
    expect(rig.row(maybe.transactionId).lastError).toStartWith("no answer:");
    // Then the ledger refuses connections: each submission first needs a connection to the node,
    // none opens, nothing is handed to the SDK, and the attempt is not counted.
    await rig.local.faults.unreachable(true);
    const refused = rig.insertRecord(orgId, topicId);
    await rig.anchoring.runOnce();
    expect(rig.row(refused.transactionId)).toMatchObject({ state: "pending", attempts: 0 });
    expect(rig.row(refused.transactionId).signedBytes).not.toBeNull();
    expect(rig.row(refused.transactionId).lastError).toStartWith("not sent: nothing sent: consensus node 0.0.3 unreachable");
    expect(rig.record(refused.recordId).anchorState).toBe("pending");

    // Retried while the window is open, never counted.
    await rig.drive(3, 5_000); // 15 s of the 30 s window
    expect(rig.row(refused.transactionId)).toMatchObject({ state: "pending", attempts: 0 });
    expect(rig.row(maybe.transactionId)).toMatchObject({ state: "pending", attempts: 1 });
    // Past the point where the nodes would still take it: abandoned, the ledger still down.
    await rig.drive(2, 5_000);
    expect(rig.row(refused.transactionId)).toMatchObject({
      state: "abandoned",
      attempts: 0,
      lastError: "the validity window closed before the transaction could reach a node: every submission was refused before anything was sent",
    });
    expect(rig.record(refused.recordId).anchorState).toBe("abandoned");
    expect(anchorEvents(rig, refused.transactionId)).toEqual(["abandoned"]);
    // The one that may have reached a node is not abandoned on that basis: its window has
    // closed, but only the receipt or the mirror node can say whether it landed.
    await rig.drive(2, 5_000);
    expect(rig.row(maybe.transactionId)).toMatchObject({ state: "pending", attempts: 1 });
    expect(rig.record(maybe.recordId).anchorState).toBe("pending");

    await rig.local.faults.unreachable(false);
    const later = rig.insertRecord(orgId, topicId);
    await waitFor("the queue to drain", async () => {
      await rig.drive(1, 500);
      return (rig.row(later.transactionId).state === "anchored" && rig.row(maybe.transactionId).state === "abandoned") || null;
    }, 20_000, 20);
    expect(rig.row(maybe.transactionId).lastError).toBe("did not reach consensus within its validity window");
    expect(rig.record(later.recordId).anchorState).toBe("anchored");
    await rig.anchoring.runOnce();
    // On the ledger: the later record's message only; the abandoned ones never reached it.
    const msgs = await messagesOn(rig, topicId);
    expect(msgs.map((m) => Buffer.from(String(m.message), "base64").toString())).toEqual([new TextDecoder().decode(later.message)]);
    for (const r of [maybe, refused]) expect((await rig.mirror(`/api/v1/transactions/${mirrorId(r.transactionId)}`)).status).toBe(404);
    expect(rig.anchoring.backlog()).toMatchObject({ pending: 0, accepted: 0 });
  }, 60_000);

  test("a record that can no longer be submitted is abandoned when its window closes, whatever its backoff", async () => {
    const rig = await makeRig({ grpcDeadlineMs: 500 });
    const { orgId, topicId } = await rig.orgWithTopic();
    await rig.local.faults.unreachable(true);
    const rec = rig.insertRecord(orgId, topicId);
    await rig.anchoring.runOnce();
    expect(rig.row(rec.transactionId)).toMatchObject({ state: "pending", attempts: 0 });
    // Its next try an hour away, as a long backoff or a wait for an announcement would put it.
    rig.core.db.$client.query("UPDATE ledger_transactions SET next_attempt_at = ? WHERE transaction_id = ?").run(rig.clock.now() + 3_600_000, rec.transactionId);
    await rig.drive(1, (VALID_SECONDS - 10) * 1000 - 2_000);
    expect(rig.row(rec.transactionId).state).toBe("pending");
    await rig.drive(1, 2_500);
    expect(rig.row(rec.transactionId)).toMatchObject({
      state: "abandoned",
      attempts: 0,
      lastError: "the validity window closed before the transaction could reach a node: every submission was refused before anything was sent",
    });
    expect(rig.record(rec.recordId).anchorState).toBe("abandoned");
    expect(anchorEvents(rig, rec.transactionId)).toEqual(["abandoned"]);
  }, 30_000);

  test("a ledger refusing connections from the start: every submission is unsent, and the record is abandoned when its window closes", async () => {
    const rig = await makeRig({ grpcDeadlineMs: 500 });
    const { orgId, topicId } = await rig.orgWithTopic();
    // A fresh loop, as after a restart while the ledger is down: its first look at the ledger
    // (readiness) finds it down, and no submission is then handed to the SDK.
    await rig.anchoring.stop();
    await rig.local.faults.unreachable(true);
    rig.restart();
    expect(String(await rig.anchoring.readiness())).toStartWith("ledger unreachable");
    const rec = rig.insertRecord(orgId, topicId);
    for (let i = 0; i < 4; i++) await rig.drive(1, 4_000);
    expect(rig.row(rec.transactionId)).toMatchObject({ state: "pending", attempts: 0 });
    expect(rig.row(rec.transactionId).lastError).toStartWith("not sent:");
    await rig.drive(2, 4_000); // past 30 s − 10 s
    expect(rig.row(rec.transactionId)).toMatchObject({ state: "abandoned", attempts: 0 });
    expect(rig.record(rec.recordId).anchorState).toBe("abandoned");
    await rig.local.faults.unreachable(false);
  }, 30_000);

  test("once the ledger answers again, rows backed off during the outage are retried at once", async () => {
    // Every request checks the node first: no gRPC connection is tried during the outage.
    const rig = await makeRig({ grpcDeadlineMs: 500, answerFreshMs: 0 });
    const { orgId, topicId } = await rig.orgWithTopic();
    await rig.local.faults.unreachable(true);
    const during = rig.insertRecord(orgId, topicId);
    for (let i = 0; i < 5; i++) await rig.drive(1, 2_000);
    const waiting = rig.row(during.transactionId);
    expect(waiting).toMatchObject({ state: "pending", attempts: 0 });
    expect(waiting.nextAttemptAt).toBeGreaterThan(rig.clock.now()); // backed off
    await rig.local.faults.unreachable(false);
    const after = rig.insertRecord(orgId, topicId);
    await rig.anchoring.runOnce(); // the new record is due at once, and the ledger answers
    expect(rig.row(after.transactionId).state).toBe("accepted");
    await rig.anchoring.runOnce(); // same instant: the backed-off row is due now too
    expect(rig.row(during.transactionId)).toMatchObject({ state: "accepted", attempts: 1 });
    await rig.drive(3);
    for (const r of [during, after]) expect(rig.record(r.recordId).anchorState).toBe("anchored");
  }, 30_000);

  test("a node that takes the lead retries at once the rows another leader backed off; a node that led all along keeps their due times", async () => {
    let leading = false;
    const rig = await makeRig({ active: () => leading });
    leading = true;
    const { orgId, topicId } = await rig.orgWithTopic();
    // Rows another leader backed off (one that could not reach the ledger): due in a minute.
    const later = rig.clock.now() + 60_000;
    const backedOff = [rig.insertRecord(orgId, topicId), rig.insertRecord(orgId, topicId)];
    const putOff = () => {
      for (const r of backedOff) rig.core.db.update(ledgerTransactions).set({ nextAttemptAt: later }).where(eq(ledgerTransactions.transactionId, r.transactionId)).run();
    };
    putOff();
    // Leading all along: the due times hold.
    await rig.anchoring.runOnce();
    for (const r of backedOff) expect(rig.row(r.transactionId)).toMatchObject({ state: "pending", attempts: 0, nextAttemptAt: later });
    // Another node leads for a pass; this one only counts the queue.
    leading = false;
    await rig.anchoring.runOnce();
    for (const r of backedOff) expect(rig.row(r.transactionId)).toMatchObject({ state: "pending", attempts: 0, nextAttemptAt: later });
    // This node takes the lead again: the rows go at its first pass, not a minute later.
    leading = true;
    await rig.anchoring.runOnce();
    await rig.anchoring.runOnce();
    for (const r of backedOff) expect(rig.row(r.transactionId)).toMatchObject({ state: "accepted", attempts: 1 });
    await rig.drive(3);
    for (const r of backedOff) expect(rig.record(r.recordId).anchorState).toBe("anchored");
  }, 30_000);

  test("an abandoned revocation that never reached a node is queued again at once, not after a backoff", async () => {
    const rig = await makeRig({ grpcDeadlineMs: 500 });
    const { orgId, topicId } = await rig.orgWithTopic();
    const anchoredRec = rig.insertRecord(orgId, topicId);
    await rig.drive(2);
    expect(rig.record(anchoredRec.recordId).anchorState).toBe("anchored");
    await rig.anchoring.stop();
    await rig.local.faults.unreachable(true);
    rig.restart();
    // The restarted loop's first look at the ledger (readiness) finds it down, as after a restart
    // of the process while the ledger is down.
    expect(String(await rig.anchoring.readiness())).toStartWith("ledger unreachable");
    const revocation = rig.anchoring.queue.newTransactionId();
    rig.core.db.transaction((tx) => {
      tx.update(records).set({ revokedAt: rig.clock.now(), revocationReason: "SUPERSEDED", revocationTransactionId: revocation.transactionId }).where(eq(records.id, anchoredRec.recordId)).run();
      insertPendingMessage(tx, { kind: "revocation_message", ...revocation, orgId, recordId: anchoredRec.recordId, topicId, message: new TextEncoder().encode('{"v":1,"revoke":true}'), now: rig.clock.now() });
    });
    const ids = () => rig.core.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.kind, "revocation_message")).all();
    // Three windows while the ledger is down: each abandoned row is followed by a new one at once.
    for (let i = 0; i < 3 * 6; i++) await rig.drive(1, 5_000);
    const rows = ids();
    expect(rows.length).toBeGreaterThanOrEqual(3);
    for (const r of rows.slice(0, -1)) expect(r).toMatchObject({ state: "abandoned", attempts: 0 });
    const current = rig.record(anchoredRec.recordId).revocationTransactionId!;
    expect(rows.at(-1)!.transactionId).toBe(current);
    expect(rig.row(current).state).toBe("pending");
    for (let i = 1; i < rows.length; i++) expect(rows[i]!.createdAt).toBe(rows[i - 1]!.updatedAt);
    await rig.local.faults.unreachable(false);
    await waitFor("the revocation to anchor", async () => {
      await rig.drive(1, 500);
      const id = rig.record(anchoredRec.recordId).revocationTransactionId!;
      return rig.row(id).state === "anchored" || null;
    }, 20_000, 20);
    expect((await messagesOn(rig, topicId)).length).toBe(2); // the record, and the revocation once
  }, 60_000);

  test("back-pressure: past the backlog bound, assertCapacity answers 503 with Retry-After", async () => {
    const rig = await makeRig({ backlogLimit: 3 });
    const { orgId, topicId } = await rig.orgWithTopic();
    expect(() => rig.anchoring.assertCapacity()).not.toThrow();
    rig.local.faults.pauseConsensus();
    for (let i = 0; i < 3; i++) rig.insertRecord(orgId, topicId);
    await rig.anchoring.runOnce();
    await rig.anchoring.runOnce();
    expect(rig.anchoring.backlog()).toMatchObject({ pending: 0, accepted: 3 });
    expect(() => rig.anchoring.assertCapacity()).toThrow(expect.objectContaining({ code: "SERVICE_UNAVAILABLE", retryAfterSeconds: 5 }));
    rig.local.faults.resumeConsensus();
    await rig.drive(3);
    expect(rig.anchoring.backlog()).toMatchObject({ pending: 0, accepted: 0 });
    expect(() => rig.anchoring.assertCapacity()).not.toThrow();
  }, 30_000);

  test("back-pressure: while the oldest unaccepted message is older than the bound, assertCapacity answers 503; it clears once the ledger catches up", async () => {
    const rig = await makeRig({ maxQueueAgeMs: 10_000 });
    const { orgId, topicId } = await rig.orgWithTopic();
    await rig.local.faults.unreachable(true);
    rig.insertRecord(orgId, topicId);
    await rig.anchoring.runOnce();
    expect(() => rig.anchoring.assertCapacity()).not.toThrow();
    rig.clock.advance(10_001);
    await rig.anchoring.runOnce();
    expect(() => rig.anchoring.assertCapacity()).toThrow(expect.objectContaining({ code: "SERVICE_UNAVAILABLE", retryAfterSeconds: 5 }));
    await rig.local.faults.unreachable(false);
    await waitFor("the backlog to drain", async () => {
      await rig.drive(1);
      return rig.anchoring.backlog().pending === 0 || null;
    }, 20_000, 100);
    expect(() => rig.anchoring.assertCapacity()).not.toThrow();
  }, 30_000);

  test("back-pressure: the rows the ledger has not accepted may not outgrow what was anchored in the last window (at least the floor); rows awaiting consensus never count", async () => {
    const rig = await makeRig({ backlogFloor: 2 });
    const { orgId, topicId } = await rig.orgWithTopic();
    // Accepted, waiting for consensus: the ledger has them, however many there are.
    rig.local.faults.pauseConsensus();
    for (let i = 0; i < 5; i++) rig.insertRecord(orgId, topicId);
    await rig.anchoring.runOnce();
    await rig.anchoring.runOnce();
    expect(rig.anchoring.backlog()).toMatchObject({ pending: 0, accepted: 5 });
    expect(() => rig.anchoring.assertCapacity()).not.toThrow();
    rig.local.faults.resumeConsensus();
    await rig.drive(3);
    rig.clock.advance(11_000); // what was anchored leaves the 10 s window
    // Not accepted (the ledger cannot be reached): two reach the floor.
    await rig.local.faults.unreachable(true);
    rig.insertRecord(orgId, topicId);
    await rig.anchoring.runOnce();
    expect(() => rig.anchoring.assertCapacity()).not.toThrow();
    rig.insertRecord(orgId, topicId);
    await rig.anchoring.runOnce();
    expect(rig.anchoring.backlog().pending).toBe(2);
    expect(() => rig.anchoring.assertCapacity()).toThrow(expect.objectContaining({ code: "SERVICE_UNAVAILABLE", retryAfterSeconds: 1, details: { cause: "behind" } }));
    // once messages anchor, the allowance grows with them
    await rig.local.faults.unreachable(false);
    await waitFor("the backlog to drain", async () => {
      await rig.drive(1);
      return rig.anchoring.backlog().pending + rig.anchoring.backlog().accepted === 0 || null;
    }, 20_000, 100);
    expect(() => rig.anchoring.assertCapacity()).not.toThrow();
  }, 30_000);

  test("resuming the transaction-id sequence at start reads an index, not the whole journal", async () => {
    const rig = await makeRig();
    const plan = (rig.core.db.$client.query(`EXPLAIN QUERY PLAN ${LAST_VALID_START_SQL}`).all() as { detail: string }[]).map((r) => r.detail);
    expect(plan.some((d) => d.startsWith("SCAN"))).toBe(false);
    expect(plan.join("\n")).toContain("ledger_transactions_valid_start");
  });
});

describe("error-log rate limit", () => {
  test("one line per kind per period, the next one with the count skipped", () => {
    const limit = new ErrorLogLimiter(60_000, 10);
    expect(limit.admit("ledger-unreachable", 0)).toEqual({ suppressed: 0 });
    expect(limit.admit("ledger-unreachable", 1_000)).toBeNull();
    expect(limit.admit("ledger-unreachable", 59_999)).toBeNull();
    expect(limit.admit("mirror-unreachable", 30_000)).toEqual({ suppressed: 0 });
    expect(limit.admit("ledger-unreachable", 60_000)).toEqual({ suppressed: 2 });
    expect(limit.admit("ledger-unreachable", 60_001)).toBeNull();
  });

  test("kinds carrying ids do not pile up: a kind is forgotten once its period is over, and never more than the bound are kept", () => {
    const limit = new ErrorLogLimiter(60_000, 100);
    // A kind per transaction (a mirror mismatch) or per error text, for an hour: 36,000 kinds.
    for (let t = 0; t < 3_600_000; t += 100) {
      expect(limit.admit(`mismatch:0.0.2@${t}.000000000`, t)).toEqual({ suppressed: 0 });
      expect(limit.size).toBeLessThanOrEqual(100);
    }
    // Period over, nothing skipped: forgotten at the next sweep.
    const quiet = new ErrorLogLimiter(60_000, 1_000);
    for (let i = 0; i < 500; i++) quiet.admit(`step:error ${i}`, i);
    quiet.admit("pass", 30_000);
    expect(quiet.size).toBe(501);
    expect(quiet.admit("pass", 60_250)).toBeNull(); // sweeps the 251 kinds whose minute is over
    expect(quiet.size).toBe(250);
    quiet.admit("other", 120_250); // sweeps the rest; "pass" keeps its skipped line
    expect(quiet.size).toBe(2);
    expect(quiet.admit("pass", 120_251)).toEqual({ suppressed: 1 });
  });

  test("a kind with skipped lines keeps its count until its next line, unless the bound evicts it as the oldest", () => {
    const limit = new ErrorLogLimiter(60_000, 3);
    limit.admit("a", 0);
    limit.admit("a", 1);
    limit.admit("b", 2);
    limit.admit("c", 3);
    limit.admit("x", 200_000); // the sweep forgets b and c (nothing skipped); a keeps its count
    expect(limit.size).toBe(2);
    expect(limit.admit("a", 200_001)).toEqual({ suppressed: 1 });
    limit.admit("d", 200_002);
    limit.admit("e", 200_003); // past the bound: the oldest (x) goes
    expect(limit.size).toBe(3);
    expect(limit.admit("x", 200_004)).toEqual({ suppressed: 0 });
  });
});

describe("the loop's timer", () => {
  test("passes start at least the gap apart however often a pass is asked for; one asked for after a quiet time starts at once", async () => {
    const gapMs = 20;
    const starts: number[] = [];
    const ticker = new Ticker(() => {
      starts.push(performance.now());
      return 60_000; // the next pass only when asked for
    }, gapMs);
    expect(MIN_PASS_GAP_MS).toBeGreaterThan(0);
    ticker.start();
    try {
      const asked = performance.now();
      ticker.schedule(0);
      await waitFor("the first pass", () => (starts.length === 1 ? true : null), 5_000, 1);
      expect(starts[0]! - asked).toBeLessThan(gapMs);
      // Asked for on every turn for 200 ms, as record creation and finished steps ask.
      const until = performance.now() + 200;
      while (performance.now() < until) {
        ticker.schedule(0);
        await new Promise((r) => setImmediate(r));
      }
      await Bun.sleep(gapMs * 2);
      expect(starts.length).toBeGreaterThan(2);
      expect(starts.length).toBeLessThanOrEqual(Math.ceil(240 / gapMs) + 1);
      // Timers may fire a little early; never far inside the gap.
      for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(gapMs - 2);
    } finally {
      ticker.stop();
    }
  });
});
