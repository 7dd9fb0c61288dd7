/**
 * Key announcements for the receipt tests (docs/receipts.md §1): the anchor loop queues an
 * organisation's announcement in the transaction that records its topic (and, for a topic that
 * predates announcements, in its next pass), and anchors it like any message. `announced` waits for
 * that, and fails if it never happens.
 */
import type { Db } from "../../src/storage/db.ts";
import { waitFor } from "../support/wait.ts";

export interface Announcement {
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

const SELECT = `SELECT t.transaction_id, t.state, t.topic_id, t.sequence_number, t.consensus_at, t.message
  FROM ledger_transactions t JOIN organisations o ON o.id = t.org_id AND o.system_key_fingerprint = t.key_fingerprint
  WHERE t.org_id = ? AND t.kind = 'key_announcement' AND t.state <> 'abandoned'`;

/** Resolves with organisation `orgId`'s announcement of its system key once the ledger has anchored it. */
export async function announced(db: Db, orgId: string, timeoutMs = 20_000): Promise<Announcement> {
  const row = await waitFor(
    `organisation ${orgId}'s key announcement to be anchored`,
    () => {
      const r = db.$client.query(SELECT).get(orgId) as Row | null;
      return r !== null && r.state === "anchored" ? r : undefined;
    },
    timeoutMs,
  );
  return { transactionId: row.transaction_id, topicId: row.topic_id!, sequenceNumber: row.sequence_number!, consensusAt: row.consensus_at!, message: row.message! };
}
