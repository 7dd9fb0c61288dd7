/**
 * `docverify person add|list|suspend|link` (docs/admin.md "Persons"), run as a process the way an
 * operator runs it: the enrolment link on stdout once, never in storage, the audit trail or a
 * listing; refusals on stderr with a non-zero exit and nothing changed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { BUN, ROOT, cleanup, startService, tempDir } from "../support/env.ts";

afterAll(cleanup);

const PUBLIC_URL = "https://verify.example.org";
const LINK_RE = /^https:\/\/verify\.example\.org\/enrol\/([A-Za-z0-9_-]{43})$/;
const data = tempDir();

function dv(args: string[], env: Record<string, string> = { DOCVERIFY_PUBLIC_URL: PUBLIC_URL }) {
  const p = Bun.spawnSync([BUN, join(ROOT, "src", "main.ts"), ...args, "--data", data], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", USER: "alice", ...env } });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}
const json = (r: { out: string }) => JSON.parse(r.out) as Record<string, unknown>;

function query<T>(sql: string): T[] {
  const db = new Database(join(data, "docverify.db"), { readonly: true });
  try {
    return db.query(sql).all() as T[];
  } finally {
    db.close();
  }
}
const audit = () => query<Record<string, string | null>>("SELECT actor, action, subject_type, subject_id, before, after FROM audit_log ORDER BY id");
const counts = () => query<{ n: number }>("SELECT (SELECT count(*) FROM persons) + 1000 * (SELECT count(*) FROM enrolments) + 1000000 * (SELECT count(*) FROM audit_log) AS n")[0]!.n;
/** Every stored byte of the tables a token could leak into, as text. */
const stored = () => JSON.stringify([query("SELECT * FROM persons"), query("SELECT hex(token_digest), * FROM enrolments"), audit()]);

const ADD = (org: string, name = "Alice Example") => ["person", "add", "--org", org, "--name", name, "--email", "alice@example.org", "--identity", "Passport, number ending 4821, seen in person"];

let org: string;
beforeAll(() => {
  org = dv(["org", "create", "--name", "Acme Ltd"]).out.trim();
});

describe("person commands", () => {
  test("person add prints the link once on stdout, its expiry and the id on stderr; stores only a digest; audited", () => {
    const r = dv(ADD(org));
    expect(r.code).toBe(0);
    const link = r.out.trim();
    expect(link).toMatch(LINK_RE);
    expect(r.out).toBe(`${link}\n`);
    expect(r.err).toContain("shown once");
    expect(r.err).toMatch(/until \d{4}-\d\d-\d\dT/);
    const token = LINK_RE.exec(link)![1]!;
    expect(stored()).not.toContain(token);
    const digest = new Bun.CryptoHasher("sha256").update(token).digest("hex").toUpperCase();
    expect(query<{ d: string }>("SELECT hex(token_digest) AS d FROM enrolments").map((x) => x.d)).toEqual([digest]);
    expect(JSON.stringify(audit())).not.toContain(digest);
    expect(audit().slice(-2).map((a) => [a.actor?.startsWith("os:alice "), a.action, a.subject_type])).toEqual([
      [true, "person.add", "person"],
      [true, "person.link", "person"],
    ]);
  });

  test("person add --json gives {id, enrolUrl, expiresAt} 24 hours ahead", () => {
    const before = Date.now();
    const r = json(dv([...ADD(org, "Bob Example"), "--json"]));
    expect(Object.keys(r).sort()).toEqual(["enrolUrl", "expiresAt", "id"]);
    expect(r.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.enrolUrl).toMatch(LINK_RE);
    const expires = Date.parse(r.expiresAt as string);
    expect(expires).toBeGreaterThanOrEqual(before + 24 * 3600_000 - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 24 * 3600_000);
    expect(stored()).not.toContain(LINK_RE.exec(r.enrolUrl as string)![1]!);
  });

  test("without DOCVERIFY_PUBLIC_URL and no serve running: the default address, and stderr says so and that DOCVERIFY_PUBLIC_URL must be set", () => {
    const r = dv(ADD(org, "Cy Example"), {});
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^http:\/\/127\.0\.0\.1:8080\/enrol\/[A-Za-z0-9_-]{43}\n$/);
    expect(r.err).toContain(
      "DOCVERIFY_PUBLIC_URL is not set and no serve runs on this data folder: the link uses the default address http://127.0.0.1:8080 (DOCVERIFY_HOST:DOCVERIFY_PORT), " +
        "which answers only while serve runs with these settings, and works only from this machine. Set DOCVERIFY_PUBLIC_URL to the address people reach for a link that works elsewhere. " +
        "A passkey also needs a host name, not an IP address: https, or http://localhost on this machine (docs/persons.md).\n",
    );
  });

  test("person list shows persons without any link, all or per organisation", () => {
    const other = dv(["org", "create", "--name", "Other Ltd"]).out.trim();
    const added = json(dv([...ADD(other, "Dee Other"), "--json"]));
    const all = JSON.parse(dv(["person", "list", "--json"]).out) as { id: string; orgId: string; name: string; email: string; identityEvidence: string; suspended: boolean; enrolledAt: string | null; createdAt: string }[];
    expect(all.map((p) => p.name)).toEqual(["Alice Example", "Bob Example", "Cy Example", "Dee Other"]);
    expect(all[0]).toMatchObject({ orgId: org, email: "alice@example.org", identityEvidence: "Passport, number ending 4821, seen in person", suspended: false, enrolledAt: null });
    const mine = JSON.parse(dv(["person", "list", "--org", other, "--json"]).out) as { id: string }[];
    expect(mine.map((p) => p.id)).toEqual([added.id as string]);
    const text = dv(["person", "list"]);
    expect(text.code).toBe(0);
    expect(text.out.trim().split("\n").length).toBe(4);
    expect(text.out).toContain(`${added.id as string}  org=${other}  "Dee Other"  alice@example.org  enrolled=-  suspended=off`);
    for (const listing of [text.out, dv(["person", "list", "--json"]).out]) {
      expect(listing).not.toContain("/enrol/");
      expect(listing).not.toContain(LINK_RE.exec(added.enrolUrl as string)![1]!);
    }
    const unknown = dv(["person", "list", "--org", "nope"]);
    expect(unknown).toEqual({ code: 1, out: "", err: "docverify: No organisation nope.\n" });
  });

  test("person link issues a new link; the older one no longer enrols (checked through redeemEnrolment)", async () => {
    const first = json(dv([...ADD(org, "Eve Example"), "--json"]));
    const second = json(dv(["person", "link", first.id as string, "--json"]));
    expect(second.id).toBe(first.id);
    expect(second.enrolUrl).toMatch(LINK_RE);
    expect(second.enrolUrl).not.toBe(first.enrolUrl);
    const text = dv(["person", "link", first.id as string]);
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/^https:\/\/verify\.example\.org\/enrol\/[A-Za-z0-9_-]{43}\n$/);
    expect(text.err).toContain("shown once");
    expect(audit().filter((a) => a.subject_id === first.id).map((a) => a.action)).toEqual(["person.add", "person.link", "person.link", "person.link"]);

    const { createEnrolments, EnrolmentTokenError } = await import("../../src/persons/persons.ts");
    const { openDatabase } = await import("../../src/storage/db.ts");
    const db = openDatabase({ path: join(data, "docverify.db") });
    try {
      const { sqliteStore } = await import("../../src/storage/store.ts");
      const enrolments = createEnrolments({ store: sqliteStore(db), clock: { now: () => Date.now() } });
      const token = (url: unknown) => LINK_RE.exec(url as string)![1]!;
      for (const old of [first.enrolUrl, second.enrolUrl]) {
        await expect(enrolments.redeemEnrolment(token(old), Date.now())).rejects.toThrow(EnrolmentTokenError);
      }
      expect((await enrolments.redeemEnrolment(token(text.out.trim()), Date.now())).id).toBe(first.id as string);
    } finally {
      db.$client.close();
    }
  });

  test("person suspend suspends, audited once; again changes nothing; the person then gets no link", () => {
    const p = json(dv([...ADD(org, "Fay Example"), "--json"]));
    const r = dv(["person", "suspend", p.id as string]);
    expect(r).toEqual({ code: 0, out: `suspended ${p.id as string} "Fay Example"\n`, err: "" });
    const again = json(dv(["person", "suspend", p.id as string, "--json"]));
    expect(again).toMatchObject({ id: p.id, suspended: true });
    expect(audit().filter((a) => a.subject_id === p.id).map((a) => a.action)).toEqual(["person.add", "person.link", "person.suspend"]);
    const n = counts();
    const link = dv(["person", "link", p.id as string]);
    expect(link).toEqual({ code: 1, out: "", err: `docverify: Person ${p.id as string} is suspended.\n` });
    expect(counts()).toBe(n);
  });

  test("an unknown organisation or person is a clear error, exit 1, nothing changed", () => {
    const n = counts();
    expect(dv(ADD("no-such-org"))).toEqual({ code: 1, out: "", err: "docverify: No organisation no-such-org.\n" });
    expect(dv(["person", "suspend", "nobody"])).toEqual({ code: 1, out: "", err: "docverify: No person nobody.\n" });
    expect(dv(["person", "link", "nobody"])).toEqual({ code: 1, out: "", err: "docverify: No person nobody.\n" });
    expect(counts()).toBe(n);
  });

  test("invalid input is refused, exit 1, naming the field; nothing changed", () => {
    const n = counts();
    const cases: [string[], string][] = [
      [["--email", "not-an-address"], "Invalid email"],
      [["--email", "a b@example.org"], "Invalid email"],
      [["--name", ""], "Invalid name"],
      [["--identity", "x".repeat(501)], "Invalid identity"],
      [["--identity", "line one\nline two"], "Invalid identity"],
    ];
    for (const [change, message] of cases) {
      const args = [...ADD(org)];
      args[args.indexOf(change[0]!) + 1] = change[1]!;
      const r = dv(args);
      expect({ code: r.code, out: r.out }).toEqual({ code: 1, out: "" });
      expect(r.err).toStartWith(`docverify: ${message}`);
      expect(r.err.trim().split("\n").length).toBe(1);
    }
    expect(counts()).toBe(n);
  });

  test("usage errors exit 2 and change nothing", () => {
    const n = counts();
    const cases: [string[], string][] = [
      [["person"], "use add, list, suspend or link"], // --data DIR follows: it stands where the subcommand should
      [["person", "remove"], 'unknown person subcommand "remove"'],
      [["person", "add", "--name", "X", "--email", "x@example.org", "--identity", "passport"], "--org is required"],
      [["person", "add", "--org", org, "--email", "x@example.org", "--identity", "passport"], "--name is required"],
      [["person", "add", "--org", org, "--name", "X", "--identity", "passport"], "--email is required"],
      [["person", "add", "--org", org, "--name", "X", "--email", "x@example.org"], "--identity is required"],
      [["person", "add", ...ADD(org).slice(2), "--bogus"], "--bogus"],
      [["person", "suspend"], ""],
      [["person", "link"], ""],
      [["person", "list", "extra"], ""],
    ];
    for (const [args, message] of cases) {
      const r = dv(args);
      expect({ args, code: r.code, out: r.out }).toEqual({ args, code: 2, out: "" });
      expect(r.err).toStartWith("docverify: ");
      expect(r.err).toContain(message);
    }
    expect(counts()).toBe(n);
  });
});

describe("without DOCVERIFY_PUBLIC_URL, the link names the address serve really uses", () => {
  const folder = tempDir();
  function run(args: string[], env: Record<string, string> = {}) {
    const p = Bun.spawnSync([BUN, join(ROOT, "src", "main.ts"), ...args, "--data", folder], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", USER: "alice", ...env } });
    return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
  }
  let acme = "";
  beforeAll(() => {
    acme = run(["org", "create", "--name", "Acme Ltd"]).out.trim();
  });

  test("serve on a port it chose: the link names that address and its page answers there; stderr says DOCVERIFY_PUBLIC_URL is not set and the link works only from this machine", async () => {
    const service = await startService({ args: ["--data", folder] });
    expect(service.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(service.url).not.toBe("http://127.0.0.1:8080");
    const notice =
      `DOCVERIFY_PUBLIC_URL is not set: the link names ${service.url}, the address the serve running on this data folder (pid ${service.proc.pid}) listens on, ` +
      "and works only from this machine. For a link that works elsewhere, set DOCVERIFY_PUBLIC_URL to the address people reach, for serve and for this command. " +
      "A passkey also needs a host name, not an IP address: https, or http://localhost on this machine (docs/persons.md).\n";
    const added = run(ADD(acme, "Gil Example"));
    expect(added.code).toBe(0);
    const link = added.out.trim();
    expect(link.startsWith(`${service.url}/enrol/`)).toBe(true);
    expect(added.err).toContain(notice);
    const page = await fetch(link);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Gil Example");

    const issued = run(["person", "link", (JSON.parse(run(["person", "list", "--json"]).out) as { id: string; name: string }[]).find((p) => p.name === "Gil Example")!.id, "--json"]);
    expect((json(issued).enrolUrl as string).startsWith(`${service.url}/enrol/`)).toBe(true);
    expect(issued.err).toContain(notice);

    // Killed, it leaves its address behind; nothing believes it once the data folder's lock is gone.
    await service.stop("SIGKILL");
    expect(existsSync(join(folder, "serve.json"))).toBe(true);
    const after = run(ADD(acme, "Hal Example"));
    expect(after.out).toMatch(/^http:\/\/127\.0\.0\.1:8080\/enrol\/[A-Za-z0-9_-]{43}\n$/);
    expect(after.err).toContain("no serve runs on this data folder");
  }, 40_000);

  test("serve with its own DOCVERIFY_PUBLIC_URL: a command without it names that one; a command with it, its own; once serve stops, the default again", async () => {
    const service = await startService({ args: ["--data", folder], env: { DOCVERIFY_PUBLIC_URL: PUBLIC_URL } });
    const added = run([...ADD(acme, "Ida Example"), "--json"]);
    expect(json(added).enrolUrl).toMatch(LINK_RE);
    expect(added.err).toBe(
      `DOCVERIFY_PUBLIC_URL is not set for this command: the link names ${PUBLIC_URL}, the public address of the serve running on this data folder (pid ${service.proc.pid}).\n`,
    );
    const own = run(ADD(acme, "Jo Example"), { DOCVERIFY_PUBLIC_URL: "https://elsewhere.example" });
    expect(own.out).toMatch(/^https:\/\/elsewhere\.example\/enrol\/[A-Za-z0-9_-]{43}\n$/);
    expect(own.err).not.toContain("DOCVERIFY_PUBLIC_URL");

    expect(await service.stop()).toBe(0);
    expect(existsSync(join(folder, "serve.json"))).toBe(false);
    const again = run(["person", "link", json(added).id as string]);
    expect(again.out).toMatch(/^http:\/\/127\.0\.0\.1:8080\/enrol\/[A-Za-z0-9_-]{43}\n$/);
    expect(again.err).toContain("no serve runs on this data folder");
    // The same notice with --json, on stderr: stdout stays one JSON document.
    const asJson = run(["person", "link", json(added).id as string, "--json"]);
    expect((json(asJson).enrolUrl as string).startsWith("http://127.0.0.1:8080/enrol/")).toBe(true);
    expect(asJson.err).toContain("no serve runs on this data folder");
  }, 40_000);
});
