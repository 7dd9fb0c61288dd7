/**
 * `docverify org rotate-key` and `docverify org key-compromised` (docs/signing.md "Key lifecycle")
 * run as processes the way an operator runs them, on a data folder: what each prints (text and
 * --json) and what it stores and audits; every refusal with its exit code and message, changing
 * nothing: bad arguments and bad, missing or future times (exit 2, found before the folder is
 * opened), an unknown organisation, a second rotation before the first one's announcement is
 * anchored, a key that is not the organisation's or is already declared (exit 1).
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

function withDb<T>(fn: (db: Database) => T, readonly = true): T {
  const db = new Database(join(data, "docverify.db"), { readonly });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}
const rows = (sql: string, ...params: string[]) => withDb((db) => db.query(sql).all(...params) as Record<string, unknown>[]);

/** What a key operation may change: every key's life, every organisation's key, the audit log and the journal. */
const state = () => ({
  keys: rows("SELECT lower(hex(fingerprint)) AS fp, purpose, lower(hex(replaces)) AS replaces, retired_at, compromised_since, compromised_at FROM signing_keys ORDER BY fingerprint"),
  orgs: rows("SELECT id, lower(hex(system_key_fingerprint)) AS key FROM organisations ORDER BY id"),
  audit: rows("SELECT count(*) AS n FROM audit_log"),
  journal: rows("SELECT count(*) AS n FROM ledger_transactions"),
});
const currentKey = (orgId: string) => String(rows("SELECT lower(hex(system_key_fingerprint)) AS k FROM organisations WHERE id = ?", orgId)[0]!.k);
const FP = /^[0-9a-f]{64}$/;
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Runs `args`, expecting it refused with `code` and `message`, stdout empty and nothing changed. */
function refused(args: string[], code: number, message: RegExp) {
  const before = state();
  const r = on(...args);
  expect({ code: r.code, out: r.out }).toEqual({ code, out: "" });
  expect(r.err).toMatch(message);
  expect(state()).toEqual(before);
  return r;
}

let orgId = "";
let otherOrg = "";
beforeAll(() => {
  orgId = on("org", "create", "--name", "Rotating Ltd", "--addon").out.trim();
  otherOrg = on("org", "create", "--name", "Other Ltd", "--addon").out.trim();
});

describe("org rotate-key", () => {
  test("prints the new key, the key it replaces and when; stores the rotation in one change, audited", () => {
    const old = currentKey(orgId);
    const r = on("org", "rotate-key", orgId);
    expect(r.code).toBe(0);
    const m = /^(\S+) {2}key=([0-9a-f]{64}) {2}replaces=([0-9a-f]{64}) {2}at=(\S+)\n$/.exec(r.out)!;
    expect(m).not.toBeNull();
    expect([m[1], m[3]]).toEqual([orgId, old]);
    expect(m[4]).toMatch(TIME);
    const next = m[2]!;
    expect(currentKey(orgId)).toBe(next);
    const at = Date.parse(m[4]!);
    expect(rows("SELECT lower(hex(replaces)) AS replaces, retired_at, purpose FROM signing_keys WHERE fingerprint = x'" + next + "'")).toEqual([{ replaces: old, retired_at: null, purpose: `org:${orgId}` }]);
    expect(rows("SELECT retired_at FROM signing_keys WHERE fingerprint = x'" + old + "'")).toEqual([{ retired_at: at }]);
    const [audit] = rows("SELECT actor, before, after FROM audit_log WHERE action = 'organisation.key.rotate' AND subject_id = ?", orgId);
    expect(String(audit!.actor)).toStartWith("os:alice");
    expect(JSON.parse(String(audit!.before))).toEqual({ keyFingerprint: old });
    expect(JSON.parse(String(audit!.after))).toEqual({ keyFingerprint: next, replaces: old });
  });

  test("--json: the same facts as one object", () => {
    const old = currentKey(orgId);
    const r = on("org", "rotate-key", orgId, "--json");
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as Record<string, string>;
    expect(Object.keys(j)).toEqual(["orgId", "keyFingerprint", "replaces", "at"]);
    expect(j).toMatchObject({ orgId, replaces: old, keyFingerprint: currentKey(orgId) });
    expect(j.keyFingerprint).toMatch(FP);
    expect(j.at).toMatch(TIME);
  });

  const usage: [string, string[], RegExp][] = [
    ["no organisation", [], /expected 1 argument\(s\), got 0\nRun docverify org rotate-key --help/],
    ["two organisations", ["a", "b"], /expected 1 argument\(s\), got 2/],
    ["an unknown flag", ["ORG", "--since", "2026-01-01T00:00:00Z"], /--since/],
  ];
  for (const [name, args, message] of usage) {
    test(`refuses ${name}: exit 2, nothing changed`, () => {
      refused(["org", "rotate-key", ...args.map((a) => (a === "ORG" ? orgId : a))], 2, message);
    });
  }

  test("refuses an unknown organisation: exit 1, named, nothing changed", () => {
    refused(["org", "rotate-key", "0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d"], 1, /^docverify: No organisation 0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d\.\n$/);
  });

  test("refuses a second rotation while the first one's announcement is not anchored (the organisation has a topic): exit 1, what to do, nothing changed", () => {
    withDb((db) => db.query("UPDATE organisations SET topic_id = '0.0.4242' WHERE id = ?").run(orgId), false);
    const key = currentKey(orgId);
    const r = refused(["org", "rotate-key", orgId], 1, /previous key rotation is still under way/);
    expect(r.err).toContain(`its key ${key} is not announced on the ledger yet`);
    expect(r.err).toContain("Nothing was changed; try again once it is anchored");
    // Declaring the current key compromised would rotate it again: refused alike.
    refused(["org", "key-compromised", orgId, "--since", "2026-01-01T00:00:00Z"], 1, /previous key rotation is still under way/);
  });

  test("refuses a data folder that does not exist, creating none", () => {
    const missing = join(tempDir(), "not-here");
    const r = dv("org", "rotate-key", orgId, "--data", missing);
    expect(r.code).toBe(1);
    expect(r.out).toBe("");
    expect(existsSync(missing)).toBe(false);
  });
});

describe("org key-compromised", () => {
  test("of the current key: prints the key, since, the declaration and the rotation it made; stored and audited", () => {
    const key = currentKey(otherOrg);
    const r = on("org", "key-compromised", otherOrg, "--since", "2026-03-01T10:00:00+01:00");
    expect(r.code).toBe(0);
    const [first, second, rest] = r.out.split("\n");
    const m = /^(\S+) {2}compromised=([0-9a-f]{64}) {2}since=(\S+) {2}declared=(\S+)$/.exec(first!)!;
    expect([m[1], m[2], m[3]]).toEqual([otherOrg, key, "2026-03-01T09:00:00.000Z"]);
    const declared = Date.parse(m[4]!);
    expect(second).toMatch(new RegExp(`^${otherOrg} {2}key=[0-9a-f]{64} {2}replaces=${key} {2}at=${m[4]!.replace(/\./g, "\\.")}$`));
    expect(rest).toBe("");
    expect(currentKey(otherOrg)).not.toBe(key);
    expect(rows(`SELECT compromised_since, compromised_at, retired_at FROM signing_keys WHERE fingerprint = x'${key}'`)).toEqual([
      { compromised_since: Date.UTC(2026, 2, 1, 9), compromised_at: declared, retired_at: declared },
    ]);
    const [audit] = rows("SELECT actor, after FROM audit_log WHERE action = 'organisation.key.compromised' AND subject_id = ?", otherOrg);
    expect(String(audit!.actor)).toStartWith("os:alice");
    expect(JSON.parse(String(audit!.after))).toEqual({ keyFingerprint: key, compromisedSince: "2026-03-01T09:00:00.000Z", compromisedAt: m[4] });
  });

  test("--key of an older key, --json: no rotation; sub-millisecond digits round since down", () => {
    const older = String(rows("SELECT lower(hex(fingerprint)) AS fp FROM signing_keys WHERE purpose = ? AND retired_at IS NOT NULL AND compromised_at IS NULL", `org:${orgId}`)[0]!.fp);
    const current = currentKey(orgId);
    const r = on("org", "key-compromised", orgId, "--since", "2026-02-01T00:00:00.123999Z", "--key", older.toUpperCase(), "--json");
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as Record<string, unknown>;
    expect(Object.keys(j)).toEqual(["orgId", "keyFingerprint", "since", "declaredAt", "rotation"]);
    expect(j).toMatchObject({ orgId, keyFingerprint: older, since: "2026-02-01T00:00:00.123Z", rotation: null });
    expect(j.declaredAt).toMatch(TIME);
    expect(currentKey(orgId)).toBe(current);
    // And the text form of a declaration without rotation: one line.
    const another = String(rows("SELECT lower(hex(fingerprint)) AS fp FROM signing_keys WHERE purpose = ? AND retired_at IS NOT NULL AND compromised_at IS NULL", `org:${orgId}`)[0]!.fp);
    const text = on("org", "key-compromised", orgId, "--since", "2026-02-01T00:00:00Z", "--key", another);
    expect(text.code).toBe(0);
    expect(text.out).toMatch(new RegExp(`^${orgId} {2}compromised=${another} {2}since=2026-02-01T00:00:00\\.000Z {2}declared=\\S+\\n$`));
  });

  const future = new Date(Date.now() + 3_600_000).toISOString();
  const usage: [string, string[], RegExp][] = [
    ["no --since", [], /--since is required: the time from which the key is compromised/],
    ["--since without a value", ["--since"], /--since/],
    ["a word", ["--since", "yesterday"], /--since "yesterday": give an RFC 3339 time with its offset/],
    ["a time without its offset", ["--since", "2026-01-01T10:00:00"], /give an RFC 3339 time with its offset/],
    ["an impossible date (not rolled over into March)", ["--since", "2026-02-30T00:00:00Z"], /--since "2026-02-30T00:00:00Z": give an RFC 3339 time/],
    ["hour 24", ["--since", "2026-01-01T24:00:00Z"], /give an RFC 3339 time/],
    ["a date alone", ["--since", "2026-01-01"], /give an RFC 3339 time/],
    ["a time before 1970", ["--since", "1969-12-31T23:59:59Z"], /from 1970 on/],
    ["an empty value", ["--since", ""], /--since "": give an RFC 3339 time/],
    ["a time in the future", ["--since", future], /is in the future \(it is now \d{4}-/],
    ["a --key too short", ["--since", "2026-01-01T00:00:00Z", "--key", "ab".repeat(31)], /--key needs a key fingerprint: 64 hex digits/],
    ["a --key not hex", ["--since", "2026-01-01T00:00:00Z", "--key", "zz".repeat(32)], /--key needs a key fingerprint/],
    ["a --key without a value", ["--since", "2026-01-01T00:00:00Z", "--key"], /--key/],
  ];
  for (const [name, args, message] of usage) {
    test(`refuses ${name}: exit 2 with the usage named, nothing changed`, () => {
      const r = refused(["org", "key-compromised", otherOrg, ...args], 2, message);
      expect(r.err).toContain("Run docverify org key-compromised --help for its usage.");
    });
  }

  test("refuses no organisation: exit 2", () => {
    refused(["org", "key-compromised", "--since", "2026-01-01T00:00:00Z"], 2, /expected 1 argument\(s\), got 0/);
  });

  test("a refused time is found before the data folder is opened: none is created", () => {
    const fresh = join(tempDir(), "never-created");
    expect(dv("org", "key-compromised", otherOrg, "--since", future, "--data", fresh).code).toBe(2);
    expect(dv("org", "key-compromised", otherOrg, "--since", "2026-01-01T00:00:00Z", "--data", fresh).code).toBe(1);
    expect(existsSync(fresh)).toBe(false);
  });

  test("refuses an unknown organisation, a key of another organisation's, and a key already declared: exit 1, named, nothing changed", () => {
    refused(["org", "key-compromised", "0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d", "--since", "2026-01-01T00:00:00Z"], 1, /^docverify: No organisation 0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d\.\n$/);
    const others = currentKey(orgId);
    refused(["org", "key-compromised", otherOrg, "--since", "2026-01-01T00:00:00Z", "--key", others], 1, new RegExp(`key ${others} is not one of organisation ${otherOrg}'s keys; nothing was changed`));
    const unknown = "cd".repeat(32);
    refused(["org", "key-compromised", otherOrg, "--since", "2026-01-01T00:00:00Z", "--key", unknown], 1, new RegExp(`key ${unknown} is not one of organisation ${otherOrg}'s keys`));
    const declared = String(rows("SELECT lower(hex(fingerprint)) AS fp FROM signing_keys WHERE purpose = ? AND compromised_at IS NOT NULL", `org:${otherOrg}`)[0]!.fp);
    refused(["org", "key-compromised", otherOrg, "--since", "2026-01-01T00:00:00Z", "--key", declared], 1, new RegExp(`key ${declared} was already declared compromised at \\d{4}-\\S+Z; nothing was changed`));
  });
});
