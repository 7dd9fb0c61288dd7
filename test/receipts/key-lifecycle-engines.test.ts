/**
 * A receipt after its key's life went on (docs/receipts.md §1 "Which announcement a receipt
 * carries", §2.1 `revocation`), on both storage engines: the announcement carried is the one of
 * the exact pair (signer key, seal key) that signed and sealed the record, the latest before its
 * message, never a later seal key's or a later announcement of the same pair; a compromise of the
 * signer key covering the record shows in `revocation` (reason KEY_COMPROMISE, its own anchor) once
 * its message is anchored on the record's topic, and not before, nor for a record signed before
 * `since`; the record's own earlier revocation wins. The ledger rows are written as the anchor
 * loop leaves them (each record's batch closed and anchored through the engine's own journal,
 * test/support/batches.ts; the lifecycle messages' bytes by hand, as docs/receipts.md §1 fixes
 * them), and each receipt is checked by the receipt verifier against two mirror nodes serving the
 * topic's messages (the batch messages, not their leaves).
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { createSigner } from "../../src/crypto/index.ts";
import { createOrganisations } from "../../src/keys/organisations.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { rfc3339Ms } from "../../src/lib/formats.ts";
import { createReceipts, type Receipt } from "../../src/receipts/receipt.ts";
import { createRecords } from "../../src/records/service.ts";
import { createWriteQueue } from "../../src/records/write-queue.ts";
import { q, type Store } from "../../src/storage/store.ts";
import { parseReceipt, verifyReceipt } from "../../src/verifier/index.ts";
import { receiptsDrivers, recordsDrivers } from "../support/drivers.ts";
import { anchorBatch, batchOf } from "../support/batches.ts";
import { anchoredKeyAnnouncement, consensusAt, numberedLedger, runningHash } from "../support/numbered-ledger.ts";
import { useStoreEngines } from "../support/store-engines.ts";
import { fakeMirror } from "../verifier/fixtures.ts";

const { engines } = useStoreEngines();

const TOPIC = "0.0.7788";
const T0 = Date.UTC(2026, 0, 15, 9, 30);
const hash = (c: string) => `sha256:${c.repeat(64)}`;
const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const OTHER_SEAL = "5a".repeat(32);

/** A ledger row as the anchor loop leaves it once anchored at `n`. */
function anchoredRow(orgId: string, kind: "key_announcement" | "key_compromise", n: number, message: Uint8Array, keyFingerprint: Uint8Array, generation: number, createdAt: number) {
  return {
    transactionId: `0.0.2@1768469398.${String(n).padStart(9, "0")}`,
    kind,
    orgId,
    topicId: TOPIC,
    message: Buffer.from(message),
    keyFingerprint: Buffer.from(keyFingerprint),
    announcementGeneration: generation,
    validStartMs: 1_768_469_398_000,
    validSeconds: 120,
    state: "anchored" as const,
    sequenceNumber: n,
    consensusAt: consensusAt(n),
    runningHash: runningHash(n),
    nextAttemptAt: 0,
    createdAt,
    updatedAt: createdAt,
  };
}

async function seed(store: Store) {
  const clock = manualClock(T0);
  const signer = createSigner({ masterKey: new Uint8Array(32).fill(3), workers: 0 });
  const org = await createOrganisations({ store, signer, clock }).create({ name: "Lifecycle Org", addon: true, apiAccess: true }, "alice");
  await store.write((tx, t) => q(tx.update(t.organisations).set({ topicId: TOPIC }).where(eq(t.organisations.id, org.id))));
  await anchoredKeyAnnouncement(store, { orgId: org.id, topicId: TOPIC, signer, clock });
  const recs = createRecords({ store, signer, clock, ledger: numberedLedger(), publicUrl: "https://verify.example.org", writes: createWriteQueue(recordsDrivers(store).writes) });
  const [first] = await store.read((db, t) => q(db.select().from(t.ledgerTransactions).where(eq(t.ledgerTransactions.kind, "key_announcement"))));
  const announced = JSON.parse(Buffer.from(first!.message!).toString("utf8")) as Record<string, string>;
  /** A record created now and anchored as message `n`. */
  const record = async (c: string, n: number): Promise<string> => {
    const id = (await recs.create(org.id, { docHash: hash(c), filename: undefined })).record.recordId;
    // Its batch (the record alone in it) closed and anchored as message `n`, as the loop does.
    await anchorBatch(store, await batchOf(store, id), n);
    return id;
  };
  /** The organisation's key announced again at `n`, with `seal` as the seal key (a seal rotation) or the same pair (a rename). */
  const announceAgain = async (n: number, seal: string, generation: number) => {
    const bytes = `{"v":1,"type":"key","orgId":"${org.id}","name":"Lifecycle Org","algorithm":"ML-DSA-65","keyFingerprint":"${announced.keyFingerprint}","sealKeyFingerprint":"${seal}"}`;
    await store.write((tx, t) => q(tx.insert(t.ledgerTransactions).values(anchoredRow(org.id, "key_announcement", n, new TextEncoder().encode(bytes), Buffer.from(announced.keyFingerprint!, "hex"), generation, clock.now()))));
  };
  const receipts = createReceipts({ ...receiptsDrivers(store), clock, network: "testnet", mirrorNodes: () => [] });
  return { clock, org, recs, record, announceAgain, announced, receipts, signerFp: Buffer.from(announced.keyFingerprint!, "hex"), sealFp: announced.sealKeyFingerprint! };
}

/** Every anchored message of the topic, as two mirror nodes serve it; the receipt verified against them. */
async function verified(store: Store, receipt: Receipt) {
  // The messages the ledger carries: a batch's leaves are not among them (each is in its receipt).
  const rows = await store.read((db, t) =>
    q(db.select().from(t.ledgerTransactions).where(and(eq(t.ledgerTransactions.topicId, TOPIC), eq(t.ledgerTransactions.state, "anchored"), eq(t.ledgerTransactions.batchLeaf, 0)))),
  );
  const ledger = {
    topicId: TOPIC,
    submitKey: { _type: "ED25519", key: "ab".repeat(32) },
    messages: rows.map((r) => ({ sequenceNumber: r.sequenceNumber!, consensusAt: r.consensusAt!, message: new Uint8Array(r.message!), runningHash: new Uint8Array(r.runningHash!) })).sort((a, b) => a.sequenceNumber - b.sequenceNumber),
  };
  const [a, b] = [fakeMirror(ledger), fakeMirror(ledger)];
  return verifyReceipt(parseReceipt(JSON.stringify(receipt)), { docHash: receipt.originalDocHash, mirrors: [a.url, b.url], builtinMirrors: false, timeoutMs: 5_000 });
}

for (const engine of engines) {
  describe(`${engine.name}: the announcement a receipt carries`, () => {
    let store: Store;
    let s: Awaited<ReturnType<typeof seed>>;
    let before: string;
    let between: string;
    beforeAll(async () => {
      store = await engine.open();
      s = await seed(store);
      // #1 the pair announced; #2 a record; #3 the same pair again (a rename); #4 a record;
      // #5 the seal key rotated: the same signer key with another seal; #6 the same pair again.
      before = await s.record("a", 2);
      await s.announceAgain(3, s.sealFp, 1);
      between = await s.record("b", 4);
      await s.announceAgain(5, OTHER_SEAL, 2);
      await s.announceAgain(6, s.sealFp, 3);
    });

    test("a record before a rename carries #1, not the rename's #3 nor the later ones; it verifies", async () => {
      const r = await s.receipts.receipt(before);
      expect(r.keyAnnouncement).toMatchObject({ sequenceNumber: 1, consensusAt: consensusAt(1) });
      expect((await verified(store, r)).verdict).toBe("verified_org");
    });

    test("a record after the rename carries #3 (the latest of its pair before it), never #5 (another seal key) nor #6 (after it); it verifies", async () => {
      const r = await s.receipts.receipt(between);
      expect(r.keyAnnouncement.sequenceNumber).toBe(3);
      expect(JSON.parse(Buffer.from(r.keyAnnouncement.message, "base64").toString("utf8")).sealKeyFingerprint).toBe(s.sealFp);
      const report = await verified(store, r);
      expect({ verdict: report.verdict, window: report.checks.find((c) => c.name === "keyWindow")?.evidence?.replacedBy }).toMatchObject({ verdict: "verified_org", window: { sequenceNumber: 5, sealKeyFingerprint: OTHER_SEAL } });
    });

    test("the receipt text carries the same announcement as the object", async () => {
      const text = await s.receipts.receiptText(between);
      expect(JSON.parse(text.text).keyAnnouncement.sequenceNumber).toBe(3);
    });
  });

  describe(`${engine.name}: a compromise of the signer key in the receipt's revocation`, () => {
    let store: Store;
    let s: Awaited<ReturnType<typeof seed>>;
    let early: string;
    let covered: string;
    let ownFirst: string;
    beforeAll(async () => {
      store = await engine.open();
      s = await seed(store);
      early = await s.record("c", 2);
      s.clock.advance(60_000);
      covered = await s.record("d", 3);
      s.clock.advance(1000);
      ownFirst = await s.record("e", 4);
      s.clock.advance(1000);
      await s.recs.revoke(s.org.id, ownFirst, "SUPERSEDED");
    });

    test("declared but its message not anchored: no revocation (the appliance's word alone is no anchor)", async () => {
      const since = T0 + 30_000;
      await store.write((tx, t) => q(tx.update(t.signingKeys).set({ compromisedSince: since, compromisedAt: s.clock.now() }).where(eq(t.signingKeys.fingerprint, s.signerFp))));
      const bytes = new TextEncoder().encode(`{"v":1,"type":"key_compromise","orgId":"${s.org.id}","keyFingerprint":"${hex(s.signerFp)}","since":"${rfc3339Ms(since)}"}`);
      await store.write((tx, t) => q(tx.insert(t.ledgerTransactions).values({ ...anchoredRow(s.org.id, "key_compromise", 100, bytes, s.signerFp, 0, s.clock.now()), state: "pending", sequenceNumber: null, consensusAt: null, runningHash: null })));
      expect((await s.receipts.receipt(covered)).revocation).toBeNull();
    });

    test("anchored: a record signed at or after since has revocation KEY_COMPROMISE with the compromise's anchor; the verifier agrees (revoked)", async () => {
      await store.write((tx, t) =>
        q(tx.update(t.ledgerTransactions).set({ state: "anchored", sequenceNumber: 100, consensusAt: consensusAt(100), runningHash: runningHash(100) }).where(eq(t.ledgerTransactions.kind, "key_compromise"))),
      );
      const r = await s.receipts.receipt(covered);
      const [sec, ns] = consensusAt(100).split(".") as [string, string];
      expect(r.revocation).toMatchObject({
        reason: "KEY_COMPROMISE",
        revokedAt: rfc3339Ms(Number(sec) * 1000 + Math.floor(Number(ns) / 1e6)),
        anchor: { network: "testnet", topicId: TOPIC, sequenceNumber: 100, consensusAt: consensusAt(100), transactionId: "0.0.2@1768469398.000000100", runningHash: runningHash(100).toString("base64") },
      });
      const report = await verified(store, r);
      expect({ verdict: report.verdict, reason: report.revocation?.reason }).toEqual({ verdict: "revoked", reason: "KEY_COMPROMISE" });
      // The text the routes send says the same.
      expect(JSON.parse((await s.receipts.receiptText(covered)).text).revocation.reason).toBe("KEY_COMPROMISE");
    });

    test("a record signed before since: no revocation, and it verifies", async () => {
      const r = await s.receipts.receipt(early);
      expect(r.revocation).toBeNull();
      expect((await verified(store, r)).verdict).toBe("verified_org");
    });

    test("a record revoked on its own (T0 + 62 s) before the compromise's consensus (T0 + 100 s): its own revocation", async () => {
      expect((await s.receipts.receipt(ownFirst)).revocation?.reason).toBe("SUPERSEDED");
    });
  });
}
