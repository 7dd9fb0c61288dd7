/**
 * The client's retry rules at the wire, against a scripted loopback stand-in (fake-service.ts):
 * what is retried and after how long (measured between the requests' arrivals), what is not,
 * the attempts cap, aborting a wait, and the service being unreachable.
 */
import { afterAll, expect, test } from "bun:test";
import { DocverifyConnectionError, DocverifyError, DocverifyTimeoutError, createClient, type ResponseInfo, type RetryInfo } from "../../packages/client/src/index.ts";
import { backoffMs, retryPolicy } from "../../packages/client/src/retry.ts";
import { cleanup } from "../support/env.ts";
import { HASH, RECORD, envelope, fakeService, verification } from "./fake-service.ts";

afterAll(cleanup);

const KEY = "dv_live_fakekeyid_" + "s".repeat(40);
const fast = { baseDelayMs: 20, maxDelayMs: 40 };

test("429 waits Retry-After, then the 201 is a created record; onResponse and onRetry see the rate-limit headers", async () => {
  const fake = fakeService((n) =>
    n === 1
      ? envelope(429, "RATE_LIMITED", { "retry-after": "1", "x-ratelimit-limit": "60", "x-ratelimit-remaining": "0" })
      : Response.json(RECORD, { status: 201, headers: { "x-ratelimit-limit": "60", "x-ratelimit-remaining": "0" } }),
  );
  const responses: ResponseInfo[] = [];
  const retries: RetryInfo[] = [];
  const client = createClient({ url: fake.url, apiKey: KEY, onResponse: (r) => responses.push(r), retry: { onRetry: (r) => retries.push(r) } });
  const { record, created } = await client.createRecord({ originalDocHash: HASH });
  expect(created).toBe(true);
  expect(record.recordId).toBe(RECORD.recordId);
  expect(fake.seen.length).toBe(2);
  expect(fake.seen[1]!.at - fake.seen[0]!.at).toBeGreaterThanOrEqual(995);
  expect(fake.seen.map((s) => s.authorization)).toEqual([`Bearer ${KEY}`, `Bearer ${KEY}`]);
  expect(retries).toEqual([{ attempt: 1, delayMs: 1000, status: 429, code: "RATE_LIMITED" }]);
  expect(responses).toEqual([
    { method: "POST", path: "/v1/records", status: 429, requestId: "req-429", rateLimitLimit: 60, rateLimitRemaining: 0, retryAfterSeconds: 1 },
    { method: "POST", path: "/v1/records", status: 201, rateLimitLimit: 60, rateLimitRemaining: 0 },
  ]);
});

test("503 with Retry-After waits it; 503 without backs off; then the 200", async () => {
  const fake = fakeService((n) => (n === 1 ? envelope(503, "SERVICE_UNAVAILABLE", { "retry-after": "1" }) : n === 2 ? envelope(503, "SERVICE_UNAVAILABLE") : verification("verified_org")));
  const retries: RetryInfo[] = [];
  const client = createClient({ url: fake.url, retry: { ...fast, onRetry: (r) => retries.push(r) } });
  expect((await client.verify(HASH)).verdict).toBe("verified_org");
  expect(fake.seen.length).toBe(3);
  expect(fake.seen[1]!.at - fake.seen[0]!.at).toBeGreaterThanOrEqual(995);
  expect(retries[0]).toEqual({ attempt: 1, delayMs: 1000, status: 503, code: "SERVICE_UNAVAILABLE" });
  expect(retries[1]).toMatchObject({ attempt: 2, status: 503 });
  expect(retries[1]!.delayMs).toBeLessThan(40);
  // Anonymous: no Authorization at all.
  expect(fake.seen.map((s) => s.authorization)).toEqual([null, null, null]);
});

test("500 backs off until the attempts cap, then rejects with the last answer", async () => {
  const fake = fakeService(() => envelope(500, "INTERNAL_ERROR"));
  const retries: RetryInfo[] = [];
  const client = createClient({ url: fake.url, apiKey: KEY, retry: { attempts: 4, ...fast, onRetry: (r) => retries.push(r) } });
  const error = (await client.listVerifications().catch((e: unknown) => e)) as DocverifyError;
  expect(error).toBeInstanceOf(DocverifyError);
  expect(error).toMatchObject({ status: 500, code: "INTERNAL_ERROR", requestId: "req-500" });
  expect(fake.seen.length).toBe(4);
  expect(retries.map((r) => r.attempt)).toEqual([1, 2, 3]);
  for (const r of retries) expect(r.delayMs).toBeLessThan(40);
  expect(error.message).not.toContain(KEY);
});

test("a 400 is not retried; its details are kept; retry: false stops even a 503", async () => {
  const fake = fakeService(() => envelope(400, "VALIDATION_FAILED", {}, { originalDocHash: "must be sha256: and 64 lowercase hex digits" }));
  const client = createClient({ url: fake.url, apiKey: KEY });
  const error = (await client.createRecord({ originalDocHash: "nope" }).catch((e: unknown) => e)) as DocverifyError;
  expect(error).toMatchObject({ status: 400, code: "VALIDATION_FAILED", details: { originalDocHash: "must be sha256: and 64 lowercase hex digits" } });
  expect(fake.seen.length).toBe(1);

  const busy = fakeService(() => envelope(503, "SERVICE_UNAVAILABLE", { "retry-after": "1" }));
  const once = createClient({ url: busy.url, retry: false });
  expect(await once.verify(HASH).catch((e: DocverifyError) => [e.code, e.retryAfterSeconds])).toEqual(["SERVICE_UNAVAILABLE", 1]);
  expect(busy.seen.length).toBe(1);
});

test("a code from a newer service is kept as it came; an answer without the envelope is typed by its status; a success that is not JSON says so", async () => {
  const fake = fakeService((n) =>
    n === 1 ? envelope(409, "RECORD_FROZEN") : n === 2 ? new Response("<html>bad gateway</html>", { status: 502 }) : new Response("<html>captive portal</html>", { status: 200 }),
  );
  const client = createClient({ url: fake.url, apiKey: KEY, retry: fast });
  expect(await client.revokeRecord(RECORD.recordId, "SUPERSEDED").catch((e: DocverifyError) => [e.status, e.code])).toEqual([409, "RECORD_FROZEN"]);
  expect(await client.identity().catch((e: DocverifyError) => [e.status, e.code])).toEqual([502, "HTTP_502"]);
  expect(await client.identity().catch((e: Error) => e.message)).toBe('GET /.well-known/docverify.json: 200 with a body that is not JSON ("<html>captive portal</html>")');
  expect(fake.seen.length).toBe(3);
});

test("the public receipt is fetched without the key; text is the body exactly as served", async () => {
  const body = '{"v":1,"recordId":"r"}\n';
  const fake = fakeService(() => new Response(body, { headers: { "content-type": "application/vnd.docverify.receipt+json" } }));
  const client = createClient({ url: fake.url, apiKey: KEY });
  const got = await client.receipt("r/1", { public: true });
  expect(got.text).toBe(body);
  expect(got.receipt).toMatchObject({ v: 1, recordId: "r" });
  await client.receipt("r");
  expect(fake.seen.map((s) => [s.path, s.authorization])).toEqual([
    ["/verify/r%2F1/receipt", null],
    ["/v1/records/r/receipt", `Bearer ${KEY}`],
  ]);
});

test("aborting ends a Retry-After wait at once", async () => {
  const fake = fakeService(() => envelope(429, "RATE_LIMITED", { "retry-after": "30" }));
  const controller = new AbortController();
  const client = createClient({ url: fake.url, apiKey: KEY, retry: { signal: controller.signal, onRetry: () => controller.abort(new Error("stopped by the caller")) } });
  const t0 = performance.now();
  const error = (await client.verify(HASH).catch((e: unknown) => e)) as Error;
  expect(error.message).toBe("stopped by the caller");
  expect(performance.now() - t0).toBeLessThan(5_000);
  expect(fake.seen.length).toBe(1);
});

test("connection refused: retried with back-off, then DocverifyConnectionError", async () => {
  const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const url = `http://127.0.0.1:${closed.port}`;
  closed.stop(true);
  const retries: RetryInfo[] = [];
  const client = createClient({ url, apiKey: KEY, retry: { attempts: 3, ...fast, onRetry: (r) => retries.push(r) } });
  const error = (await client.verify(HASH).catch((e: unknown) => e)) as DocverifyConnectionError;
  expect(error).toBeInstanceOf(DocverifyConnectionError);
  expect(error.url).toBe(url);
  expect(error.cause).toBeDefined();
  expect(error.message).toContain(url);
  expect(error.message).not.toContain(KEY);
  expect(retries.map((r) => [r.attempt, r.code])).toEqual([
    [1, "NETWORK"],
    [2, "NETWORK"],
  ]);
});

test("an attempt without an answer within timeoutMs is retried as a network error", async () => {
  let release = () => {};
  const hung = new Promise<void>((resolve) => (release = resolve));
  const fake = fakeService(async (n) => {
    if (n === 1) await hung; // answers only once the test is over: the client must not wait for it
    return verification("verified");
  });
  const retries: RetryInfo[] = [];
  const client = createClient({ url: fake.url, timeoutMs: 300, retry: { ...fast, onRetry: (r) => retries.push(r) } });
  expect((await client.verify(HASH)).verdict).toBe("verified");
  release();
  expect(retries.map((r) => r.code)).toEqual(["NETWORK"]);
  expect(fake.seen.length).toBe(2);
  expect(fake.seen[1]!.at - fake.seen[0]!.at).toBeGreaterThanOrEqual(295);
});

test("waitForVerdict honours retryAfterSeconds, stops on a verdict that can never become the one waited for, and times out clearly", async () => {
  const fake = fakeService((n) => (n < 3 ? verification("pending_anchor", 1) : verification("revoked")));
  const client = createClient({ url: fake.url, apiKey: KEY });
  expect((await client.waitForVerdict(HASH)).verdict).toBe("revoked");
  expect(fake.seen.length).toBe(3);
  expect(fake.seen[2]!.at - fake.seen[1]!.at).toBeGreaterThanOrEqual(995);

  const never = fakeService(() => verification("no_record"));
  const error = (await createClient({ url: never.url }).waitForVerdict(HASH, { until: ["verified"], timeoutMs: 1_500 }).catch((e: unknown) => e)) as DocverifyTimeoutError;
  expect(error).toBeInstanceOf(DocverifyTimeoutError);
  expect(error).toMatchObject({ lastVerdict: "no_record", timeoutMs: 1_500, originalDocHash: HASH });
  expect(error.message).toContain("[verified]");
  // Polls at 0 and 1 s; the deadline falls in the next wait.
  expect(never.seen.length).toBe(2);
});

test("waitForVerdict's deadline also ends a retry wait inside it; the caller's abort is the caller's error", async () => {
  const busy = fakeService(() => envelope(503, "SERVICE_UNAVAILABLE", { "retry-after": "30" }));
  const client = createClient({ url: busy.url });
  const t0 = performance.now();
  const error = (await client.waitForVerdict(HASH, { timeoutMs: 300 }).catch((e: unknown) => e)) as DocverifyTimeoutError;
  expect(error).toBeInstanceOf(DocverifyTimeoutError);
  expect(error.lastVerdict).toBeUndefined();
  expect(performance.now() - t0).toBeLessThan(5_000);

  const controller = new AbortController();
  const aborted = client.waitForVerdict(HASH, { signal: controller.signal }).catch((e: unknown) => e);
  controller.abort(new Error("no longer needed"));
  expect(((await aborted) as Error).message).toBe("no longer needed");
});

test("back-off: full jitter under an exponential ceiling, capped", () => {
  const policy = retryPolicy({ baseDelayMs: 500, maxDelayMs: 3_000 });
  expect([1, 2, 3, 4, 5].map((n) => backoffMs(n, policy, () => 0.999999))).toEqual([499, 999, 1999, 2999, 2999]);
  expect(backoffMs(3, policy, () => 0)).toBe(0);
  expect(retryPolicy(undefined)).toMatchObject({ attempts: 6, baseDelayMs: 500, maxDelayMs: 30_000 });
  expect(retryPolicy(false).attempts).toBe(1);
});
