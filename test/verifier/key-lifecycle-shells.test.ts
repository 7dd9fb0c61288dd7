/**
 * Key windows and compromise in every command-line shell of the verifier (docs/receipts.md §4.1,
 * "Key windows and compromise"): in-process (`runVerifyReceipt`), `bun src/main.ts verify-receipt`
 * and the standalone `node docverify-verify.mjs` built into a folder of its own, each against two
 * mirror nodes on two loopback hosts serving a topic with the key's life on it (lifecycle.ts, the
 * messages written byte by byte). A record whose message precedes its key's replacement verifies;
 * one whose message follows it is signature_invalid; a compromise since at or before the signed
 * time turns a receipt issued before it into revoked, KEY_COMPROMISE; a compromise after leaves it
 * verified; a compromise on a topic anyone may write to revokes nothing (the topic fails first);
 * a topic longer than the scan bound is unverifiable, saying how to raise it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanup, tempDir } from "../support/env.ts";
import { mirrorsFor, SCENARIOS, type Lifecycle, type ScenarioName } from "./lifecycle.ts";
import { runInShell, SHELLS, standaloneVerifier, type Shell, type ShellRun } from "./shells.ts";
import { nodeIo, runVerifyReceipt } from "../../src/verifier/cli.ts";

afterAll(cleanup);


interface Report {
  verdict: string;
  revocation: { reason: string; revokedAt: string; sequenceNumber: number; consensusAt: string } | null;
  checks: { name: string; status: string; detail: string; evidence?: Record<string, any> }[];
}
type Run = ShellRun<Report>;

let standalone: string;

beforeAll(async () => {
  standalone = await standaloneVerifier();
}, 30_000);

const runIn = (shell: Shell, args: readonly string[]): Promise<Run> => runInShell<Report>(shell, args, standalone);

/** The receipt and the document as files, and the two mirror nodes named; the same arguments in every shell. */
async function inEveryShell(l: Lifecycle, ...more: string[]): Promise<Run[]> {
  const dir = tempDir("docverify-lifecycle-");
  writeFileSync(join(dir, "receipt.json"), JSON.stringify(l.receipt, null, 2));
  writeFileSync(join(dir, "document.bin"), l.document);
  const mirrors = mirrorsFor(l);
  const args = [join(dir, "receipt.json"), "--file", join(dir, "document.bin"), "--no-builtin-mirrors", ...mirrors.urls.flatMap((u) => ["--mirror", u]), "--json", ...more];
  return Promise.all(SHELLS.map((s) => runIn(s, args)));
}

const check = (r: Run, name: string) => {
  const c = r.report!.checks.find((x) => x.name === name);
  if (c === undefined) throw new Error(`${r.shell}: no ${name} check`);
  return c;
};

/** Verdict, exit code and the checks that did not pass (identity's warning aside), the same in every shell. */
function expectOutcome(runs: readonly Run[], verdict: string, code: number, failed: string[]): void {
  for (const r of runs) {
    const notPassed = r.report!.checks.filter((c) => c.status === "fail").map((c) => c.name);
    expect({ shell: r.shell, verdict: r.report!.verdict, code: r.code, failed: notPassed }).toEqual({ shell: r.shell, verdict, code, failed });
  }
}

const scenario = (name: ScenarioName) => SCENARIOS[name]();

describe("a key's window, in every shell", () => {
  test("a record whose message precedes its key's replacement: verified_org, exit 0, the replacement in keyWindow's evidence", async () => {
    const l = scenario("replaced after");
    const runs = await inEveryShell(l);
    expectOutcome(runs, "verified_org", 0, []);
    for (const r of runs) {
      const w = check(r, "keyWindow");
      expect(w.status).toBe("pass");
      expect(w.detail).toContain("replaced by message #3");
      expect(w.evidence!.replacedBy).toMatchObject({ sequenceNumber: 3, keyFingerprint: "5a".repeat(32), replaces: l.signerFp, sealKeyFingerprint: l.sealFp });
    }
  }, 60_000);

  test("a record whose message follows its key's replacement (a topic forged by the mirror nodes): signature_invalid, exit 1", async () => {
    const l = scenario("replaced before");
    const runs = await inEveryShell(l);
    expectOutcome(runs, "signature_invalid", 1, ["keyWindow"]);
    for (const r of runs) {
      expect(check(r, "keyWindow").detail).toBe(
        `outside its key's window: message #2 (consensus ${l.topic.messages[1]!.consensusAt}) announces another signer key (5a5a5a5a5a5a5a5a…) for this organisation between the key's announcement #1 and the record's message #3: the key was not in force at the record's place on the topic`,
      );
      expect(check(r, "keyWindow").evidence!.otherKeysBefore).toHaveLength(1);
    }
  }, 60_000);
});

describe("a key compromise, in every shell", () => {
  test("since at the record's signed time, anchored after the receipt was issued: revoked, KEY_COMPROMISE, revokedAt the message's consensus time, exit 1", async () => {
    const l = scenario("compromised since signedAt");
    expect(l.receipt.revocation).toBeNull();
    const runs = await inEveryShell(l);
    expectOutcome(runs, "revoked", 1, ["keyCompromise"]);
    const at = l.topic.messages[2]!.consensusAt;
    const [s, n] = at.split(".") as [string, string];
    const revokedAt = new Date(Number(s) * 1000 + Math.floor(Number(n) / 1e6)).toISOString();
    for (const r of runs) {
      expect(r.report!.revocation).toEqual({ reason: "KEY_COMPROMISE", revokedAt, sequenceNumber: 3, consensusAt: at });
      expect(check(r, "revocationScan").status).toBe("pass");
      expect(check(r, "keyCompromise").evidence!.compromises).toEqual([expect.objectContaining({ sequenceNumber: 3, since: l.record.authenticatedAt, covers: true })]);
    }
    // The human output says it too.
    let text = "";
    expect(await runVerifyReceipt(await argsOf(l), { ...nodeIo(), stdout: (t) => void (text += t), stderr: () => {} })).toBe(1);
    expect(text).toContain("KEY_COMPROMISE");
  }, 60_000);

  test("since one millisecond after the signed time: verified_org, the compromise reported in keyCompromise's evidence", async () => {
    const runs = await inEveryShell(scenario("compromised later"));
    expectOutcome(runs, "verified_org", 0, []);
    for (const r of runs) expect(check(r, "keyCompromise").detail).toContain("this record is unaffected");
  }, 60_000);

  test("a key_compromise on a topic without a submit key: signature_invalid (topicSubmitKey), never revoked by what anyone could write", async () => {
    const runs = await inEveryShell(scenario("compromise without submit key"));
    for (const r of runs) {
      expect({ shell: r.shell, verdict: r.report!.verdict, code: r.code }).toEqual({ shell: r.shell, verdict: "signature_invalid", code: 1 });
      expect(check(r, "topicSubmitKey").status).toBe("fail");
    }
  }, 60_000);
});

describe("the scan's bound", () => {
  test("a topic longer than --max-scan-pages: unverifiable, exit 1, saying how to raise it; raised, verified_org", async () => {
    const l = scenario("long topic");
    const runs = await inEveryShell(l, "--max-scan-pages", "1");
    expectOutcome(runs, "unverifiable", 1, ["mirrors"]);
    for (const r of runs) expect(check(r, "mirrors").detail).toMatch(/the topic scan stopped after 1 pages \(100 messages\) before the topic's end; .*raise the bound with --max-scan-pages N \(now 1 pages of 100 messages\)/);
    expectOutcome(await inEveryShell(l, "--max-scan-pages", "2"), "verified_org", 0, []);
  }, 60_000);

  test("--max-scan-pages that is not a whole number ≥ 1 is a usage error, exit 2", async () => {
    const l = scenario("replaced after");
    for (const bad of ["0", "x", "-1"]) {
      let stderr = "";
      const code = await runVerifyReceipt([...(await argsOf(l)), "--max-scan-pages", bad], { ...nodeIo(), stdout: () => {}, stderr: (t) => void (stderr += t) });
      expect({ bad, code, stderr }).toEqual({ bad, code: 2, stderr: "docverify verify-receipt: --max-scan-pages must be an integer from 1 to 999999999 (see --help)\n" });
    }
  });
});

/** The text-output arguments for `l`, its mirror nodes started. */
async function argsOf(l: Lifecycle): Promise<string[]> {
  const dir = tempDir("docverify-lifecycle-");
  writeFileSync(join(dir, "receipt.json"), JSON.stringify(l.receipt));
  writeFileSync(join(dir, "document.bin"), l.document);
  const mirrors = mirrorsFor(l);
  return [join(dir, "receipt.json"), "--file", join(dir, "document.bin"), "--no-builtin-mirrors", ...mirrors.urls.flatMap((u) => ["--mirror", u])];
}
