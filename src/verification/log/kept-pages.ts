/**
 * Pages of the verification log kept in memory, where the engine answers reads synchronously and
 * tells whether anything was committed since (`KeptLogReads`, SQLite): each row's JSON by id, each
 * page input's checked query, and each page's JSON under the data version it was read at.
 *
 * What this MUST guarantee: the text `listJson` returns is the one a fresh read would give. A log
 * row never changes once written (nothing updates the table; retention only deletes, and a deleted
 * row's id is never read again), so a row's text stays true; a page's text is answered again only
 * while nothing at all has been committed since it was read (storage/data-version.ts).
 */
import { approxBytes, Lru, namedCache, stringBytes, type NamedCache } from "../../lib/lru.ts";
import { readKept, type KeptRead } from "../../storage/data-version.ts";
import type { CursorCodec } from "./cursor.ts";
import { pageJson, pageJsonEnd, pageOf, pageQuery, summaryJson, type FoundPage, type ListInput, type PageQuery } from "./page.ts";
import type { KeptLogReads, LogSummaryRow } from "./ports.ts";

/** Rows whose page JSON the log keeps at most (about 600 bytes each with the map's share). */
export const ROW_JSON_MEMO = 4096;
/** The row JSON's byte budget: some 3,500 rows. */
export const ROW_JSON_BYTES = 2 * 1024 * 1024;
/** Pages whose JSON the log keeps while the database is unchanged, at most (up to 100 rows each, 30 KB and more). */
export const PAGES_KEPT = 256;
/** The kept pages' byte budget: some 130 pages of 25 rows. */
export const PAGES_BYTES = 4 * 1024 * 1024;
/** Page inputs whose checked query (the cursor's MAC verified) the log keeps, at most (about 1 KB each). */
export const PAGE_QUERIES_KEPT = 1024;
/** The checked queries' byte budget. */
export const PAGE_QUERIES_BYTES = 1024 * 1024;

export interface KeptPages {
  /** The page's JSON: from memory while the database is unchanged, read otherwise. */
  listJson(input: ListInput): string;
  /** A page read now (what `list` shows). */
  readPage(input: ListInput): FoundPage;
  caches(): readonly NamedCache[];
}

export function createKeptPages(reads: KeptLogReads, cursors: CursorCodec): KeptPages {
  // Each row's JSON as a page shows it, by id. A page whose every id is here is answered from the
  // ids alone, read from the index that serves the page (docs/benchmarks.md, "How the figures
  // moved": a page of rows read whole and written out was two thirds of its cost).
  const rowJson = new Lru<string, string>({ maxEntries: ROW_JSON_MEMO, maxBytes: ROW_JSON_BYTES, bytesOf: (id, text) => stringBytes(id) + stringBytes(text) });
  const rememberedJson = (row: LogSummaryRow): string => {
    const text = summaryJson(row);
    rowJson.set(row.id, text);
    return text;
  };

  function readRows(query: PageQuery): FoundPage {
    return pageOf(reads.page(query.rows), query, cursors);
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
      query = pageQuery(input, cursors);
      queriesKept.set(key, query);
    }
    return { key, query };
  }

  // A page's JSON as last read, by its input, under the data version it was read at
  // (storage/data-version.ts): what a read would give again while nothing at all has been
  // committed since, by any connection or process; read again (and kept anew) otherwise.
  const pagesKept = new Lru<string, KeptRead<string>>({ maxEntries: PAGES_KEPT, maxBytes: PAGES_BYTES, bytesOf: (key, kept) => stringBytes(key) + approxBytes(kept) });

  /** The page's JSON: its ids from the index, each row's text from memory when every row has one. */
  function pageText(query: PageQuery): string {
    const ids = reads.pageIds(query.rows);
    const hasMore = ids.length > query.limit;
    const n = hasMore ? query.limit : ids.length;
    let out = '{"data":[';
    for (let i = 0; i < n; i++) {
      const text = rowJson.get(ids[i]!);
      // A row not yet shown: the page read whole (a new read, so rows written meanwhile may be in it), each row's text kept.
      if (text === undefined) return pageJson(readRows(query), rememberedJson);
      out += (i === 0 ? "" : ",") + text;
    }
    const last = n > 0 ? ids[n - 1] : undefined;
    return pageJsonEnd(out, hasMore && last !== undefined ? cursors.encode(last, query.scope) : null, hasMore);
  }

  return {
    listJson(input) {
      const { key, query } = keptQuery(input);
      return readKept(pagesKept, reads.dataVersion(), key, () => pageText(query));
    },
    readPage: (input) => readRows(pageQuery(input, cursors)),
    caches: () => [namedCache("log_row_json", rowJson), namedCache("log_page_queries", queriesKept), namedCache("log_pages", pagesKept)],
  };
}
