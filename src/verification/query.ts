/**
 * Strict parsing of verification requests: the body of POST /v1/verifications and the query of
 * GET /v1/verifications (docs/verification.md, "Request rules" and "The log"). Nothing is
 * clamped, trimmed, normalised or silently dropped; every offending field is named in
 * `details` (all of them, not only the first). docs/verification.md lists the exact rules.
 */
import { approxBytes, Lru, namedCache, stringBytes, type NamedCache } from "../lib/lru.ts";
import { DomainError } from "../lib/errors.ts";
import { parseRfc3339 } from "../lib/formats.ts";
import type { ListFilters } from "./log/page.ts";
import { DOC_HASH_RE, VERDICTS, isVerdict } from "./types.ts";

export const DEFAULT_LIMIT = 25;
export const MAX_LIMIT = 100;
export const MAX_REFERENCE_CODE_POINTS = 128;
const LIST_PARAMETERS = new Set(["verdict", "originalDocHash", "from", "to", "limit", "after"]);

const DOC_HASH_MESSAGE = "must be sha256: followed by 64 lowercase hexadecimal digits";

function validationFailed(details: Record<string, string>, what: string): DomainError {
  return new DomainError("VALIDATION_FAILED", `Invalid ${what}: ${Object.keys(details).join(", ")}.`, details);
}

// `from` and `to` are read by lib/formats.ts `parseRfc3339`, shared with the command line's times
// (an API key's expiry); its tests import it from here.
export { parseRfc3339 };

// ---------------------------------------------------------------------------------------------
// GET /v1/verifications
// ---------------------------------------------------------------------------------------------

export interface ListQuery {
  readonly filters: ListFilters;
  readonly limit: number;
  readonly after?: string;
}

/**
 * The list query of `url`, or VALIDATION_FAILED naming every offending parameter. `from` and
 * `to` become inclusive millisecond bounds: a `from` with digits below the millisecond is
 * rounded up and a `to` rounded down, which selects exactly the rows at or after / at or before
 * those instants (rows are stored to the millisecond).
 */
export function parseListQuery(url: URL): ListQuery {
  // No prototype: a parameter named `__proto__` must become an entry like any other name (on a
  // plain object, assigning it replaces the prototype and leaves no key, and `constructor` or
  // `toString` would be found "in" it), so it is refused, never silently accepted.
  const details: Record<string, string> = Object.create(null);
  const seen = new Map<string, string>();
  const repeated = new Set<string>();
  for (const [name, value] of url.searchParams) {
    if (seen.has(name)) repeated.add(name);
    else seen.set(name, value);
  }
  for (const name of seen.keys()) {
    if (!LIST_PARAMETERS.has(name)) details[name] = "is not a parameter of this operation";
    else if (repeated.has(name)) details[name] = "must be given at most once";
  }
  const value = (name: string): string | undefined => (name in details ? undefined : seen.get(name));

  let verdict: ListFilters["verdict"];
  const v = value("verdict");
  if (v !== undefined) {
    if (isVerdict(v)) verdict = v;
    else details.verdict = `must be one of ${VERDICTS.join(", ")}`;
  }

  let originalDocHash: string | undefined;
  const h = value("originalDocHash");
  if (h !== undefined) {
    if (DOC_HASH_RE.test(h)) originalDocHash = h;
    else details.originalDocHash = DOC_HASH_MESSAGE;
  }

  const time = (name: "from" | "to"): { ms: number; subMsNanos: number } | undefined => {
    const t = value(name);
    if (t === undefined) return undefined;
    const parsed = parseRfc3339(t);
    if (parsed === null) {
      details[name] = / \d{2}:\d{2}$/.test(t)
        ? "must be an RFC 3339 date-time; write the + of a time zone offset as %2B in a URL"
        : "must be an RFC 3339 date-time with a time zone, e.g. 2026-01-15T09:30:00Z";
    }
    return parsed ?? undefined;
  };
  const fromT = time("from");
  const toT = time("to");
  const from = fromT === undefined ? undefined : fromT.subMsNanos === 0 ? fromT.ms : fromT.ms + 1;
  const to = toT?.ms;
  if (fromT !== undefined && toT !== undefined && (fromT.ms > toT.ms || (fromT.ms === toT.ms && fromT.subMsNanos > toT.subMsNanos))) {
    details.from = "must not be later than to";
  }

  let limit = DEFAULT_LIMIT;
  const l = value("limit");
  if (l !== undefined) {
    // Digits only, no sign, no leading zero, no fraction or exponent: one spelling per number.
    if (/^[1-9][0-9]{0,2}$/.test(l) && Number(l) <= MAX_LIMIT) limit = Number(l);
    else details.limit = `must be an integer from 1 to ${MAX_LIMIT}, written in digits without sign or leading zero`;
  }

  const after = value("after");
  if (after !== undefined && !/^[A-Za-z0-9_-]{1,200}$/.test(after)) {
    details.after = "is not a cursor issued for this query: pass back nextCursor verbatim, with the same filters";
  }

  if (Object.keys(details).length > 0) throw validationFailed(details, "query parameters");
  const filters: { -readonly [K in keyof ListFilters]: ListFilters[K] } = {};
  if (verdict !== undefined) filters.verdict = verdict;
  if (originalDocHash !== undefined) filters.originalDocHash = originalDocHash;
  if (from !== undefined) filters.from = from;
  if (to !== undefined) filters.to = to;
  return after === undefined ? { filters, limit } : { filters, limit, after };
}

/** How many accepted list queries `listQueryOf` keeps by their text, at most. */
export const LIST_QUERIES_KEPT = 1024;
/** Their byte budget (a query's text is at most some 500 characters: its parameters are checked before it is kept). */
export const LIST_QUERIES_BYTES = 1024 * 1024;

/** Accepted list queries kept by their text: one per verifier (verify.ts `listQueryOf`), created by `createListQueries`. */
export interface ListQueries {
  /**
   * `parseListQuery` of a request's URL, kept by its query text: the answer depends on that text
   * alone, so a client paging the same cursor again (or any repeated query) skips the URL's parse
   * and the checks (docs/benchmarks.md, "How the figures moved": a page deep in the log was slower than the first by its longer URL
   * alone, both pages kept). Only accepted queries are kept, frozen; a refused one is refused again,
   * in full, every time.
   */
  listQueryOf(requestUrl: string): ListQuery;
  /** What it keeps, for /metrics and the idle release. */
  readonly cache: NamedCache;
}

export function createListQueries(): ListQueries {
  const kept = new Lru<string, ListQuery>({ maxEntries: LIST_QUERIES_KEPT, maxBytes: LIST_QUERIES_BYTES, bytesOf: (text, query) => stringBytes(text) + approxBytes(query) });
  return {
    listQueryOf(requestUrl) {
      // A request's URL has no fragment: its query text is everything after the first "?".
      const at = requestUrl.indexOf("?");
      const text = at < 0 ? "" : requestUrl.slice(at + 1);
      let query = kept.get(text);
      if (query === undefined) {
        const parsed = parseListQuery(new URL(requestUrl));
        Object.freeze(parsed.filters);
        query = Object.freeze(parsed);
        kept.set(text, query);
      }
      return query;
    },
    cache: namedCache("list_queries", kept),
  };
}

// ---------------------------------------------------------------------------------------------
// POST /v1/verifications
// ---------------------------------------------------------------------------------------------

export interface VerificationRequest {
  readonly docHash: string;
  readonly reference?: string;
}

/**
 * The VerificationRequest in a parsed JSON body. Unknown properties are ignored (docs/verification.md, "Request rules").
 * `reference`: a string of at most 128 code points without Cc control characters; a string
 * with an unpaired surrogate is refused too (it could not be stored and shown back as sent).
 * `null` is not a string and is refused like any other wrong type.
 */
export function parseVerificationRequest(body: Record<string, unknown>): VerificationRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw validationFailed({ body: "must be a JSON object" }, "request body");
  }
  const details: Record<string, string> = {};
  const hash = body.originalDocHash;
  if (hash === undefined) details.originalDocHash = "is required";
  else if (typeof hash !== "string") details.originalDocHash = "must be a string";
  else if (!DOC_HASH_RE.test(hash)) details.originalDocHash = DOC_HASH_MESSAGE;

  const ref = body.reference;
  if (ref !== undefined) {
    if (typeof ref !== "string") details.reference = "must be a string";
    else if (!ref.isWellFormed()) details.reference = "must not contain unpaired surrogates";
    else if ([...ref].length > MAX_REFERENCE_CODE_POINTS) details.reference = `must be at most ${MAX_REFERENCE_CODE_POINTS} characters`;
    else if (/\p{Cc}/u.test(ref)) details.reference = "must not contain control characters";
  }
  if (Object.keys(details).length > 0) throw validationFailed(details, "request body");
  return typeof ref === "string" ? { docHash: hash as string, reference: ref } : { docHash: hash as string };
}
