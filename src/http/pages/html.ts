/**
 * Server-rendered HTML pieces shared by the public pages. Every piece of text that did not come
 * from this file goes through `escapeHtml`; attributes are always double-quoted, so escaping
 * `&`, `<`, `>`, `"` and `'` is enough for text and attribute values alike.
 */
import { createHash } from "node:crypto";
import { humanTime, instantMs } from "../../verifier/human-time.ts";

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
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
 * The page carries it in a `<meta>` (bundle.ts); the server sends it
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

