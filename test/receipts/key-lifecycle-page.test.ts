/**
 * Key windows and compromise on the receipt verifier's page (docs/receipts.md §4.4), opened from
 * disk in Chromium, against two mirror nodes on two loopback hosts serving a topic with the key's
 * life on it (test/verifier/lifecycle.ts, the messages written byte by byte): a record signed
 * before its key's replacement verifies; one whose message follows the replacement is
 * signature_invalid; a compromise since at or before the signed time shows revoked, KEY_COMPROMISE;
 * a later one leaves it verified; a compromise on a topic anyone may write to revokes nothing; a
 * topic longer than the scan limit field is unverifiable, saying to raise the field.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanup, tempDir } from "../support/env.ts";
import { mirrorsFor, SCENARIOS, type ScenarioName } from "../verifier/lifecycle.ts";
import { pageOnDisk, pageVerify, type PageRun } from "./e2e-rig.ts";

afterAll(cleanup);

async function onThePage(name: ScenarioName, scanLimit?: string): Promise<{ run: PageRun; l: ReturnType<(typeof SCENARIOS)[ScenarioName]> }> {
  const l = SCENARIOS[name]();
  const dir = tempDir("docverify-lifecycle-page-");
  const receiptPath = join(dir, "receipt.json");
  const documentPath = join(dir, "document.bin");
  writeFileSync(receiptPath, JSON.stringify(l.receipt, null, 2));
  writeFileSync(documentPath, l.document);
  const mirrors = mirrorsFor(l);
  const run = await pageVerify(pageOnDisk(), {
    receiptPath,
    documentPath,
    mirrors: [...mirrors.urls],
    ...(scanLimit === undefined ? {} : { before: async (page) => void (await page.fill("#max-scan-pages", scanLimit)) }),
  });
  return { run, l };
}

const failed = (run: PageRun) => run.checks.filter((c) => c.status === "fail").map((c) => c.name);
const detail = (run: PageRun, name: string) => run.checks.find((c) => c.name === name)?.detail ?? "";

describe("the page: a key's window", () => {
  test("a record whose message precedes its key's replacement: verified_org, the replacement named under keyWindow", async () => {
    const { run } = await onThePage("replaced after");
    expect({ verdict: run.verdict, failed: failed(run), error: run.error, console: run.consoleErrors }).toEqual({ verdict: "verified_org", failed: [], error: "", console: [] });
    expect(detail(run, "keyWindow")).toContain("replaced by message #3");
  }, 60_000);

  test("a record whose message follows its key's replacement: signature_invalid, keyWindow failed", async () => {
    const { run } = await onThePage("replaced before");
    expect({ verdict: run.verdict, failed: failed(run) }).toEqual({ verdict: "signature_invalid", failed: ["keyWindow"] });
    expect(detail(run, "keyWindow")).toContain("the key was not in force at the record's place on the topic");
  }, 60_000);
});

describe("the page: a key compromise", () => {
  test("since at the signed time: revoked, the revocation line naming KEY_COMPROMISE and the compromise message", async () => {
    const { run } = await onThePage("compromised since signedAt");
    expect({ verdict: run.verdict, failed: failed(run) }).toEqual({ verdict: "revoked", failed: ["keyCompromise"] });
    expect(run.revocation).toContain("KEY_COMPROMISE");
    expect(run.revocation).toContain("ledger message 3");
  }, 60_000);

  test("since after the signed time: verified_org", async () => {
    const { run } = await onThePage("compromised later");
    expect({ verdict: run.verdict, failed: failed(run), revocation: run.revocation }).toEqual({ verdict: "verified_org", failed: [], revocation: "" });
    expect(detail(run, "keyCompromise")).toContain("this record is unaffected");
  }, 60_000);

  test("on a topic without a submit key: signature_invalid, not revoked", async () => {
    const { run } = await onThePage("compromise without submit key");
    expect(run.verdict).toBe("signature_invalid");
    expect(failed(run)).toContain("topicSubmitKey");
  }, 60_000);
});

describe("the page: the scan limit", () => {
  test("a topic longer than the field allows: unverifiable, saying to raise the field; a field that is not a number is refused", async () => {
    const { run } = await onThePage("long topic", "1");
    expect({ verdict: run.verdict, failed: failed(run) }).toEqual({ verdict: "unverifiable", failed: ["mirrors"] });
    expect(detail(run, "mirrors")).toContain("raise the bound in the topic scan limit field (now 1 pages of 100 messages)");
    const bad = await onThePage("replaced after", "0");
    expect(bad.run.error).toBe("The topic scan limit must be a whole number, 1 or more.");
  }, 60_000);
});
