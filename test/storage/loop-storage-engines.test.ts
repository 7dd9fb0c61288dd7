/**
 * The anchor loop's storage besides its journal (src/anchoring/loop/ports.ts), one contract suite
 * on both engines (storage/sqlite/loop-storage.ts, storage/postgres/loop-storage.ts): where
 * transaction ids resume, and the submit key's entry, stored once whoever races.
 */
import { describe, expect, test } from "bun:test";
import { anchoringDrivers } from "../support/drivers.ts";
import { q, type Store } from "../../src/storage/store.ts";
import { useStoreEngines } from "../support/store-engines.ts";

const { engines } = useStoreEngines();

/** Journals transactions with these ids and valid starts (ms), under one organisation. */
async function journal(store: Store, rows: readonly [string, number][]): Promise<void> {
  await store.write(function* (db, t) {
    yield* q(db.insert(t.organisations).values({ id: "org", name: "Org", createdAt: 0, systemKeyFingerprint: Buffer.alloc(32) }).onConflictDoNothing());
    for (const [transactionId, validStartMs] of rows) {
      yield* q(db.insert(t.ledgerTransactions).values({ transactionId, kind: "record_message", orgId: "org", validStartMs, validSeconds: 120, state: "anchored", nextAttemptAt: 0, createdAt: 0, updatedAt: 0 }));
    }
  });
}

for (const engine of engines) {
  describe(`${engine.name}: the anchor loop's storage`, () => {
    test("the newest ids: none in an empty journal, then every id with the greatest valid start", async () => {
      const store = await engine.open();
      const { transactionIds } = anchoringDrivers(store).loop;
      expect(await transactionIds.newestIds()).toEqual([]);
      await journal(store, [
        ["0.0.2@1.000000000", 1000],
        ["0.0.2@2.000000000", 2000],
        ["0.0.2@2.000500000", 2000],
      ]);
      expect((await transactionIds.newestIds()).sort()).toEqual(["0.0.2@2.000000000", "0.0.2@2.000500000"]);
      // SQLite answers at once: ids resume from the journal while the loop is made.
      if (engine.name === "SQLite") expect(Array.isArray(transactionIds.newestIds())).toBe(true);
    });

    test("a transaction id is looked up at once on SQLite; PostgreSQL has no such lookup", async () => {
      const store = await engine.open();
      const { exists } = anchoringDrivers(store).loop.transactionIds;
      if (engine.name === "PostgreSQL") return expect(exists).toBeNull();
      await journal(store, [["0.0.2@3.000000000", 3000]]);
      expect(exists!("0.0.2@3.000000000")).toBe(true);
      expect(exists!("0.0.2@3.000000001")).toBe(false);
    });

    test("the submit key's entry: none, then the first stored, never replaced", async () => {
      const store = await engine.open();
      const { submitKey } = anchoringDrivers(store).loop;
      expect(await submitKey.read()).toBeNull();
      expect(await submitKey.storeFirst("first")).toBe("first");
      expect(await submitKey.storeFirst("second")).toBe("first");
      expect(await submitKey.read()).toBe("first");
      if (engine.name === "SQLite") expect(submitKey.read()).toBe("first");
    });

    test("two connections storing the entry at once: both get the one stored", async () => {
      const [a, b] = await engine.openPair();
      const [x, y] = await Promise.all([anchoringDrivers(a).loop.submitKey.storeFirst("a"), anchoringDrivers(b).loop.submitKey.storeFirst("b")]);
      expect(x).toBe(y);
      expect(await anchoringDrivers(b).loop.submitKey.read()).toBe(x);
    });
  });
}
