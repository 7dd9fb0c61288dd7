/**
 * The pages served for real (src/http/pages/person-pages.ts through createHttp) in front of a fake
 * of the /app JSON endpoints, faked at the wire as docs/persons.md describes them: the
 * accessibility test can then put the pages in every state (signed in with records in each
 * state, each refusal) without a ledger. The WebAuthn options it hands out are well formed for
 * relying party `localhost`, so Chromium's virtual authenticator answers them; the answers are not
 * checked (the real endpoints are, in e2e.test.ts and test/persons/).
 */
import { createHash, randomBytes } from "node:crypto";
import { encodeRecordPayload } from "../../src/crypto/payload.ts";
import { appPages } from "../../src/http/pages/person-pages.ts";
import { createHttp } from "../../src/http/server.ts";
import { EnrolmentTokenError } from "../../src/persons/persons.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { onCleanup } from "../support/env.ts";

export const PERSON = { id: "0190f5a3-0000-7000-8000-000000000001", name: "Åsa Lindqvist-Ó Briain", organisation: "Municipality of Example" };
export const GOOD_TOKEN = "G".repeat(43);

export interface FakeRecord {
  recordId: string;
  originalDocHash: string;
  filename: string | null;
  authenticatedAt: string;
  anchorState: "pending" | "accepted" | "anchored" | "abandoned";
  verifyUrl: string;
  revocation: null | { reason: string; revokedAt: string };
}

export interface FakeApp {
  readonly base: string;
  signedIn: boolean;
  records: FakeRecord[];
  /** Error answers to give instead, by `METHOD /path`. */
  readonly failures: Map<string, { status: number; code: string; message: string }>;
  /** Every /app request, as `METHOD /path`. */
  readonly calls: string[];
}

const b64url = (b: Uint8Array) => Buffer.from(b).toString("base64url");
const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

export function recordOf(base: string, i: number, over: Partial<FakeRecord> = {}): FakeRecord {
  const recordId = `0190f5a3-7c1e-7d2a-9b4c-${String(i).padStart(12, "0")}`;
  return {
    recordId,
    originalDocHash: `sha256:${createHash("sha256").update(String(i)).digest("hex")}`,
    filename: `Document ${i}.pdf`,
    authenticatedAt: new Date(Date.UTC(2026, 0, 15, 9, 30 + i)).toISOString(),
    anchorState: "anchored",
    verifyUrl: `${base}/verify/${recordId}`,
    revocation: null,
    ...over,
  };
}

export function startFakeApp(): FakeApp {
  const persons = {
    async peekEnrolment(token: string) {
      if (token === GOOD_TOKEN) return { person: { id: PERSON.id, name: PERSON.name, email: "asa@example.org" }, organisation: { name: PERSON.organisation } };
      for (const reason of ["expired", "used", "suspended"] as const) if (token === reason) throw new EnrolmentTokenError(reason);
      throw new EnrolmentTokenError("unknown");
    },
  };
  let base = "";
  const http = createHttp({ log: memoryLogger(), version: "test", readiness: {}, plugins: [appPages({ persons, publicUrl: () => base })] });
  const fingerprint = new Uint8Array(32).fill(9);
  const pendingSignatures = new Map<string, { recordId: string; docHash: string; filename: string | null; signedAt: string }>();

  const state: FakeApp = { base: "", signedIn: false, records: [], failures: new Map(), calls: [] };

  async function api(req: Request, path: string): Promise<Response> {
    const key = `${req.method} ${path}`;
    state.calls.push(key);
    const failure = state.failures.get(key);
    if (failure !== undefined) return json(failure.status, { error: { code: failure.code, message: failure.message } });
    const person = { id: PERSON.id, name: PERSON.name, organisation: PERSON.organisation };
    const notSignedIn = () => json(401, { error: { code: "UNAUTHENTICATED", message: "You are not signed in, or your session ended after 15 minutes without use. Sign in with your passkey." } });
    const challenge = b64url(randomBytes(32));
    switch (key) {
      case `POST /app/enrol/${GOOD_TOKEN}/options`:
        return json(200, {
          rp: { name: "docverify", id: "localhost" },
          user: { id: b64url(randomBytes(16)), name: "asa@example.org", displayName: PERSON.name },
          challenge,
          pubKeyCredParams: [{ type: "public-key", alg: -7 }],
          timeout: 60_000,
          attestation: "none",
          authenticatorSelection: { residentKey: "required", requireResidentKey: true, userVerification: "required" },
          excludeCredentials: [],
        });
      case `POST /app/enrol/${GOOD_TOKEN}`:
        state.signedIn = true;
        return json(201, { person, keyFingerprint: "09".repeat(32), signUrl: `${base}/sign` });
      case "POST /app/session/options":
        return json(200, { challenge, rpId: "localhost", timeout: 60_000, userVerification: "required", allowCredentials: [] });
      case "POST /app/session":
        state.signedIn = true;
        return json(200, { person });
      case "GET /app/session":
        return state.signedIn ? json(200, { person }) : notSignedIn();
      case "DELETE /app/session":
        state.signedIn = false;
        return new Response(null, { status: 204 });
    }
    if (!state.signedIn) return notSignedIn();
    if (key === "GET /app/records") return json(200, { records: state.records });
    if (key === "POST /app/signatures/options") {
      const body = (await req.json()) as { originalDocHash: string; filename?: string };
      const recordId = Bun.randomUUIDv7();
      const signedAtMs = Date.now();
      const payload = encodeRecordPayload({ recordId, docHash: body.originalDocHash, signedAtMs, signerKeyFingerprint: fingerprint });
      const c = createHash("sha256").update(payload).digest("base64url");
      const signedAt = new Date(signedAtMs).toISOString();
      pendingSignatures.set(c, { recordId, docHash: body.originalDocHash, filename: body.filename ?? null, signedAt });
      return json(200, {
        challenge: c,
        rpId: "localhost",
        timeout: 60_000,
        userVerification: "required",
        allowCredentials: [],
        docverify: { recordId, originalDocHash: body.originalDocHash, signedAt, payload: b64url(payload) },
      });
    }
    if (key === "POST /app/signatures") {
      const body = (await req.json()) as { response: { clientDataJSON: string } };
      const clientData = JSON.parse(Buffer.from(body.response.clientDataJSON, "base64url").toString()) as { challenge: string };
      const pending = pendingSignatures.get(clientData.challenge);
      if (pending === undefined) return json(401, { error: { code: "UNAUTHENTICATED", message: "This passkey answer is for no signature prepared here." } });
      const record: FakeRecord = {
        recordId: pending.recordId,
        originalDocHash: pending.docHash,
        filename: pending.filename,
        authenticatedAt: pending.signedAt,
        anchorState: "pending",
        verifyUrl: `${base}/verify/${pending.recordId}`,
        revocation: null,
      };
      state.records.unshift(record);
      return json(201, { ...record, anchor: { topicId: "0.0.1001", transactionId: "0.0.2@1.1", hashscanUrl: "http://localhost/x" }, signerName: PERSON.name });
    }
    const revoke = /^POST \/app\/records\/([^/]+)\/revoke$/.exec(key);
    if (revoke !== null) {
      const r = state.records.find((x) => x.recordId === revoke[1]);
      if (r === undefined) return json(404, { error: { code: "NOT_FOUND", message: "No such record." } });
      const { reason } = (await req.json()) as { reason?: string };
      r.revocation = { reason: reason ?? "UNSPECIFIED", revokedAt: new Date().toISOString() };
      return json(200, { recordId: r.recordId });
    }
    return json(404, { error: { code: "NOT_FOUND", message: "No such route." } });
  }

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (path.startsWith("/app/") && !path.startsWith("/app/assets/")) return api(req, path);
      return http.handle(req, "127.0.0.1");
    },
  });
  onCleanup(() => server.stop(true));
  // "localhost", not 127.0.0.1: a relying party id must be a domain, and localhost is a secure context.
  base = `http://localhost:${server.port}`;
  return Object.assign(state, { base });
}
