/**
 * The JSON endpoints behind the enrolment and signing pages (decisions §10, docs/persons.md):
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
import { Elysia } from "elysia";
import { DomainError } from "../../lib/errors.ts";
import { personView, type PersonApp } from "../../persons/app.ts";
import { parseRevokeRequest } from "../../records/validate.ts";
import type { PublicAccess } from "../access.ts";
import { readJsonObject } from "../body.ts";
import { jsonResponse } from "../errors.ts";

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
  function admit(request: Request, needs: "session" | "nothing" = "nothing"): void {
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
    if (needs === "nothing") access.admitPublic(request);
  }

  const body = (request: Request) => readJsonObject(request, APP_BODY_LIMIT);
  const signedIn = (request: Request) => app.session(sessionCookie(request));
  const noStore = { "cache-control": "no-store" };

  return new Elysia({ name: "app" })
    .post(
      "/app/enrol/:token/options",
      async ({ request, params }) => {
        admit(request);
        await body(request);
        return jsonResponse(200, await app.enrolOptions(params.token), noStore);
      },
      { parse: "none", detail: { hide: true } },
    )
    .post(
      "/app/enrol/:token",
      async ({ request, params }) => {
        admit(request);
        const answer = await body(request);
        const enrolled = await app.enrol(params.token, answer);
        return jsonResponse(
          201,
          { person: personView(enrolled.person), keyFingerprint: enrolled.keyFingerprint, signUrl: `${deps.publicUrl().replace(/\/+$/, "")}/sign` },
          { ...noStore, "set-cookie": cookie(enrolled.sessionToken) },
        );
      },
      { parse: "none", detail: { hide: true } },
    )
    .post(
      "/app/session/options",
      async ({ request }) => {
        admit(request);
        await body(request);
        return jsonResponse(200, await app.sessionOptions(), noStore);
      },
      { parse: "none", detail: { hide: true } },
    )
    .post(
      "/app/session",
      async ({ request }) => {
        admit(request);
        const { person, sessionToken } = await app.signIn(await body(request));
        return jsonResponse(200, { person: personView(person) }, { ...noStore, "set-cookie": cookie(sessionToken) });
      },
      { parse: "none", detail: { hide: true } },
    )
    .get(
      "/app/session",
      ({ request }) => {
        admit(request, "session");
        return jsonResponse(200, { person: personView(signedIn(request)) }, noStore);
      },
      { detail: { hide: true } },
    )
    .delete(
      "/app/session",
      ({ request }) => {
        admit(request, "session");
        app.signOut(sessionCookie(request));
        return new Response(null, { status: 204, headers: { ...noStore, "set-cookie": clearCookie() } });
      },
      { parse: "none", detail: { hide: true } },
    )
    .post(
      "/app/signatures/options",
      async ({ request }) => {
        admit(request, "session");
        const person = signedIn(request);
        return jsonResponse(200, await app.signatureOptions(person, await body(request)), noStore);
      },
      { parse: "none", detail: { hide: true } },
    )
    .post(
      "/app/signatures",
      async ({ request }) => {
        admit(request, "session");
        const person = signedIn(request);
        const { created, record } = await app.sign(person, await body(request));
        return jsonResponse(created ? 201 : 200, { ...record, signerName: person.name }, noStore);
      },
      { parse: "none", detail: { hide: true } },
    )
    .get(
      "/app/records",
      ({ request }) => {
        admit(request, "session");
        return jsonResponse(200, { records: app.records(signedIn(request)) }, noStore);
      },
      { detail: { hide: true } },
    )
    .post(
      "/app/records/:recordId/revoke",
      async ({ request, params }) => {
        admit(request, "session");
        const person = signedIn(request);
        const { reason } = parseRevokeRequest(await body(request));
        return jsonResponse(200, await app.revoke(person, params.recordId, reason), noStore);
      },
      { parse: "none", detail: { hide: true } },
    );
}
