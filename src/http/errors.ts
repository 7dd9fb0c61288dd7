/**
 * The one place domain error codes become HTTP statuses, and the API's error envelope
 * `{error:{code,message,details?}}` is written. Nothing internal (stack, SQL, file paths)
 * ever reaches a response body: unknown failures become a generic INTERNAL_ERROR and the
 * detail goes to the log under the request id.
 */
import { DomainError, type ErrorCode } from "../lib/errors.ts";

export const STATUS: Readonly<Record<ErrorCode, number>> = {
  VALIDATION_FAILED: 400,
  UNAUTHENTICATED: 401,
  PAYMENT_REQUIRED: 402,
  ADDON_REQUIRED: 402,
  FORBIDDEN: 403,
  TEST_ENVIRONMENT: 403,
  SCOPE_REQUIRED: 403,
  NOT_REVOCABLE: 403,
  ORGANISATION_SUSPENDED: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  ALREADY_REVOKED: 409,
  ANCHOR_NOT_FINAL: 409,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
};

export interface ErrorEnvelope {
  error: { code: ErrorCode; message: string; details?: Record<string, string> };
}

export function envelope(err: DomainError): ErrorEnvelope {
  const body: ErrorEnvelope = { error: { code: err.code, message: err.message } };
  if (err.details !== undefined) body.error.details = { ...err.details };
  return body;
}

export function jsonResponse(status: number, body: unknown, headers?: Record<string, string>): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...headers },
  });
}

/** A JSON body already serialised (a hot path that writes its JSON itself), with jsonResponse's headers. */
export function jsonTextResponse(status: number, text: string): Response {
  return new Response(text, { status, headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" } });
}

export function errorResponse(err: DomainError, headers?: Record<string, string>): Response {
  const extra: Record<string, string> = { ...headers };
  if (err.retryAfterSeconds !== undefined) extra["retry-after"] = String(Math.max(1, Math.ceil(err.retryAfterSeconds)));
  return jsonResponse(STATUS[err.code], envelope(err), extra);
}

export const internalError = () => new DomainError("INTERNAL_ERROR", "The service failed to answer this request. Retry with backoff; nothing was modified.");
