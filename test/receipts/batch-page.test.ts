/**
 * Batched records on the receipt verifier's page (docs/receipts.md §4.4), opened from disk in
 * Chromium, against a real local ledger whose topic holds batch messages
 * (test/verifier/batch-ledger.ts): a record whose creation message is a leaf of a batch verifies;
 * its receipt with a path element, the leaf message, the leaf index or the tree size changed is
 * signature_invalid, the inclusion check failing; a record a later batch lists in `revoked` shows
 * revoked, with the reason when its receipt proves the revocation leaf, and saying the reason is not
 * on the ledger otherwise.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cleanup } from "../support/env.ts";
import { batchLedger, files, TAMPERS, type BatchLedger } from "../verifier/batch-ledger.ts";
import { pageOnDisk, pageVerify, type PageRun } from "./e2e-rig.ts";

afterAll(cleanup);

let l: BatchLedger;
let page: string;

beforeAll(async () => {
  l = await batchLedger();
  page = pageOnDisk();
}, 60_000);

const onThePage = (receipt: Record<string, any>, document: Uint8Array): Promise<PageRun> => pageVerify(page, { ...files(receipt, document), mirrors: [...l.mirrors] });
const failed = (run: PageRun) => run.checks.filter((c) => c.status === "fail").map((c) => c.name);
const detail = (run: PageRun, name: string) => run.checks.find((c) => c.name === name)?.detail ?? "";

describe("the page: a record anchored in a batch", () => {
  test("verified_org, the inclusion check naming its leaf and batch", async () => {
    const run = await onThePage(l.a.receipt, l.a.record.document);
    expect({ verdict: run.verdict, failed: failed(run), error: run.error, console: run.consoleErrors }).toEqual({ verdict: "verified_org", failed: [], error: "", console: [] });
    expect(detail(run, "inclusion")).toBe("leaf 1 of batch 1 (5 leaves): the root recomputed from the leaf message and its path of 3 hashes is the batch message's");
  }, 60_000);

  test("a path element, the leaf message, the leaf index or the tree size changed: signature_invalid, inclusion failed", async () => {
    for (const [what, tamper] of Object.entries(TAMPERS)) {
      const receipt = structuredClone(l.a.receipt);
      tamper(receipt);
      const run = await onThePage(receipt, l.a.record.document);
      expect({ what, verdict: run.verdict, inclusion: failed(run).includes("inclusion") }).toEqual({ what, verdict: "signature_invalid", inclusion: true });
    }
  }, 60_000);
});

describe("the page: a record revoked in a later batch", () => {
  test("its receipt issued before: revoked, the revocation line saying the reason is not on the ledger", async () => {
    const run = await onThePage(l.b.receipt, l.b.record.document);
    expect({ verdict: run.verdict, failed: failed(run) }).toEqual({ verdict: "revoked", failed: ["revocationScan"] });
    expect(run.revocation).toContain(`ledger message ${l.batch2.sequenceNumber}`);
    expect(run.revocation).toContain("the reason is not on the ledger");
  }, 60_000);

  test("its receipt issued after, proving its revocation leaf: revoked, reason SUPERSEDED", async () => {
    const run = await onThePage(l.bRevoked, l.b.record.document);
    expect({ verdict: run.verdict, failed: failed(run) }).toEqual({ verdict: "revoked", failed: ["revocationScan"] });
    expect(run.revocation).toContain("SUPERSEDED");
  }, 60_000);
});
