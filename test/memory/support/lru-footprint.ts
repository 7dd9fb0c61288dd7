/**
 * Measures, in a process of its own, how close the Lru's byte count is to what JavaScriptCore
 * holds for the caches' kinds of entries. Alone, because the heap of a process that has run other
 * test files moves by itself (their servers, timers and buffers still settling) between the two
 * readings a measurement takes. Prints one JSON line: [{ what, ratio }], each ratio the median of
 * three measurements of counted bytes over held bytes.
 */
import { gcAndSweep, heapSize } from "bun:jsc";
import { approxBytes, Lru, stringBytes } from "../../../src/lib/lru.ts";

const hex = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("hex");
function randomBytes(n: number): Uint8Array {
  const out = new Uint8Array(n);
  crypto.getRandomValues(out);
  return out;
}
const randomHash = () => `sha256:${hex(randomBytes(32))}`;

// The shapes the caches hold: memo keys (64 hex digits → boolean), a record memo entry (an object
// of strings, numbers and two fingerprints), row-sized objects with byte arrays.
const shapes: [string, (i: number) => [string, unknown]][] = [
  ["memo result", () => [hex(randomBytes(32)), true]],
  [
    "record memo entry",
    (i) => [
      String(i),
      { gen: 1, verifiedAtMs: i, id: crypto.randomUUID(), docHash: randomHash(), signedAtMs: i, signerFingerprint: randomBytes(32), sealFingerprint: randomBytes(32), signatureOk: true, sealOk: false },
    ],
  ],
  ["key row", () => [hex(randomBytes(32)), { algorithm: "ML-DSA-65", publicKey: randomBytes(1952) }]],
];

function measure(make: (i: number) => [string, unknown]): number {
  const lru = new Lru<string, unknown>({ maxBytes: 1 << 30, bytesOf: (k, v) => stringBytes(k) + approxBytes(v) });
  for (let i = 0; i < 20_000; i++) {
    const [k, v] = make(i);
    lru.set(k, v);
  }
  // What the entries hold: the heap with them less the heap once they are gone, each after a full
  // collection.
  gcAndSweep();
  const withEntries = heapSize();
  const counted = lru.bytes;
  lru.clear();
  gcAndSweep();
  return counted / (withEntries - heapSize());
}

const out = shapes.map(([what, make]) => {
  const ratios = [measure(make), measure(make), measure(make)].sort((a, b) => a - b);
  return { what, ratio: ratios[1]! };
});
console.log(JSON.stringify(out));
