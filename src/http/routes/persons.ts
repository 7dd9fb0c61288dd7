/**
 * The JSON endpoints behind the enrolment and signing pages (docs/persons.md "The API behind the pages: /app"):
 * /app/enrol, /app/session, /app/signatures, /app/records. Usable by any front end; bodies of the
 * WebAuthn steps are the standard WebAuthn JSON forms.
 *
 * Unlike /v1 these are called from a browser, with a session cookie, so the order of refusals is:
 * a state-changing request (POST, DELETE) whose `Origin` is not exactly the public URL's origin
 * is 403 FORBIDDEN (the CSRF defence; the cookie is also SameSite=Strict); then, for requests
 * without a session (enrolment, signing in), the client IP's anonymous budget (429); then the
 * session where one is needed (401); then the body (413, 400);
 * then the resource. Nothing here reads or writes /v1 credentials.
 */
import { Elysia, t } from "elysia";
import type { Maybe } from "../../lib/maybe.ts";
import { DomainError } from "../../lib/errors.ts";
import { personView, type PersonApp } from "../../persons/service.ts";
import { parseRevokeRequest } from "../../records/validate.ts";
import type { PublicAccess } from "../access.ts";
import { readJsonObject } from "../body.ts";
import { jsonResponse } from "../errors.ts";
import { DocHash, errorResponses, jsonBody, Timestamp, Uuid } from "../schemas.ts";
import { AnchorState, RevocationReason } from "./v1-records.ts";

/** The session cookie's name. */
export const SESSION_COOKIE = "docverify_session";
/** WebAuthn answers are a few kilobytes; options requests are tiny. */
export const APP_BODY_LIMIT = 32 * 1024;

export interface AppRoutesDeps {
  readonly app: PersonApp;
  readonly access: PublicAccess;
  /** The public URL (read per request: it may be known only once the listener is bound). */
  readonly publicUrl: () => string;
}

/** The session cookie's value, if the request carries exactly one. */
export function sessionCookie(request: Request): string | null {
  const header = request.headers.get("cookie");
  if (header === null) return null;
  const values = header
    .split(";")
    .map((c) => c.trim())
    .filter((c) => c.startsWith(`${SESSION_COOKIE}=`))
    .map((c) => c.slice(SESSION_COOKIE.length + 1));
  return values.length === 1 ? values[0]! : null;
}

// ---- documentation (OpenAPI); bodies are read and validated by the routes themselves ----------

const ORIGIN_NOTE = "Called from the service's own pages: the request must carry `Origin` equal to the public URL's origin (403 otherwise).";
const SESSION_NOTE = "Needs the session cookie `docverify_session` (401 without one, or after 15 minutes unused).";
const WebAuthnJson = (title: string, what: string) =>
  t.Object({}, { title, additionalProperties: true, "x-description": `${what}, in the standard WebAuthn JSON form (W3C WebAuthn Level 3, as @simplewebauthn/browser produces and takes it)` });
const CreationOptions = WebAuthnJson("PublicKeyCredentialCreationOptionsJSON", "Options for creating a passkey: user verification and a resident key required");
const RequestOptions = WebAuthnJson("PublicKeyCredentialRequestOptionsJSON", "Options for a passkey assertion: user verification required");
const Registration = WebAuthnJson("RegistrationResponseJSON", "The new passkey's registration");
const Assertion = WebAuthnJson("AuthenticationResponseJSON", "A passkey assertion");
const Empty = t.Object({}, { title: "EmptyObject", additionalProperties: true, "x-description": "`{}`: nothing is read from it" });
const AppPerson = t.Object({ id: Uuid, name: t.String(), organisation: t.String({ description: "The organisation's registered name" }) }, { title: "AppPerson" });
const SignatureRequest = t.Object(
  { originalDocHash: DocHash, filename: t.Optional(t.String({ minLength: 1, description: "Shown on the verify page; never signed or put on the ledger" })) },
  { title: "SignatureRequest" },
);
const SignatureOptions = t.Object(
  {
    challenge: t.String({ description: "base64url of SHA-256 of `docverify.payload`: the assertion authorises exactly that record" }),
    docverify: t.Object(
      {
        recordId: Uuid,
        originalDocHash: DocHash,
        signedAt: t.String({ format: "date-time", description: "The time the record will carry" }),
        payload: t.String({ description: "base64url of the exact record payload (docs/signing.md §3) the person's key will sign" }),
      },
      { title: "PendingSignature" },
    ),
  },
  { title: "SignatureOptions", additionalProperties: true, "x-description": "PublicKeyCredentialRequestOptionsJSON, with the record it commits to" },
);
const AppRecord = t.Object(
  {
    recordId: Uuid,
    originalDocHash: DocHash,
    authenticatedAt: Timestamp,
    anchorState: AnchorState,
    verifyUrl: t.String({ format: "uri" }),
    anchor: t.Object({ topicId: t.String(), transactionId: t.String(), hashscanUrl: t.String({ format: "uri" }) }),
    retryAfterSeconds: t.Optional(t.Integer({ minimum: 1 })),
    signerName: t.String({ description: "The signer's name as enrolled: what the signed PDF's stamp shows" }),
  },
  { title: "PersonSignedRecord" },
);
const ListedRecord = t.Object(
  {
    recordId: Uuid,
    originalDocHash: DocHash,
    filename: t.Union([t.String(), t.Null()]),
    authenticatedAt: Timestamp,
    anchorState: AnchorState,
    verifyUrl: t.String({ format: "uri" }),
    revocation: t.Union([t.Object({ reason: t.String(), revokedAt: Timestamp }), t.Null()]),
  },
  { title: "ListedRecord" },
);
const TOKEN_PARAM = [{ name: "token", in: "path", required: true, description: "The enrolment link's token (43 base64url characters); an unknown or malformed one is 404", schema: { type: "string" } }];
const RECORD_PARAM = [{ name: "recordId", in: "path", required: true, description: "The record's id (UUID); a malformed one is answered 404", schema: { type: "string", format: "uuid" } }];
const SESSION = [{ session: [] }];
const doc = (operationId: string, summary: string, description: string, extra: Record<string, unknown> = {}) => ({
  detail: { tags: ["Person application"], operationId, summary, description, ...extra },
});

export function appRoutes(deps: AppRoutesDeps) {
  const { app, access } = deps;
  const origin = () => new URL(deps.publicUrl()).origin;
  const secure = () => new URL(deps.publicUrl()).protocol === "https:";

  const cookie = (token: string) => `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict${secure() ? "; Secure" : ""}`;
  const clearCookie = () => `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secure() ? "; Secure" : ""}`;

  /**
   * The checks every /app request passes first (see the header). Requests that need a session
   * spend none of the client IP's anonymous budget: a session takes a passkey, and colleagues
   * behind one address must not exhaust each other's signing.
   */
  function admit(request: Request, needs: "session" | "nothing" = "nothing"): Maybe<void> {
    if (request.method !== "GET" && request.method !== "HEAD") {
      const sent = request.headers.get("origin");
      if (sent !== origin()) {
        throw new DomainError(
          "FORBIDDEN",
          sent === null
            ? "This request must carry an Origin header: it changes something, and only this service's own pages may ask for that."
            : "This request comes from another website than this service: refused.",
        );
      }
    }
    if (needs === "nothing") return access.admitPublic(request);
  }

  const body = (request: Request) => readJsonObject(request, APP_BODY_LIMIT);
  const signedIn = (request: Request) => app.session(sessionCookie(request));
  const noStore = { "cache-control": "no-store" };

  return new Elysia({ name: "app" })
    .post(
      "/app/enrol/:token/options",
      async ({ request, params }) => {
        await admit(request);
        await body(request);
        return jsonResponse(200, await app.enrolOptions(params.token), noStore);
      },
      { parse: "none", ...doc("enrolmentOptions", "Start enrolling: options for creating the passkey", `${ORIGIN_NOTE} 404 for an unknown link, 403 for one expired, used, replaced or of a suspended person; 402 ADDON_REQUIRED or 403 ORGANISATION_SUSPENDED for the organisation.`, { parameters: TOKEN_PARAM, requestBody: jsonBody(Empty, APP_BODY_LIMIT) }), response: { 200: CreationOptions, ...errorResponses(400, 402, 403, 404, 413, 429, 500, 503) } },
    )
    .post(
      "/app/enrol/:token",
      async ({ request, params }) => {
        await admit(request);
        const answer = await body(request);
        const enrolled = await app.enrol(params.token, answer);
        return jsonResponse(
          201,
          { person: personView(enrolled.person), keyFingerprint: enrolled.keyFingerprint, signUrl: `${deps.publicUrl().replace(/\/+$/, "")}/sign` },
          { ...noStore, "set-cookie": cookie(enrolled.sessionToken) },
        );
      },
      { parse: "none", ...doc("enrol", "Finish enrolling: register the passkey, create the person's key", `${ORIGIN_NOTE} Uses the link, registers the passkey, creates the person's ML-DSA-65 key and queues its announcement on the organisation's topic, and signs the person in (Set-Cookie). 401 when the passkey's answer does not verify (another challenge, origin or relying party, no user verification).`, { parameters: TOKEN_PARAM, requestBody: jsonBody(Registration, APP_BODY_LIMIT) }), response: { 201: t.Object({ person: AppPerson, keyFingerprint: t.String({ pattern: "^[0-9a-f]{64}$" }), signUrl: t.String({ format: "uri" }) }, { title: "Enrolled" }), ...errorResponses(400, 401, 402, 403, 404, 413, 429, 500, 503) } },
    )
    .post(
      "/app/session/options",
      async ({ request }) => {
        await admit(request);
        await body(request);
        return jsonResponse(200, await app.sessionOptions(), noStore);
      },
      { parse: "none", ...doc("sessionOptions", "Start signing in: options for a passkey assertion", `${ORIGIN_NOTE} Any of this service's passkeys may answer (discoverable credentials).`, { requestBody: jsonBody(Empty, APP_BODY_LIMIT) }), response: { 200: RequestOptions, ...errorResponses(400, 403, 413, 429, 500, 503) } },
    )
    .post(
      "/app/session",
      async ({ request }) => {
        await admit(request);
        const { person, sessionToken } = await app.signIn(await body(request));
        return jsonResponse(200, { person: personView(person) }, { ...noStore, "set-cookie": cookie(sessionToken) });
      },
      { parse: "none", ...doc("signIn", "Sign in with the passkey", `${ORIGIN_NOTE} Sets the session cookie (HttpOnly, SameSite=Strict, Secure over https). 401 for an unknown passkey or an answer that does not verify or was already used; 403 for a suspended person.`, { requestBody: jsonBody(Assertion, APP_BODY_LIMIT) }), response: { 200: t.Object({ person: AppPerson }, { title: "SignedIn" }), ...errorResponses(400, 401, 403, 413, 429, 500, 503) } },
    )
    .get(
      "/app/session",
      async ({ request }) => {
        await admit(request, "session");
        return jsonResponse(200, { person: personView(await signedIn(request)) }, noStore);
      },
      { ...doc("getSession", "Who is signed in", SESSION_NOTE, { security: SESSION }), response: { 200: t.Object({ person: AppPerson }, { title: "SignedIn" }), ...errorResponses(401, 500) } },
    )
    .delete(
      "/app/session",
      async ({ request }) => {
        await admit(request, "session");
        await app.signOut(sessionCookie(request));
        return new Response(null, { status: 204, headers: { ...noStore, "set-cookie": clearCookie() } });
      },
      { parse: "none", ...doc("signOut", "Sign out", `${ORIGIN_NOTE} Ends the session and clears the cookie.`, { security: SESSION }), response: { 204: t.Void({ description: "Signed out; the cookie is cleared" }), ...errorResponses(403, 500) } },
    )
    .post(
      "/app/signatures/options",
      async ({ request }) => {
        await admit(request, "session");
        const person = await signedIn(request);
        return jsonResponse(200, await app.signatureOptions(person, await body(request)), noStore);
      },
      { parse: "none", ...doc("signatureOptions", "Prepare a signature: the record it will create, and the assertion options that commit to it", `${ORIGIN_NOTE} ${SESSION_NOTE} The record's id, time and payload are fixed here. 403 for a suspended person, ORGANISATION_SUSPENDED, 402 ADDON_REQUIRED.`, { security: SESSION, requestBody: jsonBody(SignatureRequest, APP_BODY_LIMIT) }), response: { 200: SignatureOptions, ...errorResponses(400, 401, 402, 403, 413, 500, 503) } },
    )
    .post(
      "/app/signatures",
      async ({ request }) => {
        await admit(request, "session");
        const person = await signedIn(request);
        const { created, record } = await app.sign(person, await body(request));
        return jsonResponse(created ? 201 : 200, { ...record, signerName: person.name }, noStore);
      },
      { parse: "none", ...doc("sign", "Sign: the passkey's assertion over the prepared record", `${ORIGIN_NOTE} ${SESSION_NOTE} Verifies the assertion, signs with the person's key, seals and queues the record for the ledger. 200 with the existing record when the person already holds an active one for the hash. 401 when the assertion does not verify or its challenge is unknown, expired or used; 403 for another person's passkey or prepared signature, or a suspended person.`, { security: SESSION, requestBody: jsonBody(Assertion, APP_BODY_LIMIT) }), response: { 200: AppRecord, 201: AppRecord, ...errorResponses(400, 401, 402, 403, 413, 500, 503) } },
    )
    .get(
      "/app/records",
      async ({ request }) => {
        await admit(request, "session");
        return jsonResponse(200, { records: await app.records(await signedIn(request)) }, noStore);
      },
      { ...doc("listPersonRecords", "The signed-in person's records, newest first (at most 100)", SESSION_NOTE, { security: SESSION }), response: { 200: t.Object({ records: t.Array(ListedRecord) }, { title: "PersonRecords" }), ...errorResponses(401, 500) } },
    )
    .post(
      "/app/records/:recordId/revoke",
      async ({ request, params }) => {
        await admit(request, "session");
        const person = await signedIn(request);
        const { reason } = parseRevokeRequest(await body(request));
        return jsonResponse(200, await app.revoke(person, params.recordId, reason), noStore);
      },
      { parse: "none", ...doc("revokePersonRecord", "Revoke one of the signed-in person's records", `${ORIGIN_NOTE} ${SESSION_NOTE} 403 NOT_REVOCABLE for a record the person did not sign; 409 ALREADY_REVOKED or ANCHOR_NOT_FINAL.`, { security: SESSION, parameters: RECORD_PARAM, requestBody: jsonBody(t.Object({ reason: RevocationReason }, { title: "PersonRevokeRequest" }), APP_BODY_LIMIT) }), response: { 200: t.Object({ recordId: Uuid }, { title: "PersonRevoked" }), ...errorResponses(400, 401, 403, 404, 409, 413, 500, 503) } },
    );
}
