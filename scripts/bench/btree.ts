/**
 * The depth of SQLite B-trees, read from the database file itself (https://sqlite.org/fileformat.html
 * §1.6): from a tree's root page down its leftmost child pointers to a leaf. A B-tree is balanced,
 * so that path's length is the tree's depth: the pages a lookup reads before it reaches its row
 * or index entry. The benchmark prints them for both datasets, so that what the scale dataset's
 * short bulk rows change (the table's leaf count) and what they do not (depths, key
 * distributions) can be checked rather than asserted (docs/benchmarks.md).
 *
 * SQLite's `dbstat` virtual table says the same, but visits every page of the file: minutes on
 * the scale dataset, where this reads a handful of pages. test/bench-btree.test.ts checks one
 * against the other.
 */
import { Database } from "bun:sqlite";
import { closeSync, openSync, readSync } from "node:fs";

/** Page types (the first byte of a B-tree page's header). */
const INTERIOR_INDEX = 0x02;
const INTERIOR_TABLE = 0x05;
const LEAF_INDEX = 0x0a;
const LEAF_TABLE = 0x0d;

/** Reads page `n` (1-based) whole. */
export type PageReader = (n: number) => Uint8Array;

/** The page size in a database header (its first 100 bytes): 1 means 65,536. */
export function pageSizeOf(header: Uint8Array): number {
  if (new TextDecoder().decode(header.subarray(0, 16)) !== "SQLite format 3\0") throw new Error("not an SQLite database file");
  const size = (header[16]! << 8) | header[17]!;
  return size === 1 ? 65_536 : size;
}

/** Levels from `root` to a leaf, the root and the leaf included (a tree that is one leaf has depth 1). */
export function btreeDepth(read: PageReader, root: number): number {
  let page = root;
  for (let depth = 1; depth <= 64; depth++) {
    const bytes = read(page);
    // Page 1 carries the 100-byte database header before its B-tree header.
    const at = page === 1 ? 100 : 0;
    const type = bytes[at]!;
    if (type === LEAF_TABLE || type === LEAF_INDEX) return depth;
    if (type !== INTERIOR_TABLE && type !== INTERIOR_INDEX) throw new Error(`page ${page} is not a B-tree page (type ${type})`);
    const cells = (bytes[at + 3]! << 8) | bytes[at + 4]!;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    // An interior page with no cell has only its right-most pointer; otherwise the first cell's
    // left child is the leftmost subtree (each interior cell starts with its 4-byte child page).
    page = cells === 0 ? view.getUint32(at + 8) : view.getUint32(view.getUint16(at + 12));
  }
  throw new Error(`B-tree at page ${root} is deeper than 64 levels: the file is not what it seems`);
}

/** The depth of each named tree (`rootpage` from sqlite_master), reading `file` directly. */
export function fileBtreeDepths(file: string, trees: readonly { readonly name: string; readonly rootpage: number }[]): Record<string, number> {
  const fd = openSync(file, "r");
  try {
    const header = new Uint8Array(100);
    readSync(fd, header, 0, 100, 0);
    const size = pageSizeOf(header);
    const read: PageReader = (n) => {
      const page = new Uint8Array(size);
      if (readSync(fd, page, 0, size, (n - 1) * size) !== size) throw new Error(`page ${n} is past the end of ${file}`);
      return page;
    };
    return Object.fromEntries(trees.map((t) => [t.name, btreeDepth(read, t.rootpage)]));
  } finally {
    closeSync(fd);
  }
}

/**
 * The depth of every tree (table and indexes) of `tables` in the database `file`: the roots from
 * sqlite_master through a read-only connection, then the pages themselves. For a database no
 * process is writing.
 */
export function tableDepths(file: string, tables: readonly string[]): Record<string, number> {
  const db = new Database(file, { readonly: true });
  let trees: { name: string; rootpage: number }[];
  try {
    trees = db
      .query<{ name: string; rootpage: number }, string[]>(
        `SELECT name, rootpage FROM sqlite_master WHERE rootpage > 0 AND tbl_name IN (${tables.map(() => "?").join(", ")}) ORDER BY name`,
      )
      .all(...tables);
  } finally {
    db.close();
  }
  return fileBtreeDepths(file, trees);
}
