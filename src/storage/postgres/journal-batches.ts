/**
 * The PostgreSQL anchor journal's batches (storage/postgres/journal.ts; the port's header,
 * "Batches"; docs/anchoring.md "Batches"): the queue's counts (a batch counts its leaves), the open
 * batches, a batch closed, and what a batch's state changes carry to its leaves and their records.
 * Operation bodies, run by the journal: the changes in its fenced transaction, the reads unfenced.
 *
 * Records and revocations join an open batch in their own write (anchoring/queue.ts
 * `pendingMessage`): an UPDATE of the batch's `batch_size` while it is `open`, which holds the
 * batch row's lock until that write commits. `closeBatch` takes the same lock first, so a join in
 * flight commits before the close reads the leaves, and a join after it finds the batch closed.
 *
 * A leaf's record is found as every record message's is (the port's header): by primary key,
 * here the record ids of the batch's leaves (the index `ledger_transactions_leaves`), and only
 * while it carries the batch's transaction id. Never a scan of the records table.
 */
import { and, asc, eq, inArray, sql, type SQL } from "drizzle-orm";
import type { BatchBuilder, BatchLeaf, ConfirmedFields, JournalRules, LedgerTransactionRow, QueueCounts } from "../../anchoring/journal/ports.ts";
import { NEXT_BATCH_SEQUENCE } from "../journal-sql.ts";
import { q, type Body, type Op, type StoreDb, type Tables } from "../store.ts";
import { abandon, asRow, joinBatch, move, requeueRevocation } from "./journal-changes.ts";

type Row = LedgerTransactionRow;

// ---- reads -------------------------------------------------------------------------------

/**
 * The rows the loop sends by state (through `ledger_transactions_work`), a batch counting its
 * leaves and an open one counted as pending; leaves are counted through their batch, not alone.
 */
const UNFINISHED_BY_STATE = `SELECT state, sum(CASE WHEN kind = 'batch_message' THEN coalesce(batch_size, 0) ELSE 1 END)::float8 AS n
  FROM ledger_transactions WHERE state IN ('open', 'pending', 'accepted') AND batch_leaf = 0 GROUP BY state`;

/** The oldest open or pending row's creation. */
const OLDEST_PENDING = `SELECT min(created_at)::float8 AS at FROM ledger_transactions WHERE state IN ('open', 'pending') AND batch_leaf = 0`;

/** `Journal.unfinished`'s counts (the leader's figure aside). */
export function* unfinishedCounts(db: StoreDb): Op<Omit<QueueCounts, "anchoredByLeader">> {
  const byState = (yield* q(db.execute(sql.raw(UNFINISHED_BY_STATE)))) as unknown as { state: string; n: number | string }[];
  const [oldest] = (yield* q(db.execute(sql.raw(OLDEST_PENDING)))) as unknown as { at: number | string | null }[];
  const n = (state: string) => Number(byState.find((r) => r.state === state)?.n ?? 0);
  return { pending: n("pending") + n("open"), accepted: n("accepted"), oldestPendingAt: oldest?.at == null ? null : Number(oldest.at) };
}

/** Every open batch, soonest window end first. */
export function* openBatches(db: StoreDb, t: Tables): Op<Row[]> {
  const lt = t.ledgerTransactions;
  const rows = yield* q(db.select().from(lt).where(and(eq(lt.state, "open"), eq(lt.batchLeaf, 0))).orderBy(asc(lt.nextAttemptAt)));
  return rows.map(asRow);
}

/** Open batches whose validity window closes before `before`, soonest due first (they can never be submitted). */
export function openPastCutoff(before: number, limit: number): Body<Row[]> {
  return function* (db, t) {
    if (limit <= 0) return [];
    const lt = t.ledgerTransactions;
    const rows = yield* q(
      db
        .select()
        .from(lt)
        .where(and(eq(lt.state, "open"), eq(lt.batchLeaf, 0), sql`${lt.validStartMs} + ${lt.validSeconds} * 1000 + 1 < ${before}`))
        .orderBy(asc(lt.nextAttemptAt))
        .limit(limit),
    );
    return rows.map(asRow);
  };
}

/** A shared text (journal-sql.ts, written with `?`) with its parameters bound in order. */
function bound(text: string, ...params: unknown[]): SQL {
  const parts = text.split("?");
  if (parts.length !== params.length + 1) throw new TypeError("journal: a statement's parameters and its `?` differ in number");
  return sql.join(parts.map((part, i) => (i === 0 ? sql.raw(part) : sql`${params[i - 1]}${sql.raw(part)}`)));
}

// ---- a batch closed ------------------------------------------------------------------------

/**
 * Inside a change, at `at`: the open batch `row` closed (the port's `closeBatch`). Its row is
 * locked first, while it is `open` (an UPDATE that waits for a join in flight, which holds the
 * lock from its `batch_size` UPDATE until it commits); then its leaves are read in the order they
 * joined, built, and stored. Null if it is no longer open; "empty" if no leaf joined it (the
 * caller abandons it in the same transaction). A `build` that throws rolls everything back.
 */
export function closeBatch(rules: JournalRules, row: Row, build: BatchBuilder, at: number): Body<Row | "empty" | null> {
  return function* (tx, t) {
    const lt = t.ledgerTransactions;
    const locked = yield* q(
      tx
        .update(lt)
        .set({ updatedAt: at })
        .where(and(eq(lt.transactionId, row.transactionId), eq(lt.state, "open")))
        .returning({ orgId: lt.orgId }),
    );
    if (locked.length === 0) return null;
    // A new statement, a new snapshot (READ COMMITTED): every join committed before the lock is seen.
    const leaves = yield* q(
      tx
        .select({ transactionId: lt.transactionId, kind: lt.kind, recordId: lt.recordId, message: lt.message })
        .from(lt)
        .where(eq(lt.batchTransactionId, row.transactionId))
        .orderBy(asc(lt.createdAt), asc(lt.transactionId)),
    );
    if (leaves.length === 0) return "empty";
    const given: BatchLeaf[] = leaves.map((l) => {
      if ((l.kind !== "record_message" && l.kind !== "revocation_message") || l.recordId === null || l.message === null) throw new Error(`batch ${row.transactionId} holds a malformed leaf ${l.transactionId}`);
      return { kind: l.kind, recordId: l.recordId, message: new Uint8Array(l.message) };
    });
    const orgId = locked[0]!.orgId;
    const [next] = (yield* q(tx.execute(bound(NEXT_BATCH_SEQUENCE, orgId)))) as unknown as { next: number | string }[];
    const sequence = Number(next?.next ?? 1);
    const built = build({ orgId, sequence, leaves: given });
    if (built.paths.length !== leaves.length) throw new Error("a batch's builder must give every leaf its path");
    rules.checkLength(built.message);
    const [closed] = yield* q(
      tx
        .update(lt)
        .set({ state: "pending", message: Buffer.from(built.message), batchSequence: sequence, batchSize: leaves.length, nextAttemptAt: at, updatedAt: at })
        .where(and(eq(lt.transactionId, row.transactionId), eq(lt.state, "open")))
        .returning(),
    );
    // One statement for up to DOCVERIFY_BATCH_MAX leaves, under one text whatever their number.
    const places = JSON.stringify(leaves.map((l, i) => ({ id: l.transactionId, i, path: Buffer.from(built.paths[i]!).toString("hex") })));
    yield* q(
      tx.execute(sql`UPDATE ledger_transactions l SET leaf_index = v.i, inclusion_path = decode(v.path, 'hex'), updated_at = ${at}
        FROM jsonb_to_recordset(CAST(${places} AS text)::jsonb) AS v(id text, i int, path text)
        WHERE l.transaction_id = v.id AND l.batch_transaction_id = ${row.transactionId}`),
    );
    return asRow(closed);
  };
}

/**
 * `closeBatch` and what follows, in one change: a batch without a leaf (its record's write undone
 * after the batch was made: nothing to anchor) abandoned.
 */
export function closeOrAbandon(rules: JournalRules, row: Row, build: BatchBuilder, at: number): Body<Row | null> {
  return function* (tx, t) {
    const closed = yield* closeBatch(rules, row, build, at)(tx, t);
    if (closed !== "empty") return closed;
    yield* abandon(rules, row, "no record or revocation joined the batch", at)(tx, t);
    return null;
  };
}

// ---- what a batch's state changes carry -------------------------------------------------------

/**
 * Sets `set` on the records of batch `batchId`'s record message leaves that carry it (and meet
 * `also`): each by primary key from its leaf, the leaves read through `ledger_transactions_leaves`.
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
 * Inside the change that abandoned batch `batchId` (already abandoned: a revocation queued again
 * never joins it): each unfinished leaf abandoned with `reason`, as if it had been its own
 * message: a record message's record abandoned; a revocation queued again as a leaf of an open
 * batch of revocations (`requeueRevocation`).
 */
export function abandonLeaves(rules: JournalRules, batchId: string, reason: string, at: number): Body<void> {
  return function* (tx, t) {
    const lt = t.ledgerTransactions;
    const leaves = (yield* q(
      tx
        .update(lt)
        .set({ state: "abandoned", lastError: `its batch was abandoned: ${reason}`, updatedAt: at })
        .where(and(eq(lt.batchTransactionId, batchId), inArray(lt.state, ["pending", "accepted"])))
        .returning(),
    )).map(asRow);
    // In the order they joined: a revocation queued again keeps its place among the others.
    leaves.sort((a, b) => a.createdAt - b.createdAt || (a.transactionId < b.transactionId ? -1 : a.transactionId > b.transactionId ? 1 : 0));
    if (leaves.some((l) => l.kind === "record_message")) yield* setBatchRecords(tx, batchId, sql`anchor_state = 'abandoned'`);
    for (const leaf of leaves) {
      if (leaf.kind === "revocation_message") yield* requeueRevocation(tx, t, rules, leaf, batchId, at);
    }
  };
}

// ---- a batch put again -------------------------------------------------------------------------

/**
 * Inside a change, at `at`: the pending or accepted batch `row`, whose transaction carried other
 * bytes, abandoned with `reason` (the port's `rebatch`); each unfinished leaf abandoned and put
 * again, a new leaf with the same bytes, in an open batch (`joinBatch`: a record's of the batch's
 * key and seal key, a revocation's of revocations), its record following (a creation pending
 * again). The batches the leaves went to; null if the row had moved on.
 */
export function rebatch(rules: JournalRules, row: Row, reason: string, at: number): Body<{ readonly at: number; readonly batches: readonly string[] } | null> {
  return function* (tx, t) {
    const lt = t.ledgerTransactions;
    if (row.kind !== "batch_message" || !(yield* move(tx, t, row.transactionId, ["pending", "accepted"], { state: "abandoned", lastError: reason, updatedAt: at }))) return null;
    const leaves = (yield* q(
      tx
        .select()
        .from(lt)
        .where(and(eq(lt.batchTransactionId, row.transactionId), inArray(lt.state, ["pending", "accepted"])))
        .orderBy(asc(lt.createdAt), asc(lt.transactionId)),
    )).map(asRow);
    const batches = new Set<string>();
    for (const leaf of leaves) {
      if (leaf.recordId === null || leaf.topicId === null) continue;
      yield* q(tx.update(lt).set({ state: "abandoned", lastError: `its batch was put again: ${reason}`, updatedAt: at }).where(eq(lt.transactionId, leaf.transactionId)));
      const creation = leaf.kind === "record_message";
      const batch = yield* joinBatch(rules, leaf.orgId, leaf.topicId, creation ? row.keyFingerprint : null, creation ? row.sealFingerprint : null, at);
      yield* q(tx.insert(lt).values({ ...rules.pendingRow(rules.newTransactionId(), leaf, at), batchTransactionId: batch }));
      const r = t.records;
      if (creation) yield* q(tx.update(r).set({ transactionId: batch, anchorState: "pending" }).where(and(eq(r.id, leaf.recordId), eq(r.transactionId, row.transactionId))));
      else yield* q(tx.update(r).set({ revocationTransactionId: batch }).where(and(eq(r.id, leaf.recordId), eq(r.revocationTransactionId, row.transactionId))));
      batches.add(batch);
    }
    return { at, batches: [...batches] };
  };
}
