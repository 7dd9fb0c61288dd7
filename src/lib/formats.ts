/**
 * The spellings the spec fixes, in one place: every module that checks or writes one uses these
 * (the OpenAPI document too, through src/http/schemas.ts).
 */
import type { NamedCache } from "./lru.ts";

/** A DocHash: `sha256:` and 64 lowercase hex digits; uppercase and bare digests are refused. */
export const DOC_HASH_PATTERN = "^sha256:[0-9a-f]{64}$";
export const DOC_HASH_RE = new RegExp(DOC_HASH_PATTERN);

/** A UUID in its one canonical spelling: lowercase, hyphenated, no braces. */
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

// ---------------------------------------------------------------------------------------------
// Timestamps. One behaviour on input they cannot spell: they throw. They never pad, guess or echo
// the input. A stored time that cannot be spelled is corruption: a request that meets one fails
// (500), as verification does for an anchored row without consensus time, rather than vouch for
// the record or hide it. A stored time that can be spelled but is wrong (a tampered signed time)
// is spelled as stored, and the checks recomputed over it fail (signature_invalid).
// ---------------------------------------------------------------------------------------------

/** 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z: RFC 3339's years have four digits. */
const MIN_RFC3339_MS = -62167219200000;
export const MAX_RFC3339_MS = 253402300799999;

/**
 * RFC 3339, UTC, exactly three fractional digits (`2026-01-15T09:30:00.123Z`): the API's and the
 * ledger messages' time format. Throws a RangeError for anything but whole milliseconds in the
 * years 0000 to 9999 (another year would need an expanded `±YYYYYY` form, which RFC 3339 does not
 * have). Times this service writes itself are from 1970 on; the ledger messages check that.
 */
export function rfc3339Ms(ms: number): string {
  // The last time written, again: a busy service formats the same millisecond for many requests
  // (each answer's verifiedAt and its log line).
  if (ms === lastMs) return lastText;
  const text = formatRfc3339Ms(ms);
  lastMs = ms;
  lastText = text;
  return text;
}
let lastMs = Number.NaN;
let lastText = "";

function formatRfc3339Ms(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < MIN_RFC3339_MS || ms > MAX_RFC3339_MS) throw new RangeError("time must be whole milliseconds in the years 0000 to 9999");
  // What `new Date(ms).toISOString()` gives, by integer arithmetic (a test compares the two over
  // the whole range): a verification answer formats three to four times, a log page 25, and the
  // Date object and its formatting were a few per cent of either (docs/benchmarks.md, "How the figures moved").
  const days = Math.floor(ms / 86_400_000);
  const inDay = ms - days * 86_400_000;
  // Civil date from days since 1970-01-01 (H. Hinnant, "chrono-compatible low-level date
  // algorithms"), proleptic Gregorian like Date.
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  const h = Math.floor(inDay / 3_600_000);
  const mi = Math.floor(inDay / 60_000) % 60;
  const sec = Math.floor(inDay / 1000) % 60;
  const milli = inDay % 1000;
  return `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}T${pad(h, 2)}:${pad(mi, 2)}:${pad(sec, 2)}.${pad(milli, 3)}Z`;
}

function pad(n: number, width: number): string {
  const text = String(n);
  return text.length >= width ? text : "0000".slice(0, width - text.length) + text;
}

const RFC3339_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

/**
 * An RFC 3339 date-time with a time zone, as `{ ms, subMsNanos }`: `ms` the whole milliseconds
 * (rounded down) and `subMsNanos` the nanoseconds below the millisecond (0 to 999,999). Accepted:
 * `YYYY-MM-DDTHH:MM:SS`, optional `.` and 1 to 9 fractional digits, then `Z` or `±HH:MM`.
 * Refused: lowercase `t`/`z` and a space separator (RFC 3339 permits them; we accept one
 * spelling), a missing zone, `-00:00` (RFC 3339's "offset unknown"), leap second `60`,
 * impossible dates (`2026-02-30`), more than nine fractional digits. Null when refused.
 */
export function parseRfc3339(text: string): { ms: number; subMsNanos: number } | null {
  const m = RFC3339_RE.exec(text);
  if (m === null) return null;
  const [, ys, mos, ds, hs, mis, ss, frac = "", zone] = m;
  const y = Number(ys), mo = Number(mos), d = Number(ds), h = Number(hs), mi = Number(mis), s = Number(ss);
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return null;
  const daysInMonth = new Date(Date.UTC(2000, mo, 0)).getUTCDate(); // 2000 is a leap year
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  if (d > (mo === 2 && !leap ? 28 : daysInMonth)) return null;
  let offsetMinutes = 0;
  if (zone !== "Z") {
    if (zone === "-00:00") return null;
    const oh = Number(zone!.slice(1, 3)), om = Number(zone!.slice(4, 6));
    if (oh > 23 || om > 59) return null;
    offsetMinutes = (zone![0] === "-" ? -1 : 1) * (oh * 60 + om);
  }
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d); // not Date.UTC: it reads years 0–99 as 1900–1999
  date.setUTCHours(h, mi, s, Number(frac.slice(0, 3).padEnd(3, "0")));
  const ms = date.getTime() - offsetMinutes * 60_000;
  return { ms, subMsNanos: Number(frac.padEnd(9, "0").slice(3)) };
}

/**
 * The ledger's consensus time as `consensus_at` stores it (src/storage/schema.ts): seconds, `.`,
 * and the nanoseconds zero-padded to exactly nine digits.
 */
const CONSENSUS_RE = /^(\d{1,12})\.(\d{9})$/;

/**
 * A stored consensus time as RFC 3339 UTC keeping all nine fractional digits
 * (`1768469403.000000042` → `2026-01-15T09:30:03.000000042Z`). Throws on any other text (fewer
 * nanosecond digits, no fraction, not digits, a year past 9999): that is corruption, not
 * something to pad or echo.
 */
export function consensusToRfc3339(text: string): string {
  return formatConsensus(text);
}

/** `consensusToRfc3339` with the texts it wrote kept, and the cache they are kept in. */
export interface ConsensusTexts {
  format(text: string): string;
  /** For /metrics and the idle release. */
  readonly cache: NamedCache;
}

const CONSENSUS_TEXTS_KEPT = 4096;
/** The consensus texts' byte budget (about 310 bytes each: some 3,400). */
export const CONSENSUS_TEXTS_BYTES = 1024 * 1024;
/** An entry's share of the map and its two strings' fixed parts (lib/lru.ts counts the same way). */
const CONSENSUS_ENTRY_BYTES = 192 + 2 * 32;

/**
 * `consensusToRfc3339` for a service that writes the same consensus times again and again (a
 * record's time is written in every answer naming it), each text kept once written. Bounded in
 * entries and bytes: emptied when full. Only a text that formats is kept, so both strings are
 * short ASCII.
 */
export function createConsensusTexts(): ConsensusTexts {
  const texts = new Map<string, string>();
  let bytes = 0;
  const clear = () => {
    texts.clear();
    bytes = 0;
  };
  return {
    format(text) {
      let written = texts.get(text);
      if (written === undefined) {
        written = formatConsensus(text);
        const size = CONSENSUS_ENTRY_BYTES + text.length + written.length;
        if (texts.size >= CONSENSUS_TEXTS_KEPT || bytes + size > CONSENSUS_TEXTS_BYTES) clear();
        texts.set(text, written);
        bytes += size;
      }
      return written;
    },
    cache: { name: "consensus_texts", stats: () => ({ entries: texts.size, bytes, maxBytes: CONSENSUS_TEXTS_BYTES }), clear },
  };
}

function formatConsensus(text: string): string {
  const m = CONSENSUS_RE.exec(text);
  if (m === null) throw new Error(`consensus time ${JSON.stringify(text)} is not seconds.nanoseconds`);
  const whole = rfc3339Ms(Number(m[1]) * 1000); // …SS.000Z; throws past 9999
  return `${whole.slice(0, 19)}.${m[2]}Z`;
}

/** Orders `seconds.nanoseconds` texts by instant (seconds are not zero-padded). */
export function compareConsensus(a: string, b: string): number {
  const [as = "", an = ""] = a.split(".");
  const [bs = "", bn = ""] = b.split(".");
  const ds = Number(as) - Number(bs);
  if (ds !== 0) return ds;
  return an === bn ? 0 : an < bn ? -1 : 1;
}
