/**
 * The verification log's rows, pages and answers: the same on every engine. Pure functions: a
 * request's input checked and turned into the rows to read (`pageQuery`), what was read turned
 * into a page, its JSON, or one recorded verification.
 */
import { DomainError, invalid } from "../../lib/errors.ts";
import { rfc3339Ms, UUID_RE } from "../../lib/formats.ts";
import { jsonString } from "../../lib/json.ts";
import { ASSURANCE_LEVEL, DOC_HASH_RE, MODE, isVerdict, type Environment, type RecordedVerification, type Verdict, type VerificationSummary } from "../types.ts";
import type { CursorCodec, CursorScope } from "./cursor.ts";
import { idCeiling, idFloor } from "./ids.ts";
import type { LogPageQuery, LogRow, LogSummaryRow } from "./ports.ts";

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

function summary(row: LogSummaryRow): VerificationSummary {
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
export function summaryJson(row: LogSummaryRow): string {
  if (!isVerdict(row.verdict)) throw new Error(`verification ${row.id} has unknown verdict ${row.verdict}`);
  // Every string from the row goes through jsonString (JSON.stringify's output): a stored value
  // is never trusted to need no escaping. The verdict is one of the enum's names, the constants are ours.
  return (
    `{"verificationId":${jsonString(row.id)},"verdict":"${row.verdict}","assuranceLevel":${ASSURANCE_JSON},"mode":${MODE_JSON},` +
    `"environment":${jsonString(row.environment)},"originalDocHash":${jsonString(row.doc_hash)},"verifiedAt":"${rfc3339Ms(row.verified_at_ms)}"` +
    (row.reference !== null ? `,"reference":${jsonString(row.reference)}}` : "}")
  );
}
const ASSURANCE_JSON = JSON.stringify(ASSURANCE_LEVEL);
const MODE_JSON = JSON.stringify(MODE);

/** A page query: the rows to read (one more than `limit`: is there more?), and the scope its cursors are bound to. */
export interface PageQuery {
  readonly rows: LogPageQuery;
  readonly limit: number;
  readonly scope: CursorScope;
}

/** Checks `input` and names the rows that make its page. */
export function pageQuery(input: ListInput, cursors: CursorCodec): PageQuery {
  const { orgId, environment, filters, limit } = input;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 100) throw invalid("limit", "must be an integer from 1 to 100");
  const scope = { orgId, environment, filters };
  const rows: { -readonly [K in keyof LogPageQuery]: LogPageQuery[K] } = { orgId, environment, rows: limit + 1 };
  if (filters.originalDocHash !== undefined) rows.docHash = filters.originalDocHash;
  if (filters.verdict !== undefined) rows.verdict = filters.verdict;
  if (filters.from !== undefined) rows.from = { id: idFloor(filters.from), ms: filters.from };
  if (filters.to !== undefined) rows.to = { id: idCeiling(filters.to), ms: filters.to };
  if (input.after !== undefined) rows.before = cursors.decode(input.after, scope);
  return { rows, limit, scope };
}

export interface FoundPage {
  readonly page: readonly LogSummaryRow[];
  readonly nextCursor: string | null;
  readonly hasMore: boolean;
}

/** The page in what its query found, and the cursor after it. */
export function pageOf(found: readonly LogSummaryRow[], query: PageQuery, cursors: CursorCodec): FoundPage {
  const hasMore = found.length > query.limit;
  const page = hasMore ? found.slice(0, query.limit) : found;
  const last = page[page.length - 1];
  return { page, nextCursor: hasMore && last !== undefined ? cursors.encode(last.id, query.scope) : null, hasMore };
}

export function pageList({ page, nextCursor, hasMore }: FoundPage): ListPage {
  return { data: page.map(summary), pagination: { nextCursor, hasMore } };
}

/** The page as JSON text, written from the rows: no summary objects to build and serialise. */
export function pageJson({ page, nextCursor, hasMore }: FoundPage, rowJson: (row: LogSummaryRow) => string = summaryJson): string {
  let out = '{"data":[';
  for (let i = 0; i < page.length; i++) out += (i === 0 ? "" : ",") + rowJson(page[i]!);
  return pageJsonEnd(out, nextCursor, hasMore);
}
/** `{"data":[` and the rows, closed with the pagination object. */
export function pageJsonEnd(data: string, nextCursor: string | null, hasMore: boolean): string {
  return `${data}],"pagination":{"nextCursor":${nextCursor === null ? "null" : JSON.stringify(nextCursor)},"hasMore":${hasMore}}}`;
}

const notFound = () => new DomainError("NOT_FOUND", "No verification with this id.");

/** Whether `id` can name a row at all: a malformed id is answered like an unknown one. */
export function checkId(id: unknown): asserts id is string {
  if (typeof id !== "string" || !UUID_RE.test(id)) throw notFound();
}

/** One row as GET by id shows it. */
export function recorded(row: LogRow | null | undefined): RecordedVerification {
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
export function rowOf(input: VerificationLogRow, id: string, ms: number): LogRow | null {
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

export const malformed = () => Promise.reject(new TypeError("verification log row is malformed"));

export const serviceBusy = (cause: unknown) => Object.assign(new DomainError("SERVICE_UNAVAILABLE", "The service is busy. Retry shortly.", undefined, 1), { cause });
