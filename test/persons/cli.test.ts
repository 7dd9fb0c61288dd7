/**
 * `docverify person add|list|suspend|link` (decisions §10), run as a process the way an operator
 * runs it: the enrolment link on stdout once, never in storage, the audit trail or a listing;
 * refusals on stderr with a non-zero exit and nothing changed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { BUN, ROOT, cleanup, tempDir } from "../support/env.ts";

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

  test("without DOCVERIFY_PUBLIC_URL the link names the listening address, with a warning", () => {
    const r = dv(ADD(org, "Cy Example"), {});
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^http:\/\/127\.0\.0\.1:8080\/enrol\/[A-Za-z0-9_-]{43}\n$/);
    expect(r.err).toContain("DOCVERIFY_PUBLIC_URL is not set");
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

    const { createEnrolments, EnrolmentTokenError } = await import("../../src/keys/persons.ts");
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
