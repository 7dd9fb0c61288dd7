/**
 * What only the anchor journal on PostgreSQL has (storage/postgres/journal.ts), against a real
 * server: the fencing that makes a node that lost the lead change nothing (docs/storage.md "The
 * anchor loop on PostgreSQL"), changes racing over several connections, one fenced transaction per
 * group, the leader's reported figure, and the loop's storage (app/postgres.ts postgresAnchorStorage). The
 * journal's contract, on both engines, is journal-engines.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { postgresAnchorStorage } from "../../src/app/postgres.ts";
import { journalRules } from "../../src/anchoring/journal/rules.ts";
import { NotLeadingError, postgresJournal } from "../../src/storage/postgres/journal.ts";
import { pendingMessage, type LedgerTransactionRow } from "../../src/anchoring/queue.ts";
import { createTransactionIds } from "../../src/anchoring/transaction-ids.ts";
import { createSigner } from "../../src/crypto/index.ts";
import { createOrganisations } from "../../src/keys/organisations.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { DeposedError } from "../../src/storage/pg-cluster.ts";
import { migratePostgres } from "../../src/storage/pg-migrate.ts";
import { postgresStore, type PostgresStore } from "../../src/storage/pg-store.ts";
import { q } from "../../src/storage/store.ts";
import { cleanup } from "../support/env.ts";
import { sharedPostgres, type Postgres } from "../support/postgres.ts";

let pg: Postgres;
const stores: PostgresStore[] = [];
beforeAll(async () => {
  pg = await sharedPostgres();
}, 120_000);
afterAll(async () => {
  for (const s of stores) await s.close();
  await pg?.destroy();
  cleanup();
});

const clock = manualClock(Date.UTC(2026, 10, 25, 9));
const signer = createSigner({ masterKey: new Uint8Array(32).fill(7), workers: 0 });

/** A migrated database, an organisation with a topic, the journal at `epoch` while `leading()`. */
async function setup() {
  const store = postgresStore(await pg.createDatabase("journal"));
  stores.push(store);
  await migratePostgres(store);
  const org = await createOrganisations({ store, signer, clock }).create({ name: "Acme", addon: true }, "test");
  await store.write(function* (tx, t) {
    yield* q(tx.update(t.organisations).set({ topicId: "0.0.1001" }));
  });
  let epoch: number | null = 1;
  await store.write(function* (tx) {
    yield* q(tx.execute(sql`UPDATE anchor_leader SET epoch = 1, node = 'test' WHERE id = 1`));
  });
  const ids = createTransactionIds({ clock, operator: "0.0.2", validSeconds: 120, backdateMs: 0, lastValidStartNs: 0n, lane: { index: 3, lanes: 1000 } });
  const journal = postgresJournal(store, journalRules(clock, ids), () => epoch);
  const queue = async (kind: "record_message" | "revocation_message", recordId = crypto.randomUUID()) => {
    const id = ids();
    await store.write(function* (tx, t) {
      yield* pendingMessage(tx, t, { ...id, kind, orgId: org.id, recordId, topicId: "0.0.1001", message: new TextEncoder().encode(`message ${recordId}`), now: clock.now(), batchLeaf: 0 });
    });
    return id.transactionId;
  };
  const row = async (transactionId: string) =>
    (await store.read(function* (db, t) {
      return yield* q(db.select().from(t.ledgerTransactions).where(sql`${t.ledgerTransactions.transactionId} = ${transactionId}`));
    }))[0] as unknown as LedgerTransactionRow;
  const all = async () =>
    (await store.read(function* (db, t) {
      return yield* q(db.select().from(t.ledgerTransactions));
    })) as unknown as LedgerTransactionRow[];
  return { store, org, journal, queue, row, all, setEpoch: (e: number | null) => (epoch = e) };
}

describe("the anchor journal on PostgreSQL", () => {
  test("PostgreSQL only (several connections, READ COMMITTED): changes racing on one row: a state never goes back, attempts are never lost, other bytes never replace the first", async () => {
    const { journal, queue, row } = await setup();
    for (let i = 0; i < 10; i++) {
      const id = await queue("revocation_message");
      const r = await row(id);
      // Acceptance and anchoring of one row at once (a listing confirms it while its own step accepts it).
      const [accepted, anchored] = await Promise.all([
        journal.grouped.toAccepted(r, 1000),
        journal.grouped.toAnchoredMessage(r, { sequenceNumber: i + 1, consensusAt: "1764061200.000000001", runningHash: new Uint8Array(48) }),
      ]);
      expect(anchored).not.toBeNull();
      expect(await row(id)).toMatchObject({ state: "anchored", sequenceNumber: i + 1 });
      expect(accepted === null || typeof accepted === "number").toBe(true);
    }
    const id = await queue("revocation_message");
    const r = await row(id);
    const counts = await Promise.all([1, 2, 3, 4].map(() => journal.grouped.beginAttempt(r, new Uint8Array([7, 7]))));
    expect(counts.sort()).toEqual([1, 2, 3, 4]);
    expect(await journal.grouped.beginAttempt(r, new Uint8Array([8]))).toBeNull();
    expect(await row(id)).toMatchObject({ attempts: 4 });
    expect(Buffer.from((await row(id)).signedBytes!)).toEqual(Buffer.from([7, 7]));
  });

  test("PostgreSQL only (one fenced transaction per group): grouped changes made together commit in one transaction; a refused fence refuses them all", async () => {
    const { store, journal, queue, row } = await setup();
    const ids = [];
    for (let i = 0; i < 10; i++) ids.push(await queue("revocation_message"));
    const rows = await Promise.all(ids.map(row));
    const accepted = await Promise.all(rows.map((r) => journal.grouped.toAccepted(r, 1000)));
    expect(accepted.every((a) => a === clock.now())).toBe(true);
    // Rows changed by one transaction carry its id (xmin).
    const xmins = (await store.client`SELECT DISTINCT xmin::text AS x FROM ledger_transactions WHERE state = 'accepted'`) as { x: string }[];
    expect(xmins).toHaveLength(1);
    await store.write(function* (tx) {
      yield* q(tx.execute(sql`UPDATE anchor_leader SET epoch = 9 WHERE id = 1`));
    });
    const refused = await Promise.allSettled(rows.map((r) => journal.grouped.toAnchoredMessage({ ...r, state: "accepted" }, { sequenceNumber: 1, consensusAt: "1764061200.000000001", runningHash: new Uint8Array(48) })));
    expect(refused.every((o) => o.status === "rejected" && o.reason instanceof DeposedError)).toBe(true);
    for (const id of ids) expect((await row(id)).state).toBe("accepted");
  });

  test("PostgreSQL only (the leader's epoch): fenced: a node whose epoch is no longer the leader's changes nothing, and one that does not lead is refused at once", async () => {
    const { store, journal, queue, row, setEpoch } = await setup();
    const id = await queue("revocation_message");
    const [r] = await journal.due(10, new Set());
    // Another node took the lead: epoch 2.
    await store.write(function* (tx) {
      yield* q(tx.execute(sql`UPDATE anchor_leader SET epoch = 2, node = 'other' WHERE id = 1`));
    });
    await expect(journal.grouped.beginAttempt(r!, new Uint8Array([1]))).rejects.toBeInstanceOf(DeposedError);
    await expect(journal.abandon(r!, "late")).rejects.toBeInstanceOf(DeposedError);
    expect(await row(id)).toMatchObject({ state: "pending", attempts: 0, signedBytes: null });
    // Not leading at all: refused before any round trip; reschedule hints are dropped, not written.
    setEpoch(null);
    await expect(journal.grouped.toAccepted(r!, 1000)).rejects.toBeInstanceOf(NotLeadingError);
    journal.reschedule(r!, 60_000, "hint");
    await journal.flush();
    expect(await row(id)).toMatchObject({ state: "pending", lastError: null });
  });

  test("PostgreSQL only (several nodes): the queue's counts carry what the leader reported it anchored, only while its heartbeat is fresh", async () => {
    const { store, journal, queue } = await setup();
    await queue("revocation_message");
    await store.write(function* (tx) {
      yield* q(tx.execute(sql`UPDATE anchor_leader SET anchored_recently = 321, seen_at = now() WHERE id = 1`));
    });
    expect(await journal.unfinished()).toMatchObject({ pending: 1, accepted: 0, anchoredByLeader: 321 });
    await store.write(function* (tx) {
      yield* q(tx.execute(sql`UPDATE anchor_leader SET seen_at = now() - interval '1 minute' WHERE id = 1`));
    });
    expect((await journal.unfinished()).anchoredByLeader).toBe(0);
  });

  test("PostgreSQL only (lanes of several nodes): the storage: transaction ids in this node's lane, after the last valid start in the journal", async () => {
    const { store, queue } = await setup();
    await queue("revocation_message");
    const storage = await postgresAnchorStorage(store, { epoch: () => 1, lane: { index: 5, lanes: 1000, held: () => true } });
    const next = storage.transactionIds({ clock, operator: "0.0.2", validSeconds: 120, backdateMs: 0 });
    const a = next();
    const ns = BigInt(a.transactionId.split("@")[1]!.replace(".", ""));
    expect(ns % 1000n).toBe(5n);
    expect(storage.active!()).toBe(true);
  });
});
