/**
 * The verification capability's shared vocabulary: verdicts, the shapes of a Match and of a log
 * row as the API shows them (docs/verification.md). The timestamp spellings are
 * src/lib/formats.ts's.
 */

export const VERDICTS = ["verified", "verified_org", "revoked", "signature_invalid", "pending_anchor", "no_record"] as const;
export type Verdict = (typeof VERDICTS)[number];

export function isVerdict(value: unknown): value is Verdict {
  return typeof value === "string" && (VERDICTS as readonly string[]).includes(value);
}

export type Environment = "live" | "test";
export type DisclosureTier = "public" | "organisation";

/** The `assuranceLevel` every verification reports: the registry's scheme, version 1. */
export const ASSURANCE_LEVEL = "docverify.registry.v1";
/** `partial` on every response; clients read it, since its values may change in a later version. */
export const MODE = "partial";

export { DOC_HASH_RE } from "../lib/formats.ts";

export type CheckResult = "pass" | "fail";

export interface ChecksPerformed {
  readonly hashBinding: CheckResult;
  readonly userSignature: CheckResult;
  readonly serverSeal: CheckResult;
  /** The stored anchor state, not a recomputation (always `anchored` on a match). */
  readonly anchorStatus: string;
}

export interface MatchAnchor {
  readonly topicId: string;
  readonly transactionId: string;
  readonly sequenceNumber: number;
  /** RFC 3339 UTC with the ledger's nine fractional digits. */
  readonly consensusAt: string;
  readonly mirrorNodeUrl: string;
}

/** One element of `matches`, already shaped for its disclosure tier. */
export interface Match {
  readonly recordId: string;
  readonly kind: string;
  readonly status: "active" | "revoked";
  readonly recordIssuedAt: string;
  readonly signerType: "org" | "user";
  readonly signerStanding: "good_standing" | "suspended";
  readonly signerHint?: string;
  readonly signerOrg?: string;
  readonly revocation?: { readonly reason: string; readonly revokedAt: string };
  readonly checksPerformed: ChecksPerformed;
  readonly anchor: MatchAnchor;
}

/** A row of the verification log as GET /v1/verifications shows it. */
export interface VerificationSummary {
  readonly verificationId: string;
  readonly verdict: Verdict;
  readonly assuranceLevel: string;
  readonly mode: string;
  readonly environment: Environment;
  readonly originalDocHash: string;
  readonly verifiedAt: string;
  readonly reference?: string;
}

/** GET /v1/verifications/{id}: the verification as it was recorded. */
export interface RecordedVerification {
  readonly verificationId: string;
  readonly verdict: Verdict;
  readonly disclosureTier: "organisation";
  readonly assuranceLevel: string;
  readonly mode: string;
  readonly environment: Environment;
  readonly originalDocHash: string;
  readonly verifiedAt: string;
  readonly reference?: string;
  readonly matches: readonly [];
  /** With verdict `pending_anchor`, as the caller was told. */
  readonly retryAfterSeconds?: number;
}
