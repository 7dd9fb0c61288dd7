/**
 * The shared token buckets of rate limits across nodes (migrations/pg/0003_rate_buckets.sql):
 * one round trip leases tokens (and gives back unspent ones); keys/cluster-rate-limit.ts decides
 * when to ask.
 */
import { outward, type PostgresStore } from "./pg-store.ts";

/**
 * Leases from the shared buckets of `store`'s database: gives back `giveBack` tokens, then grants
 * up to `want` (the `Lease` that keys/cluster-rate-limit.ts asks for).
 */
export function pgLease(store: PostgresStore) {
  return async (bucket: string, perMinute: number, want: number, giveBack: number): Promise<{ granted: number; remaining: number }> => {
    // The database not there: the request is answered 503, as any other that needs it.
    const [row] = (await store.client`SELECT granted, remaining FROM docverify_rate_lease(${bucket}, ${perMinute}, ${want}, ${giveBack})`.catch((e: unknown) => Promise.reject(outward(e)))) as [
      { granted: number; remaining: number },
    ];
    return { granted: Number(row.granted), remaining: Number(row.remaining) };
  };
}

/**
 * Deletes buckets untouched for a minute: refilled from empty to full in that time, they carry no
 * information (as one node's sweep drops full buckets). Returns how many went.
 */
export async function sweepRateBuckets(store: PostgresStore): Promise<number> {
  const rows = (await store.client`DELETE FROM rate_buckets WHERE at < clock_timestamp() - interval '1 minute' RETURNING bucket`) as unknown[];
  return rows.length;
}
