/**
 * Key announcements for the receipt tests (docs/receipts.md §1). The anchor loop queues and
 * anchors an organisation's announcement itself, in the transaction that records its topic; on a
 * build where it does not yet, `announced` stands in for it with an anchored row written
 * straight to the journal, as the loop would leave it. Either way it resolves once the
 * organisation's key is announced and anchored, and says which happened.
 */
import { randomBytes } from "node:crypto";
import type { Db } from "../../src/storage/db.ts";
import { waitFor } from "../support/wait.ts";

export interface Announcement {
  /** `service`: the anchor loop announced the key on the ledger; `test`: this helper wrote the row. */
  readonly by: "service" | "test";
  readonly transactionId: string;
  readonly topicId: string;
  readonly sequenceNumber: number;
  readonly consensusAt: string;
  readonly message: Uint8Array;
}

interface Row {
  transaction_id: string;
  state: string;
  topic_id: string | null;
  sequence_number: number | null;
  consensus_at: string | null;
  message: Uint8Array | null;
}

const SELECT = `SELECT transaction_id, state, topic_id, sequence_number, consensus_at, message FROM ledger_transactions
  WHERE org_id = ? AND key_fingerprint = ? AND kind = 'key_announcement' AND state <> 'abandoned'`;

/** The message docs/receipts.md §1 fixes, for a stand-in row. */
export function announcementMessage(f: { orgId: string; name: string; keyFingerprint: Uint8Array; sealKeyFingerprint: Uint8Array }): Uint8Array {
  const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
  return new TextEncoder().encode(
    JSON.stringify({ v: 1, type: "key", orgId: f.orgId, name: f.name, algorithm: "ML-DSA-65", keyFingerprint: hex(f.keyFingerprint), sealKeyFingerprint: hex(f.sealKeyFingerprint) }),
  );
}

/**
 * Resolves once organisation `orgId` (which must have its topic) has an anchored announcement of
 * its system key. `by: "test"` rows get a sequence number of 1 and a consensus time before any
 * record's.
 */
export async function announced(db: Db, orgId: string): Promise<Announcement> {
  const client = db.$client;
  const org = client.query("SELECT name, topic_id, system_key_fingerprint FROM organisations WHERE id = ?").get(orgId) as {
    name: string;
    topic_id: string | null;
    system_key_fingerprint: Uint8Array;
  };
  if (org.topic_id === null) throw new Error(`organisation ${orgId} has no topic yet`);
  const live = () => client.query(SELECT).get(orgId, org.system_key_fingerprint) as Row | null;
  if (live() === null) {
    const seal = client.query("SELECT value FROM service_meta WHERE key = 'seal_key_fingerprint'").get() as { value: string } | null;
    if (seal === null) throw new Error("no seal key yet: create a record first");
    const now = Date.now();
    const transactionId = `0.0.2@${Math.floor(now / 1000)}.${String(randomBytes(3).readUIntBE(0, 3)).padStart(9, "0")}`;
    const message = announcementMessage({ orgId, name: org.name, keyFingerprint: org.system_key_fingerprint, sealKeyFingerprint: Buffer.from(seal.value, "hex") });
    client
      .query(
        `INSERT INTO ledger_transactions (transaction_id, kind, org_id, topic_id, message, key_fingerprint, valid_start_ms, valid_seconds, state,
           sequence_number, consensus_at, running_hash, attempts, next_attempt_at, created_at, updated_at)
         VALUES (?, 'key_announcement', ?, ?, ?, ?, ?, 180, 'anchored', 1, '1000000000.000000001', ?, 1, ?, ?, ?)`,
      )
      .run(transactionId, orgId, org.topic_id, message, org.system_key_fingerprint, now, randomBytes(48), now, now, now);
    const row = live()!;
    return { by: "test", transactionId, topicId: org.topic_id, sequenceNumber: 1, consensusAt: row.consensus_at!, message };
  }
  const row = await waitFor("the organisation's key announcement to be anchored", () => {
    const r = live();
    return r !== null && r.state === "anchored" ? r : undefined;
  });
  return { by: "service", transactionId: row.transaction_id, topicId: row.topic_id!, sequenceNumber: row.sequence_number!, consensusAt: row.consensus_at!, message: row.message! };
}
