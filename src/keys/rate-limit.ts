/**
 * Rate limits (docs/access.md, "Rate limits"): token buckets, one per client IP, per key and per
 * organisation, each refilled continuously at `limit` tokens a minute up to `limit`.
 *
 * Why buckets and not fixed windows: a fixed one-minute window lets a caller spend twice its
 * limit across a window edge, and makes every caller's budget reset at the same instant. A
 * bucket answers "how long until one more request is allowed" exactly, which is what
 * `Retry-After` must say.
 *
 * Guarantees:
 * - `take` spends one token from every bucket it is given, or from none: a request refused
 *   with 429 spends nothing, and a request that passes one limit but not
 *   another does not drain the first.
 * - The answer reports the bucket with the least remaining (`X-RateLimit-*` report "the
 *   tightest applicable limit"); on refusal, `retryAfterSeconds` is the whole seconds until
 *   every bucket has a token again (at least 1).
 * - Memory is bounded, in buckets and in bytes: buckets that have refilled completely carry no
 *   information and are dropped by `sweep()`, which `take` runs every `SWEEP_EVERY` calls, and
 *   the service runs when it goes quiet (lib/idle-release.ts), so a client's bucket is gone at
 *   most a minute after its last request once anything sweeps; past `maxBuckets` or `maxBytes`,
 *   the fullest buckets go first.
 * - In-process only: limits are per running service, which is what one appliance needs.
 */
import type { Clock } from "../lib/clock.ts";

export interface Limit {
  /** Bucket identity, e.g. `ip:203.0.113.9`, `key:<keyId>`, `org:<orgId>`. */
  readonly bucket: string;
  /** Requests a minute. */
  readonly perMinute: number;
}

export type RateDecision =
  | { readonly allowed: true; readonly limit: number; readonly remaining: number }
  | {
      readonly allowed: false;
      readonly limit: number;
      readonly remaining: number;
      readonly retryAfterSeconds: number;
      /** The empty bucket that refills last (the one `Retry-After` waits for), e.g. `org:<id>`. */
      readonly bucket: string;
    };

interface Bucket {
  tokens: number;
  at: number;
  perMinute: number;
}

const MINUTE = 60_000;
const SWEEP_EVERY = 4096;

/**
 * The buckets' byte budget: a bucket is its name (`ip:` and an address, `key:` or `org:` and an
 * id: 10 to 50 characters), its three numbers and its map entry, about 350 bytes (some 23,000
 * buckets: clients active in the same minute).
 */
export const RATE_LIMIT_BYTES = 8 * 1024 * 1024;
/** A bucket's bytes besides its name's characters: the map's share (192, lib/lru.ts), the name string's fixed part (32), the bucket object (40). */
const BUCKET_BYTES = 192 + 32 + 40;
const bucketBytes = (name: string) => BUCKET_BYTES + 2 * name.length;

export function createRateLimiter(deps: { clock: Clock; maxBuckets?: number; maxBytes?: number }) {
  const { clock } = deps;
  const maxBuckets = deps.maxBuckets ?? 200_000;
  const maxBytes = deps.maxBytes ?? RATE_LIMIT_BYTES;
  const buckets = new Map<string, Bucket>();
  let bytes = 0;
  let calls = 0;

  /** The bucket's tokens now (refilled since it was last touched), without changing it. */
  function level(limit: Limit, now: number): Bucket {
    const b = buckets.get(limit.bucket);
    if (b === undefined || b.perMinute !== limit.perMinute) {
      // New, or the limit changed (the organisation was validated): start full at the new limit.
      return { tokens: limit.perMinute, at: now, perMinute: limit.perMinute };
    }
    const refill = ((now - b.at) * limit.perMinute) / MINUTE;
    return { tokens: Math.min(limit.perMinute, b.tokens + Math.max(0, refill)), at: now, perMinute: limit.perMinute };
  }

  function decide(limits: readonly Limit[], spend: boolean): RateDecision {
    if (limits.length === 0) throw new Error("rate limit decision needs at least one limit");
    const now = clock.now();
    const levels = limits.map((l) => level(l, now));
    const blocked = levels.filter((b) => b.tokens < 1);
    // The tightest limit: least remaining after this request, ties to the smaller limit.
    const report = (bs: Bucket[]) => {
      let best = bs[0]!;
      for (const b of bs) if (b.tokens < best.tokens || (b.tokens === best.tokens && b.perMinute < best.perMinute)) best = b;
      return { limit: best.perMinute, remaining: Math.max(0, Math.floor(best.tokens)) };
    };
    if (blocked.length > 0) {
      let waitMs = 0;
      let bucket = "";
      levels.forEach((b, i) => {
        if (b.tokens >= 1) return;
        const wait = ((1 - b.tokens) * MINUTE) / b.perMinute;
        if (bucket === "" || wait > waitMs) {
          waitMs = wait;
          bucket = limits[i]!.bucket;
        }
      });
      return { allowed: false, ...report(blocked), retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)), bucket };
    }
    if (spend) {
      limits.forEach((l, i) => {
        const b = levels[i]!;
        b.tokens -= 1;
        if (!buckets.has(l.bucket)) bytes += bucketBytes(l.bucket);
        buckets.set(l.bucket, b);
      });
      if (++calls % SWEEP_EVERY === 0 || buckets.size > maxBuckets || bytes > maxBytes) sweep();
      return { allowed: true, ...report(levels) };
    }
    return { allowed: true, ...report(levels) };
  }

  function drop(key: string): void {
    if (buckets.delete(key)) bytes -= bucketBytes(key);
  }

  /**
   * Drops buckets that are full again; then, while still over a cap, the fullest ones, down to
   * nine tenths of it (so that a stream of new clients sorts the buckets once per tenth of the
   * cap, not once per request).
   */
  function sweep(): void {
    const now = clock.now();
    for (const [key, b] of buckets) {
      if (b.tokens + ((now - b.at) * b.perMinute) / MINUTE >= b.perMinute) drop(key);
    }
    if (buckets.size > maxBuckets || bytes > maxBytes) {
      const byFullness = [...buckets.entries()].sort((a, b) => b[1].tokens / b[1].perMinute - a[1].tokens / a[1].perMinute);
      for (const [key] of byFullness) {
        if (buckets.size <= maxBuckets * 0.9 && bytes <= maxBytes * 0.9) break;
        drop(key);
      }
    }
  }

  return {
    /** Spends one token from every bucket, or refuses without spending any. */
    take(limits: readonly Limit[]): RateDecision {
      return decide(limits, true);
    },
    /** What `take` would report for the next request, without spending (for refusals that must not spend). */
    peek(limits: readonly Limit[]): RateDecision {
      return decide(limits, false);
    },
    sweep,
    /** Buckets held in memory (for tests and metrics). */
    get size() {
      return buckets.size;
    },
    /** Buckets, their bytes and the byte budget (/metrics: docverify_cache_bytes{cache="rate_limit_buckets"}). */
    stats: () => ({ entries: buckets.size, bytes, maxBytes }),
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
