/**
 * Real 429s: a live serve whose per-key limit is low (DOCVERIFY_RATE_LIMIT_KEY, requests per
 * minute, docs/access.md "Rate limits"), and a burst of record creations larger than the bucket.
 * Every call succeeds: the client waits Retry-After on each 429 and tries again.
 */
import { afterAll, expect, test } from "bun:test";
import { createClient, type ResponseInfo, type RetryInfo } from "../../packages/client/src/index.ts";
import { cleanup } from "../support/env.ts";
import { startServiceWithOrg } from "../support/service-with-org.ts";

afterAll(cleanup);

test(
  "a burst past the key's rate limit all succeeds through retries that wait Retry-After",
  async () => {
    // 60 a minute: a bucket of 60 refilled one token a second, so each 429 says Retry-After: 1.
    const { svc, key } = await startServiceWithOrg({ env: { DOCVERIFY_RATE_LIMIT_KEY: "60" } });
    const responses: ResponseInfo[] = [];
    const retries: RetryInfo[] = [];
    // Callers sharing one bucket come back together and one token returns a second: the last of
    // them needs as many rounds as there are callers past the limit, hence attempts above 6.
    const client = createClient({ url: svc.url, apiKey: key, onResponse: (r) => responses.push(r), retry: { attempts: 20, onRetry: (r) => retries.push(r) } });
    const hash = (i: number) => "sha256:" + i.toString(16).padStart(64, "0");

    // One creation first: it waits out the organisation's topic (503s) and tells the bucket's state.
    await client.createRecord({ originalDocHash: hash(0) });
    const remaining = responses.at(-1)!.rateLimitRemaining!;
    expect(responses.at(-1)!.rateLimitLimit).toBe(60);

    const burst = remaining + 3;
    const t0 = performance.now();
    const results = await Promise.all(Array.from({ length: burst }, (_, i) => client.createRecord({ originalDocHash: hash(i + 1) })));
    expect(results.map((r) => r.created)).toEqual(Array(burst).fill(true));
    expect(new Set(results.map((r) => r.record.recordId)).size).toBe(burst);

    const limited = responses.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThanOrEqual(3);
    for (const r of limited) {
      expect(r.retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect(r.rateLimitRemaining).toBe(0);
    }
    const waits = retries.filter((r) => r.status === 429);
    expect(waits.length).toBe(limited.length);
    for (const r of waits) expect(r).toMatchObject({ code: "RATE_LIMITED", delayMs: 1000 });
    // Three tokens past the bucket come back one a second: the burst cannot end sooner.
    expect(performance.now() - t0).toBeGreaterThanOrEqual(2_000);
  },
  120_000,
);
