/**
 * The rate limiter's token buckets (src/keys/rate-limit.ts) on a manual clock: refill, Retry-After,
 * several buckets per request, bounded memory. Rate limits as a caller meets them over HTTP are in
 * rate-limits-http.test.ts; which bucket a client falls in, in client-ip.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { manualClock } from "../../src/lib/clock.ts";
import { createRateLimiter } from "../../src/keys/rate-limit.ts";

describe("rate limiter (token buckets)", () => {
  test("a full bucket allows `limit` requests a minute, then refuses with the wait until the next token", () => {
    const clock = manualClock();
    const rl = createRateLimiter({ clock });
    const ip = [{ bucket: "ip:a", perMinute: 60 }];
    for (let i = 59; i >= 0; i--) expect(rl.take(ip)).toEqual({ allowed: true, limit: 60, remaining: i });
    expect(rl.take(ip)).toEqual({ allowed: false, limit: 60, remaining: 0, retryAfterSeconds: 1, bucket: "ip:a" });
    clock.advance(999);
    expect(rl.take(ip).allowed).toBe(false);
    clock.advance(1);
    expect(rl.take(ip)).toEqual({ allowed: true, limit: 60, remaining: 0 });
    // a whole minute refills everything, never beyond the limit
    clock.advance(10 * 60_000);
    expect(rl.take(ip)).toEqual({ allowed: true, limit: 60, remaining: 59 });
  });

  test("Retry-After is whole seconds, rounded up, at least 1", () => {
    const clock = manualClock();
    const rl = createRateLimiter({ clock });
    const slow = [{ bucket: "k", perMinute: 7 }];
    for (let i = 0; i < 7; i++) rl.take(slow);
    const refused = rl.take(slow);
    expect(refused).toMatchObject({ allowed: false, retryAfterSeconds: 9 }); // 60/7 = 8.57 s
  });

  test("a refused request spends nothing, in any bucket", () => {
    const clock = manualClock();
    const rl = createRateLimiter({ clock });
    const key = { bucket: "key:k", perMinute: 10 };
    const org = { bucket: "org:o", perMinute: 2 };
    expect(rl.take([key, org])).toEqual({ allowed: true, limit: 2, remaining: 1 });
    expect(rl.take([key, org])).toEqual({ allowed: true, limit: 2, remaining: 0 });
    for (let i = 0; i < 5; i++) expect(rl.take([key, org])).toMatchObject({ allowed: false, bucket: "org:o" });
    // the key bucket was not drained by the refusals: 8 left of 10
    expect(rl.peek([key])).toEqual({ allowed: true, limit: 10, remaining: 8 });
  });

  test("the tightest limit is reported: least remaining, ties to the smaller limit", () => {
    const clock = manualClock();
    const rl = createRateLimiter({ clock });
    const key = { bucket: "key:k", perMinute: 600 };
    const org = { bucket: "org:o", perMinute: 1200 };
    expect(rl.take([key, org])).toEqual({ allowed: true, limit: 600, remaining: 599 });
    // another key of the same organisation spends the org bucket down
    for (let i = 0; i < 1100; i++) rl.take([{ bucket: "key:other", perMinute: 100_000 }, org]);
    expect(rl.take([key, org])).toEqual({ allowed: true, limit: 1200, remaining: 98 });
  });

  test("peek reports without spending", () => {
    const rl = createRateLimiter({ clock: manualClock() });
    const ip = [{ bucket: "ip:a", perMinute: 3 }];
    expect(rl.peek(ip)).toEqual({ allowed: true, limit: 3, remaining: 3 });
    expect(rl.peek(ip)).toEqual({ allowed: true, limit: 3, remaining: 3 });
    expect(rl.size).toBe(0);
  });

  test("a changed limit (an organisation validated) starts a full bucket at the new limit", () => {
    const rl = createRateLimiter({ clock: manualClock() });
    for (let i = 0; i < 60; i++) rl.take([{ bucket: "key:k", perMinute: 60 }]);
    expect(rl.take([{ bucket: "key:k", perMinute: 60 }]).allowed).toBe(false);
    expect(rl.take([{ bucket: "key:k", perMinute: 600 }])).toEqual({ allowed: true, limit: 600, remaining: 599 });
  });

  test("memory stays bounded: full buckets are swept, and the cap evicts the fullest first", () => {
    const clock = manualClock();
    const rl = createRateLimiter({ clock, maxBuckets: 100 });
    for (let i = 0; i < 500; i++) rl.take([{ bucket: `ip:${i}`, perMinute: 60 }]);
    expect(rl.size).toBeLessThanOrEqual(101);
    clock.advance(60_000);
    rl.sweep();
    expect(rl.size).toBe(0);
  });
});
