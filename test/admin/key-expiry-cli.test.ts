/**
 * `docverify key mint --expires` and what `key list` shows of an expiry (docs/access.md "Expiry"),
 * run as a process the way an operator runs them: the expiry as written and as stored, listed with
 * whether it has passed (text and --json), audited at minting; every other value refused as a
 * usage error (exit 2) that changes nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { BUN, ROOT, cleanup, tempDir } from "../support/env.ts";

afterAll(cleanup);

const data = tempDir();
function dv(...args: string[]) {
  const p = Bun.spawnSync([BUN, join(ROOT, "src", "main.ts"), ...args], { env: { PATH: process.env.PATH, USER: "alice" } });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}
const on = (...args: string[]) => dv(...args, "--data", data);

/** The database's rows of `sql`, read on another connection as an operator's sqlite3 would. */
function rows(sql: string, ...params: string[]): Record<string, unknown>[] {
  const db = new Database(join(data, "docverify.db"), { readonly: true });
  try {
    return db.query(sql).all(...params) as Record<string, unknown>[];
  } finally {
    db.close();
  }
}

type KeyJson = { keyId: string; expiresAt: string | null; expired: boolean; revokedAt: string | null };
const listed = (orgId: string) => JSON.parse(on("key", "list", "--org", orgId, "--json").out) as KeyJson[];

describe("key mint --expires and key list", () => {
  let orgId = "";
  beforeAll(() => {
    orgId = on("org", "create", "--name", "Expiry Ltd", "--api-access").out.trim();
  });

  test("a date is that day's 00:00 UTC, an RFC 3339 time its instant; shown at minting, stored, and audited", () => {
    const byDate = JSON.parse(on("key", "mint", "--org", orgId, "--env", "live", "--expires", "2099-01-31", "--json").out) as KeyJson & { key: string };
    expect(byDate.expiresAt).toBe("2099-01-31T00:00:00.000Z");
    const human = on("key", "mint", "--org", orgId, "--env", "test", "--expires", "2099-01-31T18:30:00+01:00");
    expect(human.code).toBe(0);
    expect(human.err).toContain("expires 2099-01-31T17:30:00.000Z");
    const forever = JSON.parse(on("key", "mint", "--org", orgId, "--env", "test", "--json").out) as KeyJson;
    expect(forever.expiresAt).toBeNull();
    expect(on("key", "mint", "--org", orgId, "--env", "test").err).toContain("never expires");

    expect(rows("SELECT expires_at FROM api_keys WHERE key_id = ?", byDate.keyId)).toEqual([{ expires_at: Date.UTC(2099, 0, 31) }]);
    const [mint] = rows("SELECT actor, after FROM audit_log WHERE action = 'api_key.mint' AND subject_id = ?", byDate.keyId);
    expect(String(mint!.actor)).toStartWith("os:alice");
    expect(JSON.parse(String(mint!.after))).toMatchObject({ keyId: byDate.keyId, expiresAt: Date.UTC(2099, 0, 31) });
  });

  test("key list shows each key's expiry and whether it has passed, in text and in JSON; an expired key can be revoked", () => {
    const minted = JSON.parse(on("key", "mint", "--org", orgId, "--env", "live", "--expires", "2099-06-01", "--json").out) as KeyJson;
    expect(listed(orgId).find((k) => k.keyId === minted.keyId)).toMatchObject({ expiresAt: "2099-06-01T00:00:00.000Z", expired: false });
    expect(on("key", "list", "--org", orgId).out).toContain(`dv_live_${minted.keyId}  org=${orgId}  live  scopes=verifications:read  created=`);
    const line = () => on("key", "list", "--org", orgId).out.split("\n").find((l) => l.startsWith(`dv_live_${minted.keyId}`))!;
    expect(line()).toEndWith("  revoked=-  expires=2099-06-01T00:00:00.000Z  expired=no");
    expect(on("key", "list", "--org", orgId).out).toContain("  expires=never  expired=no\n");

    // Its expiry passes (written into the past on the database: minting refuses a past one).
    const db = new Database(join(data, "docverify.db"));
    try {
      db.query("UPDATE api_keys SET expires_at = ? WHERE key_id = ?").run(Date.UTC(2020, 0, 1), minted.keyId);
    } finally {
      db.close();
    }
    expect(line()).toEndWith("  revoked=-  expires=2020-01-01T00:00:00.000Z  expired=yes");
    expect(listed(orgId).find((k) => k.keyId === minted.keyId)).toMatchObject({ expiresAt: "2020-01-01T00:00:00.000Z", expired: true });
    // The others have not expired.
    expect(listed(orgId).filter((k) => k.expired).map((k) => k.keyId)).toEqual([minted.keyId]);

    const revoked = JSON.parse(on("key", "revoke", minted.keyId, "--json").out) as KeyJson;
    expect(revoked).toMatchObject({ keyId: minted.keyId, expired: true, expiresAt: "2020-01-01T00:00:00.000Z" });
    expect(revoked.revokedAt).toMatch(/^\d{4}-/);
  });

  const refused: [string, string[], RegExp][] = [
    ["a date in the past", ["--expires", "2020-01-01"], /--expires "2020-01-01": must be in the future \(it is now \d{4}-/],
    ["a time in the past", ["--expires", "2001-02-03T04:05:06Z"], /must be in the future/],
    ["today (its 00:00 UTC has passed)", ["--expires", new Date().toISOString().slice(0, 10)], /must be in the future/],
    ["a word", ["--expires", "tomorrow"], /--expires "tomorrow": must be a date YYYY-MM-DD \(that day's 00:00 UTC\) or an RFC 3339 time/],
    ["a time without its zone", ["--expires", "2099-01-31T17:00:00"], /must be a date YYYY-MM-DD/],
    ["an impossible date", ["--expires", "2099-02-30"], /must be a date YYYY-MM-DD/],
    ["an empty value", ["--expires", ""], /--expires "": must be a date/],
    ["a year past 9999", ["--expires", "10000-01-01"], /must be a date YYYY-MM-DD/],
    ["a time past 9999-12-31 in UTC", ["--expires", "9999-12-31T23:30:00-01:00"], /no later than 9999-12-31/],
    ["no value", ["--expires"], /--expires/],
  ];
  for (const [name, flag, message] of refused) {
    test(`refuses ${name}: exit 2, the reason and the usage named, nothing minted or audited`, () => {
      const before = { keys: rows("SELECT count(*) AS n FROM api_keys"), audit: rows("SELECT count(*) AS n FROM audit_log") };
      const r = on("key", "mint", "--org", orgId, "--env", "live", ...flag);
      expect({ code: r.code, out: r.out }).toEqual({ code: 2, out: "" });
      expect(r.err).toMatch(message);
      expect(r.err).toContain("Run docverify key mint --help for its usage.");
      expect({ keys: rows("SELECT count(*) AS n FROM api_keys"), audit: rows("SELECT count(*) AS n FROM audit_log") }).toEqual(before);
    });
  }

  test("a refused expiry is found before the data folder is opened: none is created", () => {
    const fresh = join(tempDir(), "never-created");
    const r = dv("key", "mint", "--org", orgId, "--env", "live", "--expires", "2020-01-01", "--data", fresh);
    expect(r.code).toBe(2);
    expect(existsSync(fresh)).toBe(false);
  });
});
