/**
 * The anchor loop's storage besides its journal (anchoring/loop/ports.ts) on the embedded SQLite:
 * every answer synchronous, over the store's connection.
 */
import type { LoopStorageNow } from "../../anchoring/loop/ports.ts";
import { metaRead, metaValue, SUBMIT_KEY_META } from "../meta.ts";
import type { SqliteStore } from "../store.ts";
import { onFirstUse } from "./first-use.ts";

/** The transactions with the newest valid start: through ledger_transactions_valid_start, never a scan (a test checks the plan). The same text on both engines. */
export const LAST_VALID_START_SQL = "SELECT transaction_id AS id FROM ledger_transactions WHERE valid_start_ms = (SELECT max(valid_start_ms) FROM ledger_transactions)";

export function sqliteLoopStorage(store: SqliteStore): LoopStorageNow {
  const client = store.db.$client;
  const isRow = onFirstUse(() => client.prepare<{ one: number }, [string]>("SELECT 1 AS one FROM ledger_transactions WHERE transaction_id = ?"));
  return {
    transactionIds: {
      newestIds: () => (client.query(LAST_VALID_START_SQL).all() as { id: string }[]).map((r) => r.id),
      exists: (transactionId) => isRow().get(transactionId) !== null,
    },
    submitKey: {
      read: () => store.readSync(metaRead(SUBMIT_KEY_META)),
      storeFirst: (entry) => store.writeSync(metaValue(SUBMIT_KEY_META, () => entry)),
    },
  };
}
