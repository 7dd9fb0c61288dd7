/**
 * Who is calling, and may they? Every /v1 route calls `access.admit(request, operation)` first
 * thing, before reading its body: it applies the precedence of docs/access.md "Order of
 * refusals", from `Origin` through credentials, rate limits, API access, scopes, environment and
 * the add-on, and either returns the caller or throws the DomainError that answers. The rate-limit headers it decides are
 * attached to whatever response the request ends with (success or error) by http/server.ts.
 */
import type { Config } from "../config/index.ts";
import { anyContains, ipv6Slash64, parseIp } from "../lib/cidr.ts";
import { DomainError } from "../lib/errors.ts";
import { keyPrefix } from "../keys/api-key.ts";
import type { AuthenticatedKey } from "../keys/credentials.ts";
import type { Limit, RateDecision } from "../keys/rate-limit.ts";
import { runMaybe, settled, mapMaybe, type Maybe } from "../lib/maybe.ts";
import type { RequestContexts } from "./request-context.ts";
import type { Organisation } from "../keys/organisations.ts";

/** Every /v1 operation, as the access rules know it. */
export type Operation = "verifications.create" | "verifications.list" | "verifications.get" | "records.create" | "records.revoke" | "receipts.get";

export interface CallerKey {
  readonly keyId: string;
  readonly environment: "live" | "test";
  readonly scopes: readonly string[];
}

export type Caller =
  | { readonly tier: "public"; readonly clientIp: string }
  | { readonly tier: "organisation"; readonly clientIp: string; readonly key: CallerKey; readonly org: Organisation };

export interface Access {
  /**
   * Admits the request to `operation` or throws the DomainError that answers it. Synchronous on
   * the embedded SQLite; with several nodes it may ask the database (a promise). Await it before
   * reading the body, so refusals never wait for (or spend memory on) a body.
   */
  admit(request: Request, operation: Operation): Maybe<Caller>;
}

export interface PublicAccess {
  /**
   * Admits a request to a public document (a record's receipt, /.well-known/docverify.json): no
   * credential and no Origin rule (they are fetched by browsers and by anyone), only the client
   * IP's anonymous budget, shared with anonymous verification. Throws RATE_LIMITED.
   */
  admitPublic(request: Request): Maybe<void>;
}

/** What access reports for monitoring (/metrics). Implementations MUST be cheap and MUST NOT throw. */
export interface AccessMetrics {
  /** A request was refused with 429; `bucket` is the kind of the bucket it waits for. */
  rateLimited(bucket: "ip" | "key" | "org"): void;
}

interface Rule {
  /** May the operation be called without a credential (the public tier)? */
  readonly anonymous: boolean;
  /** A record operation: live keys only, the add-on, and this scope. */
  readonly recordScope?: "records:write" | "records:revoke";
}

export const RULES: Readonly<Record<Operation, Rule>> = {
  "verifications.create": { anonymous: true },
  "verifications.list": { anonymous: false },
  "verifications.get": { anonymous: false },
  "records.create": { anonymous: false, recordScope: "records:write" },
  "records.revoke": { anonymous: false, recordScope: "records:revoke" },
  "receipts.get": { anonymous: false },
};

const unauthenticated = () =>
  new DomainError("UNAUTHENTICATED", "The credential is missing or unusable. Send exactly one header: Authorization: Bearer <API key>.");

/**
 * The client's address: the direct peer, or, when the peer is a trusted proxy, the nearest
 * address in `X-Forwarded-For` that is not itself a trusted proxy (read right to left: each
 * proxy appends the address it saw, so only the entries added by trusted proxies are believed).
 * An entry may carry a port (`192.0.2.1:4711`, `[2001:db8::1]:443`, as some proxies write
 * it). An entry that names no address (`unknown`, an obfuscated token) stops the walk and is
 * itself the client's identity: such clients share a bucket of their own, never the proxy's.
 */
export function clientIp(request: Request, peer: string | undefined, trustedProxies: Config["trustedProxies"]): string {
  const direct = peer ?? "unknown";
  if (peer === undefined || trustedProxies.length === 0 || !anyContains(trustedProxies, peer)) return direct;
  const header = request.headers.get("x-forwarded-for");
  if (header === null) return direct;
  const hops = header.split(",");
  let client = direct;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!.trim();
    if (hop === "") continue; // an empty list member (`a,,b`) adds nothing
    const address = forwardedAddress(hop);
    if (address === null) return `unidentified:${hop.slice(0, 64)}`;
    client = address;
    if (!anyContains(trustedProxies, address)) break;
  }
  return client;
}

/** The address of one `X-Forwarded-For` entry, without a port; null when it names none. */
export function forwardedAddress(entry: string): string | null {
  let address = entry;
  if (entry.startsWith("[")) {
    const close = entry.indexOf("]");
    if (close < 0 || !(close === entry.length - 1 || /^:\d{1,5}$/.test(entry.slice(close + 1)))) return null;
    address = entry.slice(1, close);
  } else if (/^[\d.]+:\d{1,5}$/.test(entry)) {
    address = entry.slice(0, entry.indexOf(":"));
  }
  return parseIp(address) === null ? null : address;
}

/**
 * The rate-limit identity of a client (docs/access.md "Rate limits"): an IPv4 address itself, an IPv6 address
 * by its /64 (one subscriber holds a whole /64 and could otherwise take a fresh bucket per
 * address), anything else (an unidentified forwarded client) as it is.
 */
export function clientBucket(ip: string): string {
  if (!ip.includes(":") || ip.startsWith("unidentified:")) return `ip:${ip}`;
  const parsed = parseIp(ip);
  if (parsed === null) return `ip:${ip}`;
  if (parsed.family === 4) return `ip:${ip.slice(ip.lastIndexOf(":") + 1)}`; // ::ffff:a.b.c.d
  return `ip:${ipv6Slash64(parsed.value)}`;
}

/**
 * The rate limiter access spends from: this node's own (synchronous), or, with several nodes, the
 * buckets they share (keys/cluster-rate-limit.ts: a promise when it must ask the database).
 */
export interface AccessLimiter {
  take(limits: readonly Limit[]): Maybe<RateDecision>;
  peek(limits: readonly Limit[]): RateDecision;
}

/**
 * Access is written once for both engines: each answer it needs (a key's authentication, a rate
 * decision) may be a promise; on the embedded SQLite none is, and `admit` answers synchronously.
 */
export function createAccess(deps: {
  config: Pick<Config, "rateLimit" | "trustedProxies">;
  credentials: { authenticateAny(presented: string): Maybe<AuthenticatedKey | null> };
  limiter: AccessLimiter;
  metrics?: AccessMetrics;
  /** Each request's context: its peer, the headers its response ends with, the key prefix logged. */
  requests: RequestContexts;
}): Access & PublicAccess {
  const { config, credentials, limiter } = deps;
  const metrics = deps.metrics;
  const { rateLimit } = config;

  function report(request: Request, decision: RateDecision): void {
    deps.requests.addHeaders(request, {
      "x-ratelimit-limit": String(decision.limit),
      "x-ratelimit-remaining": String(decision.remaining),
    });
  }

  function rateLimited(decision: RateDecision & { allowed: false }): DomainError {
    // Only the bucket's kind: its name carries an IP address, a key id or an organisation id.
    const b = decision.bucket;
    metrics?.rateLimited(b.startsWith("org:") ? "org" : b.startsWith("key:") ? "key" : "ip");
    return new DomainError("RATE_LIMITED", `Too many requests; retry in ${decision.retryAfterSeconds} s.`, undefined, decision.retryAfterSeconds);
  }

  /** A refusal before any credential is accepted: spends the client IP's budget (or 429s). */
  function* refuseUnauthenticated(request: Request, ipLimit: Limit): Generator<unknown, never, unknown> {
    const decision = yield* settled(limiter.take([ipLimit]));
    report(request, decision);
    if (!decision.allowed) throw rateLimited(decision);
    throw unauthenticated();
  }

  function clientLimit(request: Request): { ip: string; ipLimit: Limit } {
    const ip = clientIp(request, deps.requests.of(request).peer, config.trustedProxies);
    return { ip, ipLimit: { bucket: clientBucket(ip), perMinute: rateLimit.anonymous } };
  }

  return {
    admitPublic(request) {
      const decision = limiter.take([clientLimit(request).ipLimit]);
      const settle = (d: RateDecision) => {
        report(request, d);
        if (!d.allowed) throw rateLimited(d);
      };
      return mapMaybe(decision, settle);
    },
    admit(request, operation) {
      return runMaybe(admitting(request, operation));
    },
  };

  function* admitting(request: Request, operation: Operation): Generator<unknown, Caller, unknown> {
    const rule = RULES[operation];
    const { ip, ipLimit } = clientLimit(request);

    // Calls are to come from a server, not a browser. Spends nothing.
    if (request.headers.has("origin")) {
      report(request, limiter.peek([ipLimit]));
      throw new DomainError("FORBIDDEN", "Requests carrying an Origin header are refused: call this API from a server, not a browser.");
    }

    const authorization = request.headers.get("authorization");
    if (authorization === null) {
      if (!rule.anonymous) yield* refuseUnauthenticated(request, ipLimit);
      const decision = yield* settled(limiter.take([ipLimit]));
      report(request, decision);
      if (!decision.allowed) throw rateLimited(decision);
      return { tier: "public", clientIp: ip };
    }

    // Bun joins repeated headers with ", ": a comma means more than one Authorization header
    // (a key never contains one). Only the Bearer scheme (case-insensitive, RFC 9110) is accepted.
    const m = /^bearer +([^\s,]+) *$/i.exec(authorization);
    const key = m === null ? null : yield* settled(credentials.authenticateAny(m[1]!));
    if (key === null) return yield* refuseUnauthenticated(request, ipLimit);

    deps.requests.of(request).keyPrefix = keyPrefix(key);
    const org = key.org;
    // Keys of unvalidated organisations are served at the anonymous limit, per key.
    const limits: Limit[] = org.validated
      ? [
          { bucket: `key:${key.keyId}`, perMinute: rateLimit.key },
          { bucket: `org:${org.id}`, perMinute: rateLimit.org },
        ]
      : [{ bucket: `key:${key.keyId}`, perMinute: rateLimit.anonymous }];
    const decision = yield* settled(limiter.take(limits));
    report(request, decision);
    if (!decision.allowed) throw rateLimited(decision);

    if (!org.apiAccess) {
      throw new DomainError("PAYMENT_REQUIRED", "API access is not enabled for this organisation." + (rule.anonymous ? " Drop the Authorization header to verify at the public tier." : ""));
    }
    if (!key.scopes.includes("verifications:read")) {
      throw new DomainError("FORBIDDEN", "This key lacks the verifications:read scope.");
    }
    if (rule.recordScope !== undefined) {
      if (key.environment !== "live") {
        throw new DomainError("TEST_ENVIRONMENT", "A test key cannot create or revoke records: there is no test ledger. Use a live key.");
      }
      if (!org.addon) {
        throw new DomainError("ADDON_REQUIRED", "This organisation does not hold the organisation-issued authentication add-on.");
      }
      if (!key.scopes.includes(rule.recordScope)) {
        throw new DomainError("SCOPE_REQUIRED", `This key lacks the ${rule.recordScope} scope; mint a key with it.`);
      }
    }
    return { tier: "organisation", clientIp: ip, key: { keyId: key.keyId, environment: key.environment, scopes: key.scopes }, org };
  }
}
