/**
 * Domain errors. Every capability throws `DomainError` with a code from this closed
 * union; only `src/http/errors.ts` turns a code into an HTTP status, so the domain never
 * knows about transport. `message` is safe to show to the caller; anything internal
 * belongs in the log, never in a DomainError's message.
 */
export type ErrorCode =
  | "VALIDATION_FAILED"
  | "UNAUTHENTICATED"
  | "PAYMENT_REQUIRED"
  | "ADDON_REQUIRED"
  | "FORBIDDEN"
  | "TEST_ENVIRONMENT"
  | "SCOPE_REQUIRED"
  | "NOT_REVOCABLE"
  | "ORGANISATION_SUSPENDED"
  | "NOT_FOUND"
  | "METHOD_NOT_ALLOWED"
  | "ALREADY_REVOKED"
  | "ANCHOR_NOT_FINAL"
  | "PAYLOAD_TOO_LARGE"
  | "RATE_LIMITED"
  | "INTERNAL_ERROR"
  | "SERVICE_UNAVAILABLE";

export class DomainError extends Error {
  override readonly name = "DomainError";
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Field name → one message, for validation failures. */
    readonly details?: Readonly<Record<string, string>>,
    /** Seconds the caller should wait (429, 503). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

/** A validation failure naming one field. */
export function invalid(field: string, message: string): DomainError {
  return new DomainError("VALIDATION_FAILED", `Invalid ${field}: ${message}`, { [field]: message });
}

/**
 * An operational command (backup, restore) refused to act: the message says why and what to do.
 * Not a DomainError: it never reaches HTTP. The command line exits 1 with the message.
 */
export class OpsError extends Error {
  override readonly name = "OpsError";
}
