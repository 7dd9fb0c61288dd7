/**
 * Schemas shared by the /v1 routes. They are documentation only: the OpenAPI document is built
 * from them, with the constants the validators use (src/lib/formats.ts, the capabilities' limits),
 * while validation happens in the capabilities (which must name each offending field
 * in `error.details`, something schema validation would not do our way). Routes read
 * their bodies themselves (`parse: "none"`), so these never reject a request.
 */
import { t } from "elysia";
import { DOC_HASH_PATTERN } from "../lib/formats.ts";
import { STATUS } from "./errors.ts";

export const DocHash = t.String({ pattern: DOC_HASH_PATTERN, description: "`sha256:` and 64 lowercase hex digits", examples: ["sha256:" + "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"] });
export const Timestamp = t.String({ format: "date-time", description: "RFC 3339, UTC" });
export const Uuid = t.String({ format: "uuid" });

export const ErrorBody = t.Object(
  {
    error: t.Object({
      code: t.String({
        description: `Stable; branch on it. Codes this version answers: ${Object.keys(STATUS).map((c) => `\`${c}\``).join(", ")}. Handle an unknown code by its HTTP status`,
      }),
      message: t.String({ description: "Human text; changes without notice" }),
      details: t.Optional(t.Record(t.String(), t.String(), { description: "On 400: each offending field → one message" })),
    }),
  },
  { title: "Error", "x-description": "The error envelope every error answer carries" },
);

const DESCRIPTIONS: Record<number, string> = {
  400: "Malformed request; `error.details` names each offending field",
  401: "Credential missing where required, or unusable: malformed, unknown, revoked or expired (cause not distinguished)",
  402: "PAYMENT_REQUIRED: API access off; ADDON_REQUIRED: the organisation lacks the add-on",
  403: "FORBIDDEN (Origin header, or no verifications:read), TEST_ENVIRONMENT, SCOPE_REQUIRED, NOT_REVOCABLE",
  404: "Not found for this organisation and environment (causes not distinguished)",
  409: "ALREADY_REVOKED or ANCHOR_NOT_FINAL",
  413: "Body over the operation's limit",
  429: "RATE_LIMITED; wait `Retry-After` seconds",
  500: "Failure on the service side; nothing was modified",
  503: "SERVICE_UNAVAILABLE; retry after `Retry-After` seconds",
};

/**
 * OpenAPI response entries for the error statuses an operation can answer: a status alone takes
 * the shared description, `[status, description]` one of the operation's own.
 */
export function errorResponses(...statuses: (number | readonly [number, string])[]) {
  const out: Record<number, typeof ErrorBody> = {};
  for (const entry of statuses) {
    const [s, description] = typeof entry === "number" ? [entry, DESCRIPTIONS[entry] ?? "Error"] : entry;
    out[s] = t.Object(ErrorBody.properties, { title: "Error", description });
  }
  return out;
}

/**
 * A request body's documentation: the schema, and the operation's body limit (a larger body is
 * refused with 413 PAYLOAD_TOO_LARGE before it is parsed).
 */
export function jsonBody(schema: object, limitBytes: number) {
  return {
    required: true,
    description: `JSON, at most ${limitBytes.toLocaleString("en")} bytes (a larger body is refused with 413 PAYLOAD_TOO_LARGE)`,
    content: { "application/json": { schema } },
  };
}

export const RATE_LIMIT_NOTE =
  "Every response carries `X-RateLimit-Limit` and `X-RateLimit-Remaining` (the tightest applicable limit). A request carrying an `Origin` header is refused with 403.";
