/**
 * Batched records in every command-line shell of the verifier (docs/receipts.md §1 "Batches",
 * §4.1): in-process (`runVerifyReceipt`), `bun src/main.ts verify-receipt` and the standalone
 * `node docverify-verify.mjs` built into a folder of its own, against a real local ledger whose
 * topic holds batch messages (batch-ledger.ts). A record whose creation message is a leaf of a batch
 * verifies; its receipt with a path element, the leaf message, the leaf index or the tree size
 * changed is signature_invalid, the inclusion check failing; a record that a later batch lists in
 * `revoked` is revoked, with the reason when its receipt proves the revocation leaf, without it
 * otherwise.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cleanup } from "../support/env.ts";
import { batchLedger, files, TAMPERS, type BatchLedger } from "./batch-ledger.ts";
import { runInShell, SHELLS, standaloneVerifier, type Shell, type ShellRun } from "./shells.ts";

afterAll(cleanup);


interface Report {
  verdict: string;
  public: boolean;
  revocation: { reason: string | null; revokedAt: string; sequenceNumber: number; consensusAt: string } | null;
  checks: { name: string; status: string; detail: string; evidence?: Record<string, any> }[];
}
type Run = ShellRun<Report>;

let standalone: string;
let l: BatchLedger;

beforeAll(async () => {
  [l, standalone] = await Promise.all([batchLedger(), standaloneVerifier()]);
}, 60_000);

const runIn = (shell: Shell, args: readonly string[]): Promise<Run> => runInShell<Report>(shell, args, standalone);

function argsFor(receipt: Record<string, any>, document: Uint8Array, ...more: string[]): string[] {
  const { receiptPath, documentPath } = files(receipt, document);
  return [receiptPath, "--file", documentPath, ...l.mirrors.flatMap((u) => ["--mirror", u]), ...more];
}

const inEveryShell = (receipt: Record<string, any>, document: Uint8Array, ...more: string[]) => {
  const args = argsFor(receipt, document, "--json", ...more);
  return Promise.all(SHELLS.map((s) => runIn(s, args)));
};

const check = (r: Run, name: string) => {
  const c = r.report!.checks.find((x) => x.name === name);
  if (c === undefined) throw new Error(`${r.shell}: no ${name} check`);
  return c;
};

/** Verdict, exit code and the checks that failed, the same in every shell. */
function expectOutcome(runs: readonly Run[], verdict: string, code: number, failed: string[]): void {
  for (const r of runs) {
    const notPassed = r.report!.checks.filter((c) => c.status === "fail").map((c) => c.name);
    expect({ shell: r.shell, verdict: r.report!.verdict, code: r.code, failed: notPassed }).toEqual({ shell: r.shell, verdict, code, failed });
  }
}

describe("a record anchored in a batch, on a real local ledger", () => {
  test("verified_org in every shell: the leaf's commitments, the root recomputed from its path is batch 1's", async () => {
    expect(l.a.receipt.anchor.sequenceNumber).toBe(l.batch1.sequenceNumber);
    expect(JSON.parse(Buffer.from(l.a.receipt.anchor.message, "base64").toString())).toMatchObject({ v: 1, type: "batch", orgId: l.orgId, batch: 1, size: 5 });
    const runs = await inEveryShell(l.a.receipt, l.a.record.document);
    expectOutcome(runs, "verified_org", 0, []);
    for (const r of runs) {
      expect(r.report!.public).toBe(false);
      expect(check(r, "inclusion").detail).toBe("leaf 1 of batch 1 (5 leaves): the root recomputed from the leaf message and its path of 3 hashes is the batch message's");
      expect(check(r, "messageCommitments").detail).toContain("the leaf message (inclusion.leafMessage) commits to this record's");
      expect(check(r, "ledgerMessage").status).toBe("pass");
    }
    // The human output, in the standalone verifier.
    const text = await runIn("node", argsFor(l.a.receipt, l.a.record.document));
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("Verdict: verified_org");
    expect(text.stdout).toMatch(/pass +inclusion +leaf 1 of batch 1 \(5 leaves\)/);
  }, 60_000);

  for (const [what, tamper] of Object.entries(TAMPERS)) {
    test(`${what} changed: signature_invalid in every shell, the inclusion check failing`, async () => {
      const receipt = structuredClone(l.a.receipt);
      tamper(receipt);
      const runs = await inEveryShell(receipt, l.a.record.document);
      for (const r of runs) {
        expect({ shell: r.shell, verdict: r.report!.verdict, code: r.code, inclusion: check(r, "inclusion").status }).toEqual({ shell: r.shell, verdict: "signature_invalid", code: 1, inclusion: "fail" });
      }
    }, 60_000);
  }
});

describe("a record revoked in a later batch", () => {
  test("its receipt issued before the revocation: revoked in every shell, the reason not on the ledger", async () => {
    const runs = await inEveryShell(l.b.receipt, l.b.record.document);
    expectOutcome(runs, "revoked", 1, ["revocationScan"]);
    for (const r of runs) {
      expect(r.report!.revocation).toMatchObject({ reason: null, sequenceNumber: l.batch2.sequenceNumber, consensusAt: l.batch2.consensusAt });
      expect(check(r, "revocationScan").detail).toContain(`revoked in batch 2, message #${l.batch2.sequenceNumber}`);
      expect(check(r, "revocationScan").detail).toContain("reason not on the ledger");
    }
    const text = await runIn("bun", argsFor(l.b.receipt, l.b.record.document));
    expect(text.stdout).toContain(`Revoked: by ledger message #${l.batch2.sequenceNumber} (consensus `);
    expect(text.stdout).toContain("a batch listing this record; the reason is not on the ledger");
  }, 60_000);

  test("its receipt issued after, proving its revocation leaf in batch 2: revoked, SUPERSEDED at the leaf's time", async () => {
    const runs = await inEveryShell(l.bRevoked, l.b.record.document);
    expectOutcome(runs, "revoked", 1, ["revocationScan"]);
    for (const r of runs) {
      expect(r.report!.revocation).toEqual({ reason: "SUPERSEDED", revokedAt: l.bRevoked.revocation.revokedAt, sequenceNumber: l.batch2.sequenceNumber, consensusAt: l.batch2.consensusAt });
      expect(check(r, "revocationScan").detail).toContain("proven by its inclusion proof");
    }
  }, 60_000);
});
