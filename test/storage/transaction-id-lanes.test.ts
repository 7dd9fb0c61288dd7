/**
 * Transaction ids across nodes (docs/storage.md "Transaction ids across nodes"): every node pays
 * with the same operator account, so no two nodes may hand out one transaction id. Each node holds
 * a lane (an advisory lock per lane on a real PostgreSQL server) and hands out only valid starts in
 * its lane.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTransactionIds } from "../../src/anchoring/transaction-ids.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { openDatabase } from "../../src/storage/db.ts";
import { migrate } from "../../src/storage/migrate.ts";
import { sqliteLoopStorage } from "../../src/storage/sqlite/loop-storage.ts";
import { sqliteStore } from "../../src/storage/store.ts";
import { claimLane, LANES, type Lane } from "../../src/storage/pg-cluster.ts";
import { postgresStore, type PostgresStore } from "../../src/storage/pg-store.ts";
import { sharedPostgres, type Postgres } from "../support/postgres.ts";
import { waitFor } from "../support/wait.ts";

const nsOf = (id: string) => {
  const m = /@(\d+)\.(\d{9})$/.exec(id)!;
  return BigInt(m[1]!) * 1_000_000_000n + BigInt(m[2]!);
};

/** A new journal, as a source of ids reads it. */
function journal() {
  const db = openDatabase({ path: ":memory:" });
  migrate(db);
  return sqliteLoopStorage(sqliteStore(db)).transactionIds;
}

describe("lanes in one process", () => {
  test("every id is in the lane, strictly increasing, never in the ledger's future", () => {
    const clock = manualClock(Date.UTC(2026, 10, 25, 9));
    const ids = createTransactionIds({ journal: journal(), clock, operator: "0.0.2", validSeconds: 120, backdateMs: 0, lane: { index: 7, lanes: 1000 } });
    let last = 0n;
    for (let i = 0; i < 5000; i++) {
      const { transactionId, validStartMs } = ids();
      const ns = nsOf(transactionId);
      expect(ns % 1000n).toBe(7n);
      expect(ns).toBeGreaterThan(last);
      expect(validStartMs).toBeLessThan(clock.now());
      last = ns;
      if (i % 1000 === 0) clock.advance(1);
    }
  });

  test("a bad lane is refused when the source is made; a lane lost refuses every id with 503", () => {
    const clock = manualClock();
    for (const lane of [{ index: -1, lanes: 10 }, { index: 10, lanes: 10 }, { index: 0, lanes: 0 }, { index: 0.5, lanes: 10 }]) {
      expect(() => createTransactionIds({ journal: journal(), clock, operator: "0.0.2", validSeconds: 120, backdateMs: 0, lane })).toThrow(/lane must be/);
    }
    let held = true;
    const ids = createTransactionIds({ journal: journal(), clock, operator: "0.0.2", validSeconds: 120, backdateMs: 0, lane: { index: 1, lanes: 10, held: () => held } });
    expect(ids().transactionId).toMatch(/^0\.0\.2@\d+\.\d{8}1$/);
    held = false;
    expect(() => ids()).toThrow(expect.objectContaining({ code: "SERVICE_UNAVAILABLE", retryAfterSeconds: 1 }));
  });
});

describe("lanes claimed on PostgreSQL", () => {
  let pg: Postgres;
  const stores: PostgresStore[] = [];
  const lanes: Lane[] = [];
  beforeAll(async () => {
    pg = await sharedPostgres();
  }, 120_000);
  afterAll(async () => {
    for (const l of lanes) await l.release();
    for (const s of stores) await s.close();
    await pg?.destroy();
  });
  const store = (url: string) => {
    const s = postgresStore(url, { max: 2 });
    stores.push(s);
    return s;
  };

  test("three nodes claim three different lanes; a released lane is claimed again; their ids never meet", async () => {
    const url = await pg.createDatabase("lanes");
    const claimed = await Promise.all([0, 1, 2].map(() => claimLane(store(url))));
    lanes.push(...claimed);
    expect(new Set(claimed.map((l) => l.index)).size).toBe(3);
    expect(claimed.every((l) => l.lanes === LANES && l.held())).toBe(true);
    // Three nodes handing out ids in the same milliseconds, from the same clock.
    const clock = manualClock(Date.UTC(2026, 10, 25, 9));
    const sources = claimed.map((lane) => createTransactionIds({ journal: journal(), clock, operator: "0.0.2", validSeconds: 120, backdateMs: 0, lane }));
    const seen = new Set<string>();
    for (let i = 0; i < 3000; i++) for (const next of sources) seen.add(next().transactionId);
    expect(seen.size).toBe(9000);
    // A node that stops gives its lane back; the next node takes it.
    const freed = claimed[1]!.index;
    await claimed[1]!.release();
    expect(claimed[1]!.held()).toBe(false);
    const next = await claimLane(store(url));
    lanes.push(next);
    expect(next.index).toBe(freed);
  });

  test("a lane whose connection is lost is no longer held, and its ids are refused", async () => {
    const url = await pg.createDatabase("lost");
    const lane = await claimLane(store(url));
    lanes.push(lane);
    const ids = createTransactionIds({ journal: journal(), clock: manualClock(), operator: "0.0.2", validSeconds: 120, backdateMs: 0, lane });
    expect(() => ids()).not.toThrow();
    pg.psql(`SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`, url.split("/").pop()!);
    await waitFor("the lost lane to be noticed", () => (lane.held() ? null : true), 5_000);
    expect(() => ids()).toThrow(expect.objectContaining({ code: "SERVICE_UNAVAILABLE" }));
  });
});
