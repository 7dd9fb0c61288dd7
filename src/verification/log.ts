/**
 * The verification log (docs/verification.md, "The log"): one row per successful credentialed
 * verification, kept per organisation and environment.
 *
 * What this MUST guarantee (and callers may assume):
 * - Durable before acknowledged: `record()` resolves only after the transaction holding its row
 *   has committed (the database syncs every commit, src/storage/db.ts), so a response sent after
 *   it cannot name a row that a crash loses. Rows from concurrent callers are grouped into one
 *   transaction (group commit); if that transaction fails, every caller in it is rejected and
 *   none of its rows exist.
 * - With `writerThread` (what `serve` uses), the transactions are written by a worker thread
 *   with its own connection (src/storage/writer-thread.ts): the inserts, the commit and its fsync
 *   never hold the event loop, and the rows arriving meanwhile form the next batch (one batch in
 *   flight at a time). Without it (tests, tools), on the calling thread.
 * - Ids are UUIDv7 and strictly increasing in the order `record()` is called within this process,
 *   and (seeded from the newest stored id at start) across restarts, even if the clock steps
 *   back. Batches commit one at a time, in order, so a reader never sees a row while an older
 *   row is still to come. A row's `verifiedAt` is its id's timestamp.
 * - Listing is keyset pagination, newest first (`id < last id`): rows recorded while a client
 *   pages have larger ids, so they never appear on a later page nor shift rows between pages.
 *
 * Two engines (docs/storage.md). SQLite: as above; `list`, `listJson` and `get` answer
 * synchronously. PostgreSQL (several nodes, one database): each batch is one multi-row INSERT in
 * one transaction through the store, one batch in flight at a time, and a row is acknowledged only
 * once its batch has committed; `list`, `listJson` and `get` answer with a promise. Ids, pages and
 * cursors are the same: ids are ordered as bytes on both engines (`COLLATE "C"`), so a cursor made
 * by one node is accepted by every node of the database with the same `cursorKey` (it is kept in
 * the database). Ids increase within each node; two nodes' ids interleave by their clocks, so on
 * PostgreSQL "never behind a page already read" holds for the rows of one node, and across nodes
 * only as far as their clocks agree and their batches commit in time (a few milliseconds).
 *
 * Cursor, version 1 (docs/verification.md, "Cursor format (version 1)"): base64url (no padding) of
 *   0x01 || last row id (16 bytes) || HMAC-SHA256(cursorKey, binding)          49 bytes, 66 chars
 * where binding = "docverify/verification-cursor/v1" 0x00 || 0x01 || id (16 bytes)
 *   || field(orgId) || field(environment) || opt(verdict) || opt(originalDocHash)
 *   || opt(from, as decimal ms) || opt(to, as decimal ms)
 * with field(x) = u32be(len) || UTF-8 x and opt(x) = 0x00 when absent, 0x01 || field(x) when
 * present. A cursor is therefore only accepted for the organisation, environment and filters
 * it was issued for; `limit` may change between pages.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Clock } from "../lib/clock.ts";
import { DomainError, invalid } from "../lib/errors.ts";
import { rfc3339Ms, UUID_RE } from "../lib/formats.ts";
import { jsonString } from "../lib/json.ts";
import { isBusy, isUnavailable } from "../lib/storage-faults.ts";
import { hmacSha256 } from "../crypto/hmac.ts";
import { approxBytes, Lru, namedCache, stringBytes, type NamedCache } from "../lib/lru.ts";
import { readKept, type KeptRead } from "../storage/data-version.ts";
import { changes, firstRow, q, rows, type SqliteStore, type Store } from "../storage/store.ts";
import {
  AFTER,
  FROM,
  HASH,
  insertLogRows,
  LOG_ROW_BY_ID,
  LOG_ROW_VALUES,
  logPage,
  logPageIds,
  NEWEST_LOG_ID,
  SQLITE_INSERT_LOG_ROW,
  TO,
  VERDICT,
  type LogRow,
  type LogSummaryRow,
} from "../storage/verification-statements.ts";
import { createWriterThread, WriterBusyError, type WriterThread } from "../storage/writer-thread.ts";
import { ASSURANCE_LEVEL, DOC_HASH_RE, MODE, isVerdict, type Environment, type RecordedVerification, type Verdict, type VerificationSummary } from "./types.ts";

export interface VerificationLogRow {
  readonly orgId: string;
  readonly environment: Environment;
  /** The API key that made the request (kept for audit; never shown). */
  readonly keyId: string;
  readonly verdict: Verdict;
  readonly docHash: string;
  readonly reference?: string;
  /** With verdict `pending_anchor`: what the caller was told, kept so GET by id shows it as recorded. */
  readonly retryAfterSeconds?: number;
}

export interface ListFilters {
  readonly verdict?: Verdict;
  readonly originalDocHash?: string;
  /** Inclusive bounds, ms since the epoch (query.ts turns RFC 3339 text into these). */
  readonly from?: number;
  readonly to?: number;
}

export interface ListInput {
  readonly orgId: string;
  readonly environment: Environment;
  readonly filters: ListFilters;
  /** 1 to 100 (query.ts enforces it for requests). */
  readonly limit: number;
  /** The previous page's `nextCursor`, verbatim. */
  readonly after?: string;
}

export interface ListPage {
  readonly data: VerificationSummary[];
  readonly pagination: { readonly nextCursor: string | null; readonly hasMore: boolean };
}

export interface VerificationLogDeps {
  /** The database: a SqliteStore (pages answered synchronously) or a PostgresStore (with promises). */
  readonly store: Store;
  readonly clock: Clock;
  /** 32-byte server-side secret that authenticates cursors. */
  readonly cursorKey: Uint8Array;
  /** Rows per transaction at most; a full batch is written at once (on PostgreSQL, when none is in flight). Default 256. */
  readonly maxBatch?: number;
  /**
   * SQLite only: write on a worker thread with its own connection to this database file (`path`,
   * the main connection's). `entry` is for tests only. Default: on the calling thread.
   */
  readonly writerThread?: { readonly path: string; readonly entry?: URL };
}

export interface VerificationLog {
  record(row: VerificationLogRow): Promise<{ verificationId: string; verifiedAt: string }>;
  /** At once on SQLite, a promise on PostgreSQL (as `listJson` and `get`). */
  list(input: ListInput): ListPage | Promise<ListPage>;
  /** `JSON.stringify(list(input))`, written from the rows without building the page's objects. */
  listJson(input: ListInput): string | Promise<string>;
  get(input: { orgId: string; environment: Environment; verificationId: string }): RecordedVerification | Promise<RecordedVerification>;
  /**
   * Writes whatever is queued now (its callers' promises settle as usual). On SQLite's calling
   * thread this is synchronous; with a writer thread, or on PostgreSQL, the promise settles once
   * every row recorded so far is committed (or its batch failed). Never rejects.
   */
  flush(): Promise<void>;
  /** Flushes, then ends the writer thread, if any. Call before closing the database at shutdown. */
  close(): Promise<void>;
  /** Transactions and rows written so far (for tests and metrics). */
  stats(): { readonly batches: number; readonly rows: number; readonly failedBatches: number };
  /** What it keeps in memory, each with its size and budget (/metrics), and emptied when the service goes quiet. */
  caches(): readonly NamedCache[];
  /**
   * Gives back what its writer thread holds beyond its work (SQLite: that connection's page cache
   * and its heap's garbage), when the service has gone quiet. Nothing on PostgreSQL.
   */
  releaseMemory(): void;
}

/** The log over SQLite: pages and rows answered synchronously. */
export interface SqliteVerificationLog extends VerificationLog {
  list(input: ListInput): ListPage;
  listJson(input: ListInput): string;
  get(input: { orgId: string; environment: Environment; verificationId: string }): RecordedVerification;
}

export const CURSOR_VERSION = 1;
const CURSOR_DOMAIN = "docverify/verification-cursor/v1";
const CURSOR_BYTES = 1 + 16 + 32;

// ---------------------------------------------------------------------------------------------
// Ids: UUIDv7 (RFC 9562 §6.2 method 3, "monotonic random"). Bun.randomUUIDv7 happens to be
// monotonic in a tight loop (a counter in rand_a), but that is not documented, it reads the real
// clock rather than the injected one, and it knows nothing of ids stored before a restart. Here
// the 74 bits after the timestamp are one counter: a new millisecond starts it at a random value
// below 2^73, the same (or an earlier) millisecond adds a random 1..2^32 to the last one, and an
// overflow moves to the next millisecond. So ids strictly increase whatever the clock does.
// ---------------------------------------------------------------------------------------------

const COUNTER_BITS = 74n;
const COUNTER_MAX = (1n << COUNTER_BITS) - 1n;

function randomBigInt(bytes: number): bigint {
  const b = crypto.getRandomValues(new Uint8Array(bytes));
  let v = 0n;
  for (const x of b) v = (v << 8n) | BigInt(x);
  return v;
}

function formatUuidV7(ms: number, counter: bigint): string {
  const randA = (counter >> 62n) & 0xfffn;
  const randB = counter & ((1n << 62n) - 1n);
  const hi = (BigInt(ms) << 16n) | (0x7n << 12n) | randA; // 64 bits
  const lo = (0b10n << 62n) | randB; // 64 bits
  const hex = hi.toString(16).padStart(16, "0") + lo.toString(16).padStart(16, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function parseUuidV7(id: string): { ms: number; counter: bigint } | null {
  if (!UUID_RE.test(id) || id[14] !== "7" || !"89ab".includes(id[19]!)) return null;
  const hex = id.replaceAll("-", "");
  const ms = parseInt(hex.slice(0, 12), 16);
  const randA = BigInt(`0x${hex.slice(13, 16)}`);
  const randB = BigInt(`0x${hex.slice(16, 32)}`) & ((1n << 62n) - 1n);
  return { ms, counter: (randA << 62n) | randB };
}

/** A strictly increasing UUIDv7 source, starting above `after` when given. */
export function createIdGenerator(clock: Clock, after?: string | null): () => { id: string; ms: number } {
  let lastMs = -1;
  let last = 0n;
  const seed = after ? parseUuidV7(after) : null;
  if (seed !== null) {
    lastMs = seed.ms;
    last = seed.counter;
  }
  return () => {
    const now = clock.now();
    if (now > lastMs) {
      lastMs = now;
      last = randomBigInt(10) & ((1n << (COUNTER_BITS - 1n)) - 1n);
    } else {
      const next = last + 1n + (randomBigInt(4) & 0xffffffffn);
      if (next > COUNTER_MAX) {
        lastMs += 1;
        last = randomBigInt(10) & ((1n << (COUNTER_BITS - 1n)) - 1n);
      } else {
        last = next;
      }
    }
    return { id: formatUuidV7(lastMs, last), ms: lastMs };
  };
}

/** The smallest and largest id text any UUIDv7 of millisecond `ms` can have. */
export function idFloor(ms: number): string {
  const h = Math.max(0, ms).toString(16).padStart(12, "0");
  return `${h.slice(0, 8)}-${h.slice(8)}-0000-0000-000000000000`;
}
function idCeiling(ms: number): string {
  const h = Math.max(0, ms).toString(16).padStart(12, "0");
  return `${h.slice(0, 8)}-${h.slice(8)}-ffff-ffff-ffffffffffff`;
}

// ---------------------------------------------------------------------------------------------
// Cursors
// ---------------------------------------------------------------------------------------------

function field(text: string): Buffer {
  const b = Buffer.from(text, "utf8");
  const len = Buffer.alloc(4);
  len.writeUInt32BE(b.length);
  return Buffer.concat([len, b]);
}
function opt(value: string | number | undefined): Buffer {
  return value === undefined ? Buffer.from([0]) : Buffer.concat([Buffer.from([1]), field(String(value))]);
}

/** The binding's bytes after the id: organisation, environment and filters (see the header). */
function scopeBytes(scope: { orgId: string; environment: string; filters: ListFilters }): Buffer {
  const f = scope.filters;
  return Buffer.concat([field(scope.orgId), field(scope.environment), opt(f.verdict), opt(f.originalDocHash), opt(f.from), opt(f.to)]);
}

const MAC_PREFIX = Buffer.concat([Buffer.from(`${CURSOR_DOMAIN}\0`, "ascii"), Buffer.from([CURSOR_VERSION])]);

/**
 * The binding's scope bytes by scope, bounded: a client pages with one scope at a time, and a
 * cursor is made or checked on every page.
 */
const scopeCache = new Map<string, Buffer>();

function cachedScopeBytes(scope: { orgId: string; environment: string; filters: ListFilters }): Buffer {
  const f = scope.filters;
  const id = `${scope.orgId}\0${scope.environment}\0${f.verdict ?? "\u0001"}\0${f.originalDocHash ?? "\u0001"}\0${f.from ?? "\u0001"}\0${f.to ?? "\u0001"}`;
  let bytes = scopeCache.get(id);
  if (bytes === undefined) {
    bytes = scopeBytes(scope);
    if (scopeCache.size >= 256) scopeCache.clear();
    scopeCache.set(id, bytes);
  }
  return bytes;
}

function cursorMac(key: Uint8Array, idBytes: Buffer, scope: { orgId: string; environment: string; filters: ListFilters }): Buffer {
  return hmacSha256(key, MAC_PREFIX, idBytes, cachedScopeBytes(scope));
}

/** The MAC as RFC 2104 states it, with createHmac: what `cursorMac` must equal (tests). */
export function referenceCursorMac(key: Uint8Array, idBytes: Buffer, scope: { orgId: string; environment: string; filters: ListFilters }): Buffer {
  return createHmac("sha256", key).update(MAC_PREFIX).update(idBytes).update(scopeBytes(scope)).digest();
}

export function encodeCursor(key: Uint8Array, lastId: string, scope: { orgId: string; environment: string; filters: ListFilters }): string {
  const idBytes = Buffer.from(lastId.replaceAll("-", ""), "hex");
  return Buffer.concat([Buffer.from([CURSOR_VERSION]), idBytes, cursorMac(key, idBytes, scope)]).toString("base64url");
}

const CURSOR_REFUSED = "is not a cursor issued for this query: pass back nextCursor verbatim, with the same filters";

/** The last row id a cursor names, or VALIDATION_FAILED `{after}`. */
export function decodeCursor(key: Uint8Array, cursor: string, scope: { orgId: string; environment: string; filters: ListFilters }): string {
  if (typeof cursor !== "string" || !/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) throw invalid("after", CURSOR_REFUSED);
  const bytes = Buffer.from(cursor, "base64url");
  // Only the canonical spelling: no padding, no stray trailing bits.
  if (bytes.length !== CURSOR_BYTES || bytes.toString("base64url") !== cursor || bytes[0] !== CURSOR_VERSION) throw invalid("after", CURSOR_REFUSED);
  const idBytes = bytes.subarray(1, 17);
  const mac = bytes.subarray(17);
  if (!timingSafeEqual(mac, cursorMac(key, idBytes, scope))) throw invalid("after", CURSOR_REFUSED);
  const h = idBytes.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

// ---------------------------------------------------------------------------------------------
// Rows, pages and answers: the same on both engines.
// ---------------------------------------------------------------------------------------------

type Row = LogRow;
type SummaryRow = LogSummaryRow;

function summary(row: SummaryRow): VerificationSummary {
  if (!isVerdict(row.verdict)) throw new Error(`verification ${row.id} has unknown verdict ${row.verdict}`);
  const s: { -readonly [K in keyof VerificationSummary]: VerificationSummary[K] } = {
    verificationId: row.id,
    verdict: row.verdict,
    assuranceLevel: ASSURANCE_LEVEL,
    mode: MODE,
    environment: row.environment,
    originalDocHash: row.doc_hash,
    verifiedAt: rfc3339Ms(row.verified_at_ms),
  };
  if (row.reference !== null) s.reference = row.reference;
  return s;
}

/** `JSON.stringify(summary(row))`, written directly: the same text, property for property (a test compares them). */
function summaryJson(row: SummaryRow): string {
  if (!isVerdict(row.verdict)) throw new Error(`verification ${row.id} has unknown verdict ${row.verdict}`);
  // Every string from the row goes through jsonString (JSON.stringify's output): a stored value
  // is never trusted to need no escaping. The verdict is one of the enum's names, the constants are ours.
  return (
    `{"verificationId":${jsonString(row.id)},"verdict":"${row.verdict}","assuranceLevel":${ASSURANCE_JSON},"mode":${MODE_JSON},` +
    `"environment":${jsonString(row.environment)},"originalDocHash":${jsonString(row.doc_hash)},"verifiedAt":"${rfc3339Ms(row.verified_at_ms)}"` +
    (row.reference !== null ? `,"reference":${jsonString(row.reference)}}` : "}")
  );
}
/** Rows whose page JSON the SQLite log keeps at most (about 600 bytes each with the map's share). */
export const ROW_JSON_MEMO = 4096;
/** The row JSON's byte budget: some 3,500 rows. */
export const ROW_JSON_BYTES = 2 * 1024 * 1024;
/** Pages whose JSON the SQLite log keeps while the database is unchanged, at most (up to 100 rows each, 30 KB and more). */
export const PAGES_KEPT = 256;
/** The kept pages' byte budget: some 130 pages of 25 rows. */
export const PAGES_BYTES = 4 * 1024 * 1024;
/** Page inputs whose checked query (the cursor's MAC verified) the SQLite log keeps, at most (about 1 KB each). */
export const PAGE_QUERIES_KEPT = 1024;
/** The checked queries' byte budget. */
export const PAGE_QUERIES_BYTES = 1024 * 1024;
const ASSURANCE_JSON = JSON.stringify(ASSURANCE_LEVEL);
const MODE_JSON = JSON.stringify(MODE);

export { AFTER, FROM, HASH, TO, VERDICT };

/** The SQLite list statement for a combination of filters (bits above); exported for the query-plan test. */
export function listSql(mask: number): string {
  return logPage(mask).sqlite;
}
/** The statement reading only that page's ids (the row JSON memo's path); exported for the query-plan test. */
export function listIdsSql(mask: number): string {
  return logPageIds(mask).sqlite;
}

/** A page query: its statement's filter bits, its parameters, and the scope its cursors are bound to. */
interface PageQuery {
  readonly mask: number;
  readonly args: (string | number)[];
  readonly limit: number;
  readonly scope: { orgId: string; environment: string; filters: ListFilters };
}

/** Checks `input` and names the statement and parameters that read its page (one more row than `limit`: is there more?). */
function pageQuery(input: ListInput, cursorKey: Uint8Array): PageQuery {
  const { orgId, environment, filters, limit } = input;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 100) throw invalid("limit", "must be an integer from 1 to 100");
  const scope = { orgId, environment, filters };
  let mask = 0;
  const args: (string | number)[] = [orgId, environment];
  if (filters.originalDocHash !== undefined) (mask |= HASH), args.push(filters.originalDocHash);
  if (filters.verdict !== undefined) (mask |= VERDICT), args.push(filters.verdict);
  if (filters.from !== undefined) (mask |= FROM), args.push(idFloor(filters.from), filters.from);
  if (filters.to !== undefined) (mask |= TO), args.push(idCeiling(filters.to), filters.to);
  if (input.after !== undefined) (mask |= AFTER), args.push(decodeCursor(cursorKey, input.after, scope));
  args.push(limit + 1);
  return { mask, args, limit, scope };
}

interface FoundPage {
  readonly page: readonly SummaryRow[];
  readonly nextCursor: string | null;
  readonly hasMore: boolean;
}

/** The page in what its statement found, and the cursor after it. */
function pageOf(found: readonly SummaryRow[], query: PageQuery, cursorKey: Uint8Array): FoundPage {
  const hasMore = found.length > query.limit;
  const page = hasMore ? found.slice(0, query.limit) : found;
  const last = page[page.length - 1];
  return { page, nextCursor: hasMore && last !== undefined ? encodeCursor(cursorKey, last.id, query.scope) : null, hasMore };
}

function pageList({ page, nextCursor, hasMore }: FoundPage): ListPage {
  return { data: page.map(summary), pagination: { nextCursor, hasMore } };
}

/** The page as JSON text, written from the rows: no summary objects to build and serialise. */
function pageJson({ page, nextCursor, hasMore }: FoundPage, rowJson: (row: SummaryRow) => string = summaryJson): string {
  let out = '{"data":[';
  for (let i = 0; i < page.length; i++) out += (i === 0 ? "" : ",") + rowJson(page[i]!);
  return pageJsonEnd(out, nextCursor, hasMore);
}
/** `{"data":[` and the rows, closed with the pagination object. */
function pageJsonEnd(data: string, nextCursor: string | null, hasMore: boolean): string {
  return `${data}],"pagination":{"nextCursor":${nextCursor === null ? "null" : JSON.stringify(nextCursor)},"hasMore":${hasMore}}}`;
}

const notFound = () => new DomainError("NOT_FOUND", "No verification with this id.");

/** Whether `id` can name a row at all: a malformed id is answered like an unknown one. */
function checkId(id: unknown): asserts id is string {
  if (typeof id !== "string" || !UUID_RE.test(id)) throw notFound();
}

/** One row as GET by id shows it. */
function recorded(row: Row | null | undefined): RecordedVerification {
  if (row == null) throw notFound();
  const s = summary(row);
  return {
    verificationId: s.verificationId,
    verdict: s.verdict,
    disclosureTier: "organisation",
    assuranceLevel: ASSURANCE_LEVEL,
    mode: MODE,
    environment: s.environment,
    originalDocHash: s.originalDocHash,
    verifiedAt: s.verifiedAt,
    ...(s.reference !== undefined ? { reference: s.reference } : {}),
    matches: [],
    ...(row.retry_after_seconds != null ? { retryAfterSeconds: row.retry_after_seconds } : {}),
  };
}

/** The row `input` records under `id`, or null when `input` is malformed (refused before it could fail a batch it shares). */
function rowOf(input: VerificationLogRow, id: string, ms: number): Row | null {
  if (
    typeof input.orgId !== "string" ||
    (input.environment !== "live" && input.environment !== "test") ||
    typeof input.keyId !== "string" ||
    !isVerdict(input.verdict) ||
    typeof input.docHash !== "string" ||
    !DOC_HASH_RE.test(input.docHash) ||
    (input.reference !== undefined && typeof input.reference !== "string") ||
    (input.retryAfterSeconds !== undefined && !Number.isSafeInteger(input.retryAfterSeconds))
  ) {
    return null;
  }
  return {
    id,
    org_id: input.orgId,
    environment: input.environment,
    key_id: input.keyId,
    verdict: input.verdict,
    doc_hash: input.docHash,
    reference: input.reference ?? null,
    verified_at_ms: ms,
    retry_after_seconds: input.retryAfterSeconds ?? null,
  };
}

const malformed = () => Promise.reject(new TypeError("verification log row is malformed"));

/** A row's values in the insert's column order. */
function valuesOf(r: Row): (string | number | null)[] {
  return [r.id, r.org_id, r.environment, r.key_id, r.verdict, r.doc_hash, r.reference, r.verified_at_ms, r.retry_after_seconds ?? null];
}

const serviceBusy = (cause: unknown) => Object.assign(new DomainError("SERVICE_UNAVAILABLE", "The service is busy. Retry shortly.", undefined, 1), { cause });

interface Pending {
  readonly row: Row;
  resolve(v: { verificationId: string; verifiedAt: string }): void;
  reject(e: unknown): void;
}

function checkDeps(deps: VerificationLogDeps): { maxBatch: number; cursorKey: Uint8Array } {
  const maxBatch = deps.maxBatch ?? 256;
  if (!Number.isSafeInteger(maxBatch) || maxBatch < 1) throw new RangeError("maxBatch must be a positive integer");
  if (!(deps.cursorKey instanceof Uint8Array) || deps.cursorKey.length !== 32) throw new TypeError("cursorKey must be 32 bytes");
  // Our own copy: a caller zeroing theirs changes nothing.
  return { maxBatch, cursorKey: new Uint8Array(deps.cursorKey) };
}

export function createVerificationLog(deps: VerificationLogDeps & { readonly store: SqliteStore }): SqliteVerificationLog;
export function createVerificationLog(deps: VerificationLogDeps): VerificationLog;
export function createVerificationLog(deps: VerificationLogDeps): VerificationLog {
  if (deps.store.engine === "sqlite") return sqliteLog(deps, deps.store as SqliteStore);
  if (deps.writerThread !== undefined) throw new TypeError("writerThread is for SQLite only");
  return postgresLog(deps, deps.store);
}

// ---------------------------------------------------------------------------------------------
// SQLite: group commit on the calling thread or on a writer thread; pages synchronous.
// ---------------------------------------------------------------------------------------------

function sqliteLog(deps: VerificationLogDeps, store: SqliteStore): SqliteVerificationLog {
  const { clock } = deps;
  const { maxBatch, cursorKey } = checkDeps(deps);

  const client = store.db.$client;
  const newest = client.prepare<{ id: string }, []>(NEWEST_LOG_ID.sqlite).get();
  const nextId = createIdGenerator(clock, newest?.id ?? null);

  const insertRow = client.prepare<never, [string, string, string, string, string, string, string | null, number, number | null]>(SQLITE_INSERT_LOG_ROW);
  const writer: WriterThread | null = deps.writerThread === undefined ? null : createWriterThread({ ...deps.writerThread, statements: [SQLITE_INSERT_LOG_ROW], ...(store.version.claims === null ? {} : { claims: store.version.claims }) });
  const insertBatch = client.transaction((batch: readonly Pending[]) => {
    for (const { row: r } of batch) insertRow.run(r.id, r.org_id, r.environment, r.key_id, r.verdict, r.doc_hash, r.reference, r.verified_at_ms, r.retry_after_seconds ?? null);
  });
  const listStatements = new Map<number, ReturnType<typeof client.prepare<SummaryRow, (string | number)[]>>>();
  const listStatement = (mask: number) => {
    let st = listStatements.get(mask);
    if (st === undefined) listStatements.set(mask, (st = client.prepare<SummaryRow, (string | number)[]>(logPage(mask).sqlite)));
    return st;
  };
  const byId = client.prepare<Row, [string, string, string]>(LOG_ROW_BY_ID.sqlite);

  let queue: Pending[] = [];
  let scheduled = false;
  let batches = 0;
  let rows = 0;
  let failedBatches = 0;

  /** The writer thread's batch in flight, settled (never rejected) when it is done; null when none. */
  let inFlight: Promise<void> | null = null;

  function settle(batch: readonly Pending[]): void {
    batches++;
    rows += batch.length;
    for (const p of batch) p.resolve({ verificationId: p.row.id, verifiedAt: rfc3339Ms(p.row.verified_at_ms) });
  }

  /** Writes the queue in one transaction. Synchronous, so batches commit one at a time, in order. */
  function writeQueued(): void {
    scheduled = false;
    if (queue.length === 0) return;
    if (writer !== null) return writeOnThread(writer);
    const batch = queue;
    queue = [];
    try {
      // IMMEDIATE: take the write lock first, so the transaction cannot fail half-way on an upgrade.
      insertBatch.immediate(batch);
    } catch (e) {
      failedBatches++;
      const err = isBusy(e) ? serviceBusy(e) : e;
      for (const p of batch) p.reject(err);
      return;
    }
    settle(batch);
  }

  /** The queue as one batch to the writer thread, unless one is in flight (its end sends the next). */
  function writeOnThread(w: WriterThread): void {
    if (inFlight !== null || queue.length === 0) return;
    const batch = queue;
    queue = [];
    const values = batch.map(({ row }) => valuesOf(row));
    inFlight = w.write(SQLITE_INSERT_LOG_ROW, values).then(
      () => settle(batch),
      (e: unknown) => {
        failedBatches++;
        const err = e instanceof WriterBusyError ? serviceBusy(e) : e;
        for (const p of batch) p.reject(err);
      },
    );
    void inFlight.then(() => {
      inFlight = null;
      // Rows recorded while this batch was written: the next batch, at once.
      writeOnThread(w);
    });
  }

  async function flush(): Promise<void> {
    writeQueued();
    while (inFlight !== null) {
      await inFlight;
      // The in-flight batch's end sent what was queued behind it; wait for that one too.
      await Promise.resolve();
    }
  }

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    // setImmediate runs after the I/O callbacks already due: requests that arrived while the last
    // batch was syncing are queued first and share the next transaction.
    setImmediate(writeQueued);
  }

  const idStatements = new Map<number, ReturnType<typeof client.prepare<{ id: string }, (string | number)[]>>>();
  const idStatement = (mask: number) => {
    let st = idStatements.get(mask);
    if (st === undefined) idStatements.set(mask, (st = client.prepare<{ id: string }, (string | number)[]>(logPageIds(mask).sqlite)));
    return st;
  };
  // Each row's JSON as a page shows it, by id. A log row never changes once written (nothing
  // updates the table; retention only deletes, and a deleted row's id is never read again), so
  // the text made from it stays true. A page whose every id is here is answered from the ids
  // alone, read from the index that serves the page (docs/benchmarks.md, "How the figures moved": a page of rows read whole and
  // written out was two thirds of its cost).
  const rowJson = new Lru<string, string>({ maxEntries: ROW_JSON_MEMO, maxBytes: ROW_JSON_BYTES, bytesOf: (id, text) => stringBytes(id) + stringBytes(text) });
  const rememberedJson = (row: SummaryRow): string => {
    const text = summaryJson(row);
    rowJson.set(row.id, text);
    return text;
  };

  function readPage(input: ListInput): FoundPage {
    return readRows(pageQuery(input, cursorKey));
  }
  function readRows(query: PageQuery): FoundPage {
    return pageOf(listStatement(query.mask).all(...query.args), query, cursorKey);
  }

  // A page's query by its exact input: the limit and filters checked and the cursor's MAC
  // verified once per distinct input, not on every request (the same bytes always give the same
  // answer; a refused input is never kept, so it is refused again, in full, every time).
  const queriesKept = new Lru<string, PageQuery>({ maxEntries: PAGE_QUERIES_KEPT, maxBytes: PAGE_QUERIES_BYTES, bytesOf: (key, query) => stringBytes(key) + approxBytes(query) });
  function keptQuery(input: ListInput): { readonly key: string; readonly query: PageQuery } {
    const f = input.filters;
    // Every field but the cursor has a fixed format (the route checks it; ids are UUIDs), so NUL
    // separates them unambiguously; the cursor, free text until checked, comes last.
    const key = `${input.orgId}\0${input.environment}\0${f.verdict ?? "\u0001"}\0${f.originalDocHash ?? "\u0001"}\0${f.from ?? "\u0001"}\0${f.to ?? "\u0001"}\0${input.limit}\0${input.after ?? "\u0001"}`;
    let query = queriesKept.get(key);
    if (query === undefined) {
      query = pageQuery(input, cursorKey);
      queriesKept.set(key, query);
    }
    return { key, query };
  }

  // A page's JSON as last read, by its input, under the data version it was read at
  // (storage/data-version.ts): what a read would give again while nothing at all has been
  // committed since, by any connection or process; read again (and kept anew) otherwise.
  const pagesKept = new Lru<string, KeptRead<string>>({ maxEntries: PAGES_KEPT, maxBytes: PAGES_BYTES, bytesOf: (key, kept) => stringBytes(key) + approxBytes(kept) });

  function readPageJson(input: ListInput): string {
    const { key, query } = keptQuery(input);
    return readKept(pagesKept, store.version.current(), key, () => pageText(query));
  }

  /** The page's JSON: its ids from the index, each row's text from memory when every row has one. */
  function pageText(query: PageQuery): string {
    const ids = idStatement(query.mask).values(...query.args);
    const hasMore = ids.length > query.limit;
    const n = hasMore ? query.limit : ids.length;
    let out = '{"data":[';
    for (let i = 0; i < n; i++) {
      const text = rowJson.get(ids[i]![0] as string);
      // A row not yet shown: the page read whole (a new read, so rows written meanwhile may be in it), each row's text kept.
      if (text === undefined) return pageJson(readRows(query), rememberedJson);
      out += (i === 0 ? "" : ",") + text;
    }
    const last = n > 0 ? (ids[n - 1]![0] as string) : undefined;
    return pageJsonEnd(out, hasMore && last !== undefined ? encodeCursor(cursorKey, last, query.scope) : null, hasMore);
  }

  return {
    record(input) {
      // Checked first, so one caller's bad row cannot fail the batch it would share with others.
      const probe = rowOf(input, "", 0);
      if (probe === null) return malformed();
      const { id, ms } = nextId();
      const row: Row = { ...probe, id, verified_at_ms: ms };
      const done = new Promise<{ verificationId: string; verifiedAt: string }>((resolve, reject) => queue.push({ row, resolve, reject }));
      if (writer !== null && inFlight !== null) return done; // joins the batch after the one in flight
      if (queue.length >= maxBatch) writeQueued();
      else schedule();
      return done;
    },

    list: (input) => pageList(readPage(input)),
    listJson: readPageJson,

    get(input) {
      checkId(input.verificationId);
      return recorded(byId.get(input.verificationId, input.orgId, input.environment));
    },

    flush,

    async close() {
      await flush();
      await writer?.close();
    },

    stats() {
      return { batches, rows, failedBatches };
    },

    caches: () => [namedCache("log_row_json", rowJson), namedCache("log_page_queries", queriesKept), namedCache("log_pages", pagesKept)],

    releaseMemory() {
      writer?.releaseMemory();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL: one multi-row INSERT per batch through the store, one batch in flight; pages awaited.
// ---------------------------------------------------------------------------------------------

function postgresLog(deps: VerificationLogDeps, store: Store): VerificationLog {
  const { clock } = deps;
  const { maxBatch, cursorKey } = checkDeps(deps);

  /**
   * Ids start above the newest stored one, read before the first id is handed out: rows recorded
   * meanwhile wait for it, in the order they came. A failed read is tried again by the next row.
   */
  let nextId: ReturnType<typeof createIdGenerator> | null = null;
  let seeding: Promise<void> | null = null;
  const seeded = (): Promise<void> =>
    (seeding ??= store.read(() => q(firstRow(NEWEST_LOG_ID))).then(
      (newest) => {
        nextId ??= createIdGenerator(clock, newest?.id ?? null);
      },
      (e: unknown) => {
        seeding = null;
        throw isUnavailable(e) ? serviceBusy(e) : e;
      },
    ));

  let queue: Pending[] = [];
  let scheduled = false;
  let batches = 0;
  let written = 0;
  let failedBatches = 0;
  /** The batch being written, settled (never rejected) when it is done; null when none. */
  let inFlight: Promise<void> | null = null;

  /** Sends the next batch (at most `maxBatch` rows) unless one is in flight; its end sends the one after. */
  function writeQueued(): void {
    scheduled = false;
    if (inFlight !== null || queue.length === 0) return;
    const batch = queue.length <= maxBatch ? queue : queue.slice(0, maxBatch);
    queue = batch === queue ? [] : queue.slice(maxBatch);
    const values = batch.flatMap(({ row }) => valuesOf(row));
    inFlight = store
      .write(() => q(changes(insertLogRows(batch.length), ...values)))
      .then(
        () => {
          batches++;
          written += batch.length;
          for (const p of batch) p.resolve({ verificationId: p.row.id, verifiedAt: rfc3339Ms(p.row.verified_at_ms) });
        },
        (e: unknown) => {
          failedBatches++;
          const err = isUnavailable(e) ? serviceBusy(e) : e;
          for (const p of batch) p.reject(err);
        },
      )
      .then(() => {
        inFlight = null;
        // Rows recorded while this batch was written: the next batch, at once.
        writeQueued();
      });
  }

  function schedule(): void {
    if (scheduled || inFlight !== null) return;
    scheduled = true;
    setImmediate(writeQueued);
  }

  function enqueue(row: Row): Promise<{ verificationId: string; verifiedAt: string }> {
    const done = new Promise<{ verificationId: string; verifiedAt: string }>((resolve, reject) => queue.push({ row, resolve, reject }));
    if (inFlight === null && queue.length >= maxBatch) writeQueued();
    else schedule();
    return done;
  }

  async function readPage(input: ListInput): Promise<FoundPage> {
    const query = pageQuery(input, cursorKey);
    return pageOf(await store.read(() => q(rows(logPage(query.mask), ...query.args))), query, cursorKey);
  }

  async function flush(): Promise<void> {
    // Rows recorded before the first id could be handed out join the queue once it can.
    if (seeding !== null) await seeding.then(() => new Promise((resolve) => setImmediate(resolve)), () => {});
    writeQueued();
    while (inFlight !== null || queue.length > 0) {
      if (inFlight === null) writeQueued();
      await inFlight;
      await Promise.resolve();
    }
  }

  return {
    record(input) {
      const probe = rowOf(input, "", 0);
      if (probe === null) return malformed();
      const make = (ids: NonNullable<typeof nextId>) => {
        const { id, ms } = ids();
        return enqueue({ ...probe, id, verified_at_ms: ms });
      };
      return nextId !== null ? make(nextId) : seeded().then(() => make(nextId!));
    },

    async list(input) {
      return pageList(await readPage(input));
    },
    async listJson(input) {
      return pageJson(await readPage(input));
    },

    async get(input) {
      checkId(input.verificationId);
      return recorded(await store.read(() => q(firstRow(LOG_ROW_BY_ID, input.verificationId, input.orgId, input.environment))));
    },

    flush,
    close: flush,

    stats() {
      return { batches, rows: written, failedBatches };
    },

    caches: () => [],
    releaseMemory() {},
  };
}
