/**
 * `docverify admin`, driven as a person would: in a detached tmux session of a fixed size,
 * keystrokes go in with `tmux send-keys` and the screen comes back with `tmux capture-pane`.
 * Every step waits for the text it expects, with a deadline, instead of sleeping.
 *
 * The UI runs on the data folder of a running `serve` (embedded local ledger): a key minted in
 * the UI is read off the screen and used against the service, then revoked in the UI. Changes
 * are checked through the scriptable commands (`org list --json`) and the audit trail.
 *
 * Each pane runs the UI under a small shell wrapper that records `stty -g` before and after
 * and prints `[exit N]`, so a test sees the exit code and whether the terminal was restored.
 * The main session is shared by the tests of the first `describe`, in order, like one sitting.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { auditChanges, parseRecordQuery } from "../../src/admin/tui/queries.ts";
import { openCore } from "../../src/app/core.ts";
import { parseConfig } from "../../src/config/index.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { builtBinary } from "../support/build.ts";
import { docHashOf } from "../support/records-fixture.ts";
import { BUN, ROOT, cleanup, startService, tempDir, type ServiceProcess } from "../support/env.ts";
import { paneEnv, Terminal, TUI_USER } from "../support/terminal.ts";
import { createRecordOnceTopicExists } from "../support/topic.ts";
import { waitFor } from "../support/wait.ts";

const MAIN = join(ROOT, "src", "main.ts");

afterAll(cleanup);

function dv(data: string, ...args: string[]) {
  const p = Bun.spawnSync([BUN, MAIN, ...args, "--data", data], { env: paneEnv() });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

type OrgJson = { id: string; name: string; apiAccess: boolean; addon: boolean; validated: boolean; suspended: boolean; domain: string | null };
const orgList = (data: string) => JSON.parse(dv(data, "org", "list", "--json").out) as OrgJson[];

test("refuses to run without a terminal: exit 2, the scriptable commands named, nothing created", () => {
  const data = join(tempDir(), "never-created");
  const p = Bun.spawnSync([BUN, MAIN, "admin", "--data", data], { env: paneEnv(), stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  expect(p.exitCode).toBe(2);
  const err = p.stderr.toString();
  expect(err).toContain("needs a terminal");
  for (const cmd of ["docverify org", "docverify key", "docverify status"]) expect(err).toContain(cmd);
  expect(p.stdout.toString()).toBe("");
  expect(existsSync(data)).toBe(false);
});

test("refuses when only stdout is not a terminal (piped), inside a real terminal", async () => {
  const dir = tempDir();
  const data = join(dir, "never-created");
  const t = new Terminal(["sh", "-c", `exec ${BUN} ${MAIN} admin --data ${data} > ${dir}/stdout`]);
  const s = await t.waitForScreen(/\[exit \d+\]/, 10_000, false);
  expect(s).toContain("[exit 2]");
  expect(s).toContain("needs a terminal");
  expect(await Bun.file(join(dir, "stdout")).text()).toBe("");
  expect(existsSync(data)).toBe(false);
});

describe("an administrator's sitting, against a running serve", () => {
  const data = tempDir();
  let svc: ServiceProcess;
  let t: Terminal;
  let key = "";
  let prefix = "";
  let orgId = "";
  let recordId = "";
  const docHash = docHashOf(`tui ${Date.now()}`);

  beforeAll(async () => {
    svc = await startService({
      env: { DOCVERIFY_DATA_DIR: data, DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: "300", DOCVERIFY_RATE_LIMIT_ANONYMOUS: "100000" },
    });
    t = new Terminal([BUN, MAIN, "admin", "--data", data]);
    await t.heading("Main menu");
  }, 30_000);

  const get = (bearer: string) => fetch(`${svc.url}/v1/verifications`, { headers: { authorization: `Bearer ${bearer}` } });
  const post = (path: string, body: unknown, bearer: string) =>
    fetch(svc.url + path, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${bearer}` }, body: JSON.stringify(body) });

  test("create an organisation: names are checked, Escape creates nothing, the flags ticked are set", async () => {
    t.choose("Organisations");
    await t.heading("Organisations");
    t.choose("+ Create an organisation");
    await t.heading("Organisations › New");
    t.keys("Enter");
    await t.waitForScreen("Invalid name: must not be empty");
    t.keys("Escape");
    let s = await t.heading("Organisations");
    expect(s).toContain("Nothing created.");
    expect(orgList(data)).toEqual([]);

    t.choose("+ Create an organisation");
    await t.heading("Organisations › New");
    t.type("  Tui Test Ltd ");
    t.keys("Enter");
    await t.waitForScreen("Switch on now?");
    // API access and the add-on: tick the first two.
    t.keys("Space", "Down", "Space", "Enter");
    await t.waitForScreen('Create "Tui Test Ltd" (API access, Authentication add-on)?');
    t.keys("Enter");
    s = await t.waitForScreen(/Created "Tui Test Ltd" \(id [0-9a-f-]{36}\)/);
    orgId = /Created "Tui Test Ltd" \(id ([0-9a-f-]{36})\)/.exec(s)![1]!;
    expect(s).toMatch(/○ Tui Test Ltd +API · add-on · unvalidated/);
    expect(orgList(data)).toMatchObject([{ id: orgId, name: "Tui Test Ltd", apiAccess: true, addon: true, validated: false, suspended: false }]);
  });

  test("create with a name another organisation holds (full-width, another case): refused naming it, the name asked again; another is taken; Escape creates nothing", async () => {
    t.choose("+ Create an organisation");
    await t.heading("Organisations › New");
    t.type("ＴＵＩ test LTD");
    t.keys("Enter");
    let s = await t.waitForScreen(`an organisation named "Tui Test Ltd" already exists (${orgId})`);
    expect(s).toContain("Type another name.");
    expect(s).toContain("Name (shown to verifiers as the signing organisation)");
    expect(s).not.toContain("Switch on now?");
    expect(orgList(data).map((o) => o.name)).toEqual(["Tui Test Ltd"]);
    // Another name goes on to the flags.
    t.type("Tui Other Ltd");
    t.keys("Enter");
    await t.waitForScreen("Switch on now?");
    t.keys("Escape");
    s = await t.heading("Organisations");
    expect(s).toContain("Nothing created.");
    expect(orgList(data).map((o) => o.name)).toEqual(["Tui Test Ltd"]);
  });

  test("toggle flags: switching on is immediate; switching off asks, and No changes nothing", async () => {
    t.choose("Tui Test Ltd");
    await t.heading("Organisations › Tui Test Ltd");
    t.choose("Validated: off → turn on");
    await t.waitForScreen('Validated is now on for "Tui Test Ltd".');
    expect(orgList(data)[0]!.validated).toBe(true);

    t.choose("API access: on → turn off");
    await t.waitForScreen('Turn API access off for "Tui Test Ltd"?');
    t.keys("Enter"); // the default is No
    await t.waitForScreen("Nothing changed.");
    expect(orgList(data)[0]).toMatchObject({ apiAccess: true, addon: true, validated: true, suspended: false });
  });

  test("set and clear the domain: checked as --domain is, asked first (No changes nothing), audited; the running serve announces the key again each time", async () => {
    /** The organisation's key announcements as serve has anchored them: the domain each carries. */
    const anchoredDomains = () => {
      const db = new Database(join(data, "docverify.db"), { readonly: true });
      try {
        const rows = db.query("SELECT message FROM ledger_transactions WHERE org_id = ? AND kind = 'key_announcement' AND state = 'anchored' ORDER BY sequence_number").all(orgId) as { message: Uint8Array }[];
        return rows.map((r) => (JSON.parse(Buffer.from(r.message).toString()) as { domain?: string }).domain ?? null);
      } finally {
        db.close();
      }
    };
    await waitFor("the organisation's first key announcement", () => (anchoredDomains().length === 1 ? true : undefined), 20_000);

    t.choose("Domain: none → set one");
    await t.waitForScreen('Domain of "Tui Test Ltd" (its DNS name, e.g. example.org)');
    t.type("https://tui.example");
    t.keys("Enter");
    await t.waitForScreen("Invalid domain: give the host name alone, without a scheme such as https://");
    t.keys("C-u");
    t.type("Tui.Example");
    t.keys("Enter");
    await t.waitForScreen('Set the domain of "Tui Test Ltd" to tui.example? Its key is announced again on the ledger, with it.');
    t.keys("Enter"); // the default is Yes
    let s = await t.waitForScreen('The domain of "Tui Test Ltd" is now tui.example.');
    expect(s).toContain("domain        tui.example");
    expect(orgList(data)[0]).toMatchObject({ id: orgId, domain: "tui.example" });
    await waitFor("the key announced again with the domain", () => (anchoredDomains().length === 2 ? anchoredDomains() : undefined), 20_000).then((d) => expect(d).toEqual([null, "tui.example"]));

    // Clearing asks, and No (the default) changes nothing.
    t.choose("Domain: tui.example → change or clear");
    await t.waitForScreen('Domain of "Tui Test Ltd" (now tui.example; leave empty to clear it)');
    t.keys("Enter");
    await t.waitForScreen('Clear the domain of "Tui Test Ltd" (now tui.example)?');
    t.keys("Enter");
    await t.waitForScreen("Nothing changed.");
    expect(orgList(data)[0]!.domain).toBe("tui.example");
    t.choose("Domain: tui.example → change or clear");
    await t.waitForScreen("leave empty to clear it");
    t.keys("Enter");
    await t.waitForScreen('Clear the domain of "Tui Test Ltd" (now tui.example)?');
    t.keys("y");
    s = await t.waitForScreen('"Tui Test Ltd" has no domain now.');
    expect(s).toContain("domain        -");
    expect(orgList(data)[0]!.domain).toBeNull();
    await waitFor("the key announced again without it", () => (anchoredDomains().length === 3 ? anchoredDomains() : undefined), 20_000).then((d) => expect(d).toEqual([null, "tui.example", null]));
  });

  test("mint a key: shown once with a warning, read off the screen, works against the running serve at once", async () => {
    t.choose("Mint an API key for this organisation");
    await t.waitForScreen('Environment of the key for "Tui Test Ltd"');
    t.choose("live");
    await t.waitForScreen("Also grant records:revoke");
    t.keys("Enter"); // No
    await t.waitForScreen("Expires (YYYY-MM-DD for that day's 00:00 UTC");
    t.keys("Enter"); // empty: never (test/admin/tui-key-expiry.test.ts mints with an expiry)
    await t.waitForScreen('Mint a live key for "Tui Test Ltd" with verifications:read records:write?');
    t.keys("Enter");
    const s = await t.heading("API keys › New key");
    expect(s).toContain("This key is shown ONCE. Copy it now");
    key = /dv_live_[0-9A-Za-z]{54}/.exec(s)![0];
    prefix = key.slice(0, 24);
    expect(s).toContain(`${prefix} (live, verifications:read records:write) for "Tui Test Ltd"`);
    expect((await get(key)).status).toBe(200);

    t.choose("I have copied the key");
    const after = await t.waitForScreen(`Minted ${prefix}`);
    expect(after).toContain("The key is no longer on");
    expect(after).not.toContain(key);
    // The secret is nowhere in the data folder's database.
    const db = new Database(join(data, "docverify.db"), { readonly: true });
    try {
      const dump = JSON.stringify(db.query("SELECT * FROM api_keys").all()) + JSON.stringify(db.query("SELECT * FROM audit_log").all());
      expect(dump).not.toContain(key.slice(24, 56));
    } finally {
      db.close();
    }
  });

  test("find a record by hash and by id: anchor state, topic, transaction, sequence, consensus, revocation", async () => {
    const created = await createRecordOnceTopicExists(() => post("/v1/records", { originalDocHash: docHash, filename: "contract.pdf" }, key));
    recordId = ((await created.json()) as { recordId: string }).recordId;
    t.keys("Escape");
    await t.heading("Organisations");
    t.keys("Escape");
    await t.heading("Main menu");
    t.choose("Find a record");
    await t.heading("Find a record");
    t.type("not a hash");
    t.keys("Enter");
    await t.waitForScreen("Not a record id");
    t.keys("C-u");
    t.type(docHash.slice("sha256:".length).toUpperCase());
    t.keys("Enter");
    let s = await t.heading("Find a record › Result");
    expect(s).toContain(`record        ${recordId}`);
    expect(s).toContain(`organisation  Tui Test Ltd (${orgId})`);
    expect(s).toContain(`document      ${docHash}`);
    expect(s).toContain("filename      contract.pdf");
    expect(s).toMatch(/topic         0\.0\.\d+/);
    expect(s).toMatch(/transaction   0\.0\.\d+@\d+\.\d+/);
    expect(s).toContain("revocation    none");

    // Once anchored (consensus in 300 ms on this ledger), revoke it over the API with a key that may.
    const db = new Database(join(data, "docverify.db"), { readonly: true });
    try {
      const state = () => (db.query("SELECT anchor_state FROM records WHERE id = ?").get(recordId) as { anchor_state: string }).anchor_state;
      await waitFor("the record anchored", () => (state() === "anchored" ? true : undefined), 15_000, 100);
    } finally {
      db.close();
    }
    const revoker = JSON.parse(dv(data, "key", "mint", "--org", orgId, "--env", "live", "--revoke", "--json").out) as { key: string };
    expect((await post(`/v1/records/${recordId}/revoke`, { reason: "SUPERSEDED" }, revoker.key)).status).toBe(200);

    t.choose("Find another record");
    await t.heading("Find a record");
    t.type(recordId);
    t.keys("Enter");
    s = await t.heading("Find a record › Result");
    expect(s).toContain("anchor state  anchored");
    expect(s).toMatch(/sequence      \d+/);
    expect(s).toMatch(/consensus     \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ \(\d+\.\d{9}\)/);
    expect(s).toMatch(/revocation    REVOKED \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ, reason SUPERSEDED/);
    expect(s).toMatch(/message     0\.0\.\d+@\d+\.\d+: (open|pending|accepted|anchored)/);

    t.keys("Escape");
    await t.heading("Main menu");
    t.choose("Find a record");
    await t.heading("Find a record");
    t.type(`sha256:${"0".repeat(64)}`);
    t.keys("Enter");
    await t.waitForScreen(`No record for sha256:${"0".repeat(64)}.`);
    t.keys("Escape");
    await t.heading("Main menu");
  }, 60_000);

  test("revoke the key: asks first (No changes nothing), then 401 at once", async () => {
    t.choose("API keys");
    let s = await t.heading("API keys");
    expect(s).toMatch(new RegExp(`○ ${prefix}  Tui Test Ltd +read,write +(never used|used \\d{4})`));
    t.choose(prefix);
    s = await t.heading(`API keys › ${prefix}`);
    expect(s).toContain("scopes       verifications:read records:write");
    expect(s).not.toContain(key);
    t.choose("Revoke this key");
    await t.waitForScreen(`Revoke ${prefix} of "Tui Test Ltd"?`);
    t.keys("Enter"); // default No
    await t.waitForScreen("Nothing changed.");
    expect((await get(key)).status).toBe(200);

    t.choose(prefix);
    await t.heading(`API keys › ${prefix}`);
    t.choose("Revoke this key");
    await t.waitForScreen(`Revoke ${prefix} of "Tui Test Ltd"?`);
    t.keys("y");
    s = await t.waitForScreen(`Revoked ${prefix} of "Tui Test Ltd".`);
    expect(s).toMatch(new RegExp(`${prefix}  Tui Test Ltd .*REVOKED \\d{4}`));
    expect((await get(key)).status).toBe(401);
    t.keys("Escape");
    await t.heading("Main menu");
  });

  test("the anchor queue and ledger health, from status", async () => {
    t.choose("Anchor queue and ledger health");
    const s = await t.waitForScreen("anchor queue  pending=");
    expect(s).toContain("ledger        local (embedded)");
    expect(s).toContain("reachable: the local ledger answers");
    expect(s).toMatch(/records +pending=\d+ accepted=\d+ anchored=\d+ abandoned=0/);
    // The record and its revocation, each anchored in a batch (docs/anchoring.md "Batches").
    expect(s).toMatch(/batches +open=\d+ waiting=\d+ waiting-leaves=\d+ oldest-waiting=(-|\d+ s) anchored=([2-9]|\d\d+) anchored-leaves=([2-9]|\d\d+) \(\d+\.\d a batch\)/);
    t.keys("Escape");
    await t.heading("Main menu");
  });

  test("the audit trail shows each action, newest first, with the OS user; an entry shows what changed", async () => {
    t.choose("Audit trail");
    const s = await t.heading("Audit trail › page 1");
    const actor = `os:${TUI_USER} (uid ${process.geteuid!()})`;
    const rows = s.split("\n").filter((l) => /^│  [●○] \d{4}-/.test(l));
    expect(rows.map((l) => l.split(/ {2,}/).slice(2, 4))).toEqual([
      ["api_key.revoke", prefix],
      ["api_key.mint", expect.stringMatching(/^dv_live_/)], // the revoke-capable key minted with the CLI
      ["api_key.mint", prefix],
      ["organisation.set", "Tui Test Ltd"], // the domain cleared
      ["organisation.set", "Tui Test Ltd"], // the domain set
      ["organisation.set", "Tui Test Ltd"], // validated
      ["organisation.create", "Tui Test Ltd"],
    ]);
    for (const r of rows) expect(r).toContain(actor);
    t.choose(rows[5]!.slice(5).trimEnd());
    let entry = await t.waitForScreen("Audit trail › entry");
    expect(entry).toContain("action   organisation.set");
    expect(entry).toContain(`who      ${actor}`);
    expect(entry).toContain("changes  validated: false → true");
    t.keys("Escape");
    await t.heading("Audit trail › page 1");
    t.choose(rows[4]!.slice(5).trimEnd());
    entry = await t.waitForScreen("Audit trail › entry");
    expect(entry).toContain(`changes  domain: null → "tui.example"`);
    t.keys("Escape");
    await t.heading("Audit trail › page 1");
  });

  test("Escape goes back one level at a time; at the main menu it leaves, exit 0, terminal restored", async () => {
    t.keys("Escape");
    await t.heading("Main menu");
    t.keys("Escape");
    expect(await t.exited()).toEqual({ code: 0, restored: true });
    // The key shown earlier was on the alternate screen: it is not in the pane's history.
    expect(t.history()).not.toContain(key);
  });
});

test("the audit trail pages: twelve to a page, older and newer, newest first", async () => {
  const data = tempDir();
  // Fourteen changes made by another process (another administrator) before the UI starts.
  const core = openCore({ config: parseConfig({ DOCVERIFY_DATA_DIR: data }), log: memoryLogger() });
  try {
    for (let i = 1; i <= 14; i++) await core.organisations.create({ name: `Paged ${String(i).padStart(2, "0")}` }, "test");
  } finally {
    await core.close();
  }
  const t = new Terminal([BUN, MAIN, "admin", "--data", data]);
  await t.heading("Main menu");
  t.choose("Audit trail");
  let s = await t.heading("Audit trail › page 1");
  const names = (screen: string) => [...screen.matchAll(/organisation\.create +(Paged \d\d)/g)].map((m) => m[1]);
  expect(names(s)).toEqual(["Paged 14", "Paged 13", "Paged 12", "Paged 11", "Paged 10", "Paged 09", "Paged 08", "Paged 07", "Paged 06", "Paged 05", "Paged 04", "Paged 03"]);
  expect(s).not.toContain("← Newer entries");
  t.choose("Older entries →");
  s = await t.heading("Audit trail › page 2");
  expect(names(s)).toEqual(["Paged 02", "Paged 01"]);
  expect(s).not.toContain("Older entries →");
  t.choose("← Newer entries");
  s = await t.heading("Audit trail › page 1");
  expect(names(s)[0]).toBe("Paged 14");
  t.keys("C-c");
  expect(await t.exited()).toEqual({ code: 0, restored: true });
});

test("record queries: ids and hashes in the forms people paste, anything else refused with the forms named", () => {
  const hex = "ab".repeat(32);
  expect(parseRecordQuery(`  sha256:${hex.toUpperCase()} `)).toEqual({ by: "hash", docHash: `sha256:${hex}` });
  expect(parseRecordQuery(hex)).toEqual({ by: "hash", docHash: `sha256:${hex}` });
  expect(parseRecordQuery("01A201DA-B104-71D9-9837-AE90219CA6E2")).toEqual({ by: "id", id: "01a201da-b104-71d9-9837-ae90219ca6e2" });
  for (const bad of ["", "sha256:abc", `sha1:${hex}`, `${hex}0`, "01a201da-b104-71d9-9837"]) expect(typeof parseRecordQuery(bad)).toBe("string");
  expect(auditChanges({ validated: false, revokedAt: null }, { validated: true, revokedAt: 0 })).toEqual(["validated: false → true", "revokedAt: null → 1970-01-01T00:00:00.000Z"]);
});

test("Ctrl-C halfway through creating an organisation leaves at once: exit 0, terminal restored, nothing created", async () => {
  const data = tempDir();
  expect(dv(data, "org", "create", "--name", "Already There").code).toBe(0);
  const t = new Terminal([BUN, MAIN, "admin", "--data", data]);
  await t.heading("Main menu");
  t.choose("Organisations");
  await t.heading("Organisations");
  t.choose("+ Create an organisation");
  await t.heading("Organisations › New");
  t.type("Half Typed");
  await t.waitForScreen("Half Typed");
  t.keys("C-c");
  expect(await t.exited()).toEqual({ code: 0, restored: true });
  expect(orgList(data).map((o) => o.name)).toEqual(["Already There"]);
});

describe("the compiled binary", () => {
  // The run's build (support/build.ts), made by the first file that needs it.
  let binary: string;

  beforeAll(() => {
    binary = builtBinary();
  }, 120_000);

  test("asks before creating a data folder (No creates nothing), then runs the UI and leaves on Ctrl-C", async () => {
    const fresh = join(tempDir(), "fresh");
    let t = new Terminal([binary, "admin", "--data", fresh]);
    await t.heading("New data folder");
    await t.waitForScreen(`There is no docverify data folder at ${fresh}`);
    t.keys("Enter"); // default No
    expect(await t.exited()).toEqual({ code: 0, restored: true });
    expect(existsSync(fresh)).toBe(false);

    const data = tempDir();
    expect(dv(data, "org", "create", "--name", "Compiled Ltd", "--api-access").code).toBe(0);
    t = new Terminal([binary, "admin", "--data", data]);
    await t.heading("Main menu");
    t.choose("Organisations");
    const s = await t.heading("Organisations");
    expect(s).toMatch(/○ Compiled Ltd +API · no add-on · unvalidated/);
    t.choose("Compiled Ltd");
    await t.heading("Organisations › Compiled Ltd");
    t.choose("Suspended: off → turn on");
    await t.waitForScreen('Turn Suspended on for "Compiled Ltd"?');
    t.keys("C-c");
    expect(await t.exited()).toEqual({ code: 0, restored: true });
    expect(orgList(data)[0]!.suspended).toBe(false);
  }, 30_000);
});
