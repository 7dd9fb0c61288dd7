/**
 * dist/docverify-client.mjs, the bulk commands for Node.js 20 (scripts/build-client.ts, built by
 * `npm run build` beside the executable): copied alone into an empty folder (no node_modules) and
 * run under `node`, it answers as `bun src/main.ts` does, the same outputs and exit codes, against
 * a live service: authenticate a folder, check an authenticated, a revoked and an unknown file,
 * revoke from the manifest; --help. It uses no Bun API. The compiled `docverify authenticate` too.
 */
import { afterAll, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { productBuild } from "../support/build.ts";
import { BUN, cleanup, ROOT, tempDir } from "../support/env.ts";
import { startServiceWithOrg } from "../support/service-with-org.ts";

afterAll(cleanup);

interface Run {
  exitCode: number;
  stdout: string;
  stderr: string;
}

function run(cmd: string[], cwd: string, env: Record<string, string>): Run {
  const out = Bun.spawnSync({ cmd, cwd, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", ...env }, stdout: "pipe", stderr: "pipe" });
  return { exitCode: out.exitCode, stdout: out.stdout.toString(), stderr: out.stderr.toString() };
}

test("node docverify-client.mjs, alone in a folder, answers as bun src/main.ts does: authenticate, check, revoke, --help", async () => {
  const build = productBuild();
  expect(build.stderr).not.toContain("error");
  expect(build.exitCode).toBe(0);
  const bundle = join(build.dist, "docverify-client.mjs");
  const text = readFileSync(bundle, "utf8");
  expect(text.startsWith("#!/usr/bin/env node\n")).toBe(true);
  expect(text).not.toMatch(/\bBun\.|["']bun:/);
  const alone = tempDir();
  copyFileSync(bundle, join(alone, "docverify-client.mjs"));
  expect(readdirSync(alone)).toEqual(["docverify-client.mjs"]);

  const { svc, key } = await startServiceWithOrg({ revoke: true });
  const env = { DOCVERIFY_API_KEY: key, DOCVERIFY_URL: svc.url };
  const shells = {
    node: (args: string[], cwd: string) => run(["node", join(alone, "docverify-client.mjs"), ...args], cwd, env),
    bun: (args: string[], cwd: string) => run([BUN, join(ROOT, "src", "main.ts"), ...args], cwd, env),
  };
  const results: Record<string, Run[]> = { node: [], bun: [] };
  for (const [name, shell] of Object.entries(shells)) {
    // Each shell its own documents (the same names, its own bytes): both create records.
    const cwd = tempDir();
    mkdirSync(join(cwd, "docs", "sub"), { recursive: true });
    writeFileSync(join(cwd, "docs", "a.pdf"), `${name} a`);
    writeFileSync(join(cwd, "docs", "sub", "b.pdf"), `${name} b`);
    writeFileSync(join(cwd, "docs", "notes.txt"), `${name} notes`);
    writeFileSync(join(cwd, "later.pdf"), `${name} later`);
    writeFileSync(join(cwd, "unknown.pdf"), `${name} unknown`);
    const steps = [
      ["authenticate", "docs", "--include", "*.pdf", "--manifest", "docs.jsonl", "--wait", "--no-progress"],
      ["authenticate", "later.pdf", "--manifest", "later.jsonl", "--wait", "--no-progress"],
      ["revoke", "--manifest", "later.jsonl", "--reason", "SUPERSEDED", "--no-progress"],
      // One at a time: results come as each file finishes, so in order only then.
      ["check", "docs/a.pdf", "later.pdf", "unknown.pdf", "--concurrency", "1", "--no-progress"],
      ["check", "docs/a.pdf", "later.pdf", "unknown.pdf", "--concurrency", "1", "--json"],
      ["authenticate", "--help"],
      ["check", "--bogus"],
    ];
    for (const args of steps) results[name]!.push(normalised(shell(args, cwd)));
  }
  expect(results.node).toEqual(results.bun!);
  // What each step said, once (the same for both).
  expect(results.node!.map((r) => r.exitCode)).toEqual([0, 0, 0, 1, 1, 0, 2]);
  expect(results.node![0]!.stdout).toStartWith("2 files: 2 authenticated (2 new,");
  expect(results.node![2]!.stdout).toStartWith("1 record: 1 revoked now (SUPERSEDED)");
  expect(results.node![3]!.stderr).toBe("docverify check: later.pdf: revoked\ndocverify check: unknown.pdf: no_record\n");
  expect(results.node![4]!.stdout.split("\n").slice(0, 3).map((l) => JSON.parse(l).verdict)).toEqual(["verified_org", "revoked", "no_record"]);
  expect(results.node![5]!.stdout).toStartWith("Usage: docverify authenticate PATH...");

  // The bundle's own overview, for a command line without the appliance's other commands.
  const help = shells.node(["--help"], alone);
  expect(help.exitCode).toBe(0);
  expect(help.stdout).toContain("authenticate PATH...");
  expect(readdirSync(alone)).toEqual(["docverify-client.mjs"]);

  // The compiled executable's authenticate: the same command.
  const cwd = tempDir();
  writeFileSync(join(cwd, "binary.pdf"), "compiled");
  const compiled = run([build.binary, "authenticate", "binary.pdf", "--no-progress"], cwd, env);
  expect(compiled.stderr).toBe("");
  expect(compiled.stdout).toStartWith("1 file: 1 authenticated (1 new,");
  expect(compiled.exitCode).toBe(0);
}, 120_000);

/** What differs between two runs on their own documents: times, hashes, record ids. */
function normalised(r: Run): Run {
  const clean = (s: string) =>
    s
      .replace(/\bin [0-9.]+ s\b/g, "in N s")
      .replace(/"seconds":[0-9.]+/g, '"seconds":N')
      .replace(/sha256:[0-9a-f]{64}/g, "sha256:HASH")
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "RECORD-ID");
  return { exitCode: r.exitCode, stdout: clean(r.stdout), stderr: clean(r.stderr) };
}
