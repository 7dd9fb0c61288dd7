/**
 * The Merkle tree of a batch (docs/receipts.md §1, "Batches"): RFC 9162 §2.1 with SHA-256, the
 * appliance's side. The verifier checks proofs with its own implementation
 * (src/verifier/inclusion.ts); test/anchoring/merkle.test.ts holds both to the RFC's recursive
 * definitions, written out a third time.
 *
 *   leaf hash  = SHA-256(0x00 ‖ leaf message bytes)
 *   node hash  = SHA-256(0x01 ‖ left ‖ right)
 *   MTH(D[n])  = node(MTH(D[0:k]), MTH(D[k:n])), k the largest power of two < n; one leaf: its leaf hash
 *   PATH(m, D[n]) = PATH(m, D[0:k]) : MTH(D[k:n]) for m < k, PATH(m − k, D[k:n]) : MTH(D[0:k]) otherwise
 *
 * What `merkleTree` guarantees: the root is MTH of the leaves in the order given, and `paths[i]` is
 * PATH(i, D[n]), leaf to root, for every leaf, computed in one pass over the tree (each node hashed
 * once, each path element appended once: O(n log n) for n leaves). Pure: no state, no clock.
 */
import { createHash } from "node:crypto";

/** Every hash of the tree is a SHA-256 digest. */
export const HASH_BYTES = 32;

const LEAF_PREFIX = new Uint8Array([0x00]);
const NODE_PREFIX = new Uint8Array([0x01]);

/** SHA-256(0x00 ‖ message): a leaf's hash. */
export function leafHash(message: Uint8Array): Uint8Array {
  return new Uint8Array(createHash("sha256").update(LEAF_PREFIX).update(message).digest());
}

/** SHA-256(0x01 ‖ left ‖ right): an interior node's hash. */
export function nodeHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  return new Uint8Array(createHash("sha256").update(NODE_PREFIX).update(left).update(right).digest());
}

export interface MerkleTree {
  /** MTH of the leaves, 32 bytes. */
  readonly root: Uint8Array;
  /** `paths[i]`: leaf i's inclusion path, leaf to root (empty for a tree of one leaf). */
  readonly paths: Uint8Array[][];
}

/** The largest power of two strictly less than `n` (n ≥ 2). */
function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** The tree over `leafMessages` (at least one), its root and every leaf's inclusion path. */
export function merkleTree(leafMessages: readonly Uint8Array[]): MerkleTree {
  if (!Array.isArray(leafMessages) || leafMessages.length === 0) throw new RangeError("a Merkle tree needs at least one leaf");
  for (const m of leafMessages) if (!(m instanceof Uint8Array)) throw new TypeError("every leaf must be bytes");
  const paths: Uint8Array[][] = leafMessages.map(() => []);
  // MTH(D[lo:hi]); on the way back up, each leaf of one half gets the other half's hash next on
  // its path: the halves' own paths were appended first, so every path runs leaf to root.
  const build = (lo: number, hi: number): Uint8Array => {
    if (hi - lo === 1) return leafHash(leafMessages[lo]!);
    const mid = lo + split(hi - lo);
    const left = build(lo, mid);
    const right = build(mid, hi);
    for (let i = lo; i < mid; i++) paths[i]!.push(right);
    for (let i = mid; i < hi; i++) paths[i]!.push(left);
    return nodeHash(left, right);
  };
  return { root: build(0, leafMessages.length), paths };
}

/** A path as one blob: its hashes concatenated, 32 bytes each, leaf to root (what the journal stores). */
export function concatPath(path: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(path.length * HASH_BYTES);
  path.forEach((h, i) => {
    if (!(h instanceof Uint8Array) || h.length !== HASH_BYTES) throw new TypeError(`path element ${i} must be ${HASH_BYTES} bytes`);
    out.set(h, i * HASH_BYTES);
  });
  return out;
}

/** The hashes of a blob `concatPath` wrote (each a copy); throws unless its length is a multiple of 32. */
export function splitPath(blob: Uint8Array): Uint8Array[] {
  if (!(blob instanceof Uint8Array) || blob.length % HASH_BYTES !== 0) throw new TypeError(`an inclusion path is a multiple of ${HASH_BYTES} bytes`);
  const out: Uint8Array[] = [];
  for (let at = 0; at < blob.length; at += HASH_BYTES) out.push(blob.slice(at, at + HASH_BYTES));
  return out;
}
