/**
 * The anchor loop's storage besides its journal (anchoring/loop/ports.ts) on PostgreSQL: every
 * answer a promise; no synchronous lookup of a transaction id (the journal's primary key refuses
 * a repeat). Uses the store's methods only: loading it loads no PostgreSQL client.
 */
import { sql } from "drizzle-orm";
import type { LoopStorage } from "../../anchoring/loop/ports.ts";
import { metaRead, metaValue, SUBMIT_KEY_META } from "../meta.ts";
import type { PostgresStore } from "../pg-store.ts";
import { LAST_VALID_START_SQL } from "../sqlite/loop-storage.ts";
import { q } from "../store.ts";

export function postgresLoopStorage(store: PostgresStore): LoopStorage {
  return {
    transactionIds: {
      newestIds: () =>
        store.read(function* (db) {
          return ((yield* q(db.execute(sql.raw(LAST_VALID_START_SQL)))) as unknown as { id: string }[]).map((r) => r.id);
        }),
      exists: null,
    },
    submitKey: {
      read: () => store.read(metaRead(SUBMIT_KEY_META)),
      storeFirst: (entry) => store.write(metaValue(SUBMIT_KEY_META, () => entry)),
    },
  };
}
