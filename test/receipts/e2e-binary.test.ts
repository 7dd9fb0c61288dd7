/**
 * Receipts through the product as shipped: `npm run build` (scripts/build.ts) writes the
 * executable, docverify-verify.mjs, docverify-client.mjs and verify-receipt.html side by side; the executable serves the
 * page it embeds and the receipts; with it stopped (its ledger brought back alone by the same
 * executable), its own `verify-receipt`, the standalone beside it and the page beside it all say
 * verified_org given two witnesses of the ledger on two hosts (e2e-rig.ts), and unverifiable given
 * none: a local ledger has no built-in mirror nodes.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { cleanup, tempDir } from "../support/env.ts";
import { builtBinary, productBuild } from "../support/build.ts";
import { authenticate, cliVerify, deploy, PAGE_HTML, pageVerify, type Deployment, type Held, type ShellResult } from "./e2e-rig.ts";

afterAll(cleanup);

/** The run's build (support/build.ts), made by the first file that needs it: `npm run build`'s folder. */
let dist: string;
let binary: string;
let d: Deployment;
let held: Held;
let served: { status: number; body: string };
let witnesses: string[];

beforeAll(async () => {
  binary = builtBinary();
  dist = productBuild().dist;
  d = await deploy("embedded", { cmd: [binary] });
  const res = await fetch(`${d.svc.url}/verify-receipt`);
  served = { status: res.status, body: await res.text() };
  held = await authenticate(d);
  await d.stopServe();
  witnesses = await d.witnesses();
}, 90_000);

/**
 * The standalone verifier beside the executable, as `node docverify-verify.mjs ARGS…` from an empty
 * folder; spawned asynchronously, as the witnesses' proxy answers from this process meanwhile.
 */
async function standaloneBeside(args: string[]): Promise<ShellResult> {
  const p = Bun.spawn(["node", join(dist, "docverify-verify.mjs"), ...args], { cwd: tempDir(), stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  let report: ShellResult["report"] = null;
  try {
    report = JSON.parse(stdout) as ShellResult["report"];
  } catch {
    /* not --json */
  }
  return { code, stdout, stderr, report };
}

test("npm run build writes the executable, the standalone verifier, the standalone client and the page, the page as committed", () => {
  expect(readdirSync(dist).sort()).toEqual(["docverify", "docverify-client.mjs", "docverify-verify.mjs", "verify-receipt.html"]);
  expect(readFileSync(join(dist, "verify-receipt.html"), "utf8")).toBe(PAGE_HTML);
});

test("the executable serves the page it embeds at /verify-receipt", () => {
  expect(served).toEqual({ status: 200, body: PAGE_HTML });
});

test(
  "with serve stopped, two witnesses named: the executable's verify-receipt, the standalone and the page beside it say verified_org, the organisation's name a claim",
  async () => {
    const named = witnesses.flatMap((m) => ["--mirror", m]);
    const own = await cliVerify([held.receiptPath, "--file", held.documentPath, "--json", ...named], [binary]);
    expect([own.code, own.report?.verdict, own.report?.identity?.status, own.report?.identity?.claimedName, own.report?.public]).toEqual([0, "verified_org", "unconfirmed", d.orgName, false]);
    const standalone = await standaloneBeside([held.receiptPath, "--file", held.documentPath, "--json", ...named]);
    expect([standalone.code, standalone.report?.verdict, standalone.report?.identity?.claimedName]).toEqual([0, "verified_org", d.orgName]);
    const page = await pageVerify(`file://${join(dist, "verify-receipt.html")}`, { receiptPath: held.receiptPath, documentPath: held.documentPath, mirrors: witnesses });
    expect([page.verdict, page.identity, page.organisationName]).toEqual(["verified_org", "unconfirmed", d.orgName]);
    expect(page.organisation).toStartWith(`Organisation: unconfirmed claim. The ledger announcement claims ${d.orgName}`);
  },
  60_000,
);

test(
  "with serve stopped, nothing named: the executable's verify-receipt and the standalone say unverifiable, telling the user to name the local ledger's mirror nodes with --mirror",
  async () => {
    for (const r of [await cliVerify([held.receiptPath, "--file", held.documentPath], [binary]), await standaloneBeside([held.receiptPath, "--file", held.documentPath])]) {
      expect(r.code).toBe(1);
      expect(r.stdout).toStartWith("Verdict: unverifiable");
      expect(r.stdout).toContain("name the local ledger's with --mirror URL");
    }
  },
  60_000,
);
