/**
 * The human output of the verifier (docs/receipts.md §4.3): the verdict, the organisation's name
 * from the key announcement, then one line per check. Everything interpolated is ledger or
 * receipt text, so control and bidirectional-override characters are shown escaped: a name on
 * the ledger must not be able to move the cursor or reorder a terminal line.
 */
import type { Report, Verdict } from "./verify.ts";

const MEANING: Readonly<Record<Verdict, string>> = {
  verified: "the signer's key signed this document, docverify sealed it, and the ledger confirms both",
  verified_org: "the organisation's key signed this document, docverify sealed it, and the ledger confirms both",
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

export function renderReport(report: Report): string {
  const lines: string[] = [];
  lines.push(`Verdict: ${report.verdict} (${MEANING[report.verdict]})`);
  if (report.organisation === null) lines.push("Organisation: not established (no confirmed key announcement)");
  else if (report.organisation.name === null) {
    // A person's key is announced without any name (decisions §10).
    lines.push(`Organisation: ${report.organisation.orgId}, as announced on the ledger (a person's key is announced without names: the organisation's /.well-known/docverify.json names it)`);
  } else lines.push(`Organisation: ${report.organisation.name} (${report.organisation.orgId}), as announced on the ledger`);
  if (report.person !== null) lines.push(`Signed by: person ${report.person.personId} of that organisation, whose key is announced on its topic (no name is on the ledger)`);
  lines.push(`Record: ${report.recordId}`);
  lines.push(`Document: ${report.originalDocHash}`);
  if (report.revocation !== null) {
    const r = report.revocation;
    lines.push(`Revoked: ${r.reason} at ${r.revokedAt} (ledger message #${r.sequenceNumber}, consensus ${r.consensusAt})`);
  }
  lines.push(report.offline ? "Mirror nodes: none (offline)" : `Mirror nodes: ${report.mirrors.length === 0 ? "none" : report.mirrors.join(", ")} (minimum ${report.minMirrors})`);
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
