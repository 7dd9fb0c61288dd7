/**
 * One way to write a time for people, everywhere docverify shows one: the receipt verifier's
 * report and page (render.ts, page/), the appliance's server-rendered pages
 * (src/http/pages/html.ts) and the signing page's script (src/sign-pages/records.ts). It lives
 * with the verifier, which stands alone (docs/receipts.md §4), and imports nothing, so the
 * appliance's pages and a browser bundle can use it as it is.
 */

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
const CONSENSUS = /^(\d{1,12})\.(\d{9})$/;

/** The instant in milliseconds (truncated), or null for a value that is neither an RFC 3339 time nor a consensus time. */
export function instantMs(value: string): number | null {
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
 * receipt page (src/verifier/render.ts) writes times the same way, which test/pages/words.test.ts
 * holds the two to. Anything else is returned as is.
 */
export function humanTime(value: string): string {
  const ms = instantMs(value);
  if (ms === null) return value;
  const t = new Date(ms);
  return `${t.getUTCDate()} ${MONTHS[t.getUTCMonth()]} ${t.getUTCFullYear()}, ${pad2(t.getUTCHours())}:${pad2(t.getUTCMinutes())}:${pad2(t.getUTCSeconds())} UTC`;
}

