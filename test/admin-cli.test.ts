/**
 * The administration command line (decisions §8), run as a process the way an operator or a
 * script runs it: answers on stdout (`--json` gives one JSON document), refusals on stderr with
 * a non-zero exit and nothing changed, every change in the audit trail.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { parseKey } from "../src/keys/api-key.ts";
import { BUN, ROOT, cleanup, tempDir } from "./support/env.ts";

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
