/**
 * The verification log's cursors.
 *
 * Cursor, version 1 (docs/verification.md, "Cursor format (version 1)"): base64url (no padding) of
 *   0x01 || last row id (16 bytes) || HMAC-SHA256(cursorKey, binding)          49 bytes, 66 chars
 * where binding = "docverify/verification-cursor/v1" 0x00 || 0x01 || id (16 bytes)
 *   || field(orgId) || field(environment) || opt(verdict) || opt(originalDocHash)
 *   || opt(from, as decimal ms) || opt(to, as decimal ms)
 * with field(x) = u32be(len) || UTF-8 x and opt(x) = 0x00 when absent, 0x01 || field(x) when
 * present. A cursor is therefore only accepted for the organisation, environment and filters
 * it was issued for; `limit` may change between pages.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { invalid } from "../../lib/errors.ts";
import { hmacSha256 } from "../../crypto/hmac.ts";
import type { ListFilters } from "./page.ts";

export const CURSOR_VERSION = 1;
const CURSOR_DOMAIN = "docverify/verification-cursor/v1";
const CURSOR_BYTES = 1 + 16 + 32;

/** What a cursor is bound to besides its row: organisation, environment and filters. */
export interface CursorScope {
  readonly orgId: string;
  readonly environment: string;
  readonly filters: ListFilters;
}

function field(text: string): Buffer {
  const b = Buffer.from(text, "utf8");
  const len = Buffer.alloc(4);
  len.writeUInt32BE(b.length);
  return Buffer.concat([len, b]);
}
function opt(value: string | number | undefined): Buffer {
  return value === undefined ? Buffer.from([0]) : Buffer.concat([Buffer.from([1]), field(String(value))]);
}

/** The binding's bytes after the id: organisation, environment and filters (see the header). */
function scopeBytes(scope: CursorScope): Buffer {
  const f = scope.filters;
  return Buffer.concat([field(scope.orgId), field(scope.environment), opt(f.verdict), opt(f.originalDocHash), opt(f.from), opt(f.to)]);
}

const MAC_PREFIX = Buffer.concat([Buffer.from(`${CURSOR_DOMAIN}\0`, "ascii"), Buffer.from([CURSOR_VERSION])]);

function cursorMac(key: Uint8Array, idBytes: Buffer, scope: Buffer): Buffer {
  return hmacSha256(key, MAC_PREFIX, idBytes, scope);
}

/** The MAC as RFC 2104 states it, with createHmac: what `cursorMac` must equal (tests). */
export function referenceCursorMac(key: Uint8Array, idBytes: Buffer, scope: CursorScope): Buffer {
  return createHmac("sha256", key).update(MAC_PREFIX).update(idBytes).update(scopeBytes(scope)).digest();
}

function encodeWith(key: Uint8Array, lastId: string, scope: Buffer): string {
  const idBytes = Buffer.from(lastId.replaceAll("-", ""), "hex");
  return Buffer.concat([Buffer.from([CURSOR_VERSION]), idBytes, cursorMac(key, idBytes, scope)]).toString("base64url");
}

const CURSOR_REFUSED = "is not a cursor issued for this query: pass back nextCursor verbatim, with the same filters";

function decodeWith(key: Uint8Array, cursor: string, scope: () => Buffer): string {
  if (typeof cursor !== "string" || !/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) throw invalid("after", CURSOR_REFUSED);
  const bytes = Buffer.from(cursor, "base64url");
  // Only the canonical spelling: no padding, no stray trailing bits.
  if (bytes.length !== CURSOR_BYTES || bytes.toString("base64url") !== cursor || bytes[0] !== CURSOR_VERSION) throw invalid("after", CURSOR_REFUSED);
  const idBytes = bytes.subarray(1, 17);
  const mac = bytes.subarray(17);
  if (!timingSafeEqual(mac, cursorMac(key, idBytes, scope()))) throw invalid("after", CURSOR_REFUSED);
  const h = idBytes.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export function encodeCursor(key: Uint8Array, lastId: string, scope: CursorScope): string {
  return encodeWith(key, lastId, scopeBytes(scope));
}

/** The last row id a cursor names, or VALIDATION_FAILED `{after}`. */
export function decodeCursor(key: Uint8Array, cursor: string, scope: CursorScope): string {
  return decodeWith(key, cursor, () => scopeBytes(scope));
}

/** `encodeCursor` and `decodeCursor` under one key, as a log makes and checks its cursors. */
export interface CursorCodec {
  encode(lastId: string, scope: CursorScope): string;
  decode(cursor: string, scope: CursorScope): string;
}

/** Keyed scopes at most, before the map starts afresh. */
const SCOPES_KEPT = 256;

export function createCursorCodec(key: Uint8Array): CursorCodec {
  /**
   * The binding's scope bytes by scope, bounded: a client pages with one scope at a time, and a
   * cursor is made or checked on every page.
   */
  const scopeCache = new Map<string, Buffer>();

  function cachedScopeBytes(scope: CursorScope): Buffer {
    const f = scope.filters;
    const id = `${scope.orgId}\0${scope.environment}\0${f.verdict ?? "\u0001"}\0${f.originalDocHash ?? "\u0001"}\0${f.from ?? "\u0001"}\0${f.to ?? "\u0001"}`;
    let bytes = scopeCache.get(id);
    if (bytes === undefined) {
      bytes = scopeBytes(scope);
      if (scopeCache.size >= SCOPES_KEPT) scopeCache.clear();
      scopeCache.set(id, bytes);
    }
    return bytes;
  }

  return {
    encode: (lastId, scope) => encodeWith(key, lastId, cachedScopeBytes(scope)),
    decode: (cursor, scope) => decodeWith(key, cursor, () => cachedScopeBytes(scope)),
  };
}
