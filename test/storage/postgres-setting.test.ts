/**
 * DOCVERIFY_DATABASE_URL on the command line, as an operator meets it (decisions §12), while only
 * part of the service runs on PostgreSQL: nothing starts on a half-supported engine, nothing is
 * written to the embedded database instead, `backup` and `restore` point to PostgreSQL's own
 * tools, and the URL's password never appears in what is printed.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { cleanup, tempDir } from "../support/env.ts";
import { cli } from "../ops/support.ts";

afterAll(cleanup);

const URL_WITH_PASSWORD = "postgres://docverify:hunter2-secret@127.0.0.1:1/docverify";

describe("DOCVERIFY_DATABASE_URL on the command line", () => {
  for (const args of [["org", "list"], ["key", "list"], ["status"], ["serve"]]) {
    test(`${args.join(" ")}: refused with the reason and the way back, nothing written`, () => {
      const data = tempDir();
      const r = cli([...args, "--data", data], { DOCVERIFY_DATABASE_URL: URL_WITH_PASSWORD, DOCVERIFY_PORT: "0" });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("DOCVERIFY_DATABASE_URL: this release cannot yet run serve, status or the administrator's commands on PostgreSQL");
      expect(r.stderr).toContain("unset it to use the embedded SQLite");
      expect(r.stdout + r.stderr).not.toContain("hunter2");
      expect(existsSync(join(data, "docverify.db"))).toBe(false);
    });
  }

  test("backup names pg_dump and pg_basebackup; restore names pg_restore; neither touches the data folder", () => {
    const data = tempDir();
    const target = join(tempDir(), "copy.db");
    const backup = cli(["backup", target, "--data", data], { DOCVERIFY_DATABASE_URL: URL_WITH_PASSWORD });
    expect(backup.code).toBe(1);
    expect(backup.stderr).toMatch(/backup works on the embedded SQLite database.*pg_dump.*pg_basebackup/);
    expect(existsSync(target)).toBe(false);
    const restore = cli(["restore", target, "--data", data], { DOCVERIFY_DATABASE_URL: URL_WITH_PASSWORD });
    expect(restore.code).toBe(1);
    expect(restore.stderr).toMatch(/restore works on the embedded SQLite database.*pg_restore/);
    for (const r of [backup, restore]) expect(r.stdout + r.stderr).not.toContain("hunter2");
    expect(existsSync(join(data, "docverify.db"))).toBe(false);
  });

  test("a malformed URL is refused before anything else, without repeating it", () => {
    const r = cli(["org", "list", "--data", tempDir()], { DOCVERIFY_DATABASE_URL: "mysql://root:hunter2@db/x" });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("DOCVERIFY_DATABASE_URL: must use postgres:// or postgresql://");
    expect(r.stderr).not.toContain("hunter2");
  });
});
