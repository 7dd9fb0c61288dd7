/**
 * The connection's group commit (src/storage/group-commit.ts), which record writes and the anchor
 * loop's journal share: items atomic alone, every promise settled after the commit, `beforeCommit`
 * after the last items, a failed transaction refused to each item in its own terms.
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { openDatabase } from "../../src/storage/db.ts";
import { createGroupCommit, MAX_GROUP } from "../../src/storage/group-commit.ts";
import { sqliteStore } from "../../src/storage/store.ts";
import { cleanup, tempDir } from "../support/env.ts";

afterAll(cleanup);

function fresh() {
  const path = join(tempDir(), "group.db");
  const db = openDatabase({ path });
  db.$client.run("CREATE TABLE t (v INTEGER NOT NULL)");
  return { path, client: db.$client };
}
const values = (client: Database) => (client.query("SELECT v FROM t ORDER BY rowid").all() as { v: number }[]).map((r) => r.v);

describe("group commit", () => {
  test("one per store, made once with it and shared by every writer through it", () => {
    const path = join(tempDir(), "group.db");
    const db = openDatabase({ path });
    const store = sqliteStore(db);
    expect(store.group).toBe(store.group);
    db.$client.close();
  });

  test("an item that throws is undone alone and rejects alone, mapped by its own refusal; the others commit", async () => {
    const { client } = fresh();
    const group = createGroupCommit(client);
    const insert = (v: number) => () => client.transaction(() => client.run("INSERT INTO t (v) VALUES (?)", [v]).changes)();
    const failing = () =>
      client.transaction(() => {
        client.run("INSERT INTO t (v) VALUES (2)");
        throw new Error("no");
      })();
    const results = await Promise.allSettled([group.run(insert(1)), group.run(failing, (e) => new Error(`refused: ${(e as Error).message}`)), group.run(insert(3))]);
    expect(results.map((r) => (r.status === "fulfilled" ? r.value : (r.reason as Error).message))).toEqual([1, "refused: no", 1]);
    expect(values(client)).toEqual([1, 3]);
    client.close();
  });

  test("a transaction that cannot begin: every item rejects in its own terms, nothing is written, the hooks write nothing", async () => {
    const { path, client } = fresh();
    client.run("PRAGMA busy_timeout = 50");
    const group = createGroupCommit(client);
    let hooked = 0;
    group.beforeCommit(() => {
      hooked++;
      client.run("INSERT INTO t (v) VALUES (99)");
    });
    const other = new Database(path);
    other.run("BEGIN IMMEDIATE");
    const insert = (v: number) => () => client.transaction(() => client.run("INSERT INTO t (v) VALUES (?)", [v]))();
    const results = await Promise.allSettled([group.run(insert(1), () => "first's refusal"), group.run(insert(2), () => "second's refusal")]);
    expect(results.map((r) => (r.status === "rejected" ? r.reason : "fulfilled"))).toEqual(["first's refusal", "second's refusal"]);
    other.run("ROLLBACK");
    other.close();
    expect([values(client), hooked]).toEqual([[], 0]);
    await group.run(insert(3));
    expect(values(client)).toEqual([3, 99]);
    client.close();
  });

  test("beforeCommit runs after the items, once, in the transaction that writes the last of a queue longer than one transaction holds", async () => {
    const { client } = fresh();
    const group = createGroupCommit(client);
    const seen: number[] = [];
    group.beforeCommit(() => seen.push((client.query("SELECT count(*) AS n FROM t").get() as { n: number }).n));
    const n = MAX_GROUP + 10;
    const settled: number[] = [];
    const all = Array.from({ length: n }, (_, i) =>
      group.run(() => client.transaction(() => client.run("INSERT INTO t (v) VALUES (?)", [i]))()).then(() => settled.push(i)),
    );
    // Nothing is settled before its transaction has committed.
    expect(settled).toEqual([]);
    group.commitNow();
    await Promise.all(all);
    expect(seen).toEqual([n]);
    expect(values(client)).toHaveLength(n);
    client.close();
  });
});
