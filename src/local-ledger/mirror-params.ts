/**
 * The mirror node's query parameters, read as hiero-mirror-node reads them: repeated parameters
 * as lists in order of first appearance, `op:value` filters (a plain value is `eq`), at most 100
 * values per parameter, positive 64-bit numbers, and the `links.next` of a page built from the
 * request's own parameters. Parsing only: which parameters a path accepts is the handler's call.
 */
import { formatTimestamp, type Timestamp } from "./ids.ts";

const MAX_REPEATED_PARAMETERS = 100;

export interface Filter {
  key: string;
  op: string;
  value: string;
}

/**
 * The request's parameters in order of first appearance, repeated ones as lists, like Express;
 * as the mirror node's REST module reads them (its query parser), names are lowercased (`LIMIT`
 * and `limit` are one parameter, their values merged) and so are `order` values (`DESC`).
 */
export function orderedQuery(url: URL): Map<string, string[]> {
  const q = new Map<string, string[]>();
  for (const [k, v] of url.searchParams) {
    const key = k.toLowerCase();
    q.set(key, [...(q.get(key) ?? []), key === "order" ? v.toLowerCase() : v]);
  }
  return q;
}

/** The request's parameters exactly as sent (names and values), for the routes the mirror node serves from rest-java. */
export function exactQuery(url: URL): Map<string, string[]> {
  const q = new Map<string, string[]>();
  for (const [k, v] of url.searchParams) q.set(k, [...(q.get(k) ?? []), v]);
  return q;
}

export function filtersOf(query: Map<string, string[]>): { filters: Filter[]; errors: string[] } {
  const filters: Filter[] = [];
  const errors: string[] = [];
  for (const [key, values] of query) {
    if (values.length > MAX_REPEATED_PARAMETERS) {
      errors.push(`Parameter values count exceeds maximum number allowed: ${key} count: ${values.length} max: ${MAX_REPEATED_PARAMETERS}`);
      continue;
    }
    for (const value of values) filters.push(filterOf(key, value));
  }
  return { filters, errors };
}

/**
 * One `op:value` filter, split as the mirror node splits it: the value is what follows the last
 * colon, the operator what precedes it (`gt:1:2` has operator `1`, so it is refused), `eq` when
 * there is no colon.
 */
export function filterOf(key: string, text: string): Filter {
  const parts = text.split(":");
  const value = parts.pop() ?? "";
  return { key, op: parts.pop() ?? "eq", value };
}

export const isPositiveLong = (v: string): boolean => /^\d{1,19}$/.test(v) && BigInt(v) > 0n && BigInt(v) <= 9223372036854775807n;

/**
 * The `links.next` of a page, built as the mirror node builds it (hiero-mirror-node rest/utils.js
 * `getNextParamQueries`): the request's own parameters in their order, with any
 * `timestamp=gt:`/`gte:` (ascending) or `lt:`/`lte:` (descending) dropped and `gt:`/`lt:` the
 * page's last timestamp put in. A `timestamp` given once (a string to Express) that is replaced
 * moves to the end; one with the other direction's bound stays and gets the new bound beside it;
 * a plain (eq) one stays as it is. One given several times (a list) keeps its place, the new
 * bound appended when its first value is a range bound. Null when the bounds left describe an empty range
 * (`gt:X&lte:X` after the last row), since the mirror node then gives no next link either.
 */
export function nextLink(path: string, query: Map<string, string[]>, order: "asc" | "desc", last: Timestamp): string | null {
  const field = "timestamp";
  const q = new Map([...query].map(([k, v]) => [k, [...v]] as const));
  const pattern = order === "asc" ? /gt[e]?:/ : /lt[e]?:/;
  const insert = `${order === "asc" ? "gt" : "lt"}:${formatTimestamp(last)}`;
  const original = q.get(field);
  if (original === undefined) {
    q.set(field, [insert]);
  } else if (original.length === 1) {
    if (pattern.test(original[0]!)) {
      q.delete(field);
      q.set(field, [insert]);
    } else if (/^[gl]t[e]?:/.test(original[0]!)) {
      q.set(field, [original[0]!, insert]); // the other direction's bound: kept, the new one beside it
    }
    // A plain (eq) value stays as it was.
  } else {
    // The mirror node tests the list's text ("a,b") for a leading range bound: the first value decides.
    const kept = original.filter((v) => !pattern.test(v));
    q.set(field, /^[gl]t[e]?:/.test(original.join(",")) ? [...kept, insert] : kept);
  }
  if (isEmptyRange(q.get(field) ?? [])) return null;
  const parts: string[] = [];
  for (const [k, vs] of q) for (const v of vs) parts.push(`${k}=${v}`);
  return `${path}?${parts.join("&")}`;
}

/** Whether timestamp bounds (`gt:`, `gte:`, `lt:`, `lte:`) leave no timestamp between them, in nanoseconds. */
function isEmptyRange(values: readonly string[]): boolean {
  let lower: bigint | null = null;
  let upper: bigint | null = null;
  for (const v of values) {
    const m = /^(gte?|lte?):(\d{1,10})(?:\.(\d{1,9}))?$/.exec(v);
    if (!m) continue;
    const ns = BigInt(m[2]!) * 1_000_000_000n + BigInt((m[3] ?? "0").padEnd(9, "0"));
    const op = m[1]!;
    if (op.startsWith("gt")) {
      const b = op === "gt" ? ns + 1n : ns;
      lower = lower === null || b > lower ? b : lower;
    } else {
      const b = op === "lt" ? ns - 1n : ns;
      upper = upper === null || b < upper ? b : upper;
    }
  }
  return lower !== null && upper !== null && upper < lower;
}
