/**
 * Batches as the anchor loop closes and anchors them (docs/anchoring.md "Batches"), for tests
 * that create records with the records service and then stand in for the loop: through the
 * engine's own journal, so that the rows are exactly those the loop leaves.
 */
import { sql } from "drizzle-orm";
import type { BatchBuilder, Journal, LedgerTransactionRow } from "../../src/anchoring/journal/ports.ts";
import { journalRules } from "../../src/anchoring/journal/rules.ts";
import { batchBuilder } from "../../src/anchoring/loop/batcher.ts";
import { createTransactionIds } from "../../src/anchoring/transaction-ids.ts";
import { manualClock, type Clock } from "../../src/lib/clock.ts";
import { encodeBatchMessage } from "../../src/records/messages.ts";
import { q, type Store } from "../../src/storage/store.ts";
import { journalDrivers } from "./drivers.ts";
import { consensusAt, runningHash } from "./numbered-ledger.ts";

/** The loop's own builder (anchoring/loop/batcher.ts), with the product's batch message. */
export const testBatchBuilder: BatchBuilder = batchBuilder(encodeBatchMessage);

/** The epoch a test journal leads at on PostgreSQL. */
const TEST_EPOCH = 424_242;

/** A journal over `store` as the loop's; on PostgreSQL this node leads. */
export async function testJournal(store: Store, clock: Clock = manualClock(Date.UTC(2026, 0, 1))): Promise<Journal> {
  if (store.engine === "postgres") {
    await store.write(function* (tx) {
      yield* q(tx.execute(sql`UPDATE anchor_leader SET epoch = ${TEST_EPOCH}, node = 'test' WHERE id = 1`));
    });
  }
  const ids = createTransactionIds({ clock, operator: "0.0.2", validSeconds: 180, backdateMs: 0, lastValidStartNs: 0n });
  return journalDrivers(store, { epoch: () => TEST_EPOCH }).journal(journalRules(clock, ids));
}

/** The batch row `batchId`. */
async function batchRow(store: Store, batchId: string): Promise<LedgerTransactionRow> {
  const [row] = await store.read((db, t) => q(db.select().from(t.ledgerTransactions).where(sql`${t.ledgerTransactions.transactionId} = ${batchId}`)));
  if (row === undefined) throw new Error(`no batch ${batchId}`);
  return row as unknown as LedgerTransactionRow;
}

/** Batch `batchId` closed through `journal`, as the loop closes it once its window has passed; its row, now pending. */
export async function closeBatchNow(store: Store, journal: Journal, batchId: string): Promise<LedgerTransactionRow> {
  const closed = await journal.closeBatch(await batchRow(store, batchId), testBatchBuilder);
  if (closed === null) throw new Error(`batch ${batchId} is not open`);
  return closed;
}

/**
 * Batch `batchId` closed (if still open) and anchored at `sequenceNumber` on its topic, with the
 * numbered ledger's consensus time and running hash: its leaves and their records follow.
 */
export async function anchorBatch(store: Store, batchId: string, sequenceNumber: number, journal?: Journal): Promise<LedgerTransactionRow> {
  // A journal of its own leads on PostgreSQL only for this: the leader's row is given back after.
  const leader = journal === undefined && store.engine === "postgres" ? await store.read((db) => q(db.execute(sql`SELECT epoch, node, since, seen_at FROM anchor_leader WHERE id = 1`))) : null;
  const j = journal ?? (await testJournal(store));
  try {
    let row = await batchRow(store, batchId);
    if (row.state === "open") row = (await j.closeBatch(row, testBatchBuilder)) ?? (await batchRow(store, batchId));
    const confirmed = { sequenceNumber, consensusAt: consensusAt(sequenceNumber), runningHash: new Uint8Array(runningHash(sequenceNumber)) };
    if ((await j.grouped.toAnchoredMessage(row, confirmed)) === null) throw new Error(`batch ${batchId} was not anchored (state ${row.state})`);
    return await batchRow(store, batchId);
  } finally {
    const was = (leader as unknown as { epoch: unknown; node: unknown; since: unknown; seen_at: unknown }[] | null)?.[0];
    if (was !== undefined) {
      await store.write(function* (tx) {
        yield* q(tx.execute(sql`UPDATE anchor_leader SET epoch = ${was.epoch}, node = ${was.node}, since = ${was.since}, seen_at = ${was.seen_at} WHERE id = 1`));
      });
    }
  }
}

/** The batch record `recordId`'s creation is a leaf of (the transaction the record carries). */
export async function batchOf(store: Store, recordId: string, which: "creation" | "revocation" = "creation"): Promise<string> {
  const [row] = await store.read((db, t) =>
    q(db.select({ creation: t.records.transactionId, revocation: t.records.revocationTransactionId }).from(t.records).where(sql`${t.records.id} = ${recordId}`)),
  );
  const id = row?.[which];
  if (id == null) throw new Error(`record ${recordId} has no ${which} transaction`);
  return id;
}
