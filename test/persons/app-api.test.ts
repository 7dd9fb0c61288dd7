/**
 * The person application's JSON endpoints (docs/persons.md "The API behind the pages: /app")
 * in-process, against the embedded local ledger, with a software authenticator answering as a
 * browser would: enrolment, sessions, signing, verification as `verified`, revocation, and every
 * refusal docs/persons.md lists.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { eq } from "drizzle-orm";
import { createPersons, type Persons } from "../../src/persons/persons.ts";
import { appChallenges, appSessions, enrolments, ledgerTransactions, organisations, records } from "../../src/storage/schema.ts";
import { LIVE_PER_SUBJECT } from "../../src/persons/service.ts";
import { PERSON_RECORDS_SQL } from "../../src/records/views.ts";
import { cleanup, testApp } from "../support/env.ts";
import { SoftAuthenticator } from "../support/soft-authenticator.ts";
import { waitFor } from "../support/wait.ts";

const PUBLIC = "http://localhost:8443";
const ORIGIN = PUBLIC;
const hashOf = (s: string) => "sha256:" + createHash("sha256").update(s).digest("hex");

let t: Awaited<ReturnType<typeof testApp>>;
let persons: Persons;
let orgId: string;

beforeAll(async () => {
  // Consensus in 300 ms rather than the local ledger's default 3 s: the tests wait for the
  // organisation's topic, key announcements and records to be anchored, and none looks at a
  // record before its consensus.
  t = await testApp({ env: { DOCVERIFY_PUBLIC_URL: PUBLIC, DOCVERIFY_RATE_LIMIT_ANONYMOUS: "1000", DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: "300" } });
  persons = createPersons({ store: t.app.store, clock: t.app.clock, publicUrl: PUBLIC });
  orgId = (await t.app.organisations.create({ name: "Acme Notaries", apiAccess: true, addon: true, validated: true }, "test")).id;
  await waitFor("the organisation's topic", async () => (await t.app.organisations.get(orgId)).topicId, 30_000);
}, 60_000);
afterAll(cleanup);

function call(method: string, path: string, options: { body?: unknown; cookie?: string | null; origin?: string | null } = {}) {
  const headers: Record<string, string> = {};
  if (options.origin !== null) headers.origin = options.origin ?? ORIGIN;
  if (options.cookie) headers.cookie = `docverify_session=${options.cookie}`;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  return t.request(path, { method, headers, ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }) });
}

const tokenOf = (enrolUrl: string) => enrolUrl.split("/enrol/")[1]!;
const cookieOf = (res: Response) => /docverify_session=([^;]*)/.exec(res.headers.get("set-cookie") ?? "")?.[1] ?? null;
async function errorCode(res: Response): Promise<string> {
  return ((await res.json()) as { error: { code: string } }).error.code;
}

/** Adds a person and enrols them with a new software authenticator; their session and authenticator. */
async function enrolled(name: string) {
  const { person, link } = await persons.add({ orgId, name, email: `${name.split(" ")[0]!.toLowerCase()}@example.test`, identity: "passport X1234567 seen in person" }, "admin:test");
  const auth = new SoftAuthenticator(ORIGIN);
  const token = tokenOf(link.enrolUrl);
  const options = await (await call("POST", `/app/enrol/${token}/options`, { body: {} })).json();
  const res = await call("POST", `/app/enrol/${token}`, { body: auth.register(options as never) });
  expect(res.status).toBe(201);
  return { person, auth, session: cookieOf(res)!, token };
}

async function prepare(session: string, docHash: string, filename?: string) {
  const res = await call("POST", "/app/signatures/options", { cookie: session, body: { originalDocHash: docHash, ...(filename === undefined ? {} : { filename }) } });
  expect(res.status).toBe(200);
  return (await res.json()) as { challenge: string; rpId: string; allowCredentials: { id: string }[]; docverify: { recordId: string; originalDocHash: string; signedAt: string; payload: string } };
}

async function anchored(recordId: string): Promise<void> {
  await waitFor(`record ${recordId} to anchor`, () => (t.app.db.select().from(records).where(eq(records.id, recordId)).get()?.anchorState === "anchored" ? true : null), 30_000);
}

describe("enrolment", () => {
  test("options, then the passkey: 201 with the person, their key's fingerprint and a session cookie (HttpOnly, SameSite=Strict, no Secure over http)", async () => {
    const { person, link } = await persons.add({ orgId, name: "Ada Lovelace", email: "ada@example.test", identity: "passport P1 checked by HR" }, "admin:test");
    const token = tokenOf(link.enrolUrl);
    const optionsRes = await call("POST", `/app/enrol/${token}/options`, { body: {} });
    expect(optionsRes.status).toBe(200);
    expect(optionsRes.headers.get("cache-control")).toBe("no-store");
    const options = (await optionsRes.json()) as { rp: { id: string }; authenticatorSelection: { userVerification: string; residentKey: string }; user: { name: string } };
    expect(options.rp.id).toBe("localhost");
    expect(options.authenticatorSelection).toMatchObject({ userVerification: "required", residentKey: "required" });
    const res = await call("POST", `/app/enrol/${token}`, { body: new SoftAuthenticator(ORIGIN).register(options as never) });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { person: { id: string; name: string; organisation: string }; keyFingerprint: string; signUrl: string };
    expect(body.person).toEqual({ id: person.id, name: "Ada Lovelace", organisation: "Acme Notaries" });
    expect(body.keyFingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(body.signUrl).toBe(`${PUBLIC}/sign`);
    const setCookie = res.headers.get("set-cookie")!;
    expect(setCookie).toMatch(/^docverify_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict$/);
    expect((await persons.get(person.id)).keyFingerprint).toBe(body.keyFingerprint);
    // The key's announcement is queued on the organisation's topic: by fingerprint and person id, nothing personal.
    const announcement = t.app.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.keyFingerprint, Buffer.from(body.keyFingerprint, "hex"))).get()!;
    const message = JSON.parse(Buffer.from(announcement.message!).toString("utf8"));
    expect(message).toEqual({ v: 1, type: "person_key", orgId, personId: person.id, algorithm: "ML-DSA-65", keyFingerprint: body.keyFingerprint, sealKeyFingerprint: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(JSON.stringify(message)).not.toContain("Ada");
    expect(JSON.stringify(message)).not.toContain("ada@");
  });

  test("in an organisation with a domain, the person's key announcement carries it after personId; a later change of domain announces the organisation's key again, never the person's", async () => {
    const announcementsOf = (fingerprint: Buffer) => t.app.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.keyFingerprint, fingerprint)).all();
    await t.app.organisations.set(orgId, { domain: "notaries.example" }, "test");
    try {
      const { person } = await enrolled("Dom Ain");
      const fingerprint = Buffer.from((await persons.get(person.id)).keyFingerprint!, "hex");
      const [announcement] = announcementsOf(fingerprint);
      const text = Buffer.from(announcement!.message!).toString("utf8");
      expect(Object.keys(JSON.parse(text))).toEqual(["v", "type", "orgId", "personId", "domain", "algorithm", "keyFingerprint", "sealKeyFingerprint"]);
      expect(text).toContain(`"personId":"${person.id}","domain":"notaries.example","algorithm":"ML-DSA-65"`);
      // The organisation's domain changes: its own key is announced again (once anchored), the person's is not.
      const org = t.app.db.select().from(organisations).where(eq(organisations.id, orgId)).get()!;
      await t.app.organisations.set(orgId, { domain: "other-notaries.example" }, "test");
      const orgAnnouncements = () =>
        announcementsOf(org.systemKeyFingerprint).filter((r) => r.state === "anchored" && JSON.parse(Buffer.from(r.message!).toString("utf8")).domain === "other-notaries.example");
      await waitFor("the organisation's key announced again", () => (orgAnnouncements().length === 1 ? true : undefined), 30_000);
      expect(announcementsOf(fingerprint).map((r) => r.transactionId)).toEqual([announcement!.transactionId]);
    } finally {
      await t.app.organisations.set(orgId, { domain: null }, "test");
    }
  });

  test("a used, unknown, expired or suspended person's link is refused, and nothing changes", async () => {
    const { token } = await enrolled("Used Link");
    const used = await call("POST", `/app/enrol/${token}/options`, { body: {} });
    expect(used.status).toBe(403);
    expect(((await used.json()) as { error: { message: string } }).error.message).toContain("already been used");
    expect((await call("POST", `/app/enrol/${"A".repeat(43)}/options`, { body: {} })).status).toBe(404);
    expect((await call("POST", "/app/enrol/short/options", { body: {} })).status).toBe(404);

    const { person, link } = await persons.add({ orgId, name: "Late Larry", email: "larry@example.test", identity: "id card" }, "admin:test");
    const late = tokenOf(link.enrolUrl);
    const options = await (await call("POST", `/app/enrol/${late}/options`, { body: {} })).json();
    t.app.db.update(enrolments).set({ expiresAt: Date.now() - 1 }).where(eq(enrolments.personId, person.id)).run();
    const expired = await call("POST", `/app/enrol/${late}`, { body: new SoftAuthenticator(ORIGIN).register(options as never) });
    expect(expired.status).toBe(403);
    expect(((await expired.json()) as { error: { message: string } }).error.message).toContain("expired");
    expect((await persons.get(person.id)).enrolledAt).toBeNull();

    const { person: sus, link: susLink } = await persons.add({ orgId, name: "Sue Spended", email: "sue@example.test", identity: "id card" }, "admin:test");
    await persons.suspend(sus.id, "admin:test");
    expect((await call("POST", `/app/enrol/${tokenOf(susLink.enrolUrl)}/options`, { body: {} })).status).toBe(403);
  });

  test("a registration for another origin, another relying party, another challenge or without user verification is 401; the link stays usable", async () => {
    const { person, link } = await persons.add({ orgId, name: "Careful Carl", email: "carl@example.test", identity: "id card" }, "admin:test");
    const token = tokenOf(link.enrolUrl);
    const options = (await (await call("POST", `/app/enrol/${token}/options`, { body: {} })).json()) as { challenge: string };
    const auth = new SoftAuthenticator(ORIGIN);
    for (const bend of [{ origin: "http://evil.test" }, { rpId: "evil.test" }, { userVerified: false }, { challenge: Buffer.alloc(32, 7).toString("base64url") }]) {
      const res = await call("POST", `/app/enrol/${token}`, { body: auth.register(options as never, bend) });
      expect(res.status).toBe(401);
      expect(await errorCode(res)).toBe("UNAUTHENTICATED");
    }
    expect((await call("POST", `/app/enrol/${token}`, { body: { id: "x" } })).status).toBe(400);
    expect((await persons.get(person.id)).enrolledAt).toBeNull();
    expect((await call("POST", `/app/enrol/${token}`, { body: auth.register(options as never) })).status).toBe(201);
  });
});

describe("the Origin rule and sessions", () => {
  test("every state-changing /app request without Origin, or with another, is 403 FORBIDDEN before anything else", async () => {
    const { session } = await enrolled("Origin Olga");
    for (const [method, path] of [["POST", "/app/session/options"], ["POST", "/app/signatures/options"], ["DELETE", "/app/session"], ["POST", `/app/enrol/${"A".repeat(43)}/options`]] as const) {
      for (const origin of [null, "http://evil.test", "http://localhost:8444"]) {
        const res = await call(method, path, { origin, cookie: session, body: {} });
        expect(res.status).toBe(403);
        expect(await errorCode(res)).toBe("FORBIDDEN");
      }
    }
    // A read needs no Origin.
    expect((await call("GET", "/app/session", { origin: null, cookie: session })).status).toBe(200);
  });

  test("sign in with the passkey: a new session; sign out ends it; an idle session ends after 15 minutes", async () => {
    const { auth, person } = await enrolled("Session Sam");
    const options = (await (await call("POST", "/app/session/options", { body: {} })).json()) as { challenge: string; allowCredentials: unknown[]; userVerification: string };
    expect(options.allowCredentials).toEqual([]);
    expect(options.userVerification).toBe("required");
    const res = await call("POST", "/app/session", { body: auth.assert(options as never) });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ person: { id: person.id, name: "Session Sam", organisation: "Acme Notaries" } });
    const session = cookieOf(res)!;
    expect((await call("GET", "/app/session", { cookie: session })).status).toBe(200);

    t.app.db.update(appSessions).set({ lastSeenAt: Date.now() - 15 * 60 * 1000 - 1 }).run();
    const idle = await call("GET", "/app/session", { cookie: session });
    expect(idle.status).toBe(401);
    expect(await errorCode(idle)).toBe("UNAUTHENTICATED");

    const again = (await (await call("POST", "/app/session/options", { body: {} })).json()) as { challenge: string };
    const second = cookieOf(await call("POST", "/app/session", { body: auth.assert(again as never) }))!;
    const out = await call("DELETE", "/app/session", { cookie: second });
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
    expect((await call("GET", "/app/session", { cookie: second })).status).toBe(401);
    expect((await call("GET", "/app/session", {})).status).toBe(401);
  });

  test("a replayed sign-in answer, one for an unknown passkey, another origin or without user verification is 401; a suspended person is 403", async () => {
    const { auth, person } = await enrolled("Replay Rita");
    const options = (await (await call("POST", "/app/session/options", { body: {} })).json()) as { challenge: string };
    const answer = auth.assert(options as never);
    expect((await call("POST", "/app/session", { body: answer })).status).toBe(200);
    expect((await call("POST", "/app/session", { body: answer })).status).toBe(401);
    for (const bend of [{ origin: "http://evil.test" }, { rpId: "evil.test" }, { userVerified: false }]) {
      const o = (await (await call("POST", "/app/session/options", { body: {} })).json()) as { challenge: string };
      expect((await call("POST", "/app/session", { body: auth.assert(o as never, bend) })).status).toBe(401);
    }
    const stranger = new SoftAuthenticator(ORIGIN);
    stranger.register({ challenge: "AAAAAAAAAAAAAAAAAAAAAA", rp: { id: "localhost" }, user: { id: "eA" } });
    const o = (await (await call("POST", "/app/session/options", { body: {} })).json()) as { challenge: string };
    expect((await call("POST", "/app/session", { body: stranger.assert(o as never) })).status).toBe(401);

    await persons.suspend(person.id, "admin:test");
    const s = (await (await call("POST", "/app/session/options", { body: {} })).json()) as { challenge: string };
    const res = await call("POST", "/app/session", { body: auth.assert(s as never) });
    expect(res.status).toBe(403);
    expect(cookieOf(res)).toBeNull();
  });
});

describe("signing", () => {
  test("the challenge commits to the record payload; the record verifies as `verified` with the person's name, after the key's announcement on the topic", async () => {
    const { auth, session, person } = await enrolled("Grace Hopper");
    const docHash = hashOf("grace's contract");
    const options = await prepare(session, docHash, "contract.pdf");
    const payload = Buffer.from(options.docverify.payload, "base64url");
    expect(options.challenge).toBe(createHash("sha256").update(payload).digest("base64url"));
    expect(payload.includes(Buffer.from(docHash.slice(7), "hex"))).toBe(true);
    expect(options.allowCredentials).toHaveLength(1);

    const res = await call("POST", "/app/signatures", { cookie: session, body: auth.assert(options) });
    expect(res.status).toBe(201);
    const record = (await res.json()) as { recordId: string; originalDocHash: string; verifyUrl: string; signerName: string; authenticatedAt: string };
    expect(record).toMatchObject({ recordId: options.docverify.recordId, originalDocHash: docHash, verifyUrl: `${PUBLIC}/verify/${options.docverify.recordId}`, signerName: "Grace Hopper", authenticatedAt: options.docverify.signedAt });
    await anchored(record.recordId);

    const verification = await t.request("/v1/verifications", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ originalDocHash: docHash }) });
    const verdict = (await verification.json()) as { verdict: string; matches: { signerType: string; kind: string; signerHint: string; signerStanding: string; checksPerformed: Record<string, string> }[] };
    expect(verdict.verdict).toBe("verified");
    expect(verdict.matches[0]).toMatchObject({ signerType: "user", kind: "pdf_embedded", signerHint: "Grace Hopper", signerStanding: "good_standing", checksPerformed: { hashBinding: "pass", userSignature: "pass", serverSeal: "pass" } });

    // On the topic, the person's key was announced before the record.
    const rows = t.app.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.orgId, orgId)).all();
    const key = (await persons.get(person.id)).keyFingerprint!;
    const announcement = rows.find((r) => r.kind === "key_announcement" && r.keyFingerprint?.toString("hex") === key)!;
    const message = rows.find((r) => r.recordId === record.recordId && r.kind === "record_message")!;
    expect(announcement.sequenceNumber!).toBeLessThan(message.sequenceNumber!);

    // The same hash again: 200 with the same record, nothing new.
    const again = await prepare(session, docHash);
    const repeat = await call("POST", "/app/signatures", { cookie: session, body: auth.assert(again) });
    expect(repeat.status).toBe(200);
    expect(((await repeat.json()) as { recordId: string }).recordId).toBe(record.recordId);

    // Listed with its state; /v1 cannot revoke it; the person can, once.
    const list = (await (await call("GET", "/app/records", { cookie: session })).json()) as { records: { recordId: string; filename: string; anchorState: string; revocation: unknown }[] };
    expect(list.records).toEqual([expect.objectContaining({ recordId: record.recordId, filename: "contract.pdf", anchorState: "anchored", revocation: null })]);
    const revoke = await call("POST", `/app/records/${record.recordId}/revoke`, { cookie: session, body: { reason: "SUPERSEDED" } });
    expect(revoke.status).toBe(200);
    expect(await revoke.json()).toEqual({ recordId: record.recordId });
    const twice = await call("POST", `/app/records/${record.recordId}/revoke`, { cookie: session, body: { reason: "SUPERSEDED" } });
    expect(twice.status).toBe(409);
    expect(await errorCode(twice)).toBe("ALREADY_REVOKED");
    const after = (await (await t.request("/v1/verifications", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ originalDocHash: docHash }) })).json()) as { verdict: string };
    expect(after.verdict).toBe("revoked");
  }, 60_000);

  test("an assertion for another challenge, origin or relying party, without user verification, or replayed is 401 and creates nothing", async () => {
    const { auth, session } = await enrolled("Bent Bob");
    const docHash = hashOf("bob's will");
    const options = await prepare(session, docHash);
    for (const bend of [{ origin: "http://evil.test" }, { rpId: "evil.test" }, { userVerified: false }, { challenge: Buffer.alloc(32, 9).toString("base64url") }]) {
      const res = await call("POST", "/app/signatures", { cookie: session, body: auth.assert(options, bend) });
      expect(res.status).toBe(401);
    }
    expect(t.app.db.select().from(records).where(eq(records.docHash, docHash)).all()).toEqual([]);
    const answer = auth.assert(options);
    expect((await call("POST", "/app/signatures", { cookie: session, body: answer })).status).toBe(201);
    const replay = await call("POST", "/app/signatures", { cookie: session, body: answer });
    expect(replay.status).toBe(401);
    expect(t.app.db.select().from(records).where(eq(records.docHash, docHash)).all()).toHaveLength(1);
  });

  test("another person's session, passkey or record: 403; no session: 401; bad input: 400", async () => {
    const a = await enrolled("Alice Able");
    const b = await enrolled("Bert Baker");
    const forA = await prepare(a.session, hashOf("a's deed"));
    // B's session posting A's prepared signature, answered by A's passkey.
    const crossSession = await call("POST", "/app/signatures", { cookie: b.session, body: a.auth.assert(forA) });
    expect(crossSession.status).toBe(403);
    // B's own challenge answered with A's passkey.
    const forB = await prepare(b.session, hashOf("b's deed"));
    const crossKey = await call("POST", "/app/signatures", { cookie: b.session, body: a.auth.assert(forB, { credential: a.auth.credentials[0] }) });
    expect(crossKey.status).toBe(403);
    expect(t.app.db.select().from(records).where(eq(records.docHash, hashOf("a's deed"))).all()).toEqual([]);

    const noSession = await call("POST", "/app/signatures/options", { body: { originalDocHash: hashOf("x") } });
    expect(noSession.status).toBe(401);
    expect((await call("GET", "/app/records", {})).status).toBe(401);
    const bad = await call("POST", "/app/signatures/options", { cookie: a.session, body: { originalDocHash: "abc" } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { details: Record<string, string> } }).error.details).toHaveProperty("originalDocHash");

    // A's record, anchored: B cannot revoke it; an unknown one is 404.
    const signed = (await (await call("POST", "/app/signatures", { cookie: a.session, body: a.auth.assert(forA) })).json()) as { recordId: string };
    await anchored(signed.recordId);
    const foreign = await call("POST", `/app/records/${signed.recordId}/revoke`, { cookie: b.session, body: { reason: "SUPERSEDED" } });
    expect(foreign.status).toBe(403);
    expect(await errorCode(foreign)).toBe("NOT_REVOCABLE");
    expect((await call("POST", `/app/records/${crypto.randomUUID()}/revoke`, { cookie: b.session, body: { reason: "SUPERSEDED" } })).status).toBe(404);
  }, 60_000);

  test("a suspended person cannot prepare or finish a signature; their records still verify, with signerStanding suspended", async () => {
    const { auth, session, person } = await enrolled("Soon Suspended");
    const docHash = hashOf("before suspension");
    const signed = (await (await call("POST", "/app/signatures", { cookie: session, body: auth.assert(await prepare(session, docHash)) })).json()) as { recordId: string };
    await anchored(signed.recordId);
    const pending = await prepare(session, hashOf("after suspension"));
    await persons.suspend(person.id, "admin:test");
    expect((await call("POST", "/app/signatures/options", { cookie: session, body: { originalDocHash: hashOf("later") } })).status).toBe(403);
    expect((await call("POST", "/app/signatures", { cookie: session, body: auth.assert(pending) })).status).toBe(403);
    const verdict = (await (await t.request("/v1/verifications", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ originalDocHash: docHash }) })).json()) as { verdict: string; matches: { signerStanding: string }[] };
    expect(verdict.verdict).toBe("verified");
    expect(verdict.matches[0]!.signerStanding).toBe("suspended");
  }, 60_000);
});

test("requests without a session spend the client IP's anonymous budget (429 with Retry-After); those with one do not", async () => {
  const { session } = await enrolled("Budget Betty");
  let limited: Response | null = null;
  for (let i = 0; i < 1100 && limited === null; i++) {
    const res = await t.request("/app/session/options", { method: "POST", headers: { origin: ORIGIN, "content-type": "application/json" }, body: "{}" }, "10.9.9.9");
    if (res.status === 429) limited = res;
  }
  expect(limited).not.toBeNull();
  expect(Number(limited!.headers.get("retry-after"))).toBeGreaterThan(0);
  const withSession = await t.request("/app/records", { headers: { cookie: `docverify_session=${session}` } }, "10.9.9.9");
  expect(withSession.status).toBe(200);
});

describe("bounded storage", () => {
  test("a person's live signature challenges are capped (the oldest beyond the cap no longer verify); ended sessions are deleted at the next sign-in", async () => {
    const { auth, session, person } = await enrolled("Busy Bea");
    const prepared = [];
    for (let i = 0; i < LIVE_PER_SUBJECT + 3; i++) prepared.push(await prepare(session, hashOf(`busy ${i}`)));
    const live = t.app.db.select().from(appChallenges).all().filter((c) => c.purpose === "signature" && c.subject === person.id);
    expect(live).toHaveLength(LIVE_PER_SUBJECT);
    expect((await call("POST", "/app/signatures", { cookie: session, body: auth.assert(prepared[0]!) })).status).toBe(401);
    expect((await call("POST", "/app/signatures", { cookie: session, body: auth.assert(prepared.at(-1)!) })).status).toBe(201);

    t.app.db.update(appSessions).set({ lastSeenAt: Date.now() - 16 * 60 * 1000 }).run();
    const o = (await (await call("POST", "/app/session/options", { body: {} })).json()) as { challenge: string };
    expect((await call("POST", "/app/session", { body: auth.assert(o as never) })).status).toBe(200);
    expect(t.app.db.select().from(appSessions).all()).toHaveLength(1);
  });

  test("a person's records are read through the partial index records_person, never a scan", () => {
    const plan = (t.app.db.$client.query(`EXPLAIN QUERY PLAN ${PERSON_RECORDS_SQL}`).all(new Uint8Array(32), 100) as { detail: string }[]).map((r) => r.detail);
    expect(plan.some((d) => /^SEARCH records USING INDEX records_person/.test(d))).toBe(true);
    expect(plan.filter((d) => /^SCAN|TEMP B-TREE/.test(d))).toEqual([]);
  });
});

