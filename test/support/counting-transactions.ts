/**
 * `db` with a `$client` that counts the transactions begun outside any other (the group commits);
 * the savepoints nested in them are not counted. For tests of what shares one transaction.
 */
import type { Db } from "../../src/storage/db.ts";

export function countingTransactions(real: Db): { db: Db; counts: { top: number } } {
  const counts = { top: 0 };
  const client = new Proxy(real.$client, {
    get(target, prop) {
      if (prop !== "transaction") {
        // The real object as `this`: bun:sqlite's Database keeps private fields.
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === "function" ? value.bind(target) : value;
      }
      return (fn: () => unknown) => {
        const tx = target.transaction(fn);
        const begin = (run: () => unknown) => {
          if (!target.inTransaction) counts.top++;
          return run();
        };
        return Object.assign(() => begin(() => tx()), { immediate: () => begin(() => tx.immediate()) });
      };
    },
  });
  return { db: new Proxy(real, { get: (t, p, r) => (p === "$client" ? client : Reflect.get(t, p, r)) }), counts };
}
