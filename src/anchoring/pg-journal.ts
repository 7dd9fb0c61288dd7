/**
 * The anchor loop's storage on PostgreSQL (docs/storage.md "The anchor loop on PostgreSQL"): the
 * journal fenced by the leader's epoch (storage/postgres/journal.ts, through
 * storage/journal-drivers.ts), transaction ids in this node's lane, and the submit key every node
 * shares, both through the loop's port (anchoring/ports-loop.ts, storage/anchoring-drivers.ts).
 * Composition only: the transaction ids and the submit key are built as on SQLite.
 */
import { anchoringDrivers } from "../storage/anchoring-drivers.ts";
import { journalDrivers } from "../storage/journal-drivers.ts";
import type { PostgresStore } from "../storage/pg-store.ts";
import { journalRules } from "./journal/rules.ts";
import type { SubmitKeyPair } from "./ledger.ts";
import { loadOrCreateSubmitKey } from "./submit-key.ts";
import { createTransactionIds, maxValidStartNs } from "./transaction-ids.ts";
import type { AnchorStorage } from "./types.ts";

/**
 * The loop's storage on PostgreSQL: the fenced journal, transaction ids in this node's lane (the
 * last valid start read once, now), and the submit key every node shares.
 */
export async function postgresAnchorStorage(
  store: PostgresStore,
  options: { readonly epoch: () => number | null; readonly lane: { readonly index: number; readonly lanes: number; held(): boolean } },
): Promise<AnchorStorage> {
  const { loop } = anchoringDrivers(store);
  const lastValidStartNs = maxValidStartNs((await loop.transactionIds.newestIds()).map((id) => ({ id })));
  const { journal } = journalDrivers(store, { epoch: options.epoch });
  return {
    journal: (clock, newTransactionId) => journal(journalRules(clock, newTransactionId)),
    transactionIds: (o) => createTransactionIds({ ...o, lastValidStartNs, lane: options.lane }),
    submitKey: (masterKey: Uint8Array | null, generate: () => SubmitKeyPair) => loadOrCreateSubmitKey(loop.submitKey, masterKey, generate),
    active: () => options.epoch() !== null,
  };
}
