/**
 * The verification log's storage port (src/verification/log/ports.ts `LogStore`), one contract
 * suite run on every engine (test/support/store-engines.ts) through its driver
 * (src/storage/drivers.ts): each MUST of the port asserted on SQLite and PostgreSQL alike.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { createSigner } from "../../src/crypto/index.ts";
import { createOrganisations } from "../../src/keys/organisations.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { storageFault } from "../../src/lib/storage-faults.ts";
import { logDrivers } from "../support/drivers.ts";
import { postgresStore } from "../../src/storage/pg-store.ts";
import type { SqliteStore, Store } from "../../src/storage/store.ts";
import { createIdGenerator, idCeiling, idFloor } from "../../src/verification/log/ids.ts";
import type { LogRow, LogStore } from "../../src/verification/log/ports.ts";
import { useStoreEngines } from "../support/store-engines.ts";

const { engines, opened } = useStoreEngines();

const hash = (label: string) => `sha256:${new Bun.CryptoHasher("sha256").update(label).digest("hex")}`;
const T0 = Date.UTC(2026, 10, 24, 12);

/** Settles a port's answer, whether it came at once, as a promise, or as a synchronous throw. */
async function outcome<T>(run: () => T | Promise<T>): Promise<{ value?: T; error?: unknown }> {
  try {
    return { value: await run() };
  } catch (error) {
    return { error };
  }
}

const [sqlite, postgres] = engines;
/** Each driver: SQLite appending on the calling thread, SQLite appending on its writer thread, PostgreSQL. */
const DRIVERS = [
  { name: "SQLite", engine: sqlite, port: (s: Store) => logDrivers(s).log },
  { name: "SQLite, writer thread", engine: sqlite, port: (s: Store) => logDrivers(s as SqliteStore, { writerThread: { path: (s as SqliteStore).db.$client.filename } }).log },
  { name: "PostgreSQL", engine: postgres, port: (s: Store) => logDrivers(s).log },
];

for (const { name, engine, port: driver } of DRIVERS) {
  describe(`${name}: LogStore`, () => {
    let store: Store;
    let log: LogStore;
    let orgId: string;
    const clock = manualClock(T0);
    const nextId = createIdGenerator(clock);
    /** Ten rows, one per second from T0, every other one "no_record", hashes "a" and "b" alternating. */
    const rows: LogRow[] = [];
    const made = (over: Partial<LogRow> = {}): LogRow => {
      const { id, ms } = nextId();
      return { id, org_id: orgId, environment: "live", key_id: "key-1", verdict: "verified_org", doc_hash: hash("a"), reference: null, verified_at_ms: ms, retry_after_seconds: null, ...over };
    };

    beforeAll(async () => {
      store = await engine.open();
      orgId = (await createOrganisations({ store, signer: createSigner({ masterKey: new Uint8Array(32).fill(5), workers: 0 }), clock }).create({ name: "Log Org" }, "alice")).id;
      log = driver(store);
    });

    test("newestId is null on an empty log", async () => {
      expect(await log.newestId()).toBeNull();
    });

    test("append stores every row of a batch, committed when it answers; newestId and row read them back", async () => {
      for (let i = 0; i < 10; i++) {
        rows.push(made({ verdict: i % 2 === 0 ? "verified_org" : "no_record", doc_hash: hash(i % 2 === 0 ? "a" : "b"), reference: `ref ${i}`, ...(i === 3 ? { verdict: "pending_anchor", retry_after_seconds: 4 } : {}) }));
        clock.advance(1000);
      }
      await log.append(rows.slice(0, 4));
      await log.append(rows.slice(4));
      expect(await log.newestId()).toBe(rows[9]!.id);
      expect(await log.row(rows[3]!.id, orgId, "live")).toEqual(rows[3]!);
      expect(await log.row(rows[3]!.id, orgId, "test")).toBeUndefined();
      expect(await log.row(rows[3]!.id, "another-org", "live")).toBeUndefined();
    });

    test("append is all or nothing: a batch with one refused row stores none of it, and says so", async () => {
      const good = made();
      const bad = made({ org_id: "no-such-organisation" }); // foreign key
      const { error } = await outcome(() => log.append([good, bad]));
      expect(error).toBeDefined();
      expect(await log.row(good.id, orgId, "live")).toBeUndefined();
      expect(await log.newestId()).toBe(rows[9]!.id);
    });

    test("page: newest first, at most `rows`, then the rows before a given id, in order, to the end", async () => {
      const all = [...rows].reverse().map((r) => r.id);
      const seen: string[] = [];
      let before: string | undefined;
      for (;;) {
        const found = await log.page({ orgId, environment: "live", rows: 3, ...(before === undefined ? {} : { before }) });
        seen.push(...found.map((r) => r.id));
        if (found.length < 3) break;
        before = found[found.length - 1]!.id;
      }
      expect(seen).toEqual(all);
      const first = await log.page({ orgId, environment: "live", rows: 1 });
      const { key_id: _k, retry_after_seconds: _r, ...summary } = rows[9]!;
      expect(first).toEqual([summary]);
      expect(await log.page({ orgId, environment: "test", rows: 10 })).toEqual([]);
    });

    test("page: each filter, and the time bounds inclusive", async () => {
      const ids = async (q: Partial<Parameters<LogStore["page"]>[0]>) => (await log.page({ orgId, environment: "live", rows: 100, ...q })).map((r) => r.id);
      const newestFirst = [...rows].reverse();
      expect(await ids({ docHash: hash("b") })).toEqual(newestFirst.filter((r) => r.doc_hash === hash("b")).map((r) => r.id));
      expect(await ids({ verdict: "no_record" })).toEqual(newestFirst.filter((r) => r.verdict === "no_record").map((r) => r.id));
      const from = rows[2]!.verified_at_ms;
      const to = rows[5]!.verified_at_ms;
      expect(await ids({ from: { id: idFloor(from), ms: from }, to: { id: idCeiling(to), ms: to } })).toEqual([rows[5]!.id, rows[4]!.id, rows[3]!.id, rows[2]!.id]);
      expect(await ids({ docHash: hash("a"), from: { id: idFloor(from), ms: from }, before: rows[8]!.id })).toEqual([rows[6]!.id, rows[4]!.id, rows[2]!.id]);
    });

    test("deleteExpired deletes only rows below the floor, oldest first, at most `limit` a batch", async () => {
      const floor = idFloor(rows[5]!.verified_at_ms);
      expect(await log.deleteExpired(floor, 2)).toBe(2);
      expect(await log.row(rows[0]!.id, orgId, "live")).toBeUndefined();
      expect(await log.row(rows[1]!.id, orgId, "live")).toBeUndefined();
      expect(await log.row(rows[2]!.id, orgId, "live")).toBeDefined();
      expect(await log.deleteExpired(floor, 2)).toBe(2);
      expect(await log.deleteExpired(floor, 2)).toBe(1);
      expect(await log.deleteExpired(floor, 2)).toBe(0);
      expect((await log.page({ orgId, environment: "live", rows: 100 })).map((r) => r.id)).toEqual([...rows.slice(5)].reverse().map((r) => r.id));
    });

    test("reads are answered at once, with pages kept under a data version, where the engine can (SQLite); not on PostgreSQL", async () => {
      if (engine.name === "SQLite") {
        expect(log.kept).not.toBeNull();
        const before = log.kept!.dataVersion();
        expect(log.kept!.pageIds({ orgId, environment: "live", rows: 2 })).toEqual([rows[9]!.id, rows[8]!.id]);
        expect(Array.isArray(log.page({ orgId, environment: "live", rows: 2 }))).toBe(true);
        await log.append([made()]);
        expect(log.kept!.dataVersion()).not.toBe(before);
      } else {
        expect(log.kept).toBeNull();
        expect(log.page({ orgId, environment: "live", rows: 2 })).toBeInstanceOf(Promise);
      }
    });

    test("faults are classified: another connection holding the write lock is busy (SQLite); a database not there is unavailable (PostgreSQL)", async () => {
      if (engine.name === "SQLite") {
        const [a, b] = (await engine.openPair()) as [SqliteStore, SqliteStore];
        const other = b.db.$client;
        a.db.$client.run("PRAGMA busy_timeout = 50");
        const port = driver(a);
        other.run("BEGIN IMMEDIATE");
        try {
          // Retention's batch never waits for the lock: null, nothing deleted.
          expect(port.deleteExpired(idFloor(T0 + 60_000), 10)).toBeNull();
          const { error } = await outcome(() => port.append([made({ org_id: "any" })]));
          expect(storageFault(error)).toBe("busy");
        } finally {
          other.run("ROLLBACK");
        }
        expect(port.deleteExpired(idFloor(T0), 10)).toBe(0);
        await port.close();
      } else {
        const gone = postgresStore("postgres://docverify@127.0.0.1:1/none");
        opened.push(gone);
        const port = logDrivers(gone).log;
        for (const run of [(): unknown => port.append([made()]), (): unknown => port.newestId(), (): unknown => port.deleteExpired(idFloor(T0), 10), (): unknown => port.page({ orgId, environment: "live", rows: 1 })]) {
          const { error } = await outcome(run);
          expect(storageFault(error)).toBe("unavailable");
        }
      }
    }, 20_000);

    test("close settles and ends what the driver started", async () => {
      await log.close();
      log.releaseMemory();
    });
  });
}
