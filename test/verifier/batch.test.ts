/**
 * A record anchored in a batch (docs/receipts.md §1 "Batches", §2.1 `inclusion`, §4.1), through
 * verifyReceipt against fake mirror nodes (fixtures.ts): the receipt's anchor is the batch message,
 * its inclusion the record's creation message and its path. It verifies at every place in trees of
 * several sizes; a path element, the leaf, the index or the size changed, a proof missing for a
 * batch or given for a record anchored alone, a batch of another organisation, each fail; a batch
 * that lists the record among its revocations revokes it, with the reason when the receipt's own
 * revocation proves its leaf in that batch, without it otherwise.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { parseReceipt, renderReport, verifyReceipt, type Report, type VerifyOptions } from "../../src/verifier/index.ts";
import { cleanup } from "../support/env.ts";
import { announcementBytes, buildBatchedReceipt, buildReceipt, consensusOf, DOC_HASH, fakeMirror, inclusionOf, ORG_ID, type BatchedBuilt, type Built } from "./fixtures.ts";

afterAll(cleanup);

async function verify(built: Built, options: Partial<VerifyOptions> = {}): Promise<Report> {
  const [a, b] = [fakeMirror(built.ledger), fakeMirror(built.ledger)];
  return verifyReceipt(parseReceipt(JSON.stringify(built.receipt)), { docHash: DOC_HASH, mirrors: [a.url, b.url], builtinMirrors: false, timeoutMs: 2_000, ...options });
}

const check = (r: Report, name: string) => r.checks.find((c) => c.name === name)!;
const failed = (r: Report) => r.checks.filter((c) => c.status === "fail").map((c): string => c.name);

function flipBase64(text: string, at = 0): string {
  const bytes = Buffer.from(text, "base64");
  bytes[at]! ^= 0x01;
  return bytes.toString("base64");
}

describe("a batched record", () => {
  test("verified_org: the commitments read from the leaf message, the root recomputed from its path is the batch message's", async () => {
    const built = buildBatchedReceipt();
    const r = await verify(built);
    expect({ verdict: r.verdict, failed: failed(r) }).toEqual({ verdict: "verified_org", failed: [] });
    expect(check(r, "inclusion")).toMatchObject({ status: "pass", detail: "leaf 1 of batch 1 (5 leaves): the root recomputed from the leaf message and its path of 3 hashes is the batch message's" });
    expect(check(r, "inclusion").evidence).toMatchObject({ algorithm: "RFC9162-SHA256", leafIndex: 1, treeSize: 5, batchMessage: { orgId: ORG_ID, batch: 1, size: 5 } });
    expect(check(r, "messageCommitments").detail).toBe("the leaf message (inclusion.leafMessage) commits to this record's id, hash, signed time, key and both signatures");
    expect(check(r, "ledgerMessage").status).toBe("pass");
    expect(check(r, "keyWindow").detail).toContain("the record's message #2 follows the announcement");
    expect(renderReport(r)).toContain("pass  inclusion           leaf 1 of batch 1 (5 leaves)");
  });

  test("at every place of trees of 1, 2, 3, 7 and 8 leaves", async () => {
    for (const size of [1, 2, 3, 7, 8]) {
      for (let leafIndex = 0; leafIndex < size; leafIndex++) {
        const r = await verify(buildBatchedReceipt({ size, leafIndex }));
        expect({ size, leafIndex, verdict: r.verdict, failed: failed(r) }).toEqual({ size, leafIndex, verdict: "verified_org", failed: [] });
      }
    }
  });

  test("an unbatched receipt verifies exactly as before: inclusion null, the record its own message", async () => {
    const r = await verify(buildReceipt());
    expect(r.verdict).toBe("verified_org");
    expect(check(r, "inclusion")).toEqual({ name: "inclusion", status: "pass", detail: "none: the record is its own ledger message" });
  });

  test("offline: the proof is still checked (local arithmetic), the verdict unverifiable", async () => {
    const r = await verify(buildBatchedReceipt(), { offline: true });
    expect(r.verdict).toBe("unverifiable");
    expect(check(r, "inclusion").status).toBe("pass");
  });
});

describe("a batched receipt changed: signature_invalid, the inclusion check failing", () => {
  const cases: [string, (b: BatchedBuilt) => void, string[], RegExp][] = [
    ["a path element, one bit", (b) => (b.receipt.anchor.inclusion.path[1] = flipBase64(b.receipt.anchor.inclusion.path[1])), ["inclusion"], /is not batch 1's root: the leaf is not in that batch/],
    ["the last path element dropped", (b) => b.receipt.anchor.inclusion.path.pop(), ["inclusion"], /malformed: a path of 2 hashes does not fit leaf 1 of a tree of 5 leaves/],
    ["the leaf message, one byte", (b) => (b.receipt.anchor.inclusion.leafMessage = flipBase64(b.receipt.anchor.inclusion.leafMessage, 40)), ["messageCommitments", "inclusion"], /is not batch 1's root/],
    ["the leaf index, to its neighbour's", (b) => (b.receipt.anchor.inclusion.leafIndex = 0), ["inclusion"], /is not batch 1's root/],
    ["the leaf index, past the tree", (b) => (b.receipt.anchor.inclusion.leafIndex = 5), ["inclusion"], /malformed: leaf index 5 is outside a tree of 5 leaves/],
    ["the tree size", (b) => (b.receipt.anchor.inclusion.treeSize = 6), ["inclusion"], /the proof is for a tree of 6 leaves; batch 1 has 5/],
    ["the proof removed", (b) => (b.receipt.anchor.inclusion = null), ["messageCommitments", "inclusion"], /is a batch message \(batch 1\), but the receipt has no inclusion proof/],
  ];
  for (const [what, change, fails, detail] of cases) {
    test(what, async () => {
      const built = buildBatchedReceipt();
      change(built);
      const r = await verify(built);
      expect({ verdict: r.verdict, failed: failed(r) }).toEqual({ verdict: "signature_invalid", failed: fails });
      expect(check(r, "inclusion").detail).toMatch(detail);
    });
  }

  test("another leaf of the same batch with its own true path: the proof holds, the commitments fail (it is another record's)", async () => {
    const built = buildBatchedReceipt();
    built.receipt.anchor.inclusion = inclusionOf(built.leaves, 0);
    const r = await verify(built);
    expect({ verdict: r.verdict, failed: failed(r) }).toEqual({ verdict: "signature_invalid", failed: ["messageCommitments"] });
    expect(check(r, "messageCommitments").detail).toContain("not a version-1 record message");
  });

  test("a record anchored alone with an inclusion proof: the anchored message is no batch message", async () => {
    const built = buildReceipt();
    built.receipt.anchor.inclusion = { algorithm: "RFC9162-SHA256", leafMessage: built.receipt.anchor.message, leafIndex: 0, treeSize: 1, path: [] };
    const r = await verify(built);
    expect({ verdict: r.verdict, failed: failed(r) }).toEqual({ verdict: "signature_invalid", failed: ["inclusion"] });
    expect(check(r, "inclusion").detail).toBe("the receipt has an inclusion proof, but the anchored message is not a version-1 batch message");
  });

  test("a batch of another organisation than the key announcement's", async () => {
    const r = await verify(buildBatchedReceipt({ orgId: "0190f5a3-0000-7000-8000-0000000000ff" }));
    expect({ verdict: r.verdict, failed: failed(r) }).toEqual({ verdict: "signature_invalid", failed: ["inclusion"] });
    expect(check(r, "inclusion").detail).toBe(`batch 1 is organisation 0190f5a3-0000-7000-8000-0000000000ff's, not the key announcement's (${ORG_ID})`);
  });

  test("mirror nodes serving another batch message than the receipt's: ledgerMessage fails", async () => {
    const built = buildBatchedReceipt();
    const other = buildBatchedReceipt({ size: 6 });
    built.ledger.messages[1]!.message = other.batchMessage;
    const r = await verify(built);
    expect(r.verdict).toBe("signature_invalid");
    expect(failed(r)).toEqual(["ledgerMessage"]);
  });
});

describe("the key's window, by the batch message's place on the topic", () => {
  /** The batched receipt with `message` on the topic at #2, before the batch message (then #3). */
  function withBefore(message: Uint8Array): BatchedBuilt {
    const built = buildBatchedReceipt();
    const messages = built.ledger.messages;
    messages.splice(1, 0, { sequenceNumber: 0, consensusAt: "", message, runningHash: new Uint8Array(48).fill(5) });
    messages.forEach((m, i) => Object.assign(m, { sequenceNumber: i + 1, consensusAt: consensusOf(i + 1) }));
    Object.assign(built.receipt.anchor, { sequenceNumber: 3, consensusAt: consensusOf(3) });
    return built;
  }

  test("another key of the organisation announced between the announcement and the batch message: signature_invalid, keyWindow failing", async () => {
    const r = await verify(withBefore(announcementBytes("Acme Ltd", { keyFingerprint: "5a".repeat(32) })));
    expect({ verdict: r.verdict, failed: failed(r) }).toEqual({ verdict: "signature_invalid", failed: ["keyWindow"] });
    expect(check(r, "keyWindow").detail).toContain("between the key's announcement #1 and the record's message #3");
  });

  test("the same key announced again there (a change of name): verified_org", async () => {
    const r = await verify(withBefore(announcementBytes("Acme Holdings Ltd")));
    expect({ verdict: r.verdict, failed: failed(r) }).toEqual({ verdict: "verified_org", failed: [] });
  });
});

describe("revoked in a batch", () => {
  test("a later batch listing the record, the receipt issued before it: revoked, the reason not on the ledger, at the batch's consensus time", async () => {
    const built = buildBatchedReceipt({ revokedInBatch: true, fillers: 2 });
    const r = await verify(built);
    const at = built.ledger.messages[4]!.consensusAt;
    expect({ verdict: r.verdict, failed: failed(r) }).toEqual({ verdict: "revoked", failed: ["revocationScan"] });
    const [s, n] = at.split(".") as [string, string];
    expect(r.revocation).toEqual({ reason: null, revokedAt: new Date(Number(s) * 1000 + Math.floor(Number(n) / 1e6)).toISOString(), sequenceNumber: 5, consensusAt: at });
    expect(check(r, "revocationScan").detail).toBe(`revoked in batch 2, message #5, consensus ${at}; reason not on the ledger: the receipt names no revocation of the record`);
    expect(renderReport(r)).toMatch(/Revoked: by ledger message #5 \(consensus [^)]+\), a batch listing this record; the reason is not on the ledger\n/);
  });

  test("with the receipt's revocation proving its leaf in that batch: revoked, its reason and time", async () => {
    const built = buildBatchedReceipt({ revokedInBatch: true });
    built.receipt.revocation = built.revocation;
    const r = await verify(built);
    expect({ verdict: r.verdict, failed: failed(r) }).toEqual({ verdict: "revoked", failed: ["revocationScan"] });
    expect(r.revocation).toMatchObject({ reason: "SUPERSEDED", revokedAt: "2026-01-16T09:30:00.123Z", sequenceNumber: 3 });
    expect(check(r, "revocationScan").detail).toContain("(batch 2, message #3, consensus");
    expect(check(r, "revocationScan").detail).toContain("the receipt's revocation, leaf 1 of that batch, proven by its inclusion proof");
    expect(renderReport(r)).toContain("Revoked: SUPERSEDED on 16 January 2026");
  });

  test("with the receipt's revocation proof changed, or naming another message: revoked all the same, the reason not on the ledger", async () => {
    const built0 = buildBatchedReceipt({ revokedInBatch: true });
    const changes: [(rev: Record<string, any>) => void, string][] = [
      [(rev) => (rev.anchor.inclusion.path[0] = flipBase64(rev.anchor.inclusion.path[0])), "the receipt's revocation proof does not hold"],
      [(rev) => (rev.anchor.inclusion = null), "the receipt's revocation has no inclusion proof"],
      [(rev) => (rev.anchor.sequenceNumber = 4), "the receipt's revocation is anchored elsewhere (message #4)"],
      [(rev) => (rev.anchor.inclusion = inclusionOf(built0.revokingLeaves!, 0)), "the receipt's proven leaf is not a revocation of this record"],
    ];
    for (const [change, why] of changes) {
      const built = buildBatchedReceipt({ revokedInBatch: true });
      built.receipt.revocation = structuredClone(built.revocation);
      change(built.receipt.revocation);
      const r = await verify(built);
      expect({ why, verdict: r.verdict, reason: r.revocation?.reason }).toEqual({ why, verdict: "revoked", reason: null });
      expect(check(r, "revocationScan").detail).toContain(`reason not on the ledger: ${why}`);
    }
  });

  test("created and revoked in one batch: its own batch message lists it, revoked", async () => {
    const r = await verify(buildBatchedReceipt({ revokedInOwnBatch: true }));
    expect({ verdict: r.verdict, failed: failed(r) }).toEqual({ verdict: "revoked", failed: ["revocationScan"] });
    expect(r.revocation).toMatchObject({ reason: null, sequenceNumber: 2 });
  });

  test("a batch listing only other records revokes nothing", async () => {
    const built = buildBatchedReceipt();
    const r = await verify(built);
    // The record's own batch lists four other records.
    expect(JSON.parse(new TextDecoder().decode(built.batchMessage)).revoked).toHaveLength(4);
    expect(r.revocation).toBeNull();
  });
});
