/**
 * A command that only reads (`org list`, `key list`, `person list`, `status`, `trust export`,
 * `backup`) creates nothing, run as a newcomer runs it: in a folder without a data folder it says
 * so and exits 1, and no folder, database or master key appears; it never makes a master key for
 * a database that has none. What changes something (`org create`) still makes the data folder.
 * On PostgreSQL the same commands read the shared database and make neither a data folder nor a
 * master key.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUN, ROOT, cleanup, tempDir } from "../support/env.ts";
import { sharedPostgres, type Postgres } from "../support/postgres.ts";

afterAll(cleanup);

/** `docverify ARGS` in folder `cwd`, with only PATH, HOME, USER and the given settings. */
function run(args: string[], cwd: string, env: Record<string, string> = {}) {
  const p = Bun.spawnSync([BUN, join(ROOT, "src", "main.ts"), ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", USER: "tester", ...env },
    stdin: "ignore",
  });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

/** A reader's arguments, its `--org` the organisation given (any id where there is none). */
const withOrg = (args: readonly string[], org = "0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d") => args.map((a) => (a === "ORG" ? org : a));

const missing = (dir: string) => `docverify: no data folder at ${dir} (DOCVERIFY_DATA_DIR or --data); docverify serve or org create makes one\n`;

const READERS: readonly (readonly [name: string, args: readonly string[]])[] = [
  ["org list", ["org", "list"]],
  ["org list --json", ["org", "list", "--json"]],
  ["key list", ["key", "list"]],
  ["key list --org", ["key", "list", "--org", "ORG"]],
  ["person list", ["person", "list"]],
  ["status", ["status"]],
  ["status --json", ["status", "--json"]],
  ["trust export", ["trust", "export"]],
  ["backup", ["backup", "copy.db"]],
];

describe("a command that only reads, where there is no data folder", () => {
  for (const [name, reader] of READERS) {
    test(`${name}: says so plainly, exit 1, and creates no folder, database or master key`, () => {
      const args = withOrg(reader);
      const cwd = tempDir();
      // The default, ./data of the folder it runs in.
      expect(run([...args], cwd)).toEqual({ code: 1, out: "", err: missing(join(cwd, "data")) });
      // Named by --data or DOCVERIFY_DATA_DIR, further down a path that does not exist either.
      const dir = join(cwd, "srv", "docverify");
      expect(run([...args, "--data", dir], cwd)).toEqual({ code: 1, out: "", err: missing(dir) });
      expect(run([...args], cwd, { DOCVERIFY_DATA_DIR: dir })).toEqual({ code: 1, out: "", err: missing(dir) });
      expect(readdirSync(cwd)).toEqual([]);
      // A folder that exists without a database (a mistyped path): named, and left empty.
      const empty = tempDir();
      expect(run([...args, "--data", empty], cwd)).toEqual({
        code: 1,
        out: "",
        err: `docverify: no data folder at ${empty}: it holds no docverify.db (DOCVERIFY_DATA_DIR or --data); docverify serve or org create makes one\n`,
      });
      expect(readdirSync(empty)).toEqual([]);
      expect(readdirSync(cwd)).toEqual([]);
    });
  }
});

describe("what changes something still makes the data folder", () => {
  test("org create where there is none makes ./data with its database and master key; the commands that read then answer", () => {
    const cwd = tempDir();
    const created = run(["org", "create", "--name", "Acme Ltd"], cwd);
    expect(created.code).toBe(0);
    const org = created.out.trim();
    expect(readdirSync(join(cwd, "data"))).toEqual(expect.arrayContaining(["docverify.db", "master.key"]));
    const list = run(["org", "list", "--json"], cwd);
    expect(list.code).toBe(0);
    expect((JSON.parse(list.out) as { name: string }[]).map((o) => o.name)).toEqual(["Acme Ltd"]);
    for (const [name, args] of READERS) expect({ name, code: run(withOrg(args, org), cwd).code }).toEqual({ name, code: 0 });
  });

  test("a database that has no master key gets none from a command that reads (the key store stays sealed, said on stderr); org create then makes it", () => {
    const cwd = tempDir();
    const data = join(cwd, "data");
    // Made while DOCVERIFY_MASTER_KEY_FILE named a file that is not there: the database exists,
    // sealed, and remembers no master key.
    const sealed = run(["org", "create", "--name", "Acme Ltd"], cwd, { DOCVERIFY_MASTER_KEY_FILE: join(cwd, "absent.key") });
    expect(sealed.code).toBe(1);
    expect(existsSync(join(data, "docverify.db"))).toBe(true);
    expect(existsSync(join(data, "master.key"))).toBe(false);
    // (No organisation to list keys of: `key list --org` has nothing to read.)
    for (const [name, args] of READERS.filter(([n]) => n !== "key list --org")) {
      const r = run(name === "backup" ? ["backup", join(tempDir(), "copy.db")] : [...args], cwd);
      expect({ name, code: r.code }).toEqual({ name, code: 0 });
      if (name !== "backup") expect(r.err).toContain("master key missing");
      expect({ name, created: existsSync(join(data, "master.key")) }).toEqual({ name, created: false });
    }
    expect(run(["org", "create", "--name", "Acme Ltd"], cwd).code).toBe(0);
    expect(existsSync(join(data, "master.key"))).toBe(true);
  });
});

describe("on PostgreSQL", () => {
  let pg: Postgres;
  beforeAll(async () => {
    pg = await sharedPostgres();
  }, 120_000);
  afterAll(async () => {
    await pg?.destroy();
  });

  test("the commands that read answer from the shared database, and make no data folder and no master key", async () => {
    const url = await pg.createDatabase();
    const key = join(tempDir(), "master.key");
    writeFileSync(key, Buffer.alloc(32, 7).toString("hex") + "\n", { mode: 0o600 });
    const created = run(["org", "create", "--name", "Acme Ltd", "--data", tempDir()], tempDir(), { DOCVERIFY_DATABASE_URL: url, DOCVERIFY_MASTER_KEY_FILE: key });
    expect(created.code).toBe(0);

    // Another node, with no data folder yet and no master key set: its default is DATA_DIR/master.key.
    const cwd = tempDir();
    for (const [name, args] of READERS.filter(([n]) => n !== "backup")) {
      const r = run(withOrg(args, created.out.trim()), cwd, { DOCVERIFY_DATABASE_URL: url });
      expect({ name, code: r.code }).toEqual({ name, code: 0 });
      if (name === "org list") expect(r.out).toContain('"Acme Ltd"');
    }
    expect(readdirSync(cwd)).toEqual([]);
  }, 60_000);
});
