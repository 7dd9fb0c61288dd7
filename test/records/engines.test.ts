/**
 * The records capability's ports (src/records/ports.ts) on both storage engines: one contract
 * suite per port, run on the embedded SQLite and a real PostgreSQL server with the drivers
 * storage/drivers.ts chooses. What each method's comment says it MUST do is what is
 * checked here.
 */
import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { createSigner } from "../../src/crypto/index.ts";
import { createOrganisations } from "../../src/keys/organisations.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { createRecords } from "../../src/records/service.ts";
import { createWriteQueue } from "../../src/records/write-queue.ts";
import { recordsDrivers } from "../support/drivers.ts";
import { isUniqueViolation, q, type Body } from "../../src/storage/store.ts";
import { useStoreEngines } from "../support/store-engines.ts";
import { numberedLedger } from "../support/numbered-ledger.ts";

const { engines } = useStoreEngines();

const T0 = Date.UTC(2026, 0, 15, 9, 30);

/** A `service_meta` row as a write operation. */
const putMeta =
  (key: string, value: string): Body<string> =>
  function* (tx, t) {
    yield* q(tx.insert(t.serviceMeta).values({ key, value }));
    return value;
  };

/** The value of a `service_meta` row, or undefined: a read operation. */
const getMeta =
  (key: string): Body<string | undefined> =>
  function* (db, t) {
    const [row] = yield* q(db.select({ value: t.serviceMeta.value }).from(t.serviceMeta).where(eq(t.serviceMeta.key, key)));
    return row?.value;
  };

class Refused extends Error {
  constructor(readonly original: unknown) {
    super("refused");
  }
}
const refused = (e: unknown) => new Refused(e);

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error("expected a rejection");
}


for (const engine of engines) {
  const synchronous = engine.name === "SQLite";

  describe(`${engine.name}: RecordWrites`, () => {
    test("resolves with the operation's result once it is committed; never synchronously", async () => {
      const store = await engine.open();
      const { writes } = recordsDrivers(store);
      const answer = writes.write(putMeta("a", "1"), refused);
      expect(answer).toBeInstanceOf(Promise);
      expect(await answer).toBe("1");
      expect(await store.read(getMeta("a"))).toBe("1");
    });

    test("an operation that throws rejects with refused(error), and nothing of it is stored; the others still commit", async () => {
      const store = await engine.open();
      const { writes } = recordsDrivers(store);
      const boom = new Error("boom");
      const [ok, failed] = await Promise.all([
        writes.write(putMeta("kept", "1"), refused),
        rejection(
          writes.write(function* (tx, t) {
            yield* putMeta("undone", "2")(tx, t);
            throw boom;
          }, refused),
        ),
      ]);
      expect(ok).toBe("1");
      expect(failed).toBeInstanceOf(Refused);
      expect((failed as Refused).original).toBe(boom);
      expect(await store.read(getMeta("kept"))).toBe("1");
      expect(await store.read(getMeta("undone"))).toBeUndefined();
    });

    test("a unique index refusing a row: refused(the database's own error), nothing written", async () => {
      const store = await engine.open();
      const { writes } = recordsDrivers(store);
      await writes.write(putMeta("k", "first"), refused);
      const failed = await rejection(writes.write(putMeta("k", "second"), refused));
      expect(failed).toBeInstanceOf(Refused);
      expect(isUniqueViolation((failed as Refused).original)).toBe(true);
      expect(await store.read(getMeta("k"))).toBe("first");
    });

    test("many writes at once all commit, each one whole", async () => {
      const store = await engine.open();
      const { writes } = recordsDrivers(store);
      const keys = Array.from({ length: 20 }, (_, i) => `many-${i}`);
      expect(await Promise.all(keys.map((k) => writes.write(putMeta(k, k), refused)))).toEqual(keys);
      for (const k of keys) expect(await store.read(getMeta(k))).toBe(k);
    });
  });

  describe(`${engine.name}: RecordKeyStore`, () => {
    test(`reads and writes${synchronous ? ", synchronously" : ""}`, async () => {
      const store = await engine.open();
      const { keys } = recordsDrivers(store);
      const written = keys.write(putMeta("seal", "abc"));
      expect(written instanceof Promise).toBe(!synchronous);
      expect(await written).toBe("abc");
      const read = keys.read(getMeta("seal"));
      expect(read instanceof Promise).toBe(!synchronous);
      expect(await read).toBe("abc");
    });

    test("a write is all or nothing, failing with the database's own error", async () => {
      const store = await engine.open();
      const { keys } = recordsDrivers(store);
      await keys.write(putMeta("taken", "1"));
      let failure: unknown;
      try {
        await keys.write(function* (tx, t) {
          yield* putMeta("fresh", "2")(tx, t);
          yield* putMeta("taken", "3")(tx, t);
        });
      } catch (e) {
        failure = e;
      }
      expect(isUniqueViolation(failure)).toBe(true);
      expect(await keys.read(getMeta("fresh"))).toBeUndefined();
      expect(await keys.read(getMeta("taken"))).toBe("1");
    });
  });

  describe(`${engine.name}: RecordCountReads`, () => {
    test("every state counted, 0 when none; the counts follow the records", async () => {
      const store = await engine.open();
      const { counts, writes } = recordsDrivers(store);
      expect(counts.refreshMs === 0).toBe(synchronous);
      const empty = counts.count();
      expect(empty instanceof Promise).toBe(!synchronous);
      expect(await empty).toEqual({ pending: 0, accepted: 0, anchored: 0, abandoned: 0 });

      const clock = manualClock(T0);
      const signer = createSigner({ masterKey: new Uint8Array(32).fill(7), workers: 0 });
      const org = await createOrganisations({ store, signer, clock }).create({ name: "Counted Org", addon: true, apiAccess: true }, "alice");
      await store.write((tx, t) => q(tx.update(t.organisations).set({ topicId: "0.0.1234" }).where(eq(t.organisations.id, org.id))));
      const records = createRecords({ store, signer, clock, ledger: numberedLedger(), publicUrl: "https://verify.example.org", writes: createWriteQueue(writes) });
      const ids: string[] = [];
      for (const c of ["a", "b", "c", "d"]) ids.push((await records.create(org.id, { docHash: `sha256:${c.repeat(64)}`, filename: undefined })).record.recordId);
      const setState = (id: string, anchorState: "accepted" | "anchored" | "abandoned") =>
        store.write((tx, t) => q(tx.update(t.records).set({ anchorState }).where(eq(t.records.id, id))));
      await setState(ids[1]!, "accepted");
      await setState(ids[2]!, "anchored");
      await setState(ids[3]!, "abandoned");
      expect(await counts.count()).toEqual({ pending: 1, accepted: 1, anchored: 1, abandoned: 1 });
    });
  });
}
