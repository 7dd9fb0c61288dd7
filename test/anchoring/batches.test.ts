/**
 * Batches through the anchor loop over real gRPC against the local ledger (docs/anchoring.md
 * "Batches"): records of one window in one ledger message whose root is recomputed here from the
 * leaves, independently of the appliance (the verifier's own RFC 9162 code); rows written before
 * batches sent as they were queued, beside batches; a full batch closed at once; revocations in
 * batches of their own, listed by the message; and a batch whose transaction carried other bytes
 * (closed again from a restored backup) put again, no record lost.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { leafHashOf, rootFromInclusion } from "../../src/verifier/inclusion.ts";
import { decodeLedgerMessage } from "../../src/records/messages.ts";
import { ledgerTransactions } from "../../src/storage/schema.ts";
import { splitPath } from "../../src/anchoring/merkle.ts";
import { cleanup } from "../support/env.ts";
import { loadOrCreateSubmitKey } from "../../src/anchoring/submit-key.ts";
import { anchoringDrivers } from "../support/drivers.ts";
import { makeRig, type Rig } from "./rig.ts";

afterEach(cleanup);

/** Every message on `topicId` after the key announcement, decoded, with its sequence number and transaction. */
async function topic(rig: Rig, topicId: string): Promise<{ seq: number; tx: string; bytes: Buffer; m: Record<string, unknown> }[]> {
  const { body } = await rig.mirror(`/api/v1/topics/${topicId}/messages?limit=100`);
  return (body.messages as { sequence_number: number; message: string; chunk_info: { initial_transaction_id: { account_id: string; transaction_valid_start: string } } }[])
    .filter((x) => x.sequence_number > 1)
    .map((x) => {
      const bytes = Buffer.from(x.message, "base64");
      const id = x.chunk_info.initial_transaction_id;
      return { seq: x.sequence_number, tx: `${id.account_id}@${id.transaction_valid_start}`, bytes, m: JSON.parse(bytes.toString("utf8")) as Record<string, unknown> };
    });
}

/** Every leaf of `batchId` proves into the root its message carries, by the verifier's own code. */
function expectProofs(rig: Rig, batchId: string): void {
  const batch = rig.row(batchId);
  const m = decodeLedgerMessage(new Uint8Array(batch.message!)) as { type: string; size: number; root: string };
  expect(m.type).toBe("batch");
  const leaves = rig.core.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.batchTransactionId, batchId)).all();
  expect(leaves).toHaveLength(m.size);
  expect(leaves.map((l) => l.leafIndex).sort((a, b) => a! - b!)).toEqual([...Array(m.size).keys()]);
  for (const leaf of leaves) {
    const root = rootFromInclusion(leafHashOf(new Uint8Array(leaf.message!)), leaf.leafIndex!, m.size, splitPath(new Uint8Array(leaf.inclusionPath!)));
    expect(Buffer.from(root!).toString("hex")).toBe(m.root);
  }
}

describe("batches through the loop", () => {
  test("the records of one window: one open batch, closed once its window has passed, one message on the topic; every record anchored with it, each leaf proving into its root", async () => {
    const rig = await makeRig();
    const { orgId, topicId } = await rig.orgWithTopic();
    const made = Array.from({ length: 5 }, () => rig.insertBatchedRecord(orgId, topicId));
    const batchId = made[0]!.batchId;
    expect(new Set(made.map((r) => r.batchId))).toEqual(new Set([batchId]));
    expect(rig.row(batchId)).toMatchObject({ kind: "batch_message", state: "open", batchSize: 5, message: null });
    for (const r of made) expect(rig.record(r.recordId).transactionId).toBe(batchId);

    // Within its window nothing is sent; then it is closed and sent, and anchored.
    await rig.anchoring.runOnce();
    expect(rig.row(batchId).state).toBe("open");
    await rig.drive(4);
    expect(rig.row(batchId)).toMatchObject({ state: "anchored", batchSequence: 1, batchSize: 5, sequenceNumber: 2 });
    const messages = await topic(rig, topicId);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({ seq: 2, tx: batchId, m: { type: "batch", orgId, batch: 1, size: 5, revoked: [] } });
    expect(messages[0]!.bytes.equals(Buffer.from(rig.row(batchId).message!))).toBe(true);
    expectProofs(rig, batchId);
    for (const r of made) {
      expect(rig.record(r.recordId)).toMatchObject({ anchorState: "anchored", sequenceNumber: 2, transactionId: batchId });
      expect(rig.row(r.leafId)).toMatchObject({ state: "anchored", sequenceNumber: 2, batchTransactionId: batchId });
    }
    // Leaves joined in order: the tree's leaf order is theirs.
    expect(made.map((r) => rig.row(r.leafId).leafIndex)).toEqual([0, 1, 2, 3, 4]);
    expect(made.map((r) => Buffer.from(rig.row(r.leafId).message!).equals(Buffer.from(r.message)))).toEqual(made.map(() => true));
  }, 30_000);

  test("a message written before batches goes as it was queued, one message of its own, beside a batch", async () => {
    const rig = await makeRig();
    const { orgId, topicId } = await rig.orgWithTopic();
    const legacy = rig.insertRecord(orgId, topicId);
    const batched = rig.insertBatchedRecord(orgId, topicId);
    await rig.drive(4);
    expect(rig.row(legacy.transactionId)).toMatchObject({ kind: "record_message", batchLeaf: 0, state: "anchored" });
    expect(rig.record(legacy.recordId)).toMatchObject({ anchorState: "anchored", transactionId: legacy.transactionId });
    expect(rig.record(batched.recordId)).toMatchObject({ anchorState: "anchored", transactionId: batched.batchId });
    const messages = await topic(rig, topicId);
    expect(messages.map((x) => [x.tx, x.m.type])).toEqual([
      [legacy.transactionId, (JSON.parse(Buffer.from(legacy.message).toString("utf8")) as { type?: string }).type],
      [batched.batchId, "batch"],
    ]);
    expect(messages[0]!.bytes.equals(Buffer.from(legacy.message))).toBe(true);
  }, 30_000);

  test("a full batch is closed at once, before its window ends; the next record opens another", async () => {
    const rig = await makeRig({ batchMax: 3 });
    const { orgId, topicId } = await rig.orgWithTopic();
    const policy = { windowMs: 60_000, max: 3, maxRevocations: 16 };
    const made = Array.from({ length: 4 }, () => rig.insertBatchedRecord(orgId, topicId, policy));
    expect(made.map((r) => r.batchId)).toEqual([made[0]!.batchId, made[0]!.batchId, made[0]!.batchId, made[3]!.batchId]);
    expect(made[3]!.batchId).not.toBe(made[0]!.batchId);
    await rig.drive(3, 500);
    expect(rig.row(made[0]!.batchId)).toMatchObject({ state: "anchored", batchSize: 3 });
    // The second is still taking records: its window (a minute) has not ended.
    expect(rig.row(made[3]!.batchId)).toMatchObject({ state: "open", batchSize: 1 });
    expectProofs(rig, made[0]!.batchId);
  }, 30_000);

  test("revocations in a batch of their own, whose message lists the records they revoke; the revocation carries the batch", async () => {
    const rig = await makeRig();
    const { orgId, topicId } = await rig.orgWithTopic();
    const made = [rig.insertBatchedRecord(orgId, topicId), rig.insertBatchedRecord(orgId, topicId)];
    await rig.drive(4);
    const revoked = made.map((r) => rig.revokeBatched(orgId, topicId, r.recordId));
    expect(revoked[1]!.batchId).toBe(revoked[0]!.batchId);
    expect(rig.row(revoked[0]!.batchId)).toMatchObject({ kind: "batch_message", state: "open", keyFingerprint: null, sealFingerprint: null, batchSize: 2 });
    await rig.drive(4);
    expect(rig.row(revoked[0]!.batchId)).toMatchObject({ state: "anchored", batchSequence: 2, batchSize: 2 });
    const messages = await topic(rig, topicId);
    expect(messages.map((x) => x.m.type)).toEqual(["batch", "batch"]);
    expect(messages[1]!.m).toMatchObject({ batch: 2, size: 2, revoked: made.map((r) => r.recordId) });
    expectProofs(rig, revoked[0]!.batchId);
    for (const r of made) expect(rig.record(r.recordId).revocationTransactionId).toBe(revoked[0]!.batchId);
  }, 30_000);

  test("a batch whose transaction reached consensus carrying other bytes (closed again from a restored backup): abandoned, its records put in a new batch and anchored there, none lost, no leaf in two anchored batches", async () => {
    const rig = await makeRig();
    const { orgId, topicId } = await rig.orgWithTopic();
    const made = [rig.insertBatchedRecord(orgId, topicId), rig.insertBatchedRecord(orgId, topicId)];
    const first = made[0]!.batchId;
    // What the service the backup came from sent under the same transaction id: other bytes.
    const row = rig.row(first);
    const other = new TextEncoder().encode(JSON.stringify({ v: 1, type: "batch", orgId, batch: 1, size: 3, root: "00".repeat(32), revoked: [] }));
    const key = (await loadOrCreateSubmitKey(anchoringDrivers(rig.core.store).loop.submitKey, rig.masterKey, () => {
      throw new Error("the topic's submit key exists already");
    }))!;
    const bytes = await rig.ledger.prepareMessage({ transactionId: first, validSeconds: row.validSeconds, topicId, message: other, submitPrivateKey: key.privateKey });
    expect((await rig.ledger.submit(bytes)).kind).toBe("accepted");
    // A listing of the topic leaves a message with other bytes alone; the batch's own confirmation,
    // once the listings have not confirmed it (confirmFallbackMs, 15 s), finds it.
    await rig.drive(24);
    expect(rig.row(first)).toMatchObject({ state: "abandoned" });
    expect(rig.row(first).lastError).toContain("other bytes");
    const second = rig.record(made[0]!.recordId).transactionId;
    expect(second).not.toBe(first);
    for (const r of made) expect(rig.record(r.recordId)).toMatchObject({ anchorState: "anchored", transactionId: second });
    expect(rig.row(second)).toMatchObject({ state: "anchored", batchSize: 2 });
    expectProofs(rig, second);
    // The old leaves are abandoned; each record's message is a leaf of one anchored batch only.
    for (const r of made) expect(rig.row(r.leafId).state).toBe("abandoned");
    const anchoredLeaves = rig.core.db
      .select()
      .from(ledgerTransactions)
      .where(and(eq(ledgerTransactions.batchLeaf, 1), eq(ledgerTransactions.state, "anchored")))
      .all();
    expect(anchoredLeaves.map((l) => l.recordId).sort()).toEqual(made.map((r) => r.recordId).sort());
  }, 30_000);
});
