/**
 * The PostgreSQL anchor journal's batches (storage/postgres/journal.ts; the port's header,
 * "Batches"; docs/anchoring.md "Batches"): the queue's counts (leaves counted, batches not), the
 * reads of the waiting leaves, a batch formed, and what a batch's state changes carry to its
 * leaves and their records. Operation bodies, run by the journal: the changes in its fenced
 * transaction, the reads unfenced.
 *
 * A leaf's record is found as every record message's is (the port's header): by primary key,
 * here the record ids of the batch's leaves (the index `ledger_transactions_leaves`), and only
 * while it carries the batch's transaction id, which `formBatch` moved it to. Never a scan of
 * the records table (it has no index by transaction id).
 */
import { and, eq, inArray, sql, type SQL } from "drizzle-orm";
import type { ConfirmedFields, JournalRules, LedgerTransactionRow, NewBatch, QueueCounts } from "../../anchoring/journal/ports.ts";
import { BATCHABLE_LEAVES_WHERE, NEXT_BATCH_SEQUENCE, WAITING_LEAVES } from "../journal-sql.ts";
import { q, type Body, type Op, type StoreDb, type Tables } from "../store.ts";
import { asRow, requeueRevocation } from "./journal-changes.ts";

type Row = LedgerTransactionRow;

/**
 * A batch that cannot be formed as asked (a leaf no longer waits, or is another organisation's):
 * thrown inside `formBatch`'s transaction so that it rolls back whatever it wrote, and answered
 * as null by the journal. Never leaves the journal.
 */
export class BatchRefused extends Error {
  override readonly name = "BatchRefused";
  constructor() {
    super("a leaf of the batch no longer waits for a batch");
  }
}

/** A shared text (journal-sql.ts, written with `?`) with its parameters bound in order. */
function bound(text: string, ...params: unknown[]): SQL {
  const parts = text.split("?");
  if (parts.length !== params.length + 1) throw new TypeError("journal: a statement's parameters and its `?` differ in number");
  return sql.join(parts.map((part, i) => (i === 0 ? sql.raw(part) : sql`${params[i - 1]}${sql.raw(part)}`)));
}

// ---- reads -------------------------------------------------------------------------------

/**
 * The unfinished rows by state, with the oldest pending one's creation: the rows the loop sends
 * but batches (through `ledger_transactions_work`), the waiting leaves (`…_unbatched`), and the
 * leaves of the unfinished batches (`…_leaves`): a batch's leaves are what waits, not the batch.
 */
const UNFINISHED = `SELECT state, count(*)::float8 AS n, min(created_at)::float8 AS oldest FROM (
    SELECT state, created_at FROM ledger_transactions WHERE batch_leaf = 0 AND state IN ('pending', 'accepted') AND kind <> 'batch_message'
    UNION ALL
    SELECT state, created_at FROM ledger_transactions WHERE batch_leaf = 1 AND batch_transaction_id IS NULL AND state = 'pending'
    UNION ALL
    SELECT l.state, l.created_at FROM ledger_transactions b JOIN ledger_transactions l ON l.batch_transaction_id = b.transaction_id
      WHERE b.batch_leaf = 0 AND b.kind = 'batch_message' AND b.state IN ('pending', 'accepted') AND l.state IN ('pending', 'accepted')
  ) u GROUP BY state`;

/** `Journal.unfinished`'s counts (`UNFINISHED`), the leader's figure aside. */
export function* unfinishedCounts(db: StoreDb): Op<Omit<QueueCounts, "anchoredByLeader">> {
  const byState = (yield* q(db.execute(sql.raw(UNFINISHED)))) as unknown as { state: string; n: number; oldest: number | null }[];
  const pending = byState.find((r) => r.state === "pending");
  return {
    pending: Number(pending?.n ?? 0),
    accepted: Number(byState.find((r) => r.state === "accepted")?.n ?? 0),
    oldestPendingAt: pending?.oldest == null ? null : Number(pending.oldest),
  };
}

/** The waiting leaves by organisation, with the oldest's creation (`WAITING_LEAVES`, through `ledger_transactions_unbatched`). */
export function* waitingLeaves(db: StoreDb): Op<{ readonly orgId: string; readonly leaves: number; readonly oldestAt: number }[]> {
  const rows = (yield* q(db.execute(sql.raw(WAITING_LEAVES)))) as unknown as { org_id: string; leaves: number | string; oldest_at: number | string }[];
  return rows.map((r) => ({ orgId: r.org_id, leaves: Number(r.leaves), oldestAt: Number(r.oldest_at) }));
}

/**
 * Up to `limit` of `orgId`'s waiting leaves that may go, oldest first (`BATCHABLE_LEAVES_WHERE`,
 * whose text ends with its ORDER BY and LIMIT: it follows the WHERE of drizzle's select, which
 * maps the columns as every other read of the journal does).
 */
export function batchableLeaves(orgId: string, limit: number): Body<Row[]> {
  return function* (db, t) {
    if (limit <= 0) return [];
    const rows = yield* q(db.select().from(t.ledgerTransactions).where(bound(BATCHABLE_LEAVES_WHERE, orgId, limit)));
    return rows.map(asRow);
  };
}

/** `orgId`'s next batch sequence (`NEXT_BATCH_SEQUENCE`, through `ledger_transactions_one_batch`). */
export function nextBatchSequence(orgId: string): Body<number> {
  return function* (db) {
    const [row] = (yield* q(db.execute(bound(NEXT_BATCH_SEQUENCE, orgId)))) as unknown as { next: number | string }[];
    return Number(row?.next ?? 1);
  };
}

// ---- a batch formed ------------------------------------------------------------------------

/**
 * Inside a change: the batch row (refused by `ledger_transactions_one_batch` with ON CONFLICT DO
 * NOTHING: null, nothing written), then every leaf given its batch, index and path in one
 * statement, each only while it is a waiting leaf of the organisation (PostgreSQL re-checks the
 * condition on the newest row version). Fewer leaves than asked: BatchRefused, which rolls the
 * transaction back. Then the leaves' records, moved to the batch's transaction id.
 */
export function formBatch(rules: JournalRules, batch: NewBatch, at: number): Body<Row | null> {
  rules.checkLength(batch.message);
  if (batch.leaves.length === 0) throw new TypeError("a batch has at least one leaf");
  return function* (tx, t) {
    const lt = t.ledgerTransactions;
    const values = rules.pendingRow(
      rules.newTransactionId(),
      { kind: "batch_message", orgId: batch.orgId, recordId: null, topicId: batch.topicId, message: batch.message, batchSequence: batch.sequence, batchSize: batch.leaves.length },
      at,
    );
    const inserted = yield* q(tx.insert(lt).values(values).onConflictDoNothing().returning({ id: lt.transactionId }));
    if (inserted.length === 0) return null;
    const id = values.transactionId;
    // One statement for up to DOCVERIFY_BATCH_MAX leaves, under one text whatever their number.
    const leaves = JSON.stringify(batch.leaves.map((l, i) => ({ id: l.transactionId, i, path: Buffer.from(l.path).toString("hex") })));
    const given = (yield* q(
      tx.execute(sql`UPDATE ledger_transactions l SET batch_transaction_id = ${id}, leaf_index = v.i, inclusion_path = decode(v.path, 'hex'), updated_at = ${at}
        FROM jsonb_to_recordset(CAST(${leaves} AS text)::jsonb) AS v(id text, i int, path text)
        WHERE l.transaction_id = v.id AND l.batch_leaf = 1 AND l.batch_transaction_id IS NULL AND l.state = 'pending' AND l.org_id = ${batch.orgId}
        RETURNING l.transaction_id`),
    )) as unknown as unknown[];
    if (given.length !== batch.leaves.length) throw new BatchRefused();
    // The records, by primary key, while they carry their leaf's transaction.
    yield* q(
      tx.execute(sql`UPDATE records r SET transaction_id = ${id} FROM ledger_transactions l
        WHERE l.batch_transaction_id = ${id} AND l.kind = 'record_message' AND r.id = l.record_id AND r.transaction_id = l.transaction_id`),
    );
    yield* q(
      tx.execute(sql`UPDATE records r SET revocation_transaction_id = ${id} FROM ledger_transactions l
        WHERE l.batch_transaction_id = ${id} AND l.kind = 'revocation_message' AND r.id = l.record_id AND r.revocation_transaction_id = l.transaction_id`),
    );
    return asRow({ ...values, sequenceNumber: null, consensusAt: null, runningHash: null, lastError: null });
  };
}

// ---- what a batch's state changes carry -------------------------------------------------------

/**
 * Sets `set` on the records of batch `batchId`'s record message leaves that still carry it (and
 * meet `also`): each by primary key from its leaf, the leaves read through `ledger_transactions_leaves`.
 */
function* setBatchRecords(tx: StoreDb, batchId: string, set: SQL, also: SQL = sql``): Op<void> {
  yield* q(
    tx.execute(sql`UPDATE records r SET ${set} FROM ledger_transactions l
      WHERE l.batch_transaction_id = ${batchId} AND l.kind = 'record_message' AND r.id = l.record_id AND r.transaction_id = ${batchId}${also}`),
  );
}

/** Inside the change that made batch `batchId` accepted: its pending leaves, and their pending records, accepted. */
export function* acceptLeaves(tx: StoreDb, t: Tables, batchId: string, at: number): Op<void> {
  const lt = t.ledgerTransactions;
  yield* q(tx.update(lt).set({ state: "accepted", updatedAt: at }).where(and(eq(lt.batchTransactionId, batchId), eq(lt.state, "pending"))));
  yield* setBatchRecords(tx, batchId, sql`anchor_state = 'accepted'`, sql` AND r.anchor_state = 'pending'`);
}

/** Inside the change that anchored batch `batchId`: its unfinished leaves anchored with its fields, their records with its sequence number and consensus time. */
export function* anchorLeaves(tx: StoreDb, t: Tables, batchId: string, confirmed: ConfirmedFields, at: number): Op<void> {
  const lt = t.ledgerTransactions;
  yield* q(
    tx
      .update(lt)
      .set({ state: "anchored", sequenceNumber: confirmed.sequenceNumber, consensusAt: confirmed.consensusAt, runningHash: Buffer.from(confirmed.runningHash), lastError: null, updatedAt: at })
      .where(and(eq(lt.batchTransactionId, batchId), inArray(lt.state, ["pending", "accepted"]))),
  );
  yield* setBatchRecords(tx, batchId, sql`anchor_state = 'anchored', sequence_number = ${confirmed.sequenceNumber}, consensus_at = ${confirmed.consensusAt}`);
}

/**
 * Inside the change that abandoned batch `batchId`: each unfinished leaf abandoned with `reason`,
 * as an ordinary message row would be (journal-changes.ts `abandon`): a record message's record
 * abandoned; a revocation queued again, a waiting leaf with the same bytes, the record's
 * revocation moved to it.
 */
export function abandonLeaves(rules: JournalRules, batchId: string, reason: string, at: number): Body<void> {
  return function* (tx, t) {
    const lt = t.ledgerTransactions;
    const leaves = (yield* q(
      tx
        .update(lt)
        .set({ state: "abandoned", lastError: reason, updatedAt: at })
        .where(and(eq(lt.batchTransactionId, batchId), inArray(lt.state, ["pending", "accepted"])))
        .returning(),
    )).map(asRow);
    if (leaves.some((l) => l.kind === "record_message")) yield* setBatchRecords(tx, batchId, sql`anchor_state = 'abandoned'`);
    for (const leaf of leaves) {
      if (leaf.kind === "revocation_message") yield* requeueRevocation(tx, t, rules, leaf, batchId, at);
    }
  };
}
