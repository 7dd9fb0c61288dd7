/**
 * The scale dataset: 10,000,000 records and 10,000,000 verification-log rows,
 * built once with the product's own code and cached like the 1,000,000-record one (dataset.ts).
 *
 * What differs from that dataset, and why (docs/benchmarks.md, "The 10,000,000-record dataset"):
 * - Only the records a scenario can ask about are full-size: 10,000 records (one in a thousand,
 *   spread over the whole table and every organisation) are signed and sealed for real, with
 *   their 3,309-byte signatures. The other 9,990,000 carry 16-byte signature and seal bytes.
 *   Full-size, 10,000,000 rows would be about 95 GB, more than this machine's disk. What makes a
 *   lookup at this scale realistic is kept: the table's and every index's row count, key
 *   distribution and B-tree depth (printed, and compared with the 1 M dataset's, by the
 *   benchmark), all indexes maintained row by row as the product's inserts do.
 * - Bulk document hashes are a fixed mix of the row number (uniform 256-bit values, like
 *   SHA-256), so log rows can name a real record of their organisation without keeping 10 M
 *   hashes in memory.
 * - `ledger_transactions` holds the organisations' announcements and the real records' messages
 *   only: no scale scenario reads that table (verification reads records, signing keys,
 *   organisations and persons; the log reads verifications), and 10,000,000 message rows would
 *   add about 7 GB.
 * - The log: 10,000,000 rows over the 30 days before the build, 15 % (1,500,000) organisation 0's
 *   live log, the rest over the other organisations and both environments; each row names a
 *   record of its organisation. The deep page is 1,000,000 rows into organisation 0's live log:
 *   the manifest keeps the id it starts after and the id it must start with, and the harness
 *   makes the cursor with the product's encodeCursor and the folder's cursor key (service_meta
 *   `cursor_key`, made here exactly as `serve` makes it on a new installation).
 *
 * BENCH_SCALE_RECORDS (a multiple of 200,000) and BENCH_SCALE_LOG_ROWS build a smaller dataset
 * under its own cache name, for developing this file; the benchmark then says its figures are
 * not the full dataset's.
 */
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statfsSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openCore } from "../../src/app/core.ts";
import { parseConfig } from "../../src/config/index.ts";
import { encodeRecordPayload, encodeSealPayload } from "../../src/crypto/index.ts";
import { createLogger } from "../../src/lib/log.ts";
import { encodeCreationMessage } from "../../src/records/messages.ts";
import { metaValue } from "../../src/storage/meta.ts";
import { createIdGenerator } from "../../src/verification/log/ids.ts";
import { fileBtreeDepths } from "./btree.ts";
import {
  CACHE_ROOT,
  consensusOf,
  createBenchOrganisations,
  INSERT_LOG_SQL,
  INSERT_RECORD_MESSAGE_SQL,
  INSERT_RECORD_SQL,
  schemaDigest,
  uuidV7,
} from "./dataset.ts";

/** Bump when what the generator writes changes. */
const GENERATOR_VERSION = 1;

const FULL_RECORDS = 10_000_000;
const FULL_LOG_ROWS = 10_000_000;
/** How deep the deep page is in the full dataset: a page 1,000,000 rows deep. */
const FULL_DEPTH = 1_000_000;
const ORG_COUNT = 20;
/** Records signed and sealed for real, whatever the size (as many as in the 1 M dataset). */
const REAL_RECORDS = 10_000;
/** Signature and seal bytes of a bulk row (a real ML-DSA-65 signature has 3,309). */
export const BULK_SIGNATURE_BYTES = 16;
/** Of every 20 log rows, this many are organisation 0's live log. */
const MINE_OF_20 = 3;
const BATCH = 50_000;
const YEAR_MS = 365 * 86_400_000;
/** 2100-01-01: the log key's last use, so that using it writes nothing (build(), below). */
const LAST_USED_AHEAD_MS = Date.UTC(2100, 0, 1);
const LOG_SPAN_MS = 30 * 86_400_000;
/** The build stops (and throws its folder away) when the disk's free space falls below this. */
const MIN_FREE_BYTES = 5e9;
/** File bytes per record and per log row, measured on a 200,000-record build; for the disk check before building. */
const BYTES_PER_RECORD = 1_000;
const BYTES_PER_LOG_ROW = 800;

export interface ScaleSpec {
  readonly records: number;
  readonly logRows: number;
  /** Rows of organisation 0's live log before the deep page. */
  readonly depth: number;
  /** The full figures (10,000,000 each, 1,000,000 deep), not a smaller development build. */
  readonly full: boolean;
}

export interface ScaleDataset {
  /** The cached folder: `docverify.db` and `master.key`, to be copied, never served in place. */
  readonly dir: string;
  readonly spec: ScaleSpec;
  /** The DocHash of every real record, in id order. */
  readonly realHashes: readonly string[];
  readonly realIds: readonly string[];
  /** A live key of organisation 0: the log scenarios'. */
  readonly logKey: string;
  readonly logOrgId: string;
  /** Rows of organisation 0's live log. */
  readonly logRowsOfOrg0: number;
  /** The newest row of organisation 0's live log: the first page's first row. */
  readonly firstId: string;
  /** The `depth`-th newest row: the deep cursor names it. */
  readonly deepAfterId: string;
  /** The row after it: the deep page's first row. */
  readonly deepFirstId: string;
  readonly rows: { readonly records: number; readonly verifications: number; readonly ledgerTransactions: number };
  /** B-tree depth of every table and index of records and verifications (btree.ts). */
  readonly depths: Readonly<Record<string, number>>;
  readonly bytes: number;
  readonly buildSeconds: number;
}

type Manifest = Omit<ScaleDataset, "dir">;

function positiveInteger(env: Record<string, string | undefined>, name: string): number | undefined {
  const text = env[name];
  if (text === undefined || text === "") return undefined;
  const n = Number(text.replaceAll("_", ""));
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, not ${JSON.stringify(text)}`);
  return n;
}

/** Rows of organisation 0's live log among the first `logRows` (row i is one when i % 20 < 3). */
export function mineCount(logRows: number): number {
  return Math.floor(logRows / 20) * MINE_OF_20 + Math.min(logRows % 20, MINE_OF_20);
}

/** The dataset's size: the full one, or a smaller one from BENCH_SCALE_RECORDS / BENCH_SCALE_LOG_ROWS. */
export function scaleSpec(env: Record<string, string | undefined> = process.env): ScaleSpec {
  const records = positiveInteger(env, "BENCH_SCALE_RECORDS") ?? FULL_RECORDS;
  const logRows = positiveInteger(env, "BENCH_SCALE_LOG_ROWS") ?? (records === FULL_RECORDS ? FULL_LOG_ROWS : records);
  // Real records sit one per `records / REAL_RECORDS` rows, each organisation in turn: that step must be a multiple of 20.
  if (records % (REAL_RECORDS * ORG_COUNT) !== 0) throw new Error(`BENCH_SCALE_RECORDS must be a multiple of ${(REAL_RECORDS * ORG_COUNT).toLocaleString("en-US")}`);
  const full = records === FULL_RECORDS && logRows === FULL_LOG_ROWS;
  const mine = mineCount(logRows);
  const depth = full ? FULL_DEPTH : Math.min(FULL_DEPTH, Math.floor((mine * 2) / 3));
  if (mine < depth + 100 || depth < 1) throw new Error(`BENCH_SCALE_LOG_ROWS=${logRows} leaves too few rows for a deep page`);
  return { records, logRows, depth, full };
}

/** The cache folder's name: generator, size and schema, so a change to any builds a new one. */
export function scaleCacheName(spec: ScaleSpec, digest: string): string {
  const size = spec.full ? "10m" : `${spec.records}r-${spec.logRows}l`;
  return `scale-${size}-g${GENERATOR_VERSION}-schema-${digest}`;
}

/** The cached scale dataset, built first when missing. `say` prints progress. */
export async function ensureScaleDataset(spec: ScaleSpec, say: (line: string) => void): Promise<ScaleDataset> {
  const name = scaleCacheName(spec, schemaDigest());
  const dir = join(CACHE_ROOT, name);
  const manifestFile = join(dir, "manifest.json");
  if (!existsSync(manifestFile)) {
    removeStale(name, spec, say);
    // A folder without its manifest is a build that never finished, or one dropped after a run wrote to it (scale.ts).
    rmSync(dir, { recursive: true, force: true });
    const needed = spec.records * BYTES_PER_RECORD + spec.logRows * BYTES_PER_LOG_ROW;
    mkdirSync(CACHE_ROOT, { recursive: true });
    const free = freeBytes(CACHE_ROOT);
    if (free < needed + MIN_FREE_BYTES) {
      throw new Error(`the scale dataset needs about ${gb(needed)} and the disk has ${gb(free)} free (${gb(MIN_FREE_BYTES)} must stay free): not building it`);
    }
    const building = `${dir}.building`;
    rmSync(building, { recursive: true, force: true });
    mkdirSync(building, { recursive: true });
    say(
      `building the scale dataset (${spec.records.toLocaleString("en-US")} records, ${spec.logRows.toLocaleString("en-US")} log rows; about ${gb(needed)}, ` +
        `${gb(free)} free) in ${building} (once; cached in .bench-cache/)`,
    );
    try {
      const manifest = await build(building, spec, say);
      writeFileSync(join(building, "manifest.json"), JSON.stringify(manifest) + "\n", { mode: 0o600 });
    } catch (e) {
      rmSync(building, { recursive: true, force: true });
      throw e;
    }
    renameSync(building, dir);
  }
  const m = JSON.parse(readFileSync(manifestFile, "utf8")) as Manifest;
  return { dir, ...m };
}

/**
 * Scale caches that can no longer be used or are in the way: this size built by another
 * generator or for another schema (finished or not), and smaller development builds when the
 * full one is built. Never another size's build in progress (another run may be making it), nor
 * the 1 M dataset's folders.
 */
function removeStale(name: string, spec: ScaleSpec, say: (line: string) => void): void {
  if (!existsSync(CACHE_ROOT)) return;
  const size = name.split("-g")[0]!;
  for (const entry of readdirSync(CACHE_ROOT)) {
    if (!entry.startsWith("scale-") || entry === name || entry === `${name}.building`) continue;
    const stale = entry.startsWith(`${size}-g`) || (spec.full && !entry.startsWith("scale-10m-") && !entry.endsWith(".building"));
    if (!stale) continue;
    say(`removing the stale scale cache .bench-cache/${entry}`);
    rmSync(join(CACHE_ROOT, entry), { recursive: true, force: true });
  }
}

export function freeBytes(path: string): number {
  const s = statfsSync(path);
  return s.bavail * s.bsize;
}

function gb(bytes: number): string {
  return `${(bytes / 1e9).toFixed(1)} GB`;
}

/** Bijective 32-bit mix (lowbias32): consecutive inputs give unrelated, uniform outputs. */
function mix32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return x >>> 0;
}

/** A bulk record's DocHash: 256 uniform bits from its row number, as many distinct values as rows. */
export function bulkDocHash(i: number): string {
  let text = "sha256:";
  // The first word is the row number itself, mixed: distinct rows, distinct hashes.
  let w = mix32(i);
  for (let k = 0; k < 8; k++) {
    text += w.toString(16).padStart(8, "0");
    w = mix32(w + 0x9e3779b9 + k);
  }
  return text;
}

function realDocHash(i: number): string {
  return `sha256:${createHash("sha256").update(`docverify bench scale real record ${i}`).digest("hex")}`;
}

/** The real records are row `j * step + (j % 20)` for j < REAL_RECORDS: spread over the table, each organisation in turn. */
export function isRealRow(i: number, step: number): boolean {
  return i % step === Math.floor(i / step) % ORG_COUNT;
}

function docHashOf(i: number, step: number): string {
  return isRealRow(i, step) ? realDocHash(i) : bulkDocHash(i);
}

/** Prints a line every few seconds while a long loop runs: rows/s, ETA, the file's size, free disk; stops the build when the disk fills. */
function progress(what: string, total: number, file: string, say: (line: string) => void): (done: number) => void {
  const started = performance.now();
  let lastSaid = started;
  return (done) => {
    const now = performance.now();
    if (now - lastSaid < 5_000 && done < total) return;
    lastSaid = now;
    const free = freeBytes(file);
    const rate = done / ((now - started) / 1000);
    const eta = done < total ? `, ETA ${Math.round((total - done) / rate)} s` : "";
    say(
      `  ${what} ${done.toLocaleString("en-US")} / ${total.toLocaleString("en-US")} (${Math.floor((done / total) * 100)} %), ` +
        `${Math.round(rate).toLocaleString("en-US")} rows/s${eta}; file ${gb(statSync(file).size)}, ${gb(free)} free`,
    );
    if (free < MIN_FREE_BYTES) throw new Error(`the disk is down to ${gb(free)} free: scale dataset build stopped`);
  };
}

async function build(dataDir: string, spec: ScaleSpec, say: (line: string) => void): Promise<Manifest> {
  const started = performance.now();
  const config = parseConfig({ DOCVERIFY_DATA_DIR: dataDir });
  const core = openCore({ config, log: createLogger({ level: "error" }) });
  const { db, signer } = core;
  const sql = db.$client;
  const file = join(dataDir, "docverify.db");
  let closed = false;
  try {
    const startMs = Date.now() - YEAR_MS - 86_400_000;
    const { orgs, orgKeys, seal, orgFps, sealFp, logKey, logKeyId } = await createBenchOrganisations(core, ORG_COUNT, startMs - 60_000);
    // As createApp does on a new installation (src/app/sqlite.ts): the harness reads it back to make the deep cursor.
    await core.store.write(metaValue("cursor_key", () => randomBytes(32).toString("hex")));
    // The benchmark serves this folder in place and proves that nothing is written to it
    // (scale.ts). An API key's last use is the one thing a read-only load would write (at most
    // once a minute per key, in the background: src/keys/credentials.ts), so the log key's is
    // set ahead, where "used within the last minute" always holds.
    sql.prepare("UPDATE api_keys SET last_used_at = ? WHERE key_id = ?").run(LAST_USED_AHEAD_MS, logKeyId);

    // A bulk build: no other connection, and a failure throws the folder away, so neither the
    // journal nor fsync buys anything. A 2 GB page cache holds the upper levels of every index.
    // WAL again (the product's mode) at the end.
    sql.run("PRAGMA journal_mode = OFF");
    sql.run("PRAGMA synchronous = OFF");
    sql.run("PRAGMA cache_size = -2000000");

    const insertRecord = sql.prepare(INSERT_RECORD_SQL);
    const insertLedger = sql.prepare(INSERT_RECORD_MESSAGE_SQL);
    const pool = Array.from({ length: 64 }, () => crypto.getRandomValues(new Uint8Array(BULK_SIGNATURE_BYTES)));
    const sequence = new Array<number>(ORG_COUNT).fill(1);
    const realHashes: string[] = [];
    const realIds: string[] = [];
    const step = spec.records / REAL_RECORDS;
    const topics = orgs.map((_, org) => `0.0.${900_001 + org}`);
    const filenames = (i: number) => (i % 3 === 0 ? `document-${i}.pdf` : null);

    const writeRecords = sql.transaction((from: number, to: number) => {
      const rnd = new Uint8Array((to - from) * 10);
      for (let o = 0; o < rnd.length; o += 65_536) crypto.getRandomValues(rnd.subarray(o, o + 65_536));
      for (let i = from; i < to; i++) {
        const ms = startMs + Math.floor((i * YEAR_MS) / spec.records);
        const id = uuidV7(ms, rnd.subarray((i - from) * 10, (i - from) * 10 + 10));
        const org = i % ORG_COUNT;
        const seq = ++sequence[org]!;
        const consensusAt = consensusOf(ms, i);
        const transactionId = `0.0.2@${Math.floor(ms / 1000)}.${String((ms % 1000) * 1_000_000 + (i % 1000)).padStart(9, "0")}`;
        if (isRealRow(i, step)) {
          const docHash = realDocHash(i);
          const payload = encodeRecordPayload({ recordId: id, docHash, signedAtMs: ms, signerKeyFingerprint: orgKeys[org]!.fingerprint });
          const signature = signer.sign(orgKeys[org]!, payload);
          const sealSignature = signer.sign(seal, encodeSealPayload(payload, signature, seal.fingerprint));
          const message = encodeCreationMessage({ recordId: id, docHash, signedAtMs: ms, signerPublicKey: orgKeys[org]!.publicKey, signature, sealSignature });
          insertRecord.run(id, orgs[org]!.id, docHash, filenames(i), ms, orgFps[org]!, signature, sealFp, sealSignature, topics[org]!, transactionId, seq, consensusAt, ms);
          insertLedger.run(transactionId, orgs[org]!.id, id, topics[org]!, message, ms, seq, consensusAt, crypto.getRandomValues(new Uint8Array(48)), ms, ms, ms + 4000);
          realHashes.push(docHash);
          realIds.push(id);
        } else {
          insertRecord.run(id, orgs[org]!.id, bulkDocHash(i), filenames(i), ms, orgFps[org]!, pool[i & 63]!, sealFp, pool[(i >> 6) & 63]!, topics[org]!, transactionId, seq, consensusAt, ms);
        }
      }
    });
    const recordsProgress = progress("records", spec.records, file, say);
    for (let from = 0; from < spec.records; from += BATCH) {
      const to = Math.min(spec.records, from + BATCH);
      writeRecords(from, to);
      recordsProgress(to);
    }

    // The verification log, through the log's own id generator (strictly increasing UUIDv7).
    const logStart = Date.now() - 86_400_000 - LOG_SPAN_MS;
    let now = logStart;
    const ids = createIdGenerator({ now: () => now });
    const insertLog = sql.prepare(INSERT_LOG_SQL);
    const mineTotal = mineCount(spec.logRows);
    const perOrg = spec.records / ORG_COUNT;
    let mine = 0;
    const marks: { firstId?: string; deepAfterId?: string; deepFirstId?: string } = {};
    const writeLog = sql.transaction((from: number, to: number) => {
      for (let i = from; i < to; i++) {
        now = logStart + Math.floor((i * LOG_SPAN_MS) / spec.logRows);
        const { id, ms } = ids();
        const isMine = i % 20 < MINE_OF_20;
        const org = isMine ? 0 : 1 + (i % (ORG_COUNT - 1));
        // A record of the row's organisation (records go round the organisations: row k belongs to k % 20).
        const record = (mix32(i ^ 0x5bd1e995) % perOrg) * ORG_COUNT + org;
        insertLog.run(id, orgs[org]!.id, isMine || i % 7 !== 0 ? "live" : "test", isMine ? logKeyId : "bench", i % 50 === 0 ? "revoked" : "verified_org",
          docHashOf(record, step), i % 4 === 0 ? `case-${i}` : null, ms);
        if (isMine) {
          // Newest first, the row at position p (oldest = 0) is number mineTotal - p.
          const rank = mineTotal - mine;
          if (rank === 1) marks.firstId = id;
          if (rank === spec.depth) marks.deepAfterId = id;
          if (rank === spec.depth + 1) marks.deepFirstId = id;
          mine++;
        }
      }
    });
    const logProgress = progress("log rows", spec.logRows, file, say);
    for (let from = 0; from < spec.logRows; from += BATCH) {
      const to = Math.min(spec.logRows, from + BATCH);
      writeLog(from, to);
      logProgress(to);
    }
    if (mine !== mineTotal || marks.firstId === undefined || marks.deepAfterId === undefined || marks.deepFirstId === undefined) {
      throw new Error(`organisation 0's live log has ${mine} rows, expected ${mineTotal}`);
    }

    sql.run("PRAGMA journal_mode = WAL");
    say("  counting rows and checking the deep page's position");
    const count = (table: string) => sql.prepare<{ n: number }, []>(`SELECT count(*) AS n FROM ${table}`).get()!.n;
    const rows = { records: count("records"), verifications: count("verifications"), ledgerTransactions: count("ledger_transactions") };
    if (rows.records !== spec.records || rows.verifications !== spec.logRows) throw new Error(`wrote ${JSON.stringify(rows)}, expected ${spec.records} records and ${spec.logRows} log rows`);
    // The ids the deep page is checked against, as the database orders them (the log's own order).
    const around = sql
      .prepare<{ id: string }, [string, number]>("SELECT id FROM verifications WHERE org_id = ? AND environment = 'live' ORDER BY id DESC LIMIT 2 OFFSET ?")
      .all(orgs[0]!.id, spec.depth - 1)
      .map((r) => r.id);
    if (around[0] !== marks.deepAfterId || around[1] !== marks.deepFirstId) throw new Error(`the deep page's rows are ${around.join(", ")}, not ${marks.deepAfterId}, ${marks.deepFirstId}`);
    const trees = sql
      .prepare<{ name: string; rootpage: number }, []>("SELECT name, rootpage FROM sqlite_master WHERE rootpage > 0 AND tbl_name IN ('records', 'verifications') ORDER BY name")
      .all();
    void core.close();
    closed = true;
    const depths = fileBtreeDepths(file, trees);
    const bytes = statSync(file).size;
    const buildSeconds = (performance.now() - started) / 1000;
    say(`scale dataset built in ${buildSeconds.toFixed(0)} s: ${gb(bytes)}; B-tree depths ${formatDepths(depths)}`);
    return {
      spec,
      realHashes,
      realIds,
      logKey,
      logOrgId: orgs[0]!.id,
      logRowsOfOrg0: mineTotal,
      firstId: marks.firstId,
      deepAfterId: marks.deepAfterId,
      deepFirstId: marks.deepFirstId,
      rows,
      depths,
      bytes,
      buildSeconds,
    };
  } finally {
    if (!closed) void core.close();
  }
}

/** `records 4, records_doc_hash 4, …`: the depth of each tree, for the report. */
export function formatDepths(depths: Readonly<Record<string, number>>): string {
  return Object.entries(depths)
    .map(([name, depth]) => `${name} ${depth}`)
    .join(", ");
}

// `bun scripts/bench/scale-dataset.ts`: build (or find) the cached dataset without running the benchmark.
if (import.meta.main) {
  const data = await ensureScaleDataset(scaleSpec(), (line) => console.log(line));
  console.log(
    `${data.dir}: ${data.rows.records.toLocaleString("en-US")} records, ${data.rows.verifications.toLocaleString("en-US")} log rows, ${gb(data.bytes)}, ` +
      `built in ${data.buildSeconds.toFixed(0)} s; B-tree depths ${formatDepths(data.depths)}`,
  );
}
