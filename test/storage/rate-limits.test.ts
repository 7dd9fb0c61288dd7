/**
 * Rate limits across nodes (docs/storage.md "Rate limits across nodes"): token buckets shared
 * through the database, leased a few tokens at a time (src/keys/cluster-rate-limit.ts,
 * src/storage/pg-rate.ts). First the limiter's rules against an in-memory bucket with a manual
 * clock, then three nodes on a real PostgreSQL server: the limit observed across them within ±10 %
 * of the setting, with far fewer round trips than requests.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chunkOf, createClusterRateLimiter, type Lease } from "../../src/keys/cluster-rate-limit.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { migratePostgres } from "../../src/storage/pg-migrate.ts";
import { pgLease, sweepRateBuckets } from "../../src/storage/pg-rate.ts";
import { postgresStore, type PostgresStore } from "../../src/storage/pg-store.ts";
import { sharedPostgres, type Postgres } from "../support/postgres.ts";

/** The database's bucket, in memory: the same arithmetic as docverify_rate_lease. */
function memoryBuckets(clock: { now(): number }) {
  const buckets = new Map<string, { perMinute: number; tokens: number; at: number }>();
  let calls = 0;
  const lease: Lease = async (bucket, perMinute, want, giveBack) => {
    calls++;
    const now = clock.now();
    let b = buckets.get(bucket);
    if (b === undefined || b.perMinute !== perMinute) b = { perMinute, tokens: perMinute, at: now };
    let level = Math.min(perMinute, b.tokens + (Math.max(0, now - b.at) * perMinute) / 60_000);
    level = Math.min(perMinute, level + Math.max(0, giveBack));
    const granted = Math.max(0, Math.min(want, Math.floor(level)));
    buckets.set(bucket, { perMinute, tokens: level - granted, at: now });
    return { granted, remaining: level - granted };
  };
  return { lease, calls: () => calls };
}

const limiters: { stop(): Promise<void> }[] = [];
afterAll(async () => {
  for (const l of limiters) await l.stop();
});
function limiter(lease: Lease, clock: { now(): number }, leaseMs = 1_000) {
  const l = createClusterRateLimiter({ lease, clock, leaseMs });
  limiters.push(l);
  return l;
}

describe("the limiter's rules (in-memory bucket)", () => {
  test("one node: the whole bucket at once, then refusals answered locally until a token has refilled", async () => {
    const clock = manualClock();
    const mem = memoryBuckets(clock);
    const node = limiter(mem.lease, clock);
    const key = { bucket: "key:k1", perMinute: 600 };
    let allowed = 0;
    for (let i = 0; i < 700; i++) if ((await node.take([key])).allowed) allowed++;
    expect(allowed).toBe(600);
    // About one round trip per chunk, not per request.
    expect(mem.calls()).toBeLessThanOrEqual(Math.ceil(600 / chunkOf(600)) + 2);
    const calls = mem.calls();
    const refused = await node.take([key]);
    expect(refused).toMatchObject({ allowed: false, limit: 600, remaining: 0, retryAfterSeconds: 1, bucket: "key:k1" });
    for (let i = 0; i < 100; i++) expect((await node.take([key])).allowed).toBe(false);
    expect(mem.calls()).toBe(calls); // refused without asking again
    clock.advance(100); // one token a tenth of a second
    expect((await node.take([key])).allowed).toBe(true);
    expect((await node.take([key])).allowed).toBe(false);
  });

  test("three nodes share one bucket: together they never allow more than one node would", async () => {
    const clock = manualClock();
    const mem = memoryBuckets(clock);
    const nodes = [0, 1, 2].map(() => limiter(mem.lease, clock));
    const key = { bucket: "key:shared", perMinute: 300 };
    let allowed = 0;
    for (let i = 0; i < 1200; i++) if ((await nodes[i % 3]!.take([key])).allowed) allowed++;
    expect(allowed).toBe(300);
    // What a node leased and did not spend goes back, and another node can spend it.
    clock.advance(1_000);
    await Promise.all(nodes.map((n) => n.giveBack()));
    let later = 0;
    for (let i = 0; i < 100; i++) if ((await nodes[0]!.take([key])).allowed) later++;
    expect(later).toBeGreaterThanOrEqual(5); // the 5 refilled in that second, and what came back
    expect(later).toBeLessThanOrEqual(5 + 2 * chunkOf(300));
  });

  test("concurrent requests on one node: exactly the bucket, no token spent twice", async () => {
    const clock = manualClock();
    const mem = memoryBuckets(clock);
    const node = limiter(mem.lease, clock);
    const key = { bucket: "ip:203.0.113.9", perMinute: 10 };
    const results = await Promise.all(Array.from({ length: 50 }, () => node.take([key])));
    expect(results.filter((r) => r.allowed)).toHaveLength(10);
  });

  test("one token from every bucket or from none: a refusal by the organisation's bucket spends none of the key's", async () => {
    const clock = manualClock();
    const mem = memoryBuckets(clock);
    const node = limiter(mem.lease, clock);
    const org = { bucket: "org:o1", perMinute: 2 };
    const key = { bucket: "key:k2", perMinute: 600 };
    expect((await node.take([key, org])).allowed).toBe(true);
    expect((await node.take([key, org])).allowed).toBe(true);
    const refused = await node.take([key, org]);
    expect(refused).toMatchObject({ allowed: false, bucket: "org:o1", limit: 2, retryAfterSeconds: 30 });
    // The key's bucket was charged only for the two allowed requests.
    let keyOnly = 0;
    for (let i = 0; i < 700; i++) if ((await node.take([key])).allowed) keyOnly++;
    expect(keyOnly).toBe(598);
  });
});

describe("three nodes on PostgreSQL", () => {
  let pg: Postgres;
  const stores: PostgresStore[] = [];
  beforeAll(async () => {
    pg = await sharedPostgres();
  }, 120_000);
  afterAll(async () => {
    for (const l of limiters.splice(0)) await l.stop();
    for (const s of stores) await s.close();
    await pg?.destroy();
  });

  test("a key's limit observed across three nodes stays within ±10 % of the setting, without a round trip per request", async () => {
    const url = await pg.createDatabase("rate");
    for (let i = 0; i < 3; i++) stores.push(postgresStore(url, { max: 2 }));
    await migratePostgres(stores[0]!);
    const clock = { now: () => Date.now() };
    let calls = 0;
    const nodes = stores.map((s) => {
      const lease = pgLease(s);
      return limiter((...a) => (calls++, lease(...a)), clock, 250);
    });
    const key = { bucket: "key:k_cluster", perMinute: 120 };
    const started = Date.now();
    const runMs = 3_000;
    let allowed = 0;
    let attempts = 0;
    // Each node takes requests as fast as it can for the whole window.
    await Promise.all(
      nodes.map(async (node) => {
        while (Date.now() - started < runMs) {
          attempts++;
          if ((await node.take([key])).allowed) allowed++;
          if (attempts % 50 === 0) await Bun.sleep(1);
        }
      }),
    );
    const elapsedMs = Date.now() - started;
    const setting = key.perMinute + (key.perMinute * elapsedMs) / 60_000; // the full bucket, then its refill
    console.log(`three nodes: ${allowed} allowed of ${attempts} in ${elapsedMs} ms; one node's limit ${setting.toFixed(1)}; ${calls} round trips`);
    expect(allowed).toBeLessThanOrEqual(setting * 1.1);
    expect(allowed).toBeGreaterThanOrEqual(setting * 0.9);
    expect(calls).toBeLessThan(attempts / 10);
  }, 30_000);

  test("buckets untouched for a minute are swept; a recent one stays", async () => {
    const url = await pg.createDatabase("sweep");
    const store = postgresStore(url, { max: 1 });
    stores.push(store);
    await migratePostgres(store);
    const lease = pgLease(store);
    await lease("ip:old", 60, 1, 0);
    await lease("ip:new", 60, 1, 0);
    pg.psql("UPDATE rate_buckets SET at = at - interval '61 seconds' WHERE bucket = 'ip:old'", url.split("/").pop()!);
    expect(await sweepRateBuckets(store)).toBe(1);
    expect(pg.psql("SELECT string_agg(bucket, ',') FROM rate_buckets", url.split("/").pop()!)).toBe("ip:new");
  });
});
