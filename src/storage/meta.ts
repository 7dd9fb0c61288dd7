/** Installation facts in `service_meta`, created once and read thereafter, on either engine. */
import { eq } from "drizzle-orm";
import { q, type Body } from "./store.ts";

/** The key under which the check value of the installation's master key is kept (crypto's `masterKeyCheckValue`). */
export const MASTER_KEY_CHECK = "master_key_check";

/**
 * The value stored under `key`, creating it with `make()` on first use (a write operation). Safe
 * when two processes or nodes race: the insert is `ON CONFLICT DO NOTHING` and both then read the
 * winner's value.
 */
export function metaValue(key: string, make: () => string): Body<string> {
  const value = make();
  return function* (tx, t) {
    yield* q(tx.insert(t.serviceMeta).values({ key, value }).onConflictDoNothing());
    const [row] = yield* q(tx.select().from(t.serviceMeta).where(eq(t.serviceMeta.key, key)));
    if (row === undefined) throw new Error(`service_meta ${key} vanished`);
    return row.value;
  };
}

/** The value stored under `key`, or null (a read operation). */
export function metaRead(key: string): Body<string | null> {
  return function* (db, t) {
    const [row] = yield* q(db.select().from(t.serviceMeta).where(eq(t.serviceMeta.key, key)));
    return row?.value ?? null;
  };
}

/** The key under which the sealed ledger submit key is kept (anchoring/submit-key.ts). */
export const SUBMIT_KEY_META = "ledger_submit_key";

/** The key a storage probe writes (lib/storage-faults.ts: whether a storage fault has passed). */
export const STORAGE_PROBE = "storage_probe";

/** A small real write (a write operation): the time, under STORAGE_PROBE. It passes only if storage can store. */
export function storageProbe(value: string): Body<void> {
  return function* (tx, t) {
    yield* q(tx.insert(t.serviceMeta).values({ key: STORAGE_PROBE, value }).onConflictDoUpdate({ target: t.serviceMeta.key, set: { value } }));
  };
}
