/**
 * A suspended organisation (docs/access.md "Order of refusals"): POST /v1/records answers 403
 * ORGANISATION_SUSPENDED, placed after the key's own refusals and before the body's; its keys keep
 * verifying, listing and revoking. The suspension is made by another connection to the data
 * folder (as `docverify org set ORG --suspended on` does from its own process) and applies to the
 * next request. Table-driven, in the access matrix's style.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { AdminCore } from "../../src/app/core.ts";
import { giveTopicsOn } from "../support/access-matrix.ts";
import { testCore, testService, type TestService } from "../support/engine.ts";
import { cleanup } from "../support/env.ts";
import { createStoreRecordsFixture, docHashOf } from "../support/records-fixture.ts";
import { engineHarness, HASH } from "../records/fixtures.ts";

afterAll(cleanup);

const LIMITS = { DOCVERIFY_RATE_LIMIT_ANONYMOUS: "100000", DOCVERIFY_RATE_LIMIT_KEY: "100000", DOCVERIFY_RATE_LIMIT_ORG: "100000" };

type Json = Record<string, any>;

// `serve`'s app on the engine DOCVERIFY_TEST_ENGINE selects (test/support/engine.ts).
let app: TestService;
let request: (path: string, init?: RequestInit) => Promise<Response>;
let admin: AdminCore;
let orgId: string;
const keys: Record<"full" | "test" | "scopeless" | "noAddon" | "noApi", string> = { full: "", test: "", scopeless: "", noAddon: "", noApi: "" };
const held = docHashOf("a document the suspended organisation already authenticated");
const toRevoke = docHashOf("a document the suspended organisation revokes");
const fresh = docHashOf("a document never authenticated");
let heldId: string;
let toRevokeId: string;

const count = (table: string) => app.count(table);

async function send(method: "GET" | "POST", path: string, key: string | null, body?: unknown, extra: Record<string, string> = {}) {
  const headers: Record<string, string> = { ...extra };
  if (key !== null) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await request(path, { method, headers, body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body) });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Json };
}

beforeAll(async () => {
  app = await testService({ env: LIMITS });
  request = app.request;
  // Another connection to the same database: what the administration command line opens.
  admin = await testCore({ sameDatabaseAs: app.config });
  const fx = await createStoreRecordsFixture({ store: app.store, signer: app.signer });

  // A key minted before the add-on was granted carries verifications:read only: scopes are fixed at
  // minting.
  const org = await fx.createOrg("Suspended Ltd", { apiAccess: true, addon: false, validated: true });
  orgId = org.id;
  keys.scopeless = (await admin.apiKeys.mint({ orgId, environment: "live" }, "test")).key;
  await admin.organisations.set(orgId, { addon: true }, "test");
  keys.full = (await admin.apiKeys.mint({ orgId, environment: "live", revoke: true }, "test")).key;
  keys.test = (await admin.apiKeys.mint({ orgId, environment: "test" }, "test")).key;
  const noAddon = await admin.organisations.create({ name: "Suspended, no add-on", apiAccess: true, addon: false, validated: true, suspended: true }, "test");
  keys.noAddon = (await admin.apiKeys.mint({ orgId: noAddon.id, environment: "live" }, "test")).key;
  const noApi = await admin.organisations.create({ name: "Suspended, no API", apiAccess: false, addon: true, validated: true, suspended: true }, "test");
  keys.noApi = (await admin.apiKeys.mint({ orgId: noApi.id, environment: "live", revoke: true }, "test")).key;
  await giveTopicsOn(admin.store);
  heldId = await fx.addOrgRecord(org, { docHash: held });
  toRevokeId = await fx.addOrgRecord(org, { docHash: toRevoke });
}, 30_000);

describe("POST /v1/records while the organisation is suspended", () => {
  test("before the suspension the same key creates records (201), and a repeat answers 200", async () => {
    expect((await send("POST", "/v1/records", keys.full, { originalDocHash: HASH("before") })).status).toBe(201);
    expect((await send("POST", "/v1/records", keys.full, { originalDocHash: held })).status).toBe(200);
  });

  test("refusal order: the key's own refusals first, then ORGANISATION_SUSPENDED, then the body's; nothing is written", async () => {
    await admin.organisations.set(orgId, { suspended: true }, "ops");
    const records = await count("records");
    // Record messages only: the anchor loop queues key announcements of its own meanwhile (on
    // PostgreSQL once this node leads, which may be during this test).
    const queued = await count("ledger_transactions WHERE kind = 'record_message'");
    const cases: { name: string; key: string | null; body: unknown; headers?: Record<string, string>; status: number; code: string }[] = [
      { name: "a new hash", key: keys.full, body: { originalDocHash: fresh }, status: 403, code: "ORGANISATION_SUSPENDED" },
      { name: "a hash it holds an active record for (no 200)", key: keys.full, body: { originalDocHash: held }, status: 403, code: "ORGANISATION_SUSPENDED" },
      { name: "a malformed body (suspension before 400)", key: keys.full, body: { originalDocHash: "SHA256:nope", filename: 7 }, status: 403, code: "ORGANISATION_SUSPENDED" },
      { name: "a body that is not JSON", key: keys.full, body: "{", status: 403, code: "ORGANISATION_SUSPENDED" },
      { name: "a body over 8 KiB (suspension before 413)", key: keys.full, body: { originalDocHash: fresh, filename: "x".repeat(9000) }, status: 403, code: "ORGANISATION_SUSPENDED" },
      { name: "no credential", key: null, body: { originalDocHash: fresh }, status: 401, code: "UNAUTHENTICATED" },
      { name: "an Origin header", key: keys.full, body: { originalDocHash: fresh }, headers: { origin: "https://example.com" }, status: 403, code: "FORBIDDEN" },
      { name: "API access off", key: keys.noApi, body: { originalDocHash: fresh }, status: 402, code: "PAYMENT_REQUIRED" },
      { name: "a test key", key: keys.test, body: { originalDocHash: fresh }, status: 403, code: "TEST_ENVIRONMENT" },
      { name: "no add-on", key: keys.noAddon, body: { originalDocHash: fresh }, status: 402, code: "ADDON_REQUIRED" },
      { name: "a key without records:write", key: keys.scopeless, body: { originalDocHash: fresh }, status: 403, code: "SCOPE_REQUIRED" },
    ];
    const problems: string[] = [];
    for (const c of cases) {
      const r = await send("POST", "/v1/records", c.key, c.body, c.headers);
      if (r.status !== c.status || r.body.error?.code !== c.code) problems.push(`${c.name}: got ${r.status} ${r.body.error?.code}, want ${c.status} ${c.code}`);
      if (r.headers.get("x-request-id") === null) problems.push(`${c.name}: no X-Request-Id`);
    }
    expect(problems).toEqual([]);
    expect(await count("records")).toBe(records);
    expect(await count("ledger_transactions WHERE kind = 'record_message'")).toBe(queued);

    const r = await send("POST", "/v1/records", keys.full, { originalDocHash: fresh });
    expect(r.body).toEqual({ error: { code: "ORGANISATION_SUSPENDED", message: expect.stringContaining("suspended") } });
    expect(r.headers.get("x-ratelimit-remaining")).not.toBeNull();
  });

  test("its keys keep verifying, listing and revoking; standing reads suspended", async () => {
    const verified = await send("POST", "/v1/verifications", keys.full, { originalDocHash: held });
    expect(verified.status).toBe(200);
    expect(verified.body.verdict).toBe("verified_org");
    expect(verified.body.matches[0].recordId).toBe(heldId);
    expect(verified.body.matches[0].signerStanding).toBe("suspended");
    expect((await send("GET", "/v1/verifications", keys.scopeless)).status).toBe(200);

    const revoked = await send("POST", `/v1/records/${toRevokeId}/revoke`, keys.full, { reason: "KEY_COMPROMISE" });
    expect([revoked.status, revoked.body]).toEqual([200, { recordId: toRevokeId }]);
    const after = await send("POST", "/v1/verifications", null, { originalDocHash: toRevoke });
    expect(after.body.verdict).toBe("revoked");
  });

  test("lifting the suspension lets the next request create again", async () => {
    await admin.organisations.set(orgId, { suspended: false }, "ops");
    expect((await send("POST", "/v1/records", keys.full, { originalDocHash: fresh })).status).toBe(201);
  });
});

describe("records service", () => {
  test("create checks the flag again under the write lock: a suspension committed meanwhile wins", async () => {
    const h = await engineHarness();
    const org = await h.org("Racing Ltd");
    // create() signs synchronously, then queues its transaction for the next turn of the loop.
    const pending = h.records.create(org, { docHash: HASH("race"), filename: undefined });
    await h.core.organisations.set(org, { suspended: true }, "ops");
    await expect(pending).rejects.toMatchObject({ code: "ORGANISATION_SUSPENDED" });
    expect(await h.count("records")).toBe(0);
    expect(await h.count("ledger_transactions")).toBe(0);
    // and a direct call is refused before anything is signed
    await expect(h.records.create(org, { docHash: HASH("race"), filename: undefined })).rejects.toMatchObject({ code: "ORGANISATION_SUSPENDED" });
  });

  test("revocation is not affected", async () => {
    const h = await engineHarness();
    const org = await h.org("Revoking Ltd");
    const { recordId } = (await (await h.create(org, { originalDocHash: HASH("kept") })).json()) as { recordId: string };
    await h.markAnchored(recordId);
    await h.core.organisations.set(org, { suspended: true }, "ops");
    expect((await h.create(org, { originalDocHash: HASH("new") })).status).toBe(403);
    expect((await h.revoke(org, recordId)).status).toBe(200);
  });
});
