/**
 * The 1,000,000-record data folder the verification scenarios run against (docs/benchmarks.md
 * "The 1,000,000-record dataset"), built
 * from the product's own code (migrations, organisations, API keys, seal key, signer, payload
 * encodings) and cached, since building it takes about a minute and 8 GB of disk.
 *
 * What is in it (docs/benchmarks.md explains the choice):
 * - 20 organisations with their real sealed system keys, API access, the add-on, and a topic id
 *   each (fake: no verification reads the ledger), plus one more organisation without a topic,
 *   which `serve` gets a real topic for on its embedded ledger: the record-creation scenario's.
 * - 1,000,000 anchored organisation-signed records, ids UUIDv7 over one year, one in a hundred
 *   (10,000) signed and sealed for real; the other 990,000 carry signature and seal bytes of
 *   the real lengths (3,309 bytes each) taken from a pool of random buffers, so the table,
 *   the indexes and the file have the size and shape of a real million-record installation.
 *   Those bulk rows would fail verification, and no scenario asks about them: every benchmarked
 *   hash is a real, correctly signed record, so every request recomputes (or memo-answers) a
 *   pair of valid ML-DSA-65 signatures, exactly the production path.
 * - The records anchored in batches, as the anchor loop leaves them today (docs/anchoring.md
 *   "Batches"): each organisation's records, in their order, LEAVES_PER_BATCH (256) to a batch;
 *   per record a leaf (`record_message`, `batch_leaf` 1) with its index and inclusion path, per
 *   batch an anchored `batch_message` row carrying the Merkle root (the product's own tree and
 *   message encoder); each record names its batch's transaction, sequence number and consensus
 *   time, so its receipt is a batched one (`anchor.inclusion`). 256 leaves: a busy appliance's
 *   batch (the anchoring benchmark's hold about 200), a path of 8 hashes. The records' signed
 *   times stay spread over the year, as before: a batch's span no window would allow, which
 *   nothing measured reads.
 * - 100,000 verification-log rows, 30,000 of them for organisation 0's live environment, where
 *   the log-paging scenario reads a page 10,000 rows deep.
 *
 * The cache lives in `.bench-cache/` (gitignored), in a folder named after this generator's
 * version and a digest of the migrations, so a schema change builds a new one. A run copies
 * the cached folder, so what the scenarios write never reaches the cache.
 */
import { createHash } from "node:crypto";
import { closeSync, copyFileSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openCore, type Core } from "../../src/app/core.ts";
import { parseConfig } from "../../src/config/index.ts";
import { encodeRecordPayload, encodeSealPayload, keyFingerprint } from "../../src/crypto/index.ts";
import { concatPath, merkleTree } from "../../src/anchoring/merkle.ts";
import { createLogger } from "../../src/lib/log.ts";
import { encodeBatchMessage, encodeCreationMessage, encodeKeyAnnouncementMessage, sha256Text } from "../../src/records/messages.ts";
import type { Organisation } from "../../src/keys/organisations.ts";
import { ensureSealKey, loadSealedKey, type StoredKey } from "../../src/records/seal-key.ts";
import { createIdGenerator } from "../../src/verification/log/ids.ts";

/** Bump when what the generator writes changes. 3: records anchored in batches. */
const GENERATOR_VERSION = 3;

export const RECORD_COUNT = 1_000_000;
/** One record in this many is signed and sealed for real. */
const REAL_EVERY = 100;
const ORG_COUNT = 20;
const LOG_ROWS = 100_000;
const BATCH = 20_000;
/** Leaves of each organisation's batches (the last of each organisation's may hold fewer). */
export const LEAVES_PER_BATCH = 256;

/**
 * How many records and verification-log rows a dataset holds. The default bench's is
 * MILLION; `--postgres` builds a smaller one of the same shape (scripts/bench/postgres-run.ts).
 */
export interface DatasetSize {
  readonly records: number;
  readonly logRows: number;
}
export const MILLION: DatasetSize = { records: RECORD_COUNT, logRows: LOG_ROWS };

/** The cache folder's name: the 1,000,000-record one keeps the name it always had. */
export function datasetCacheName(size: DatasetSize, schema: string): string {
  if (size.records === MILLION.records && size.logRows === MILLION.logRows) return `records-1m-g${GENERATOR_VERSION}-schema-${schema}`;
  return `records-${size.records}r-${size.logRows}l-g${GENERATOR_VERSION}-schema-${schema}`;
}
const YEAR_MS = 365 * 86_400_000;
/** Bytes of randomness per record: UUIDv7 bits (10), bulk document hash (32). */
const RANDOM_PER_ROW = 42;

export interface Dataset {
  /** The cached folder: `docverify.db` and `master.key`, to be copied, never served in place. */
  readonly dir: string;
  /** The DocHash of every real record (10,000), in id order. */
  readonly realHashes: readonly string[];
  /** The record id of every real record, in the order of `realHashes`. */
  readonly realIds: readonly string[];
  /** A live key of organisation 0 (verifications:read, records:write): organisation tier and log. */
  readonly logKey: string;
  /** A live key of the topic-less organisation, for record creation. */
  readonly recordsKey: string;
  readonly recordCount: number;
  readonly logRowsOfOrg0: number;
  /** Leaves per batch of the records' batches. */
  readonly leavesPerBatch: number;
}

interface Manifest {
  readonly realHashes: string[];
  readonly realIds: string[];
  readonly logKey: string;
  readonly recordsKey: string;
  readonly recordCount: number;
  readonly logRowsOfOrg0: number;
  readonly leavesPerBatch: number;
}

/** An anchored organisation-signed record, as the anchor loop leaves it. */
export const INSERT_RECORD_SQL = `INSERT INTO records (id, org_id, signer_type, kind, signer_hint, doc_hash, filename, signed_at_ms, signer_fingerprint, signature,
    seal_fingerprint, seal_signature, anchor_state, topic_id, transaction_id, sequence_number, consensus_at, created_at)
  VALUES (?, ?, 'org', 'record_only', NULL, ?, ?, ?, ?, ?, ?, ?, 'anchored', ?, ?, ?, ?, ?)`;
/** Its anchored `record_message` row in `ledger_transactions`. */
export const INSERT_RECORD_MESSAGE_SQL = `INSERT INTO ledger_transactions (transaction_id, kind, org_id, record_id, topic_id, message, signed_bytes, valid_start_ms, valid_seconds,
    state, sequence_number, consensus_at, running_hash, attempts, next_attempt_at, created_at, updated_at)
  VALUES (?, 'record_message', ?, ?, ?, ?, NULL, ?, 180, 'anchored', ?, ?, ?, 1, ?, ?, ?)`;
/** A record's anchored leaf (`record_message`, `batch_leaf` 1) in its anchored batch, with its place and inclusion path. */
export const INSERT_LEAF_SQL = `INSERT INTO ledger_transactions (transaction_id, kind, org_id, record_id, topic_id, message, key_fingerprint, signed_bytes, valid_start_ms, valid_seconds,
    state, sequence_number, consensus_at, running_hash, attempts, next_attempt_at, created_at, updated_at, batch_leaf, batch_transaction_id, leaf_index, inclusion_path)
  VALUES (?, 'record_message', ?, ?, ?, ?, ?, NULL, ?, 180, 'anchored', ?, ?, ?, 0, ?, ?, ?, 1, ?, ?, ?)`;
/** An anchored `batch_message` row: its message carries the Merkle root over its leaves. */
export const INSERT_BATCH_SQL = `INSERT INTO ledger_transactions (transaction_id, kind, org_id, record_id, topic_id, message, key_fingerprint, seal_fingerprint, signed_bytes,
    valid_start_ms, valid_seconds, state, sequence_number, consensus_at, running_hash, attempts, next_attempt_at, created_at, updated_at, batch_leaf,
    batch_sequence, batch_size, announcement_generation)
  VALUES (?, 'batch_message', ?, NULL, ?, ?, ?, ?, NULL, ?, 180, 'anchored', ?, ?, ?, 1, ?, ?, ?, 0, ?, ?, 0)`;
/** A verification-log row. */
export const INSERT_LOG_SQL =
  "INSERT INTO verifications (id, org_id, environment, key_id, verdict, doc_hash, reference, verified_at_ms, retry_after_seconds) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)";

export const CACHE_ROOT = join(import.meta.dir, "..", "..", ".bench-cache");

/** A digest of `migrations/*.sql`: part of every cached dataset's name, so a schema change builds a new one. */
export function schemaDigest(): string {
  const dir = join(import.meta.dir, "..", "..", "migrations");
  const h = createHash("sha256");
  for (const f of readdirSync(dir).filter((f) => f.endsWith(".sql")).sort()) h.update(f).update(readFileSync(join(dir, f)));
  return h.digest("hex").slice(0, 12);
}

/** The cached dataset, built first when missing. `say` prints progress. */
export async function ensureDataset(say: (line: string) => void, size: DatasetSize = MILLION): Promise<Dataset> {
  // At least 1,000 real records: the scenarios' hot set (scenarios.ts HOT_SET).
  if (size.records % BATCH !== 0 || size.records < 1_000 * REAL_EVERY || size.logRows % BATCH !== 0 || size.logRows <= 0) {
    throw new RangeError(`a dataset holds at least ${(1_000 * REAL_EVERY).toLocaleString("en-US")} records, and multiples of ${BATCH.toLocaleString("en-US")} records and log rows`);
  }
  const name = datasetCacheName(size, schemaDigest());
  const dir = join(CACHE_ROOT, name);
  const manifestFile = join(dir, "manifest.json");
  if (!existsSync(manifestFile)) {
    const building = `${dir}.building`;
    rmSync(building, { recursive: true, force: true });
    mkdirSync(building, { recursive: true });
    const started = performance.now();
    say(`building the ${size.records.toLocaleString("en-US")}-record dataset in ${building} (once; cached in .bench-cache/)`);
    const manifest = await build(building, say, size);
    writeFileSync(join(building, "manifest.json"), JSON.stringify(manifest) + "\n", { mode: 0o600 });
    rmSync(dir, { recursive: true, force: true });
    renameSync(building, dir);
    say(`dataset built in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  const m = JSON.parse(readFileSync(manifestFile, "utf8")) as Manifest;
  return { dir, ...m };
}

/**
 * Copies the cached dataset's database and master key into a data folder of its own, and waits
 * until the copy is on disk. Without the wait the kernel wrote the 9.4 GB back during the first
 * scenarios after it: every fsync then waited behind it (the organisation tier's p99 278 ms, the
 * floor's own p99 19.6–587 ms in two runs of 2026-11-24), and those scenarios measured the disk.
 */
export function copyDataset(dataset: Dataset, dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  for (const file of ["docverify.db", "master.key"]) {
    const to = join(dataDir, file);
    copyFileSync(join(dataset.dir, file), to);
    const fd = openSync(to, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
}

export function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}

/** A UUIDv7 for millisecond `ms` with the random bits from `rnd` (10 bytes). */
export function uuidV7(ms: number, rnd: Uint8Array): string {
  const t = ms.toString(16).padStart(12, "0");
  const r = hex(rnd);
  const variant = ((rnd[2]! & 0x3f) | 0x80).toString(16);
  return `${t.slice(0, 8)}-${t.slice(8)}-7${r.slice(0, 3)}-${variant}${r.slice(6, 8)}-${r.slice(8, 20)}`;
}

export function consensusOf(ms: number, i: number): string {
  return `${Math.floor(ms / 1000) + 4}.${String((ms % 1000) * 1_000_000 + (i % 1_000_000)).padStart(9, "0")}`;
}

async function build(dataDir: string, say: (line: string) => void, size: DatasetSize): Promise<Manifest> {
  const config = parseConfig({ DOCVERIFY_DATA_DIR: dataDir });
  const core = openCore({ config, log: createLogger({ level: "error" }) });
  const { db, signer } = core;
  const sql = db.$client;
  try {
    // The records span the year before the build; the log the day before it.
    const startMs = Date.now() - YEAR_MS - 86_400_000;
    const { orgs, orgKeys, seal, orgFps, sealFp, logKey, logKeyId } = await createBenchOrganisations(core, ORG_COUNT, startMs - 60_000);
    const recordsOrg = await core.organisations.create({ name: "Bench record creation", apiAccess: true, addon: true, validated: true }, "bench");
    const recordsKey = (await core.apiKeys.mint({ orgId: recordsOrg.id, environment: "live" }, "bench")).key;

    // A bulk build: no other connection, and a failure throws the folder away, so neither the
    // journal nor fsync buys anything here. WAL again (the product's mode) at the end.
    sql.run("PRAGMA journal_mode = OFF");
    sql.run("PRAGMA synchronous = OFF");
    sql.run("PRAGMA cache_size = -1000000");

    const insertRecord = sql.prepare(INSERT_RECORD_SQL);
    const insertLeaf = sql.prepare(INSERT_LEAF_SQL);
    const insertBatch = sql.prepare(INSERT_BATCH_SQL);
    const pool = Array.from({ length: 64 }, () => crypto.getRandomValues(new Uint8Array(3309)));
    const poolDigests = pool.map(sha256Text);
    const orgKeyDigests = orgKeys.map((k) => sha256Text(k.publicKey));
    const realHashes: string[] = [];
    const realIds: string[] = [];
    const spacing = Math.floor(YEAR_MS / size.records);

    // Record i is organisation (i % ORG_COUNT)'s k-th (k = i / ORG_COUNT); each organisation's
    // records fill its batches in turn, LEAVES_PER_BATCH each. A batch is known before its leaves
    // are written (its records name it): its window closes 250 ms after its last record's time.
    const lastK = (org: number) => Math.floor((size.records - 1 - org) / ORG_COUNT);
    const batchOf = (org: number, k: number) => {
      const index = Math.floor(k / LEAVES_PER_BATCH);
      const kLast = Math.min((index + 1) * LEAVES_PER_BATCH - 1, lastK(org));
      const closedMs = startMs + (org + ORG_COUNT * kLast) * spacing + 250;
      return {
        index,
        size: kLast - index * LEAVES_PER_BATCH + 1,
        closedMs,
        // Nanoseconds no record's transaction id (i % 1000) or announcement's (999,999) uses.
        transactionId: `0.0.2@${Math.floor(closedMs / 1000)}.${String((closedMs % 1000) * 1_000_000 + 500_000 + org).padStart(9, "0")}`,
        // The topic holds the key announcement at 1, then the batches.
        sequenceNumber: index + 2,
        consensusAt: consensusOf(closedMs, 500_000 + org),
        runningHash: crypto.getRandomValues(new Uint8Array(48)),
      };
    };
    const current = Array.from({ length: ORG_COUNT }, (_, org) => batchOf(org, 0));
    const leaves: { id: string; transactionId: string; message: Uint8Array; ms: number }[][] = Array.from({ length: ORG_COUNT }, () => []);
    /** A full batch: its message over the Merkle root, its row, and each leaf's row with its place and path (the loop's close). */
    const writeBatchOf = (org: number) => {
      const b = current[org]!;
      const placed = leaves[org]!;
      const tree = merkleTree(placed.map((l) => l.message));
      const message = encodeBatchMessage({ orgId: orgs[org]!.id, batch: b.index + 1, size: b.size, root: tree.root, revoked: [] });
      const topicId = `0.0.${900_001 + org}`;
      const anchoredMs = b.closedMs + 4000;
      insertBatch.run(b.transactionId, orgs[org]!.id, topicId, message, orgFps[org]!, sealFp, b.closedMs, b.sequenceNumber, b.consensusAt, b.runningHash,
        b.closedMs, placed[0]!.ms, anchoredMs, b.index + 1, b.size);
      placed.forEach((l, i) => {
        insertLeaf.run(l.transactionId, orgs[org]!.id, l.id, topicId, l.message, orgFps[org]!, l.ms, b.sequenceNumber, b.consensusAt, b.runningHash,
          l.ms, l.ms, anchoredMs, b.transactionId, i, concatPath(tree.paths[i]!));
      });
      leaves[org] = [];
      const k = (b.index + 1) * LEAVES_PER_BATCH;
      if (k <= lastK(org)) current[org] = batchOf(org, k);
    };

    const writeBatch = sql.transaction((from: number, to: number) => {
      const rnd = new Uint8Array((to - from) * RANDOM_PER_ROW);
      for (let o = 0; o < rnd.length; o += 65_536) crypto.getRandomValues(rnd.subarray(o, o + 65_536));
      for (let i = from; i < to; i++) {
        const o = (i - from) * RANDOM_PER_ROW;
        const ms = startMs + i * spacing;
        const id = uuidV7(ms, rnd.subarray(o, o + 10));
        const org = i % ORG_COUNT;
        const batch = current[org]!;
        const transactionId = `0.0.2@${Math.floor(ms / 1000)}.${String((ms % 1000) * 1_000_000 + (i % 1000)).padStart(9, "0")}`;
        let docHash: string;
        let signature: Uint8Array;
        let sealSignature: Uint8Array;
        let message: Uint8Array;
        if (i % REAL_EVERY === 0) {
          docHash = `sha256:${createHash("sha256").update(`docverify bench real record ${i}`).digest("hex")}`;
          const payload = encodeRecordPayload({ recordId: id, docHash, signedAtMs: ms, signerKeyFingerprint: orgKeys[org]!.fingerprint });
          signature = signer.sign(orgKeys[org]!, payload);
          sealSignature = signer.sign(seal, encodeSealPayload(payload, signature, seal.fingerprint));
          message = encodeCreationMessage({ recordId: id, docHash, signedAtMs: ms, signerPublicKey: orgKeys[org]!.publicKey, signature, sealSignature });
          realHashes.push(docHash);
          realIds.push(id);
        } else {
          docHash = `sha256:${hex(rnd.subarray(o + 10, o + 42))}`;
          signature = pool[i & 63]!;
          sealSignature = pool[(i >> 6) & 63]!;
          // encodeCreationMessage's layout, with the pool's digests precomputed (hashing 8 KB per
          // row would double the build time).
          message = Buffer.from(
            `{"v":1,"type":"record","recordId":"${id}","originalDocHash":"${docHash}","signedAt":"${new Date(ms).toISOString()}",` +
              `"signerPublicKeySha256":"${orgKeyDigests[org]}","signatureSha256":"${poolDigests[i & 63]}","sealSignatureSha256":"${poolDigests[(i >> 6) & 63]}"}`,
          );
        }
        insertRecord.run(id, orgs[org]!.id, docHash, i % 3 === 0 ? `document-${i}.pdf` : null, ms, orgFps[org]!, signature, sealFp, sealSignature,
          `0.0.${900_001 + org}`, batch.transactionId, batch.sequenceNumber, batch.consensusAt, ms);
        leaves[org]!.push({ id, transactionId, message, ms });
        if (leaves[org]!.length === batch.size) writeBatchOf(org);
      }
    });
    for (let from = 0; from < size.records; from += BATCH) {
      writeBatch(from, Math.min(size.records, from + BATCH));
      if ((from + BATCH) % 200_000 === 0) say(`  ${(from + BATCH).toLocaleString("en-US")} records`);
    }
    if (leaves.some((l) => l.length > 0)) throw new Error("a batch was left without its message");

    // The verification log, through the log's own id generator (strictly increasing UUIDv7).
    let now = Date.now() - 86_400_000;
    const ids = createIdGenerator({ now: () => now });
    const insertLog = sql.prepare(INSERT_LOG_SQL);
    const writeLog = sql.transaction((from: number, to: number) => {
      for (let i = from; i < to; i++) {
        now += 97;
        const { id, ms } = ids();
        // Every third row is organisation 0's live log (30,000 of 100,000); the rest spread over the others.
        const mine = i % 10 < 3;
        const org = mine ? orgs[0]! : orgs[1 + (i % (ORG_COUNT - 1))]!;
        const hash = realHashes[i % realHashes.length]!;
        insertLog.run(id, org.id, mine || i % 7 !== 0 ? "live" : "test", mine ? logKeyId : "bench", i % 50 === 0 ? "revoked" : "verified_org", hash,
          i % 4 === 0 ? `case-${i}` : null, ms);
      }
    });
    for (let from = 0; from < size.logRows; from += BATCH) writeLog(from, Math.min(size.logRows, from + BATCH));

    sql.run("PRAGMA journal_mode = WAL");
    const logRowsOfOrg0 = sql.prepare<{ n: number }, [string]>("SELECT count(*) AS n FROM verifications WHERE org_id = ? AND environment = 'live'").get(orgs[0]!.id)!.n;
    // Sanity: the fingerprints the records name are the keys' own.
    for (const k of orgKeys) if (hex(keyFingerprint({ algorithm: k.algorithm, publicKey: k.publicKey })) !== hex(k.fingerprint)) throw new Error("fingerprint");
    return { realHashes, realIds, logKey, recordsKey, recordCount: size.records, logRowsOfOrg0, leavesPerBatch: LEAVES_PER_BATCH };
  } finally {
    void core.close();
  }
}

/** What both datasets (this one and the scale one, scale-dataset.ts) share: organisations, their keys, the seal key. */
export interface BenchOrganisations {
  readonly orgs: readonly Organisation[];
  /** Each organisation's sealed system key, in the order of `orgs`. */
  readonly orgKeys: readonly StoredKey[];
  readonly seal: StoredKey;
  readonly orgFps: readonly Buffer[];
  readonly sealFp: Buffer;
  /** A live key of organisation 0 (verifications:read, records:write) and its id. */
  readonly logKey: string;
  readonly logKeyId: string;
}

/**
 * `count` organisations made through the product's services (real sealed system keys, API access,
 * the add-on), each with a (fake) topic id that opens with its key announcement, anchored at
 * sequence 1 at `announcedAtMs` (docs/receipts.md §1: receipts need it); the seal key; a live key
 * of organisation 0.
 */
export async function createBenchOrganisations(core: Core, count: number, announcedAtMs: number): Promise<BenchOrganisations> {
  const { db, signer, clock } = core;
  const sql = db.$client;
  const orgs: Organisation[] = [];
  for (let i = 0; i < count; i++) {
    orgs.push(await core.organisations.create({ name: `Bench organisation ${i}`, apiAccess: true, addon: true, validated: true }, "bench"));
  }
  const setTopic = sql.prepare("UPDATE organisations SET topic_id = ? WHERE id = ?");
  orgs.forEach((o, i) => setTopic.run(`0.0.${900_001 + i}`, o.id));
  const logKey = (await core.apiKeys.mint({ orgId: orgs[0]!.id, environment: "live" }, "bench")).key;
  const logKeyId = sql.prepare<{ key_id: string }, [string]>("SELECT key_id FROM api_keys WHERE org_id = ?").get(orgs[0]!.id)!.key_id;
  const seal = ensureSealKey({ db, signer, clock });
  const fingerprintOf = sql.prepare<{ f: Uint8Array }, [string]>("SELECT system_key_fingerprint AS f FROM organisations WHERE id = ?");
  const orgKeys = orgs.map((o) => {
    const key = loadSealedKey(db, fingerprintOf.get(o.id)!.f);
    if (key === null) throw new Error(`organisation ${o.id} has no sealed key`);
    return key;
  });
  const sealFp = Buffer.from(seal.fingerprint);
  const orgFps = orgKeys.map((k) => Buffer.from(k.fingerprint));
  const insertAnnouncement = sql.prepare(
    `INSERT INTO ledger_transactions (transaction_id, kind, org_id, record_id, topic_id, message, key_fingerprint, signed_bytes, valid_start_ms, valid_seconds,
      state, sequence_number, consensus_at, running_hash, attempts, next_attempt_at, created_at, updated_at, seal_fingerprint)
     VALUES (?, 'key_announcement', ?, NULL, ?, ?, ?, NULL, ?, 180, 'anchored', 1, ?, ?, 1, ?, ?, ?, ?)`,
  );
  orgs.forEach((o, org) => {
    const ms = announcedAtMs + org;
    const message = encodeKeyAnnouncementMessage({
      orgId: o.id,
      name: o.name,
      algorithm: orgKeys[org]!.algorithm,
      keyFingerprint: orgKeys[org]!.fingerprint,
      sealKeyFingerprint: seal.fingerprint,
    });
    insertAnnouncement.run(`0.0.2@${Math.floor(ms / 1000)}.${String((ms % 1000) * 1_000_000 + 999_999).padStart(9, "0")}`, o.id, `0.0.${900_001 + org}`, message,
      orgFps[org]!, ms, consensusOf(ms, 0), crypto.getRandomValues(new Uint8Array(48)), ms, ms, ms + 4000, sealFp);
  });
  return { orgs, orgKeys, seal, orgFps, sealFp, logKey, logKeyId };
}
