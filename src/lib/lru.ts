/**
 * A small map bounded in bytes that forgets the least recently used entry first. A Map keeps
 * insertion order, so re-inserting on every hit makes its first key the least recently used one.
 *
 * Bytes are what `bytesOf` says an entry holds in memory: an estimate (`approxBytes` and the
 * constants below, measured on Bun 1.4.5's JavaScriptCore: docs/operations.md, "Memory") that
 * errs high rather than low, so that `bytes` never undercounts what the entries keep alive. An
 * entry larger than the whole budget is not kept at all. A count of entries can bound it too.
 *
 * What a caller may assume: after any `set`, `bytes <= maxBytes` and `size <= maxEntries`.
 */
export interface LruBudget<K, V> {
  /** Most bytes the entries may hold, as `bytesOf` counts them. */
  readonly maxBytes: number;
  /** What one entry holds: its key and its value (`ENTRY_BYTES` for the map's own share is added). */
  readonly bytesOf: (key: K, value: V) => number;
  /** Most entries, besides the bytes. Default: no bound but the bytes. */
  readonly maxEntries?: number;
  /**
   * False: a hit does not refresh the entry, so the oldest inserted is forgotten first (a FIFO:
   * a hit is then one map lookup, for the hottest paths). Default true (least recently used).
   */
  readonly refreshOnHit?: boolean;
}

/** A cache's size now, as /metrics reports it (docverify_cache_bytes, docverify_cache_entries). */
export interface CacheSize {
  readonly entries: number;
  readonly bytes: number;
  readonly maxBytes: number;
}

/**
 * A cache as the service reports and releases it: /metrics reads `stats` (app/compose.ts), and the idle
 * release (lib/idle-release.ts) calls `clear` once the service has been quiet for a while.
 */
export interface NamedCache {
  /** The `cache` label of docverify_cache_bytes: fixed by the code, never taken from a request. */
  readonly name: string;
  stats(): CacheSize;
  clear(): void;
}

/** `cache` under `name`. */
export function namedCache(name: string, cache: { stats(): CacheSize; clear(): void }): NamedCache {
  return { name, stats: () => cache.stats(), clear: () => cache.clear() };
}

/**
 * One entry's share of the map itself: the Map's slot for key and value (measured: 60 to 160
 * bytes an entry, as its table fills and then doubles) and the node holding the value and its
 * size (32 bytes). The high end, so that a count never falls below what is held.
 */
export const ENTRY_BYTES = 192;
/** A string's fixed part in JavaScriptCore (measured: a 64-character hex string holds 90 bytes). */
const STRING_BYTES = 32;
/**
 * A typed array's object and its backing store's header (measured: a 32-byte Uint8Array holds 90
 * bytes, 131 as bun:sqlite returns a blob, 232 once its `.buffer` was asked for, which moves the
 * bytes out to an ArrayBuffer of their own).
 */
const BYTES_OBJECT_BYTES = 200;
/** An object's or array's header; each property or element adds a slot. */
const OBJECT_BYTES = 16;
const SLOT_BYTES = 8;
/** Below this many levels of nesting an object is counted as this many bytes more (never met by the caches: rows, keys, queries). */
const DEEP_BYTES = 256;
const MAX_DEPTH = 4;

/** A string's bytes: one a character when every character fits in Latin-1 (how JavaScriptCore stores it), else two. */
export function stringBytes(s: string): number {
  return STRING_BYTES + (/[^\u0000-\u00ff]/.test(s) ? 2 * s.length : s.length);
}

/**
 * What `value` holds in the JavaScript heap, roughly and on the high side: strings, byte arrays,
 * plain objects and arrays (their own enumerable properties), numbers, booleans and null (a slot
 * each). Not native memory behind an object (a KeyObject's key): a caller adds that itself.
 */
export function approxBytes(value: unknown, depth = 0): number {
  switch (typeof value) {
    case "string":
      return stringBytes(value);
    case "bigint":
      return 32;
    case "object": {
      if (value === null) return 0;
      if (ArrayBuffer.isView(value)) return BYTES_OBJECT_BYTES + value.byteLength;
      if (value instanceof ArrayBuffer) return BYTES_OBJECT_BYTES + value.byteLength;
      if (depth >= MAX_DEPTH) return DEEP_BYTES;
      let total = OBJECT_BYTES;
      if (Array.isArray(value)) {
        for (const item of value) total += SLOT_BYTES + approxBytes(item, depth + 1);
      } else {
        for (const key in value) {
          if (Object.hasOwn(value, key)) total += SLOT_BYTES + approxBytes((value as Record<string, unknown>)[key], depth + 1);
        }
      }
      return total;
    }
    case "function":
    case "symbol":
      return 64;
    default:
      return 0; // number, boolean, undefined: the slot that holds them is counted by their holder
  }
}

interface Node<V> {
  readonly value: V;
  readonly bytes: number;
}

export class Lru<K, V> {
  readonly #map = new Map<K, Node<V>>();
  readonly #bytesOf: (key: K, value: V) => number;
  readonly #refresh: boolean;
  #bytes = 0;
  readonly maxBytes: number;
  readonly maxEntries: number;

  constructor(budget: LruBudget<K, V>) {
    if (!Number.isSafeInteger(budget.maxBytes) || budget.maxBytes < 1) throw new RangeError("maxBytes must be a positive integer");
    if (typeof budget.bytesOf !== "function") throw new TypeError("bytesOf must be a function");
    const maxEntries = budget.maxEntries ?? Number.MAX_SAFE_INTEGER;
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) throw new RangeError("maxEntries must be a positive integer");
    this.maxBytes = budget.maxBytes;
    this.maxEntries = maxEntries;
    this.#bytesOf = budget.bytesOf;
    this.#refresh = budget.refreshOnHit ?? true;
  }

  /** Entries held. */
  get size(): number {
    return this.#map.size;
  }

  /** Bytes held, as `bytesOf` counted the entries (with `ENTRY_BYTES` each). */
  get bytes(): number {
    return this.#bytes;
  }

  get(key: K): V | undefined {
    const node = this.#map.get(key);
    if (node === undefined) return undefined;
    if (this.#refresh) {
      this.#map.delete(key);
      this.#map.set(key, node);
    }
    return node.value;
  }

  has(key: K): boolean {
    return this.#map.has(key);
  }

  /** Keeps `value` under `key` (replacing what was there), then forgets the oldest until within budget. */
  set(key: K, value: V): void {
    this.delete(key);
    const bytes = ENTRY_BYTES + this.#bytesOf(key, value);
    // Larger than the whole budget: kept, it would push out everything else and still not fit.
    if (!(bytes <= this.maxBytes)) return;
    this.#map.set(key, { value, bytes });
    this.#bytes += bytes;
    while (this.#bytes > this.maxBytes || this.#map.size > this.maxEntries) {
      const oldest = this.#map.entries().next();
      if (oldest.done) break;
      this.#map.delete(oldest.value[0]);
      this.#bytes -= oldest.value[1].bytes;
    }
  }

  delete(key: K): void {
    const node = this.#map.get(key);
    if (node === undefined) return;
    this.#map.delete(key);
    this.#bytes -= node.bytes;
  }

  /** Forgets every entry for which `drop` answers true (an expired one, say). */
  prune(drop: (key: K, value: V) => boolean): void {
    for (const [key, node] of this.#map) {
      if (drop(key, node.value)) {
        this.#map.delete(key);
        this.#bytes -= node.bytes;
      }
    }
  }

  clear(): void {
    this.#map.clear();
    this.#bytes = 0;
  }

  /** Entries, bytes and the byte budget, for /metrics. */
  stats(): CacheSize {
    return { entries: this.#map.size, bytes: this.#bytes, maxBytes: this.maxBytes };
  }
}
