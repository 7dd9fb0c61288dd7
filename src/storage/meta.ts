/** Installation facts in `service_meta`, created once and read thereafter. */
import { eq } from "drizzle-orm";
import type { Db } from "./db.ts";
import { serviceMeta } from "./schema.ts";

/** The key under which the check value of the installation's master key is kept (crypto's `masterKeyCheckValue`). */
export const MASTER_KEY_CHECK = "master_key_check";

/**
 * The value stored under `key`, creating it with `make()` on first use. Safe when two
 * processes race: the insert is `ON CONFLICT DO NOTHING` and both then read the winner's value.
 */
export function metaValue(db: Db, key: string, make: () => string): string {
  db.insert(serviceMeta).values({ key, value: make() }).onConflictDoNothing().run();
  const row = db.select().from(serviceMeta).where(eq(serviceMeta.key, key)).get();
  if (row === undefined) throw new Error(`service_meta ${key} vanished`);
  return row.value;
}
