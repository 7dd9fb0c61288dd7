/**
 * The terminal UI's key lifecycle (docs/admin.md "Screens"), driven in
 * tmux as test/admin/tui.test.ts drives the UI: the organisation's screen counts only usable API
 * keys as active and shows its system key, its predecessor and any compromise; the key is rotated
 * and declared compromised from a time asked for (a bad or future time refused by name and asked
 * again, Escape changes nothing, a refused rotation shown as refused); a person's key is shown
 * and declared compromised likewise.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { BUN, ROOT, cleanup, tempDir } from "../support/env.ts";
import { paneEnv, Terminal } from "../support/terminal.ts";

afterAll(cleanup);

const MAIN = join(ROOT, "src", "main.ts");

describe("keys of organisations and persons in the terminal UI", () => {
  const data = tempDir();
  let orgId = "";
  let personId = "";
  let personKey = "";
  let t: Terminal;
  const dv = (...args: string[]) => {
    const p = Bun.spawnSync([BUN, MAIN, ...args, "--data", data], { env: paneEnv() });
    if (p.exitCode !== 0) throw new Error(p.stderr.toString());
    return p.stdout.toString();
  };
  const db = <T>(fn: (db: Database) => T): T => {
    const d = new Database(join(data, "docverify.db"));
    try {
      return fn(d);
    } finally {
      d.close();
    }
  };
  const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
  const orgKey = () => db((d) => hex((d.query("SELECT system_key_fingerprint AS k FROM organisations WHERE id = ?").get(orgId) as { k: Uint8Array }).k));
  const keyRow = (fp: string) =>
    db((d) => d.query("SELECT hex(replaces) AS replaces, retired_at, compromised_since, compromised_at FROM signing_keys WHERE fingerprint = ?").get(Buffer.from(fp, "hex"))) as {
      replaces: string | null;
      retired_at: number | null;
      compromised_since: number | null;
    };

  beforeAll(async () => {
    orgId = dv("org", "create", "--name", "Keys Tui Ltd", "--api-access").trim();
    dv("key", "mint", "--org", orgId, "--env", "live");
    const expiring = JSON.parse(dv("key", "mint", "--org", orgId, "--env", "test", "--expires", "2099-01-31", "--json")) as { keyId: string };
    const revoked = JSON.parse(dv("key", "mint", "--org", orgId, "--env", "test", "--json")) as { keyId: string };
    dv("key", "revoke", revoked.keyId);
    personId = (JSON.parse(dv("person", "add", "--org", orgId, "--name", "Pat Person", "--email", "pat@example.org", "--identity", "passport P1", "--json")) as { id: string }).id;
    // Its expiry passes; the person enrolled (as enrolment stores their key).
    personKey = hex(randomBytes(32));
    db((d) => {
      d.query("UPDATE api_keys SET expires_at = ? WHERE key_id = ?").run(Date.UTC(2020, 0, 1), expiring.keyId);
      d.query("INSERT INTO signing_keys (fingerprint, algorithm, public_key, purpose, created_at) VALUES (?, 'ML-DSA-65', ?, ?, ?)").run(Buffer.from(personKey, "hex"), randomBytes(1952), `person:${personId}`, Date.now());
      d.query("UPDATE persons SET key_fingerprint = ?, enrolled_at = ? WHERE id = ?").run(Buffer.from(personKey, "hex"), Date.now(), personId);
    });
    t = new Terminal([BUN, MAIN, "admin", "--data", data]);
    await t.heading("Main menu");
  }, 30_000);

  test("the organisation's screen: API keys active, expired and revoked counted apart; its key, predecessor and compromise; rotated", async () => {
    t.choose("Organisations");
    await t.heading("Organisations");
    t.choose("Keys Tui Ltd");
    let s = await t.heading("Organisations › Keys Tui Ltd");
    expect(s).toContain("API keys      1 active, 1 expired, 1 revoked");
    const first = orgKey();
    expect(s).toContain(`key           ${first}`);
    expect(s).toContain("replaces      -");
    expect(s).toContain("compromised   none declared");

    t.choose("Rotate the system key");
    await t.waitForScreen('Give "Keys Tui Ltd" a new system key?');
    t.keys("Enter"); // default No
    s = await t.waitForScreen("Nothing changed.");
    expect(orgKey()).toBe(first);
    t.choose("Rotate the system key");
    await t.waitForScreen('Give "Keys Tui Ltd" a new system key?');
    t.keys("y");
    s = await t.waitForScreen(`, replacing ${first.slice(0, 16)}….`);
    const second = orgKey();
    expect(s).toContain(`"Keys Tui Ltd" has a new key ${second.slice(0, 16)}…`);
    expect(second).not.toBe(first);
    expect(s).toContain(`key           ${second}`);
    expect(s).toContain(`replaces      ${first}`);
    expect(keyRow(second).replaces!.toLowerCase()).toBe(first);
    expect(keyRow(first).retired_at).not.toBeNull();
  });

  test("declared compromised: a bad time and a future one refused by name and asked again; Escape changes nothing; then declared, the current key rotated", async () => {
    const second = orgKey();
    t.choose("Declare a system key compromised");
    await t.waitForScreen("Which key?");
    t.choose(`${second.slice(0, 16)}…  current`);
    await t.waitForScreen("Compromised since");
    t.keys("Escape");
    await t.waitForScreen("Nothing changed.");
    expect(keyRow(second).compromised_since).toBeNull();

    t.choose("Declare a system key compromised");
    await t.waitForScreen("Which key?");
    t.choose(`${second.slice(0, 16)}…  current`);
    await t.waitForScreen("Compromised since");
    t.type("last tuesday");
    t.keys("Enter");
    await t.waitForScreen("Not a time: give an RFC 3339 time with its offset, such as 2026-12-01T10:00:00Z");
    t.keys("C-u");
    t.type("2999-01-01T00:00:00Z");
    t.keys("Enter");
    await t.waitForScreen("2999-01-01T00:00:00.000Z is in the future: a compromise is declared for what has been signed");
    t.keys("C-u");
    t.type("2026-01-01T00:00:00Z");
    t.keys("Enter");
    await t.waitForScreen(`Declare key ${second.slice(0, 16)}… of "Keys Tui Ltd" compromised since 2026-01-01 00:00:00Z?`);
    t.keys("y");
    const s = await t.waitForScreen(`Key ${second.slice(0, 16)}… is declared compromised since 2026-01-01 00:00:00Z.`);
    const third = orgKey();
    expect(third).not.toBe(second);
    expect(keyRow(second).compromised_since).toBe(Date.UTC(2026, 0, 1));
    expect(s).toContain(`key           ${third}`);
    expect(s).toContain(`compromised   ${second.slice(0, 16)}… since 2026-01-01 00:00:00Z (declared `);
  });

  test("a rotation the service refuses (the previous one's announcement not anchored on the topic) is shown as refused, nothing changed", async () => {
    db((d) => d.query("UPDATE organisations SET topic_id = '0.0.777' WHERE id = ?").run(orgId));
    const before = orgKey();
    t.choose("Rotate the system key");
    await t.waitForScreen('Give "Keys Tui Ltd" a new system key?');
    t.keys("y");
    await t.waitForScreen("previous key rotation is still under way");
    expect(orgKey()).toBe(before);
    t.keys("Escape");
    await t.heading("Organisations");
    t.keys("Escape");
    await t.heading("Main menu");
  });

  test("a person's screen: their key, a re-enrolment link on offer; the key declared compromised from a time asked for", async () => {
    t.choose("Persons");
    await t.heading("Persons");
    t.choose("Pat Person");
    let s = await t.heading("Persons › Pat Person");
    expect(s).toContain(`key           ${personKey}`);
    expect(s).toContain("compromised   none declared");
    expect(s).toContain("Re-enrolment link");
    t.choose("Declare their key compromised");
    await t.waitForScreen("Which key?");
    t.choose(`${personKey.slice(0, 16)}…  current`);
    await t.waitForScreen("Compromised since");
    t.type("2999-01-01T00:00:00Z");
    t.keys("Enter");
    await t.waitForScreen("is in the future");
    t.keys("C-u");
    t.type("2026-02-01T00:00:00+01:00");
    t.keys("Enter");
    await t.waitForScreen(`Declare key ${personKey.slice(0, 16)}… of "Pat Person" compromised since 2026-01-31 23:00:00Z?`);
    t.keys("y");
    s = await t.waitForScreen(`Key ${personKey.slice(0, 16)}… of "Pat Person" is declared compromised since 2026-01-31 23:00:00Z.`);
    expect(keyRow(personKey).compromised_since).toBe(Date.UTC(2026, 0, 31, 23));
    expect(s).toContain(`compromised   ${personKey.slice(0, 16)}… since 2026-01-31 23:00:00Z`);
    expect(s).not.toContain("Declare their key compromised");
    const audit = db((d) => d.query("SELECT action FROM audit_log WHERE subject_id = ? ORDER BY id").all(personId) as { action: string }[]).map((r) => r.action);
    expect(audit).toContain("person.key.compromised");
  });
});
