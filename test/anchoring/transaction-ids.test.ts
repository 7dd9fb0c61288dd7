/**
 * Transaction ids when the clock steps (anchoring/transaction-ids.ts): they follow the clock, one
 * millisecond back, so the nodes never refuse them as not yet valid after a step back; and no id
 * is ever handed out twice, on SQLite (the journal is looked up) or without a journal to read
 * (PostgreSQL: the upper half of each millisecond).
 */
import { describe, expect, test } from "bun:test";
import { CLOCK_STEP_TOLERANCE_MS, createTransactionIds } from "../../src/anchoring/transaction-ids.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { openDatabase, type Db } from "../../src/storage/db.ts";
import { migrate } from "../../src/storage/migrate.ts";
import { sqliteLoopStorage } from "../../src/storage/sqlite/loop-storage.ts";
import { sqliteStore } from "../../src/storage/store.ts";

/** The journal as a source of ids reads it (storage/sqlite/loop-storage.ts). */
const idJournal = (db: Db) => sqliteLoopStorage(sqliteStore(db)).transactionIds;

const nsOf = (id: string) => {
  const m = /@(\d+)\.(\d{9})$/.exec(id)!;
  return BigInt(m[1]!) * 1_000_000_000n + BigInt(m[2]!);
};
const HOUR = 3_600_000;

function journal(): Db {
  const db = openDatabase({ path: ":memory:" });
  migrate(db);
  db.$client.run("PRAGMA foreign_keys = OFF"); // rows without their organisation: only ids matter here
  return db;
}

/** Records `id` in the journal as the anchor loop would (only the columns the generator reads matter). */
function remember(db: Db, id: { transactionId: string; validStartMs: number; validSeconds: number }): void {
  db.$client
    .query(
      `INSERT INTO ledger_transactions (transaction_id, kind, org_id, valid_start_ms, valid_seconds, state, attempts, next_attempt_at, created_at, updated_at)
       VALUES (?, 'record_message', 'org', ?, ?, 'anchored', 1, 0, 0, 0)`,
    )
    .run(id.transactionId, id.validStartMs, id.validSeconds);
}

describe("transaction ids when the clock steps", () => {
  test("a step back into the stretch where ids were made: ids follow the clock at once, one millisecond back; none repeats one in the journal, several ids a millisecond", () => {
    const db = journal();
    const start = Date.UTC(2026, 11, 1, 12);
    const clock = manualClock(start);
    const ids = createTransactionIds({ journal: idJournal(db), clock, operator: "0.0.2", validSeconds: 120, backdateMs: 0 });
    const made = new Set<string>();
    const run = () => {
      for (let i = 0; i < 4000; i++) {
        const id = ids();
        expect(id.validStartMs).toBeLessThan(clock.now());
        expect(id.validStartMs).toBeGreaterThanOrEqual(clock.now() - 2);
        expect(made.has(id.transactionId)).toBe(false);
        remember(db, id); // the primary key refuses a repeat too
        made.add(id.transactionId);
        clock.advance(i % 3 === 0 ? 0 : 1);
      }
    };
    run();
    clock.set(start); // about 2.7 s back: over every id just made
    run();
    clock.set(start + 1_000); // and back again, into both
    run();
    expect(made.size).toBe(12_000);
  });

  test("an id the journal holds where a step back lands is passed over", () => {
    const db = journal();
    const start = Date.UTC(2026, 11, 1, 12);
    const clock = manualClock(start);
    const ids = createTransactionIds({ journal: idJournal(db), clock, operator: "0.0.2", validSeconds: 120, backdateMs: 0 });
    remember(db, ids());
    clock.set(start - 10_000);
    // The id it would hand out: one millisecond back, the upper half of that millisecond.
    const landing = BigInt(start - 10_000 - 1) * 1_000_000n + 500_000n;
    const id = `0.0.2@${landing / 1_000_000_000n}.${(landing % 1_000_000_000n).toString().padStart(9, "0")}`;
    remember(db, { transactionId: id, validStartMs: start - 10_001, validSeconds: 120 });
    const next = ids();
    expect(next.transactionId).not.toBe(id);
    expect(nsOf(next.transactionId)).toBe(landing + 1n);
  });

  test("steps back within the tolerance keep ids strictly increasing", () => {
    const clock = manualClock(Date.UTC(2026, 11, 1, 12));
    const ids = createTransactionIds({ journal: idJournal(journal()), clock, operator: "0.0.2", validSeconds: 120, backdateMs: 0 });
    let last = nsOf(ids().transactionId);
    for (const step of [-1, -500, -(CLOCK_STEP_TOLERANCE_MS - 2)]) {
      clock.advance(step);
      const ns = nsOf(ids().transactionId);
      expect(ns).toBeGreaterThan(last);
      last = ns;
      clock.advance(-step);
    }
  });

  test("a restart with the journal's newest id ahead of the clock: ids follow the clock, in the upper half of their millisecond, none a row", () => {
    const db = journal();
    const clock = manualClock(Date.UTC(2026, 11, 1, 12));
    const before = createTransactionIds({ journal: idJournal(db), clock, operator: "0.0.2", validSeconds: 120, backdateMs: 0 });
    for (let i = 0; i < 100; i++) {
      remember(db, before());
      clock.advance(1);
    }
    clock.advance(-HOUR);
    const after = createTransactionIds({ journal: idJournal(db), clock, operator: "0.0.2", validSeconds: 120, backdateMs: 0 })();
    expect(after.validStartMs).toBe(clock.now() - 1);
    expect(nsOf(after.transactionId) % 1_000_000n).toBeGreaterThanOrEqual(500_000n);
  });

  test("a step forward: ids follow it, and a step back after it is followed too", () => {
    const clock = manualClock(Date.UTC(2026, 11, 1, 12));
    const ids = createTransactionIds({ journal: idJournal(journal()), clock, operator: "0.0.2", validSeconds: 120, backdateMs: 0 });
    ids();
    clock.advance(2 * HOUR);
    expect(ids().validStartMs).toBe(clock.now() - 1);
    clock.advance(-2 * HOUR);
    expect(ids().validStartMs).toBe(clock.now() - 1);
  });

  test("without a journal to read (PostgreSQL), in a lane: after a step back, ids are in the lane and the upper half of their millisecond, distinct from every id made on time", () => {
    const clock = manualClock(Date.UTC(2026, 11, 1, 12));
    const lane = { index: 3, lanes: 16 };
    const ids = createTransactionIds({ clock, operator: "0.0.2", validSeconds: 120, backdateMs: 0, lastValidStartNs: 0n, lane });
    const onTime = new Set<string>();
    for (let i = 0; i < 3000; i++) {
      const id = ids();
      expect(nsOf(id.transactionId) % 1_000_000n).toBeLessThan(500_000n);
      onTime.add(id.transactionId);
      if (i % 2 === 0) clock.advance(1);
    }
    clock.set(Date.UTC(2026, 11, 1, 12)); // 1.5 s back: into the stretch those ids cover
    const seen = new Set<string>();
    for (let i = 0; i < 3000; i++) {
      const id = ids();
      const ns = nsOf(id.transactionId);
      expect(ns % 16n).toBe(3n);
      expect(onTime.has(id.transactionId)).toBe(false);
      expect(seen.has(id.transactionId)).toBe(false);
      seen.add(id.transactionId);
      expect(id.validStartMs).toBeLessThan(clock.now());
      if (i % 2 === 0) clock.advance(1);
    }
  });
});
