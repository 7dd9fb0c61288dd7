/**
 * What the page says, as pure functions (no DOM), so that the wording of each verdict and the
 * reading of the form's fields are tested without a browser.
 */

import type { Network } from "../receipt.ts";
import { safeText } from "../render.ts";
import type { SignedPdf } from "../signed-pdf.ts";
import { builtinMirrors } from "../trust.ts";
import type { Report } from "../verify.ts";

export type Tone = "good" | "bad" | "warn";

export interface VerdictText {
  readonly headline: string;
  readonly explanation: string;
  readonly tone: Tone;
}

/**
 * The word for each outcome, the same on every page people read (docs/verification.md, "Words on
 * the pages"): the public verify page calls a record in good standing Valid and a revoked one
 * Revoked, and so does this page. The verifier's own names (`verified_org`, …) are for machines:
 * the command line's `--json`, and this page's `data-verdict` and its verdict code line.
 */
export const OUTCOME_WORDS = {
  valid: "Valid",
  revoked: "Revoked",
  notValid: "Not valid",
  noRecord: "No record for this document",
  mirrorsDisagree: "Mirror nodes disagree",
  unverifiable: "Could not be verified",
} as const;

/** Every verdict of docs/receipts.md §4.2, in words for a person. */
const VERDICTS: Readonly<Record<string, VerdictText>> = {
  verified_org: {
    headline: OUTCOME_WORDS.valid,
    explanation: "The organisation shown below authenticated this document at the time shown, the ledger's mirror nodes agree, and it has not been revoked.",
    tone: "good",
  },
  verified: {
    headline: OUTCOME_WORDS.valid,
    explanation: "A person within the organisation shown below signed this document at the time shown, the ledger's mirror nodes agree, and it has not been revoked.",
    tone: "good",
  },
  revoked: {
    headline: OUTCOME_WORDS.revoked,
    explanation: "The record was authenticated, but a revocation of it is on the ledger: do not rely on this document.",
    tone: "bad",
  },
  signature_invalid: {
    headline: OUTCOME_WORDS.notValid,
    explanation: "A signature, or what the ledger holds, does not match the receipt: it may have been altered. Do not rely on this document.",
    tone: "bad",
  },
  no_record: {
    headline: OUTCOME_WORDS.noRecord,
    explanation: "This receipt is not for this document, or the ledger holds no such record.",
    tone: "bad",
  },
  inconsistent_mirrors: {
    headline: OUTCOME_WORDS.mirrorsDisagree,
    explanation: "The mirror nodes asked gave different answers, so at least one of them is wrong. Try other mirror nodes; nothing can be concluded meanwhile.",
    tone: "bad",
  },
  unverifiable: {
    headline: OUTCOME_WORDS.unverifiable,
    explanation: "The ledger could not be consulted as required (too few mirror nodes, one unreachable, or an answer that is not a mirror node's). This says nothing either way about the document.",
    tone: "warn",
  },
};

export function verdictText(verdict: string): VerdictText {
  return VERDICTS[verdict] ?? { headline: verdict, explanation: "An outcome this page does not know.", tone: "warn" };
}

/**
 * The verdict as the page states it: a verified record whose organisation is not confirmed is
 * headlined as such (the ledger proof holds; who made it is a claim), and a local-ledger verdict
 * says it proves nothing publicly.
 */
export function reportText(report: Report): VerdictText {
  const v = verdictText(report.verdict);
  const proven = report.verdict === "verified" || report.verdict === "verified_org";
  const confirmed = report.identity?.status === "confirmed";
  const headline = proven && !confirmed ? `${v.headline}, but who made it is not confirmed` : v.headline;
  const tone: Tone = proven && (!confirmed || !report.public) ? "warn" : v.tone;
  // Unconfirmed, the explanation speaks of a key and the name it was announced under, never of the organisation as fact.
  const explanation =
    proven && !confirmed
      ? `A key announced on the ledger under the name shown below ${report.verdict === "verified" ? "signed" : "authenticated"} this document at the time shown, the ledger's mirror nodes agree, and it has not been revoked. Who holds that key is not confirmed.`
      : v.explanation;
  return { headline: report.public ? headline : `${headline} (local development ledger: proves nothing publicly)`, explanation, tone };
}

/**
 * Who made the record, in words: a confirmed organisation as fact, with how; otherwise the
 * ledger's claim, always labelled as a claim. Ledger text is made safe for display (control and
 * direction-changing characters written as \u{…}), as on the command line.
 */
export function identityText(report: Report): { readonly label: string; readonly name: string | null; readonly note: string; readonly tone: Tone } {
  const id = report.identity;
  if (id === null) return { label: "Organisation: not established", name: null, note: "No key announcement was confirmed on the ledger.", tone: "warn" };
  const claimed = id.claimedName ?? `organisation ${id.claimedOrgId}`;
  if (id.status === "confirmed") {
    const how = id.method === "trust-file" ? "your trust file" : id.method === "https" ? `https://${id.domain}/.well-known/docverify.json` : `the DNS record of ${id.domain}`;
    const name = id.confirmedName ?? id.domain ?? claimed;
    return { label: "Organisation (confirmed): ", name: safeText(name), note: `Confirmed by ${safeText(how)}${id.domain !== null ? ` for ${safeText(id.domain)}` : ""}.`, tone: "good" };
  }
  if (id.status === "mismatch") {
    return { label: "Organisation: MISMATCH. The ledger claims ", name: safeText(claimed), note: `But ${safeText(id.detail)}. Do not rely on this receipt.`, tone: "bad" };
  }
  const domain = id.claimedDomain === null ? "" : ` (domain ${safeText(id.claimedDomain)})`;
  return {
    label: "Organisation: unconfirmed claim. The ledger announcement claims ",
    name: safeText(claimed),
    note: `${domain === "" ? "" : `It names a domain${domain}, which did not confirm it. `}Anyone can announce any name on a ledger topic of their own: load a trust file, or check the organisation's web address. (This page cannot read DNS records; the command line can.) ${safeText(id.detail)}.`,
    tone: "warn",
  };
}

/** The mirror field's starting list for a receipt's network: the built-in mirror nodes, never the receipt's. */
export function startingMirrors(network: Network): string {
  return builtinMirrors(network).join("\n");
}

/** The textarea's lines, trimmed, without blanks. The core checks each URL. */
export function mirrorLines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "");
}

/**
 * The minimum-mirrors field: a whole number ≥ 1, or null when it is anything else (the page then
 * says so instead of guessing).
 */
export function minimumMirrors(text: string): number | null {
  const t = text.trim();
  if (!/^[0-9]{1,3}$/.test(t)) return null;
  const n = Number(t);
  return n >= 1 ? n : null;
}

/** The scan limit field's text → pages of 100 messages (1 to 999,999,999), or null when it is not one. */
export function scanPages(text: string): number | null {
  const t = text.trim();
  return /^[1-9][0-9]{0,8}$/.test(t) ? Number(t) : null;
}

/** `1536` → `1.5 KiB`. */
export function byteSize(n: number): string {
  if (n < 1024) return `${n} bytes`;
  const units = ["KiB", "MiB", "GiB"];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}

export const STATUS_WORD: Readonly<Record<string, string>> = { pass: "pass", fail: "fail", skipped: "skipped", warn: "warning" };

/** What was hashed, said under the document's field: the file, or the original inside a signed PDF. */
export function documentLine(name: string, size: number, pdf: SignedPdf, docHash: string): string {
  const file = `${name} (${byteSize(size)})`;
  if (pdf.kind === "signed") return `${file} is a PDF signed with docverify (record ${pdf.recordId}): its original document, the first ${pdf.originalLength} bytes, hashed in this browser: ${docHash}`;
  if (pdf.kind === "changed-after-signing") {
    return `${file} is a PDF signed with docverify (record ${pdf.recordId}) but changed after signing, so it is no longer the signed document and cannot match; hashed whole in this browser: ${docHash}`;
  }
  return `${file}, hashed in this browser: ${docHash}`;
}
