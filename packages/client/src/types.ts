/**
 * The resources' types, named. Each is taken from the generated OpenAPI types (openapi.ts), so
 * they follow the document the service serves; nothing here is written by hand but the names.
 */
import type { components } from "./openapi.ts";

type Schemas = components["schemas"];

/** A document's record, as POST /v1/records answers it. */
export type Record = Schemas["Record"];
/** A verification's answer (POST /v1/verifications). */
export type Verification = Schemas["Verification"];
/** One row of the organisation's verification log. */
export type VerificationSummary = Schemas["VerificationSummary"];
/** A page of the verification log; `pagination.nextCursor` is null on the last page. */
export type VerificationPage = Schemas["VerificationPage"];
/** A record's receipt (the parsed JSON; the exact bytes are returned beside it). */
export type Receipt = Schemas["Receipt"];
/** The service's identity document, /.well-known/docverify.json. */
export type Identity = Schemas["Identity"];
export type Verdict = Schemas["Verification"]["verdict"];
export type RevocationReason = Schemas["RevocationReason"];
export type AnchorState = Schemas["Record"]["anchorState"];
export type Match = Schemas["Match"];
/** The error envelope every failed call answers with. */
export type ErrorEnvelope = Schemas["Error"];
