/**
 * Receipts through the product as shipped: `npm run build` (scripts/build.ts) writes the
 * executable, docverify-verify.mjs and verify-receipt.html side by side; the executable serves the
 * page it embeds and the receipts; with it stopped (its ledger brought back alone by the same
 * executable), its own `verify-receipt`, the standalone beside it and the page beside it all say
 * verified_org.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { BUN, ROOT, cleanup, tempDir } from "../support/env.ts";
import { authenticate, cliVerify, deploy, PAGE_FILE, pageVerify, type Deployment, type Held } from "./e2e-rig.ts";

afterAll(cleanup);

const dist = tempDir("docverify-dist-");
const binary = join(dist, "docverify");
let d: Deployment;
let held: Held;
let served: { status: number; body: string };

beforeAll(async () => {
  const build = Bun.spawnSync([BUN, join(ROOT, "scripts", "build.ts"), binary], { cwd: ROOT });
  if (build.exitCode !== 0) throw new Error(`npm run build failed: ${build.stderr.toString()}`);
  d = await deploy("embedded", { cmd: [binary] });
  const res = await fetch(`${d.svc.url}/verify-receipt`);
  served = { status: res.status, body: await res.text() };
  held = await authenticate(d);
  await d.stopServe();
}, 90_000);

test("npm run build writes the executable, the standalone verifier and the page, the page as committed", () => {
  expect(readdirSync(dist).sort()).toEqual(["docverify", "docverify-verify.mjs", "verify-receipt.html"]);
  expect(readFileSync(join(dist, "verify-receipt.html"), "utf8")).toBe(readFileSync(PAGE_FILE, "utf8"));
});

test("the executable serves the page it embeds at /verify-receipt", () => {
  expect(served).toEqual({ status: 200, body: readFileSync(PAGE_FILE, "utf8") });
});

test(
  "with serve stopped: the executable's verify-receipt, the standalone and the page beside it say verified_org",
  async () => {
    const own = await cliVerify([held.receiptPath, "--file", held.documentPath, "--json"], [binary]);
    expect([own.code, own.report?.verdict, own.report?.organisation?.name]).toEqual([0, "verified_org", d.orgName]);
    const standalone = Bun.spawnSync(["node", join(dist, "docverify-verify.mjs"), held.receiptPath, "--file", held.documentPath, "--json"], { cwd: tempDir() });
    expect([standalone.exitCode, (JSON.parse(standalone.stdout.toString()) as { verdict: string }).verdict]).toEqual([0, "verified_org"]);
    const page = await pageVerify(`file://${join(dist, "verify-receipt.html")}`, { receiptPath: held.receiptPath, documentPath: held.documentPath });
    expect([page.verdict, page.organisation]).toEqual(["verified_org", `Organisation: ${d.orgName}`]);
  },
  60_000,
);
