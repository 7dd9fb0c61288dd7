/**
 * Request validation for the record operations (docs/records.md §1, §2). Each failure is
 * a 400 VALIDATION_FAILED whose `details` names the field. Values are never normalised: what is
 * accepted is stored exactly as sent.
 */
import { DOC_HASH_PATTERN, DOC_HASH_RE, UUID_RE } from "../lib/formats.ts";
import { DomainError, invalid } from "../lib/errors.ts";

export const REVOCATION_REASONS = [
  "SUPERSEDED",
  "ERROR_IN_DOCUMENT",
  "KEY_COMPROMISE",
  "PRIVILEGE_WITHDRAWN",
  "AFFILIATION_CHANGED",
  "CESSATION_OF_OPERATION",
  "CERTIFICATE_HOLD",
  "UNSPECIFIED",
  "OTHER",
] as const;
export type RevocationReason = (typeof REVOCATION_REASONS)[number];

/** What each reason means and what a verifier should conclude (docs/records.md §2's table). */
export const REVOCATION_MEANINGS: Readonly<Record<RevocationReason, { readonly meaning: string; readonly conclusion: string }>> = {
  SUPERSEDED: { meaning: "A newer document replaces this one.", conclusion: "Validly authenticated; look for the replacement." },
  ERROR_IN_DOCUMENT: { meaning: "The document contains an error.", conclusion: "Validly authenticated; contents wrong." },
  KEY_COMPROMISE: { meaning: "Signing key may be in others' hands.", conclusion: "Treat the authentication as untrustworthy." },
  PRIVILEGE_WITHDRAWN: { meaning: "Authority to authenticate was withdrawn.", conclusion: "The signer was not entitled to authenticate it." },
  AFFILIATION_CHANGED: { meaning: "The signer's relationship to the organisation changed.", conclusion: "Validly authenticated at the time." },
  CESSATION_OF_OPERATION: { meaning: "The organisation or service stopped operating.", conclusion: "Validly authenticated at the time." },
  CERTIFICATE_HOLD: { meaning: "Temporarily withdrawn pending a decision.", conclusion: "Do not rely on it for now." },
  UNSPECIFIED: { meaning: "No reason given.", conclusion: "Only the fact of revocation." },
  OTHER: { meaning: "Reason outside the list.", conclusion: "Only the fact of revocation." },
};

export function isRevocationReason(value: unknown): value is RevocationReason {
  return typeof value === "string" && (REVOCATION_REASONS as readonly string[]).includes(value);
}

export const FILENAME_MAX_CODE_POINTS = 500;

export interface RecordRequest {
  readonly docHash: string;
  /** Exactly as sent; undefined when absent. */
  readonly filename: string | undefined;
}

/** True for a record id in its one accepted spelling. Anything else is answered like an unknown id. */
export function isRecordId(value: string): boolean {
  return UUID_RE.test(value);
}

export function validateDocHash(value: unknown, field = "originalDocHash"): string {
  if (value === undefined) throw invalid(field, "required");
  if (typeof value !== "string") throw invalid(field, `must be a string matching ${DOC_HASH_PATTERN}`);
  if (!DOC_HASH_RE.test(value)) {
    const hint = /^[0-9a-fA-F]{64}$/.test(value)
      ? "a bare digest is refused: prefix it with sha256:"
      : /^sha256:[0-9a-fA-F]{64}$/.test(value)
        ? "the hex digest must be lowercase"
        : `must match ${DOC_HASH_PATTERN}`;
    throw invalid(field, hint);
  }
  return value;
}

// Cc (controls), Cf (invisible formatting: bidi overrides and isolates, soft hyphen, zero-width
// space, BOM, tag characters...) except U+200C ZWNJ and U+200D ZWJ, which written scripts and
// emoji sequences need (docs/records.md §1).
const REFUSED_CHARACTER = /[\p{Cc}\p{Cf}]/u;
// Characters that show as nothing though they are not Cf, so that a name made of them (or with
// them inside) looks like another or like none on a page: the default-ignorable ones (Hangul
// fillers U+115F, U+1160, U+3164, U+FFA0; Khmer inherent vowels U+17B4, U+17B5; the combining
// grapheme joiner...) except the variation selectors emoji need, the braille blank U+2800, the
// line and paragraph separators (Zl, Zp), and the spaces other than U+0020 and the no-break spaces
// U+00A0 and U+202F (U+3000, U+2000–U+200A...: a space that is not a space).
const BLANK_CHARACTER = /[\p{Default_Ignorable_Code_Point}\u2800\p{Zl}\p{Zp}\p{Zs}]/u;
const KEPT_BLANK = /[\u0020\u00a0\u202f\u200c\u200d\ufe00-\ufe0f\u{e0100}-\u{e01ef}]/u;

const codePoint = (ch: string) => `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;

/** Why `filename` is refused, or null when it is acceptable. */
export function filenameProblem(value: string): string | null {
  if (!value.isWellFormed()) return "must not contain a lone surrogate (invalid Unicode)";
  let count = 0;
  for (const ch of value) {
    count++;
    if (ch !== "\u200c" && ch !== "\u200d" && REFUSED_CHARACTER.test(ch)) return `must not contain control or invisible formatting characters (found ${codePoint(ch)})`;
    if (BLANK_CHARACTER.test(ch) && !KEPT_BLANK.test(ch)) return `must not contain characters that show as nothing or as a space that is not one (found ${codePoint(ch)})`;
  }
  if (count === 0) return "must not be empty";
  // A name shown with space around it, or made of spaces alone, cannot be told apart on a page.
  if (/^\s|\s$/u.test(value)) return "must not begin or end with white space";
  if (count > FILENAME_MAX_CODE_POINTS) return `must be at most ${FILENAME_MAX_CODE_POINTS} characters (code points); got ${count}`;
  return null;
}

/** POST /v1/records body. Unknown properties (an `orgId`, a `credentialId`) are ignored. */
export function parseRecordRequest(body: Readonly<Record<string, unknown>>): RecordRequest {
  const details: Record<string, string> = {};
  let docHash = "";
  try {
    docHash = validateDocHash(body.originalDocHash);
  } catch (e) {
    Object.assign(details, (e as DomainError).details);
  }
  let filename: string | undefined;
  if (body.filename !== undefined) {
    if (typeof body.filename !== "string") details.filename = "must be a string";
    else {
      const problem = filenameProblem(body.filename);
      if (problem !== null) details.filename = problem;
      else filename = body.filename;
    }
  }
  throwIfAny(details);
  return { docHash, filename };
}

/** POST /v1/records/{recordId}/revoke body. */
export function parseRevokeRequest(body: Readonly<Record<string, unknown>>): { reason: RevocationReason } {
  const reason = body.reason;
  if (reason === undefined) throw invalid("reason", `required: one of ${REVOCATION_REASONS.join(", ")}`);
  if (!isRevocationReason(reason)) throw invalid("reason", `must be one of ${REVOCATION_REASONS.join(", ")}`);
  return { reason };
}

function throwIfAny(details: Record<string, string>): void {
  const fields = Object.keys(details);
  if (fields.length === 0) return;
  throw new DomainError("VALIDATION_FAILED", `Invalid ${fields.join(" and ")}: ${fields.map((f) => details[f]).join("; ")}`, details);
}
