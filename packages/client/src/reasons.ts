/**
 * The nine revocation reasons as a value, for a caller that checks a reason before it sends one
 * (a command line's `--reason`). The type is the OpenAPI document's; the check below fails to
 * compile if the document gains or loses a reason and this list does not follow.
 */
import type { RevocationReason } from "./types.ts";

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
] as const satisfies readonly RevocationReason[];

/** Compiles only while the list holds every reason of the document. */
const _everyReason: readonly (typeof REVOCATION_REASONS)[number][] = [] as RevocationReason[];
void _everyReason;

export function isRevocationReason(value: string): value is RevocationReason {
  return (REVOCATION_REASONS as readonly string[]).includes(value);
}
