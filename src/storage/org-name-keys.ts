/**
 * Organisations' name keys (lib/name-key.ts) for the rows written without one: by a release before
 * SQLite migration 0012 / PostgreSQL migration 0007, which added `organisations.name_key` and its
 * unique index. The key is computed in code, so it is filled here, at start, after the migrations
 * (migrate.ts, pg-migrate.ts) and before anything creates or renames an organisation.
 *
 * Such a folder may hold one name twice already. Nothing is dropped or renamed: in creation order,
 * the first organisation under a name gets the name's key, and each later one `KEY#ID` (its own
 * id), a key no other name has. The administrator renames them (`docverify org set ORG --name`);
 * `serve` warns of them at every start until then (keys/organisations.ts `sharingNames`).
 *
 * A write operation, on either engine: run again by two processes or nodes at once, the second
 * finds nothing left to fill (SQLite: one write at a time; PostgreSQL: SERIALIZABLE, retried).
 */
import { and, asc, eq, isNotNull, isNull } from "drizzle-orm";
import { nameKey } from "../lib/name-key.ts";
import { q, type Body } from "./store.ts";

/** What `fillNameKeys` gave a key: each organisation, and the key it now has. */
export interface FilledNameKey {
  readonly id: string;
  readonly name: string;
  readonly nameKey: string;
}

export const fillNameKeys: Body<FilledNameKey[]> = function* (tx, t) {
  const o = t.organisations;
  const missing = yield* q(tx.select({ id: o.id, name: o.name }).from(o).where(isNull(o.nameKey)).orderBy(asc(o.createdAt), asc(o.id)));
  if (missing.length === 0) return [];
  const keyed = yield* q(tx.select({ key: o.nameKey }).from(o).where(isNotNull(o.nameKey)));
  const taken = new Set(keyed.flatMap((r) => (r.key === null ? [] : [r.key])));
  const filled: FilledNameKey[] = [];
  for (const row of missing) {
    const plain = nameKey(row.name);
    const key = taken.has(plain) ? `${plain}#${row.id}` : plain;
    taken.add(key);
    yield* q(tx.update(o).set({ nameKey: key }).where(and(eq(o.id, row.id), isNull(o.nameKey))));
    filled.push({ id: row.id, name: row.name, nameKey: key });
  }
  return filled;
};
