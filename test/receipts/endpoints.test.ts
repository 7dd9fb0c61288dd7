/**
 * The receipt routes (docs/receipts.md §2): GET /v1/records/{recordId}/receipt and the public
 * GET /verify/{recordId}/receipt, in-process against an app anchoring on its embedded ledger and
 * over HTTP against `docverify serve`: every field of §2.1 in order, payloads recomputed with
 * src/crypto, a batched record's inclusion proof recomputed here (RFC 9162 §2.1.3.2) into its
 * batch message's root, message bytes compared with the mirror node's, and every refusal. A
 * record anchored alone (rows a release before batches wrote) keeps `inclusion: null`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { App } from "../../src/app/sqlite.ts";
import { encodeRecordPayload, encodeSealPayload, isAlgorithm, keyFingerprint, verifyWithNoble } from "../../src/crypto/index.ts";
import { decodeLedgerMessage, encodeRevocationMessage, sha256Text } from "../../src/records/messages.ts";
import { createHash } from "node:crypto";
import { insertPendingMessage } from "../../src/anchoring/queue.ts";
import type { LedgerTransactionRow } from "../../src/anchoring/journal/ports.ts";
import { testJournal } from "../support/batches.ts";
import { Database } from "bun:sqlite";
import { receiptsDrivers } from "../support/drivers.ts";
import { createReceipts } from "../../src/receipts/receipt.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { DomainError } from "../../src/lib/errors.ts";
import { docHashOf } from "../support/records-fixture.ts";
import { cleanup, onCleanup, ROOT, startService, tempDir, testApp } from "../support/env.ts";
import { startServiceWithOrg, type ServiceWithOrg } from "../support/service-with-org.ts";
import { createRecordOnceTopicExists } from "../support/topic.ts";
import { waitFor } from "../support/wait.ts";
import { announced, type Announcement } from "./announce.ts";
import { databaseBefore } from "../support/previous-release.ts";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DATABASE_FILE, openCore } from "../../src/app/core.ts";
import { parseConfig } from "../../src/config/index.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { openDatabase } from "../../src/storage/db.ts";
import { q, sqliteStore } from "../../src/storage/store.ts";
import { eq } from "drizzle-orm";

afterAll(cleanup);

type Json = Record<string, any>;
const RECEIPT_TYPE = "application/vnd.docverify.receipt+json";
const HIGH = { DOCVERIFY_RATE_LIMIT_ANONYMOUS: "100000", DOCVERIFY_RATE_LIMIT_KEY: "100000", DOCVERIFY_RATE_LIMIT_ORG: "100000" };
const FAST = { DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: "1000" };
const TOP_LEVEL = ["v", "recordId", "originalDocHash", "authenticatedAt", "kind", "signerType", "signer", "seal", "anchor", "keyAnnouncement", "revocation", "mirrorNodes", "issuedAt"];
const KEY_FIELDS = ["algorithm", "publicKey", "payload", "signature"];
const ANCHOR_FIELDS = ["network", "topicId", "sequenceNumber", "consensusAt", "transactionId", "message", "runningHash", "inclusion"];
const ANNOUNCEMENT_FIELDS = ["topicId", "sequenceNumber", "consensusAt", "message"];
const INCLUSION_FIELDS = ["algorithm", "leafMessage", "leafIndex", "treeSize", "path"];
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const CONSENSUS = /^\d+\.\d{9}$/;
const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const bytes = (b64: string) => new Uint8Array(Buffer.from(b64, "base64"));
const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));
const sha256 = (...parts: Uint8Array[]) => new Uint8Array(createHash("sha256").update(Buffer.concat(parts)).digest());

/** RFC 9162 §2.1.3.2: the root an inclusion proof leads to from its leaf message, or null when the path does not fit. */
function rootOf(leafMessage: Uint8Array, leafIndex: number, treeSize: number, path: Uint8Array[]): Uint8Array | null {
  if (leafIndex >= treeSize) return null;
  let fn = leafIndex;
  let sn = treeSize - 1;
  let r = sha256(Uint8Array.of(0), leafMessage);
  for (const p of path) {
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      r = sha256(Uint8Array.of(1), p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn >>= 1;
        sn >>= 1;
      }
    } else r = sha256(Uint8Array.of(1), r, p);
    fn >>= 1;
    sn >>= 1;
  }
  return sn === 0 ? r : null;
}

/**
 * A batched anchor (docs/receipts.md §1 "Batches", §2.1 `inclusion`): `message` is organisation
 * `orgId`'s batch message, of the proof's tree size, listing `revoked`; the proof's leaf message,
 * its index and path recompute the batch's root. Answers the leaf message, which the caller checks.
 */
function expectProven(anchor: Json, orgId: string, revoked: string[] = []): Uint8Array {
  expect(Object.keys(anchor.inclusion)).toEqual(INCLUSION_FIELDS);
  const { algorithm, leafMessage, leafIndex, treeSize, path } = anchor.inclusion as { algorithm: string; leafMessage: string; leafIndex: number; treeSize: number; path: string[] };
  expect(algorithm).toBe("RFC9162-SHA256");
  expect(leafMessage).toMatch(BASE64);
  expect(Number.isInteger(leafIndex) && leafIndex >= 0 && Number.isInteger(treeSize) && leafIndex < treeSize).toBe(true);
  for (const h of path) expect(bytes(h).length).toBe(32);
  const batch = decodeLedgerMessage(bytes(anchor.message)) as Json;
  expect(Object.keys(batch)).toEqual(["v", "type", "orgId", "batch", "size", "root", "revoked"]);
  expect(batch).toMatchObject({ v: 1, type: "batch", orgId, size: treeSize, revoked });
  expect(Number.isInteger(batch.batch) && batch.batch >= 1).toBe(true);
  const root = rootOf(bytes(leafMessage), leafIndex, treeSize, path.map(bytes));
  expect(root === null ? null : Buffer.from(root).toString("hex")).toBe(batch.root);
  return bytes(leafMessage);
}

/**
 * Every field of docs/receipts.md §2.1, in order and of its type, and the payloads and
 * commitments recomputed from the receipt's own fields as docs/signing.md §3 and docs/records.md
 * §3 describe them.
 */
function expectWellFormed(r: Json, want: { recordId: string; docHash: string; topicId: string; orgId: string; batched: boolean }): void {
  expect(Object.keys(r)).toEqual(TOP_LEVEL);
  expect(r.v).toBe(1);
  expect(r.recordId).toBe(want.recordId);
  expect(r.originalDocHash).toBe(want.docHash);
  expect(r.authenticatedAt).toMatch(RFC3339_MS);
  expect(r.kind).toBe("record_only");
  expect(r.signerType).toBe("org");
  for (const k of [r.signer, r.seal]) {
    expect(Object.keys(k)).toEqual(KEY_FIELDS);
    expect(k.algorithm).toBe("ML-DSA-65");
    for (const f of ["publicKey", "payload", "signature"]) expect(k[f]).toMatch(BASE64);
  }
  expect(Object.keys(r.anchor)).toEqual(ANCHOR_FIELDS);
  expect(r.anchor).toMatchObject({ network: "local", topicId: want.topicId });
  expect(Number.isInteger(r.anchor.sequenceNumber) && r.anchor.sequenceNumber >= 1).toBe(true);
  expect(r.anchor.consensusAt).toMatch(CONSENSUS);
  expect(r.anchor.transactionId).toMatch(/^0\.0\.\d+@\d+\.\d{9}$/);
  expect(r.anchor.message).toMatch(BASE64);
  expect(bytes(r.anchor.runningHash).length).toBe(48);
  expect(Object.keys(r.keyAnnouncement)).toEqual(ANNOUNCEMENT_FIELDS);
  expect(r.keyAnnouncement.topicId).toBe(want.topicId);
  expect(Number.isInteger(r.keyAnnouncement.sequenceNumber)).toBe(true);
  expect(r.keyAnnouncement.consensusAt).toMatch(CONSENSUS);
  expect(Array.isArray(r.mirrorNodes) && r.mirrorNodes.every((m: unknown) => typeof m === "string")).toBe(true);
  expect(r.issuedAt).toMatch(RFC3339_MS);

  // docs/signing.md §3: the payloads are exactly the encodings of the receipt's own fields.
  const algorithm = r.signer.algorithm as string;
  if (!isAlgorithm(algorithm)) throw new Error(`unknown algorithm ${algorithm}`);
  const signerKey = bytes(r.signer.publicKey);
  const sealKey = bytes(r.seal.publicKey);
  const recordPayload = encodeRecordPayload({
    recordId: r.recordId,
    docHash: r.originalDocHash,
    signedAtMs: Date.parse(r.authenticatedAt),
    signerKeyFingerprint: keyFingerprint({ algorithm, publicKey: signerKey }),
  });
  expect(same(bytes(r.signer.payload), recordPayload)).toBe(true);
  const signature = bytes(r.signer.signature);
  const sealPayload = encodeSealPayload(recordPayload, signature, keyFingerprint({ algorithm: "ML-DSA-65", publicKey: sealKey }));
  expect(same(bytes(r.seal.payload), sealPayload)).toBe(true);
  // Checked with noble, the implementation the server does not sign with.
  expect(verifyWithNoble(algorithm, signerKey, recordPayload, signature)).toBe(true);
  expect(verifyWithNoble("ML-DSA-65", sealKey, sealPayload, bytes(r.seal.signature))).toBe(true);
  // docs/receipts.md §1: a batched record's anchor is its batch's message, with the proof of its
  // leaf; one anchored alone (before batches) is its own message, with none.
  if (want.batched) expect(r.anchor.inclusion).not.toBeNull();
  else expect(r.anchor.inclusion).toBeNull();
  const recordMessage = want.batched ? expectProven(r.anchor, want.orgId) : bytes(r.anchor.message);
  // docs/records.md §3: the record's message (the leaf, when batched) commits to this record, its key and both signatures.
  expect(decodeLedgerMessage(recordMessage)).toEqual({
    v: 1,
    type: "record",
    recordId: r.recordId,
    originalDocHash: r.originalDocHash,
    signedAt: r.authenticatedAt,
    signerPublicKeySha256: sha256Text(signerKey),
    signatureSha256: sha256Text(signature),
    sealSignatureSha256: sha256Text(bytes(r.seal.signature)),
  });
  // docs/receipts.md §1: the announcement names this very key and seal key.
  const announcement = JSON.parse(new TextDecoder().decode(bytes(r.keyAnnouncement.message))) as Json;
  expect(announcement).toMatchObject({
    v: 1,
    type: "key",
    algorithm: "ML-DSA-65",
    keyFingerprint: Buffer.from(keyFingerprint({ algorithm, publicKey: signerKey })).toString("hex"),
    sealKeyFingerprint: Buffer.from(keyFingerprint({ algorithm: "ML-DSA-65", publicKey: sealKey })).toString("hex"),
  });
}

/** The mirror node's copy of a topic message (the real Hedera mirror REST API's fields). */
async function mirrorMessage(url: string): Promise<{ message: Uint8Array; consensusAt: string; runningHash: Uint8Array }> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  const m = (await res.json()) as { message: string; consensus_timestamp: string; running_hash: string };
  return { message: bytes(m.message), consensusAt: m.consensus_timestamp, runningHash: bytes(m.running_hash) };
}

function expectDownload(res: Response, recordId: string): void {
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe(RECEIPT_TYPE);
  expect(res.headers.get("content-disposition")).toBe(`attachment; filename="docverify-receipt-${recordId}.json"`);
  expect(res.headers.get("cache-control")).toBe("no-store");
}

describe("receipts in-process", () => {
  let app: App;
  let request: (path: string, init?: RequestInit, peer?: string) => Promise<Response>;
  let key: string;
  let otherKey: string;
  let noApiKey: string;
  let orgId: string;
  let topicId: string;
  let announcement: Announcement;
  let anchoredId: string;
  let anchoredHash: string;
  let otherOrgRecord: string;
  const FILENAME = "Confidential <board> minutes & plans.pdf";

  const bearer = (k: string) => ({ authorization: `Bearer ${k}` });
  const createRecord = (hash: string, k = key, filename?: string) =>
    request("/v1/records", { method: "POST", headers: { "content-type": "application/json", ...bearer(k) }, body: JSON.stringify({ originalDocHash: hash, ...(filename ? { filename } : {}) }) });
  const anchored = (id: string) =>
    waitFor(`record ${id} to be anchored`, () => (app.db.$client.query("SELECT anchor_state FROM records WHERE id = ?").get(id) as { anchor_state: string }).anchor_state === "anchored" || undefined, 20_000);
  const credentialed = (id: string, k = key, headers: Record<string, string> = {}) => request(`/v1/records/${id}/receipt`, { headers: { ...bearer(k), ...headers } });
  const publicReceipt = (id: string, peer?: string) => request(`/verify/${id}/receipt`, {}, peer);

  beforeAll(async () => {
    ({ app, request } = await testApp({ env: { ...HIGH, ...FAST, DOCVERIFY_MIRROR_NODES: "https://mirror-a.example.org, http://mirror-b.example.org:5551/" } }));
    const org = await app.organisations.create({ name: "Receipts Ltd", apiAccess: true, addon: true, validated: true }, "test");
    const other = await app.organisations.create({ name: "Other Org Ltd", apiAccess: true, addon: true, validated: true }, "test");
    const noApi = await app.organisations.create({ name: "No API Ltd", apiAccess: false, addon: true, validated: true }, "test");
    orgId = org.id;
    key = (await app.apiKeys.mint({ orgId: org.id, environment: "live", revoke: true }, "test")).key;
    otherKey = (await app.apiKeys.mint({ orgId: other.id, environment: "live", revoke: true }, "test")).key;
    noApiKey = (await app.apiKeys.mint({ orgId: noApi.id, environment: "live" }, "test")).key;
    anchoredHash = docHashOf("receipts: anchored");
    const first = await createRecordOnceTopicExists(() => createRecord(anchoredHash, key, FILENAME));
    anchoredId = ((await first.json()) as Json).recordId;
    const fromOther = await createRecordOnceTopicExists(() => createRecord(docHashOf("receipts: other org"), otherKey));
    otherOrgRecord = ((await fromOther.json()) as Json).recordId;
    await anchored(anchoredId);
    await anchored(otherOrgRecord);
    topicId = (app.db.$client.query("SELECT topic_id FROM organisations WHERE id = ?").get(orgId) as { topic_id: string }).topic_id;
    announcement = await announced(app.db, orgId);
    await announced(app.db, other.id);
  }, 60_000);

  test("200 on both routes: every field of §2.1 in order, payloads as docs/signing.md recomputes them, as a download", async () => {
    for (const res of [await credentialed(anchoredId), await publicReceipt(anchoredId)]) {
      expectDownload(res, anchoredId);
      const r = (await res.json()) as Json;
      expectWellFormed(r, { recordId: anchoredId, docHash: anchoredHash, topicId, orgId, batched: true });
      expect(r.revocation).toBeNull();
      expect(r.keyAnnouncement).toEqual({
        topicId: announcement.topicId,
        sequenceNumber: announcement.sequenceNumber,
        consensusAt: announcement.consensusAt,
        message: Buffer.from(announcement.message).toString("base64"),
      });
    }
  });

  test("the anchored message (the record's batch message), its consensus time and running hash are the mirror node's, byte for byte", async () => {
    const r = (await (await credentialed(anchoredId)).json()) as Json;
    const mirror = await mirrorMessage(app.anchoring.links.topicMessageUrl(r.anchor.topicId, r.anchor.sequenceNumber));
    expect(same(bytes(r.anchor.message), mirror.message)).toBe(true);
    expect(r.anchor.consensusAt).toBe(mirror.consensusAt);
    expect(same(bytes(r.anchor.runningHash), mirror.runningHash)).toBe(true);
    const announcedThere = await mirrorMessage(app.anchoring.links.topicMessageUrl(topicId, r.keyAnnouncement.sequenceNumber));
    expect(same(bytes(r.keyAnnouncement.message), announcedThere.message)).toBe(true);
    expect(r.keyAnnouncement.consensusAt).toBe(announcedThere.consensusAt);
    // On a new topic the announcement comes before every record message (docs/receipts.md §1).
    expect(r.keyAnnouncement.sequenceNumber).toBeLessThan(r.anchor.sequenceNumber);
  });

  test("mirrorNodes are DOCVERIFY_MIRROR_NODES, in order, trailing slash dropped; issuedAt is the clock's", async () => {
    const before = Date.now();
    const r = (await (await publicReceipt(anchoredId)).json()) as Json;
    expect(r.mirrorNodes).toEqual(["https://mirror-a.example.org", "http://mirror-b.example.org:5551"]);
    expect(Date.parse(r.issuedAt)).toBeGreaterThanOrEqual(before - 1);
    expect(Date.parse(r.issuedAt)).toBeLessThanOrEqual(Date.now());
  });

  test("the receipt holds no filename, no organisation name and no key material beyond public keys", async () => {
    const text = await (await credentialed(anchoredId)).text();
    expect(app.db.$client.query("SELECT filename FROM records WHERE id = ?").get(anchoredId)).toEqual({ filename: FILENAME });
    for (const secret of [FILENAME, "Confidential", "board", "Receipts Ltd", key, key.slice(0, 20)]) expect(text).not.toContain(secret);
    expect(text).not.toContain("filename");
  });

  test("409 ANCHOR_NOT_FINAL with Retry-After before consensus, then 200 once anchored", async () => {
    const hash = docHashOf("receipts: not yet final");
    const created = (await (await createRecord(hash)).json()) as Json;
    expect(["pending", "accepted"]).toContain(created.anchorState);
    for (const res of [await credentialed(created.recordId), await publicReceipt(created.recordId)]) {
      expect(res.status).toBe(409);
      expect(((await res.json()) as Json).error.code).toBe("ANCHOR_NOT_FINAL");
      const retry = Number(res.headers.get("retry-after"));
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(30);
      expect(res.headers.get("content-type")).toStartWith("application/json");
    }
    await anchored(created.recordId);
    expectDownload(await credentialed(created.recordId), created.recordId);
  });

  test("409 ANCHOR_NOT_FINAL while the organisation's key announcement has not reached consensus", async () => {
    // A record whose receipt was never issued: one issued is kept with its anchored announcement
    // (a final state; the journal rewound below is a state the loop never writes).
    const fresh = (await (await createRecord(docHashOf("receipts: announcement not final"))).json()) as Json;
    await anchored(fresh.recordId);
    const db = app.db.$client;
    const saved = db.query("SELECT state, next_attempt_at FROM ledger_transactions WHERE transaction_id = ?").get(announcement.transactionId) as { state: string; next_attempt_at: number };
    expect(saved.state).toBe("anchored");
    // As the journal holds an announcement accepted but not final; not due for an hour, so the
    // anchor loop leaves it alone until it is restored below.
    db.query("UPDATE ledger_transactions SET state = 'accepted', next_attempt_at = ? WHERE transaction_id = ?").run(Date.now() + 3_600_000, announcement.transactionId);
    try {
      for (const res of [await credentialed(fresh.recordId), await publicReceipt(fresh.recordId)]) {
        expect(res.status).toBe(409);
        expect(((await res.json()) as Json).error).toMatchObject({ code: "ANCHOR_NOT_FINAL", message: expect.stringContaining("key announcement") });
        expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      }
    } finally {
      db.query("UPDATE ledger_transactions SET state = ?, next_attempt_at = ? WHERE transaction_id = ?").run(saved.state, saved.next_attempt_at, announcement.transactionId);
    }
    expect((await credentialed(fresh.recordId)).status).toBe(200);
  });

  test("Retry-After follows pending_anchor's policy: until typical finality, then 2 s, then 30 s; 5 s while no announcement is queued", async () => {
    const created = (await (await createRecord(docHashOf("receipts: retry policy"))).json()) as Json;
    const clock = manualClock();
    const receipts = createReceipts({ ...receiptsDrivers(sqliteStore(app.db)), clock, network: "local", mirrorNodes: () => [] });
    const retryAt = (ms: number, id = created.recordId as string) => {
      clock.set(ms);
      try {
        receipts.receipt(id);
      } catch (e) {
        expect(e).toBeInstanceOf(DomainError);
        expect((e as DomainError).code).toBe("ANCHOR_NOT_FINAL");
        return (e as DomainError).retryAfterSeconds;
      }
      throw new Error("a receipt was issued");
    };
    // Synchronous from here to the restore below: the anchor loop (on this thread) cannot run.
    const db = app.db.$client;
    const queued = (db.query("SELECT t.created_at, t.state FROM ledger_transactions t JOIN records r ON r.transaction_id = t.transaction_id WHERE r.id = ?").get(created.recordId) as { created_at: number; state: string });
    expect(queued.state).not.toBe("anchored");
    expect([retryAt(queued.created_at), retryAt(queued.created_at + 3_000), retryAt(queued.created_at + 30_000), retryAt(queued.created_at + 120_000)]).toEqual([5, 2, 2, 30]);
    const saved = db.query("SELECT state FROM ledger_transactions WHERE transaction_id = ?").get(announcement.transactionId) as { state: string };
    db.query("UPDATE ledger_transactions SET state = 'abandoned' WHERE transaction_id = ?").run(announcement.transactionId);
    try {
      expect(retryAt(Date.now(), anchoredId)).toBe(5);
    } finally {
      db.query("UPDATE ledger_transactions SET state = ? WHERE transaction_id = ?").run(saved.state, announcement.transactionId);
    }
  });

  test("404 NOT_FOUND alike for an unknown, malformed, abandoned and (credentialed) other organisation's id", async () => {
    const abandonedHash = docHashOf("receipts: abandoned");
    const abandoned = (await (await createRecord(abandonedHash)).json()) as Json;
    // As the anchor loop leaves a record whose batch's validity window closed without consensus:
    // the batch abandoned through the journal, its leaf and the record with it (so the loop never
    // anchors it after all).
    // The transaction id its 201 named: its batch's.
    const batchId = abandoned.anchor.transactionId as string;
    expect(app.db.$client.query("SELECT kind FROM ledger_transactions WHERE transaction_id = (SELECT transaction_id FROM records WHERE id = ?)").get(abandoned.recordId)).toEqual({ kind: "batch_message" });
    const store = sqliteStore(app.db);
    const [row] = await store.read((db, t) => q(db.select().from(t.ledgerTransactions).where(eq(t.ledgerTransactions.transactionId, batchId))));
    expect(await (await testJournal(store)).abandon(row as unknown as LedgerTransactionRow, "validity window closed")).not.toBeNull();
    expect(app.db.$client.query("SELECT anchor_state FROM records WHERE id = ?").get(abandoned.recordId)).toEqual({ anchor_state: "abandoned" });
    const cases: [string, () => Promise<Response>][] = [
      ["unknown (credentialed)", () => credentialed("0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d")],
      ["unknown (public)", () => publicReceipt("0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d")],
      ["uppercase id", () => credentialed(anchoredId.toUpperCase())],
      ["malformed (public)", () => publicReceipt("not-a-uuid")],
      ["braced", () => publicReceipt(`%7B${anchoredId}%7D`)],
      ["abandoned (credentialed)", () => credentialed(abandoned.recordId)],
      ["abandoned (public)", () => publicReceipt(abandoned.recordId)],
      ["other organisation's record", () => credentialed(otherOrgRecord)],
      ["own record, other organisation's key", () => credentialed(anchoredId, otherKey)],
    ];
    const bodies = new Set<string>();
    for (const [name, send] of cases) {
      const res = await send();
      expect({ name, status: res.status }).toEqual({ name, status: 404 });
      bodies.add(await res.text());
    }
    expect([...bodies].map((b) => JSON.parse(b))).toEqual([{ error: { code: "NOT_FOUND", message: "No such record." } }]);
    // The other organisation's record is public all the same (the verify page's download).
    expect((await publicReceipt(otherOrgRecord)).status).toBe(200);
  });

  test("the credentialed route: 401 without or with an unusable credential, 402 without API access, 403 with an Origin", async () => {
    const cases: [string, Record<string, string>, number, string][] = [
      ["no credential", {}, 401, "UNAUTHENTICATED"],
      ["unknown key", bearer("dv_live_short"), 401, "UNAUTHENTICATED"],
      ["organisation without API access", bearer(noApiKey), 402, "PAYMENT_REQUIRED"],
      ["Origin header", { ...bearer(key), origin: "https://example.com" }, 403, "FORBIDDEN"],
    ];
    for (const [name, headers, status, code] of cases) {
      const res = await request(`/v1/records/${anchoredId}/receipt`, { headers });
      const body = (await res.json()) as Json;
      expect({ name, status: res.status, code: body.error?.code }).toEqual({ name, status, code });
      expect(res.headers.get("x-ratelimit-limit")).not.toBeNull();
    }
  });

  test("the public route needs no credential, ignores one, and takes a browser's Origin", async () => {
    expectDownload(await request(`/verify/${anchoredId}/receipt`, { headers: { authorization: "Bearer nonsense", origin: "https://elsewhere.example" } }), anchoredId);
  });

  test("a revoked record's receipt carries the reason, the time and the revocation's anchor: its batch's id with its own message and nulls before consensus, the mirror's batch message and its leaf's proof after", async () => {
    const hash = docHashOf("receipts: revoked");
    const created = (await (await createRecord(hash)).json()) as Json;
    await anchored(created.recordId);
    const res = await request(`/v1/records/${created.recordId}/revoke`, { method: "POST", headers: { "content-type": "application/json", ...bearer(key) }, body: JSON.stringify({ reason: "SUPERSEDED" }) });
    expect(res.status).toBe(200);
    // Synchronously after the revocation committed, read the journal and build the receipt with
    // nothing in between (the anchor loop runs on this thread): the revocation is not final yet.
    const receipts = createReceipts({ ...receiptsDrivers(sqliteStore(app.db)), clock: app.clock, network: "local", mirrorNodes: () => [] });
    // The record carries its revocation's batch; the revocation's own message is the batch's leaf.
    const row = app.db.$client
      .query(
        `SELECT r.revoked_at, b.transaction_id, b.kind, b.state, l.message FROM records r
           JOIN ledger_transactions b ON b.transaction_id = r.revocation_transaction_id
           JOIN ledger_transactions l ON l.batch_transaction_id = b.transaction_id AND l.record_id = r.id AND l.kind = 'revocation_message'
          WHERE r.id = ?`,
      )
      .get(created.recordId) as { revoked_at: number; transaction_id: string; kind: string; state: string; message: Uint8Array };
    const early = receipts.receipt(created.recordId) as Json;
    expect(row).toMatchObject({ kind: "batch_message", state: "open" });
    expect(Object.keys(early.revocation)).toEqual(["reason", "revokedAt", "anchor"]);
    expect(early.revocation).toEqual({
      reason: "SUPERSEDED",
      revokedAt: new Date(row.revoked_at).toISOString(),
      anchor: {
        network: "local",
        topicId,
        sequenceNumber: null,
        consensusAt: null,
        transactionId: row.transaction_id,
        message: Buffer.from(row.message).toString("base64"),
        runningHash: null,
        inclusion: null,
      },
    });
    expect(decodeLedgerMessage(row.message)).toMatchObject({ type: "revocation", recordId: created.recordId, reason: "SUPERSEDED" });

    const final = await waitFor("the revocation to be anchored", async () => {
      const r = (await (await publicReceipt(created.recordId)).json()) as Json;
      return r.revocation.anchor.sequenceNumber !== null ? r : undefined;
    });
    expect(Object.keys(final.revocation.anchor)).toEqual(ANCHOR_FIELDS);
    expect(final.revocation.anchor.transactionId).toBe(row.transaction_id);
    expect(final.revocation.anchor.sequenceNumber).toBeGreaterThan(final.anchor.sequenceNumber);
    // Its batch's message, listing the record; the proof leads from the revocation's own message to its root.
    expect(same(expectProven(final.revocation.anchor, orgId, [created.recordId]), row.message)).toBe(true);
    const mirror = await mirrorMessage(app.anchoring.links.topicMessageUrl(topicId, final.revocation.anchor.sequenceNumber));
    expect(same(bytes(final.revocation.anchor.message), mirror.message)).toBe(true);
    expect(final.revocation.anchor.consensusAt).toBe(mirror.consensusAt);
    expect(same(bytes(final.revocation.anchor.runningHash), mirror.runningHash)).toBe(true);
    // The rest of the receipt did not change with the revocation.
    expectWellFormed(final, { recordId: created.recordId, docHash: hash, topicId, orgId, batched: true });
  }, 30_000);

  test("public keys kept between receipts: a key row changed in place (any connection) is in the very next receipt", async () => {
    const receipts = createReceipts({ ...receiptsDrivers(sqliteStore(app.db)), clock: app.clock, network: "local", mirrorNodes: () => [] });
    const first = receipts.receipt(anchoredId) as Json;
    expect({ ...(receipts.receipt(anchoredId) as Json), issuedAt: null }).toEqual({ ...first, issuedAt: null });
    const fingerprint = (app.db.$client.query("SELECT seal_fingerprint AS f FROM records WHERE id = ?").get(anchoredId) as { f: Uint8Array }).f;
    const original = (app.db.$client.query("SELECT public_key FROM signing_keys WHERE fingerprint = ?").get(fingerprint) as { public_key: Uint8Array }).public_key;
    const other = new Database((app.db.$client.query("PRAGMA database_list").get() as { file: string }).file);
    try {
      const changed = Uint8Array.from(original, (b, i) => (i === 0 ? b ^ 1 : b));
      other.query("UPDATE signing_keys SET public_key = ? WHERE fingerprint = ?").run(changed, fingerprint);
      expect((receipts.receipt(anchoredId) as Json).seal.publicKey).toBe(Buffer.from(changed).toString("base64"));
      other.query("UPDATE signing_keys SET public_key = ? WHERE fingerprint = ?").run(original, fingerprint);
      expect((receipts.receipt(anchoredId) as Json).seal.publicKey).toBe(first.seal.publicKey);
    } finally {
      other.close();
    }
  });

  test("a receipt's fixed part kept between requests follows any change to the record's row from any connection: signed columns, kind, topic", async () => {
    const receipts = createReceipts({ ...receiptsDrivers(sqliteStore(app.db)), clock: app.clock, network: "local", mirrorNodes: () => [] });
    const first = receipts.receipt(anchoredId) as Json;
    const again = receipts.receipt(anchoredId) as Json;
    expect({ ...again, issuedAt: null }).toEqual({ ...first, issuedAt: null });
    expect(JSON.stringify(again)).toBe(JSON.stringify({ ...first, issuedAt: again.issuedAt })); // the same fields, in the same order
    const other = new Database((app.db.$client.query("PRAGMA database_list").get() as { file: string }).file);
    try {
      const row = other.query("SELECT signature, kind, topic_id FROM records WHERE id = ?").get(anchoredId) as { signature: Uint8Array; kind: string; topic_id: string };
      // A signed column (the change counter moves): the next receipt carries the stored bytes.
      const flipped = Uint8Array.from(row.signature, (b, i) => (i === 0 ? b ^ 1 : b));
      other.query("UPDATE records SET signature = ? WHERE id = ?").run(flipped, anchoredId);
      expect((receipts.receipt(anchoredId) as Json).signer.signature).toBe(Buffer.from(flipped).toString("base64"));
      other.query("UPDATE records SET signature = ? WHERE id = ?").run(row.signature, anchoredId);
      expect((receipts.receipt(anchoredId) as Json).signer.signature).toBe(first.signer.signature);
      // Columns the counter does not watch are compared with the row on every request.
      other.query("UPDATE records SET kind = 'contract' WHERE id = ?").run(anchoredId);
      expect((receipts.receipt(anchoredId) as Json).kind).toBe("contract");
      other.query("UPDATE records SET kind = ? WHERE id = ?").run(row.kind, anchoredId);
      expect((receipts.receipt(anchoredId) as Json).kind).toBe(first.kind);
      other.query("UPDATE records SET topic_id = '0.0.424242' WHERE id = ?").run(anchoredId);
      expect(() => receipts.receipt(anchoredId)).toThrow(expect.objectContaining({ code: "ANCHOR_NOT_FINAL" })); // the announcement is on the record's real topic
      other.query("UPDATE records SET topic_id = ? WHERE id = ?").run(row.topic_id, anchoredId);
      expect({ ...(receipts.receipt(anchoredId) as Json), issuedAt: null }).toEqual({ ...first, issuedAt: null });
    } finally {
      other.close();
    }
  });

  test("the record's row kept between receipts follows a revocation made by another connection in the very next receipt, as text and as object", async () => {
    const receipts = createReceipts({ ...receiptsDrivers(sqliteStore(app.db)), clock: app.clock, network: "local", mirrorNodes: () => [] });
    const text = () => JSON.parse((receipts.receiptText(anchoredId) as { text: string }).text) as Json;
    expect([text().revocation, text().revocation]).toEqual([null, null]);
    const other = openDatabase({ path: (app.db.$client.query("PRAGMA database_list").get() as { file: string }).file });
    // The revocation's message written by the other connection as a release before batches wrote
    // it (its own pending message): what matters is that the next receipt sees the row as it is
    // now. Nothing below awaits until it is taken back out, so the anchor loop (on this thread)
    // never sees it.
    const revokedAtMs = Date.UTC(2026, 0, 2);
    const id = app.anchoring.queue.newTransactionId();
    const message = encodeRevocationMessage({ recordId: anchoredId, reason: "SUPERSEDED", revokedAtMs });
    try {
      insertPendingMessage(other, { ...id, kind: "revocation_message", orgId, recordId: anchoredId, topicId, message, now: Date.now() });
      other.$client.query("UPDATE records SET revoked_at = ?, revocation_reason = 'SUPERSEDED', revocation_transaction_id = ? WHERE id = ?").run(revokedAtMs, id.transactionId, anchoredId);
      expect(text().revocation).toEqual({
        reason: "SUPERSEDED",
        revokedAt: "2026-01-02T00:00:00.000Z",
        anchor: { network: "local", topicId, sequenceNumber: null, consensusAt: null, transactionId: id.transactionId, message: Buffer.from(message).toString("base64"), runningHash: null, inclusion: null },
      });
      expect((receipts.receipt(anchoredId) as Json).revocation.reason).toBe("SUPERSEDED");
      other.$client.query("UPDATE records SET revoked_at = NULL, revocation_reason = NULL, revocation_transaction_id = NULL WHERE id = ?").run(anchoredId);
      expect(text().revocation).toBeNull();
    } finally {
      other.$client.query("UPDATE records SET revoked_at = NULL, revocation_reason = NULL, revocation_transaction_id = NULL WHERE id = ?").run(anchoredId);
      other.$client.query("DELETE FROM ledger_transactions WHERE transaction_id = ?").run(id.transactionId);
      other.$client.close();
    }
  });

  test("the verify page links the receipt for anchored records only, and the link downloads it", async () => {
    const page = await (await request(`/verify/${anchoredId}`)).text();
    expect(page).toContain(`<a href="/verify/${anchoredId}/receipt" download="docverify-receipt-${anchoredId}.json">Download the receipt</a>: it proves this record without this service.`);
    const href = /<a href="([^"]+)" download=/.exec(page)![1]!;
    expectDownload(await request(href), anchoredId);

    const waiting = (await (await createRecord(docHashOf("receipts: page before consensus"))).json()) as Json;
    const before = await (await request(`/verify/${waiting.recordId}`)).text();
    expect(before).toContain("Awaiting the ledger");
    expect(before).not.toContain("/receipt");
    expect(before).not.toContain("Download the receipt");
  });
});

describe("receipts: the public route's rate limit", () => {
  test("429 RATE_LIMITED with Retry-After once a client IP has spent the anonymous limit, shared with anonymous verification; other IPs unaffected", async () => {
    const { request } = await testApp({ env: { DOCVERIFY_RATE_LIMIT_ANONYMOUS: "3" } });
    const id = "0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d";
    const first = await request(`/verify/${id}/receipt`, {}, "198.51.100.7");
    expect(first.status).toBe(404);
    expect(first.headers.get("x-ratelimit-limit")).toBe("3");
    expect(first.headers.get("x-ratelimit-remaining")).toBe("2");
    const verification = await request("/v1/verifications", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ originalDocHash: docHashOf("x") }) }, "198.51.100.7");
    expect(verification.status).toBe(200);
    expect((await request(`/verify/${id}/receipt`, {}, "198.51.100.7")).status).toBe(404);
    const limited = await request(`/verify/${id}/receipt`, {}, "198.51.100.7");
    expect(limited.status).toBe(429);
    expect(((await limited.json()) as Json).error.code).toBe("RATE_LIMITED");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get("x-ratelimit-remaining")).toBe("0");
    expect((await request(`/verify/${id}/receipt`, {}, "198.51.100.8")).status).toBe(404);
  });
});

describe("receipts over HTTP against docverify serve", () => {
  let s: ServiceWithOrg;
  let recordId: string;
  let hash: string;
  let topicId: string;
  const post = (path: string, body: unknown) =>
    fetch(s.svc.url + path, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${s.key}` }, body: JSON.stringify(body) });

  beforeAll(async () => {
    s = await startServiceWithOrg({ env: { ...HIGH, ...FAST }, orgName: "Served Receipts Ltd" });
    hash = docHashOf("receipts over http");
    const created = await createRecordOnceTopicExists(() => post("/v1/records", { originalDocHash: hash }));
    recordId = ((await created.json()) as Json).recordId;
  }, 60_000);

  test("409 with Retry-After before consensus, then 200 with every field, the mirror's bytes and the local ledger's mirror suggested", async () => {
    const early = await fetch(`${s.svc.url}/verify/${recordId}/receipt`);
    expect(early.status).toBe(409);
    expect(Number(early.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(((await early.json()) as Json).error.code).toBe("ANCHOR_NOT_FINAL");

    const topic = await waitFor("the record's topic", () => (s.admin.db.$client.query("SELECT topic_id FROM records WHERE id = ?").get(recordId) as { topic_id: string } | null)?.topic_id);
    topicId = topic;
    await waitFor("the record to be anchored", () => (s.admin.db.$client.query("SELECT anchor_state FROM records WHERE id = ?").get(recordId) as { anchor_state: string }).anchor_state === "anchored" || undefined, 20_000);
    await announced(s.admin.db, s.org.id);

    const res = await fetch(`${s.svc.url}/v1/records/${recordId}/receipt`, { headers: { authorization: `Bearer ${s.key}` } });
    expectDownload(res, recordId);
    const text = await res.text();
    const r = JSON.parse(text) as Json;
    expectWellFormed(r, { recordId, docHash: hash, topicId, orgId: s.org.id, batched: true });
    // The page's download is the same receipt but for the time it was issued.
    const viaPage = (await (await fetch(`${s.svc.url}/verify/${recordId}/receipt`)).json()) as Json;
    expect({ ...viaPage, issuedAt: null }).toEqual({ ...r, issuedAt: null });

    // No DOCVERIFY_MIRROR_NODES: the embedded ledger's two mirror listeners (docs/receipts.md §3),
    // the first the one the record's links name; each serves the ledger's bytes.
    const verification = (await (await post("/v1/verifications", { originalDocHash: hash })).json()) as Json;
    const mirrorUrl = verification.matches[0].anchor.mirrorNodeUrl as string;
    expect(r.mirrorNodes).toHaveLength(2);
    expect(r.mirrorNodes[0]).toBe(new URL(mirrorUrl).origin);
    expect(new Set(r.mirrorNodes).size).toBe(2);
    for (const base of r.mirrorNodes as string[]) {
      const mirror = await mirrorMessage(`${base}/api/v1/topics/${r.anchor.topicId}/messages/${r.anchor.sequenceNumber}`);
      expect(same(bytes(r.anchor.message), mirror.message)).toBe(true);
      expect(r.anchor.consensusAt).toBe(mirror.consensusAt);
      expect(same(bytes(r.anchor.runningHash), mirror.runningHash)).toBe(true);
      const announcedThere = await mirrorMessage(`${base}/api/v1/topics/${topicId}/messages/${r.keyAnnouncement.sequenceNumber}`);
      expect(same(bytes(r.keyAnnouncement.message), announcedThere.message)).toBe(true);
      expect(r.keyAnnouncement.consensusAt).toBe(announcedThere.consensusAt);
    }
  }, 60_000);

  test("the credentialed route refuses another organisation's key with 404 and no credential with 401", async () => {
    const other = await s.admin.organisations.create({ name: "Stranger Ltd", apiAccess: true, addon: true, validated: true }, "test");
    const strangerKey = (await s.admin.apiKeys.mint({ orgId: other.id, environment: "live" }, "test")).key;
    const refused = await fetch(`${s.svc.url}/v1/records/${recordId}/receipt`, { headers: { authorization: `Bearer ${strangerKey}` } });
    expect(refused.status).toBe(404);
    expect(((await refused.json()) as Json).error.code).toBe("NOT_FOUND");
    const anonymous = await fetch(`${s.svc.url}/v1/records/${recordId}/receipt`);
    expect(anonymous.status).toBe(401);
  });
});

const SCHEMA = "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name";

describe("receipts: a data folder from the release before migration 0007", () => {
  test(
    "opens, migrates, and serves receipts of its records once the organisation's key is announced",
    async () => {
      const data = tempDir();
      // Consensus in 100 ms: nothing here is looked at before it (the 409s are the tests above).
      const env = { DOCVERIFY_DATA_DIR: data, ...HIGH, DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: "100" };
      // The folder as that release left it: an organisation with its topic and an anchored record,
      // written by a serve as that release wrote it (its own message: no batches), then migration
      // 0007 taken back out, so that the schema is exactly the previous release's (checked below)
      // and no announcement exists.
      const first = await startService({ env: { ...env, DOCVERIFY_BATCH_WINDOW_MS: "0" } });
      const admin = openCore({ config: parseConfig({ DOCVERIFY_DATA_DIR: data }), log: memoryLogger() });
      const org = await admin.organisations.create({ name: "Upgraded Ltd", apiAccess: true, addon: true, validated: true }, "test");
      const key = (await admin.apiKeys.mint({ orgId: org.id, environment: "live" }, "test")).key;
      const hash = docHashOf("receipts: before 0007");
      const post = (url: string) =>
        fetch(`${url}/v1/records`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body: JSON.stringify({ originalDocHash: hash }) });
      const recordId = ((await (await createRecordOnceTopicExists(() => post(first.url))).json()) as Json).recordId as string;
      await waitFor("the record to be anchored", () => (admin.db.$client.query("SELECT anchor_state FROM records WHERE id = ?").get(recordId) as { anchor_state: string }).anchor_state === "anchored" || undefined, 20_000);
      await admin.close();
      expect(await first.stop()).toBe(0);

      const db = openDatabase({ path: join(data, DATABASE_FILE) });
      const journal = JSON.parse(readFileSync(join(ROOT, "migrations", "meta", "_journal.json"), "utf8")) as { entries: { tag: string; when: number }[] };
      const since = journal.entries.find((e) => e.tag.startsWith("0007"))!.when;
      // Later migrations taken back out too (0015: batches; 0014: the seal key an announcement names; 0013: the
      // key lifecycle's columns and its one compromise message per key; 0012: the organisations' name keys; 0011: the domain
      // and the announcement generations; 0010: the change counter, its triggers and the covering
      // indexes; 0009: passkeys, challenges, sessions, and the old records_one_active; 0008:
      // persons and enrolment links; all empty here).
      for (const { name } of db.$client.query("SELECT name FROM sqlite_master WHERE type = 'trigger' AND sql LIKE '%change_counter%'").all() as { name: string }[]) {
        db.$client.run(`DROP TRIGGER ${name}`);
      }
      db.$client.run("DROP TABLE change_counter");
      expect(db.$client.query("SELECT DISTINCT kind, batch_leaf FROM ledger_transactions WHERE kind <> 'key_announcement' ORDER BY kind").all()).toEqual([
        { kind: "record_message", batch_leaf: 0 },
        { kind: "topic_create", batch_leaf: 0 },
      ]);
      for (const index of ["ledger_transactions_open", "ledger_transactions_leaves", "ledger_transactions_one_batch", "ledger_transactions_work"]) db.$client.run(`DROP INDEX ${index}`);
      for (const column of ["batch_leaf", "batch_transaction_id", "leaf_index", "inclusion_path", "batch_sequence", "batch_size"]) db.$client.run(`ALTER TABLE ledger_transactions DROP COLUMN ${column}`);
      db.$client.run("CREATE INDEX `ledger_transactions_work` ON `ledger_transactions` (`state`,`next_attempt_at`)");
      db.$client.run("ALTER TABLE ledger_transactions DROP COLUMN seal_fingerprint");
      db.$client.run("DROP INDEX ledger_transactions_one_compromise");
      for (const column of ["replaces", "retired_at", "compromised_since", "compromised_at"]) db.$client.run(`ALTER TABLE signing_keys DROP COLUMN ${column}`);
      db.$client.run("ALTER TABLE api_keys DROP COLUMN expires_at");
      db.$client.run("DROP INDEX verifications_scope");
      db.$client.run("CREATE INDEX `verifications_scope` ON `verifications` (`org_id`,`environment`,`id`)");
      db.$client.run("DROP INDEX records_doc_hash");
      db.$client.run("CREATE INDEX `records_doc_hash` ON `records` (`doc_hash`)");
      db.$client.run("DROP TABLE passkeys");
      db.$client.run("DROP TABLE app_challenges");
      db.$client.run("DROP TABLE app_sessions");
      db.$client.run("DROP INDEX records_person");
      db.$client.run("DROP INDEX records_one_active");
      db.$client.run("CREATE UNIQUE INDEX `records_one_active` ON `records` (`org_id`,`doc_hash`) WHERE anchor_state <> 'abandoned' AND revoked_at IS NULL");
      db.$client.run("DROP TABLE enrolments");
      db.$client.run("DROP TABLE persons");
      db.$client.run("DELETE FROM ledger_transactions WHERE kind = 'key_announcement'");
      db.$client.run("DROP INDEX ledger_transactions_one_announcement");
      // 0012: the name key and its unique index.
      db.$client.run("DROP INDEX organisations_name_key");
      db.$client.run("ALTER TABLE organisations DROP COLUMN name_key");
      // 0011: the domain and the announcement generations (its trigger went with the counter's).
      db.$client.run("ALTER TABLE ledger_transactions DROP COLUMN announcement_generation");
      db.$client.run("ALTER TABLE organisations DROP COLUMN announcement_generation");
      db.$client.run("ALTER TABLE organisations DROP COLUMN domain");
      db.$client.run("ALTER TABLE ledger_transactions DROP COLUMN key_fingerprint");
      db.$client.query("DELETE FROM __drizzle_migrations WHERE created_at >= ?").run(since);
      const previous = databaseBefore("0007");
      const normal = (rows: unknown[]) => (rows as { sql: string | null }[]).map((r) => ({ ...r, sql: r.sql?.replace(/\s+/g, " ").replace(/ ?, ?/g, ",") }));
      expect(normal(db.$client.query(SCHEMA).all())).toEqual(normal(previous.$client.query(SCHEMA).all()));
      const before = db.$client.query("SELECT * FROM records WHERE id = ?").get(recordId);
      db.$client.close();
      previous.$client.close();

      const second = await startService({ env });
      const upgraded = openCore({ config: parseConfig({ DOCVERIFY_DATA_DIR: data }), log: memoryLogger() });
      onCleanup(() => upgraded.close());
      expect(upgraded.db.$client.query("SELECT * FROM records WHERE id = ?").get(recordId)).toEqual(before);
      const announcement = await announced(upgraded.db, org.id);
      const res = await fetch(`${second.url}/verify/${recordId}/receipt`);
      expectDownload(res, recordId);
      const r = (await res.json()) as Json;
      const topicId = (upgraded.db.$client.query("SELECT topic_id FROM organisations WHERE id = ?").get(org.id) as { topic_id: string }).topic_id;
      // Its message sent alone, as that release sent it: no inclusion proof.
      expectWellFormed(r, { recordId, docHash: hash, topicId, orgId: org.id, batched: false });
      expect(r.keyAnnouncement.message).toBe(Buffer.from(announcement.message).toString("base64"));
      for (const base of r.mirrorNodes as string[]) {
        const mirror = await mirrorMessage(`${base}/api/v1/topics/${topicId}/messages/${r.anchor.sequenceNumber}`);
        expect(same(bytes(r.anchor.message), mirror.message)).toBe(true);
        // On a topic that predates announcements, the record's message comes first (docs/receipts.md §1).
        expect(r.keyAnnouncement.sequenceNumber).toBeGreaterThan(r.anchor.sequenceNumber);
        const announcedThere = await mirrorMessage(`${base}/api/v1/topics/${topicId}/messages/${r.keyAnnouncement.sequenceNumber}`);
        expect(same(bytes(r.keyAnnouncement.message), announcedThere.message)).toBe(true);
        expect(r.keyAnnouncement.consensusAt).toBe(announcedThere.consensusAt);
      }
    },
    90_000,
  );
});
