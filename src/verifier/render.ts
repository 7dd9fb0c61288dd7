/**
 * The human output of the verifier (docs/receipts.md §4.3): the verdict, whether the ledger is
 * public, who made the record (confirmed, or the ledger's claim labelled as a claim), then one
 * line per check. Everything interpolated is ledger or
 * receipt text, so control and bidirectional-override characters are shown escaped: a name on
 * the ledger must not be able to move the cursor or reorder a terminal line.
 *
 * Times are written for people, as on every page (`humanTime`: `1 December 2026, 17:58:48 UTC`),
 * here and on the receipt page; `--json` keeps the exact values (RFC 3339, consensus
 * `seconds.nanoseconds`).
 */
import { humanTime, instantMs } from "./human-time.ts";
import { normaliseMirrorUrl } from "./receipt.ts";
import type { Report, Verdict } from "./verify.ts";

const MEANING: Readonly<Record<Verdict, string>> = {
  verified: "a person's key announced on the ledger topic signed this document, the seal announced with it verifies, and the ledger confirms both; who they are: see Identity",
  verified_org: "a key announced on the ledger topic signed this document, the seal announced with it verifies, and the ledger confirms both; whose key it is: see Identity",
  revoked: "the record was valid but has been revoked on the ledger",
  signature_invalid: "the receipt's signatures or its ledger entries do not hold: do not trust it",
  no_record: "this receipt does not prove a record of this document",
  inconsistent_mirrors: "the mirror nodes disagree: at least one of them is wrong; try others with --mirror",
  unverifiable: "the verifier could not reach a conclusion; see the checks",
};

const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** The text with every control or direction-changing character written as `\u{…}`. */
export function safeText(text: string): string {
  return text.replace(UNSAFE, (c) => `\\u{${c.charCodeAt(0).toString(16)}}`);
}

/** The instant as an HTML `<time datetime>` accepts it (milliseconds at most), or the value as is. */
export function machineTime(value: string): string {
  const ms = instantMs(value);
  return ms === null ? value : new Date(ms).toISOString();
}

/**
 * The times inside a check's detail (a consensus time, an RFC 3339 time), found so that they can
 * be shown for people: the text cut into plain parts and times. A transaction id's
 * `@seconds.nanoseconds` is part of an id, not a time, and is left alone.
 */
const TIME_IN_TEXT = /(?<![@.\w])(?:\d{9,12}\.\d{9}|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2}))(?!\w|\.\d)/g;
export function timesIn(text: string): ({ readonly text: string } | { readonly time: string })[] {
  const parts: ({ text: string } | { time: string })[] = [];
  let at = 0;
  for (const m of text.matchAll(TIME_IN_TEXT)) {
    if (instantMs(m[0]) === null) continue;
    if (m.index > at) parts.push({ text: text.slice(at, m.index) });
    parts.push({ time: m[0] });
    at = m.index + m[0].length;
  }
  if (at < text.length) parts.push({ text: text.slice(at) });
  return parts;
}

/** The text with every time in it written for people. */
export function humanTimesIn(text: string): string {
  return timesIn(text)
    .map((p) => ("time" in p ? humanTime(p.time) : p.text))
    .join("");
}

/** The identity line: a confirmed organisation as fact, anything else as a claim, labelled so. */
export function identityLine(report: Report): string {
  const id = report.identity;
  if (id === null) return "Identity: not established (no key announcement confirmed on the ledger)";
  const claimed = [id.claimedName === null ? null : JSON.stringify(id.claimedName), `id ${id.claimedOrgId}`, id.claimedDomain === null ? null : `domain ${id.claimedDomain}`].filter((x) => x !== null).join(", ");
  if (id.status === "confirmed") {
    const who = id.confirmedName !== null ? `${JSON.stringify(id.confirmedName)}${id.domain === null ? "" : ` (${id.domain})`}` : `the organisation of ${id.domain}`;
    return `Identity: confirmed by ${id.method}: ${who}; ${id.detail}`;
  }
  if (id.status === "mismatch") return `Identity: MISMATCH: the ledger announcement claims ${claimed}, but ${id.detail}. Do not trust this receipt.`;
  return `Identity: UNCONFIRMED claim: the ledger announcement claims ${claimed}; nothing this verifier trusts confirms it (${id.detail}). Anyone can announce any name on a topic of their own: pin the organisation with --trust FILE, or check its domain.`;
}

export function renderReport(report: Report): string {
  const lines: string[] = [];
  lines.push(`Verdict: ${report.verdict} (${MEANING[report.verdict]})`);
  if (!report.public) lines.push("Ledger: local development ledger: proves nothing publicly");
  lines.push(identityLine(report));
  if (report.person !== null) lines.push(`Signed by: person ${report.person.personId} of that organisation, whose key is announced on its topic (no name is on the ledger)`);
  lines.push(`Record: ${report.recordId}`);
  lines.push(`Document: ${report.originalDocHash}`);
  if (report.revocation !== null) {
    const r = report.revocation;
    // A batch listing the record without the receipt's proof of its leaf: revoked, reason unknown (see revocationScan).
    if (r.reason === null) lines.push(`Revoked: by ledger message #${r.sequenceNumber} (consensus ${humanTime(r.consensusAt)}), a batch listing this record; the reason is not on the ledger`);
    else lines.push(`Revoked: ${r.reason} on ${humanTime(r.revokedAt)} (ledger message #${r.sequenceNumber}, consensus ${humanTime(r.consensusAt)})`);
  }
  if (report.offline) lines.push("Mirror nodes: none (offline)");
  else {
    const asked = report.mirrors.map((m, i) => `${m} (${report.mirrorSources[i]})`).join(", ");
    lines.push(`Mirror nodes: ${report.mirrors.length === 0 ? "none" : asked} on ${report.witnesses} distinct host${report.witnesses === 1 ? "" : "s"} (minimum ${report.minMirrors})`);
  }
  // Compared as the mirror nodes asked are spelled (normalised), so `HTTPS://Mirror.Example/` asked is not listed as unasked.
  const unasked = report.suggestedMirrors.filter((m) => !report.mirrors.includes(normaliseMirrorUrl(m) ?? m));
  if (unasked.length > 0) lines.push(`Suggested by the receipt, not asked (a receipt does not choose its witnesses; name one with --mirror to ask it): ${unasked.join(", ")}`);
  if (report.minMirrors < 2) {
    lines.push(`WARNING: --min-mirrors ${report.minMirrors} is a weakened check: a single mirror node could show a forged message or hide a revocation.`);
  }
  const width = Math.max(...report.checks.map((c) => c.name.length));
  for (const c of report.checks) {
    const status = c.status === "skipped" ? "skip" : c.status;
    lines.push(`  ${status.padEnd(4)}  ${c.name.padEnd(width)}  ${humanTimesIn(c.detail)}`);
  }
  return lines.map(safeText).join("\n") + "\n";
}
