/**
 * Batched records on a real local ledger, for every shell of the verifier (docs/receipts.md §1
 * "Batches"): a topic of its own (test/support/forgery.ts, `openForgerTopic`) with an organisation's
 * key announcement, then batch 1, a batch message whose tree holds the real creation messages of
 * records A and B among three other leaves, then batch 2, whose leaves are B's revocation and another
 * record's creation and whose `revoked` lists B. The receipts are as the appliance issues them:
 * `anchor.message` the batch message as the ledger's mirror shows it, `anchor.inclusion` the
 * record's leaf and path (src/anchoring/merkle.ts). The ledger's two mirror ports are two witnesses:
 * the first as it is, the second behind an honest proxy on a loopback address of its own.
 */
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { merkleTree } from "../../src/anchoring/merkle.ts";
import { startLocalLedger } from "../../src/local-ledger/index.ts";
import { encodeBatchMessage, encodeRevocationMessage } from "../../src/records/messages.ts";
import { onCleanup, tempDir } from "../support/env.ts";
import { announcementBytes, forgerKeys, openForgerTopic, receiptOf, signRecord, type SignedRecord, type TopicMessage } from "../support/forgery.ts";
import { startLyingMirror } from "../support/lying-mirror.ts";
import { nextLoopback } from "../support/loopback.ts";

const b64 = (b: Uint8Array) => Buffer.from(b).toString("base64");

/** The receipt's `inclusion` for leaf `leafIndex` of `leaves`. */
export function inclusionOf(leaves: readonly Uint8Array[], leafIndex: number): Record<string, any> {
  const tree = merkleTree(leaves);
  return { algorithm: "RFC9162-SHA256", leafMessage: b64(leaves[leafIndex]!), leafIndex, treeSize: leaves.length, path: tree.paths[leafIndex]!.map(b64) };
}

export interface BatchLedger {
  /** Two witnesses of the ledger on two hosts. */
  readonly mirrors: [string, string];
  readonly orgId: string;
  /** Record A (leaf 1 of batch 1): never revoked. */
  readonly a: { readonly record: SignedRecord; readonly receipt: Record<string, any> };
  /** Record B (leaf 2 of batch 1), revoked in batch 2; its receipt as issued before the revocation (`revocation: null`). */
  readonly b: { readonly record: SignedRecord; readonly receipt: Record<string, any> };
  /** B's receipt as issued after batch 2: its `revocation` with batch 2 as anchor and B's revocation leaf proven in it. */
  readonly bRevoked: Record<string, any>;
  readonly batch1: TopicMessage;
  readonly batch2: TopicMessage;
}

export async function batchLedger(): Promise<BatchLedger> {
  const ledger = await startLocalLedger({ dataDir: tempDir("docverify-batch-ledger-"), secondMirrorPort: 0, consensusMs: 100 });
  onCleanup(() => ledger.close());
  const proxy = await startLyingMirror({ upstream: ledger.mirrorUrls[1]!, lie: { kind: "none" }, hostname: nextLoopback() });
  onCleanup(() => proxy.close());
  const topic = await openForgerTopic(ledger.mirrorUrl);
  const keys = forgerKeys();
  const orgId = randomUUID();
  const announced = await topic.submit(announcementBytes({ orgId, name: "Acme Batch Ltd" }, keys));
  const [a, b, c, d] = [signRecord(keys), signRecord(keys), signRecord(keys), signRecord(keys)];
  const revocationOf = (recordId: string, reason = "SUPERSEDED") => encodeRevocationMessage({ recordId, reason, revokedAtMs: Date.now() - 30_000 });
  const [gone1, gone2] = [randomUUID(), randomUUID()];
  const leaves1 = [revocationOf(gone1), a.message, b.message, c.message, revocationOf(gone2, "ERROR_IN_DOCUMENT")];
  const batch1 = await topic.submit(encodeBatchMessage({ orgId, batch: 1, size: leaves1.length, root: merkleTree(leaves1).root, revoked: [gone1, gone2] }));
  const receiptFor = (record: SignedRecord, leafIndex: number) => {
    const receipt = receiptOf(record, "local", topic.topicId, batch1, announced, [...ledger.mirrorUrls]);
    receipt.anchor.inclusion = inclusionOf(leaves1, leafIndex);
    return receipt;
  };
  const receiptA = receiptFor(a, 1);
  const receiptB = receiptFor(b, 2);
  const revokedAtMs = Date.now() - 10_000;
  const leaves2 = [encodeRevocationMessage({ recordId: b.recordId, reason: "SUPERSEDED", revokedAtMs }), d.message];
  const batch2 = await topic.submit(encodeBatchMessage({ orgId, batch: 2, size: leaves2.length, root: merkleTree(leaves2).root, revoked: [b.recordId] }));
  const bRevoked = structuredClone(receiptB);
  bRevoked.revocation = {
    reason: "SUPERSEDED",
    revokedAt: new Date(revokedAtMs).toISOString(),
    anchor: {
      network: "local",
      topicId: topic.topicId,
      sequenceNumber: batch2.sequenceNumber,
      consensusAt: batch2.consensusAt,
      transactionId: batch2.transactionId,
      message: b64(batch2.message),
      runningHash: b64(batch2.runningHash),
      inclusion: inclusionOf(leaves2, 0),
    },
  };
  topic.close();
  return { mirrors: [ledger.mirrorUrl, proxy.url], orgId, a: { record: a, receipt: receiptA }, b: { record: b, receipt: receiptB }, bRevoked, batch1, batch2 };
}

/** `receipt` and `document` written to a folder of their own: the paths every shell takes. */
export function files(receipt: Record<string, any>, document: Uint8Array): { receiptPath: string; documentPath: string } {
  const dir = tempDir("docverify-batch-");
  const receiptPath = join(dir, "receipt.json");
  const documentPath = join(dir, "document.bin");
  writeFileSync(receiptPath, JSON.stringify(receipt, null, 2));
  writeFileSync(documentPath, document);
  return { receiptPath, documentPath };
}

/** The ways a batched receipt is changed, each caught by the inclusion check. */
export const TAMPERS: Record<string, (receipt: Record<string, any>) => void> = {
  "a path element": (r) => {
    const bytes = Buffer.from(r.anchor.inclusion.path[0], "base64");
    bytes[7]! ^= 0x01;
    r.anchor.inclusion.path[0] = bytes.toString("base64");
  },
  "the leaf message": (r) => {
    const bytes = Buffer.from(r.anchor.inclusion.leafMessage, "base64");
    bytes[bytes.length - 5]! ^= 0x01;
    r.anchor.inclusion.leafMessage = bytes.toString("base64");
  },
  "the leaf index": (r) => (r.anchor.inclusion.leafIndex = 3),
  "the tree size": (r) => (r.anchor.inclusion.treeSize = 6),
};
