/**
 * The administration command line (docs/operations.md "Administration on the server"), run as a
 * process the way an operator or a script runs it: answers on stdout (`--json` gives one JSON
 * document), refusals on stderr with a non-zero exit and nothing changed, every change in the audit
 * trail.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { parseKey } from "../src/keys/api-key.ts";
import { parseTrustFile } from "../src/verifier/trust.ts";
import { cliAsync } from "./ops/support.ts";
import { BUN, ROOT, cleanup, startService, tempDir, type ServiceProcess } from "./support/env.ts";
import { databaseBefore, organisationAsBefore } from "./support/previous-release.ts";
import { createRecordsFixture } from "./support/records-fixture.ts";

afterAll(cleanup);

const data = tempDir();
function dv(...args: string[]) {
  const p = Bun.spawnSync([BUN, join(ROOT, "src", "main.ts"), ...args, "--data", data], { env: { PATH: process.env.PATH, USER: "alice" } });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}
const json = (r: { out: string }) => JSON.parse(r.out) as Record<string, unknown>;
function audit() {
  const db = new Database(join(data, "docverify.db"), { readonly: true });
  try {
    return db.query("SELECT actor, action, subject_type, subject_id, before, after FROM audit_log ORDER BY id").all() as Record<string, string | null>[];
  } finally {
    db.close();
  }
}

describe("org and key commands", () => {
  const withAddon = json(dv("org", "create", "--name", "Acme Ltd", "--addon", "--api-access", "--json")).id as string;
  const plain = dv("org", "create", "--name", "Beta GmbH").out.trim();

  test("org create prints the new id, --json gives {id}", () => {
    expect(withAddon).toMatch(/^[0-9a-f-]{36}$/);
    expect(plain).toMatch(/^[0-9a-f-]{36}$/);
  });

  test("org list shows the flags", () => {
    const list = JSON.parse(dv("org", "list", "--json").out) as { id: string; name: string; apiAccess: boolean; addon: boolean; validated: boolean; suspended: boolean }[];
    expect(list.map((o) => [o.name, o.apiAccess, o.addon, o.validated, o.suspended])).toEqual([
      ["Acme Ltd", true, true, false, false],
      ["Beta GmbH", false, false, false, false],
    ]);
  });

  test("key mint follows the scope rules and shows the key once", () => {
    const live = json(dv("key", "mint", "--org", withAddon, "--env", "live", "--revoke", "--json"));
    expect(live.scopes).toEqual(["verifications:read", "records:write", "records:revoke"]);
    expect(parseKey(live.key as string)).toMatchObject({ environment: "live", keyId: live.keyId });
    expect(json(dv("key", "mint", "--org", withAddon, "--env", "live", "--json")).scopes).toEqual(["verifications:read", "records:write"]);
    expect(json(dv("key", "mint", "--org", withAddon, "--env", "test", "--json")).scopes).toEqual(["verifications:read"]);
    expect(json(dv("key", "mint", "--org", plain, "--env", "live", "--json")).scopes).toEqual(["verifications:read"]);
    const human = dv("key", "mint", "--org", plain, "--env", "test");
    expect(human.code).toBe(0);
    expect(parseKey(human.out.trim())).not.toBeNull();
    expect(human.err).toContain("shown once");
    // the secret is nowhere in storage or in the listing
    const listing = dv("key", "list", "--json").out;
    expect(listing).not.toContain((live.key as string).slice(24, 56));
    expect(JSON.stringify(audit())).not.toContain((live.key as string).slice(24, 56));
  });

  const refusals: [string, string[], number, RegExp][] = [
    ["--revoke on a test key", ["key", "mint", "--org", "ORG", "--env", "test", "--revoke"], 1, /never granted on a test key/],
    ["--revoke without the add-on", ["key", "mint", "--org", "PLAIN", "--env", "live", "--revoke"], 1, /add-on/],
    ["an unknown organisation", ["key", "mint", "--org", "no-such-org", "--env", "live"], 1, /No organisation no-such-org/],
    ["a bad --env", ["key", "mint", "--org", "ORG", "--env", "prod"], 2, /--env is required and must be live or test/],
    ["an unknown flag", ["key", "mint", "--org", "ORG", "--env", "live", "--admin"], 2, /--admin/],
    ["revoking an unknown key", ["key", "revoke", "AAAAAAAAAAAAAAAA"], 1, /No API key AAAAAAAAAAAAAAAA/],
    ["a bad on/off value", ["org", "set", "ORG", "--validated", "maybe"], 2, /--validated must be on or off/],
    ["org set with nothing to change", ["org", "set", "ORG"], 2, /nothing to change/],
    ["org set on an unknown organisation", ["org", "set", "nope", "--addon", "on"], 1, /No organisation nope/],
    ["org create without a name", ["org", "create"], 2, /--name is required/],
    ["an organisation name with a bidi override", ["org", "create", "--name", "Evil\u202eCorp"], 1, /control or invisible/],
    ["an unknown subcommand", ["org", "delete"], 2, /unknown org subcommand "delete"/],
  ];
  for (const [name, args, code, message] of refusals) {
    test(`refuses ${name}, on stderr, changing nothing`, () => {
      const before = audit().length;
      const r = dv(...args.map((a) => (a === "ORG" ? withAddon : a === "PLAIN" ? plain : a)));
      expect(r.code).toBe(code);
      expect(r.out).toBe("");
      expect(r.err).toMatch(message);
      expect(audit().length).toBe(before);
    });
  }

  test("org set changes flags; key revoke revokes; each change is audited with who, what, before and after", () => {
    const set = json(dv("org", "set", plain, "--api-access", "on", "--validated", "on", "--json"));
    expect(set).toMatchObject({ apiAccess: true, validated: true, addon: false });
    const k = json(dv("key", "mint", "--org", plain, "--env", "live", "--json"));
    const revoked = json(dv("key", "revoke", k.keyId as string, "--json"));
    expect(revoked.revokedAt).toMatch(/^\d{4}-/);
    const again = dv("key", "revoke", k.keyId as string);
    expect(again.code).toBe(1);
    expect(again.err).toContain("already revoked");
    const rows = audit();
    expect(rows.every((r) => r.actor!.startsWith("os:alice (uid "))).toBe(true);
    const setRow = rows.find((r) => r.action === "organisation.set")!;
    expect(JSON.parse(setRow.before!)).toMatchObject({ apiAccess: false, validated: false });
    expect(JSON.parse(setRow.after!)).toMatchObject({ apiAccess: true, validated: true });
    expect(rows.filter((r) => r.action === "api_key.revoke").map((r) => r.subject_id)).toEqual([k.keyId as string]);
    expect(rows.filter((r) => r.action === "organisation.create")).toHaveLength(2);
  });

  test("each organisation gets its own ML-DSA-65 system key, sealed at rest", () => {
    const db = new Database(join(data, "docverify.db"), { readonly: true });
    try {
      const rows = db.query("SELECT k.algorithm AS alg, k.public_key AS pk, k.sealed_seed AS sealed, k.purpose AS purpose, o.id AS id FROM organisations o JOIN signing_keys k ON k.fingerprint = o.system_key_fingerprint").all() as { alg: string; pk: Uint8Array; sealed: Uint8Array; purpose: string; id: string }[];
      expect(rows.length).toBeGreaterThanOrEqual(2);
      for (const r of rows) {
        expect(r.alg).toBe("ML-DSA-65");
        expect(r.purpose).toBe(`org:${r.id}`);
        expect(r.pk.byteLength).toBe(1952);
        expect(Buffer.from(r.sealed.subarray(0, 4)).toString()).toBe("DVSS");
      }
      expect(Buffer.from(rows[0]!.pk).equals(Buffer.from(rows[1]!.pk))).toBe(false);
    } finally {
      db.close();
    }
  });

  test("the audit trail is append-only", () => {
    const db = new Database(join(data, "docverify.db"));
    try {
      expect(() => db.run("UPDATE audit_log SET actor = 'mallory'")).toThrow("append-only");
      expect(() => db.run("DELETE FROM audit_log")).toThrow("append-only");
    } finally {
      db.close();
    }
  });
});

describe("org set --domain", () => {
  let orgId = "";
  beforeAll(() => {
    orgId = json(dv("org", "create", "--name", "Domain Ltd", "--json")).id as string;
  });
  /** The organisation's domain and announcement generation as stored. */
  function stored(): { domain: string | null; announcement_generation: number } {
    const db = new Database(join(data, "docverify.db"), { readonly: true });
    try {
      return db.query("SELECT domain, announcement_generation FROM organisations WHERE id = ?").get(orgId) as { domain: string | null; announcement_generation: number };
    } finally {
      db.close();
    }
  }
  const lastSet = () => audit().filter((r) => r.action === "organisation.set" && r.subject_id === orgId).at(-1)!;

  const refused: [value: string, reason: RegExp][] = [
    ["", /must not be empty/],
    ["https://example.org", /without a scheme/],
    ["HTTP://example.org", /without a scheme/],
    ["example.org/docverify", /without a path/],
    ["example.org:443", /without a port/],
    ["192.0.2.1", /an IP address is not a domain/],
    ["[2001:db8::1]", /an IP address is not a domain/],
    ["2001:db8::1", /an IP address is not a domain/],
    ["example.org.", /without the trailing dot/],
    ["localhost", /at least two labels/],
    ["-acme.example", /must not start or end with a hyphen/],
    ["acme-.example", /must not start or end with a hyphen/],
    ["ac_me.example", /only letters, digits and hyphens/],
    ["acme..example", /empty label/],
    [".acme.example", /empty label/],
    ["acme.example.123", /last label .* must start with a letter/],
    ["ab--cd.example", /only xn-- labels/],
    ["bücher.example", /xn-- form \(xn--bcher-kva\.example\)/],
    ["xn--zz.example", /xn-- label does not decode/],
    ["acme example.org", /must not contain spaces/],
    [`${"a".repeat(64)}.example`, /longer than 63 characters/],
    [`${`${"a".repeat(60)}.`.repeat(5)}example`, /at most 253 characters/],
  ];
  for (const [value, reason] of refused) {
    test(`refuses --domain ${JSON.stringify(value.length > 40 ? value.slice(0, 40) + "…" : value)}: exit 2, the flag and the reason on stderr, nothing changed`, () => {
      const before = { audit: audit().length, row: stored() };
      // In one argument, as a value starting with a hyphen must be given.
      const r = dv("org", "set", orgId, `--domain=${value}`);
      expect(r.code).toBe(2);
      expect(r.out).toBe("");
      expect(r.err).toContain(`--domain ${JSON.stringify(value)}`);
      expect(r.err).toMatch(reason);
      expect(r.err).toContain("Run docverify org set --help for its usage.");
      expect(audit().length).toBe(before.audit);
      expect(stored()).toEqual(before.row);
    });
  }

  test("refuses --domain without a value, and a refused --domain beside a good flag changes neither", () => {
    const before = { audit: audit().length, row: stored() };
    const bare = dv("org", "set", orgId, "--domain");
    expect(bare.code).toBe(2);
    expect(bare.err).toContain("--domain");
    const mixed = dv("org", "set", orgId, "--validated", "on", "--domain", "https://example.org");
    expect(mixed.code).toBe(2);
    expect(audit().length).toBe(before.audit);
    expect(stored()).toEqual(before.row);
    expect(JSON.parse(dv("org", "list", "--json").out).find((o: { id: string }) => o.id === orgId)).toMatchObject({ validated: false, domain: null });
  });

  test("a good domain on an unknown organisation: exit 1, nothing changed", () => {
    const before = audit().length;
    const r = dv("org", "set", "no-such-org", "--domain", "example.org");
    expect(r.code).toBe(1);
    expect(r.err).toContain("No organisation no-such-org");
    expect(audit().length).toBe(before);
  });

  test("set (lowercased), changed and cleared: each audited with before and after, each raising the announcement generation once; the same domain again raises nothing", () => {
    expect(stored()).toEqual({ domain: null, announcement_generation: 0 });
    const set = json(dv("org", "set", orgId, "--domain", "Acme.Example.ORG", "--json"));
    expect(set).toMatchObject({ id: orgId, name: "Domain Ltd", domain: "acme.example.org" });
    expect(stored()).toEqual({ domain: "acme.example.org", announcement_generation: 1 });
    expect(JSON.parse(lastSet().before!)).toMatchObject({ domain: null });
    expect(JSON.parse(lastSet().after!)).toMatchObject({ domain: "acme.example.org" });
    expect(lastSet().actor).toMatch(/^os:alice \(uid /);

    // The same domain, with another flag: the flag changes, the announcement does not.
    json(dv("org", "set", orgId, "--domain", "acme.example.org", "--validated", "on", "--json"));
    expect(stored()).toEqual({ domain: "acme.example.org", announcement_generation: 1 });
    expect(JSON.parse(lastSet().after!)).toMatchObject({ domain: "acme.example.org", validated: true });

    const changed = dv("org", "set", orgId, "--domain", "xn--bcher-kva.example");
    expect(changed.code).toBe(0);
    expect(changed.out).toContain("domain=xn--bcher-kva.example");
    expect(stored()).toEqual({ domain: "xn--bcher-kva.example", announcement_generation: 2 });
    expect(JSON.parse(lastSet().before!)).toMatchObject({ domain: "acme.example.org" });

    const cleared = json(dv("org", "set", orgId, "--domain", "none", "--json"));
    expect(cleared.domain).toBeNull();
    expect(stored()).toEqual({ domain: null, announcement_generation: 3 });
    expect(JSON.parse(lastSet().before!)).toMatchObject({ domain: "xn--bcher-kva.example" });
    expect(JSON.parse(lastSet().after!)).toMatchObject({ domain: null });
  });

  test("org list shows the domain: domain=… in text (- when none), domain in --json", () => {
    dv("org", "set", orgId, "--domain", "list.example");
    const text = dv("org", "list").out.split("\n").find((l) => l.startsWith(orgId))!;
    expect(text).toContain("domain=list.example  topic=-");
    expect(dv("org", "list").out.split("\n").find((l) => l.includes('"Beta GmbH"'))).toContain("domain=-  topic=-");
    const list = JSON.parse(dv("org", "list", "--json").out) as { id: string; domain: string | null }[];
    expect(list.find((o) => o.id === orgId)!.domain).toBe("list.example");
    expect(list.filter((o) => o.id !== orgId).every((o) => o.domain === null)).toBe(true);
  });
});

describe("trust export", () => {
  const folder = tempDir();
  const publicEnv = {
    DOCVERIFY_LEDGER_NETWORK: "testnet",
    DOCVERIFY_LEDGER_OPERATOR_ID: "0.0.1234",
    DOCVERIFY_LEDGER_OPERATOR_KEY_FILE: join(folder, "never-read"),
    DOCVERIFY_PUBLIC_URL: "https://verify.example.org/",
  };
  function run(env: Record<string, string>, ...args: string[]) {
    // The data folder by its setting: `trust` alone has nothing to put a flag after.
    const p = Bun.spawnSync([BUN, join(ROOT, "src", "main.ts"), ...args], { env: { PATH: process.env.PATH, USER: "alice", DOCVERIFY_DATA_DIR: folder, ...env } });
    return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
  }
  const ids: Record<"domain" | "plain" | "noTopic", string> = { domain: "", plain: "", noTopic: "" };
  /** The organisations' system keys and the topics given them (as the running service would). */
  const keys: Record<string, string> = {};
  beforeAll(() => {
    const make = (name: string) => (JSON.parse(run(publicEnv, "org", "create", "--name", name, "--json").out) as { id: string }).id;
    ids.domain = make("Zeta \"Trust\" Ltd");
    ids.plain = make("Alpha Trust Ltd");
    ids.noTopic = make("Aaa No Topic Ltd");
    expect(run(publicEnv, "org", "set", ids.domain, "--domain", "zeta.example").code).toBe(0);
    const db = new Database(join(folder, "docverify.db"));
    try {
      db.query("UPDATE organisations SET topic_id = ? WHERE id = ?").run("0.0.7001", ids.domain);
      db.query("UPDATE organisations SET topic_id = ? WHERE id = ?").run("0.0.7002", ids.plain);
      for (const row of db.query("SELECT id, system_key_fingerprint AS fp FROM organisations").all() as { id: string; fp: Uint8Array }[]) keys[row.id] = Buffer.from(row.fp).toString("hex");
    } finally {
      db.close();
    }
  });

  const entry = (id: string, name: string, domain: string | null, topicId: string) => ({
    orgId: id,
    name,
    domain,
    network: "testnet",
    topicId,
    // Each key with its window (docs/receipts.md §7): none anchored on these topics yet.
    keys: [{ algorithm: "ML-DSA-65", fingerprint: keys[id], announcedAt: null, sequenceNumber: null }],
  });

  test("one trust file on stdout, indented by two, a trailing newline: the organisations with a topic, by name, their keys, and this network's mirror nodes", () => {
    const before = audit().length;
    const started = Date.now();
    const r = run(publicEnv, "trust", "export");
    expect(r.code).toBe(0);
    expect(r.err).toBe("");
    const file = JSON.parse(r.out) as Record<string, unknown>;
    expect(Object.keys(file)).toEqual(["v", "service", "exportedAt", "networks", "organisations"]);
    expect(file.v).toBe(1);
    expect(file.service).toBe("https://verify.example.org");
    expect(file.exportedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const at = Date.parse(file.exportedAt as string);
    expect(at).toBeGreaterThanOrEqual(started - 1);
    expect(at).toBeLessThanOrEqual(Date.now());
    // The mirror node a receipt suggests on this network (no DOCVERIFY_MIRROR_NODES): the public one.
    expect(file.networks).toEqual({ testnet: { mirrors: ["https://testnet.mirrornode.hedera.com"] } });
    expect(file.organisations).toEqual([entry(ids.plain, "Alpha Trust Ltd", null, "0.0.7002"), entry(ids.domain, 'Zeta "Trust" Ltd', "zeta.example", "0.0.7001")]);
    for (const o of file.organisations as Record<string, unknown>[]) {
      expect(Object.keys(o)).toEqual(["orgId", "name", "domain", "network", "topicId", "keys"]);
      expect((o.keys as { fingerprint: string }[])[0]!.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(r.out).toBe(JSON.stringify(file, null, 2) + "\n");
    // The receipt verifier's own parser (strict: an unknown field is refused) takes it as written.
    expect(parseTrustFile(r.out) as unknown).toEqual({
      v: 1,
      service: "https://verify.example.org",
      exportedAt: file.exportedAt,
      networks: { testnet: ["https://testnet.mirrornode.hedera.com"] },
      organisations: (file.organisations as { keys: object[] }[]).map((o) => ({ ...o, keys: o.keys.map((k) => ({ ...k, replacedAt: null, replacedBySequenceNumber: null, compromisedSince: null })) })),
    });
    expect(audit().length).toBe(before);
  });

  test("--org ORG: that organisation alone; --json means the same; the mirror nodes of DOCVERIFY_MIRROR_NODES when set", () => {
    const env = { ...publicEnv, DOCVERIFY_MIRROR_NODES: "https://mirror-a.example.net,https://mirror-b.example.net/" };
    const one = run(env, "trust", "export", "--org", ids.domain);
    expect(one.code).toBe(0);
    const file = JSON.parse(one.out) as { networks: unknown; organisations: unknown[]; exportedAt: string };
    expect(file.organisations).toEqual([entry(ids.domain, 'Zeta "Trust" Ltd', "zeta.example", "0.0.7001")]);
    expect(file.networks).toEqual({ testnet: { mirrors: ["https://mirror-a.example.net", "https://mirror-b.example.net"] } });
    const json = run(env, "trust", "export", "--org", ids.domain, "--json");
    expect(json.code).toBe(0);
    expect({ ...JSON.parse(json.out), exportedAt: null }).toEqual({ ...file, exportedAt: null });
    expect(parseTrustFile(one.out).organisations).toHaveLength(1);
  });

  const refusals: [string, string[], number, RegExp][] = [
    ["an organisation without a topic", ["trust", "export", "--org", "NOTOPIC"], 1, /has no ledger topic yet/],
    ["an unknown organisation", ["trust", "export", "--org", "no-such-org"], 1, /No organisation no-such-org/],
    ["trust without a subcommand", ["trust"], 2, /trust needs a subcommand: export/],
    ["another subcommand", ["trust", "import"], 2, /unknown trust subcommand "import"/],
    ["an unknown flag", ["trust", "export", "--all"], 2, /--all/],
  ];
  for (const [name, args, code, message] of refusals) {
    test(`refuses ${name}: exit ${code}, on stderr, nothing on stdout`, () => {
      const r = run(publicEnv, ...args.map((a) => (a === "NOTOPIC" ? ids.noTopic : a)));
      expect(r.code).toBe(code);
      expect(r.out).toBe("");
      expect(r.err).toMatch(message);
    });
  }

  test("the embedded local ledger, never started here: no mirror node to name, said on stderr, as is a public URL left to its default", () => {
    const r = run({}, "trust", "export");
    expect(r.code).toBe(0);
    const file = JSON.parse(r.out) as { service: string; networks: unknown; organisations: { network: string }[] };
    expect(file.networks).toEqual({ local: { mirrors: [] } });
    expect(file.service).toBe("http://127.0.0.1:8080");
    expect(file.organisations.map((o) => o.network)).toEqual(["local", "local"]);
    expect(r.err).toContain("No mirror node is known yet");
    expect(r.err).toContain("DOCVERIFY_PUBLIC_URL is not set");
    expect(parseTrustFile(r.out).networks).toEqual({ local: [] });
  });
});

describe("who the audit trail names", () => {
  const folder = tempDir();
  let made = 0;
  /** The actor of the change `org create` makes, run with exactly `env` besides PATH. */
  function actorOf(env: Record<string, string>): string {
    const p = Bun.spawnSync([BUN, join(ROOT, "src", "main.ts"), "org", "create", "--name", `Nameless ${++made} Ltd`, "--data", folder], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env } });
    expect(p.exitCode).toBe(0);
    const db = new Database(join(folder, "docverify.db"), { readonly: true });
    try {
      return (db.query("SELECT actor FROM audit_log ORDER BY id DESC LIMIT 1").get() as { actor: string }).actor;
    } finally {
      db.close();
    }
  }

  test("without USER or LOGNAME (a container, a unit without User=): the uid's user name from the passwd database", () => {
    // The name `id` finds for this uid, in the same database.
    const name = Bun.spawnSync(["id", "-un"]).stdout.toString().trim();
    expect(name).not.toBe("");
    expect(actorOf({})).toBe(`os:${name} (uid ${process.geteuid!()})`);
  });

  test("the login name when the environment gives one: SUDO_USER (the invoking user under sudo), else USER, else LOGNAME", () => {
    const uid = process.geteuid!();
    expect(actorOf({ LOGNAME: "lena" })).toBe(`os:lena (uid ${uid})`);
    expect(actorOf({ USER: "ursula", LOGNAME: "lena" })).toBe(`os:ursula (uid ${uid})`);
    expect(actorOf({ SUDO_USER: "sam", USER: "root" })).toBe(`os:sam (uid ${uid})`);
  });

  test("a uid the passwd database does not know: os:uid N, never a made-up name", async () => {
    const { osActor } = await import("../src/admin/actor.ts");
    expect(osActor({}, () => null)).toBe(`os:uid ${process.geteuid!()}`);
    expect(osActor({ USER: "" }, () => null)).toBe(`os:uid ${process.geteuid!()}`);
  });
});

describe("organisation names are unique (compared ignoring case, width and Unicode form)", () => {
  const folder = tempDir();
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", USER: "alice" };
  const main = join(ROOT, "src", "main.ts");
  const run = (...args: string[]) => {
    const p = Bun.spawnSync([BUN, main, ...args, "--data", folder], { env });
    return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
  };
  const runAsync = async (...args: string[]) => {
    const p = Bun.spawn([BUN, main, ...args, "--data", folder], { env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    return { code, out, err };
  };
  /** What a refused command must leave as it was: the organisations, their keys and the audit trail, as stored. */
  function state() {
    const db = new Database(join(folder, "docverify.db"), { readonly: true });
    try {
      return {
        organisations: db.query("SELECT * FROM organisations ORDER BY id").all(),
        keys: db.query("SELECT count(*) AS n FROM signing_keys").get(),
        audit: db.query("SELECT id FROM audit_log ORDER BY id").all(),
      };
    } finally {
      db.close();
    }
  }
  let cafe = "";
  beforeAll(() => {
    cafe = run("org", "create", "--name", "Café Ltd").out.trim();
  });

  const same: [what: string, name: string][] = [
    ["the same name", "Café Ltd"],
    ["another case", "CAFÉ LTD"],
    ["another Unicode form (e and a combining acute accent)", "Cafe\u0301 Ltd"],
    ["full-width letters", "Ｃａｆé Ｌｔｄ"],
  ];
  for (const [what, name] of same) {
    test(`org create --name with ${what}: exit 1, the organisation holding the name on stderr, nothing written`, () => {
      expect(cafe).toMatch(/^[0-9a-f-]{36}$/);
      const before = state();
      const r = run("org", "create", "--name", name, "--addon");
      expect(r.code).toBe(1);
      expect(r.out).toBe("");
      expect(r.err.startsWith(`docverify: an organisation named "Café Ltd" already exists (${cafe})`)).toBe(true);
      if (name !== "Café Ltd") expect(r.err).toContain("names are compared ignoring case, width and Unicode form");
      expect(state()).toEqual(before);
    });
  }

  test("three org create processes at once with one name: exactly one creates it, the others exit 1 naming it", async () => {
    const results = await Promise.all(["Race Ltd", "RACE LTD", "Ｒａｃｅ Ｌｔｄ"].map((name) => runAsync("org", "create", "--name", name, "--json")));
    const won = results.filter((r) => r.code === 0);
    expect(won).toHaveLength(1);
    const id = (JSON.parse(won[0]!.out) as { id: string }).id;
    for (const r of results.filter((r) => r.code !== 0)) {
      expect(r.code).toBe(1);
      expect(r.out).toBe("");
      expect(r.err).toMatch(new RegExp(`^docverify: an organisation named "(Race Ltd|RACE LTD|Ｒａｃｅ Ｌｔｄ)" already exists \\(${id}\\)`));
    }
    const racers = (JSON.parse(run("org", "list", "--json").out) as { id: string; name: string }[]).filter((o) => o.name.normalize("NFKC").toLowerCase() === "race ltd");
    expect(racers.map((o) => o.id)).toEqual([id]);
  });

  test("org set --name renames, audited with the name before and after, raising the announcement generation once; a name another holds: exit 1 naming it, nothing changed", () => {
    const id = run("org", "create", "--name", "Old Name Ltd").out.trim();
    const generation = () => {
      const db = new Database(join(folder, "docverify.db"), { readonly: true });
      try {
        return (db.query("SELECT announcement_generation AS g FROM organisations WHERE id = ?").get(id) as { g: number }).g;
      } finally {
        db.close();
      }
    };
    const before = state();
    const taken = run("org", "set", id, "--name", "café ltd", "--validated", "on");
    expect(taken.code).toBe(1);
    expect(taken.err.startsWith(`docverify: an organisation named "Café Ltd" already exists (${cafe})`)).toBe(true);
    expect(state()).toEqual(before);
    const bare = run("org", "set", id, "--name");
    expect(bare.code).toBe(2);
    expect(bare.err).toContain("--name");
    expect(state()).toEqual(before);

    const renamed = run("org", "set", id, "--name", "New Name Ltd", "--json");
    expect(renamed.code).toBe(0);
    expect(JSON.parse(renamed.out)).toMatchObject({ id, name: "New Name Ltd" });
    expect(generation()).toBe(1);
    const db = new Database(join(folder, "docverify.db"), { readonly: true });
    const last = db.query("SELECT actor, action, subject_id, before, after FROM audit_log ORDER BY id DESC LIMIT 1").get() as Record<string, string>;
    db.close();
    expect(last).toMatchObject({ action: "organisation.set", subject_id: id });
    expect(last.actor).toMatch(/^os:alice \(uid /);
    expect([JSON.parse(last.before!).name, JSON.parse(last.after!).name]).toEqual(["Old Name Ltd", "New Name Ltd"]);
    // The same name again changes nothing that is announced; the old name is free again.
    expect(run("org", "set", id, "--name", "New Name Ltd").code).toBe(0);
    expect(generation()).toBe(1);
    expect(run("org", "create", "--name", "OLD NAME LTD").code).toBe(0);
  });
});

describe("a data folder of the release before unique names, holding one name twice", () => {
  test(
    "serve starts on it and warns, naming both; both are listed; the name is refused to a third; once one is renamed, serve starts without the warning",
    async () => {
      const folder = tempDir();
      // The database as that release left it (its migrations), with "Twin Ltd" twice.
      const old = databaseBefore("0012");
      const fx = createRecordsFixture({ db: old });
      const first = organisationAsBefore(fx, "Twin Ltd");
      const second = organisationAsBefore(fx, "Twin Ltd");
      old.$client.query("VACUUM INTO ?").run(join(folder, "docverify.db"));
      old.$client.close();
      const env = { DOCVERIFY_DATA_DIR: folder, DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: "300" };
      const warnings = (svc: ServiceProcess) => svc.logLines().filter((l) => l.level === "warn" && String(l.msg).startsWith("organisations share a name"));

      let svc = await startService({ env });
      expect(warnings(svc)).toEqual([
        expect.objectContaining({
          name: "Twin Ltd",
          organisations: [
            { id: first.id, name: "Twin Ltd" },
            { id: second.id, name: "Twin Ltd" },
          ],
        }),
      ]);
      expect(String(warnings(svc)[0]!.msg)).toContain("docverify org set ORG --name NAME");
      const cli = (...args: string[]) => cliAsync(args, { DOCVERIFY_DATA_DIR: folder });
      const listed = JSON.parse((await cli("org", "list", "--json")).stdout) as { id: string; name: string }[];
      expect(listed.map((o) => [o.id, o.name])).toEqual([
        [first.id, "Twin Ltd"],
        [second.id, "Twin Ltd"],
      ]);
      const third = await cli("org", "create", "--name", "TWIN LTD");
      expect(third.code).toBe(1);
      expect(third.stderr).toContain(`an organisation named "Twin Ltd" already exists (${first.id})`);
      const renamed = await cli("org", "set", second.id, "--name", "Twin Ltd (North)");
      expect(renamed.code, renamed.stderr).toBe(0);
      expect(await svc.stop()).toBe(0);

      svc = await startService({ env });
      expect(warnings(svc)).toEqual([]);
      expect(await svc.stop()).toBe(0);
    },
    60_000,
  );
});
