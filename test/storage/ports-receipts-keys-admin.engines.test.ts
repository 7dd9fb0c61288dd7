/**
 * The contracts of three ports (their MUST comments) on both engines (test/support/store-engines.ts):
 * receipts' `ReceiptSource` (receipts/ports.ts), authentication's `CredentialReads`
 * (keys/ports.ts) and the administrator's `AdminReads` (admin/ports.ts), each through the driver
 * its chooser (storage/*-drivers.ts) gives for the store. Rows are made with the services, as the
 * anchor loop leaves them once anchored.
 */
import { anchorBatch, batchOf } from "../support/batches.ts";
import { beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { createSigner } from "../../src/crypto/index.ts";
import { createApiKeys } from "../../src/keys/api-keys.ts";
import { createOrganisations } from "../../src/keys/organisations.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { createRecords } from "../../src/records/service.ts";
import { createWriteQueue } from "../../src/records/write-queue.ts";
import { recordsDrivers, adminDrivers, keysDrivers, receiptsDrivers } from "../support/drivers.ts";
import { UNKNOWN } from "../../src/storage/data-version.ts";
import { q, type Store } from "../../src/storage/store.ts";
import { useStoreEngines } from "../support/store-engines.ts";
import { anchoredKeyAnnouncement, consensusAt, numberedLedger } from "../support/numbered-ledger.ts";

const { engines } = useStoreEngines();

const TOPIC = "0.0.4321";
const hash = (c: string) => `sha256:${c.repeat(64)}`;


/** An organisation with a topic and its key's announcement anchored (sequence 1), two records of one hash (the older anchored as 3 and revoked, the newer anchored as 2), an API key. */
async function seed(store: Store) {
  const clock = manualClock(Date.UTC(2026, 0, 15, 9, 30));
  const signer = createSigner({ masterKey: new Uint8Array(32).fill(7), workers: 0 });
  const orgs = createOrganisations({ store, signer, clock });
  const org = await orgs.create({ name: "Ports Org", addon: true, apiAccess: true }, "alice");
  await store.write((tx, t) => q(tx.update(t.organisations).set({ topicId: TOPIC }).where(eq(t.organisations.id, org.id))));
  await anchoredKeyAnnouncement(store, { orgId: org.id, topicId: TOPIC, signer, clock });
  const recs = createRecords({ store, signer, clock, ledger: numberedLedger(), publicUrl: "https://verify.example.org", writes: createWriteQueue(recordsDrivers(store).writes) });
  /** As the anchor loop leaves a record once its batch is closed and anchored; the batch message's id. */
  const anchor = async (recordId: string, n: number): Promise<string> => {
    const batch = await batchOf(store, recordId);
    await anchorBatch(store, batch, n);
    return batch;
  };
  const older = (await recs.create(org.id, { docHash: hash("d"), filename: undefined })).record.recordId;
  await anchor(older, 3);
  clock.advance(1000);
  await recs.revoke(org.id, older, "SUPERSEDED");
  clock.advance(1000);
  const newer = (await recs.create(org.id, { docHash: hash("d"), filename: "a.pdf" })).record.recordId;
  const creationTx = await anchor(newer, 2);
  const minted = await createApiKeys({ store, clock }).mint({ orgId: org.id, environment: "live" }, "alice");
  return { recs, orgs, org, older, newer, creationTx, minted };
}

const UNKNOWN_ID = "0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d";

for (const engine of engines) {
  const sqlite = engine.name === "SQLite";

  describe(`${engine.name}: ReceiptSource (receipts/ports.ts)`, () => {
    let store: Store;
    let s: Awaited<ReturnType<typeof seed>>;
    beforeAll(async () => {
      store = await engine.open();
      s = await seed(store);
    });

    test("readsFor answers synchronously on SQLite only; an unknown record is null", async () => {
      const source = receiptsDrivers(store).reads;
      const answer = source.readsFor(UNKNOWN_ID);
      expect(answer instanceof Promise).toBe(!sqlite);
      expect((await answer).record(UNKNOWN_ID)).toBeNull();
    });

    test("the record with the change counter, its creation message, its key's anchored announcement and both keys, with numbers as numbers", async () => {
      const reads = await receiptsDrivers(store).reads.readsFor(s.newer);
      const row = reads.record(s.newer)!;
      expect(row).toMatchObject({ id: s.newer, org_id: s.org.id, anchor_state: "anchored", sequence_number: 2, topic_id: TOPIC });
      expect(typeof row.gen).toBe("number");
      expect(typeof row.signed_at_ms).toBe("number");
      expect(reads.transaction(s.creationTx)).toMatchObject({ transaction_id: s.creationTx, state: "anchored", sequence_number: 2, consensus_at: consensusAt(2), topic_id: TOPIC });
      expect(typeof reads.transaction(s.creationTx)!.created_at).toBe("number");
      expect(reads.announcement(s.org.id, row.signer_fingerprint, row.seal_fingerprint, 2)).toMatchObject({ state: "anchored", sequence_number: 1, topic_id: TOPIC });
      expect(reads.compromise(row.signer_fingerprint)).toBeNull();
      expect(reads.key(row.signer_fingerprint)!.algorithm).toBe("ML-DSA-65");
      expect(reads.key(row.seal_fingerprint)!.public_key.length).toBeGreaterThan(0);
    });

    test("what is committed: a revocation made since is in the next reads", async () => {
      const source = receiptsDrivers(store).reads;
      expect((await source.readsFor(s.newer)).record(s.newer)!.revoked_at).toBeNull();
      await s.recs.revoke(s.org.id, s.newer, "SUPERSEDED");
      const row = (await source.readsFor(s.newer)).record(s.newer)!;
      expect(row.revoked_at).not.toBeNull();
      // Its batch of revocations, still open; the revocation's own message is its leaf.
      expect((await source.readsFor(s.newer)).transaction(row.revocation_transaction_id!)).toMatchObject({ kind: "batch_message", state: "open", sequence_number: null, message: null });
      expect((await source.readsFor(s.newer)).leaf(row.revocation_transaction_id!, s.newer, "revocation_message")).toMatchObject({ leaf_index: null, inclusion_path: null });
    });
  });

  describe(`${engine.name}: CredentialReads (keys/ports.ts)`, () => {
    let store: Store;
    let s: Awaited<ReturnType<typeof seed>>;
    beforeAll(async () => {
      store = await engine.open();
      s = await seed(store);
    });

    test("the change counter and a key with its organisation, synchronously on SQLite; an unknown key is null", async () => {
      const reads = keysDrivers(store).credentials;
      const counter = reads.changeCounter();
      expect(counter instanceof Promise).toBe(!sqlite);
      expect(typeof (await counter)).toBe("number");
      const row = reads.keyWithOrg(s.minted.keyId);
      expect(row instanceof Promise).toBe(!sqlite);
      expect(await row).toMatchObject({ key_id: s.minted.keyId, environment: "live", org_id: s.org.id, name: "Ports Org", api_access: 1, addon: 1, suspended: 0, revoked_at: null, last_used_at: null });
      expect(await reads.keyWithOrg("nope")).toBeNull();
    });

    test("a change to an organisation raises the counter", async () => {
      const reads = keysDrivers(store).credentials;
      const before = (await reads.changeCounter())!;
      await s.orgs.set(s.org.id, { suspended: true }, "alice");
      expect((await reads.changeCounter())!).toBeGreaterThan(before);
      expect(await reads.keyWithOrg(s.minted.keyId)).toMatchObject({ suspended: 1 });
    });

    test("the data version: the connection's own on SQLite, changed by another connection's commit; UNKNOWN on PostgreSQL", async () => {
      const [a, b] = await engine.openPair();
      const reads = keysDrivers(a).credentials;
      const v = reads.version();
      if (!sqlite) {
        expect(v).toBe(UNKNOWN);
        return;
      }
      expect(v).not.toBe(UNKNOWN);
      expect(reads.version()).toBe(v);
      await seed(b);
      expect(reads.version()).not.toBe(v);
    });

    test("touch records each use in one transaction, only where no use within the resolution is recorded", async () => {
      const reads = keysDrivers(store).credentials;
      const at = Date.UTC(2026, 0, 16);
      await reads.touch([[s.minted.keyId, at]], 60_000);
      expect((await reads.keyWithOrg(s.minted.keyId))!.last_used_at).toBe(at);
      await reads.touch([[s.minted.keyId, at + 30_000]], 60_000);
      expect((await reads.keyWithOrg(s.minted.keyId))!.last_used_at).toBe(at);
      await reads.touch([[s.minted.keyId, at + 60_000], ["unknown-key", at]], 60_000);
      expect((await reads.keyWithOrg(s.minted.keyId))!.last_used_at).toBe(at + 60_000);
    });
  });

  describe(`${engine.name}: AdminReads (admin/ports.ts)`, () => {
    let store: Store;
    let s: Awaited<ReturnType<typeof seed>>;
    beforeAll(async () => {
      store = await engine.open();
      s = await seed(store);
    });

    test("records by id and by hash, newest first, with the organisation's name; none for an unknown one", async () => {
      const reads = adminDrivers(store).reads;
      const byId = reads.records({ by: "id", id: s.newer });
      expect(byId instanceof Promise).toBe(!sqlite);
      expect(await byId).toMatchObject([{ id: s.newer, org_name: "Ports Org", sequence_number: 2 }]);
      expect((await reads.records({ by: "hash", docHash: hash("d") })).map((r) => r.id)).toEqual([s.newer, s.older]);
      expect(await reads.records({ by: "id", id: UNKNOWN_ID })).toEqual([]);
    });

    test("a ledger queue row, numbers as numbers; null for an unknown one", async () => {
      const reads = adminDrivers(store).reads;
      expect(await reads.ledgerTransaction(s.creationTx)).toEqual({
        transaction_id: s.creationTx,
        state: "anchored",
        sequence_number: 2,
        consensus_at: consensusAt(2),
        attempts: 0,
        last_error: null,
        kind: "batch_message",
        batch_sequence: 2,
        batch_size: 1,
      });
      expect(await reads.ledgerTransaction("0.0.2@1.000000000")).toBeNull();
    });

    test("audit rows below an id, newest first, at most the limit", async () => {
      const reads = adminDrivers(store).reads;
      const all = await reads.auditRows(null, 1000);
      expect(all.length).toBeGreaterThanOrEqual(2);
      expect(all.map((r) => r.id)).toEqual([...all.map((r) => r.id)].sort((x, y) => y - x));
      expect(typeof all[0]!.at).toBe("number");
      expect(await reads.auditRows(null, 1)).toEqual([all[0]!]);
      expect(await reads.auditRows(all[0]!.id, 1000)).toEqual(all.slice(1));
    });

    test("the cluster: null on the embedded SQLite, the nodes and the leader on PostgreSQL", async () => {
      const status = await adminDrivers(store).reads.cluster();
      if (sqlite) expect(status).toBeNull();
      else expect(status).toMatchObject({ nodes: [], leader: null });
    });
  });
}
