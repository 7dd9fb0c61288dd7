/**
 * The batch's Merkle tree (src/anchoring/merkle.ts, the appliance's) and the verifier's proof check
 * (src/verifier/inclusion.ts), each against a third computation written here from RFC 9162 alone:
 * the recursive MTH of §2.1.1 and PATH of §2.1.3.1, literally. Every tree size from 1 to 1,025 has
 * the same root three ways; for sizes around the powers of two every leaf's path is the RFC's and
 * verifies; the RFC's own seven-leaf example (§2.1.5; RFC 6962 §2.1.3) gives the paths it lists;
 * a path element, the leaf, the index or the size changed is refused. And the worked example of
 * docs/receipts.md is what the code computes.
 */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { concatPath, leafHash, merkleTree, nodeHash, splitPath } from "../../src/anchoring/merkle.ts";
import { encodeBatchMessage } from "../../src/records/messages.ts";
import { proveInclusion } from "../../src/verifier/batch.ts";
import { leafHashOf, rootFromInclusion } from "../../src/verifier/inclusion.ts";
import { ROOT } from "../support/env.ts";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const sha256 = (...parts: Uint8Array[]) => {
  const h = createHash("sha256");
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
};

// ---- RFC 9162 §2.1.1 and §2.1.3.1, as written there, over D[lo:hi] of `d`.

/** The largest power of two smaller than n (n > 1). */
function powerBelow(n: number): number {
  let p = 1;
  while (p * 2 < n) p *= 2;
  return p;
}

/**
 * MTH(D[n]). `memo` remembers MTH of each range already computed: the definition is a function of
 * the range alone, so this changes nothing but the time (PATH asks for the same subtrees again and
 * again, and trees over prefixes of one list of leaves share their ranges).
 */
function MTH(d: readonly Uint8Array[], lo: number, hi: number, memo: Map<string, Uint8Array>): Uint8Array {
  const key = `${lo}:${hi}`;
  const known = memo.get(key);
  if (known !== undefined) return known;
  const n = hi - lo;
  let h: Uint8Array;
  if (n === 0) h = sha256();
  else if (n === 1) h = sha256(new Uint8Array([0x00]), d[lo]!);
  else h = sha256(new Uint8Array([0x01]), MTH(d, lo, lo + powerBelow(n), memo), MTH(d, lo + powerBelow(n), hi, memo));
  memo.set(key, h);
  return h;
}

/** PATH(m, D[lo:hi]). */
function PATH(m: number, d: readonly Uint8Array[], lo: number, hi: number, memo: Map<string, Uint8Array>): Uint8Array[] {
  const n = hi - lo;
  if (n === 1) return [];
  const split = powerBelow(n);
  return m < split ? [...PATH(m, d, lo, lo + split, memo), MTH(d, lo + split, hi, memo)] : [...PATH(m - split, d, lo + split, hi, memo), MTH(d, lo, lo + split, memo)];
}

/** Leaves of different lengths, so no two leaves (and no leaf and node) collide by accident. */
const leaves = (n: number) => Array.from({ length: n }, (_, i) => new TextEncoder().encode(`leaf ${i} ${"x".repeat(i % 7)}`));
const ALL = leaves(1025);
const ORG = "0190f5a3-0000-7000-8000-000000000001";

describe("the root", () => {
  test("every tree size from 1 to 1,025: merkle.ts's root, and the root inclusion.ts recomputes from its paths, are the RFC's MTH", () => {
    // Every tree is over a prefix of ALL: MTH(D[lo:hi]) is the same range of ALL whatever the size.
    const memo = new Map<string, Uint8Array>();
    for (let n = 1; n <= 1025; n++) {
      const d = ALL.slice(0, n);
      const naive = hex(MTH(ALL, 0, n, memo));
      const tree = merkleTree(d);
      expect({ n, root: hex(tree.root) }).toEqual({ n, root: naive });
      expect(tree.paths).toHaveLength(n);
      for (const m of new Set([0, n >> 1, n - 1])) {
        const root = rootFromInclusion(leafHashOf(d[m]!), m, n, tree.paths[m]!);
        expect({ n, m, root: root === null ? null : hex(root) }).toEqual({ n, m, root: naive });
      }
    }
  });

  test("the leaf and node hashes: 0x00 and 0x01 before SHA-256's input, the same on both sides", () => {
    const m = new TextEncoder().encode("abc");
    expect(hex(leafHash(m))).toBe(hex(sha256(new Uint8Array([0]), m)));
    expect(hex(leafHashOf(m))).toBe(hex(leafHash(m)));
    expect(hex(leafHash(new Uint8Array()))).toBe("6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d");
    const [a, b] = [leafHash(m), leafHash(new Uint8Array([1]))];
    expect(hex(nodeHash(a, b))).toBe(hex(sha256(new Uint8Array([1]), a, b)));
    expect(hex(merkleTree([m]).root)).toBe(hex(leafHash(m)));
    expect(merkleTree([m]).paths).toEqual([[]]);
  });

  test("no leaves is refused, as is a leaf that is not bytes", () => {
    expect(() => merkleTree([])).toThrow(RangeError);
    expect(() => merkleTree(["x" as unknown as Uint8Array])).toThrow(TypeError);
  });
});

describe("the paths", () => {
  const SIZES = [1, 2, 3, 4, 5, 7, 8, 9, 31, 32, 33, 127, 255, 256, 257, 1000, 1024, 1025];

  test("every leaf of every size around a power of two: merkle.ts's path is the RFC's PATH, and verifies", () => {
    let checked = 0;
    for (const n of SIZES) {
      const d = ALL.slice(0, n);
      const memo = new Map<string, Uint8Array>();
      const tree = merkleTree(d);
      for (let m = 0; m < n; m++) {
        const naive = PATH(m, d, 0, n, memo).map(hex);
        expect({ n, m, path: tree.paths[m]!.map(hex) }).toEqual({ n, m, path: naive });
        expect(hex(rootFromInclusion(leafHashOf(d[m]!), m, n, tree.paths[m]!) ?? new Uint8Array())).toBe(hex(tree.root));
        checked++;
      }
    }
    expect(checked).toBe(SIZES.reduce((a, b) => a + b, 0));
  });

  test("1,024 leaves in well under a second (n log n: each node hashed once)", () => {
    const d = ALL.slice(0, 1024);
    const started = performance.now();
    const tree = merkleTree(d);
    expect(performance.now() - started).toBeLessThan(500);
    expect(tree.paths.every((p) => p.length === 10)).toBe(true);
  });

  test("a path stored as one blob of 32-byte hashes reads back the same", () => {
    const tree = merkleTree(ALL.slice(0, 33));
    for (const path of tree.paths) {
      const blob = concatPath(path);
      expect(blob.length).toBe(32 * path.length);
      expect(splitPath(blob).map(hex)).toEqual(path.map(hex));
    }
    expect(splitPath(new Uint8Array())).toEqual([]);
    expect(() => splitPath(new Uint8Array(33))).toThrow(TypeError);
    expect(() => concatPath([new Uint8Array(31)])).toThrow(TypeError);
  });
});

describe("RFC 9162 §2.1.5's example: seven leaves d0 … d6", () => {
  // The tree the RFC draws:
  //             hash
  //            /    \
  //           k      l
  //          / \    / \
  //         g   h  i   j
  //        / \ / \/ \  |
  //        a b c d e f d6
  //        | | | | | |
  //       d0 d1 d2 d3 d4 d5
  const d = leaves(7);
  const [a, b, c, dd, e, f, j] = d.map((x) => leafHash(x)) as [Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array];
  const g = nodeHash(a, b);
  const h = nodeHash(c, dd);
  const i = nodeHash(e, f);
  const k = nodeHash(g, h);
  const l = nodeHash(i, j);
  const root = nodeHash(k, l);
  const tree = merkleTree(d);

  test("the root is hash(k, l)", () => {
    expect(hex(tree.root)).toBe(hex(root));
  });

  test("the paths the RFC lists: d0 [b, h, l], d3 [c, g, l], d4 [f, j, k], d6 [i, k]", () => {
    const expected: [number, Uint8Array[]][] = [
      [0, [b, h, l]],
      [3, [c, g, l]],
      [4, [f, j, k]],
      [6, [i, k]],
    ];
    for (const [m, path] of expected) {
      expect({ m, path: tree.paths[m]!.map(hex) }).toEqual({ m, path: path.map(hex) });
      expect(hex(rootFromInclusion(leafHashOf(d[m]!), m, 7, path)!)).toBe(hex(root));
    }
  });
});

describe("a proof changed anywhere does not give the root", () => {
  const n = 13;
  const d = ALL.slice(0, n);
  const tree = merkleTree(d);
  const rootOf = (leaf: Uint8Array, m: number, size: number, path: readonly Uint8Array[]) => {
    const r = rootFromInclusion(leafHashOf(leaf), m, size, path);
    return r === null ? null : hex(r);
  };

  test("each path element with one bit flipped, for every leaf", () => {
    for (let m = 0; m < n; m++) {
      expect(rootOf(d[m]!, m, n, tree.paths[m]!)).toBe(hex(tree.root));
      for (let at = 0; at < tree.paths[m]!.length; at++) {
        const path = tree.paths[m]!.map((x) => x.slice());
        path[at]![at % 32]! ^= 0x01;
        expect(rootOf(d[m]!, m, n, path)).not.toBe(hex(tree.root));
      }
    }
  });

  test("another leaf, another index, a path too short or too long: never the root", () => {
    for (let m = 0; m < n; m++) {
      const path = tree.paths[m]!;
      // Another leaf's message at this index, and this leaf's message with a byte changed.
      const changed = d[m]!.slice();
      changed[0]! ^= 0x01;
      expect(rootOf(changed, m, n, path)).not.toBe(hex(tree.root));
      expect(rootOf(d[(m + 1) % n]!, m, n, path)).not.toBe(hex(tree.root));
      for (let other = 0; other < n + 2; other++) if (other !== m) expect(rootOf(d[m]!, other, n, path)).not.toBe(hex(tree.root));
      expect(rootOf(d[m]!, m, n, path.slice(0, -1))).toBeNull();
      expect(rootOf(d[m]!, m, n, [...path, path[0]!])).toBeNull();
    }
  });

  test("another size: the path alone does not always bind it, so the verifier holds treeSize to the batch message's size", () => {
    // Leaf 3 of 13 and of 14: the same left subtree of 8 and the same hashes on the way up, so the
    // same root (RFC 9162 leaves the size to the signed tree head; here, the batch message).
    expect(rootOf(d[3]!, 3, 14, tree.paths[3]!)).toBe(hex(tree.root));
    const batch = encodeBatchMessage({ orgId: ORG, batch: 1, size: n, root: tree.root, revoked: [] });
    const proof = (m: number, treeSize: number) => ({ algorithm: "RFC9162-SHA256" as const, leafMessage: d[m]!, leafIndex: m, treeSize, path: tree.paths[m]! });
    for (let m = 0; m < n; m++) {
      expect(proveInclusion(batch, proof(m, n), ORG).ok).toBe(true);
      for (const size of [1, n - 1, n + 1, n + 2, 2 * n, 1024]) {
        const r = proveInclusion(batch, proof(m, size), ORG);
        expect({ m, size, ok: r.ok }).toEqual({ m, size, ok: false });
        expect(r.detail).toBe(`the proof is for a tree of ${size} leaves; batch 1 has ${n}`);
      }
    }
    // The batch of another organisation than the key announcement's, or no batch at all.
    expect(proveInclusion(batch, proof(0, n), "0190f5a3-0000-7000-8000-00000000ffff").ok).toBe(false);
    expect(proveInclusion(d[0]!, proof(0, n), ORG).ok).toBe(false);
  });

  test("malformed proofs are null: index at or past the size, negative or fractional, a size of 0, a hash not 32 bytes", () => {
    const path = tree.paths[0]!;
    const leaf = leafHashOf(d[0]!);
    expect(rootFromInclusion(leaf, n, n, path)).toBeNull();
    expect(rootFromInclusion(leaf, -1, n, path)).toBeNull();
    expect(rootFromInclusion(leaf, 0.5, n, path)).toBeNull();
    expect(rootFromInclusion(leaf, 0, 0, [])).toBeNull();
    expect(rootFromInclusion(leaf, 0, 1, [])).toEqual(leaf);
    expect(rootFromInclusion(leaf.subarray(1), 0, n, path)).toBeNull();
    expect(rootFromInclusion(leaf, 0, n, [path[0]!.subarray(1), ...path.slice(1)])).toBeNull();
  });
});

describe("docs/receipts.md's worked example", () => {
  const doc = readFileSync(join(ROOT, "docs", "receipts.md"), "utf8");
  /** The fenced block after `<!-- example:NAME -->`. */
  const block = (name: string) => {
    const m = new RegExp(`<!-- example:${name} -->\\n\`\`\`(?:\\w+)?\\n([\\s\\S]*?)\\n\`\`\``).exec(doc);
    if (m === null) throw new Error(`no example ${name} in docs/receipts.md`);
    return m[1]!;
  };

  test("its three leaves, their hashes, the interior node, the root, the batch message and both paths are what the code computes", () => {
    const leafLines = block("batch-leaves").split("\n");
    expect(leafLines).toHaveLength(3);
    const msgs = leafLines.map((line) => new TextEncoder().encode(line));
    const hashes = msgs.map(leafHash);
    const node = nodeHash(hashes[0]!, hashes[1]!);
    const tree = merkleTree(msgs);
    expect(hex(nodeHash(node, hashes[2]!))).toBe(hex(tree.root));
    const revoked = leafLines.map((l) => JSON.parse(l) as { type: string; recordId: string }).filter((l) => l.type === "revocation").map((l) => l.recordId);
    const orgId = /"orgId":"([0-9a-f-]{36})"/.exec(block("batch-message"))![1]!;
    const expected = [
      `leaf 0  SHA-256(00 ‖ leaf 0) = ${hex(hashes[0]!)}`,
      `leaf 1  SHA-256(00 ‖ leaf 1) = ${hex(hashes[1]!)}`,
      `leaf 2  SHA-256(00 ‖ leaf 2) = ${hex(hashes[2]!)}`,
      `node    SHA-256(01 ‖ leaf 0's hash ‖ leaf 1's hash) = ${hex(node)}`,
      `root    SHA-256(01 ‖ node ‖ leaf 2's hash) = ${hex(tree.root)}`,
    ].join("\n");
    expect(block("batch-hashes")).toBe(expected);
    expect(block("batch-message")).toBe(new TextDecoder().decode(encodeBatchMessage({ orgId, batch: 7, size: 3, root: tree.root, revoked })));
    const b64 = (p: Uint8Array[]) => JSON.stringify(p.map((x) => Buffer.from(x).toString("base64")));
    expect(tree.paths[0]!.map(hex)).toEqual([hex(hashes[1]!), hex(hashes[2]!)]);
    expect(tree.paths[2]!.map(hex)).toEqual([hex(node)]);
    const proof = JSON.parse(block("batch-inclusion")) as { algorithm: string; leafMessage: string; leafIndex: number; treeSize: number; path: string[] };
    expect(proof).toEqual({ algorithm: "RFC9162-SHA256", leafMessage: Buffer.from(msgs[0]!).toString("base64"), leafIndex: 0, treeSize: 3, path: JSON.parse(b64(tree.paths[0]!)) });
    expect(hex(rootFromInclusion(leafHashOf(msgs[0]!), 0, 3, tree.paths[0]!)!)).toBe(hex(tree.root));
    // The sizes the text gives: 173 bytes and the digits with nothing revoked, 38 for the first id, 39 for each further one.
    expect(doc).toContain("173 bytes plus the digits of `batch`\nand `size` with `revoked` empty, and 39 more per revoked record (38 for the first)");
    const sized = (ids: string[]) => encodeBatchMessage({ orgId, batch: 7, size: 3, root: tree.root, revoked: ids }).length;
    expect([sized([]), sized(revoked.slice(0, 1)), sized(revoked)]).toEqual([173 + 2, 173 + 2 + 38, 173 + 2 + 38 + 39]);
    expect(block("batch-inclusion-leaf-2")).toBe(`"leafIndex":2,"treeSize":3,"path":${b64(tree.paths[2]!)}`);
  });
});
