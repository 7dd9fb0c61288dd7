/**
 * DOCVERIFY_DATABASE_URL on the command line, as an operator meets it (docs/storage.md "Two
 * engines"), while only part of the service runs on PostgreSQL:
 * - the `org`, `key`, `person` and `status` commands work on it, from any node, against a real PostgreSQL server;
 * - the rest refuses to start on a half-supported engine, and nothing is written to the embedded
 *   database instead;
 * - `backup` and `restore` point to PostgreSQL's own tools;
 * - the URL's password never appears in what is printed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUN, ROOT, cleanup, tempDir } from "../support/env.ts";
import { waitFor } from "../support/wait.ts";
import { PASSWORD_ROLE, sharedPostgres, type Postgres } from "../support/postgres.ts";
import { paneEnv, Terminal } from "../support/terminal.ts";
import { cli, cliAsync } from "../ops/support.ts";

let pg: Postgres;
beforeAll(async () => {
  pg = await sharedPostgres();
}, 120_000);
afterAll(async () => {
  await pg?.destroy();
  cleanup();
});

/** A master key file, as an operator provides it to every node. */
function masterKeyFile(fill: number): string {
  const file = join(tempDir(), "master.key");
  writeFileSync(file, Buffer.alloc(32, fill).toString("hex") + "\n", { mode: 0o600 });
  return file;
}

const URL_WITH_PASSWORD = "postgres://docverify:hunter2-secret@127.0.0.1:1/docverify";

describe("DOCVERIFY_DATABASE_URL on the command line", () => {
  test("serve with the embedded local ledger is refused: several nodes need one ledger; nothing written", () => {
    const data = tempDir();
    const r = cli(["serve", "--data", data], { DOCVERIFY_DATABASE_URL: URL_WITH_PASSWORD, DOCVERIFY_PORT: "0" });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("DOCVERIFY_LOCAL_LEDGER_URL: with DOCVERIFY_DATABASE_URL and the local ledger network, every node needs the same ledger");
    expect(r.stdout + r.stderr).not.toContain("hunter2");
    expect(existsSync(join(data, "docverify.db"))).toBe(false);
  });

  test("admin (the terminal) is refused with the commands that work instead; nothing written", async () => {
    const data = tempDir();
    // In a terminal, as an administrator runs it (without one it is refused for that first).
    const t = new Terminal([BUN, join(ROOT, "src", "main.ts"), "admin", "--data", data], paneEnv({ DOCVERIFY_DATABASE_URL: URL_WITH_PASSWORD }));
    const screen = await waitFor("the refusal", () => (t.screen().includes("[exit ") ? t.screen() : undefined), 15_000, 50);
    expect(screen.replace(/\n/g, "")).toContain("DOCVERIFY_DATABASE_URL: the administrator's terminal (docverify admin) does not run on PostgreSQL yet; use the org, key, person and status commands");
    expect(screen).toContain("[exit 2]");
    expect(screen).not.toContain("hunter2");
    expect(existsSync(join(data, "docverify.db"))).toBe(false);
  }, 30_000);

  test("backup names pg_dump and pg_basebackup; restore names pg_restore; neither touches the data folder", () => {
    const data = tempDir();
    const target = join(tempDir(), "copy.db");
    const backup = cli(["backup", target, "--data", data], { DOCVERIFY_DATABASE_URL: URL_WITH_PASSWORD });
    expect(backup.code).toBe(1);
    expect(backup.stderr).toMatch(/backup works on the embedded SQLite database.*pg_dump.*pg_basebackup/);
    expect(existsSync(target)).toBe(false);
    const restore = cli(["restore", target, "--data", data], { DOCVERIFY_DATABASE_URL: URL_WITH_PASSWORD });
    expect(restore.code).toBe(1);
    expect(restore.stderr).toMatch(/restore works on the embedded SQLite database.*pg_restore/);
    for (const r of [backup, restore]) expect(r.stdout + r.stderr).not.toContain("hunter2");
    expect(existsSync(join(data, "docverify.db"))).toBe(false);
  });

  test("a malformed URL is refused before anything else, without repeating it", () => {
    const r = cli(["org", "list", "--data", tempDir()], { DOCVERIFY_DATABASE_URL: "mysql://root:hunter2@db/x" });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("DOCVERIFY_DATABASE_URL: must use postgres:// or postgresql://");
    expect(r.stderr).not.toContain("hunter2");
  });
});

describe("org, key and person commands on PostgreSQL, from two nodes", () => {
  test("an organisation, its keys and its persons made on one node are seen and changed on the other; every change audited", async () => {
    const url = await pg.createDatabase();
    const key = masterKeyFile(0x5a);
    const nodeA = { DOCVERIFY_DATABASE_URL: url, DOCVERIFY_MASTER_KEY_FILE: key };
    const nodeB = { DOCVERIFY_DATABASE_URL: url, DOCVERIFY_MASTER_KEY_FILE: key };
    const dataA = tempDir();
    const dataB = tempDir();
    // Both nodes start at once on a new database: one migrates, the other waits for it.
    const [created, listedFirst] = await Promise.all([
      cliAsync(["org", "create", "--name", "Acme Ltd", "--addon", "--api-access", "--json", "--data", dataA], nodeA),
      cliAsync(["org", "list", "--json", "--data", dataB], nodeB),
    ]);
    expect(created.stderr).toBe("");
    expect(created.code).toBe(0);
    expect(listedFirst.code).toBe(0);
    const orgId = (JSON.parse(created.stdout) as { id: string }).id;

    const listed = cli(["org", "list", "--json", "--data", dataB], nodeB);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject([{ id: orgId, name: "Acme Ltd", addon: true, apiAccess: true, validated: false }]);

    const minted = cli(["key", "mint", "--org", orgId, "--env", "live", "--revoke", "--json", "--data", dataB], { ...nodeB, USER: "bob" });
    expect(minted.code).toBe(0);
    const k = JSON.parse(minted.stdout) as { key: string; keyId: string; scopes: string[] };
    expect(k.scopes).toEqual(["verifications:read", "records:write", "records:revoke"]);

    const revoked = cli(["key", "revoke", k.keyId, "--json", "--data", dataA], nodeA);
    expect(revoked.code).toBe(0);
    const again = cli(["key", "revoke", k.keyId, "--data", dataB], nodeB);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already revoked");
    const keys = JSON.parse(cli(["key", "list", "--org", orgId, "--json", "--data", dataB], nodeB).stdout) as { keyId: string; revokedAt: string | null }[];
    expect(keys).toHaveLength(1);
    expect(keys[0]!.revokedAt).not.toBeNull();

    const added = cli(["person", "add", "--org", orgId, "--name", "Ada Lovelace", "--email", "ada@example.org", "--identity", "Passport …4821", "--json", "--data", dataA], nodeA);
    expect(added.code).toBe(0);
    const personId = (JSON.parse(added.stdout) as { id: string }).id;
    const people = JSON.parse(cli(["person", "list", "--org", orgId, "--json", "--data", dataB], nodeB).stdout) as { id: string; name: string }[];
    expect(people.map((p) => [p.id, p.name])).toEqual([[personId, "Ada Lovelace"]]);
    expect(cli(["person", "link", personId, "--json", "--data", dataB], nodeB).code).toBe(0);
    expect(cli(["person", "suspend", personId, "--data", dataA], nodeA).code).toBe(0);

    const set = cli(["org", "set", orgId, "--validated", "on", "--json", "--data", dataB], nodeB);
    expect(set.code).toBe(0);
    expect(JSON.parse(cli(["org", "list", "--json", "--data", dataA], nodeA).stdout)[0].validated).toBe(true);

    const audit = pg.psql("SELECT action || ' ' || actor FROM audit_log ORDER BY id", url.split("/").pop()!).split("\n");
    expect(audit.map((line) => line.replace(/ \(uid \d+\)$/, ""))).toEqual([
      "organisation.create os:tester",
      "api_key.mint os:bob",
      "api_key.revoke os:tester",
      "person.add os:tester",
      "person.link os:tester",
      "person.link os:tester",
      "person.suspend os:tester",
      "organisation.set os:tester",
    ]);
    // The key is stored as a digest: the database never holds it.
    expect(pg.psql("SELECT count(*) FROM api_keys WHERE position(convert_to('" + k.key.split("_").pop()! + "', 'UTF8') in secret_digest) > 0", url.split("/").pop()!)).toBe("0");
    // Nothing went to the embedded database of either node.
    for (const d of [dataA, dataB]) expect(readdirSync(d).filter((f) => f.startsWith("docverify.db"))).toEqual([]);
  }, 60_000);

  test("an unknown organisation and a bad name are refused, and nothing is written", async () => {
    const url = await pg.createDatabase();
    const env = { DOCVERIFY_DATABASE_URL: url, DOCVERIFY_MASTER_KEY_FILE: masterKeyFile(1) };
    expect(cli(["org", "list", "--data", tempDir()], env).code).toBe(0);
    const name = url.split("/").pop()!;
    const set = cli(["org", "set", "nope", "--addon", "on", "--data", tempDir()], env);
    expect(set.code).toBe(1);
    expect(set.stderr).toContain("No organisation nope.");
    const bad = cli(["org", "create", "--name", "   ", "--data", tempDir()], env);
    expect(bad.code).toBe(1);
    expect(pg.psql("SELECT (SELECT count(*) FROM organisations) || ' ' || (SELECT count(*) FROM audit_log) || ' ' || (SELECT count(*) FROM signing_keys)", name)).toBe("0 0 0");
  }, 30_000);

  test("PostgreSQL never creates a master key: without one, org create is refused and says which key every node needs", async () => {
    const url = await pg.createDatabase();
    const data = tempDir();
    const r = cli(["org", "create", "--name", "Keyless", "--data", data], { DOCVERIFY_DATABASE_URL: url });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("every node needs the same master key");
    expect(existsSync(join(data, "master.key"))).toBe(false);
    expect(pg.psql("SELECT count(*) FROM organisations", url.split("/").pop()!)).toBe("0");
  }, 30_000);

  test("a node with another master key than the first node's stays sealed and changes nothing", async () => {
    const url = await pg.createDatabase();
    const first = cli(["org", "create", "--name", "First", "--data", tempDir()], { DOCVERIFY_DATABASE_URL: url, DOCVERIFY_MASTER_KEY_FILE: masterKeyFile(2) });
    expect(first.code).toBe(0);
    const other = cli(["org", "create", "--name", "Second", "--data", tempDir()], { DOCVERIFY_DATABASE_URL: url, DOCVERIFY_MASTER_KEY_FILE: masterKeyFile(3) });
    expect(other.code).toBe(1);
    expect(other.stderr).toContain("master key does not match");
    expect(pg.psql("SELECT string_agg(name, ',') FROM organisations", url.split("/").pop()!)).toBe("First");
  }, 30_000);

  test("the password from a file (DOCVERIFY_DATABASE_PASSWORD_FILE): a wrong one is refused naming the database, never the password; the right one is served", () => {
    pg.psql(`CREATE ROLE ${PASSWORD_ROLE} LOGIN PASSWORD 'correct-horse-battery'`);
    pg.psql(`CREATE DATABASE pw_db OWNER ${PASSWORD_ROLE}`);
    const url = `postgres://${PASSWORD_ROLE}@127.0.0.1:${pg.port}/pw_db`;
    const file = (text: string) => {
      const f = join(tempDir(), "db-password");
      writeFileSync(f, text, { mode: 0o600 });
      return f;
    };
    const env = { DOCVERIFY_DATABASE_URL: url, DOCVERIFY_MASTER_KEY_FILE: masterKeyFile(6) };
    const without = cli(["org", "list", "--data", tempDir()], env);
    expect(without.code).toBe(1);
    expect(without.stderr).toContain(`cannot use the PostgreSQL database ${url}`);
    const wrong = cli(["org", "list", "--data", tempDir()], { ...env, DOCVERIFY_DATABASE_PASSWORD_FILE: file("wrong-horse\n") });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain(`cannot use the PostgreSQL database ${url}`);
    expect(wrong.stdout + wrong.stderr).not.toContain("wrong-horse");
    const empty = cli(["org", "list", "--data", tempDir()], { ...env, DOCVERIFY_DATABASE_PASSWORD_FILE: file("") });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain("DOCVERIFY_DATABASE_PASSWORD_FILE:");
    // As systemd hands it over: the credential database-password, one trailing newline.
    const credentials = tempDir();
    writeFileSync(join(credentials, "database-password"), "correct-horse-battery\n", { mode: 0o600 });
    const right = cli(["org", "create", "--name", "Pw Ltd", "--json", "--data", tempDir()], { ...env, CREDENTIALS_DIRECTORY: credentials });
    expect(right.code, right.stderr).toBe(0);
    expect(right.stdout + right.stderr).not.toContain("correct-horse");
    // A credentials folder without it: the URL's own (none here), so refused by the server as above.
    expect(cli(["org", "list", "--data", tempDir()], { ...env, CREDENTIALS_DIRECTORY: tempDir() }).code).toBe(1);
    // The credential and a password in the URL: given twice, refused before connecting.
    const twice = cli(["org", "list", "--data", tempDir()], { ...env, DOCVERIFY_DATABASE_URL: url.replace("@", ":other-horse@"), CREDENTIALS_DIRECTORY: credentials });
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain("given twice");
    expect(twice.stdout + twice.stderr).not.toContain("horse");
  });

  test("the database being unreachable is a clear error naming it without its password", () => {
    const r = cli(["org", "list", "--data", tempDir()], { DOCVERIFY_DATABASE_URL: `postgres://docverify:hunter2@127.0.0.1:${pg.port + 1}/nothing`, DOCVERIFY_MASTER_KEY_FILE: masterKeyFile(4) });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`docverify: cannot use the PostgreSQL database postgres://docverify:***@127.0.0.1:${pg.port + 1}/nothing:`);
    expect(r.stderr).not.toContain("hunter2");
  }, 30_000);

  test("status shows the database without its password, the nodes with a heartbeat and the anchor loop's leader", async () => {
    const url = await pg.createDatabase();
    const name = url.split("/").pop()!;
    const withPassword = url.replace("postgres://docverify@", "postgres://docverify:not-checked-here@");
    const env = { DOCVERIFY_DATABASE_URL: withPassword, DOCVERIFY_MASTER_KEY_FILE: masterKeyFile(5), DOCVERIFY_NODE_NAME: "dv-admin" };
    const empty = cli(["status", "--json", "--data", tempDir()], env);
    expect(empty.stderr).toBe("");
    expect(empty.code).toBe(0);
    const before = JSON.parse(empty.stdout);
    expect(before).toMatchObject({
      node: "dv-admin",
      database: withPassword.replace("not-checked-here", "***"),
      records: { pending: 0, accepted: 0, anchored: 0, abandoned: 0 },
      queue: { pending: 0, oldestUnfinished: null, lastError: null, organisationsAwaitingTopic: 0 },
      cluster: { nodes: [], leader: null },
    });
    // A node bidding for the lead (as serve will): it appears with its heartbeat, and as leader.
    pg.psql("CREATE TABLE fenced_writes (id bigserial PRIMARY KEY, epoch bigint NOT NULL, node text NOT NULL)", name);
    const node = Bun.spawn([BUN, join(ROOT, "test", "support", "leader-node.ts"), url, "dv-node-1"], { stdout: "ignore", stderr: "ignore" });
    try {
      const status = await waitFor("the node and its lead in status", () => {
        const r = cli(["status", "--json", "--data", tempDir()], env);
        const s = JSON.parse(r.stdout);
        return s.cluster.leader !== null ? s : null;
      });
      expect(status.cluster.nodes).toMatchObject([{ name: "dv-node-1", version: "test", live: true }]);
      expect(status.cluster.leader).toMatchObject({ node: "dv-node-1", epoch: 1, live: true });
      const text = cli(["status", "--data", tempDir()], env);
      expect(text.stdout).toContain("anchor leader dv-node-1, epoch 1");
      expect(text.stdout).toContain("nodes         dv-node-1");
      expect(text.stdout).not.toContain("not-checked-here");
    } finally {
      node.kill("SIGKILL");
    }
  }, 60_000);
});
