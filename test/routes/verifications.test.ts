/**
 * The verification operations through the HTTP surface (docs/verification.md):
 * what each tier sees field by field, the log rows a credentialed call leaves, and the
 * request-level refusals. The verdict rules themselves are tested in test/verification/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { manualClock } from "../../src/lib/clock.ts";
import { testService, type TestService } from "../support/engine.ts";
import { createStoreRecordsFixture, docHashOf, type StoreRecordsFixture } from "../support/records-fixture.ts";
import { cleanup } from "../support/env.ts";

afterAll(cleanup);

const LIMITS = { DOCVERIFY_RATE_LIMIT_ANONYMOUS: "100000", DOCVERIFY_RATE_LIMIT_KEY: "100000", DOCVERIFY_RATE_LIMIT_ORG: "100000" };

// `serve`'s app on the engine DOCVERIFY_TEST_ENGINE selects (test/support/engine.ts).
let app: TestService["app"];
let service: TestService;
let fx: StoreRecordsFixture;
let liveKey: string;
let testKey: string;
let otherOrgKey: string;
const signedHash = docHashOf("an organisation-signed document");
const personHash = docHashOf("a person-signed document");
const pendingHash = docHashOf("a document awaiting consensus");
let orgRecordId: string;

type Json = Record<string, any>;

async function send(path: string, init: RequestInit = {}): Promise<{ status: number; body: Json; headers: Headers }> {
  const res = await app.http.handle(new Request(`http://localhost${path}`, init), "198.51.100.7");
  return { status: res.status, body: (await res.json()) as Json, headers: res.headers };
}
const verify = (body: unknown, key?: string) =>
  send("/v1/verifications", {
    method: "POST",
    headers: { "content-type": "application/json", ...(key !== undefined ? { authorization: `Bearer ${key}` } : {}) },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
const get = (path: string, key: string) => send(path, { headers: { authorization: `Bearer ${key}` } });

beforeAll(async () => {
  const clock = manualClock(Date.UTC(2026, 10, 22, 9));
  service = await testService({ env: LIMITS, clock });
  app = service.app;
  fx = await createStoreRecordsFixture({ store: service.store, signer: service.signer, clock });
  const org = await fx.createOrg("Acme Records Ltd", { apiAccess: true, addon: true, validated: true });
  const other = await fx.createOrg("Other Org", { apiAccess: true, validated: true });
  liveKey = (await service.apiKeys.mint({ orgId: org.id, environment: "live" }, "test")).key;
  testKey = (await service.apiKeys.mint({ orgId: org.id, environment: "test" }, "test")).key;
  otherOrgKey = (await service.apiKeys.mint({ orgId: other.id, environment: "live" }, "test")).key;
  orgRecordId = await fx.addOrgRecord(org, { docHash: signedHash });
  await fx.addPersonRecord(await fx.createPerson(), { docHash: personHash, hint: "J. Doe, notary" });
  await fx.addOrgRecord(org, { docHash: pendingHash, anchorState: "accepted" });
});

describe("POST /v1/verifications", () => {
  test("public tier: the verdict and matches, without verificationId, environment, reference or signerOrg", async () => {
    const { status, body, headers } = await verify({ originalDocHash: signedHash, reference: "case 42" });
    expect(status).toBe(200);
    expect(headers.get("content-type")).toContain("application/json");
    expect(Object.keys(body)).toEqual(["verdict", "disclosureTier", "assuranceLevel", "mode", "originalDocHash", "verifiedAt", "matches"]);
    expect(body).toMatchObject({ verdict: "verified_org", disclosureTier: "public", assuranceLevel: "docverify.registry.v1", mode: "partial", originalDocHash: signedHash });
    expect(body.verifiedAt).toBe("2026-11-22T09:00:00.000Z");
    expect(body.matches).toHaveLength(1);
    const m = body.matches[0];
    expect(m.recordId).toBe(orgRecordId);
    expect(m).toMatchObject({ kind: "record_only", status: "active", signerType: "org", signerStanding: "good_standing" });
    expect(m.signerOrg).toBeUndefined();
    expect(m.checksPerformed).toEqual({ hashBinding: "pass", userSignature: "pass", serverSeal: "pass", anchorStatus: "anchored" });
    expect(Object.keys(m.anchor)).toEqual(["topicId", "transactionId", "sequenceNumber", "consensusAt", "mirrorNodeUrl"]);
    expect(m.anchor.mirrorNodeUrl).toEndWith(`/api/v1/topics/${m.anchor.topicId}/messages/${m.anchor.sequenceNumber}`);
    // anonymous calls are not logged
    expect(await service.count("verifications")).toBe(0);
  });

  test("organisation tier: adds verificationId, environment, reference and signerOrg, and logs the call", async () => {
    const { status, body } = await verify({ originalDocHash: signedHash, reference: "case 42" }, liveKey);
    expect(status).toBe(200);
    expect(body).toMatchObject({ verdict: "verified_org", disclosureTier: "organisation", environment: "live", reference: "case 42" });
    expect(body.verificationId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(body.matches[0].signerOrg).toBe("Acme Records Ltd");
    const recorded = await get(`/v1/verifications/${body.verificationId}`, liveKey);
    expect(recorded.status).toBe(200);
    expect(recorded.body).toEqual({
      verificationId: body.verificationId,
      verdict: "verified_org",
      disclosureTier: "organisation",
      assuranceLevel: "docverify.registry.v1",
      mode: "partial",
      environment: "live",
      originalDocHash: signedHash,
      verifiedAt: body.verifiedAt,
      reference: "case 42",
      matches: [],
    });
  });

  test("a retried call is a new log row under a new verificationId", async () => {
    const a = await verify({ originalDocHash: personHash }, liveKey);
    const b = await verify({ originalDocHash: personHash }, liveKey);
    expect(a.body.verdict).toBe("verified");
    expect(a.body.matches[0].signerHint).toBe("J. Doe, notary");
    expect(a.body.matches[0].signerOrg).toBeUndefined();
    expect(a.body.verificationId).not.toBe(b.body.verificationId);
    const page = await get(`/v1/verifications?originalDocHash=${personHash}`, liveKey);
    expect(page.body.data.map((r: Json) => r.verificationId)).toEqual([b.body.verificationId, a.body.verificationId]);
    expect(page.body.pagination).toEqual({ nextCursor: null, hasMore: false });
    expect(Object.keys(page.body.data[0])).toEqual(["verificationId", "verdict", "assuranceLevel", "mode", "environment", "originalDocHash", "verifiedAt"]);
  });

  test("pending_anchor carries retryAfterSeconds and no matches; no_record has none either", async () => {
    const pending = await verify({ originalDocHash: pendingHash });
    expect(pending.body).toMatchObject({ verdict: "pending_anchor", matches: [] });
    expect(Number.isInteger(pending.body.retryAfterSeconds) && pending.body.retryAfterSeconds >= 1).toBe(true);
    // GET by id shows it as recorded, retryAfterSeconds included
    const logged = await verify({ originalDocHash: pendingHash }, liveKey);
    const recorded = await get(`/v1/verifications/${logged.body.verificationId}`, liveKey);
    expect(recorded.body).toMatchObject({ verdict: "pending_anchor", matches: [], retryAfterSeconds: logged.body.retryAfterSeconds });
    const none = await verify({ originalDocHash: docHashOf("never authenticated") });
    expect(none.body).toMatchObject({ verdict: "no_record", matches: [] });
    expect(none.body.retryAfterSeconds).toBeUndefined();
  });

  test("a test key verifies real records; its log rows are kept apart from live ones", async () => {
    const t = await verify({ originalDocHash: signedHash }, testKey);
    expect(t.body).toMatchObject({ verdict: "verified_org", environment: "test" });
    const testLog = await get("/v1/verifications", testKey);
    expect(testLog.body.data.map((r: Json) => r.verificationId)).toEqual([t.body.verificationId]);
    const liveLog = await get("/v1/verifications", liveKey);
    expect(liveLog.body.data.map((r: Json) => r.verificationId)).not.toContain(t.body.verificationId);
    expect(liveLog.body.data.every((r: Json) => r.environment === "live")).toBe(true);
    // by id: 404 alike from the other environment, another organisation, unknown and malformed ids
    for (const [path, key] of [
      [`/v1/verifications/${t.body.verificationId}`, liveKey],
      [`/v1/verifications/${t.body.verificationId}`, otherOrgKey],
      ["/v1/verifications/0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d", testKey],
      ["/v1/verifications/not-a-uuid", testKey],
      [`/v1/verifications/${t.body.verificationId.toUpperCase()}`, testKey],
    ] as const) {
      const r = await get(path, key);
      expect([r.status, r.body.error.code]).toEqual([404, "NOT_FOUND"]);
    }
    expect((await get("/v1/verifications", otherOrgKey)).body.data).toEqual([]);
  });

  test("bad input: 400 naming the field, nothing logged", async () => {
    const before = await service.count("verifications");
    const cases: [unknown, string][] = [
      [{}, "originalDocHash"],
      [{ originalDocHash: signedHash.toUpperCase().replace("SHA256", "sha256") }, "originalDocHash"],
      [{ originalDocHash: signedHash.slice(7) }, "originalDocHash"],
      [{ originalDocHash: 42 }, "originalDocHash"],
      [{ originalDocHash: signedHash, reference: "x".repeat(129) }, "reference"],
      [{ originalDocHash: signedHash, reference: "line\nbreak" }, "reference"],
      [{ originalDocHash: signedHash, reference: 7 }, "reference"],
      [[signedHash], "body"],
      ["not json", "body"],
    ];
    for (const [body, field] of cases) {
      for (const key of [undefined, liveKey]) {
        const r = await verify(body, key);
        expect(r.status).toBe(400);
        expect(r.body.error.code).toBe("VALIDATION_FAILED");
        expect(Object.keys(r.body.error.details)).toContain(field);
      }
    }
    // 128 code points, astral ones included, is the limit, not 128 UTF-16 units
    expect((await verify({ originalDocHash: signedHash, reference: "𝄞".repeat(128) }, liveKey)).status).toBe(200);
    expect(await service.count("verifications")).toBe(before + 1);
  });

  test("a body over 4 KiB is refused with 413 before it is read", async () => {
    const r = await verify({ originalDocHash: signedHash, reference: "a".repeat(5000) }, liveKey);
    expect([r.status, r.body.error.code]).toEqual([413, "PAYLOAD_TOO_LARGE"]);
    // the largest legal body, every character written as a \u escape, fits
    const escaped = `{"originalDocHash":"${[...signedHash].map((c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0")).join("")}","reference":"${"\\u00e9".repeat(128)}"}`;
    expect((await verify(escaped, liveKey)).status).toBe(200);
  });
});

describe("GET /v1/verifications", () => {
  test("query refusals name the parameter", async () => {
    for (const [query, field] of [
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["limit=ten", "limit"],
      ["verdict=maybe", "verdict"],
      ["originalDocHash=abc", "originalDocHash"],
      ["from=yesterday", "from"],
      ["to=2026-13-01T00:00:00Z", "to"],
      ["from=2026-11-23T00:00:00Z&to=2026-11-22T00:00:00Z", "from"],
      ["after=garbage", "after"],
      ["colour=blue", "colour"],
      ["limit=5&limit=6", "limit"],
      ["__proto__=1", "__proto__"],
      ["constructor=1", "constructor"],
      ["toString=1", "toString"],
      ["hasOwnProperty=1", "hasOwnProperty"],
      ["__proto__=1&__proto__=2", "__proto__"],
    ] as const) {
      const r = await get(`/v1/verifications?${query}`, liveKey);
      expect([query, r.status, r.body.error?.code]).toEqual([query, 400, "VALIDATION_FAILED"]);
      expect(Object.keys(r.body.error.details)).toContain(field);
    }
  });

  test("a parameter named like an Object.prototype member is refused as unknown, in the envelope", async () => {
    const raw = await app.http.handle(new Request("http://localhost/v1/verifications?__proto__=1&limit=5", { headers: { authorization: `Bearer ${liveKey}` } }), "198.51.100.7");
    expect(raw.status).toBe(400);
    const text = await raw.text();
    expect(JSON.parse(text)).toEqual({
      error: { code: "VALIDATION_FAILED", message: "Invalid query parameters: __proto__.", details: { ["__proto__"]: "is not a parameter of this operation" } },
    });
    expect(text).toContain('"__proto__":"is not a parameter of this operation"');
  });

  test("a cursor is refused with other filters", async () => {
    for (let i = 0; i < 3; i++) await verify({ originalDocHash: signedHash }, liveKey);
    const first = await get("/v1/verifications?limit=2", liveKey);
    expect(first.body.pagination.hasMore).toBe(true);
    const cursor = encodeURIComponent(first.body.pagination.nextCursor);
    expect((await get(`/v1/verifications?limit=2&after=${cursor}`, liveKey)).status).toBe(200);
    const refused = await get(`/v1/verifications?limit=2&verdict=verified&after=${cursor}`, liveKey);
    expect([refused.status, Object.keys(refused.body.error.details)]).toEqual([400, ["after"]]);
    // nor can another organisation use it
    const foreign = await get(`/v1/verifications?limit=2&after=${cursor}`, otherOrgKey);
    expect(foreign.status).toBe(400);
  });
});
