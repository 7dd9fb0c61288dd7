/**
 * The terminal UI's persons screen, driven as a person would (the harness of
 * test/admin/tui.test.ts, reduced): add a person, the enrolment link shown once and cleared,
 * a new link that replaces it, suspension that asks first. Checked through the command line
 * and the database.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { BUN, ROOT, cleanup, startService, tempDir } from "../support/env.ts";
import { paneEnv, Terminal } from "../support/terminal.ts";

const MAIN = join(ROOT, "src", "main.ts");
const LINK_RE = /https:\/\/verify\.example\.org\/enrol\/([A-Za-z0-9_-]{43})/;
const ENV = paneEnv({ DOCVERIFY_PUBLIC_URL: "https://verify.example.org" });

afterAll(cleanup);

describe("persons in the terminal UI", () => {
  const data = tempDir();
  let t: Terminal;
  let personId = "";
  let firstToken = "";
  const dv = (...args: string[]) => {
    const p = Bun.spawnSync([BUN, MAIN, ...args, "--data", data], { env: ENV });
    return { code: p.exitCode, out: p.stdout.toString() };
  };
  const query = (sql: string) => {
    const db = new Database(join(data, "docverify.db"), { readonly: true });
    try {
      return db.query(sql).all() as Record<string, unknown>[];
    } finally {
      db.close();
    }
  };

  beforeAll(async () => {
    expect(dv("org", "create", "--name", "Acme Ltd").code).toBe(0);
    t = new Terminal([BUN, MAIN, "admin", "--data", data], ENV);
    await t.heading("Main menu");
  }, 30_000);

  test("add a person: fields checked, the link shown once, only its digest stored, cleared from the screen", async () => {
    t.choose("Persons");
    let s = await t.heading("Persons");
    expect(s).toContain("No persons yet.");
    t.choose("+ Add a person");
    await t.waitForScreen("Organisation the person signs for");
    t.choose("Acme Ltd");
    await t.waitForScreen("Name (shown to anyone verifying what they sign)");
    t.keys("Enter");
    await t.waitForScreen("Invalid name: must not be empty");
    t.type("Alice Example");
    t.keys("Enter");
    await t.waitForScreen("Email address");
    t.type("alice at example.org");
    t.keys("Enter");
    await t.waitForScreen("Invalid email");
    t.keys(...Array<string>("alice at example.org".length).fill("BSpace"));
    t.type("alice@example.org");
    t.keys("Enter");
    await t.waitForScreen("How was their identity verified?");
    t.type("Passport, number ending 4821");
    t.keys("Enter");
    await t.waitForScreen('Add "Alice Example" <alice@example.org> to "Acme Ltd"?');
    t.keys("Enter");
    s = await t.heading("Persons › Enrolment link");
    expect(s).toContain("This link is shown ONCE");
    firstToken = LINK_RE.exec(s)![1]!;
    const stored = JSON.stringify([query("SELECT * FROM persons"), query("SELECT hex(token_digest) AS d, person_id, expires_at FROM enrolments"), query("SELECT * FROM audit_log")]);
    expect(stored).not.toContain(firstToken);
    const people = JSON.parse(dv("person", "list", "--json").out) as { id: string; name: string; email: string; identityEvidence: string }[];
    expect(people).toMatchObject([{ name: "Alice Example", email: "alice@example.org", identityEvidence: "Passport, number ending 4821" }]);
    personId = people[0]!.id;

    t.choose("I have copied the link");
    s = await t.waitForScreen('Added "Alice Example". The link is no longer on the screen.');
    expect(s).not.toContain(firstToken);
    expect(s).toMatch(/○ Alice Example +Acme Ltd +not enrolled/);
  });

  test("a new link replaces the first; suspension asks first, then shows", async () => {
    t.choose("Alice Example");
    await t.heading("Persons › Alice Example");
    t.choose("New enrolment link");
    let s = await t.heading("Persons › Enrolment link");
    const second = LINK_RE.exec(s)![1]!;
    expect(second).not.toBe(firstToken);
    const rows = query("SELECT expires_at, used_at FROM enrolments ORDER BY created_at, expires_at");
    expect(rows.length).toBe(2);
    expect((rows[0]!.expires_at as number) < (rows[1]!.expires_at as number)).toBe(true);
    t.choose("I have copied the link");
    await t.waitForScreen('New link for "Alice Example".');

    t.choose("Suspend this person");
    await t.waitForScreen('Suspend "Alice Example"?');
    t.keys("Enter"); // default No
    await t.waitForScreen("Nothing changed.");
    expect((JSON.parse(dv("person", "list", "--json").out) as { suspended: boolean }[])[0]!.suspended).toBe(false);
    t.choose("Suspend this person");
    await t.waitForScreen('Suspend "Alice Example"?');
    t.keys("y");
    s = await t.waitForScreen('"Alice Example" is suspended.');
    expect(s).toContain("suspended     yes");
    expect(s).not.toContain("New enrolment link");
    expect((JSON.parse(dv("person", "list", "--json").out) as { suspended: boolean }[])[0]!.suspended).toBe(true);
    expect(query(`SELECT action FROM audit_log WHERE subject_id = '${personId}' ORDER BY id`).map((r) => r.action)).toEqual(["person.add", "person.link", "person.link", "person.suspend"]);
    t.keys("Escape");
    s = await t.heading("Persons");
    expect(s).toMatch(/○ Alice Example +Acme Ltd +not enrolled · SUSPENDED/);
    t.keys("Escape");
    await t.heading("Main menu");
  });
});

describe("the enrolment link in the terminal UI, without DOCVERIFY_PUBLIC_URL", () => {
  const data = tempDir();
  const env = paneEnv();
  /** Without white space and clack's frame, so a sentence it wrapped (mid-word too) reads as one. */
  const flat = (screen: string) => screen.replace(/[\s│]+/g, "");

  test("names the address of the serve running on the data folder, saying it works only from this machine; once serve stops, the default, saying so", async () => {
    const p = Bun.spawnSync([BUN, MAIN, "org", "create", "--name", "Acme Ltd", "--data", data], { env });
    expect(p.exitCode).toBe(0);
    const service = await startService({ args: ["--data", data] });
    const t = new Terminal([BUN, MAIN, "admin", "--data", data], env);
    await t.heading("Main menu");
    t.choose("Persons");
    await t.heading("Persons");
    t.choose("+ Add a person");
    await t.waitForScreen("Organisation the person signs for");
    t.choose("Acme Ltd");
    await t.waitForScreen("Name (shown to anyone verifying what they sign)");
    t.type("Kim Example");
    t.keys("Enter");
    await t.waitForScreen("Email address");
    t.type("kim@example.org");
    t.keys("Enter");
    await t.waitForScreen("How was their identity verified?");
    t.type("Passport, number ending 1234");
    t.keys("Enter");
    await t.waitForScreen('Add "Kim Example" <kim@example.org> to "Acme Ltd"?');
    t.keys("Enter");
    let s = await t.heading("Persons › Enrolment link");
    expect(s).toMatch(new RegExp(`${service.url.replaceAll(".", "\\.")}/enrol/[A-Za-z0-9_-]{43}`));
    expect(flat(s)).toContain(flat(`DOCVERIFY_PUBLIC_URL is not set: the link names ${service.url}, the address the serve running on this data folder (pid ${service.proc.pid}) listens on, and works only from this machine.`));
    t.choose("I have copied the link");
    await t.waitForScreen('Added "Kim Example".');

    expect(await service.stop()).toBe(0);
    t.choose("Kim Example");
    await t.heading("Persons › Kim Example");
    t.choose("New enrolment link");
    s = await t.heading("Persons › Enrolment link");
    expect(s).toMatch(/http:\/\/127\.0\.0\.1:8080\/enrol\/[A-Za-z0-9_-]{43}/);
    expect(flat(s)).toContain(flat("DOCVERIFY_PUBLIC_URL is not set and no serve runs on this data folder: the link uses the default address http://127.0.0.1:8080"));
    t.choose("I have copied the link");
    await t.waitForScreen('New link for "Kim Example".');
  }, 60_000);
});
