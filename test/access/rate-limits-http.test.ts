/**
 * Rate limits as a caller sees them (docs/access.md "Rate limits"): headers on every /v1 response,
 * 429 with Retry-After, what spends budget and what does not, per IP / key / organisation,
 * unvalidated organisations at the anonymous limit, X-Forwarded-For only from trusted proxies.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { manualClock } from "../../src/lib/clock.ts";
import { passTime, testService } from "../support/engine.ts";
import { cleanup } from "../support/env.ts";

afterAll(cleanup);

const HASH = "sha256:" + "ef".repeat(32);

/** `serve`'s app on the engine DOCVERIFY_TEST_ENGINE selects: on PostgreSQL, one node's shared buckets. */
async function setup(env: Record<string, string> = {}) {
  const clock = manualClock(Date.UTC(2026, 10, 22, 12));
  const service = await testService({ env: { DOCVERIFY_RATE_LIMIT_ANONYMOUS: "5", DOCVERIFY_RATE_LIMIT_KEY: "8", DOCVERIFY_RATE_LIMIT_ORG: "12", ...env }, clock });
  const { app } = service;
  /** Time passes for the buckets, whichever clock refills them. */
  const elapse = (ms: number) => passTime(service, clock, ms);
  const send = (path: string, init: RequestInit & { peer?: string } = {}) => app.http.handle(new Request(`http://localhost${path}`, init), init.peer ?? "198.51.100.7");
  const verify = (headers: Record<string, string> = {}, peer?: string) =>
    send("/v1/verifications", { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ originalDocHash: HASH }), peer });
  const list = (key: string, peer?: string) => send("/v1/verifications", { headers: { authorization: `Bearer ${key}` }, peer });
  const org = async (validated: boolean) => await service.organisations.create({ name: validated ? "Validated" : "Unvalidated", apiAccess: true, validated }, "test");
  const key = async (orgId: string) => (await service.apiKeys.mint({ orgId, environment: "live" }, "test")).key;
  return { app: service, elapse, send, verify, list, org, key };
}

const limits = (r: Response) => [Number(r.headers.get("x-ratelimit-limit")), Number(r.headers.get("x-ratelimit-remaining"))];

describe("rate limits", () => {
  test("anonymous callers: per client IP, headers on every response, then 429 with Retry-After", async () => {
    const { verify, elapse } = await setup();
    for (let remaining = 4; remaining >= 0; remaining--) {
      const r = await verify();
      expect(r.status).toBe(200);
      expect(limits(r)).toEqual([5, remaining]);
    }
    const refused = await verify();
    expect(refused.status).toBe(429);
    expect(limits(refused)).toEqual([5, 0]);
    expect(refused.headers.get("retry-after")).toBe("12"); // one token every 60/5 s
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("RATE_LIMITED");
    // another client IP has its own budget
    expect((await verify({}, "203.0.113.50")).status).toBe(200);
    // and the budget comes back with time
    await elapse(12_000);
    expect((await verify()).status).toBe(200);
  });

  test("a 429 spends nothing: after waiting Retry-After, the next request passes", async () => {
    const { verify, elapse } = await setup();
    for (let i = 0; i < 5; i++) await verify();
    for (let i = 0; i < 20; i++) expect((await verify()).status).toBe(429);
    await elapse(12_000);
    const r = await verify();
    expect(r.status).toBe(200);
    expect(limits(r)).toEqual([5, 0]);
  });

  test("failed authentication spends the client IP's budget, so guessing keys is throttled", async () => {
    const { list, verify, org, key } = await setup();
    const good = await key((await org(true)).id);
    const bad = good.slice(0, 20) + (good[20] === "a" ? "b" : "a") + good.slice(21);
    for (let remaining = 4; remaining >= 0; remaining--) {
      const r = await list(bad);
      expect(r.status).toBe(401);
      expect(limits(r)).toEqual([5, remaining]);
    }
    const throttled = await list(bad);
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get("retry-after")).not.toBeNull();
    // anonymous verification from that IP is throttled too (same budget) ...
    expect((await verify()).status).toBe(429);
    // ... but a working key is limited by its own budgets, not the IP's
    expect((await list(good)).status).toBe(200);
  });

  test("a validated organisation's key: per key and per organisation, the tightest reported", async () => {
    const { list, org, key } = await setup();
    const o = (await org(true)).id;
    const [a, b] = [await key(o), await key(o)];
    let r = await list(a);
    expect(r.status).toBe(200);
    expect(limits(r)).toEqual([8, 7]); // key 7 of 8 left, org 11 of 12
    for (let i = 0; i < 7; i++) r = await list(a);
    expect(limits(r)).toEqual([8, 0]);
    expect((await list(a)).status).toBe(429);
    // the second key still has its own budget until the organisation's runs out
    for (let i = 0; i < 4; i++) {
      r = await list(b);
      expect(r.status).toBe(200);
    }
    expect(limits(r)).toEqual([12, 0]);
    const orgSpent = await list(b);
    expect(orgSpent.status).toBe(429);
    expect(limits(orgSpent)).toEqual([12, 0]);
  });

  test("keys of an unvalidated organisation are served at the anonymous limit, per key", async () => {
    const { app, list, org, key } = await setup();
    const o = (await org(false)).id;
    const k = await key(o);
    const r = await list(k);
    expect(limits(r)).toEqual([5, 4]);
    for (let i = 0; i < 4; i++) await list(k);
    expect((await list(k)).status).toBe(429);
    // validating the organisation lifts the key to the credentialed limits at once
    await app.organisations.set(o, { validated: true }, "test");
    const lifted = await list(k);
    expect(lifted.status).toBe(200);
    expect(limits(lifted)).toEqual([8, 7]);
  });

  test("refusals after authentication still carry the headers (402)", async () => {
    const { app, list, key } = await setup();
    const o = (await app.organisations.create({ name: "Off", apiAccess: false, validated: true }, "test")).id;
    const r = await list(await key(o));
    expect(r.status).toBe(402);
    expect(limits(r)).toEqual([8, 7]);
  });

  test("an Origin refusal reports the IP budget without spending it", async () => {
    const { verify } = await setup();
    const r = await verify({ origin: "https://example.com" });
    expect(r.status).toBe(403);
    expect(limits(r)).toEqual([5, 5]);
    expect(limits(await verify())).toEqual([5, 4]);
  });

  test("X-Forwarded-For is believed only from a trusted proxy", async () => {
    const { verify } = await setup({ DOCVERIFY_TRUSTED_PROXIES: "10.0.0.0/8" });
    // through the proxy, each client has its own budget
    for (let i = 0; i < 5; i++) expect((await verify({ "x-forwarded-for": "203.0.113.1" }, "10.0.0.2")).status).toBe(200);
    expect((await verify({ "x-forwarded-for": "203.0.113.1" }, "10.0.0.2")).status).toBe(429);
    expect((await verify({ "x-forwarded-for": "203.0.113.2" }, "10.0.0.2")).status).toBe(200);
    // a direct caller cannot escape its budget by claiming other addresses
    for (let i = 0; i < 5; i++) expect((await verify({ "x-forwarded-for": `192.0.2.${i}` }, "198.51.100.99")).status).toBe(200);
    expect((await verify({ "x-forwarded-for": "192.0.2.200" }, "198.51.100.99")).status).toBe(429);
  });

  test("probes and documentation are outside /v1 and never rate limited", async () => {
    const { send } = await setup();
    for (let i = 0; i < 20; i++) {
      const r = await send("/healthz");
      expect(r.status).toBe(200);
      expect(r.headers.get("x-ratelimit-limit")).toBeNull();
    }
  });
});
