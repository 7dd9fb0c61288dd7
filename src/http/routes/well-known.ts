/**
 * GET /.well-known/docverify.json (docs/receipts.md §5): which organisations this service anchors
 * for, on which topics, with which keys and domains. Public, limited per client IP like anonymous
 * verification. It is JSON: names appear exactly as registered, escaped by JSON's rules only.
 *
 * Every answer, errors included, carries `Access-Control-Allow-Origin: *`: the receipt verifier's
 * page, opened from a file or another host, reads it to confirm an organisation's domain
 * (docs/receipts.md §6). It is public data, and the request carries no credential to protect.
 */
import { Elysia, t } from "elysia";
import type { Identity } from "../../receipts/identity.ts";
import type { PublicAccess } from "../access.ts";
import { jsonResponse } from "../errors.ts";
import { errorResponses } from "../schemas.ts";
import type { RequestContexts } from "../request-context.ts";

export const WELL_KNOWN_PATH = "/.well-known/docverify.json";

export interface WellKnownDeps {
  readonly access: PublicAccess;
  readonly identity: () => Promise<Identity>;
  /** Each request's context: the CORS header is added to whatever response it ends with. */
  readonly requests: RequestContexts;
}

const Fingerprint = t.String({ pattern: "^[0-9a-f]{64}$", description: "Key fingerprint (docs/signing.md §2), 64 lowercase hex digits" });

const IdentitySchema = t.Object(
  {
    v: t.Literal(1),
    service: t.String({ format: "uri", description: "This service's public URL (DOCVERIFY_PUBLIC_URL)" }),
    organisations: t.Array(
      t.Object({
        orgId: t.String({ format: "uuid" }),
        name: t.String({ description: "The registered name, whole" }),
        domain: t.Union([t.String({ pattern: "^[a-z0-9.-]{1,253}$" }), t.Null()], {
          description: "The organisation's DNS name as its administrator set it (lowercase; an IDN in its xn-- form), carried by its key announcements; null when none is set",
        }),
        network: t.Union([t.Literal("mainnet"), t.Literal("testnet"), t.Literal("previewnet"), t.Literal("local")]),
        topicId: t.String({ description: "`0.0.N`: the organisation's own topic" }),
        keys: t.Array(
          t.Object({
            algorithm: t.String({ description: "e.g. `ML-DSA-65`" }),
            fingerprint: Fingerprint,
            announcedAt: t.Union([t.String({ pattern: "^\\d+\\.\\d{9}$" }), t.Null()], {
              description: "Consensus time (`seconds.nanoseconds`) of the key's announcement on the topic; null until then",
            }),
            sequenceNumber: t.Union([t.Integer({ minimum: 1 }), t.Null()], { description: "That announcement's sequence number on the topic, where the key's window starts; null until then" }),
            replacedAt: t.Optional(t.String({ pattern: "^\\d+\\.\\d{9}$", description: "Present once a key replacing it is announced on the topic: that announcement's consensus time, where the window ends" })),
            replacedBySequenceNumber: t.Optional(t.Integer({ minimum: 1, description: "That announcement's sequence number" })),
            compromisedSince: t.Optional(
              t.String({ format: "date-time", description: "Present once the key is declared compromised: records it signed at or after this time verify as revoked, KEY_COMPROMISE (docs/signing.md \"Key lifecycle\")" }),
            ),
          }),
          { description: "The organisation's key and every key announced for it: announced keys in announcement order, then the others; ties by fingerprint" },
        ),
      }),
      { description: "Every organisation with a ledger topic, by name (binary order of its UTF-8 bytes), then id" },
    ),
    sealKeys: t.Array(t.Object({ algorithm: t.String(), fingerprint: Fingerprint }), { description: "The service's seal keys" }),
  },
  { title: "Identity", "x-description": "Identity (docs/receipts.md §5)" },
);

export function wellKnownRoutes(deps: WellKnownDeps) {
  return new Elysia({ name: "well-known" }).get(
    WELL_KNOWN_PATH,
    async ({ request }) => {
      // First, so that a refusal (429, 503) is readable by another origin too.
      deps.requests.addHeaders(request, { "access-control-allow-origin": "*" });
      await deps.access.admitPublic(request);
      return jsonResponse(200, await deps.identity());
    },
    {
      detail: {
        tags: ["Identity"],
        operationId: "getIdentity",
        summary: "This service's organisations, their ledger topics and keys",
        description:
          "Binds each organisation's registered name to its ledger topic and key fingerprints, for a verifier who trusts this service's web address. " +
          "Needs no credential; limited per client IP like anonymous verification. Every response carries `X-RateLimit-Limit` and `X-RateLimit-Remaining`, " +
          "and `Access-Control-Allow-Origin: *` (a page on another origin may read it).",
      },
      response: { 200: IdentitySchema, ...errorResponses(429, 500, 503) },
    },
  );
}
