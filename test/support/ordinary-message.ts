/**
 * An ordinary message row (`batch_leaf` 0: sent on its own, as every record and revocation message
 * was before batches, and as `insertPendingMessage` still writes one) as a step of a store
 * operation, on either engine: for the journal suites that test the rows the loop sends itself.
 * The records capability queues leaves (`pendingMessage`); journal-batches.test.ts tests those.
 */
import { checkLength, pendingValues } from "../../src/anchoring/journal/rules.ts";
import type { insertPendingMessage } from "../../src/anchoring/queue.ts";
import { q, type Op, type StoreDb, type Tables } from "../../src/storage/store.ts";

export function* ordinaryMessage(tx: StoreDb, t: Tables, input: Parameters<typeof insertPendingMessage>[1]): Op<void> {
  checkLength(input.message);
  yield* q(tx.insert(t.ledgerTransactions).values(pendingValues(input, input, input.now)));
}
