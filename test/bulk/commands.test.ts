/**
 * `docverify check` and `docverify revoke` against a live service, and what every bulk command
 * does with bad input: a file it cannot read, a key that may not do the operation, a test key, a
 * service that does not answer. Each refusal before the start is one clear line and exit 3, and
 * nothing is created or written.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { createClient } from "../../packages/client/src/index.ts";
import { BUN, cleanup, ROOT, tempDir } from "../support/env.ts";
import { startServiceWithOrg, type ServiceWithOrg } from "../support/service-with-org.ts";
import { paneEnv, Terminal } from "../support/terminal.ts";
import { waitFor } from "../support/wait.ts";
import { firstRecord, jsonOutput, MAIN, makeFiles, readManifestLines, recordCount, runBulk, spawnBulk } from "./run.ts";

afterAll(cleanup);

let s: ServiceWithOrg;
let env: Record<string, string>;

beforeAll(async () => {
  s = await startServiceWithOrg({ revoke: true, orgName: "Bulk Ltd", env: { DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: "200", DOCVERIFY_RATE_LIMIT_ANONYMOUS: "100000" } });
  env = { DOCVERIFY_URL: s.svc.url };
  await firstRecord(s);
}, 60_000);

/** A working folder holding `key` (the organisation's key, or the one given) and `n` files in docs/. */
function folder(n: number, key = s.key): string {
  const cwd = tempDir("docverify-bulk-");
  writeFileSync(join(cwd, "key"), `${key}\n`);
  makeFiles(join(cwd, "docs"), n, `f${Math.random().toString(36).slice(2, 8)}`);
  return cwd;
}

async function mint(options: { environment?: "live" | "test"; revoke?: boolean; withoutWrite?: boolean } = {}): Promise<string> {
  // Scopes are fixed at minting from the organisation's state: minted while it lacks the add-on, a
  // live key has no records:write even once the organisation has it again.
  if (options.withoutWrite === true) await s.admin.organisations.set(s.org.id, { addon: false }, "test");
  const minted = await s.admin.apiKeys.mint({ orgId: s.org.id, environment: options.environment ?? "live", revoke: options.revoke ?? false }, "test");
  if (options.withoutWrite === true) await s.admin.organisations.set(s.org.id, { addon: true }, "test");
  return minted.key;
}

describe("the progress line, and an interrupted run", () => {
  test("in a terminal: one line redrawn in place with the counters while it runs, then the summary below it", async () => {
    const cwd = folder(20);
    const t = new Terminal(
      [BUN, MAIN, "authenticate", join(cwd, "docs"), "--key-file", join(cwd, "key"), "--manifest", join(cwd, "m.jsonl"), "--wait"],
      paneEnv({ DOCVERIFY_URL: s.svc.url }),
    );
    // --wait: the records take a moment to be final, and the line shows the run waiting for them.
    const running = await t.waitForScreen(/hashed 20\/20 · created 20 · already 0 · verified \d+ · failed 0 · waiting for the ledger: \d+\/20 · (time left unknown|\d+ s left)$/m, 20_000, false);
    expect(running).not.toContain("manifest:");
    const { code } = await t.exited(30_000);
    expect(code).toBe(0);
    const screen = t.history();
    expect(screen).toMatch(/^hashed 20\/20 · created 20 · already 0 · verified 20 · failed 0 · waiting for the ledger: 20\/20 · done\n20 files: 20 authenticated \(20 new, 0 already held by the service, 0 already in the manifest\), 0 failed, in [\d.]+ s\non the ledger: 20 anchored, 20 verified\nmanifest: .*m\.jsonl\n/m);
    // Redrawn in place: one line of it in the whole scrollback.
    expect(screen.match(/hashed /g)?.length).toBe(1);
  }, 40_000);

  test("SIGINT stops the run cleanly: no new request, the manifest closed, the summary, exit 130; the same command then finishes it", async () => {
    const cwd = folder(10);
    const manifest = join(cwd, "docverify-manifest.jsonl");
    // --wait: the run is still waiting for the ledger when the signal comes.
    const child = spawnBulk(["authenticate", "docs", "--key-file", "key", "--wait"], cwd, env);
    await waitFor("the records to be made", () => (readManifestLines(manifest).length >= 10 ? true : undefined), 20_000, 10);
    child.kill("SIGINT");
    const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    expect({ code, stderr }).toEqual({ code: 130, stderr: "docverify authenticate: interrupted; the manifest is complete up to here: run the same command again to resume\n" });
    expect(stdout).toStartWith("10 files: 10 authenticated (10 new, 0 already held by the service, 0 already in the manifest), 0 failed");
    const again = await runBulk(["authenticate", "docs", "--key-file", "key", "--wait"], cwd, env);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("10 files: 10 authenticated (0 new, 0 already held by the service, 10 already in the manifest), 0 failed");
    expect(again.stdout).toContain("on the ledger: 10 anchored, 10 verified\n");
  }, 40_000);

  test("not on a terminal: no progress line at all", async () => {
    const cwd = folder(3);
    const r = await runBulk(["authenticate", "docs", "--key-file", "key"], cwd, env);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
  }, 20_000);
});

describe("on Node.js 20", () => {
  test("the commands bundled for Node.js authenticate, check and revoke as under Bun", async () => {
    const cwd = folder(4);
    const entry = join(cwd, "entry.ts");
    writeFileSync(entry, `import { nodeClientIo, runClientCommand } from ${JSON.stringify(join(ROOT, "src/bulk/cli.ts"))};\nprocess.exitCode = await runClientCommand(process.argv.slice(2), nodeClientIo());\n`);
    const built = await Bun.build({ entrypoints: [entry], target: "node", format: "esm", outdir: cwd, naming: "client.mjs" });
    expect(built.success).toBe(true);
    expect(readFileSync(join(cwd, "client.mjs"), "utf8")).not.toMatch(/\bBun\.|["']bun:/);
    const node = async (args: string[]) => {
      const p = Bun.spawn(["node", "client.mjs", ...args], { cwd, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env }, stdout: "pipe", stderr: "pipe" });
      const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      return { code, stdout, stderr };
    };
    expect((await node(["--help"])).stdout).toStartWith("Usage: docverify authenticate|check|revoke");
    const made = await node(["authenticate", "docs", "--key-file", "key", "--wait", "--json"]);
    expect({ code: made.code, stderr: made.stderr }).toEqual({ code: 0, stderr: "" });
    expect(jsonOutput(made.stdout).summary).toMatchObject({ files: 4, created: 4, verified: 4 });
    const checked = await node(["check", "docs", "--json"]);
    expect(checked.code).toBe(0);
    expect(jsonOutput(checked.stdout).summary).toMatchObject({ files: 4, verified: 4, verdicts: { verified_org: 4 } });
    const revoked = await node(["revoke", "--manifest", "docverify-manifest.jsonl", "--reason", "OTHER", "--key-file", "key"]);
    expect(revoked).toMatchObject({ code: 0, stderr: "" });
    expect(revoked.stdout).toStartWith("4 records: 4 revoked now (OTHER)");
  }, 40_000);
});

describe("docverify check", () => {
  test("verdicts of authenticated, revoked and unknown files, anonymously and with a key; exit 0 only when every file is verified", async () => {
    const cwd = folder(4);
    const made = await runBulk(["authenticate", "docs", "--key-file", "key", "--wait", "--json"], cwd, env);
    expect(made.code).toBe(0);
    const records = jsonOutput(made.stdout).files;
    const revoked = records.find((f) => (f.path as string).endsWith("0003.txt"))!;
    await createClient({ url: s.svc.url, apiKey: s.key }).revokeRecord(revoked.recordId as string, "SUPERSEDED");
    writeFileSync(join(cwd, "unknown.txt"), "never authenticated\n");

    const all = await runBulk(["check", "docs", "unknown.txt", "--json"], cwd, env);
    expect(all.code).toBe(1);
    const { files, summary } = jsonOutput(all.stdout);
    expect(summary).toMatchObject({ files: 5, verified: 3, notVerified: 2, failed: 0, tier: "public", verdicts: { no_record: 1, revoked: 1, verified_org: 3 } });
    const verdictOf = new Map(files.map((f) => [f.path, f]));
    for (const r of records) {
      expect(verdictOf.get(r.path)).toMatchObject({ hash: r.hash, verdict: r === revoked ? "revoked" : "verified_org", recordIds: [r.recordId] });
    }
    expect(verdictOf.get("unknown.txt")).toMatchObject({ verdict: "no_record", recordIds: [] });

    // With the key (the organisation's tier); --anonymous overrides DOCVERIFY_API_KEY.
    const good = records.filter((r) => r !== revoked).map((r) => r.path as string);
    const keyed = await runBulk(["check", ...good, "--key-file", "key"], cwd, env);
    expect({ code: keyed.code, stderr: keyed.stderr }).toEqual({ code: 0, stderr: "" });
    expect(keyed.stdout).toBe(`3 files: 3 verified, 0 not verified, 0 failed, in ${/in ([\d.]+) s/.exec(keyed.stdout)![1]} s (organisation tier)\nverdicts: verified_org 3\n`);
    const anonymous = await runBulk(["check", ...good, "--anonymous", "--json"], cwd, { ...env, DOCVERIFY_API_KEY: s.key });
    expect(anonymous.code).toBe(0);
    expect(jsonOutput(anonymous.stdout).summary.tier).toBe("public");
    const text = await runBulk(["check", "docs", "unknown.txt"], cwd, env);
    expect(text.code).toBe(1);
    expect(text.stderr).toContain(`docverify check: ${revoked.path}: revoked\n`);
    expect(text.stderr).toContain("docverify check: unknown.txt: no_record\n");
  }, 60_000);
});

describe("docverify revoke", () => {
  test("revokes every record of a manifest, records not yet final included; run again, or from another copy, they count as already revoked", async () => {
    const cwd = folder(5);
    const manifest = join(cwd, "docverify-manifest.jsonl");
    // Not waited for: the records are not final yet when revoke starts, which waits for them.
    expect((await runBulk(["authenticate", "docs", "--key-file", "key"], cwd, env)).code).toBe(0);
    copyFileSync(manifest, join(cwd, "copy.jsonl"));
    const before = recordCount(s.admin, s.org.id);

    const first = await runBulk(["revoke", "--manifest", "docverify-manifest.jsonl", "--reason", "SUPERSEDED", "--key-file", "key", "--json"], cwd, env);
    expect({ code: first.code, stderr: first.stderr }).toEqual({ code: 0, stderr: "" });
    expect(jsonOutput(first.stdout).summary).toMatchObject({ records: 5, revoked: 5, alreadyRevoked: 0, failed: 0 });
    expect(recordCount(s.admin, s.org.id).revoked).toBe(before.revoked + 5);
    const lines = readManifestLines(manifest);
    expect(lines.filter((l) => l.state === "revoked").map((l) => l.recordId).sort()).toEqual(lines.filter((l) => l.state === "created").map((l) => l.recordId).sort());

    // From the manifest: known revoked, nothing sent. From a copy written before: the service says ALREADY_REVOKED.
    for (const m of ["docverify-manifest.jsonl", "copy.jsonl"]) {
      const again = await runBulk(["revoke", "--manifest", m, "--reason", "SUPERSEDED", "--key-file", "key"], cwd, env);
      expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 0, stderr: "" });
      expect(again.stdout).toStartWith("5 records: 0 revoked now (SUPERSEDED), 5 already revoked, 0 failed");
    }
    expect(recordCount(s.admin, s.org.id).revoked).toBe(before.revoked + 5);
  }, 60_000);

  test("records revoked before their anchor is final: each 409 ANCHOR_NOT_FINAL waited out as its Retry-After says, then revoked", async () => {
    // A service of its own whose ledger takes 4 s to reach consensus, so that a revocation sent
    // right after the records were made finds them not final.
    const slow = await startServiceWithOrg({ revoke: true, orgName: "Slow Ledger Ltd", env: { DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: "4000" } });
    await firstRecord(slow);
    const cwd = folder(3, slow.key);
    const env = { DOCVERIFY_URL: slow.svc.url };
    expect((await runBulk(["authenticate", "docs", "--key-file", "key"], cwd, env)).code).toBe(0);
    const revoked = await runBulk(["revoke", "--manifest", "docverify-manifest.jsonl", "--reason", "ERROR_IN_DOCUMENT", "--key-file", "key", "--json"], cwd, env);
    expect({ code: revoked.code, stderr: revoked.stderr }).toEqual({ code: 0, stderr: "" });
    const summary = jsonOutput(revoked.stdout).summary;
    expect(summary).toMatchObject({ records: 3, revoked: 3, alreadyRevoked: 0, failed: 0 });
    expect(summary.notFinalWaits as number).toBeGreaterThanOrEqual(1);
    expect(recordCount(slow.admin, slow.org.id).revoked).toBe(3);
  }, 90_000);

  test("a bad reason, and a key without records:revoke, are refused before any record is revoked", async () => {
    const cwd = folder(3);
    expect((await runBulk(["authenticate", "docs", "--key-file", "key"], cwd, env)).code).toBe(0);
    const manifest = readFileSync(join(cwd, "docverify-manifest.jsonl"), "utf8");
    const revokedBefore = recordCount(s.admin, s.org.id).revoked;

    const bad = await runBulk(["revoke", "--manifest", "docverify-manifest.jsonl", "--reason", "BORED", "--key-file", "key"], cwd, env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toStartWith('docverify revoke: --reason must be one of SUPERSEDED, ERROR_IN_DOCUMENT, KEY_COMPROMISE, PRIVILEGE_WITHDRAWN, AFFILIATION_CHANGED, CESSATION_OF_OPERATION, CERTIFICATE_HOLD, UNSPECIFIED, OTHER, not "BORED"\n');

    writeFileSync(join(cwd, "write-only"), `${await mint()}\n`);
    const unscoped = await runBulk(["revoke", "--manifest", "docverify-manifest.jsonl", "--reason", "SUPERSEDED", "--key-file", "write-only"], cwd, env);
    expect(unscoped.code).toBe(3);
    expect(unscoped.stderr).toMatch(/^docverify revoke: the key dv_live_\w{8}… may not revoke records \(403 SCOPE_REQUIRED: it lacks records:revoke\); nothing was changed\n$/);
    expect(unscoped.stdout).toBe("");
    expect(recordCount(s.admin, s.org.id).revoked).toBe(revokedBefore);
    expect(readFileSync(join(cwd, "docverify-manifest.jsonl"), "utf8")).toBe(manifest);
  }, 30_000);
});

describe("bad input", () => {
  test("--include and --exclude choose the files of a folder by their path below it; a file named on the line always counts", async () => {
    const cwd = folder(0);
    for (const f of ["docs/a.pdf", "docs/b.txt", "docs/old/c.pdf", "docs/new/d.pdf", "e.txt"]) {
      mkdirSync(dirname(join(cwd, f)), { recursive: true });
      writeFileSync(join(cwd, f), `${f}\n`);
    }
    const r = await runBulk(["check", "docs", "e.txt", "--include", "*.pdf", "--exclude", "old/**", "--json"], cwd, env);
    expect(r.code).toBe(1); // no_record: nothing was authenticated
    // Lines come as each file finishes, several at once.
    expect(jsonOutput(r.stdout).files.map((f) => f.path as string).sort()).toEqual(["docs/a.pdf", "docs/new/d.pdf", "e.txt"]);
  }, 20_000);

  test("files that cannot be read fail one by one, named with their reason; the rest are authenticated (exit 1)", async () => {
    const cwd = folder(3);
    symlinkSync(join(cwd, "nowhere.txt"), join(cwd, "docs", "dangling.txt"));
    const r = await runBulk(["authenticate", "docs", "missing.pdf", "--key-file", "key"], cwd, env);
    expect(r.code).toBe(1);
    expect(r.stdout).toStartWith("5 files: 3 authenticated (3 new, 0 already held by the service, 0 already in the manifest), 2 failed");
    expect(r.stderr).toContain(`docverify authenticate: docs/dangling.txt: UNREADABLE (dangling symbolic link: its target ${JSON.stringify(join(cwd, "nowhere.txt"))} does not exist)\n`);
    expect(r.stderr).toContain("docverify authenticate: missing.pdf: no such file or folder (ENOENT)\n");
    const failed = readManifestLines(join(cwd, "docverify-manifest.jsonl")).filter((l) => l.state === "failed");
    expect(failed.map((l) => [l.path, l.error]).sort()).toEqual([
      ["docs/dangling.txt", "UNREADABLE"],
      ["missing.pdf", "ENOENT"],
    ]);
  }, 30_000);

  test("a key without records:write, a test key, an unknown key, an unreachable service: one line, exit 3, nothing created, no manifest", async () => {
    const closed = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const keys = { noWrite: await mint({ withoutWrite: true }), test: await mint({ environment: "test" }) };
    const cases: [string, string[], Record<string, string>, RegExp][] = [
      ["no records:write", ["--key-file", "no-write"], env, /^the key dv_live_\w{8}… may not create records \(403 SCOPE_REQUIRED: it lacks records:write\); nothing was changed$/],
      ["test key", ["--key-file", "test-key"], env, /^the key dv_test_\w{8}… is a test key: test keys can never create records \(there is no test ledger\)\. Use a live key\.$/],
      ["unknown key", [], { ...env, DOCVERIFY_API_KEY: `dv_live_${"a".repeat(54)}` }, /^the service at http:\/\/127\.0\.0\.1:\d+ refused the key dv_live_aaaaaaaa… \(401 UNAUTHENTICATED\): unknown, revoked or expired$/],
      ["unreachable", ["--url", `http://127.0.0.1:${closed}`, "--key-file", "key"], {}, new RegExp(`^cannot reach the docverify service at http://127\\.0\\.0\\.1:${closed}: ECONNREFUSED$`)],
    ];
    for (const [what, args, runEnv, says] of cases) {
      const cwd = folder(3);
      writeFileSync(join(cwd, "no-write"), `${keys.noWrite}\n`);
      writeFileSync(join(cwd, "test-key"), `${keys.test}\n`);
      const before = recordCount(s.admin, s.org.id);
      const r = await runBulk(["authenticate", "docs", ...args, "--receipts", "receipts"], cwd, runEnv);
      expect({ what, code: r.code, stdout: r.stdout }).toEqual({ what, code: 3, stdout: "" });
      const line = r.stderr.replace(/^docverify authenticate: /, "").replace(/\n$/, "");
      expect({ what, line }).toEqual({ what, line: expect.stringMatching(says) });
      expect(r.stderr).not.toContain(keys.noWrite.slice(16));
      expect(r.stderr).not.toContain(keys.test.slice(16));
      expect(recordCount(s.admin, s.org.id)).toEqual(before);
      expect({ what, manifest: existsSync(join(cwd, "docverify-manifest.jsonl")), receipts: existsSync(join(cwd, "receipts")) }).toEqual({ what, manifest: false, receipts: false });
    }
  }, 30_000);

  test("usage errors exit 2 with a pointer to the usage; --help prints it", async () => {
    const cwd = folder(1);
    const cases: [string[], string][] = [
      [["authenticate", "docs", "--bogus"], "docverify authenticate: Unknown option '--bogus'"],
      [["authenticate", "docs"], "docverify authenticate: no API key: give --key-file FILE or set DOCVERIFY_API_KEY"],
      [["authenticate", "--key-file", "key"], "docverify authenticate: give at least one PATH: a file or a folder"],
      [["authenticate", "docs", "--key-file", "key", "--concurrency", "0"], "docverify authenticate: --concurrency must be a whole number from 1 to 64"],
      [["check", "docs", "--url", "ftp://example.org"], "docverify check: --url must be http:// or https://"],
      [["authenticate", "docs", "--key-file", "key", "--manifest", "nowhere/m.jsonl"], 'docverify authenticate: --manifest "nowhere/m.jsonl": its folder does not exist'],
      [["authenticate", "docs", "--key-file", "missing-key"], 'docverify authenticate: cannot read --key-file "missing-key": ENOENT'],
      [["revoke", "--reason", "OTHER", "--key-file", "key"], "docverify revoke: --manifest FILE is required"],
    ];
    for (const [args, says] of cases) {
      const r = await runBulk(args, cwd, env);
      expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 2, stdout: "" });
      expect(r.stderr).toStartWith(says);
      expect(r.stderr).toEndWith(`Run docverify ${args[0]} --help for its usage.\n`);
    }
    for (const command of ["authenticate", "check", "revoke"]) {
      const help = await runBulk([command, "--bogus", "--help"], cwd, env);
      expect({ code: help.code, stderr: help.stderr }).toEqual({ code: 0, stderr: "" });
      expect(help.stdout).toStartWith(`Usage: docverify ${command} `);
      expect(help.stdout).toContain("Exit codes: 0 ");
    }
    expect(existsSync(join(cwd, "docverify-manifest.jsonl"))).toBe(false);
  }, 30_000);
});
