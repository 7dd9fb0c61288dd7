/**
 * The verification operations (spec §4.1–§4.3). Thin: admit the caller, read and validate the
 * input, call the verification capability, shape the answer for the caller's tier.
 */
import { Elysia, t } from "elysia";
import type { Clock } from "../../lib/clock.ts";
import { DOC_HASH_PATTERN, rfc3339Ms } from "../../lib/formats.ts";
import { MAX_MATCHES, type Verifier } from "../../verification/verify.ts";
import type { VerificationLog } from "../../verification/log.ts";
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_REFERENCE_CODE_POINTS, parseListQuery, parseVerificationRequest } from "../../verification/query.ts";
import { ASSURANCE_LEVEL, MODE, VERDICTS, type DisclosureTier, type Verdict as VerdictName } from "../../verification/types.ts";
import type { Access } from "../access.ts";
import { readJsonObject } from "../body.ts";
import { jsonResponse as json } from "../errors.ts";
import { DocHash, errorResponses, RATE_LIMIT_NOTE, Timestamp, Uuid } from "../schemas.ts";

/** decisions §7: the largest legal body is a hash and a 128-character reference, with room for `\u` escapes. */
export const VERIFICATION_BODY_LIMIT = 4 * 1024;

export interface VerificationRouteDeps {
  readonly access: Access;
  readonly verifier: Verifier;
  readonly log: VerificationLog;
  readonly clock: Clock;
  /** Called with every verdict computed for POST /v1/verifications (/metrics). Must not throw. */
  readonly onVerdict?: (verdict: VerdictName, tier: DisclosureTier) => void;
}

const Verdict = t.Union(VERDICTS.map((v) => t.Literal(v)));
const Match = t.Object({
  recordId: Uuid,
  kind: t.String({ description: "`record_only` (organisation-signed) or `pdf_embedded` (person-signed)" }),
  status: t.String({ description: "`active` or `revoked`" }),
  recordIssuedAt: Timestamp,
  signerType: t.String({ description: "`org` or `user`" }),
  signerStanding: t.String({ description: "Recomputed per request: `good_standing` or `suspended`" }),
  signerHint: t.Optional(t.String({ description: "Person-signed matches" })),
  signerOrg: t.Optional(t.String({ description: "Organisation-signed matches, organisation tier only" })),
  revocation: t.Optional(t.Object({ reason: t.String(), revokedAt: Timestamp })),
  checksPerformed: t.Object({
    hashBinding: t.String({ description: "`pass` or `fail`, recomputed" }),
    userSignature: t.String({ description: "`pass` or `fail`, recomputed" }),
    serverSeal: t.String({ description: "`pass` or `fail`, recomputed" }),
    anchorStatus: t.String({ description: "The stored anchor state" }),
  }),
  anchor: t.Object({
    topicId: t.String(),
    transactionId: t.String(),
    sequenceNumber: t.Integer(),
    consensusAt: Timestamp,
    mirrorNodeUrl: t.String({ format: "uri" }),
  }),
});
const Verification = t.Object({
  verificationId: t.Optional(t.String({ format: "uuid", description: "Organisation tier only" })),
  verdict: Verdict,
  disclosureTier: t.String({ description: "`public` or `organisation`" }),
  assuranceLevel: t.Literal(ASSURANCE_LEVEL),
  mode: t.String({ description: "`partial`; read it, do not hardcode it" }),
  environment: t.Optional(t.String({ description: "Organisation tier only: `live` or `test`" })),
  originalDocHash: DocHash,
  verifiedAt: Timestamp,
  reference: t.Optional(t.String({ description: "Echoed at the organisation tier when supplied" })),
  matches: t.Array(Match, {
    maxItems: MAX_MATCHES,
    description: `Anchored records for the hash, earliest consensus first, at most ${MAX_MATCHES} (decisions §11); the verdict is decided over every record, returned or not`,
  }),
  retryAfterSeconds: t.Optional(t.Integer({ description: "With `pending_anchor`" })),
});
const Summary = t.Object({
  verificationId: Uuid,
  verdict: Verdict,
  assuranceLevel: t.String(),
  mode: t.String(),
  environment: t.String(),
  originalDocHash: DocHash,
  verifiedAt: Timestamp,
  reference: t.Optional(t.String()),
});

export function verificationRoutes(deps: VerificationRouteDeps) {
  const { access, verifier, log, clock } = deps;
  const onVerdict = deps.onVerdict ?? (() => {});
  return new Elysia({ name: "v1-verifications" })
    .post(
      "/v1/verifications",
      async ({ request }) => {
        const caller = access.admit(request, "verifications.create");
        const input = parseVerificationRequest(await readJsonObject(request, VERIFICATION_BODY_LIMIT));
        const result = verifier.verify({ docHash: input.docHash, tier: caller.tier });
        onVerdict(result.verdict, caller.tier);
        const tail = { originalDocHash: input.docHash };
        const retry = result.retryAfterSeconds !== undefined ? { retryAfterSeconds: result.retryAfterSeconds } : {};
        if (caller.tier === "public") {
          // A reference sent anonymously is validated (above) but neither logged nor echoed.
          return json(200, {
            verdict: result.verdict,
            disclosureTier: "public",
            assuranceLevel: ASSURANCE_LEVEL,
            mode: MODE,
            ...tail,
            verifiedAt: rfc3339Ms(clock.now()),
            matches: result.matches,
            ...retry,
          });
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
        return json(200, {
          verificationId: logged.verificationId,
          verdict: result.verdict,
          disclosureTier: "organisation",
          assuranceLevel: ASSURANCE_LEVEL,
          mode: MODE,
          environment: caller.key.environment,
          ...tail,
          verifiedAt: logged.verifiedAt,
          ...(input.reference !== undefined ? { reference: input.reference } : {}),
          matches: result.matches,
          ...retry,
        });
      },
      {
        parse: "none",
        detail: {
          tags: ["verifications"],
          summary: "Verify a document hash",
          description:
            "Anonymous calls get the public tier; a credential gets the organisation tier and a log row. A credential that is present and unusable gets 401, never the public tier. Body limit 4 KiB. " +
            RATE_LIMIT_NOTE,
          security: [{}, { bearer: [] }],
          requestBody: {
            required: true,
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  required: ["originalDocHash"],
                  properties: {
                    originalDocHash: { type: "string", pattern: DOC_HASH_PATTERN },
                    reference: { type: "string", maxLength: MAX_REFERENCE_CODE_POINTS, description: "No control characters; echoed and logged at the organisation tier only" },
                  },
                },
              },
            },
          },
        },
        response: { 200: Verification, ...errorResponses(400, 401, 402, 403, 413, 429, 500, 503) },
      },
    )
    .get(
      "/v1/verifications",
      ({ request }) => {
        const caller = access.admit(request, "verifications.list");
        if (caller.tier !== "organisation") throw new Error("verifications.list admitted without a credential");
        const query = parseListQuery(new URL(request.url));
        return json(200, log.list({ orgId: caller.org.id, environment: caller.key.environment, ...query }));
      },
      {
        detail: {
          tags: ["verifications"],
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
            { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT } },
            { name: "after", in: "query", schema: { type: "string" } },
          ],
        },
        response: {
          200: t.Object({ data: t.Array(Summary), pagination: t.Object({ nextCursor: t.Union([t.String(), t.Null()]), hasMore: t.Boolean() }) }),
          ...errorResponses(400, 401, 402, 403, 429, 500, 503),
        },
      },
    )
    .get(
      "/v1/verifications/:verificationId",
      ({ request, params }) => {
        const caller = access.admit(request, "verifications.get");
        if (caller.tier !== "organisation") throw new Error("verifications.get admitted without a credential");
        // A malformed id is answered like an unknown one (decisions §3): log.get refuses both alike.
        return json(200, log.get({ orgId: caller.org.id, environment: caller.key.environment, verificationId: params.verificationId }));
      },
      {
        detail: {
          tags: ["verifications"],
          summary: "One verification as it was recorded (`matches` always empty)",
          description: "404 alike for a missing, malformed, other organisation's or other environment's id. " + RATE_LIMIT_NOTE,
          security: [{ bearer: [] }],
        },
        response: { 200: Verification, ...errorResponses(401, 402, 403, 404, 429, 500, 503) },
      },
    );
}
