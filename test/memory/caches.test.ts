/**
 * Every in-memory cache is bounded in bytes (docs/operations.md, "Memory"): the Lru that most of
 * them are, each cache through its owner under many distinct inserts (with its real, default
 * budget: the inserts are what it takes to fill it), and a running service filled by many distinct
 * requests, read through /metrics (docverify_cache_bytes against docverify_cache_budget_bytes).
 * Count-based, never timed. Then the release once the service is quiet.
 *
 * The data is written straight into the database (as the benchmark's dataset is): thousands of
 * organisations, persons and keys, and tens of thousands of anchored records whose signatures are
 * random bytes (they verify as invalid, which the caches keep just the same).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createApp, type App } from "../../src/app/sqlite.ts";
import { type Core } from "../../src/app/core.ts";
import { parseConfig } from "../../src/config/index.ts";
import { createSigner, createVerificationMemo, keyFingerprint } from "../../src/crypto/index.ts";
import { MEMO_BYTES } from "../../src/crypto/memo.ts";
import { ENTRY_BYTES, Lru, type CacheSize, type NamedCache } from "../../src/lib/lru.ts";
import { PRIVATE_KEY_CACHE_BYTES, PUBLIC_KEY_CACHE_BYTES } from "../../src/crypto/signer.ts";
import { createAddresses } from "../../src/http/routable.ts";
import { keysDrivers, receiptsDrivers, logDrivers, verificationDrivers } from "../support/drivers.ts";
import { createCredentials } from "../../src/keys/credentials.ts";
import { createRateLimiter, RATE_LIMIT_BYTES } from "../../src/keys/rate-limit.ts";
import { createConsensusTexts } from "../../src/lib/formats.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { createReceipts } from "../../src/receipts/receipt.ts";
import { createIdGenerator } from "../../src/verification/log/ids.ts";
import { createVerificationLog } from "../../src/verification/log/service.ts";
import { createListQueries, LIST_QUERIES_BYTES } from "../../src/verification/query.ts";
import { createVerifier } from "../../src/verification/verify.ts";
import { consensusOf, createBenchOrganisations, INSERT_BATCH_SQL, INSERT_LEAF_SQL, INSERT_LOG_SQL, INSERT_RECORD_MESSAGE_SQL, INSERT_RECORD_SQL } from "../../scripts/bench/dataset.ts";
import { merkleTree } from "../../src/anchoring/merkle.ts";
import { encodeBatchMessage } from "../../src/records/messages.ts";
import { parseExposition, sampleValue } from "../support/prometheus.ts";
import { cleanup, tempDir } from "../support/env.ts";
import { waitFor } from "../support/wait.ts";

afterAll(cleanup);

/** Bounds of the per-insert checks below: never above the budget, and, once filled, near it. */
function expectWithin(name: string, s: CacheSize): void {
  if (!(s.bytes <= s.maxBytes) || s.bytes < 0 || s.entries < 0) throw new Error(`${name}: ${s.bytes} bytes in ${s.entries} entries, budget ${s.maxBytes}`);
}
/** Full: at least four fifths of its budget (what the next entry would not fit in, or a rate limiter's trim to nine tenths), or at its entry bound. */
function expectFull(name: string, s: CacheSize, maxEntries = Infinity): void {
  expectWithin(name, s);
  if (!(s.bytes >= s.maxBytes * 0.8 || s.entries >= maxEntries)) throw new Error(`${name} was not filled: ${s.bytes} of ${s.maxBytes} bytes, ${s.entries} entries`);
}
const statsOf = (caches: readonly NamedCache[], name: string): CacheSize => {
  const c = caches.find((x) => x.name === name);
  if (c === undefined) throw new Error(`no cache ${name} among ${caches.map((x) => x.name).join(", ")}`);
  return c.stats();
};
const hex = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("hex");
function randomBytes(n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let o = 0; o < n; o += 65_536) crypto.getRandomValues(out.subarray(o, Math.min(n, o + 65_536)));
  return out;
}
const randomHash = () => `sha256:${hex(randomBytes(32))}`;

describe("Lru: bounded in bytes", () => {
  test("bytes never pass maxBytes and are always the sum of what is held, through sets, replacements, deletions and prunes", () => {
    const sizes = new Map<number, number>();
    const lru = new Lru<number, string>({ maxBytes: 50_000, bytesOf: (k, v) => 8 + v.length });
    for (let i = 0; i < 20_000; i++) {
      const key = Math.floor(Math.random() * 3_000);
      const op = Math.random();
      if (op < 0.7) lru.set(key, "x".repeat(Math.floor(Math.random() * 2_000)));
      else if (op < 0.9) lru.get(key);
      else if (op < 0.98) lru.delete(key);
      else lru.prune((k) => k % 7 === 0);
      expect(lru.bytes).toBeLessThanOrEqual(50_000);
    }
    // The count kept equals the entries' own sizes, recounted.
    let recount = 0;
    lru.prune((k, v) => {
      recount += ENTRY_BYTES + 8 + v.length;
      sizes.set(k, v.length);
      return false;
    });
    expect(lru.bytes).toBe(recount);
    expect(lru.size).toBe(sizes.size);
    lru.clear();
    expect(lru.stats()).toEqual({ entries: 0, bytes: 0, maxBytes: 50_000 });
  });

  test("an entry larger than the whole budget is not kept, and the value its key held goes", () => {
    const lru = new Lru<string, string>({ maxBytes: 1_000, bytesOf: (_k, v) => v.length });
    lru.set("a", "small");
    lru.set("b", "also small");
    lru.set("a", "y".repeat(5_000));
    expect(lru.get("a")).toBeUndefined();
    expect(lru.get("b")).toBe("also small");
    expect(lru.bytes).toBe(ENTRY_BYTES + "also small".length);
  });

  test("the least recently used goes first; with refreshOnHit false, the oldest inserted; maxEntries bounds it too", () => {
    const lru = new Lru<string, number>({ maxBytes: 1 << 20, maxEntries: 3, bytesOf: () => 0 });
    for (const k of ["a", "b", "c"]) lru.set(k, 1);
    lru.get("a");
    lru.set("d", 1);
    expect(["a", "b", "c", "d"].filter((k) => lru.has(k))).toEqual(["a", "c", "d"]);
    const fifo = new Lru<string, number>({ maxBytes: 1 << 20, maxEntries: 3, bytesOf: () => 0, refreshOnHit: false });
    for (const k of ["a", "b", "c"]) fifo.set(k, 1);
    fifo.get("a");
    fifo.set("d", 1);
    expect(["a", "b", "c", "d"].filter((k) => fifo.has(k))).toEqual(["b", "c", "d"]);
    expect(() => new Lru({ maxBytes: 0, bytesOf: () => 0 })).toThrow(/maxBytes/);
    expect(() => new Lru({ maxBytes: 1, maxEntries: 0, bytesOf: () => 0 })).toThrow(/maxEntries/);
  });

  test("what it counts is close to what JavaScriptCore holds for the caches' kinds of entries, and on the high side", () => {
    // Measured in a process of its own (support/lru-footprint.ts): in this one, the heap left by
    // the files run before moves between the two readings. Measured 1.02 to 1.55 (Bun 1.4.5): what
    // the heap grew by, or more (a byte array is counted as if its bytes had moved out to a buffer
    // of their own); a twentieth below it for the collector's own ways, and never twice it.
    const run = Bun.spawnSync([process.execPath, join(import.meta.dir, "support", "lru-footprint.ts")], { stdout: "pipe", stderr: "pipe" });
    expect({ exitCode: run.exitCode, stderr: run.stderr.toString() }).toEqual({ exitCode: 0, stderr: "" });
    const measured = JSON.parse(run.stdout.toString()) as { what: string; ratio: number }[];
    expect(measured.map((m) => m.what)).toEqual(["memo result", "record memo entry", "key row"]);
    for (const { what, ratio } of measured) expect({ what, ratio, close: ratio > 0.95 && ratio < 2 }).toEqual({ what, ratio, close: true });
  });
});

describe("each cache stays within its byte budget under many distinct inserts", () => {
  test("the signature memo (8 MiB)", () => {
    const memo = createVerificationMemo({ verify: () => true, maxEntries: 1_000_000 });
    for (let i = 0; i < 60_000; i++) {
      memo.keep(hex(randomBytes(32)), i % 2 === 0);
      expectWithin("signature memo", memo.stats());
    }
    expect(memo.stats().maxBytes).toBe(MEMO_BYTES);
    expectFull("signature memo", memo.stats());
  });

  test("list queries: GET /v1/verifications' accepted query texts (1 MiB)", () => {
    // One verifier's list queries (verify.ts `listQueryOf`), reached through their instance.
    const { cache: listQueriesCache, listQueryOf } = createListQueries();
    for (let i = 0; i < 5_000; i++) {
      const after = Buffer.from(randomBytes(120)).toString("base64url");
      listQueryOf(`http://localhost/v1/verifications?limit=${1 + (i % 100)}&originalDocHash=${randomHash()}&after=${after}&from=2026-01-01T00:00:00.${String(i % 1000).padStart(3, "0")}Z`);
      expectWithin("list queries", listQueriesCache.stats());
    }
    expect(listQueriesCache.stats().maxBytes).toBe(LIST_QUERIES_BYTES);
    expectFull("list queries", listQueriesCache.stats(), 1024);
  });

  test("consensus texts (1 MiB, 4,096 entries)", () => {
    const texts = createConsensusTexts();
    for (let i = 0; i < 20_000; i++) {
      expect(texts.format(`${1_700_000_000 + i}.${String(i).padStart(9, "0")}`)).toEndWith(`.${String(i).padStart(9, "0")}Z`);
      expectWithin("consensus texts", texts.cache.stats());
    }
    expect(texts.cache.stats().entries).toBeGreaterThan(0);
  });

  test("authorities of requests (256 entries of at most 300 characters)", () => {
    const addresses = createAddresses();
    for (let i = 0; i < 2_000; i++) {
      const host = i % 3 === 0 ? `h${i}.${"a".repeat(290)}` : i % 3 === 1 ? `host-${i}.example:8080` : `${"b".repeat(400)}${i}`;
      addresses.routable(new Request(`http://${host}/healthz`));
      expectWithin("authorities", addresses.cache.stats());
    }
    expect(addresses.cache.stats().entries).toBe(256);
  });

  test("rate-limit buckets: one per client address, key and organisation (8 MiB)", () => {
    const clock = manualClock();
    const limiter = createRateLimiter({ clock });
    for (let i = 0; i < 30_000; i++) {
      limiter.take([{ bucket: `ip:2001:db8::${i.toString(16)}:${(i * 7).toString(16)}`, perMinute: 60 }, { bucket: `key:${crypto.randomUUID()}`, perMinute: 600 }]);
      expectWithin("rate-limit buckets", limiter.stats());
    }
    expect(limiter.stats().maxBytes).toBe(RATE_LIMIT_BYTES);
    expect(limiter.stats().bytes).toBeGreaterThan(RATE_LIMIT_BYTES * 0.8);
    // And they expire: a minute later every bucket is full again, and a sweep drops them all.
    clock.advance(60_000);
    limiter.sweep();
    expect(limiter.stats()).toEqual({ entries: 0, bytes: 0, maxBytes: RATE_LIMIT_BYTES });
  });

  test("the signer's imported public keys (4 MiB) and opened private keys (8 MiB)", () => {
    const signer = createSigner({ masterKey: randomBytes(32), workers: 0 });
    const publicKeys = () => statsOf(signer.caches(), "signer_public_keys");
    const privateKeys = () => statsOf(signer.caches(), "signer_private_keys");
    for (let i = 0; i < 400; i++) {
      // Any 1,952 bytes decode as an ML-DSA-65 public key: imported, kept, and the signature refused.
      expect(signer.verify("ML-DSA-65", randomBytes(1952), randomBytes(32), randomBytes(3309))).toBe(false);
      expectWithin("signer public keys", publicKeys());
    }
    expect(publicKeys().maxBytes).toBe(PUBLIC_KEY_CACHE_BYTES);
    expectFull("signer public keys", publicKeys());
    for (let i = 0; i < 260; i++) {
      signer.generateKey(`org:${crypto.randomUUID()}`);
      expectWithin("signer private keys", privateKeys());
    }
    expect(privateKeys().maxBytes).toBe(PRIVATE_KEY_CACHE_BYTES);
    expectFull("signer private keys", privateKeys());
  });
});

// ---------------------------------------------------------------------------------------------
// Services over a database holding enough to fill every cache.
// ---------------------------------------------------------------------------------------------

/** Organisations beyond the benchmark's one: each with its own key, topic and anchored key announcement. */
const ORGS = 4_500;
/** What share of the data and the requests the running service's test uses. */
const SCALE = 0.05;
/** Organisation-signed anchored records, signatures of the real lengths, each with its anchored creation message. */
const ORG_RECORDS = 16_000;
/** Persons, each with a key and one person-signed anchored record. */
const PERSONS = 12_000;
/** Verification-log rows of the benchmark organisation's live log. */
const LOG_ROWS = 30_000;
/** API keys of the benchmark organisation. */
const API_KEYS = 2_600;

interface Filled {
  readonly app: App;
  readonly orgRecordIds: readonly string[];
  readonly hashes: readonly string[];
  readonly logKey: string;
  readonly logOrgId: string;
  readonly apiKeys: readonly string[];
}

/**
 * An app over a data folder filled as above, each count times `scale` (1: enough to fill every
 * cache to its budget); `env` adds settings. Keys and organisations are never rate-limited.
 */
/** A key announcement's bytes (docs/receipts.md §1): a receipt carries the one naming its record's seal key. */
function announcementBytes(orgId: string, k: number, key: Uint8Array, seal: Uint8Array): Buffer {
  const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
  return Buffer.from(JSON.stringify({ v: 1, type: "key", orgId, name: `Memory test organisation ${k}`, algorithm: "ML-DSA-65", keyFingerprint: hex(key), sealKeyFingerprint: hex(seal) }));
}

async function openFilled(env: Record<string, string> = {}, scale = 1): Promise<Filled> {
  const n = (count: number) => Math.max(1, Math.round(count * scale));
  const [ORGS_, ORG_RECORDS_, PERSONS_, LOG_ROWS_, API_KEYS_] = [n(ORGS), n(ORG_RECORDS), n(PERSONS), n(LOG_ROWS), n(API_KEYS)];
  const config = parseConfig({
    DOCVERIFY_DATA_DIR: tempDir(),
    DOCVERIFY_PORT: "0",
    DOCVERIFY_RATE_LIMIT_ANONYMOUS: "1000000000",
    DOCVERIFY_RATE_LIMIT_KEY: "1000000000",
    DOCVERIFY_RATE_LIMIT_ORG: "1000000000",
    ...env,
  });
  const app = await createApp({ config, log: memoryLogger("warn") });
  await app.anchoringStarted;
  const sql = app.db.$client;
  const base = Date.now() - 30 * 86_400_000;
  const bench = await createBenchOrganisations(app as unknown as Core, 1, base - 60_000);
  const logOrgId = bench.orgs[0]!.id;

  const insertKey = sql.prepare("INSERT INTO signing_keys (fingerprint, algorithm, public_key, purpose, sealed_seed, created_at) VALUES (?, 'ML-DSA-65', ?, ?, NULL, ?)");
  const insertOrg = sql.prepare(
    "INSERT INTO organisations (id, name, api_access, addon, validated, suspended, created_at, system_key_fingerprint, topic_id, name_key) VALUES (?, ?, 1, 1, 1, 0, ?, ?, ?, ?)",
  );
  const insertAnnouncement = sql.prepare(
    `INSERT INTO ledger_transactions (transaction_id, kind, org_id, record_id, topic_id, message, key_fingerprint, signed_bytes, valid_start_ms, valid_seconds,
      state, sequence_number, consensus_at, running_hash, attempts, next_attempt_at, created_at, updated_at, seal_fingerprint)
     VALUES (?, 'key_announcement', ?, NULL, ?, ?, ?, NULL, ?, 180, 'anchored', 1, ?, ?, 1, ?, ?, ?, ?)`,
  );
  const insertRecord = sql.prepare(INSERT_RECORD_SQL);
  const insertMessage = sql.prepare(INSERT_RECORD_MESSAGE_SQL);
  const insertBatch = sql.prepare(INSERT_BATCH_SQL);
  const insertLeaf = sql.prepare(INSERT_LEAF_SQL);
  const insertPerson = sql.prepare(
    "INSERT INTO persons (id, org_id, name, email, identity_evidence, suspended, key_fingerprint, created_at, enrolled_at) VALUES (?, ?, ?, ?, 'document seen', 0, ?, ?, ?)",
  );
  const insertPersonRecord = sql.prepare(
    `INSERT INTO records (id, org_id, signer_type, kind, signer_hint, doc_hash, filename, signed_at_ms, signer_fingerprint, signature, seal_fingerprint, seal_signature,
      anchor_state, topic_id, transaction_id, sequence_number, consensus_at, created_at)
     VALUES (?, ?, 'user', 'pdf_embedded', ?, ?, NULL, ?, ?, ?, ?, ?, 'anchored', ?, ?, ?, ?, ?)`,
  );
  const newKey = (purpose: string, ms: number): Uint8Array => {
    const publicKey = randomBytes(1952);
    const fingerprint = keyFingerprint({ algorithm: "ML-DSA-65", publicKey });
    insertKey.run(fingerprint, publicKey, purpose, ms);
    return fingerprint;
  };
  const pool = Array.from({ length: 64 }, () => randomBytes(3309));
  const orgs: { id: string; fingerprint: Uint8Array; topic: string; seq: number }[] = [];
  const orgRecordIds: string[] = [];
  const hashes: string[] = [];
  sql.transaction(() => {
    for (let k = 0; k < ORGS_; k++) {
      const id = crypto.randomUUID();
      const ms = base + k;
      const fingerprint = newKey(`org:${id}`, ms);
      const topic = `0.0.${700_001 + k}`;
      insertOrg.run(id, `Memory test organisation ${k}`, ms, fingerprint, topic, `memory test organisation ${k}`);
      insertAnnouncement.run(`0.0.2@${Math.floor(ms / 1000)}.${String(k).padStart(9, "0")}`, id, topic, announcementBytes(id, k, fingerprint, bench.sealFp), fingerprint, ms, consensusOf(ms, k), randomBytes(48), ms, ms, ms, bench.sealFp);
      orgs.push({ id, fingerprint, topic, seq: 1 });
    }
    for (let i = 0; i < ORG_RECORDS_; i++) {
      const org = orgs[i % ORGS_]!;
      const ms = base + 60_000 + i * 10;
      const id = crypto.randomUUID();
      const docHash = randomHash();
      const tx = `0.0.2@${Math.floor(ms / 1000)}.${String(100_000 + i).padStart(9, "0")}`;
      const seq = ++org.seq;
      const consensus = consensusOf(ms, i);
      insertRecord.run(id, org.id, docHash, null, ms, org.fingerprint, pool[i & 63]!, bench.sealFp, pool[(i >> 6) & 63]!, org.topic, tx, seq, consensus, ms);
      const message = Buffer.from(JSON.stringify({ v: 1, type: "record", recordId: id, originalDocHash: docHash }));
      if (i % 2 === 0) {
        // Half the records as every record is anchored today, a leaf of a batch (here of one): its receipt reads the leaf.
        const runningHash = randomBytes(48);
        const batchMessage = encodeBatchMessage({ orgId: org.id, batch: seq, size: 1, root: merkleTree([message]).root, revoked: [] });
        insertBatch.run(tx, org.id, org.topic, batchMessage, org.fingerprint, bench.sealFp, ms, seq, consensus, runningHash, ms, ms, ms, seq, 1);
        insertLeaf.run(`${tx}-leaf`, org.id, id, org.topic, message, org.fingerprint, ms, seq, consensus, runningHash, ms, ms, ms, tx, 0, new Uint8Array(0));
      } else {
        insertMessage.run(tx, org.id, id, org.topic, message, ms, seq, consensus, randomBytes(48), ms, ms, ms);
      }
      orgRecordIds.push(id);
      hashes.push(docHash);
    }
    for (let j = 0; j < PERSONS_; j++) {
      const org = orgs[j % ORGS_]!;
      const ms = base + 300_000 + j * 10;
      const id = crypto.randomUUID();
      const fingerprint = newKey(`person:${id}`, ms);
      insertPerson.run(id, org.id, `Person ${j}`, `person${j}@example.org`, fingerprint, ms, ms);
      const docHash = randomHash();
      const seq = ++org.seq;
      insertPersonRecord.run(crypto.randomUUID(), org.id, `Person ${j}`, docHash, ms, fingerprint, randomBytes(16), bench.sealFp, randomBytes(16), org.topic,
        `0.0.3@${Math.floor(ms / 1000)}.${String(j).padStart(9, "0")}`, seq, consensusOf(ms, j), ms);
      hashes.push(docHash);
    }
    let now = base + 600_000;
    const ids = createIdGenerator({ now: () => now });
    const insertLog = sql.prepare(INSERT_LOG_SQL);
    for (let i = 0; i < LOG_ROWS_; i++) {
      now += 10;
      const { id, ms } = ids();
      insertLog.run(id, logOrgId, "live", bench.logKeyId, "verified_org", hashes[i % hashes.length]!, `case-${i}-${"r".repeat(i % 100)}`, ms);
    }
  })();
  const apiKeys: string[] = [];
  for (let i = 0; i < API_KEYS_; i++) apiKeys.push((await app.apiKeys.mint({ orgId: logOrgId, environment: "live" }, "memory test")).key);
  return { app, orgRecordIds, hashes, logKey: bench.logKey, logOrgId, apiKeys };
}

describe("each cache of the services stays within its byte budget under many distinct inserts", () => {
  let filled: Filled;
  beforeAll(async () => {
    filled = await openFilled();
  }, 120_000);
  // Closed with its describe: its anchor loop must not work beside the tests that follow.
  afterAll(async () => {
    await filled.app.close();
  });

  test("verification: record memo, signature memo, record heads, keys, organisations' and persons' standing", () => {
    const { app, hashes } = filled;
    const verifier = createVerifier({ ...verificationDrivers(app.store), signer: app.signer, clock: app.clock, links: { topicMessageUrl: () => "https://mirror.invalid/" } });
    let verdicts = 0;
    for (const docHash of hashes) {
      const answer = verifier.verify({ docHash, tier: "organisation" });
      if (answer.verdict === "signature_invalid") verdicts++;
      for (const c of verifier.caches()) expectWithin(c.name, c.stats());
    }
    expect(verdicts).toBe(hashes.length); // random signatures: each record checked, and refused
    const caches = verifier.caches();
    expectFull("verification_record_memo", statsOf(caches, "verification_record_memo"));
    expectFull("verification_signature_memo", statsOf(caches, "verification_signature_memo"));
    expectFull("verification_record_heads", statsOf(caches, "verification_record_heads"), 4096);
    expectFull("verification_keys", statsOf(caches, "verification_keys"), 1024);
    expectFull("verification_org_standing", statsOf(caches, "verification_org_standing"), 4096);
    expectFull("verification_person_standing", statsOf(caches, "verification_person_standing"));
  }, 120_000);

  test("the verification log: row JSON, checked page queries, kept pages", () => {
    const { app, logOrgId } = filled;
    const log = createVerificationLog({ store: logDrivers(app.store).log, clock: app.clock, cursorKey: randomBytes(32) });
    let after: string | undefined;
    let pages = 0;
    for (let walked = 0; pages < 2_500; pages++) {
      const limit = 10 + (pages % 7);
      const text = log.listJson({ orgId: logOrgId, environment: "live", filters: {}, limit, ...(after === undefined ? {} : { after }) });
      const page = JSON.parse(text) as { data: unknown[]; pagination: { nextCursor: string | null } };
      walked += page.data.length;
      for (const c of log.caches()) expectWithin(c.name, c.stats());
      after = page.pagination.nextCursor ?? undefined; // from the start again at the end
    }
    const caches = log.caches();
    expectFull("log_row_json", statsOf(caches, "log_row_json"), 4096);
    expectFull("log_page_queries", statsOf(caches, "log_page_queries"), 1024);
    expectFull("log_pages", statsOf(caches, "log_pages"), 256);
  }, 120_000);

  test("receipts: kept receipts, records, transactions, signing keys", () => {
    const { app, orgRecordIds } = filled;
    const receipts = createReceipts({ ...receiptsDrivers(app.store), clock: app.clock, network: app.config.ledger.network, mirrorNodes: () => [] });
    for (const id of orgRecordIds.slice(0, ORGS)) {
      expect(receipts.receiptText(id)).toHaveProperty("recordId", id);
      for (const c of receipts.caches()) expectWithin(c.name, c.stats());
    }
    const caches = receipts.caches();
    for (const name of ["receipts", "receipt_records", "receipt_transactions", "receipt_keys"]) expectFull(name, statsOf(caches, name), 2048);
  }, 120_000);

  test("API keys", async () => {
    const { app, apiKeys } = filled;
    const credentials = createCredentials({ ...keysDrivers(app.store), clock: app.clock, log: memoryLogger("error") });
    for (const key of apiKeys) {
      expect(credentials.authenticate(key)).not.toBeNull();
      expectWithin("api_keys", statsOf(credentials.caches(), "api_keys"));
    }
    expectFull("api_keys", statsOf(credentials.caches(), "api_keys"));
    await credentials.close();
  }, 120_000);
});

describe("a running service's caches, read through /metrics", () => {
  // Filling each cache to its budget is the tests above (through each cache's owner, at the real
  // budgets); here a twentieth of that data and as many requests of every kind check that every
  // cache is reported on /metrics, is used by the requests, and stays within its budget.
  test("distinct requests of every kind: every cache reported, used, and no docverify_cache_bytes ever past its docverify_cache_budget_bytes", async () => {
    // One request a minute for each client address: a bucket then lasts the minute it takes to
    // refill (with no limit to speak of, it would be full again at once, and swept).
    const { app, hashes, orgRecordIds, logKey, apiKeys } = await openFilled({ DOCVERIFY_RATE_LIMIT_ANONYMOUS: "1" }, SCALE);
    const send = async (path: string, init: RequestInit = {}, peer = "127.0.0.1", origin = "http://localhost") => {
      const response = await app.http.handle(new Request(`${origin}${path}`, init), peer);
      const body = await response.text();
      if (response.status !== 200) throw new Error(`${init.method ?? "GET"} ${path}: ${response.status} ${body}`);
      return body;
    };
    const scrape = async () => {
      const families = parseExposition(await send("/metrics"));
      const caches = new Map<string, CacheSize>();
      for (const s of families.get("docverify_cache_bytes")!.samples) {
        const name = s.labels.cache!;
        caches.set(name, {
          bytes: s.value,
          entries: sampleValue(families, "docverify_cache_entries", { cache: name })!,
          maxBytes: sampleValue(families, "docverify_cache_budget_bytes", { cache: name })!,
        });
      }
      for (const [name, s] of caches) expectWithin(name, s);
      return caches;
    };
    let sent = 0;
    const sendCounted = async (...args: Parameters<typeof send>) => {
      await send(...args);
      if (++sent % 500 === 0) await scrape();
    };
    const keyed = { authorization: `Bearer ${logKey}`, "content-type": "application/json" };

    // Keyed verification of every record: the verification caches, the key, standing, consensus texts, the log.
    for (const [i, h] of hashes.entries()) await sendCounted("/v1/verifications", { method: "POST", headers: keyed, body: JSON.stringify({ originalDocHash: h, reference: `ref-${i}` }) });
    // Public verifications from as many client addresses: a rate-limit bucket each.
    for (let i = 0; i < 22_000 * SCALE; i++) {
      await sendCounted("/v1/verifications", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ originalDocHash: randomHash() }) }, `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    }
    // The log, page after page, with a limit that varies: list queries, page queries, pages, rows.
    await app.verificationLog.flush();
    let after = "";
    for (let p = 0; p < 2_500 * SCALE; p++) {
      const page = JSON.parse(await send(`/v1/verifications?limit=${10 + (p % 7)}${after === "" ? "" : `&after=${after}`}`, { headers: keyed })) as { pagination: { nextCursor: string | null } };
      after = page.pagination.nextCursor ?? "";
      if (++sent % 500 === 0) await scrape();
    }
    // Public receipts, records of as many organisations (a signing key each).
    for (const [i, id] of orgRecordIds.slice(0, ORGS * SCALE).entries()) await sendCounted(`/verify/${id}/receipt`, {}, `10.200.${i >> 8}.${i & 255}`);
    // Every API key once.
    for (const key of apiKeys) await sendCounted("/v1/verifications?limit=1", { headers: { authorization: `Bearer ${key}` } });
    // Hosts by the hundred.
    for (let i = 0; i < 400; i++) await sendCounted("/healthz", {}, "127.0.0.1", `http://host-${i}.example:8080`);

    const caches = await scrape();
    const expected = [
      "verification_record_memo",
      "verification_signature_memo",
      "verification_record_heads",
      "verification_keys",
      "verification_org_standing",
      "verification_person_standing",
      "log_row_json",
      "log_page_queries",
      "log_pages",
      "list_queries",
      "receipts",
      "receipt_records",
      "receipt_transactions",
      "receipt_keys",
      "receipt_compromises",
      "receipt_leaves",
      "api_keys",
      "rate_limit_buckets",
      "consensus_texts",
      "http_authorities",
      "signer_public_keys",
      "signer_private_keys",
    ];
    expect([...caches.keys()].sort()).toEqual([...expected].sort());
    // Used by the requests (the signer's keys are used by signing and by verifications on this
    // thread, which a busy service sends to its workers instead); the host names fill theirs.
    for (const name of expected.filter((n) => !n.startsWith("signer_"))) {
      const c = caches.get(name)!;
      expectWithin(name, c);
      if (c.entries === 0) throw new Error(`${name}: no entry after the requests that use it`);
    }
    expectFull("http_authorities", caches.get("http_authorities")!, 256);
    await app.close();
  }, 300_000);

  test("once quiet, the service empties its caches and counts the release; probes do not keep it busy", async () => {
    const config = parseConfig({ DOCVERIFY_DATA_DIR: tempDir(), DOCVERIFY_PORT: "0" });
    const app = await createApp({ config, log: memoryLogger("warn"), quietMs: 200 });
    await app.anchoringStarted;
    const metric = (name: string, labels: Record<string, string> = {}) => sampleValue(parseExposition(app.metrics.render()), name, labels);
    for (let i = 0; i < 20; i++) {
      const r = await app.http.handle(
        new Request("http://localhost/v1/verifications", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ originalDocHash: randomHash() }) }),
        "127.0.0.1",
      );
      expect(r.status).toBe(200);
    }
    expect(metric("docverify_cache_entries", { cache: "verification_record_heads" })).toBe(20);
    expect(metric("docverify_idle_releases_total")).toBe(0);
    // Probes answered meanwhile are not activity: the release comes all the same.
    const probing = setInterval(() => void app.http.handle(new Request("http://localhost/healthz"), "127.0.0.1"), 20);
    try {
      await waitFor("the release after a quiet period", () => ((metric("docverify_idle_releases_total") ?? 0) >= 1 ? true : null), 10_000);
    } finally {
      clearInterval(probing);
    }
    expect(metric("docverify_cache_entries", { cache: "verification_record_heads" })).toBe(0);
    expect(metric("docverify_cache_bytes", { cache: "verification_record_heads" })).toBe(0);
    await app.close();
  }, 60_000);
});
