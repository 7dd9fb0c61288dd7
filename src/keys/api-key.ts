/**
 * The API key format (docs/access.md "Unusable credentials"):
 * `dv_{live|test}_<keyId:16><secret:32><crc:6>`, 62 characters. `keyId` and `secret` are base62
 * from a CSPRNG; `crc` is the CRC-32 (IEEE) of every character before it, in base62, left-padded
 * with `0` to 6 characters.
 *
 * The checksum lets a typo or a truncated paste be refused without touching storage, and
 * lets secret scanners recognise a real key. Only `keyId` is stored in clear; the secret is
 * stored as a SHA-256 digest and compared in constant time.
 */
import { randomInt, timingSafeEqual } from "node:crypto";

export type Environment = "live" | "test";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
export const KEY_LENGTH = 62;
const KEY_RE = /^dv_(live|test)_([0-9A-Za-z]{16})([0-9A-Za-z]{32})([0-9A-Za-z]{6})$/;

export interface ParsedKey {
  readonly environment: Environment;
  readonly keyId: string;
  readonly secret: string;
}

function randomBase62(n: number): string {
  // randomInt draws without modulo bias.
  let s = "";
  for (let i = 0; i < n; i++) s += BASE62[randomInt(62)];
  return s;
}

export function crcBase62(text: string): string {
  let v = Bun.hash.crc32(text);
  let s = "";
  do {
    s = BASE62[v % 62] + s;
    v = Math.floor(v / 62);
  } while (v > 0);
  return s.padStart(6, "0");
}

/** A new key. The caller shows `key` once and stores only `keyId` and `secretDigest(secret)`. */
export function generateKey(environment: Environment): ParsedKey & { key: string } {
  const keyId = randomBase62(16);
  const secret = randomBase62(32);
  const body = `dv_${environment}_${keyId}${secret}`;
  return { key: body + crcBase62(body), environment, keyId, secret };
}

/** Parses a presented key; null when it is malformed or its checksum does not match. */
export function parseKey(presented: string): ParsedKey | null {
  if (presented.length !== KEY_LENGTH) return null;
  const m = KEY_RE.exec(presented);
  if (m === null) return null;
  // The checksum compared as a number: six base62 digits name one number, so this is
  // `crcBase62(body) === m[4]` without writing the text (every authenticated request parses a key).
  if (base62Value(m[4]!) !== Bun.hash.crc32(presented.slice(0, KEY_LENGTH - 6))) return null;
  return { environment: m[1] as Environment, keyId: m[2]!, secret: m[3]! };
}

export function secretDigest(secret: string): Buffer {
  return Buffer.from(digestInto(secret, new Uint8Array(32)));
}

/** SHA-256 of the secret's UTF-8 bytes, as createHash gives it (a test compares), written into `out`. */
function digestInto(secret: string, out: Uint8Array): Uint8Array {
  Bun.SHA256.hash(secret, out);
  return out;
}
/**
 * Constant-time comparison of a presented secret with a stored digest. `scratch` (32 bytes) is
 * where the presented secret's digest is written: every authenticated request computes one, so
 * the caller that checks them (credentials.ts) owns one buffer for all; a new one otherwise.
 */
export function secretMatches(secret: string, storedDigest: Uint8Array, scratch: Uint8Array = new Uint8Array(32)): boolean {
  const d = digestInto(secret, scratch);
  return d.length === storedDigest.length && timingSafeEqual(d, storedDigest);
}

/** The number six base62 digits name (`crcBase62`'s inverse). */
function base62Value(digits: string): number {
  let v = 0;
  for (let i = 0; i < digits.length; i++) {
    const c = digits.charCodeAt(i);
    v = v * 62 + (c <= 57 ? c - 48 : c <= 90 ? c - 55 : c - 61);
  }
  return v;
}

/** What may be logged or shown about a key: its environment and id, never the secret. */
export function keyPrefix(k: { environment: Environment; keyId: string }): string {
  return `dv_${k.environment}_${k.keyId}`;
}
