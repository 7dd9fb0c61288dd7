/**
 * What a call fails with: DocverifyError for an HTTP answer that is not a success (the service's
 * error envelope, or the status alone when something in between answered), and
 * DocverifyConnectionError when the service could not be reached, retries included. Neither ever
 * carries the API key: messages name the method, the path, the status and the code.
 */

/** Every code this version of the API answers with (docs: the error envelope). */
export const ERROR_CODES = [
  "VALIDATION_FAILED",
  "UNAUTHENTICATED",
  "PAYMENT_REQUIRED",
  "ADDON_REQUIRED",
  "FORBIDDEN",
  "TEST_ENVIRONMENT",
  "SCOPE_REQUIRED",
  "NOT_REVOCABLE",
  "ORGANISATION_SUSPENDED",
  "NOT_FOUND",
  "METHOD_NOT_ALLOWED",
  "ALREADY_REVOKED",
  "ANCHOR_NOT_FINAL",
  "PAYLOAD_TOO_LARGE",
  "RATE_LIMITED",
  "INTERNAL_ERROR",
  "SERVICE_UNAVAILABLE",
] as const;

/** The closed set of codes this client knows. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * A code as received: one of ErrorCode, or, from a newer service, a code this client does not
 * know yet (kept as it came, never a crash). `(string & {})` keeps editors completing the known
 * codes while admitting any string; handle an unknown code by its HTTP status.
 */
export type AnyErrorCode = ErrorCode | (string & {});

export function isErrorCode(code: string): code is ErrorCode {
  return (ERROR_CODES as readonly string[]).includes(code);
}

/** The code an answer without the error envelope stands for, by its status (a proxy's 503 page). */
export function codeForStatus(status: number): AnyErrorCode {
  const byStatus: { [status: number]: ErrorCode } = {
    400: "VALIDATION_FAILED",
    401: "UNAUTHENTICATED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    413: "PAYLOAD_TOO_LARGE",
    429: "RATE_LIMITED",
    500: "INTERNAL_ERROR",
    503: "SERVICE_UNAVAILABLE",
  };
  return byStatus[status] ?? `HTTP_${status}`;
}

export interface DocverifyErrorInit {
  method: string;
  path: string;
  status: number;
  code: AnyErrorCode;
  message: string;
  details?: { [field: string]: string };
  requestId?: string;
  retryAfterSeconds?: number;
}

/** The service answered, and not with a success (after any retries). */
export class DocverifyError extends Error {
  override readonly name = "DocverifyError";
  readonly status: number;
  /** Branch on this. A code outside ErrorCode comes from a newer service: see AnyErrorCode. */
  readonly code: AnyErrorCode;
  /** On VALIDATION_FAILED: each offending field → one message. */
  readonly details?: { [field: string]: string };
  /** The answer's X-Request-Id: quote it to the service's operator. */
  readonly requestId?: string;
  readonly retryAfterSeconds?: number;
  readonly method: string;
  readonly path: string;

  constructor(init: DocverifyErrorInit) {
    super(`${init.method} ${init.path}: ${init.status} ${init.code}: ${init.message}`);
    this.status = init.status;
    this.code = init.code;
    this.method = init.method;
    this.path = init.path;
    if (init.details !== undefined) this.details = init.details;
    if (init.requestId !== undefined) this.requestId = init.requestId;
    if (init.retryAfterSeconds !== undefined) this.retryAfterSeconds = init.retryAfterSeconds;
  }
}

/** The service could not be reached (refused, reset, timed out), every attempt included. */
export class DocverifyConnectionError extends Error {
  override readonly name = "DocverifyConnectionError";
  readonly url: string;
  override readonly cause: unknown;
  readonly attempts: number;

  constructor(url: string, cause: unknown, attempts = 1) {
    super(`cannot reach ${url} (${attempts} attempt${attempts === 1 ? "" : "s"}): ${describe(cause)}`);
    this.url = url;
    this.cause = cause;
    this.attempts = attempts;
  }
}

/** waitForVerdict's deadline passed before the verdict became one of those waited for. */
export class DocverifyTimeoutError extends Error {
  override readonly name = "DocverifyTimeoutError";
  readonly originalDocHash: string;
  /** The verdict of the last verification made, if any. */
  readonly until: readonly string[];
  readonly lastVerdict?: string;
  readonly timeoutMs: number;

  constructor(originalDocHash: string, until: readonly string[], timeoutMs: number, lastVerdict?: string) {
    super(`no verdict in [${until.join(", ")}] for ${originalDocHash} within ${timeoutMs} ms${lastVerdict === undefined ? "" : ` (last: ${lastVerdict})`}`);
    this.originalDocHash = originalDocHash;
    this.until = until;
    this.timeoutMs = timeoutMs;
    if (lastVerdict !== undefined) this.lastVerdict = lastVerdict;
  }
}

/** A network error's most useful words: Node puts the system error (ECONNREFUSED) in `cause`. */
function describe(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const inner = (e as { cause?: unknown }).cause;
  const code = (e as { code?: unknown }).code ?? (inner as { code?: unknown } | undefined)?.code;
  return code === undefined ? e.message : `${e.message} (${String(code)})`;
}
