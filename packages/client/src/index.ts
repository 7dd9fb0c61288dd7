/**
 * @docverify/client: a typed client of the docverify API, with the interface's retry rules.
 * The public surface is this file's exports; everything else is internal.
 */
export { createClient, type ClientOptions, type DocverifyClient, type VerificationFilter, type WaitOptions } from "./client.ts";
export { DocverifyConnectionError, DocverifyError, DocverifyTimeoutError, ERROR_CODES, isErrorCode, type AnyErrorCode, type ErrorCode } from "./errors.ts";
export { isRevocationReason, REVOCATION_REASONS } from "./reasons.ts";
export type { RetryInfo, RetryOptions } from "./retry.ts";
export type { ResponseInfo } from "./transport.ts";
export type { AnchorState, ErrorEnvelope, Identity, Match, Receipt, Record, RevocationReason, Verdict, Verification, VerificationPage, VerificationSummary } from "./types.ts";
export type { components, operations, paths } from "./openapi.ts";
export { VERSION } from "./version.ts";
