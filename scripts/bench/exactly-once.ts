/**
 * "Exactly once", with batches (docs/anchoring.md "Batches": each leaf in exactly one anchored
 * batch, never two): the organisation's topic read back through the mirror REST,
 * every page, and compared with the data folder's `ledger_transactions` and `records`.
 *
 * - Every batch message on the topic is an anchored `batch_message` row of the data folder, byte
 *   for byte, at the sequence number the row names; no batch (organisation, batch sequence) is on
 *   the topic twice; every anchored batch row is on the topic.
 * - Each anchored batch's leaves (`batch_leaf` 1, `batch_transaction_id` the batch) are numbered
 *   0 to size − 1, and the Merkle root over their messages in that order is the root its message
 *   on the ledger carries: the leaves are what the ledger anchors.
 * - Each record is anchored exactly once: one leaf in one anchored batch on the topic, or (a
 *   record sent as a message of its own, DOCVERIFY_BATCH_WINDOW_MS=0) its own message once; never
 *   two batches, never a batch and a message of its own. The record row is `anchored`, names
 *   that batch's (or message's) transaction and sequence number.
 * - Every record acknowledged with a 201 is there and anchored; nothing on the topic is unknown.
 */
import type { Database } from "bun:sqlite";
import { merkleTree } from "../../src/anchoring/merkle.ts";
import { topicMessages, type Json } from "./anchor-load.ts";

export interface ExactlyOnceCheck {
  readonly records: number;
  readonly acknowledged: number;
  /** Messages on the topic, by type: everything the loop sent there for the organisation. */
  readonly ledgerMessages: number;
  readonly batchMessages: number;
  readonly recordMessages: number;
  readonly otherMessages: number;
  /** Leaves in the anchored batches on the topic, and their mean per batch. */
  readonly leaves: number;
  readonly meanLeavesPerBatch: number | null;
  readonly largestBatch: number;
  /** Records anchored more than once (two batches, or a batch and a message of their own, or their message twice). */
  readonly duplicates: number;
  /** Records anchored in no batch and no message on the topic, though not abandoned. */
  readonly missing: number;
  /** Acknowledged records (201) not in the records table. */
  readonly acknowledgedMissing: number;
  readonly notAnchored: number;
  readonly abandoned: number;
  /** Records whose row names another transaction or sequence number than the one that anchors them. */
  readonly wrongAnchor: number;
  /** Batches whose leaves do not give the root their message on the ledger carries (or are not numbered 0 to size − 1). */
  readonly wrongRoot: number;
  /** Messages on the topic no anchored row of the data folder has, byte for byte, at that sequence number. */
  readonly unknown: number;
  /** Anchored batch rows whose message is not on the topic. */
  readonly batchesMissing: number;
  readonly exactlyOnce: boolean;
}

interface BatchRow {
  readonly transaction_id: string;
  readonly message: Uint8Array | null;
  readonly sequence_number: number | null;
  readonly batch_size: number | null;
}

interface LeafRow {
  readonly record_id: string;
  readonly state: string;
  readonly batch_transaction_id: string | null;
  readonly leaf_index: number | null;
  readonly message: Uint8Array;
}

interface OwnMessageRow {
  readonly transaction_id: string;
  readonly record_id: string;
  readonly message: Uint8Array;
  readonly sequence_number: number | null;
}

const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));

export async function checkExactlyOnce(db: Database, mirrorUrl: string, topicId: string, acknowledged: readonly string[]): Promise<ExactlyOnceCheck> {
  const messages = await topicMessages(mirrorUrl, topicId);
  const batches = db
    .query("SELECT transaction_id, message, sequence_number, batch_size FROM ledger_transactions WHERE kind = 'batch_message' AND topic_id = ? AND state = 'anchored'")
    .all(topicId) as BatchRow[];
  const leaves = db
    .query("SELECT record_id, state, batch_transaction_id, leaf_index, message FROM ledger_transactions WHERE kind = 'record_message' AND batch_leaf = 1 AND topic_id = ?")
    .all(topicId) as LeafRow[];
  const own = db
    .query("SELECT transaction_id, record_id, message, sequence_number FROM ledger_transactions WHERE kind = 'record_message' AND batch_leaf = 0 AND topic_id = ? AND state = 'anchored'")
    .all(topicId) as OwnMessageRow[];
  const records = db.query("SELECT id, anchor_state AS state, transaction_id, sequence_number AS seq FROM records WHERE topic_id = ?").all(topicId) as {
    id: string;
    state: string;
    transaction_id: string;
    seq: number | null;
  }[];
  // Every anchored row whose message the topic should hold, by sequence number.
  const bySequence = new Map<number, { transactionId: string; message: Uint8Array }>();
  for (const r of [...batches, ...own]) if (r.sequence_number !== null && r.message !== null) bySequence.set(r.sequence_number, { transactionId: r.transaction_id, message: r.message });
  const announced = db.query("SELECT sequence_number, message FROM ledger_transactions WHERE topic_id = ? AND state = 'anchored' AND kind NOT IN ('batch_message', 'record_message')").all(topicId) as {
    sequence_number: number;
    message: Uint8Array;
  }[];
  for (const r of announced) bySequence.set(r.sequence_number, { transactionId: "", message: r.message });

  let batchMessages = 0;
  let recordMessages = 0;
  let unknown = 0;
  const batchOnLedger = new Map<string, { sequenceNumber: number; root: string; size: number }>();
  const batchKeys = new Map<string, number>();
  /** Where each record is anchored: transaction id and sequence number of each batch or own message that holds it. */
  const anchors = new Map<string, { transactionId: string; sequenceNumber: number }[]>();
  const anchorOf = (recordId: string, a: { transactionId: string; sequenceNumber: number }) => {
    const list = anchors.get(recordId) ?? [];
    list.push(a);
    anchors.set(recordId, list);
  };
  for (const m of messages) {
    const decoded = JSON.parse(Buffer.from(m.bytes).toString("utf8")) as Json;
    const row = bySequence.get(m.sequenceNumber);
    const known = row !== undefined && same(row.message, m.bytes);
    if (!known) unknown++;
    if (decoded.type === "batch") {
      batchMessages++;
      const key = `${decoded.orgId} ${decoded.batch}`;
      batchKeys.set(key, (batchKeys.get(key) ?? 0) + 1);
      if (known) batchOnLedger.set(row.transactionId, { sequenceNumber: m.sequenceNumber, root: String(decoded.root), size: Number(decoded.size) });
    } else if (decoded.type === "record") {
      recordMessages++;
      // A record's own message (no batch): the row naming it anchors it, or it is unknown.
      anchorOf(String(decoded.recordId), { transactionId: known ? row.transactionId : "?", sequenceNumber: m.sequenceNumber });
    }
  }
  // The same batch (organisation, sequence) twice on the topic: its leaves anchored twice.
  let duplicates = 0;
  for (const n of batchKeys.values()) if (n > 1) duplicates += n - 1;

  // Each anchored batch on the topic: its leaves, numbered 0 to size − 1, give its root.
  const leavesOf = new Map<string, LeafRow[]>();
  for (const l of leaves) {
    if (l.batch_transaction_id === null) continue;
    const list = leavesOf.get(l.batch_transaction_id) ?? [];
    list.push(l);
    leavesOf.set(l.batch_transaction_id, list);
  }
  let wrongRoot = 0;
  let batchesMissing = 0;
  let leafCount = 0;
  let largestBatch = 0;
  for (const b of batches) {
    const onLedger = batchOnLedger.get(b.transaction_id);
    if (onLedger === undefined) {
      batchesMissing++;
      continue;
    }
    const placed = (leavesOf.get(b.transaction_id) ?? []).filter((l) => l.state !== "abandoned").sort((x, y) => (x.leaf_index ?? -1) - (y.leaf_index ?? -1));
    const numbered = placed.length === onLedger.size && placed.every((l, i) => l.leaf_index === i);
    if (!numbered || Buffer.from(merkleTree(placed.map((l) => l.message)).root).toString("hex") !== onLedger.root) wrongRoot++;
    leafCount += placed.length;
    largestBatch = Math.max(largestBatch, placed.length);
    for (const l of placed) anchorOf(l.record_id, { transactionId: b.transaction_id, sequenceNumber: onLedger.sequenceNumber });
  }

  let missing = 0;
  let notAnchored = 0;
  let abandoned = 0;
  let wrongAnchor = 0;
  const known = new Set<string>();
  for (const r of records) {
    known.add(r.id);
    const found = anchors.get(r.id) ?? [];
    if (found.length > 1) duplicates += found.length - 1;
    if (r.state === "abandoned") {
      abandoned++;
      continue;
    }
    if (found.length === 0) missing++;
    if (r.state !== "anchored") notAnchored++;
    else if (found.length > 0 && !found.some((a) => a.transactionId === r.transaction_id && a.sequenceNumber === r.seq)) wrongAnchor++;
  }
  for (const id of anchors.keys()) if (!known.has(id)) unknown++;
  const acknowledgedMissing = acknowledged.filter((id) => !known.has(id)).length;
  const exactlyOnce = duplicates === 0 && missing === 0 && notAnchored === 0 && wrongAnchor === 0 && wrongRoot === 0 && unknown === 0 && batchesMissing === 0 && acknowledgedMissing === 0;
  return {
    records: records.length,
    acknowledged: acknowledged.length,
    ledgerMessages: messages.length,
    batchMessages,
    recordMessages,
    otherMessages: messages.length - batchMessages - recordMessages,
    leaves: leafCount,
    meanLeavesPerBatch: batchOnLedger.size === 0 ? null : leafCount / batchOnLedger.size,
    largestBatch,
    duplicates,
    missing,
    acknowledgedMissing,
    notAnchored,
    abandoned,
    wrongAnchor,
    wrongRoot,
    unknown,
    batchesMissing,
    exactlyOnce,
  };
}

/** One line: the messages on the topic and every count of the check, with its verdict. */
export function describeCheck(c: ExactlyOnceCheck): string {
  const perBatch = c.meanLeavesPerBatch === null ? "" : `, ${c.leaves} leaves in them (mean ${c.meanLeavesPerBatch.toFixed(1)}, largest ${c.largestBatch})`;
  return (
    `on the ledger: ${c.ledgerMessages} messages (${c.batchMessages} batches${perBatch}, ${c.recordMessages} records alone, ${c.otherMessages} other) for ${c.records} records ` +
    `(${c.acknowledged} acknowledged); duplicates ${c.duplicates}, missing ${c.missing}, acknowledged missing ${c.acknowledgedMissing}, not anchored ${c.notAnchored}, ` +
    `abandoned ${c.abandoned}, wrong anchor ${c.wrongAnchor}, wrong root ${c.wrongRoot}, batches missing ${c.batchesMissing}, unknown ${c.unknown}  ${c.exactlyOnce ? "EXACTLY ONCE" : "NOT EXACTLY ONCE"}`
  );
}
