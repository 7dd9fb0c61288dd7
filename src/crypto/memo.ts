/**
 * Memoised verification. Memoising a pure verification on the exact bytes of its inputs counts
 * as recomputing it (docs/verification.md, "Checks"), so verification may answer from here; what
 * makes that true:
 * - the key is SHA-256 over every input byte (algorithm, public key, message, signature), each
 *   length-prefixed so no two different input tuples share an encoding;
 * - only the boolean result of a completed verification is stored; a throw is never stored;
 * - the memo is bounded in bytes and in entries (least recently used entries go first), so a
 *   flood of distinct inputs costs recomputation, never unbounded memory.
 *
 * Memo key, exactly: SHA-256( "docverify/verify-memo/v1" 0x00
 *   || u32be(len) || algorithm || u32be(len) || publicKey || u32be(len) || message
 *   || u32be(len) || signature ), as lowercase hex.
 */
import { createHash } from "node:crypto";
import { ALGORITHMS, type Algorithm } from "./algorithms.ts";
import { ascii, assertBytes, checkOptions, domainTag, writeU32be } from "./bytes.ts";
import { Lru, stringBytes, type CacheSize } from "../lib/lru.ts";

export type VerifyFn = (algorithm: Algorithm, publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array) => boolean;

export const VERIFY_MEMO_DOMAIN = "docverify/verify-memo/v1";

const MEMO_TAG = domainTag(VERIFY_MEMO_DOMAIN);
/** The length-prefixed algorithm name. */
function algorithmField(algorithm: string): Uint8Array {
  const name = ascii(algorithm);
  const field = new Uint8Array(4 + name.length);
  writeU32be(field, 0, name.length);
  field.set(name, 4);
  return field;
}
/** Each known algorithm's field, made once: the same few bytes on every call. */
const ALGORITHM_FIELDS: ReadonlyMap<string, Uint8Array> = new Map(ALGORITHMS.map((a) => [a, algorithmField(a)]));

function lengthOf(n: number): Uint8Array {
  const out = new Uint8Array(4);
  writeU32be(out, 0, n);
  return out;
}

export function verificationMemoKey(algorithm: Algorithm, publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): string {
  assertBytes(publicKey, "publicKey");
  assertBytes(message, "message");
  assertBytes(signature, "signature");
  const alg = ALGORITHM_FIELDS.get(algorithm) ?? algorithmField(algorithm);
  // Hashed field by field rather than concatenated: a signature and public key are ~5 KB together.
  return createHash("sha256")
    .update(MEMO_TAG)
    .update(alg)
    .update(lengthOf(publicKey.length))
    .update(publicKey)
    .update(lengthOf(message.length))
    .update(message)
    .update(lengthOf(signature.length))
    .update(signature)
    .digest("hex");
}

export interface VerificationMemo {
  /** Same contract as the wrapped verify; answers repeated identical inputs from memory. */
  readonly verify: VerifyFn;
  /**
   * The result remembered under a memo key (`verificationMemoKey`), counted as a hit, or
   * undefined, counted as a miss: for a caller that verifies the misses elsewhere (a worker) and
   * then `keep`s each completed result.
   */
  lookup(key: string): boolean | undefined;
  /** Remembers a completed verification's result under its memo key (never a throw's). */
  keep(key: string, result: boolean): void;
  readonly size: number;
  /** Entries, bytes and the byte budget (/metrics). */
  stats(): CacheSize;
  readonly hits: number;
  readonly misses: number;
  clear(): void;
}

export interface VerificationMemoOptions {
  /** The real verification, e.g. `signer.verify`. */
  readonly verify: VerifyFn;
  /** Upper bound on remembered results. */
  readonly maxEntries: number;
  /** Upper bound on the bytes they hold (each about 290: a 64-character key, a boolean, the map's share). Default `MEMO_BYTES`. */
  readonly maxBytes?: number;
}

/** The memo's default byte budget: some 29,000 results. */
export const MEMO_BYTES = 8 * 1024 * 1024;

export function createVerificationMemo(options: VerificationMemoOptions): VerificationMemo {
  checkOptions(options, "createVerificationMemo options", ["verify", "maxEntries", "maxBytes"]);
  const inner = options.verify;
  if (typeof inner !== "function") throw new TypeError("verify must be a function");
  const cache = new Lru<string, boolean>({ maxEntries: options.maxEntries, maxBytes: options.maxBytes ?? MEMO_BYTES, bytesOf: stringBytes });
  let hits = 0;
  let misses = 0;
  function lookup(key: string): boolean | undefined {
    const known = cache.get(key);
    if (known !== undefined) hits++;
    else misses++;
    return known;
  }
  function keep(key: string, result: boolean): void {
    if (typeof result !== "boolean") throw new TypeError("verify must return a boolean");
    cache.set(key, result);
  }
  return {
    verify(algorithm, publicKey, message, signature) {
      const key = verificationMemoKey(algorithm, publicKey, message, signature);
      const known = lookup(key);
      if (known !== undefined) return known;
      const result = inner(algorithm, publicKey, message, signature);
      keep(key, result);
      return result;
    },
    lookup,
    keep,
    get size() {
      return cache.size;
    },
    stats: () => cache.stats(),
    get hits() {
      return hits;
    },
    get misses() {
      return misses;
    },
    clear() {
      cache.clear();
    },
  };
}
