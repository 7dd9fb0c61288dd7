/**
 * `docverify sandbox` as a user runs it: one command prints a URL and a live key that create and
 * revoke, and stopping it leaves nothing behind (unless --keep). Each run gets a TMPDIR of its
 * own, so "nothing left behind" is an empty folder, and the operator's settings in its
 * environment (a data folder, PostgreSQL, mainnet) are shown to be ignored.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { BUN, ROOT, cleanup, onCleanup, spawnCollecting, tempDir } from "../support/env.ts";
import { builtBinary } from "../support/build.ts";
import { waitFor } from "../support/wait.ts";

afterAll(cleanup);

const MAIN = join(ROOT, "src", "main.ts");

interface Announcement {
  url: string;
  apiKey: string;
  scopes: string[];
  organisationId: string;
  organisationName: string;
  dataDir: string;
  keep: boolean;
  ledgerNetwork: string;
  notice: string;
  env: { DOCVERIFY_URL: string; DOCVERIFY_API_KEY: string };
}

interface Sandbox {
  readonly proc: Subprocess<"ignore", "pipe", "pipe">;
  readonly tmp: string;
  stdout(): string;
  stderr(): string;
}

/** Starts `docverify sandbox ARGS` with TMPDIR a folder of its own; nothing is awaited. */
function spawnSandbox(args: string[], options: { cmd?: string[]; env?: Record<string, string> } = {}): Sandbox {
  const tmp = tempDir("docverify-sandbox-tmp-");
  const { proc, stdout, stderr } = spawnCollecting([...(options.cmd ?? [BUN, MAIN]), "sandbox", ...args], { cwd: tempDir(), env: { TMPDIR: tmp, ...options.env } });
  onCleanup(async () => {
    proc.kill("SIGKILL");
    await proc.exited;
  });
  return { proc, tmp, stdout, stderr };
}

/** The --json announcement, once the sandbox has printed it. */
async function announced(sandbox: Sandbox): Promise<Announcement> {
  const line = await waitFor(
    "the sandbox's announcement on stdout",
    () => {
      if (sandbox.proc.exitCode !== null) throw new Error(`sandbox exited with ${sandbox.proc.exitCode}:\n${sandbox.stderr()}`);
      const out = sandbox.stdout();
      return out.endsWith("\n") ? out : undefined;
    },
    45_000,
    20,
  );
  return JSON.parse(line) as Announcement;
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}`, "content-type": "application/json" });
const freshHash = () => `sha256:${new Bun.CryptoHasher("sha256").update(crypto.randomUUID()).digest("hex")}`;

describe("docverify sandbox", () => {
  test("--json: one document; its URL serves, its key creates a record that reaches verified_org; SIGTERM drains, exits 0 and deletes the folder", async () => {
    const elsewhere = tempDir();
    // The operator's settings, all ignored: no data folder of theirs, no PostgreSQL, no public network.
    const sandbox = spawnSandbox(["--json"], { env: { DOCVERIFY_DATA_DIR: elsewhere, DOCVERIFY_DATABASE_URL: "postgres://nobody@127.0.0.1:1/none", DOCVERIFY_LEDGER_NETWORK: "mainnet", DOCVERIFY_PORT: "8080" } });
    const a = await announced(sandbox);
    expect(a.organisationName).toBe("Sandbox organisation");
    expect(a.apiKey).toStartWith("dv_live_");
    expect(a.scopes).toEqual(expect.arrayContaining(["records:write", "records:revoke"]));
    expect(a.env).toEqual({ DOCVERIFY_URL: a.url, DOCVERIFY_API_KEY: a.apiKey });
    expect(a.ledgerNetwork).toBe("local");
    expect(a.notice).toContain("nothing it anchors is public");
    expect(a.notice).toContain("deleted when it stops");
    expect(a.keep).toBe(false);
    expect(a.dataDir.startsWith(sandbox.tmp + "/")).toBe(true);
    expect(existsSync(a.dataDir)).toBe(true);
    expect(readdirSync(elsewhere)).toEqual([]);
    expect(new URL(a.url).port).not.toBe("8080"); // a free port by default

    expect((await fetch(`${a.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${a.url}/readyz`)).status).toBe(200);
    const hash = freshHash();
    // The sandbox waits for the organisation's topic before it announces: the first create is a 201.
    const created = await fetch(`${a.url}/v1/records`, { method: "POST", headers: bearer(a.apiKey), body: JSON.stringify({ originalDocHash: hash }) });
    expect(created.status).toBe(201);
    const record = (await created.json()) as { recordId: string };
    await waitFor(
      "the record to verify as verified_org",
      async () => {
        const v = await fetch(`${a.url}/v1/verifications`, { method: "POST", headers: bearer(a.apiKey), body: JSON.stringify({ originalDocHash: hash }) });
        expect(v.status).toBe(200);
        const body = (await v.json()) as { verdict: string };
        return body.verdict === "verified_org" ? body : undefined;
      },
      30_000,
      250,
    );
    const revoked = await fetch(`${a.url}/v1/records/${record.recordId}/revoke`, { method: "POST", headers: bearer(a.apiKey), body: JSON.stringify({ reason: "SUPERSEDED" }) });
    expect(revoked.status).toBe(200);

    sandbox.proc.kill("SIGTERM");
    expect(await sandbox.proc.exited).toBe(0);
    expect(existsSync(a.dataDir)).toBe(false);
    expect(readdirSync(sandbox.tmp)).toEqual([]);
    // Stdout was the one document; the key is on stdout only, never in the log or the goodbye.
    expect(sandbox.stdout().trimEnd().split("\n")).toHaveLength(1);
    expect(sandbox.stderr()).not.toContain(a.apiKey);
    expect(sandbox.stderr()).toContain(`its data folder ${a.dataDir} is deleted`);
  }, 90_000);

  test("as text: the URL, the key, the organisation, the folder and the export lines; --keep keeps the folder on SIGINT and says where", async () => {
    const sandbox = spawnSandbox(["--keep"]);
    const text = await waitFor("the announcement", () => {
      if (sandbox.proc.exitCode !== null) throw new Error(`sandbox exited with ${sandbox.proc.exitCode}:\n${sandbox.stderr()}`);
      return sandbox.stdout().includes("Ctrl-C") ? sandbox.stdout() : undefined;
    }, 45_000, 20);
    const url = /^export DOCVERIFY_URL=(http:\/\/127\.0\.0\.1:\d+)$/m.exec(text)![1]!;
    const key = /^export DOCVERIFY_API_KEY=(dv_live_\S+)$/m.exec(text)![1]!;
    const dir = /^ {2}Data folder +(\S+) +\(kept when the sandbox stops \(--keep\)\)$/m.exec(text)![1]!;
    onCleanup(() => rmSync(dir, { recursive: true, force: true }));
    expect(text).toStartWith("docverify sandbox: a throwaway test environment.\n");
    expect(text).toContain("Its ledger is local to this machine: nothing it anchors is public.");
    expect(text).toMatch(/^ {2}URL +http:\/\/127\.0\.0\.1:\d+$/m);
    expect(text).toContain(`  API key       ${key}  (`);
    expect(text).toMatch(/^ {2}Organisation +[0-9a-f-]{36} +\(Sandbox organisation: API access, add-on, validated\)$/m);
    expect(text).not.toContain("dv_test_");
    expect((await fetch(`${url}/v1/records`, { method: "POST", headers: bearer(key), body: JSON.stringify({ originalDocHash: freshHash() }) })).status).toBe(201);

    sandbox.proc.kill("SIGINT");
    expect(await sandbox.proc.exited).toBe(0);
    expect(existsSync(join(dir, "docverify.db"))).toBe(true);
    expect(sandbox.stderr()).toContain(`its data folder is kept in ${dir}`);
    // The folder it kept opens with the administration commands (as its usage says).
    const status = Bun.spawnSync([BUN, MAIN, "org", "list", "--json", "--data", dir], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp" } });
    expect(status.exitCode, status.stderr.toString()).toBe(0);
    expect(status.stdout.toString()).toContain("Sandbox organisation");
  }, 90_000);

  test("stopped while it starts: exit 0, nothing announced, nothing left behind", async () => {
    const sandbox = spawnSandbox(["--json"]);
    // Its folder exists once its signal handlers are in (they go in before the folder is made).
    await waitFor("the sandbox's folder", () => (readdirSync(sandbox.tmp).length > 0 ? true : sandbox.proc.exitCode !== null ? false : undefined), 15_000, 5);
    sandbox.proc.kill("SIGINT");
    expect(await sandbox.proc.exited).toBe(0);
    expect(sandbox.stdout()).toBe("");
    expect(readdirSync(sandbox.tmp)).toEqual([]);
  }, 60_000);

  test("a port that is taken: a clear error, exit 1, and no folder left behind", async () => {
    const taken = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("someone else") });
    onCleanup(() => taken.stop(true));
    const sandbox = spawnSandbox(["--port", String(taken.port), "--keep"]);
    expect(await sandbox.proc.exited).toBe(1);
    expect(sandbox.stdout()).toBe("");
    expect(sandbox.stderr()).toContain(`docverify: port ${taken.port} on 127.0.0.1 is taken`);
    expect(sandbox.stderr()).toContain("--port 0 for a free one");
    expect(readdirSync(sandbox.tmp)).toEqual([]);
  }, 60_000);

  test("--help prints its usage and creates nothing; a bad flag or port is a usage error (exit 2) with nothing created", async () => {
    const run = async (args: string[], env: Record<string, string> = {}) => {
      const sandbox = spawnSandbox(args, { env });
      const code = await sandbox.proc.exited;
      return { code, stdout: sandbox.stdout(), stderr: sandbox.stderr(), tmp: readdirSync(sandbox.tmp) };
    };
    const [help, h, bogus, port, level] = await Promise.all([
      run(["--help"]),
      run(["--port", "1", "--keep", "-h"]),
      run(["--bogus"]),
      run(["--port", "99999"]),
      run([], { DOCVERIFY_LOG_LEVEL: "loud" }),
    ]);
    const all = Bun.spawnSync([BUN, MAIN, "--help"]).stdout.toString();
    expect(help.code).toBe(0);
    expect(help.stdout).toStartWith("Usage: docverify sandbox [--port N] [--host H] [--keep] [--json]\n");
    expect(help.stdout).toContain("It ignores DOCVERIFY_DATA_DIR, DOCVERIFY_DATABASE_URL, DOCVERIFY_LEDGER_NETWORK");
    expect(help.stdout).toContain("default 0: a free one");
    expect(h.stdout).toBe(help.stdout);
    expect([help.tmp, h.tmp]).toEqual([[], []]);
    expect(all).toContain("docverify sandbox [--port N] [--host H] [--keep]");
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toContain("Run docverify sandbox --help for its usage.");
    expect(bogus.tmp).toEqual([]);
    expect(port.code).toBe(2);
    expect(port.stderr).toContain("--port must be a port number 0 to 65535");
    expect(port.tmp).toEqual([]);
    expect(level.code).toBe(2);
    expect(level.stderr).toContain("DOCVERIFY_LOG_LEVEL");
    expect(level.tmp).toEqual([]);
  }, 60_000);

  test("the compiled executable's sandbox: announced, serving, and gone after SIGTERM", async () => {
    const sandbox = spawnSandbox(["--json"], { cmd: [builtBinary()] });
    const a = await announced(sandbox);
    expect(a.apiKey).toStartWith("dv_live_");
    expect((await fetch(`${a.url}/readyz`)).status).toBe(200);
    const created = await fetch(`${a.url}/v1/records`, { method: "POST", headers: bearer(a.apiKey), body: JSON.stringify({ originalDocHash: freshHash() }) });
    expect(created.status).toBe(201);
    sandbox.proc.kill("SIGTERM");
    expect(await sandbox.proc.exited).toBe(0);
    expect(readdirSync(sandbox.tmp)).toEqual([]);
  }, 120_000);
});
