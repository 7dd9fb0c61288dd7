/**
 * Byte helpers shared by the crypto modules. Kept inside `crypto/` rather than `lib/` because
 * they exist to build the canonical encodings, and their exact behaviour (big-endian, 32-bit
 * length prefixes, strict option checks) is part of what those encodings guarantee.
 */

/** Concatenates byte arrays into one new array. */
export function concatBytes(...parts: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const p of parts) length += p.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

// The integer writers below shift bytes out by hand rather than go through a DataView: reading
// `.buffer` of a small typed array makes JavaScriptCore give it a separate ArrayBuffer, which
// measured as most of the cost of encoding a payload.

/** Writes `n` (0 ≤ n ≤ 2^32 − 1, checked by the caller) as 4 big-endian bytes at `offset`. */
export function writeU32be(out: Uint8Array, offset: number, n: number): void {
  out[offset] = n >>> 24;
  out[offset + 1] = (n >>> 16) & 0xff;
  out[offset + 2] = (n >>> 8) & 0xff;
  out[offset + 3] = n & 0xff;
}

/** Writes a safe non-negative integer (checked by the caller) as 8 big-endian bytes at `offset`. */
export function writeU64be(out: Uint8Array, offset: number, n: number): void {
  const high = Math.floor(n / 0x1_0000_0000);
  writeU32be(out, offset, high);
  writeU32be(out, offset + 4, n - high * 0x1_0000_0000);
}

/** 4-byte big-endian unsigned integer. */
export function u32be(n: number): Uint8Array {
  if (!Number.isSafeInteger(n) || n < 0 || n > 0xffff_ffff) throw new RangeError(`u32 out of range: ${n}`);
  const out = new Uint8Array(4);
  writeU32be(out, 0, n);
  return out;
}

/** 8-byte big-endian unsigned integer, from a safe (≤ 2^53 − 1) non-negative integer. */
export function u64be(n: number): Uint8Array {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`u64 out of range: ${n}`);
  const out = new Uint8Array(8);
  writeU64be(out, 0, n);
  return out;
}

/** A field as it appears in every docverify encoding: 4-byte big-endian length, then the bytes. */
export function lengthPrefixed(bytes: Uint8Array): Uint8Array {
  return concatBytes(u32be(bytes.length), bytes);
}

/** Writes `bytes` length-prefixed (as lengthPrefixed) at `offset`; returns the offset after it. */
export function writeLengthPrefixed(out: Uint8Array, offset: number, bytes: Uint8Array): number {
  writeU32be(out, offset, bytes.length);
  out.set(bytes, offset + 4);
  return offset + 4 + bytes.length;
}

const HEX_VALUE = (() => {
  const table = new Int8Array(128).fill(-1);
  for (let i = 0; i < 10; i++) table[0x30 + i] = i;
  for (let i = 0; i < 6; i++) table[0x61 + i] = 10 + i;
  return table;
})();

/**
 * Decodes `count` bytes of lowercase hex from `text` starting at character `from` into `out`
 * at `offset`, skipping `-` characters (UUID text). The caller has validated the text (a regex):
 * this only converts.
 */
export function writeHex(out: Uint8Array, offset: number, text: string, from: number, count: number): void {
  let i = from;
  for (let n = 0; n < count; n++) {
    if (text.charCodeAt(i) === 0x2d) i++;
    out[offset + n] = (HEX_VALUE[text.charCodeAt(i)]! << 4) | HEX_VALUE[text.charCodeAt(i + 1)]!;
    i += 2;
  }
}

/** ASCII text to bytes; refuses anything outside printable ASCII so tags can't hide look-alikes. */
export function ascii(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) throw new TypeError(`not printable ASCII at index ${i}`);
    out[i] = c;
  }
  return out;
}

/** A domain-separation tag: ASCII text followed by one NUL byte. */
export function domainTag(text: string): Uint8Array {
  return concatBytes(ascii(text), new Uint8Array([0]));
}

export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}

/** Constant-time only in the sense that it does not stop early; used for non-secret comparisons too. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

/** Throws unless `value` is a Uint8Array (Buffer counts), naming the argument. */
export function assertBytes(value: unknown, name: string, length?: number): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array)) throw new TypeError(`${name} must be a Uint8Array`);
  if (length !== undefined && value.length !== length) {
    throw new RangeError(`${name} must be ${length} bytes, got ${value.length}`);
  }
}

/**
 * Strict option checking, after noble: an options object must be a plain object holding only
 * the keys the call accepts, so a misspelt option is an error instead of a silent default.
 */
export function checkOptions(value: unknown, name: string, allowed: readonly string[]): asserts value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new TypeError(`${name} must be an object`);
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) throw new TypeError(`${name} must be a plain object`);
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) throw new TypeError(`${name}: unknown option "${key}" (allowed: ${allowed.join(", ")})`);
  }
}
