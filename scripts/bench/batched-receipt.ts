/**
 * What `receipt-public` measures must be today's receipts: those of records anchored in batches
 * (docs/anchoring.md "Batches"), each carrying its leaf and inclusion proof. Before the load, the
 * bench asks the server for one receipt of the scenario's records and checks it is one: the
 * anchor's message a batch message of the record's organisation, `inclusion` present, its leaf the
 * record's message, and the root recomputed from the leaf and its path (the standalone verifier's
 * own code, src/verifier/inclusion.ts) the batch message's. A dataset written one message per
 * record would otherwise be measured without a word.
 */
import { leafHashOf, rootFromInclusion } from "../../src/verifier/inclusion.ts";

export interface BatchedReceipt {
  readonly recordId: string;
  /** The receipt's bytes as served. */
  readonly bytes: number;
  readonly treeSize: number;
  readonly leafIndex: number;
  /** Hashes on the inclusion path. */
  readonly pathLength: number;
}

type Json = Record<string, any>;

const b64 = (s: string) => new Uint8Array(Buffer.from(s, "base64"));

/** The receipt of `recordId` from the server at `url`, checked to be a batched record's; throws with the reason otherwise. */
export async function checkBatchedReceipt(url: string, recordId: string): Promise<BatchedReceipt> {
  const res = await fetch(`${url}/verify/${recordId}/receipt`);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET /verify/${recordId}/receipt answered ${res.status}: ${text.slice(0, 300)}`);
  const receipt = JSON.parse(text) as Json;
  const anchor = receipt.anchor as Json;
  const inclusion = anchor?.inclusion as Json | null;
  if (inclusion === null || inclusion === undefined) throw new Error(`the receipt of ${recordId} has no inclusion proof: its record was anchored as a message of its own, not in a batch`);
  const batch = JSON.parse(Buffer.from(anchor.message as string, "base64").toString("utf8")) as Json;
  if (batch.type !== "batch" || batch.size !== inclusion.treeSize) throw new Error(`the receipt of ${recordId} names a ${batch.type} message of size ${batch.size} for a tree of ${inclusion.treeSize}`);
  const leafMessage = b64(inclusion.leafMessage as string);
  const leaf = JSON.parse(Buffer.from(leafMessage).toString("utf8")) as Json;
  if (leaf.type !== "record" || leaf.recordId !== recordId) throw new Error(`the receipt of ${recordId} carries the leaf of ${leaf.type} ${leaf.recordId}`);
  const path = (inclusion.path as string[]).map(b64);
  const root = rootFromInclusion(leafHashOf(leafMessage), inclusion.leafIndex as number, inclusion.treeSize as number, path);
  if (root === null || Buffer.from(root).toString("hex") !== batch.root) throw new Error(`the inclusion proof in the receipt of ${recordId} does not lead to its batch's root`);
  return { recordId, bytes: Buffer.byteLength(text), treeSize: inclusion.treeSize as number, leafIndex: inclusion.leafIndex as number, pathLength: path.length };
}
