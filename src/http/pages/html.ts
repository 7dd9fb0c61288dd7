/**
 * Server-rendered HTML pieces shared by the public pages. Every piece of text that did not come
 * from this file goes through `escapeHtml`; attributes are always double-quoted, so escaping
 * `&`, `<`, `>`, `"` and `'` is enough for text and attribute values alike.
 */
import { createHash } from "node:crypto";

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
const CONSENSUS = /^(\d{1,12})\.(\d{9})$/;

/** The instant in milliseconds (truncated), or null for a value that is neither an RFC 3339 time nor a consensus time. */
function instantMs(value: string): number | null {
  const c = CONSENSUS.exec(value);
  if (c !== null) return Number(c[1]) * 1000 + Math.floor(Number(c[2]) / 1e6);
  const m = RFC3339.exec(value);
  if (m === null) return null;
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  const offset = zone === "Z" ? 0 : (zone!.startsWith("-") ? -1 : 1) * (Number(zone!.slice(1, 3)) * 60 + Number(zone!.slice(4, 6)));
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), Math.floor(Number(`0${frac ?? ".0"}`) * 1000)) - offset * 60_000;
  return Number.isNaN(ms) ? null : ms;
}

const pad2 = (n: number) => String(n).padStart(2, "0");

/**
 * A time for people: `2026-12-01T17:58:48.123Z` (RFC 3339, any number of fractional digits, any
 * offset) or a ledger consensus time `1764611928.123456789` → `1 December 2026, 17:58:48 UTC`.
 * To the second, in UTC, the same on every human page and in every browser (no locale): the
 * receipt page (src/verifier/render.ts) and the signing page (src/sign-pages/words.ts) write
 * times the same way, which test/pages/words.test.ts holds them to. Anything else is returned as is.
 */
export function humanTime(value: string): string {
  const ms = instantMs(value);
  if (ms === null) return value;
  const t = new Date(ms);
  return `${t.getUTCDate()} ${MONTHS[t.getUTCMonth()]} ${t.getUTCFullYear()}, ${pad2(t.getUTCHours())}:${pad2(t.getUTCMinutes())}:${pad2(t.getUTCSeconds())} UTC`;
}

/**
 * `<time>` for a person, with the exact machine value kept: `datetime` is the instant as HTML
 * accepts it (milliseconds at most), `title` the value exactly as the API spells it.
 */
export function timeElement(value: string): string {
  const ms = instantMs(value);
  const datetime = ms === null ? value : new Date(ms).toISOString();
  return `<time datetime="${escapeHtml(datetime)}" title="${escapeHtml(value)}">${escapeHtml(humanTime(value))}</time>`;
}

/** The CSP source expression allowing exactly this inline element's text. */
export function cspHash(text: string): string {
  return `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;
}

/**
 * The receipt verifier page's policy (docs/receipts.md §4.4): its one script and one style by
 * hash, and requests to any http(s) mirror node the visitor lists and to an announced domain's
 * well-known document (identity); nothing else is ever loaded.
 * The generated page carries it in a `<meta>` (scripts/build-verify-page.ts); the server sends it
 * as a header with `frame-ancestors 'none'`, which a `<meta>` policy cannot carry.
 */
export function receiptPagePolicy(script: string, style: string): string {
  return [
    "default-src 'none'",
    `script-src ${cspHash(script)}`,
    `style-src ${cspHash(style)}`,
    "connect-src http: https:",
    "img-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
}

/**
 * Strict policy: nothing is loaded from anywhere (the appliance may be air-gapped, and a page
 * showing user-supplied text must not run anything but its own code). Only the inline style and
 * script whose hashes are given may apply.
 */
export function contentSecurityPolicy(styleText: string, scriptText?: string): string {
  return [
    "default-src 'none'",
    `style-src ${cspHash(styleText)}`,
    `script-src ${scriptText === undefined ? "'none'" : cspHash(scriptText)}`,
    "img-src 'none'",
    "connect-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** On every page and page asset: no sniffing, no referrer, no framing. */
export const PAGE_SECURITY_HEADERS = { "x-content-type-options": "nosniff", "referrer-policy": "no-referrer", "x-frame-options": "DENY" } as const;

export function htmlResponse(status: number, html: string, csp: string): Response {
  return new Response(html, {
    status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": csp,
      ...PAGE_SECURITY_HEADERS,
      // The record's anchor state and status change; a cached page would show stale facts.
      "cache-control": "no-store",
    },
  });
}

/**
 * The start of a page's document up to its `<style>`: UTF-8, the mobile viewport, no referrer
 * (page addresses may hold a record id or an enrolment token), the escaped title. `robots` adds
 * `noindex, nofollow`.
 */
export function pageHeadStart(title: string, style: string, options: { robots?: boolean } = {}): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
${options.robots === true ? '<meta name="robots" content="noindex, nofollow">\n' : ""}<title>${escapeHtml(title)}</title>
<style>${style}</style>`;
}

