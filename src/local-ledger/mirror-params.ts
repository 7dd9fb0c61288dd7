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

/** The request's parameters in order of first appearance, repeated ones as lists, like Express. */
export function orderedQuery(url: URL): Map<string, string[]> {
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
    for (const value of values) {
      const parts = value.split(":");
      filters.push(parts.length === 1 ? { key, op: "eq", value } : { key, op: parts[0] ?? "", value: parts[1] ?? "" });
    }
  }
  return { filters, errors };
}

export const isPositiveLong = (v: string): boolean => /^\d{1,19}$/.test(v) && BigInt(v) > 0n && BigInt(v) <= 9223372036854775807n;

/**
 * The `links.next` of a page, built as the mirror node builds it: the request's own parameters,
 * with any `timestamp=gt:`/`gte:` (ascending) or `lt:`/`lte:` (descending) replaced by the last
 * row's timestamp.
 */
export function nextLink(path: string, query: Map<string, string[]>, order: "asc" | "desc", last: Timestamp): string {
  const q = new Map([...query].map(([k, v]) => [k, [...v]] as const));
  const field = "timestamp";
  const pattern = order === "asc" ? /gt[e]?:/ : /lt[e]?:/;
  const insert = `${order === "asc" ? "gt" : "lt"}:${formatTimestamp(last)}`;
  const original = q.get(field);
  if (original) {
    const kept = original.filter((v) => !pattern.test(v));
    q.delete(field);
    if (kept.length > 0) q.set(field, original.some((v) => /[gl]t[e]?:/.test(v)) ? [...kept, insert] : kept);
    else q.set(field, [insert]);
  } else {
    q.set(field, [insert]);
  }
  const parts: string[] = [];
  for (const [k, vs] of q) for (const v of vs) parts.push(`${k}=${v}`);
  return `${path}?${parts.join("&")}`;
}
