/**
 * The terminal UI's keys screens and API key expiry (docs/admin.md "Screens", docs/access.md
 * "Expiry"), driven in tmux as test/admin/tui.test.ts drives the UI: the list marks an expired
 * key and shows the others' expiry, a key's screen shows it in full, and the mint form takes an
 * expiry checked as `key mint --expires` checks it (a refused one is named and asked again).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { BUN, ROOT, cleanup, tempDir } from "../support/env.ts";
import { paneEnv, Terminal } from "../support/terminal.ts";

afterAll(cleanup);

const MAIN = join(ROOT, "src", "main.ts");

describe("API keys in the terminal UI, with expiries", () => {
  const data = tempDir();
  const dv = (...args: string[]) => {
    const p = Bun.spawnSync([BUN, MAIN, ...args, "--data", data], { env: paneEnv() });
    if (p.exitCode !== 0) throw new Error(p.stderr.toString());
    return p.stdout.toString();
  };
  type KeyJson = { keyId: string; prefix: string; expiresAt: string | null; expired: boolean };
  const keys = () => JSON.parse(dv("key", "list", "--json")) as KeyJson[];
  let later: KeyJson;
  let expired: KeyJson;
  let t: Terminal;

  beforeAll(async () => {
    const orgId = dv("org", "create", "--name", "Expiry Tui Ltd", "--api-access").trim();
    later = JSON.parse(dv("key", "mint", "--org", orgId, "--env", "live", "--expires", "2099-01-31", "--json")) as KeyJson;
    expired = JSON.parse(dv("key", "mint", "--org", orgId, "--env", "test", "--expires", "2099-01-31", "--json")) as KeyJson;
    // Its expiry passes (written into the past: minting refuses a past expiry).
    const db = new Database(join(data, "docverify.db"));
    try {
      db.query("UPDATE api_keys SET expires_at = ? WHERE key_id = ?").run(Date.UTC(2020, 0, 1, 6, 30), expired.keyId);
    } finally {
      db.close();
    }
    t = new Terminal([BUN, MAIN, "admin", "--data", data]);
    await t.heading("Main menu");
  }, 30_000);

  test("the list marks the expired key EXPIRED and shows when the other expires; the key's screen shows its expiry", async () => {
    t.choose("API keys");
    let s = await t.heading("API keys");
    expect(s).toMatch(new RegExp(`dv_test_${expired.keyId}  Expiry Tui Ltd +read +EXPIRED 2020-01-01 06:30`));
    expect(s).toMatch(new RegExp(`dv_live_${later.keyId}  Expiry Tui Ltd +read +never used, expires 2099-01-31 00:00`));
    t.choose(`dv_test_${expired.keyId}`);
    s = await t.heading(`API keys › dv_test_${expired.keyId}`);
    expect(s).toContain("expires      2020-01-01 06:30:00Z (EXPIRED: the key is refused)");
    expect(s).toContain("Revoke this key"); // an expired key can still be revoked
    t.keys("Escape");
    await t.heading("API keys");
    t.choose(`dv_live_${later.keyId}`);
    s = await t.heading(`API keys › dv_live_${later.keyId}`);
    expect(s).toMatch(/expires {6}2099-01-31 00:00:00Z +│/); // the time alone: not expired
    t.keys("Escape");
    await t.heading("API keys");
  });

  test("mint with an expiry: a word or a past date is refused and asked again; the key is minted with the time given", async () => {
    t.choose("+ Mint a key");
    await t.waitForScreen("For which organisation?");
    t.choose("Expiry Tui Ltd");
    await t.waitForScreen('Environment of the key for "Expiry Tui Ltd"');
    t.choose("live");
    await t.waitForScreen("Expires (YYYY-MM-DD for that day's 00:00 UTC, or an RFC 3339 time such as 2027-01-31T17:00:00Z; empty: never)");
    t.type("next week");
    t.keys("Enter");
    await t.waitForScreen("Invalid expires: must be a date YYYY-MM-DD (that day's 00:00 UTC) or an RFC 3339 time");
    t.keys("C-u");
    t.type("2020-01-01");
    t.keys("Enter");
    await t.waitForScreen("Invalid expires: must be in the future");
    t.keys("C-u");
    t.type("2099-03-01T12:00:00+02:00");
    t.keys("Enter");
    await t.waitForScreen('Mint a live key for "Expiry Tui Ltd" with verifications:read, expiring 2099-03-01 10:00:00Z?');
    t.keys("Enter");
    const s = await t.heading("API keys › New key");
    const key = /dv_live_[0-9A-Za-z]{54}/.exec(s)![0];
    expect(s).toContain(`${key.slice(0, 24)} (live, verifications:read) for "Expiry Tui Ltd", expiring 2099-03-01 10:00:00Z`);
    t.choose("I have copied the key");
    await t.waitForScreen(`Minted ${key.slice(0, 24)}`);
    expect(keys().find((k) => k.keyId === key.slice(8, 24))).toMatchObject({ expiresAt: "2099-03-01T10:00:00.000Z", expired: false });
  });

  test("mint with no expiry (an empty answer): the key never expires; Escape at the question mints nothing", async () => {
    const before = keys().length;
    t.choose("+ Mint a key");
    await t.waitForScreen("For which organisation?");
    t.choose("Expiry Tui Ltd");
    await t.waitForScreen('Environment of the key for "Expiry Tui Ltd"');
    t.choose("test");
    await t.waitForScreen("Expires (YYYY-MM-DD");
    t.keys("Escape");
    await t.waitForScreen("No key minted.");
    expect(keys().length).toBe(before);

    t.choose("+ Mint a key");
    await t.waitForScreen("For which organisation?");
    t.choose("Expiry Tui Ltd");
    await t.waitForScreen('Environment of the key for "Expiry Tui Ltd"');
    t.choose("test");
    await t.waitForScreen("Expires (YYYY-MM-DD");
    t.keys("Enter");
    await t.waitForScreen('Mint a test key for "Expiry Tui Ltd" with verifications:read?');
    t.keys("Enter");
    const s = await t.heading("API keys › New key");
    const key = /dv_test_[0-9A-Za-z]{54}/.exec(s)![0];
    t.choose("I have copied the key");
    await t.waitForScreen(`Minted ${key.slice(0, 24)}`);
    expect(keys().find((k) => k.keyId === key.slice(8, 24))).toMatchObject({ expiresAt: null, expired: false });
    expect(keys().length).toBe(before + 1);
    t.keys("C-c");
    expect(await t.exited()).toEqual({ code: 0, restored: true });
  });
});
