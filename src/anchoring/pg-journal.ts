/**
 * The anchor loop's storage on PostgreSQL (docs/storage.md "The anchor loop on PostgreSQL"): the
 * journal fenced by the leader's epoch (storage/postgres/journal.ts, through
 * storage/journal-drivers.ts), transaction ids in this node's lane, and the submit key every node
 * shares. Composition: the transaction ids and the submit key are built as on SQLite.
 */
import { sql } from "drizzle-orm";
import type { PostgresStore } from "../storage/pg-store.ts";
import { journalDrivers } from "../storage/journal-drivers.ts";
import { q } from "../storage/store.ts";
import { journalRules } from "./journal/rules.ts";
import type { SubmitKeyPair } from "./ledger.ts";
import { loadOrCreateSubmitKeyIn } from "./submit-key.ts";
import { createTransactionIds, LAST_VALID_START_SQL, maxValidStartNs } from "./transaction-ids.ts";
import type { AnchorStorage } from "./types.ts";

/**
 * The loop's storage on PostgreSQL: the fenced journal, transaction ids in this node's lane (the
 * last valid start read once, now), and the submit key every node shares.
 */
export async function postgresAnchorStorage(
  store: PostgresStore,
  options: { readonly epoch: () => number | null; readonly lane: { readonly index: number; readonly lanes: number; held(): boolean } },
): Promise<AnchorStorage> {
  const last = await store.read(function* (db) {
    return (yield* q(db.execute(sql.raw(LAST_VALID_START_SQL)))) as unknown as { id: string }[];
  });
  const lastValidStartNs = maxValidStartNs(last);
  const { journal } = journalDrivers(store, { epoch: options.epoch });
  return {
    journal: (clock, newTransactionId) => journal(journalRules(clock, newTransactionId)),
    transactionIds: (o) => createTransactionIds({ ...o, lastValidStartNs, lane: options.lane }),
    submitKey: (masterKey: Uint8Array | null, generate: () => SubmitKeyPair) => loadOrCreateSubmitKeyIn(store, masterKey, generate),
    active: () => options.epoch() !== null,
  };
}
