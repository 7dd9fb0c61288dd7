/**
 * The verification operations: POST /v1/verifications, GET /v1/verifications and
 * GET /v1/verifications/{id} (docs/verification.md). Thin: admit the caller, read and validate the
 * input, call the verification capability, shape the answer for the caller's tier.
 */
import { Elysia, t } from "elysia";
import type { Clock } from "../../lib/clock.ts";
import { pending, mapMaybe } from "../../lib/maybe.ts";
import { DOC_HASH_PATTERN, rfc3339Ms } from "../../lib/formats.ts";
import { MAX_MATCHES, type Verifier } from "../../verification/verify.ts";
import type { VerificationLog } from "../../verification/log/service.ts";
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_REFERENCE_CODE_POINTS, parseVerificationRequest } from "../../verification/query.ts";
import { ASSURANCE_LEVEL, MODE, VERDICTS, type DisclosureTier, type Verdict as VerdictName } from "../../verification/types.ts";
import type { Access } from "../access.ts";
import { readJsonObject } from "../body.ts";
import { jsonResponse as json, jsonTextResponse } from "../errors.ts";
import { DocHash, errorResponses, jsonBody, RATE_LIMIT_NOTE, Timestamp, Uuid } from "../schemas.ts";
import { AnchorState, RevocationReason } from "./v1-records.ts";

/** The largest legal body is a hash and a 128-character reference, with room for `\u` escapes (docs/verification.md "Request rules"). */
export const VERIFICATION_BODY_LIMIT = 4 * 1024;

export interface VerificationRouteDeps {
  readonly access: Access;
  readonly verifier: Verifier;
  readonly log: VerificationLog;
  readonly clock: Clock;
  /** Called with every verdict computed for POST /v1/verifications (/metrics). Must not throw. */
  readonly onVerdict?: (verdict: VerdictName, tier: DisclosureTier) => void;
}

const oneOf = <const V extends readonly string[]>(values: V, options: { title?: string; description?: string } = {}) => t.Union(values.map((v) => t.Literal(v)), options);
const Verdict = oneOf(VERDICTS, { title: "Verdict" });
const CheckResult = oneOf(["pass", "fail"], { title: "CheckResult" });
const Environment = oneOf(["live", "test"], { title: "Environment" });
const Mode = t.String({ description: "`partial` in this version of the API; its values may change in a later one: read it, do not hardcode it", examples: [MODE] });
const Match = t.Object(
  {
    recordId: Uuid,
    kind: oneOf(["record_only", "pdf_embedded"], { description: "`record_only` (organisation-signed) or `pdf_embedded` (person-signed)" }),
    status: oneOf(["active", "revoked"]),
    recordIssuedAt: Timestamp,
    signerType: oneOf(["org", "user"]),
    signerStanding: oneOf(["good_standing", "suspended"], { description: "Recomputed per request" }),
    signerHint: t.Optional(t.String({ description: "Person-signed matches" })),
    signerOrg: t.Optional(t.String({ description: "Organisation tier only: the signing organisation's registered name, or for a person-signed match the organisation the person signed within" })),
    revocation: t.Optional(t.Object({ reason: RevocationReason, revokedAt: Timestamp })),
    checksPerformed: t.Object(
      {
        hashBinding: t.Union(CheckResult.anyOf, { title: "CheckResult", description: "Recomputed" }),
        userSignature: t.Union(CheckResult.anyOf, { title: "CheckResult", description: "Recomputed" }),
        serverSeal: t.Union(CheckResult.anyOf, { title: "CheckResult", description: "Recomputed" }),
        anchorStatus: t.Union(AnchorState.anyOf, { title: "AnchorState", description: "The stored anchor state, not a recomputation (`anchored` on every match)" }),
      },
      { title: "ChecksPerformed" },
    ),
    anchor: t.Object(
      {
        topicId: t.String({ description: "`0.0.N`" }),
        transactionId: t.String({
          description: "`<account>@<seconds>.<nanoseconds>`, e.g. `0.0.2@1795507107.624000000`. Mirror nodes and HashScan write it `0.0.2-1795507107-624000000` (docs/clients.md)",
        }),
        sequenceNumber: t.Integer({ minimum: 1 }),
        consensusAt: Timestamp,
        mirrorNodeUrl: t.String({ format: "uri", description: "A ready link to the message on a mirror node" }),
      },
      { title: "MatchAnchor" },
    ),
  },
  { title: "Match", "x-description": "An anchored record for the hash, shaped for the caller's disclosure tier" },
);
const Verification = t.Object(
  {
    verificationId: t.Optional(t.String({ format: "uuid", description: "Organisation tier only" })),
    verdict: Verdict,
    disclosureTier: oneOf(["public", "organisation"]),
    assuranceLevel: t.Literal(ASSURANCE_LEVEL),
    mode: Mode,
    environment: t.Optional(t.Union(Environment.anyOf, { title: "Environment", description: "Organisation tier only" })),
    originalDocHash: DocHash,
    verifiedAt: Timestamp,
    reference: t.Optional(t.String({ description: "Echoed at the organisation tier when supplied" })),
    matches: t.Array(Match, {
      maxItems: MAX_MATCHES,
      description: `Anchored records for the hash, earliest consensus first, at most ${MAX_MATCHES}; the verdict is decided over every record, returned or not`,
    }),
    retryAfterSeconds: t.Optional(t.Integer({ minimum: 1, description: "With `pending_anchor`: when to ask again" })),
  },
  { title: "Verification", "x-description": "A verification's answer" },
);
const Summary = t.Object(
  {
    verificationId: Uuid,
    verdict: Verdict,
    assuranceLevel: t.String({ examples: [ASSURANCE_LEVEL] }),
    mode: Mode,
    environment: Environment,
    originalDocHash: DocHash,
    verifiedAt: Timestamp,
    reference: t.Optional(t.String()),
  },
  { title: "VerificationSummary", "x-description": "A row of the verification log" },
);
const VerificationRequest = t.Object(
  {
    originalDocHash: DocHash,
    reference: t.Optional(t.String({ maxLength: MAX_REFERENCE_CODE_POINTS, description: "No control characters; echoed and logged at the organisation tier only" })),
  },
  { title: "VerificationRequest" },
);
/** `nextCursor` is null on the last page. */
const VerificationPage = t.Object(
  {
    data: t.Array(Summary),
    pagination: t.Object({
      nextCursor: t.Union([t.String(), t.Null()], { description: "Pass as `after` for the next page; null on the last page" }),
      hasMore: t.Boolean(),
    }),
  },
  { title: "VerificationPage" },
);
/** What parseListQuery accepts for `limit`: digits, no sign or leading zero, 1–MAX_LIMIT. */
const LIMIT_PATTERN = "^[1-9][0-9]{0,2}$";

export function verificationRoutes(deps: VerificationRouteDeps) {
  const { access, verifier, log, clock } = deps;
  const onVerdict = deps.onVerdict ?? (() => {});
  return new Elysia({ name: "v1-verifications" })
    .post(
      "/v1/verifications",
      async ({ request }) => {
        const admitted = access.admit(request, "verifications.create");
        const caller = pending(admitted) ? await admitted : admitted;
        const input = parseVerificationRequest(await readJsonObject(request, VERIFICATION_BODY_LIMIT));
        // SQLite answers at once, PostgreSQL with a promise: no extra turn of the event loop on SQLite.
        const verified = verifier.verify({ docHash: input.docHash, tier: caller.tier });
        const result = pending(verified) ? await verified : verified;
        onVerdict(result.verdict, caller.tier);
        if (caller.tier === "public") {
          // A reference sent anonymously is validated (above) but neither logged nor echoed.
          return jsonTextResponse(
            200,
            verifier.answerJson({
              verdict: result.verdict,
              disclosureTier: "public",
              assuranceLevel: ASSURANCE_LEVEL,
              mode: MODE,
              originalDocHash: input.docHash,
              verifiedAt: rfc3339Ms(clock.now()),
              matches: result.matches,
              ...(result.retryAfterSeconds !== undefined ? { retryAfterSeconds: result.retryAfterSeconds } : {}),
            }),
          );
        }
        const logged = await log.record({
          orgId: caller.org.id,
          environment: caller.key.environment,
          keyId: caller.key.keyId,
          verdict: result.verdict,
          docHash: input.docHash,
          reference: input.reference,
          retryAfterSeconds: result.retryAfterSeconds,
        });
        return jsonTextResponse(
          200,
          verifier.answerJson({
            verificationId: logged.verificationId,
            verdict: result.verdict,
            disclosureTier: "organisation",
            assuranceLevel: ASSURANCE_LEVEL,
            mode: MODE,
            environment: caller.key.environment,
            originalDocHash: input.docHash,
            verifiedAt: logged.verifiedAt,
            ...(input.reference !== undefined ? { reference: input.reference } : {}),
            matches: result.matches,
            ...(result.retryAfterSeconds !== undefined ? { retryAfterSeconds: result.retryAfterSeconds } : {}),
          }),
        );
      },
      {
        parse: "none",
        detail: {
          tags: ["Verifications"],
          operationId: "verifyDocument",
          summary: "Verify a document hash",
          description:
            "Anonymous calls get the public tier; a credential gets the organisation tier and a log row. A credential that is present and unusable gets 401, never the public tier. Body limit 4 KiB. " +
            RATE_LIMIT_NOTE,
          security: [{}, { bearer: [] }],
          requestBody: jsonBody(VerificationRequest, VERIFICATION_BODY_LIMIT),
        },
        response: { 200: Verification, ...errorResponses(400, 401, 402, 403, 413, 429, 500, 503) },
      },
    )
    .get(
      "/v1/verifications",
      ({ request }) =>
        mapMaybe(access.admit(request, "verifications.list"), (caller) => {
          if (caller.tier !== "organisation") throw new Error("verifications.list admitted without a credential");
          const query = verifier.listQueryOf(request.url);
          return mapMaybe(log.listJson({ orgId: caller.org.id, environment: caller.key.environment, ...query }), (text) => jsonTextResponse(200, text));
        }),
      {
        detail: {
          tags: ["Verifications"],
          operationId: "listVerifications",
          summary: "The calling organisation's verification log, newest first",
          description:
            `Scoped to the key's organisation and environment. Filters: \`verdict\`, \`originalDocHash\`, \`from\`, \`to\` (RFC 3339); \`limit\` 1–${MAX_LIMIT} (default ${DEFAULT_LIMIT}); \`after\` is the previous page's \`pagination.nextCursor\`, valid only with the same filters. Unknown or repeated parameters are refused. ` +
            RATE_LIMIT_NOTE,
          security: [{ bearer: [] }],
          parameters: [
            { name: "verdict", in: "query", schema: { type: "string", enum: [...VERDICTS] } },
            { name: "originalDocHash", in: "query", schema: { type: "string", pattern: DOC_HASH_PATTERN } },
            { name: "from", in: "query", schema: { type: "string", format: "date-time" } },
            { name: "to", in: "query", schema: { type: "string", format: "date-time" } },
            {
              name: "limit",
              in: "query",
              description: `1–${MAX_LIMIT}, written in digits without sign or leading zero (\`05\`, \`+5\`, \`5.0\` are refused with 400)`,
              schema: { type: "integer", minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, pattern: LIMIT_PATTERN },
            },
            { name: "after", in: "query", description: "The previous page's `pagination.nextCursor`", schema: { type: "string" } },
          ],
        },
        response: {
          200: VerificationPage,
          ...errorResponses(400, 401, 402, 403, 429, 500, 503),
        },
      },
    )
    .get(
      "/v1/verifications/:verificationId",
      ({ request, params }) =>
        mapMaybe(access.admit(request, "verifications.get"), (caller) => {
          if (caller.tier !== "organisation") throw new Error("verifications.get admitted without a credential");
          // A malformed id is answered like an unknown one (docs/verification.md "The log"): log.get refuses both alike.
          return mapMaybe(log.get({ orgId: caller.org.id, environment: caller.key.environment, verificationId: params.verificationId }), (found) => json(200, found));
        }),
      {
        detail: {
          tags: ["Verifications"],
          operationId: "getVerification",
          summary: "One verification as it was recorded (`matches` always empty)",
          description: "404 alike for a missing, malformed, other organisation's or other environment's id. " + RATE_LIMIT_NOTE,
          security: [{ bearer: [] }],
        },
        response: { 200: Verification, ...errorResponses(401, 402, 403, 404, 429, 500, 503) },
      },
    );
}
