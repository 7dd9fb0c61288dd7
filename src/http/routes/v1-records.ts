/**
 * POST /v1/records and POST /v1/records/{recordId}/revoke (docs/records.md §1, §2). Thin: access first
 * (before the body is read), then the body under its limit, then validation, then the records
 * service. Refusal order (docs/access.md "Order of refusals"): access, then (creation only) a suspended
 * organisation's 403 ORGANISATION_SUSPENDED, then 413, 400, then the resource. Suspension is about
 * the caller's organisation, not about the body or a record, so it answers before the body is
 * read, right after the key's own checks (a key that could never create records hears that first).
 */
import { Elysia, t } from "elysia";
import { FILENAME_MAX_CODE_POINTS, parseRecordRequest, parseRevokeRequest, REVOCATION_REASONS } from "../../records/validate.ts";
import { assertMayCreateRecords } from "../../records/create.ts";
import type { Records } from "../../records/service.ts";
import type { Access, Caller } from "../access.ts";
import { readJsonObject } from "../body.ts";
import { jsonResponse } from "../errors.ts";
import { DocHash, errorResponses, jsonBody, RATE_LIMIT_NOTE, Uuid } from "../schemas.ts";

/** Body limits (docs/records.md §1, §2): room for every legal value written with `\u` escapes. */
export const RECORD_BODY_LIMIT = 8 * 1024;
export const REVOKE_BODY_LIMIT = 4 * 1024;

export interface RecordsRouteDeps {
  readonly access: Access;
  readonly records: Pick<Records, "create" | "revoke">;
}

export const AnchorState = t.Union([t.Literal("pending"), t.Literal("accepted"), t.Literal("anchored")], {
  title: "AnchorState",
  "x-description": "Progress towards ledger finality. Treat an unrecognised value as not yet final.",
});

const RecordBody = t.Object(
  {
    recordId: Uuid,
    originalDocHash: DocHash,
    authenticatedAt: t.String({ format: "date-time", description: "The signed time (RFC 3339, UTC, milliseconds), not the consensus time" }),
    anchorState: AnchorState,
    verifyUrl: t.String({ format: "uri", description: "Public verification page; needs no credential and shows the filename" }),
    anchor: t.Object(
      {
        topicId: t.String({ description: "The organisation's own ledger topic, e.g. 0.0.1234" }),
        transactionId: t.String({
          description: "`<account>@<seconds>.<nanoseconds>`, e.g. `0.0.2@1795507107.624000000`. Mirror nodes and HashScan write it `0.0.2-1795507107-624000000` (docs/clients.md)",
        }),
        hashscanUrl: t.String({ format: "uri", description: "Public ledger explorer page; resolves after consensus" }),
      },
      { title: "RecordAnchor", "x-description": "Where the record's ledger message goes" },
    ),
    retryAfterSeconds: t.Optional(t.Integer({ minimum: 1, description: "Present while `anchorState` is not `anchored`" })),
  },
  { title: "Record", "x-description": "A record: the organisation's authentication of a document hash" },
);

const RecordRequest = t.Object(
  {
    originalDocHash: DocHash,
    filename: t.Optional(
      t.String({
        minLength: 1,
        maxLength: FILENAME_MAX_CODE_POINTS,
        description: `Public metadata shown on the verify page; never signed or put on the ledger. 1–${FILENAME_MAX_CODE_POINTS} code points; control and invisible formatting characters are refused except U+200C and U+200D, and so are characters that show as nothing (Hangul fillers, the braille blank…), line and paragraph separators, spaces other than U+0020, U+00A0 and U+202F, and white space at either end (docs/records.md). Stored exactly as sent.`,
      }),
    ),
  },
  { title: "RecordRequest", "x-description": "Unknown properties (an orgId, a credentialId) are ignored: tenancy comes from the credential." },
);

export const RevocationReason = t.Union(
  REVOCATION_REASONS.map((r) => t.Literal(r)),
  { title: "RevocationReason" },
);
const RevokeRequest = t.Object({ reason: RevocationReason }, { title: "RevokeRequest" });

const CREATE_FORBIDDEN =
  "FORBIDDEN (Origin header, or no verifications:read), TEST_ENVIRONMENT, SCOPE_REQUIRED (records:write), " +
  "ORGANISATION_SUSPENDED (an administrator has suspended the organisation; its keys still verify and revoke)";

function organisationOf(caller: Caller): Extract<Caller, { tier: "organisation" }>["org"] {
  // admit() never returns the public tier for a record operation.
  if (caller.tier !== "organisation") throw new Error("record operation admitted without a credential");
  return caller.org;
}

export function recordsRoutes(deps: RecordsRouteDeps) {
  const { access, records } = deps;
  return new Elysia({ name: "v1-records" })
    .post(
      "/v1/records",
      async ({ request }) => {
        const org = organisationOf(await access.admit(request, "records.create"));
        // Read with the credential, per request: a suspension applies to the next request.
        assertMayCreateRecords(org);
        const input = parseRecordRequest(await readJsonObject(request, RECORD_BODY_LIMIT));
        const { created, record } = await records.create(org.id, input);
        return jsonResponse(created ? 201 : 200, record);
      },
      {
        // No `body` schema: Elysia would validate it (and our 400 must name each field in `details`,
        // after access). The schema documents the body through `requestBody` instead.
        parse: "none",
        detail: {
          requestBody: jsonBody(RecordRequest, RECORD_BODY_LIMIT),
          tags: ["Records"],
          operationId: "createRecord",
          summary: "Authenticate a document as the calling organisation",
          description:
            "Signs the hash with the organisation's ML-DSA-65 system key, seals it with the service key and queues its ledger message. " +
            "The hash is the idempotency key: the first call answers 201, a repeat while the organisation holds an active record for the hash answers 200 with that record and changes nothing (a different filename is ignored). " +
            "Needs `records:write` on a `live` key. 403 ORGANISATION_SUSPENDED while an administrator has suspended the organisation (its keys still verify and revoke). " +
            "503 with `Retry-After` while the organisation's ledger topic is being created or the key store is sealed. " +
            RATE_LIMIT_NOTE,
          security: [{ bearer: [] }],
        },
        response: {
          200: t.Object(RecordBody.properties, { title: "Record", description: "The organisation already holds an active record for this hash; nothing was created" }),
          201: t.Object(RecordBody.properties, { title: "Record", description: "Record created and durable; its ledger message is queued" }),
          ...errorResponses(400, 401, 402, [403, CREATE_FORBIDDEN], 413, 429, 500, 503),
        },
      },
    )
    .post(
      "/v1/records/:recordId/revoke",
      async ({ request, params }) => {
        // A suspended organisation still revokes: that is how it protects verifiers (docs/records.md §1).
        const orgId = organisationOf(await access.admit(request, "records.revoke")).id;
        const { reason } = parseRevokeRequest(await readJsonObject(request, REVOKE_BODY_LIMIT));
        // A malformed id is answered like an unknown one, after body validation (docs/records.md §2).
        const result = await records.revoke(orgId, params.recordId, reason);
        return jsonResponse(200, result);
      },
      {
        // No `params` schema either: a malformed id must be a 404 after access and body checks,
        // not Elysia's validation error.
        parse: "none",
        detail: {
          requestBody: jsonBody(RevokeRequest, REVOKE_BODY_LIMIT),
          parameters: [{ name: "recordId", in: "path", required: true, description: "The record's id (UUID); a malformed one is answered 404", schema: { type: "string", format: "uuid" } }],
          tags: ["Records"],
          operationId: "revokeRecord",
          summary: "Revoke a record this organisation authenticated",
          description:
            "Permanent. Any key of the organisation with `records:revoke` may revoke any record the organisation authenticated through the API. " +
            "403 NOT_REVOCABLE for another organisation's or a person-signed record (not distinguished); 404 for an unknown or malformed id; " +
            "409 ALREADY_REVOKED (never succeeds on retry) or ANCHOR_NOT_FINAL (retry once verification reports verified_org). " +
            "Verification reports the record revoked as soon as this returns; the decision's ledger message anchors in the background. " +
            RATE_LIMIT_NOTE,
          security: [{ bearer: [] }],
        },
        response: {
          200: t.Object({ recordId: Uuid }, { title: "Revoked", description: "Revoked; the decision has been queued for the ledger" }),
          ...errorResponses(400, 401, 402, 403, 404, 409, 413, 429, 500, 503),
        },
      },
    );
}
