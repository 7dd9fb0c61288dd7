/**
 * An RFC 9162 inclusion proof (Certificate Transparency v2, §2.1.3.2), checked with SHA-256: the
 * verifier's own implementation, written from the RFC (not imported from the appliance's
 * src/anchoring/merkle.ts, which builds the trees: a verifier that shared the builder's code would
 * share its mistakes). test/anchoring/merkle.test.ts holds both to the RFC's recursive definitions.
 *
 *   leaf hash = SHA-256(0x00 ‖ leaf message)      node hash = SHA-256(0x01 ‖ left ‖ right)
 */
import { sha256 } from "@noble/hashes/sha2.js";

const HASH_BYTES = 32;

/** SHA-256(0x00 ‖ message): the hash of a leaf whose bytes are `message`. */
export function leafHashOf(message: Uint8Array): Uint8Array {
  const input = new Uint8Array(1 + message.length);
  input.set(message, 1);
  return sha256(input);
}

function nodeHashOf(left: Uint8Array, right: Uint8Array): Uint8Array {
  const input = new Uint8Array(1 + 2 * HASH_BYTES);
  input[0] = 0x01;
  input.set(left, 1);
  input.set(right, 1 + HASH_BYTES);
  return sha256(input);
}

/**
 * The root that leaf `leafIndex` of a tree of `treeSize` leaves, with hash `leafHash`, proves by
 * `path` (leaf to root), by the algorithm of RFC 9162 §2.1.3.2; null for a proof that is
 * malformed: an index outside the tree, a path too short or too long for the leaf's place, a hash
 * that is not 32 bytes. The caller compares the root with the one it trusts.
 */
export function rootFromInclusion(leafHash: Uint8Array, leafIndex: number, treeSize: number, path: readonly Uint8Array[]): Uint8Array | null {
  if (!Number.isSafeInteger(leafIndex) || !Number.isSafeInteger(treeSize) || leafIndex < 0 || treeSize < 1 || leafIndex >= treeSize) return null;
  if (!(leafHash instanceof Uint8Array) || leafHash.length !== HASH_BYTES) return null;
  // Halving by division, not >>: an index may pass 2^31 (never in a batch, but the arithmetic
  // should not be what decides).
  const half = (x: number) => Math.floor(x / 2);
  let fn = leafIndex;
  let sn = treeSize - 1;
  let r = leafHash;
  for (const p of path) {
    if (!(p instanceof Uint8Array) || p.length !== HASH_BYTES) return null;
    // A path longer than the leaf's depth.
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHashOf(p, r);
      // A right edge: skip the levels where this subtree has no right sibling.
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      r = nodeHashOf(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  // A path shorter than the leaf's depth.
  return sn === 0 ? r : null;
}
