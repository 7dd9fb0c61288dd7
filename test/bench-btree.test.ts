/**
 * scripts/bench/btree.ts reads B-tree depths from the database file for the benchmark's dataset
 * report (docs/benchmarks.md, the scale dataset): checked here against SQLite's own dbstat table
 * on trees of every kind, one page to six levels deep.
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileBtreeDepths, pageSizeOf } from "../scripts/bench/btree.ts";

// Not test/support/env.ts's tempDir: that module loads the whole app, which this does not need.
const dir = mkdtempSync(join(tmpdir(), "docverify-btree-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Depth per tree as dbstat sees it: the longest page path ("/", "/000/", "/000/01a/", …), overflow pages left out. */
function dbstatDepths(db: Database): Record<string, number> {
  const out: Record<string, number> = {};
  for (const { name, path } of db.query<{ name: string; path: string }, []>("SELECT name, path FROM dbstat WHERE pagetype IN ('internal', 'leaf')").all()) {
    out[name] = Math.max(out[name] ?? 0, path.split("/").length - 1);
  }
  return out;
}

function trees(db: Database): { name: string; rootpage: number }[] {
  return [{ name: "sqlite_schema", rootpage: 1 }, ...db.query<{ name: string; rootpage: number }, []>("SELECT name, rootpage FROM sqlite_master WHERE rootpage > 0").all()];
}

describe("bench: B-tree depths from the file", () => {
  test("match dbstat for tables, rowid-less tables and indexes from one page to six levels, rows with overflow pages included", () => {
    const file = join(dir, "depths.db");
    const db = new Database(file, { create: true });
    // Small pages, so a few thousand rows make deep trees.
    db.run("PRAGMA page_size = 512");
    db.run("CREATE TABLE one (x TEXT)");
    db.run("CREATE TABLE t (id TEXT PRIMARY KEY, hash TEXT NOT NULL, big BLOB)");
    db.run("CREATE INDEX t_hash ON t (hash)");
    db.run("CREATE TABLE w (k TEXT PRIMARY KEY, v INTEGER) WITHOUT ROWID");
    db.run("INSERT INTO one VALUES ('a')");
    const insert = db.prepare("INSERT INTO t VALUES (?, ?, ?)");
    const insertW = db.prepare("INSERT INTO w VALUES (?, ?)");
    db.transaction(() => {
      for (let i = 0; i < 20_000; i++) {
        const hash = new Bun.CryptoHasher("sha256").update(String(i)).digest("hex");
        insert.run(`id-${String(i).padStart(8, "0")}`, hash, i % 97 === 0 ? new Uint8Array(3_000) : null);
        insertW.run(hash, i);
      }
    })();
    const expected = dbstatDepths(db);
    db.close();
    const got = fileBtreeDepths(file, trees(new Database(file, { readonly: true })));
    expect(got).toEqual(expected);
    // The cases this is meant to cover, present: a one-page tree and deep ones.
    expect(got.one).toBe(1);
    expect(Math.max(...Object.values(got))).toBeGreaterThanOrEqual(4);
  });

  test("page size from the header, 65,536 written as 1; a file that is not SQLite is refused", () => {
    const header = new Uint8Array(100);
    header.set(new TextEncoder().encode("SQLite format 3\0"));
    header[16] = 0x10;
    expect(pageSizeOf(header)).toBe(4096);
    header[16] = 0;
    header[17] = 1;
    expect(pageSizeOf(header)).toBe(65_536);
    expect(() => pageSizeOf(new Uint8Array(100))).toThrow("not an SQLite database file");
  });
});
