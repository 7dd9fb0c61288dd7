/**
 * The README's quick start, run as a newcomer runs it: `npm start` in one terminal, the
 * `<!-- quickstart -->` block pasted into bash in a second one, both in a checkout with a fresh
 * `./data`. The checkout is a temporary folder linking every tracked top-level entry of this one
 * (and node_modules), so the files the commands write stay out of the repository.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { parseConfig } from "../src/config/index.ts";
import { BUN, ROOT, cleanup, onCleanup, startService, tempDir } from "./support/env.ts";

afterAll(cleanup);

const readme = readFileSync(join(ROOT, "README.md"), "utf8");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };

/** The fenced bash block right after the `<!-- quickstart -->` marker. */
function quickstart(): string {
  const m = /<!-- quickstart -->\n```bash\n([\s\S]*?)```/.exec(readme);
  if (m === null) throw new Error("README.md has no <!-- quickstart --> bash block");
  return m[1]!;
}

/** A checkout of this repository as a fresh clone has it (plus node_modules from `npm ci`), without ./data. */
function checkout(): string {
  const dir = join(tempDir("docverify-quickstart-"), "docverify");
  const tracked = Bun.spawnSync(["git", "ls-files"], { cwd: ROOT });
  if (tracked.exitCode !== 0) throw new Error(`git ls-files failed: ${tracked.stderr.toString()}`);
  const top = new Set(tracked.stdout.toString().split("\n").filter((l) => l !== "").map((l) => l.split("/")[0]!));
  mkdirSync(dir);
  for (const entry of [...top, "node_modules"]) symlinkSync(join(ROOT, entry), join(dir, entry));
  return dir;
}

test("the quick start's commands are the ones this test runs: the CLI through npm, against npm start's address", () => {
  expect(pkg.scripts.docverify).toBe("bun src/main.ts");
  expect(pkg.scripts.start).toBe(`${pkg.scripts.docverify} serve`);
  const lines = quickstart().split("\n");
  expect(lines[0]).toStartWith(`docverify() { npm run docverify --silent -- "$@"; }`);
  // The one line the test changes: npm start's address, which is the default one.
  expect(lines[1]).toBe("api=http://127.0.0.1:8080");
  const defaults = parseConfig({ DOCVERIFY_DATA_DIR: tempDir() });
  expect(`http://${defaults.host}:${defaults.port}`).toBe("http://127.0.0.1:8080");
});

test(
  "from a fresh clone to a first verified_org: key, 201, verified_org, the log, the receipt verified, revoked",
  async () => {
    const dir = checkout();
    const data = join(dir, "data");
    // npm start, as package.json runs it: `bun src/main.ts serve` in the checkout.
    const svc = await startService({ cwd: dir, cmd: [BUN, "src/main.ts"], env: { DOCVERIFY_DATA_DIR: data } });
    const script = quickstart().replace(/^api=http:\/\/127\.0\.0\.1:8080$/m, `api=${svc.url}`);
    expect(script).toContain(`api=${svc.url}\n`);

    const home = tempDir("docverify-quickstart-home-");
    const bash = Bun.spawn(["bash", "-c", `set -euo pipefail\n${script}`], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, DOCVERIFY_DATA_DIR: data },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const timer = setTimeout(() => bash.kill("SIGKILL"), 35_000);
    onCleanup(() => clearTimeout(timer));
    const [out, err, code] = await Promise.all([new Response(bash.stdout).text(), new Response(bash.stderr).text(), bash.exited]);
    clearTimeout(timer);
    const context = `exit ${code}\n--- stdout\n${out}\n--- stderr\n${err}`;
    expect(code, context).toBe(0);

    const lines = out.split("\n");
    let i = 0;
    // The key, printed alone on its line (npm's banner is not on stdout), with the warning on stderr.
    expect(lines[i], context).toMatch(/^dv_live_[A-Za-z0-9]{54}$/);
    const key = lines[i++]!;
    expect(err).toContain("This key is shown once; copy it now.");
    expect(err).not.toContain(key);
    // 503 while the organisation's topic is created, then 201 with the record.
    while (lines[i] === "503") i++;
    expect(lines[i++], context).toBe("201");
    const record = JSON.parse(lines[i++]!) as { recordId: string; anchorState: string; verifyUrl: string };
    expect(record.anchorState).toBe("pending");
    expect(record.verifyUrl).toBe(`${svc.url}/verify/${record.recordId}`);
    // The verification that ended the poll.
    const verification = JSON.parse(lines[i++]!) as { verdict: string; matches: { recordId: string; signerOrg: string }[] };
    expect(verification.verdict).toBe("verified_org");
    expect(verification.matches.map((m) => [m.recordId, m.signerOrg])).toEqual([[record.recordId, "Acme"]]);
    // The log's first page: newest first, the verified_org call on top, the pending ones before it.
    const page = JSON.parse(lines[i++]!) as { data: { verdict: string }[]; pagination: { nextCursor: string | null; hasMore: boolean } };
    expect(page.data[0]!.verdict).toBe("verified_org");
    expect(page.data.length).toBeGreaterThanOrEqual(1);
    expect(page.data.length).toBeLessThanOrEqual(2);
    expect(page.pagination.hasMore).toBe(page.pagination.nextCursor !== null);
    // verify-receipt's report: verified_org on the embedded ledger's two mirror nodes from the
    // trust file (one host), the local ledger said to prove nothing publicly, Acme confirmed by
    // the trust file's pin, every check passing.
    const report: string[] = [];
    while (i < lines.length && !lines[i]!.startsWith("{")) report.push(lines[i++]!);
    expect(report[0], context).toStartWith("Verdict: verified_org");
    expect(report[1]).toBe("Ledger: local development ledger: proves nothing publicly");
    expect(report[2]).toStartWith('Identity: confirmed by trust-file: "Acme"');
    expect(report.join("\n")).toContain(`Record: ${record.recordId}`);
    expect(report.join("\n")).toMatch(/Mirror nodes: http:\/\/127\.0\.0\.1:\d+ \(trust file\), http:\/\/127\.0\.0\.1:\d+ \(trust file\) on 1 distinct host \(minimum 1\)/);
    expect(report.join("\n")).toContain("WARNING: --min-mirrors 1 is a weakened check");
    const checks = report.filter((l) => /^ {2}\w+ {2}/.test(l));
    expect(checks.length).toBeGreaterThan(5);
    expect(checks.filter((l) => !l.startsWith("  pass "))).toEqual([]);
    // The revocation: the record's id, then 200.
    expect(JSON.parse(lines[i++]!)).toEqual({ recordId: record.recordId });
    expect(lines[i++]).toBe("200");
    expect(lines.slice(i).join("")).toBe("");

    // What the newcomer now has: the receipt beside the checkout's files, and the record revoked.
    const receipt = JSON.parse(readFileSync(join(dir, "receipt.json"), "utf8")) as { recordId: string };
    expect(receipt.recordId).toBe(record.recordId);
    const after = await fetch(`${svc.url}/v1/verifications`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ originalDocHash: `sha256:${new Bun.CryptoHasher("sha256").update(readme).digest("hex")}` }),
    });
    expect(((await after.json()) as { verdict: string }).verdict).toBe("revoked");
    expect(await svc.stop()).toBe(0);
  },
  45_000,
);
