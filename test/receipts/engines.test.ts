/**
 * Receipts, key announcements and record counts on both storage engines (docs/receipts.md,
 * docs/storage.md "Two engines"), as test/storage/engines.test.ts runs the other services: embedded
 * SQLite, and a real PostgreSQL server the run shares. Records are created with the records
 * service and anchored as the anchor loop leaves them (an UPDATE of the record and of its ledger
 * transaction), and the receipts compared: the same rows must give the same bytes on both engines.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { createSigner, encodeRecordPayload, encodeSealPayload, type Signer } from "../../src/crypto/index.ts";
import { receiptResponse, receiptRoutes } from "../../src/http/routes/receipts.ts";
import { createHttp } from "../../src/http/server.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { createOrganisations } from "../../src/keys/organisations.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { createKeyAnnouncements } from "../../src/records/announcements.ts";
import { recordCounter } from "../../src/records/counts.ts";
import { decodeLedgerMessage } from "../../src/records/messages.ts";
import { SEAL_KEY_PURPOSE } from "../../src/records/seal-key.ts";
import { createRecords } from "../../src/records/service.ts";
import { receiptsDrivers, recordsDrivers } from "../support/drivers.ts";
import { createReceipts, type Receipt } from "../../src/receipts/receipt.ts";
import { RECEIPT_SNAPSHOT, RECORD_COUNTS } from "../../src/storage/receipt-statements.ts";
import { firstRow, q, type Store } from "../../src/storage/store.ts";
import { useStoreEngines, type StoreEngine } from "../support/store-engines.ts";
import { waitFor } from "../support/wait.ts";
import { createWriteQueue } from "../../src/records/write-queue.ts";
import { anchoredKeyAnnouncement, consensusAt, numberedLedger, runningHash } from "../support/numbered-ledger.ts";
import { anchorBatch, batchOf } from "../support/batches.ts";

const { engines } = useStoreEngines();

const MASTER_KEY = new Uint8Array(32).fill(9);
const TOPIC = "0.0.1234";
const T0 = Date.UTC(2026, 0, 15, 9, 30);

type Engine = StoreEngine;

const ENGINES: Engine[] = engines;
const [SQLITE, POSTGRES] = ENGINES as [Engine, Engine];

/** Transaction ids as the anchor loop's would be: unique, in order. */

const hash = (c: string) => `sha256:${c.repeat(64)}`;
/** A running hash, 48 bytes, different for each sequence number. */

/** As the anchor loop leaves a ledger transaction once consensus is confirmed. */
function anchorTransaction(store: Store, transactionId: string, sequenceNumber: number): Promise<unknown> {
  return store.write((tx, t) =>
    q(
      tx
        .update(t.ledgerTransactions)
        .set({ state: "anchored", topicId: TOPIC, sequenceNumber, consensusAt: consensusAt(sequenceNumber), runningHash: runningHash(sequenceNumber) })
        .where(eq(t.ledgerTransactions.transactionId, transactionId)),
    ),
  );
}

/** As the anchor loop leaves a record once the batch its message is a leaf of is closed and anchored. */
async function anchorRecord(store: Store, recordId: string, sequenceNumber: number): Promise<void> {
  await anchorBatch(store, await batchOf(store, recordId), sequenceNumber);
}

interface Scenario {
  readonly orgId: string;
  readonly otherOrgId: string;
  /** Anchored, its key's announcement anchored: a receipt. */
  readonly anchored: string;
  /** Its message not confirmed yet: ANCHOR_NOT_FINAL. */
  readonly pending: string;
  /** Anchored, then revoked; its revocation message not confirmed yet. */
  readonly revoked: string;
  readonly revocationTransactionId: string;
}

/**
 * One organisation with a topic and its key announced (built by the announcement provider,
 * anchored as sequence 1), three records created with the records service: one anchored, one
 * pending, one anchored and revoked. Another organisation without a topic.
 */
async function scenario(store: Store, clock: ReturnType<typeof manualClock>, signer: Signer): Promise<Scenario> {
  const orgs = createOrganisations({ store, signer, clock });
  const org = await orgs.create({ name: "Receipts Org", addon: true, apiAccess: true }, "alice");
  const other = await orgs.create({ name: "Other Org" }, "alice");
  await store.write((tx, t) => q(tx.update(t.organisations).set({ topicId: TOPIC }).where(eq(t.organisations.id, org.id))));
  await anchoredKeyAnnouncement(store, { orgId: org.id, topicId: TOPIC, signer, clock });
  const recs = createRecords({ store, signer, clock, ledger: numberedLedger(), publicUrl: "https://verify.example.org", writes: createWriteQueue(recordsDrivers(store).writes) });
  clock.advance(1000);
  const anchored = (await recs.create(org.id, { docHash: hash("a"), filename: "contract.pdf" })).record.recordId;
  clock.advance(1000);
  const pending = (await recs.create(org.id, { docHash: hash("b"), filename: undefined })).record.recordId;
  clock.advance(1000);
  const revoked = (await recs.create(org.id, { docHash: hash("c"), filename: undefined })).record.recordId;
  await anchorRecord(store, anchored, 2);
  await anchorRecord(store, revoked, 4);
  clock.advance(1000);
  await recs.revoke(org.id, revoked, "SUPERSEDED");
  const [row] = await store.read((db, t) => q(db.select({ tx: t.records.revocationTransactionId }).from(t.records).where(eq(t.records.id, revoked))));
  return { orgId: org.id, otherOrgId: other.id, anchored, pending, revoked, revocationTransactionId: row!.tx! };
}

/** What `receipt()` answers, settled: the receipt, or the refusal's code, message and retry time. */
async function outcome(run: () => Receipt | Promise<Receipt>): Promise<{ receipt: string } | { code: string; message: string; retryAfterSeconds: number | undefined }> {
  try {
    return { receipt: JSON.stringify(await run()) };
  } catch (e) {
    const { code, message, retryAfterSeconds } = e as { code: string; message: string; retryAfterSeconds?: number };
    return { code, message, retryAfterSeconds };
  }
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");

for (const engine of ENGINES) {
  describe(`${engine.name}: receipts`, () => {
    let store: Store;
    let s: Scenario;
    const clock = manualClock(T0);
    const signer = createSigner({ masterKey: MASTER_KEY, workers: 0 });
    const mirrorNodes = () => ["https://mirror-a.example", "https://mirror-b.example"];
    beforeAll(async () => {
      store = await engine.open();
      s = await scenario(store, clock, signer);
    });

    test("an anchored record's receipt: the stored signatures, payloads rebuilt, both anchors (the batch's message, the record's leaf and its proof); the same again from what is kept", async () => {
      const receipts = createReceipts({ ...receiptsDrivers(store), clock, network: "testnet", mirrorNodes });
      const first = await receipts.receipt(s.anchored);
      const [row] = await store.read((db, t) => q(db.select().from(t.records).where(eq(t.records.id, s.anchored))));
      const [creation] = await store.read((db, t) => q(db.select().from(t.ledgerTransactions).where(eq(t.ledgerTransactions.transactionId, row!.transactionId))));
      const [announcement] = await store.read((db, t) => q(db.select().from(t.ledgerTransactions).where(eq(t.ledgerTransactions.kind, "key_announcement"))));
      const [signerKey] = await store.read((db, t) => q(db.select().from(t.signingKeys).where(eq(t.signingKeys.fingerprint, row!.signerFingerprint))));
      const [leaf] = await store.read((db, t) => q(db.select().from(t.ledgerTransactions).where(and(eq(t.ledgerTransactions.batchTransactionId, row!.transactionId), eq(t.ledgerTransactions.recordId, s.anchored)))));
      const recordPayload = encodeRecordPayload({ recordId: row!.id, docHash: row!.docHash, signedAtMs: row!.signedAtMs, signerKeyFingerprint: row!.signerFingerprint });
      // A batch of one (the record alone in its window): the leaf is the root, its path empty.
      expect(decodeLedgerMessage(creation!.message!)).toMatchObject({ type: "batch", orgId: s.orgId, batch: 1, size: 1, revoked: [] });
      expect(decodeLedgerMessage(leaf!.message!)).toMatchObject({ type: "record", recordId: s.anchored });
      expect(first).toMatchObject({
        v: 1,
        recordId: s.anchored,
        originalDocHash: hash("a"),
        authenticatedAt: new Date(row!.signedAtMs).toISOString(),
        kind: "record_only",
        signerType: "org",
        signer: { algorithm: "ML-DSA-65", publicKey: b64(signerKey!.publicKey), payload: b64(recordPayload), signature: b64(row!.signature) },
        seal: { payload: b64(encodeSealPayload(recordPayload, row!.signature, row!.sealFingerprint)), signature: b64(row!.sealSignature) },
        anchor: {
          network: "testnet",
          topicId: TOPIC,
          sequenceNumber: 2,
          consensusAt: consensusAt(2),
          transactionId: row!.transactionId,
          message: b64(creation!.message!),
          runningHash: b64(runningHash(2)),
          inclusion: { algorithm: "RFC9162-SHA256", leafMessage: b64(leaf!.message!), leafIndex: 0, treeSize: 1, path: [] },
        },
        keyAnnouncement: { topicId: TOPIC, sequenceNumber: 1, consensusAt: consensusAt(1), message: b64(announcement!.message!) },
        revocation: null,
        mirrorNodes: mirrorNodes(),
        issuedAt: new Date(clock.now()).toISOString(),
      });
      expect(signer.verify(first.signer.algorithm as "ML-DSA-65", Buffer.from(first.signer.publicKey, "base64"), recordPayload, row!.signature)).toBe(true);
      // Its fixed part kept: the same bytes, issued afresh.
      clock.advance(1);
      const again = await receipts.receipt(s.anchored, { orgId: s.orgId });
      expect(JSON.stringify(again)).toBe(JSON.stringify({ ...first, issuedAt: new Date(clock.now()).toISOString() }));
    });

    test("refusals: ANCHOR_NOT_FINAL for a pending record, NOT_FOUND for an unknown, malformed or other organisation's id", async () => {
      const receipts = createReceipts({ ...receiptsDrivers(store), clock, network: "testnet", mirrorNodes });
      const pending = await outcome(() => receipts.receipt(s.pending));
      expect(pending).toMatchObject({ code: "ANCHOR_NOT_FINAL", message: expect.stringContaining("record's ledger message") });
      expect((pending as { retryAfterSeconds: number }).retryAfterSeconds).toBeGreaterThanOrEqual(1);
      const notFound = { code: "NOT_FOUND", message: "No such record.", retryAfterSeconds: undefined };
      expect(await outcome(() => receipts.receipt("0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d"))).toEqual(notFound);
      expect(await outcome(() => receipts.receipt("not-a-uuid"))).toEqual(notFound);
      expect(await outcome(() => receipts.receipt(s.anchored, { orgId: s.otherOrgId }))).toEqual(notFound);
    });

    test("a revoked record's receipt: the revocation's anchor null until its consensus (its own message standing for its batch's, still open), then its batch's with its proof", async () => {
      const receipts = createReceipts({ ...receiptsDrivers(store), clock, network: "testnet", mirrorNodes });
      const [message] = await store.read((db, t) =>
        q(db.select({ m: t.ledgerTransactions.message }).from(t.ledgerTransactions).where(and(eq(t.ledgerTransactions.batchTransactionId, s.revocationTransactionId), eq(t.ledgerTransactions.kind, "revocation_message")))),
      );
      const early = await receipts.receipt(s.revoked);
      expect(early.revocation).toEqual({
        reason: "SUPERSEDED",
        revokedAt: expect.any(String),
        anchor: { network: "testnet", topicId: TOPIC, sequenceNumber: null, consensusAt: null, transactionId: s.revocationTransactionId, message: b64(message!.m!), runningHash: null, inclusion: null },
      });
      expect(decodeLedgerMessage(message!.m!)).toMatchObject({ type: "revocation", recordId: s.revoked, reason: "SUPERSEDED" });
      const fresh = await engine.open();
      await copyRows(store, fresh);
      await anchorBatch(fresh, s.revocationTransactionId, 5);
      const final = await createReceipts({ ...receiptsDrivers(fresh), clock, network: "testnet", mirrorNodes }).receipt(s.revoked);
      const [batch] = await fresh.read((db, t) => q(db.select({ m: t.ledgerTransactions.message }).from(t.ledgerTransactions).where(eq(t.ledgerTransactions.transactionId, s.revocationTransactionId))));
      expect(decodeLedgerMessage(batch!.m!)).toMatchObject({ type: "batch", size: 1, revoked: [s.revoked] });
      expect(final.revocation!.anchor).toMatchObject({
        sequenceNumber: 5,
        consensusAt: consensusAt(5),
        runningHash: b64(runningHash(5)),
        message: b64(batch!.m!),
        inclusion: { algorithm: "RFC9162-SHA256", leafMessage: b64(message!.m!), leafIndex: 0, treeSize: 1, path: [] },
      });
      expect({ ...final, revocation: null }).toEqual({ ...early, revocation: null });
    });

    test("receiptText is the receipt's JSON.stringify(…, null, 2) byte for byte, built and kept, revoked, any mirror nodes; refusals alike", async () => {
      let nodes: string[] = ["https://mirror-a.example", "https://mirror-b.example"];
      const receipts = createReceipts({ ...receiptsDrivers(store), clock, network: "testnet", mirrorNodes: () => nodes });
      // Twice each: the first builds (and keeps) the fixed part, the second writes the kept one's text.
      for (const id of [s.anchored, s.anchored, s.revoked, s.revoked]) {
        const text = await receipts.receiptText(id);
        expect(text.recordId).toBe(id);
        expect(text.text).toBe(JSON.stringify(await receipts.receipt(id), null, 2));
      }
      nodes = [];
      expect((await receipts.receiptText(s.revoked)).text).toBe(JSON.stringify(await receipts.receipt(s.revoked), null, 2));
      const refusals: [string, string, string | undefined][] = [
        [s.pending, "ANCHOR_NOT_FINAL", undefined],
        ["0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d", "NOT_FOUND", undefined],
        ["not-a-uuid", "NOT_FOUND", undefined],
        [s.anchored, "NOT_FOUND", s.otherOrgId],
      ];
      for (const [id, code, orgId] of refusals) {
        await expect(Promise.resolve().then(() => receipts.receiptText(id, orgId === undefined ? {} : { orgId }))).rejects.toMatchObject({ code });
      }
    });

    test("the route's response, from a receipt given at once (SQLite) or later (PostgreSQL)", async () => {
      const receipts = createReceipts({ ...receiptsDrivers(store), clock, network: "testnet", mirrorNodes });
      const answer = receipts.receiptText(s.anchored);
      expect(answer instanceof Promise).toBe(engine.name === "PostgreSQL");
      const res = await receiptResponse(answer);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/vnd.docverify.receipt+json");
      expect(await res.text()).toBe(JSON.stringify(await receipts.receipt(s.anchored), null, 2) + "\n");
      // A refusal rejects (or throws) as the capability's error, which the server maps.
      await expect(Promise.resolve().then(() => receiptResponse(receipts.receiptText(s.pending)))).rejects.toMatchObject({ code: "ANCHOR_NOT_FINAL" });
    });

    test("the routes over HTTP: the receipt, 409 with Retry-After, 404, the public download", async () => {
      const receipts = createReceipts({ ...receiptsDrivers(store), clock, network: "testnet", mirrorNodes });
      // Access answers as the engine's would: at once on SQLite, later with several nodes.
      const later = <T>(v: T): T | Promise<T> => (engine.name === "PostgreSQL" ? Promise.resolve(v) : v);
      const caller = { tier: "organisation", clientIp: "192.0.2.1", org: { id: s.orgId } } as const;
      const access = { admit: () => later(caller as never), admitPublic: () => later(undefined) };
      const http = createHttp({ log: memoryLogger(), version: "test", readiness: {}, plugins: [receiptRoutes({ access, receipts })] });
      const get = (path: string) => http.handle(new Request(`http://localhost${path}`), "192.0.2.1");
      for (const path of [`/v1/records/${s.anchored}/receipt`, `/verify/${s.anchored}/receipt`]) {
        const res = await get(path);
        expect(res.status).toBe(200);
        expect(res.headers.get("content-disposition")).toBe(`attachment; filename="docverify-receipt-${s.anchored}.json"`);
        expect(JSON.parse(await res.text())).toEqual(JSON.parse(JSON.stringify(await receipts.receipt(s.anchored))));
      }
      const pending = await get(`/verify/${s.pending}/receipt`);
      expect(pending.status).toBe(409);
      expect(Number(pending.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(((await pending.json()) as { error: { code: string } }).error.code).toBe("ANCHOR_NOT_FINAL");
      for (const id of ["0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d", "not-a-uuid"]) {
        const res = await get(`/v1/records/${id}/receipt`);
        expect({ status: res.status, body: await res.json() }).toEqual({ status: 404, body: { error: { code: "NOT_FOUND", message: "No such record." } } });
      }
    });

    test("what a receipt keeps follows a change from another node: a signed column, a key, the topic", async () => {
      const [a, b] = await engine.openPair();
      const at = manualClock(T0);
      const ids = await scenario(a, at, signer);
      const receipts = createReceipts({ ...receiptsDrivers(a), clock: at, network: "testnet", mirrorNodes });
      const first = await receipts.receipt(ids.anchored);
      const [row] = await b.read((db, t) => q(db.select().from(t.records).where(eq(t.records.id, ids.anchored))));
      const setRecord = (values: { signature?: Buffer; topicId?: string }) => b.write((tx, t) => q(tx.update(t.records).set(values).where(eq(t.records.id, ids.anchored))));
      const flipped = Buffer.from(row!.signature);
      flipped[0]! ^= 1;
      await setRecord({ signature: flipped });
      expect((await receipts.receipt(ids.anchored)).signer.signature).toBe(b64(flipped));
      await setRecord({ signature: row!.signature });
      expect((await receipts.receipt(ids.anchored)).signer.signature).toBe(first.signer.signature);
      const [key] = await b.read((db, t) => q(db.select().from(t.signingKeys).where(eq(t.signingKeys.fingerprint, row!.sealFingerprint))));
      const changedKey = Buffer.from(key!.publicKey);
      changedKey[0]! ^= 1;
      const setKey = (publicKey: Buffer) => b.write((tx, t) => q(tx.update(t.signingKeys).set({ publicKey }).where(eq(t.signingKeys.fingerprint, row!.sealFingerprint))));
      await setKey(changedKey);
      expect((await receipts.receipt(ids.anchored)).seal.publicKey).toBe(b64(changedKey));
      await setKey(key!.publicKey);
      expect((await receipts.receipt(ids.anchored)).seal.publicKey).toBe(first.seal.publicKey);
      // The topic is not watched by the change counter: compared with the row on every request.
      await setRecord({ topicId: "0.0.424242" });
      expect(await outcome(() => receipts.receipt(ids.anchored))).toMatchObject({ code: "ANCHOR_NOT_FINAL", message: expect.stringContaining("key announcement") });
      await setRecord({ topicId: TOPIC });
      expect({ ...(await receipts.receipt(ids.anchored)), issuedAt: null }).toEqual({ ...first, issuedAt: null });
    });

    test("a key announced again (a changed domain): a record's receipt carries the latest anchored announcement of its pair before its message, never one after it, whichever node anchors it", async () => {
      const [a, b] = await engine.openPair();
      const at = manualClock(T0);
      const ids = await scenario(a, at, signer);
      const receipts = createReceipts({ ...receiptsDrivers(a), clock: at, network: "testnet", mirrorNodes });
      const first = await receipts.receipt(ids.anchored);
      expect(first.keyAnnouncement.sequenceNumber).toBe(1);
      // The domain set on the other node; the key's announcement with it queued there, then
      // abandoned once and queued again: the earlier announcement still stands meanwhile.
      await createOrganisations({ store: b, signer, clock: at }).set(ids.orgId, { domain: "receipts.example" }, "alice");
      const again = (await createKeyAnnouncements({ keys: recordsDrivers(b).keys, signer, clock: at })(ids.orgId))!;
      expect(again.generation).toBe(1);
      expect(decodeLedgerMessage(again.message)).toMatchObject({ type: "key", name: "Receipts Org", domain: "receipts.example" });
      const queue = (transactionId: string, state: "pending" | "abandoned") =>
        b.write((tx, t) =>
          q(
            tx.insert(t.ledgerTransactions).values({
              transactionId,
              kind: "key_announcement",
              orgId: ids.orgId,
              topicId: TOPIC,
              message: Buffer.from(again.message),
              keyFingerprint: Buffer.from(again.keyFingerprint),
              announcementGeneration: again.generation,
              validStartMs: 1_768_469_500_000,
              validSeconds: 120,
              state,
              nextAttemptAt: 0,
              createdAt: at.now(),
              updatedAt: at.now(),
            }),
          ),
        );
      await queue("0.0.2@1768469500.000000001", "abandoned");
      await queue("0.0.2@1768469500.000000002", "pending");
      const meanwhile = await receipts.receipt(ids.anchored);
      expect(meanwhile.keyAnnouncement).toEqual(first.keyAnnouncement);
      expect((await receipts.receiptText(ids.anchored)).text).toBe(JSON.stringify(await receipts.receipt(ids.anchored), null, 2));
      // Anchored on the other node after the record's message: the record's receipt keeps the
      // announcement before it (a verifier finds the new domain on the topic, docs/receipts.md §6).
      await anchorTransaction(b, "0.0.2@1768469500.000000002", 6);
      const after = await receipts.receipt(ids.anchored);
      expect(after.keyAnnouncement).toEqual(first.keyAnnouncement);
      expect({ ...after, issuedAt: null }).toEqual({ ...first, issuedAt: null });
      expect(JSON.parse((await receipts.receiptText(ids.anchored)).text)).toMatchObject({ keyAnnouncement: first.keyAnnouncement });
    });
  });

  describe(`${engine.name}: key announcements and record counts`, () => {
    const clock = manualClock(T0);
    const signer = createSigner({ masterKey: MASTER_KEY, workers: 0 });

    test("an organisation's announcement: its key, name and the seal key, one seal key when two nodes ask at once", async () => {
      const [a, b] = await engine.openPair();
      const org = await createOrganisations({ store: a, signer, clock }).create({ name: "Ärzte \"Nord\"" }, "alice");
      // Without a master key and with no seal key yet, nothing can be announced.
      expect(await createKeyAnnouncements({ keys: recordsDrivers(b).keys, signer: createSigner({ masterKey: null }), clock })(org.id)).toBeNull();
      const [x, y] = await Promise.all([createKeyAnnouncements({ keys: recordsDrivers(a).keys, signer, clock })(org.id), createKeyAnnouncements({ keys: recordsDrivers(b).keys, signer, clock })(org.id)]);
      expect(x).not.toBeNull();
      expect(Buffer.from(y!.message).equals(Buffer.from(x!.message))).toBe(true);
      const seals = await a.read((db, t) => q(db.select().from(t.signingKeys).where(eq(t.signingKeys.purpose, SEAL_KEY_PURPOSE))));
      expect(seals).toHaveLength(1);
      const [row] = await a.read((db, t) => q(db.select({ key: t.organisations.systemKeyFingerprint }).from(t.organisations).where(eq(t.organisations.id, org.id))));
      expect(Buffer.from(x!.keyFingerprint).equals(row!.key)).toBe(true);
      expect(decodeLedgerMessage(x!.message)).toEqual({
        v: 1,
        type: "key",
        orgId: org.id,
        name: "Ärzte \"Nord\"",
        algorithm: "ML-DSA-65",
        keyFingerprint: row!.key.toString("hex"),
        sealKeyFingerprint: seals[0]!.fingerprint.toString("hex"),
      });
      // Once named, the seal key is found without the master key.
      expect(await createKeyAnnouncements({ keys: recordsDrivers(b).keys, signer: createSigner({ masterKey: null }), clock })(org.id)).toEqual(x);
      expect(await createKeyAnnouncements({ keys: recordsDrivers(a).keys, signer, clock })("no-such-org")).toBeNull();
    });

    test("record counts by anchor state", async () => {
      const store = await engine.open();
      const counter = recordCounter(recordsDrivers(store).counts, { refreshMs: 0 });
      await scenario(store, clock, signer);
      const want = { pending: 1, accepted: 0, anchored: 2, abandoned: 0 };
      const counted = await waitFor("the counts", () => {
        const c = counter();
        return c.anchored === 2 ? c : undefined;
      });
      expect(counted).toEqual(want);
    });
  });
}

describe("PostgreSQL: record counts for /metrics never wait on the database", () => {
  test("none before the first count, then the last counted; one count at a time, at most one a refresh interval", async () => {
    const store = await POSTGRES.open();
    let counts = 0;
    const counting: Store = { ...store, read: (body) => (counts++, store.read(body)) };
    let now = 0;
    const counter = recordCounter(recordsDrivers(counting).counts, { refreshMs: 1000, now: () => now });
    expect(counter()).toEqual({});
    expect(counts).toBe(1); // started at once
    await waitFor("the first count", () => (counter().pending === 0 ? true : undefined));
    const signer = createSigner({ masterKey: MASTER_KEY, workers: 0 });
    const org = await createOrganisations({ store, signer, clock: manualClock(T0) }).create({ name: "Counted" }, "alice");
    await store.write((tx, t) => q(tx.update(t.organisations).set({ topicId: TOPIC }).where(eq(t.organisations.id, org.id))));
    await createRecords({ store, signer, clock: manualClock(T0), ledger: numberedLedger(), publicUrl: "https://verify.example.org", writes: createWriteQueue(recordsDrivers(store).writes) }).create(org.id, { docHash: hash("d"), filename: undefined });
    // Within the interval: the last counts, and no count started.
    now = 999;
    for (let i = 0; i < 5; i++) expect(counter()).toEqual({ pending: 0, accepted: 0, anchored: 0, abandoned: 0 });
    expect(counts).toBe(1);
    // Past it: the last counts still, one count started however many scrapes come meanwhile.
    now = 1000;
    for (let i = 0; i < 5; i++) expect(counter().pending).toBe(0);
    expect(counts).toBe(2);
    await waitFor("the next count", () => (counter().pending === 1 ? true : undefined));
    expect(counts).toBe(2);
  });
});

/** Copies the rows a receipt is built from, as they are, into another database. */
async function copyRows(from: Store, to: Store): Promise<void> {
  for (const table of ["signingKeys", "organisations", "serviceMeta", "records", "ledgerTransactions"] as const) {
    const rows = await from.read((db, t) => q(db.select().from(t[table])));
    if (rows.length > 0) await to.write((tx, t) => q(tx.insert(t[table]).values(rows as never).onConflictDoNothing()));
  }
}

describe("SQLite and PostgreSQL: the same rows give the same bytes", () => {
  let lite: Store;
  let post: Store;
  let s: Scenario;
  const clock = manualClock(T0);
  const signer = createSigner({ masterKey: MASTER_KEY, workers: 0 });
  const mirrorNodes = () => ["https://mirror-a.example", "https://mirror-b.example"];
  beforeAll(async () => {
    lite = await SQLITE.open();
    s = await scenario(lite, clock, signer);
    post = await POSTGRES.open();
    await copyRows(lite, post);
  });

  test("the snapshot statement answers the same row on both engines", async () => {
    for (const id of [s.anchored, s.pending, s.revoked]) {
      const [a, b] = await Promise.all([lite.read(() => q(firstRow(RECEIPT_SNAPSHOT, id))), post.read(() => q(firstRow(RECEIPT_SNAPSHOT, id)))]);
      expect(a).toBeDefined();
      // Blobs: a Uint8Array on SQLite, a Buffer on PostgreSQL; the same bytes.
      // The change counter is each database's own (a number on both).
      const plain = (row: object | undefined) => Object.fromEntries(Object.entries(row!).map(([k, v]) => [k, k === "gen" ? typeof v : v instanceof Uint8Array ? b64(v) : v]));
      expect(plain(b)).toEqual(plain(a));
    }
    expect(await post.read(() => q(firstRow(RECORD_COUNTS)))).toEqual((await lite.read(() => q(firstRow(RECORD_COUNTS))))!);
  });

  test("receipts and refusals, byte for byte", async () => {
    const [a, b] = [lite, post].map((store) => createReceipts({ ...receiptsDrivers(store), clock, network: "testnet", mirrorNodes }));
    const ids = [s.anchored, s.pending, s.revoked, "0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d", "not-a-uuid"];
    for (const id of ids) {
      // Twice: as built, and from what each kept.
      for (let i = 0; i < 2; i++) expect(await outcome(() => b!.receipt(id))).toEqual(await outcome(() => a!.receipt(id)));
    }
    expect(await outcome(() => a!.receipt(s.anchored))).toHaveProperty("receipt");
    expect(await outcome(() => a!.receipt(s.revoked))).toHaveProperty("receipt");
    expect(await outcome(() => a!.receipt(s.pending))).toMatchObject({ code: "ANCHOR_NOT_FINAL" });
  });

  test("key announcements and record counts", async () => {
    const [a, b] = [lite, post].map((store) => createKeyAnnouncements({ keys: recordsDrivers(store).keys, signer, clock }));
    const [x, y] = [await a!(s.orgId), await b!(s.orgId)];
    expect(Buffer.from(y!.message).equals(Buffer.from(x!.message))).toBe(true);
    expect(Buffer.from(y!.keyFingerprint).equals(Buffer.from(x!.keyFingerprint))).toBe(true);
    const counts = recordCounter(recordsDrivers(post).counts, { refreshMs: 0 });
    const want = recordCounter(recordsDrivers(lite).counts)();
    expect(want).toEqual({ pending: 1, accepted: 0, anchored: 2, abandoned: 0 });
    expect(await waitFor("the counts", () => (counts().anchored !== undefined ? counts() : undefined))).toEqual(want);
  });
});
