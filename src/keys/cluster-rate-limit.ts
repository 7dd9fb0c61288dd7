/**
 * Rate limits across nodes (docs/storage.md "Rate limits across nodes"): the same token buckets as
 * rate-limit.ts (one per client IP, key and organisation, `perMinute` tokens a minute up to
 * `perMinute`), kept once for every node in the database, without a database round trip per
 * request.
 *
 * A node leases a few tokens of a bucket at a time (`chunk`: about 2 % of the limit, at least 1,
 * or as many as this node's requests are waiting for), spends them locally, and gives back what it has not spent after `leaseMs`. When the shared
 * bucket has no whole token, the node refuses that bucket locally until the time the bucket needs
 * to refill one, and only then asks again. So:
 * - tokens are conserved across nodes: no node spends a token another spent, and the refill is
 *   counted once, by the database. Across all nodes, a bucket never allows more than one node
 *   would;
 * - what it may allow less of is the tokens leased and not yet spent by other nodes: at most
 *   `chunk` per node, for at most `leaseMs`, then back in the bucket. With three nodes that is
 *   at most 6 % of a limit, for a second;
 * - the database is asked at most once per `chunk` allowed requests per bucket and node, and once
 *   per refill interval while a bucket is empty, never per refused request.
 *
 * `take` keeps rate-limit.ts's contract: one token from every bucket it is given, or from none,
 * and the tightest bucket reported.
 */
import type { Clock } from "../lib/clock.ts";
import type { Limit, RateDecision } from "./rate-limit.ts";

export interface LeaseResult {
  /** Whole tokens granted (0 to `want`). */
  readonly granted: number;
  /** Tokens left in the shared bucket after the grant (may be fractional). */
  readonly remaining: number;
}

/** One round trip to the shared buckets: give back `giveBack` tokens, then lease up to `want`. */
export type Lease = (bucket: string, perMinute: number, want: number, giveBack: number) => Promise<LeaseResult>;

interface Held {
  perMinute: number;
  /** Tokens leased and not spent. */
  tokens: number;
  /** When the last lease was granted (clock ms): unspent tokens go back `leaseMs` after it. */
  leasedAt: number;
  /** While the shared bucket is known to be empty: refuse locally until this time (clock ms). */
  emptyUntil: number;
  /** The shared bucket's remainder at the last lease, for the X-RateLimit-Remaining report. */
  shared: number;
  /** A lease in flight, shared by the requests that need it. */
  pending: Promise<void> | null;
  /** Requests of this node waiting for a token of this bucket: a lease asks for at least as many. */
  waiting: number;
}

const MINUTE = 60_000;

/** Tokens leased at a time: about 2 % of the limit, at least 1, at most 100. */
export function chunkOf(perMinute: number): number {
  return Math.min(100, Math.max(1, Math.ceil(perMinute / 50)));
}

export function createClusterRateLimiter(deps: { lease: Lease; clock: Clock; leaseMs?: number }) {
  const { lease, clock } = deps;
  const leaseMs = deps.leaseMs ?? 1_000;
  const held = new Map<string, Held>();
  let leaseCalls = 0;

  function stateOf(limit: Limit): Held {
    let h = held.get(limit.bucket);
    if (h === undefined || h.perMinute !== limit.perMinute) {
      // New, or the limit changed (the organisation was validated): what was held at the old limit is
      // dropped (the database restarts the bucket full at the new limit).
      h = { perMinute: limit.perMinute, tokens: 0, leasedAt: 0, emptyUntil: 0, shared: limit.perMinute, pending: null, waiting: 0 };
      held.set(limit.bucket, h);
    }
    return h;
  }

  async function refill(limit: Limit, h: Held): Promise<void> {
    if (h.pending !== null) return h.pending;
    h.pending = (async () => {
      try {
        leaseCalls++;
        const got = await lease(limit.bucket, limit.perMinute, Math.max(chunkOf(limit.perMinute), h.waiting), 0);
        const now = clock.now();
        h.tokens += got.granted;
        h.shared = got.remaining;
        if (got.granted > 0) h.leasedAt = now;
        else h.emptyUntil = now + Math.ceil(((1 - Math.min(1, got.remaining)) * MINUTE) / limit.perMinute);
      } finally {
        h.pending = null;
      }
    })();
    return h.pending;
  }

  function decision(limits: readonly Limit[], states: readonly Held[], now: number): RateDecision {
    const blocked = states.map((h, i) => ({ h, i })).filter(({ h }) => h.tokens < 1);
    const level = (h: Held) => Math.max(0, Math.floor(h.tokens + h.shared));
    const tightest = (xs: { h: Held }[]) => xs.reduce((a, b) => (level(b.h) < level(a.h) || (level(b.h) === level(a.h) && b.h.perMinute < a.h.perMinute) ? b : a));
    if (blocked.length > 0) {
      let wait = blocked[0]!;
      for (const b of blocked) if (b.h.emptyUntil > wait.h.emptyUntil) wait = b;
      const t = tightest(blocked);
      return {
        allowed: false,
        limit: t.h.perMinute,
        remaining: 0,
        retryAfterSeconds: Math.max(1, Math.ceil((wait.h.emptyUntil - now) / 1000)),
        bucket: limits[wait.i]!.bucket,
      };
    }
    const t = tightest(states.map((h) => ({ h })));
    return { allowed: true, limit: t.h.perMinute, remaining: Math.max(0, level(t.h) - 1) };
  }

  /** Gives back tokens held longer than `leaseMs`, so that other nodes can spend them. */
  async function giveBack(): Promise<void> {
    const now = clock.now();
    const due = [...held.entries()].filter(([, h]) => h.pending === null && h.tokens > 0 && now - h.leasedAt >= leaseMs);
    await Promise.all(
      due.map(async ([bucket, h]) => {
        const back = h.tokens;
        h.tokens = 0;
        leaseCalls++;
        const got = await lease(bucket, h.perMinute, 0, back);
        h.shared = got.remaining;
      }),
    );
    // Buckets with nothing held and nothing known to wait for carry no information.
    for (const [bucket, h] of held) if (h.tokens === 0 && h.pending === null && h.emptyUntil <= now && now - h.leasedAt >= leaseMs) held.delete(bucket);
  }

  // Unspent tokens go back on their own; `stop` gives back the rest.
  const timer = setInterval(() => void giveBack().catch(() => {}), leaseMs);
  timer.unref?.();

  return {
    /** Spends one token from every bucket, or refuses without spending any. */
    async take(limits: readonly Limit[]): Promise<RateDecision> {
      if (limits.length === 0) throw new Error("rate limit decision needs at least one limit");
      const states = limits.map(stateOf);
      // Each round either gets tokens or learns that a bucket is empty; the bound is only a guard.
      for (let round = 0; ; round++) {
        const now = clock.now();
        // A bucket known to be empty is refused here, without asking the database.
        const knownEmpty = states.some((h) => h.tokens < 1 && h.emptyUntil > now);
        const short = limits.filter((_, i) => states[i]!.tokens < 1);
        if (knownEmpty || short.length === 0 || round === 8) {
          // Decided and spent in one synchronous step: no other request of this node runs between.
          const d = decision(limits, states, now);
          if (d.allowed) for (const h of states) h.tokens -= 1;
          return d;
        }
        const waitingOn = short.map((l) => stateOf(l));
        for (const h of waitingOn) h.waiting++;
        try {
          await Promise.all(short.map((l, i) => refill(l, waitingOn[i]!)));
        } finally {
          for (const h of waitingOn) h.waiting--;
        }
      }
    },
    /** What `take` would report, from what this node holds, without spending or asking. */
    peek(limits: readonly Limit[]): RateDecision {
      const states = limits.map(stateOf);
      const now = clock.now();
      if (states.some((h) => h.tokens < 1 && h.emptyUntil > now)) return decision(limits, states, now);
      const t = states.reduce((a, b) => (b.tokens + b.shared < a.tokens + a.shared ? b : a));
      return { allowed: true, limit: t.perMinute, remaining: Math.max(0, Math.floor(t.tokens + t.shared)) };
    },
    giveBack,
    /** Stops the give-back timer and gives back every token held. */
    async stop(): Promise<void> {
      clearInterval(timer);
      for (const h of held.values()) h.leasedAt = -Infinity;
      await giveBack();
    },
    /** Round trips to the shared buckets so far (for tests and metrics). */
    get leaseCalls() {
      return leaseCalls;
    },
    get size() {
      return held.size;
    },
  };
}

export type ClusterRateLimiter = ReturnType<typeof createClusterRateLimiter>;
