/**
 * A large hash's merge, shared by both verification drivers (sqlite/ and postgres/
 * verification-reads.ts): each verdict class's first `MAX_MATCHES` anchored records in consensus
 * order, as `CLASS_HEAD` reads them (verification-statements.ts), merged into the one consensus
 * order of the database, which decides which records a verification reads whole.
 */
import { MAX_MATCHES, type ClassHeadRow } from "./verification-statements.ts";

/** The verdict classes of `VERDICT_CLASS`, in its numbering. */
export const VERDICT_CLASSES = [0, 1, 2] as const;

/** A value as bun:sqlite (or, for these columns, Bun.SQL) returns it. */
type SqlValue = null | number | bigint | string | Uint8Array;

/** A `CLASS_HEAD` row: where a record stands in consensus order, and its rowid (SQLite) or id (PostgreSQL). */
export type ClassHead = ClassHeadRow;

/** SQLite's storage classes in its sort order: NULL, numbers, text, blobs. */
function storageClass(v: SqlValue): number {
  return v === null ? 0 : typeof v === "number" || typeof v === "bigint" ? 1 : typeof v === "string" ? 2 : 3;
}

/**
 * Two values in SQLite's ORDER BY order (BINARY collation: text by its UTF-8 bytes, which is also
 * PostgreSQL's `COLLATE "C"` in a UTF-8 database, NULL first). Well-formed rows hold ASCII text
 * only, but a corrupt row must sort here exactly where the database put it for the same records
 * to be read; UTF-16 code units order as UTF-8 bytes do except a surrogate (a code point above
 * U+FFFF) against U+E000–U+FFFF.
 */
export function compareSqlValues(a: SqlValue, b: SqlValue): number {
  const ca = storageClass(a);
  const cb = storageClass(b);
  if (ca !== cb) return ca - cb;
  if (ca === 0) return 0;
  if (ca === 1) return a! < b! ? -1 : a! > b! ? 1 : 0;
  if (ca === 3) return Buffer.compare(a as Uint8Array, b as Uint8Array);
  const x = a as string;
  const y = b as string;
  if (x === y) return 0;
  for (let i = 0; i < x.length && i < y.length; i++) {
    const p = x.charCodeAt(i);
    const q = y.charCodeAt(i);
    if (p === q) continue;
    const ps = p >= 0xd800 && p <= 0xdfff;
    const qs = q >= 0xd800 && q <= 0xdfff;
    return ps === qs ? p - q : ps ? 1 : -1;
  }
  return x.length - y.length;
}

/** `CONSENSUS_ORDER` over class heads. */
export function compareHeads(a: ClassHead, b: ClassHead): number {
  return compareSqlValues(a.len, b.len) || compareSqlValues(a.consensus_at, b.consensus_at) || compareSqlValues(a.id, b.id);
}

/**
 * From each verdict class's first `MAX_MATCHES` anchored records in consensus order, the records
 * a large hash's verification reads whole: `page`, the first `MAX_MATCHES` of them all (the
 * matches: each lies among its own class's first `MAX_MATCHES`), and `beyond`, the earliest
 * record of each class with none among the matches (at most three), both in consensus order.
 */
export function selectLargeHash(heads: readonly (readonly ClassHead[])[]): { page: ClassHead[]; beyond: ClassHead[] } {
  const taken = heads.map(() => 0);
  const page: ClassHead[] = [];
  while (page.length < MAX_MATCHES) {
    let next = -1;
    for (let c = 0; c < heads.length; c++) {
      const head = heads[c]![taken[c]!];
      if (head !== undefined && (next < 0 || compareHeads(head, heads[next]![taken[next]!]!) < 0)) next = c;
    }
    if (next < 0) break;
    page.push(heads[next]![taken[next]!++]!);
  }
  const beyond = heads.flatMap((h, c) => (taken[c] === 0 && h.length > 0 ? [h[0]!] : [])).sort(compareHeads);
  return { page, beyond };
}
