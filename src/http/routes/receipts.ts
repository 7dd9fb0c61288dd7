/**
 * A record's receipt (docs/receipts.md §2): GET /v1/records/{recordId}/receipt for the record's
 * own organisation (a credential with verifications:read), and the public
 * GET /verify/{recordId}/receipt that the verify page offers as a download (no credential, the
 * client IP's anonymous budget). Thin: admit, then the receipts capability, then the download's
 * headers. Refusals are the capability's: 404 alike for malformed, unknown, abandoned and (on the
 * credentialed route) other organisations' ids; 409 ANCHOR_NOT_FINAL with Retry-After.
 */
import { Elysia, t } from "elysia";
import { pending, runMaybe, settled } from "../../lib/maybe.ts";
import { RECEIPT_CONTENT_TYPE, receiptFilename, type Receipts, type ReceiptText } from "../../receipts/receipt.ts";
import type { Access, PublicAccess } from "../access.ts";
import { DocHash, errorResponses, RATE_LIMIT_NOTE, Uuid } from "../schemas.ts";
import { RevocationReason } from "./v1-records.ts";

export interface ReceiptRouteDeps {
  readonly access: Access & PublicAccess;
  readonly receipts: Pick<Receipts, "receiptText">;
}

/** The receipt as a file to keep: its own media type, a download, never cached. */
export function receiptResponse(receipt: ReceiptText): Response;
/** The same for a receipt still on its way (PostgreSQL): its refusal rejects, as the capability's. */
export function receiptResponse(receipt: ReceiptText | Promise<ReceiptText>): Response | Promise<Response>;
export function receiptResponse(receipt: ReceiptText | Promise<ReceiptText>): Response | Promise<Response> {
  if (pending(receipt)) return receipt.then((r) => receiptResponse(r));
  return new Response(receipt.text + "\n", {
    status: 200,
    headers: {
      "content-type": RECEIPT_CONTENT_TYPE,
      // The id is a canonical UUID (the capability refuses anything else): nothing to quote.
      "content-disposition": `attachment; filename="${receiptFilename(receipt.recordId)}"`,
      // The revocation and issuedAt are as of this request.
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    },
  });
}

const Base64 = (description: string) => t.String({ contentEncoding: "base64", description });
const ConsensusAt = t.String({ pattern: "^\\d+\\.\\d{9}$", description: "Consensus time as mirror nodes write it: `seconds.nanoseconds`, nine digits" });
const Network = t.Union([t.Literal("mainnet"), t.Literal("testnet"), t.Literal("previewnet"), t.Literal("local")], { title: "Network" });
const Key = (description: string) =>
  t.Object(
    {
      algorithm: t.String({ description: "Registry name, e.g. `ML-DSA-65`" }),
      publicKey: Base64("The raw public key"),
      payload: Base64("The exact signed bytes (docs/signing.md §3)"),
      signature: Base64("The signature over `payload`"),
    },
    { title: "ReceiptKey", description },
  );
const Inclusion = t.Object(
  {
    algorithm: t.Literal("RFC9162-SHA256"),
    leafMessage: Base64("The leaf's exact bytes: the record (or revocation) message as it would have been sent alone"),
    leafIndex: t.Integer({ minimum: 0, description: "The leaf's 0-based index in the batch's tree" }),
    treeSize: t.Integer({ minimum: 1, description: "The tree's number of leaves: the batch message's `size`" }),
    path: t.Array(Base64("A node hash, 32 bytes"), { description: "The RFC 9162 inclusion path, leaf to root" }),
  },
  { title: "ReceiptInclusion", description: "An RFC 9162 (SHA-256) inclusion proof of `leafMessage` in the tree whose root the batch message carries" },
);
const anchorOf = (nullable: boolean) => {
  const n = <T extends ReturnType<typeof t.String> | ReturnType<typeof t.Integer>>(s: T) => (nullable ? t.Union([s, t.Null()]) : s);
  return t.Object({
    network: Network,
    topicId: t.String({ description: "`0.0.N`" }),
    sequenceNumber: n(t.Integer({ minimum: 1 })),
    consensusAt: n(ConsensusAt),
    transactionId: t.String({ description: "`0.0.A@seconds.nanoseconds`" }),
    message: Base64("The exact ledger message bytes"),
    runningHash: n(Base64("The topic's running hash after this message (48 bytes)")),
    inclusion: t.Union([t.Null(), Inclusion], {
      description: "Null for a record anchored as its own ledger message; for one anchored in a batch (`message` the batch message), its inclusion proof (docs/receipts.md §2.1)",
    }),
  }, nullable
    ? { title: "ReceiptRevocationAnchor", "x-description": "The revocation's ledger message; sequence number, consensus time and running hash are null until consensus" }
    : { title: "ReceiptAnchor", "x-description": "The record's ledger message" });
};

/** docs/receipts.md §2.1; documentation only (the capability builds the body). */
export const ReceiptSchema = t.Object(
  {
    v: t.Literal(1),
    recordId: Uuid,
    originalDocHash: DocHash,
    authenticatedAt: t.String({ format: "date-time", description: "The signed time: RFC 3339 UTC, three fractional digits" }),
    kind: t.Union([t.Literal("record_only"), t.Literal("pdf_embedded")]),
    signerType: t.Union([t.Literal("org"), t.Literal("user")]),
    signer: Key("The key that signed the record payload"),
    seal: Key("The service seal key and the seal payload"),
    anchor: anchorOf(false),
    keyAnnouncement: t.Object(
      { topicId: t.String(), sequenceNumber: t.Integer({ minimum: 1 }), consensusAt: ConsensusAt, message: Base64("The announcement's exact bytes") },
      { description: "The announcement of `signer`'s key on the same topic" },
    ),
    revocation: t.Union([t.Null(), t.Object({ reason: RevocationReason, revokedAt: t.String({ format: "date-time" }), anchor: anchorOf(true) })], {
      description: "As known when issued; the revocation's anchor has null sequence number, consensus time and running hash until consensus",
    }),
    mirrorNodes: t.Array(t.String({ format: "uri" }), { description: "Mirror nodes this service suggests (DOCVERIFY_MIRROR_NODES)" }),
    issuedAt: t.String({ format: "date-time" }),
  },
  { title: "Receipt", "x-description": "Receipt (docs/receipts.md §2). Properties in this order; byte strings are standard base64 with padding." },
);

/**
 * A TypeBox schema where the OpenAPI types want a SchemaObject: it is one (JSON Schema), but its
 * TypeScript type is TypeBox's. Used where responses are given through `detail` (a media type of
 * their own), since Elysia's `response` would document every success as application/json.
 */
const asSchema = (schema: unknown) => schema as { type: "object" };

const RECEIPT_200 = {
  description: "The receipt, as a download (`Content-Disposition: attachment; filename=\"docverify-receipt-<recordId>.json\"`, `Cache-Control: no-store`)",
  content: { [RECEIPT_CONTENT_TYPE]: { schema: asSchema(ReceiptSchema) } },
};
const NOT_FINAL: readonly [number, string] = [409, "ANCHOR_NOT_FINAL: the record's message or its organisation's key announcement has not reached consensus; retry after `Retry-After` seconds"];
const RECEIPT_NOTE =
  "A receipt proves the record with the document and two independent mirror nodes, without this service (check it with `docverify verify-receipt`). Issued afresh on every request (`issuedAt`, the revocation as known then); every other field is fixed. Holds no filename.";

/** The route's error responses, as OpenAPI response objects (JSON error envelope). */
function errors(...statuses: (number | readonly [number, string])[]) {
  const out: Record<number, { description: string; content: { "application/json": { schema: { type: "object" } } } }> = {};
  for (const [status, schema] of Object.entries(errorResponses(...statuses))) {
    out[Number(status)] = { description: schema.description ?? "Error", content: { "application/json": { schema: asSchema(schema) } } };
  }
  return out;
}

export function receiptRoutes(deps: ReceiptRouteDeps) {
  const { access, receipts } = deps;
  return new Elysia({ name: "receipts" })
    .get(
      "/v1/records/:recordId/receipt",
      ({ request, params }) =>
        runMaybe(
          (function* () {
            const caller = yield* settled(access.admit(request, "receipts.get"));
            if (caller.tier !== "organisation") throw new Error("receipts.get admitted without a credential");
            return yield* settled(receiptResponse(receipts.receiptText(params.recordId, { orgId: caller.org.id })));
          })(),
        ),
      {
        detail: {
          tags: ["Receipts"],
          operationId: "getRecordReceipt",
          summary: "A record's receipt, for the organisation that authenticated it",
          description: `${RECEIPT_NOTE} Needs \`verifications:read\`; only the key's own organisation's records (another's is a 404, like an unknown id). ${RATE_LIMIT_NOTE}`,
          security: [{ bearer: [] }],
          responses: { 200: RECEIPT_200, ...errors(401, 402, 403, [404, "NOT_FOUND: unknown, malformed, abandoned or another organisation's record (not distinguished)"], NOT_FINAL, 429, 500, 503) },
        },
      },
    )
    .get(
      "/verify/:recordId/receipt",
      ({ request, params }) =>
        runMaybe(
          (function* () {
            yield* settled(access.admitPublic(request));
            return yield* settled(receiptResponse(receipts.receiptText(params.recordId)));
          })(),
        ),
      {
        detail: {
          tags: ["Receipts"],
          operationId: "getPublicReceipt",
          summary: "A record's receipt, public (the verify page's download)",
          description:
            `${RECEIPT_NOTE} Needs no credential (one sent is ignored) and accepts any Origin; limited per client IP like anonymous verification, whose budget it shares. ` +
            "Every response carries `X-RateLimit-Limit` and `X-RateLimit-Remaining`.",
          responses: { 200: RECEIPT_200, ...errors([404, "NOT_FOUND: unknown, malformed or abandoned record (not distinguished)"], NOT_FINAL, 429, 500, 503) },
        },
      },
    );
}
