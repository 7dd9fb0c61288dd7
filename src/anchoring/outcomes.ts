/**
 * What a consensus node's answer to a submission means for the anchor loop (ledger.ts's
 * `SubmitOutcome` classes): accepted (a duplicate counts: the same bytes got in earlier),
 * expired, retryable (the node may take the same bytes later), or permanent; and the status a
 * failed request ended on, read from the SDK's "max attempts" error. Pure functions over status
 * names, so the classification reads (and tests) without the SDK.
 */
import type { SubmitOutcome } from "./ledger.ts";

/** Precheck statuses after which the same bytes may still be accepted. */
const RETRYABLE_PRECHECK = new Set([
  "BUSY",
  "PLATFORM_NOT_ACTIVE",
  "PLATFORM_TRANSACTION_NOT_CREATED",
  "UNKNOWN",
  "INVALID_TRANSACTION_START",
  "THROTTLED_AT_CONSENSUS",
  "INVALID_NODE_ACCOUNT",
]);

/** The status at the end of the SDK's "max attempts" message, e.g. `BUSY`, or null for a gRPC failure. */
export function lastStatus(e: Error): string | null {
  const m = /last error being: ([A-Z_]+)\s*$/.exec(e.message);
  return m === null ? null : m[1]!;
}

export function classifyPrecheck(status: string): SubmitOutcome {
  if (status === "OK") return { kind: "accepted", duplicate: false };
  if (status === "DUPLICATE_TRANSACTION") return { kind: "accepted", duplicate: true };
  if (status === "TRANSACTION_EXPIRED") return { kind: "expired", status };
  if (RETRYABLE_PRECHECK.has(status)) return { kind: "retryable", status };
  return { kind: "permanent", status };
}
