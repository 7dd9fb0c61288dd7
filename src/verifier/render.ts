/**
 * The human output of the verifier (docs/receipts.md §4.3): the verdict, whether the ledger is
 * public, who made the record (confirmed, or the ledger's claim labelled as a claim), then one
 * line per check. Everything interpolated is ledger or
 * receipt text, so control and bidirectional-override characters are shown escaped: a name on
 * the ledger must not be able to move the cursor or reorder a terminal line.
 */
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
    lines.push(`Revoked: ${r.reason} at ${r.revokedAt} (ledger message #${r.sequenceNumber}, consensus ${r.consensusAt})`);
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
    lines.push(`  ${status.padEnd(4)}  ${c.name.padEnd(width)}  ${c.detail}`);
  }
  return lines.map(safeText).join("\n") + "\n";
}
