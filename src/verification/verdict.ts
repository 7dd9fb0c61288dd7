/**
 * The verdict (docs/verification.md, "Verdicts"; verify.ts's header): a pure function of the
 * checked matches and, when no anchored record decides, of when the newest record awaiting
 * consensus was stored.
 */
import type { Match, Verdict } from "./types.ts";

export interface VerifyResult {
  readonly verdict: Verdict;
  readonly matches: Match[];
  /** Present exactly when `verdict` is `pending_anchor`. */
  readonly retryAfterSeconds?: number;
}

/** Typical finality is 3–5 s after acceptance. */
const EXPECTED_FINALITY_MS = 5_000;

/**
 * Seconds a client should wait before polling a `pending_anchor` hash again: until the typical
 * finality of the newest accepted record has passed (at least 1), then 2 s for the first minute,
 * then 30 s (consensus that late is not reconciled by polling: docs/records.md, "1. Creating a record").
 */
export function retryAfterFor(acceptedAtMs: number, nowMs: number): number {
  const elapsed = Math.max(0, nowMs - acceptedAtMs);
  if (elapsed < EXPECTED_FINALITY_MS) return Math.max(1, Math.ceil((EXPECTED_FINALITY_MS - elapsed) / 1000));
  if (elapsed < 60_000) return 2;
  return 30;
}

/**
 * The verdict over `matches`, the anchored records returned, in consensus order, and `deciding`,
 * those and the records past them a verdict class rests on (checked like a match, never
 * returned): over `deciding`, "is there a record of this class" has the answer it has over every
 * record. `newestAccepted` is asked only when no anchored record decides; `now` in ms.
 */
export function verdictOf(matches: Match[], deciding: readonly Match[], newestAccepted: () => number | null, now: number): VerifyResult {
  const failed = deciding.some((m) => m.checksPerformed.hashBinding === "fail" || m.checksPerformed.userSignature === "fail" || m.checksPerformed.serverSeal === "fail");
  if (failed) return { verdict: "signature_invalid", matches };
  if (deciding.some((m) => m.status === "active" && m.signerType === "user")) return { verdict: "verified", matches };
  if (deciding.some((m) => m.status === "active" && m.signerType === "org")) return { verdict: "verified_org", matches };
  if (deciding.some((m) => m.status === "revoked")) return { verdict: "revoked", matches };

  // No anchored record at all (every anchored record is active or revoked).
  const newest = newestAccepted();
  if (newest !== null) return { verdict: "pending_anchor", matches: [], retryAfterSeconds: retryAfterFor(newest, now) };
  return { verdict: "no_record", matches: [] };
}
