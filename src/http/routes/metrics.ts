/**
 * `GET /metrics`: the service's metrics in the Prometheus text format 0.0.4, for the
 * addresses in DOCVERIFY_METRICS_ALLOW only (default loopback). Outside /v1 like the health
 * probes: no credential, no rate limit. Not in the OpenAPI document: it is the operator's, not
 * the API's.
 *
 * Who may scrape is decided on the direct peer address. A request that carries
 * `X-Forwarded-For` or `Forwarded` came through a proxy, so the peer (the proxy, often on
 * loopback) is not the scraper: it is refused unless the peer is a trusted proxy and the client
 * it forwards for is allowed (docs/operations.md, "Metrics"). Anyone else gets the very 404 an unknown path gets, so
 * the endpoint's existence is not advertised to the API's callers (a 403 would say "it is here,
 * but not for you"); the request log line still names the route, for the operator.
 *
 * No label value ever comes from a request: routes are patterns, statuses, verdicts, tiers,
 * states and bucket kinds are closed sets. docs/operations.md lists every metric.
 */
import { Elysia } from "elysia";
import type { Cidr } from "../../lib/cidr.ts";
import { anyContains } from "../../lib/cidr.ts";
import { DomainError } from "../../lib/errors.ts";
import { CONTENT_TYPE, LATENCY_BUCKETS, createRegistry, type CounterChild, type HistogramChild, type Registry } from "../../lib/metrics.ts";
import type { AnchorMetrics, BackPressureCause, LedgerErrorKind } from "../../anchoring/index.ts";
import type { RecordCounts } from "../../records/counts.ts";
import type { DisclosureTier, Verdict } from "../../verification/types.ts";
import { clientIp, type AccessMetrics } from "../access.ts";
import type { HttpMetrics, RouteRecorder } from "../server.ts";
import type { RequestContexts } from "../request-context.ts";

/** Anchor latency buckets, seconds: the local ledger anchors in about a second, public networks in 3–10 s. */
const ANCHOR_BUCKETS = [0.25, 0.5, 1, 2, 3, 5, 7.5, 10, 15, 20, 30, 60, 120, 300, 600] as const;
/** Leaves per batch: powers of two up to DOCVERIFY_BATCH_MAX's ceiling. */
const BATCH_SIZE_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024] as const;

export interface ServiceMetricsDeps {
  readonly version: string;
  readonly commit: string;
  /**
   * Records by anchor state (records/counts.ts `recordCounter`): counted at scrape time on SQLite,
   * in the background at most once a second on PostgreSQL. A state not counted yet has no series.
   */
  readonly records: () => RecordCounts;
  /** Unfinished ledger transactions (a batch counted as its leaves), as of the anchor loop's last pass, and when the oldest not yet accepted was queued. */
  readonly backlog: () => { readonly pending: number; readonly accepted: number; readonly oldestPendingAt?: number | null };
  /** The open batches and the leaves in them, as of the anchor loop's last look (docs/anchoring.md "Batches"). */
  readonly openBatches?: () => { readonly batches: number; readonly leaves: number };
  /** The clock the ages are measured on (default: the system's). */
  readonly now?: () => number;
  /** Verification's signature checks that no memo answered, so far, by where they ran (the signer's `verifiedBy`). */
  readonly signatureVerifications?: () => { readonly thread: number; readonly workers: number };
  /** What each cache holds now, and its budget (docverify_cache_*). Names are fixed by the code. */
  readonly caches?: () => readonly CacheGauge[];
  /** Memory releases after a quiet period so far (lib/idle-release.ts). */
  readonly idleReleases?: () => number;
}

/** One cache as /metrics reports it: `name` is the `cache` label, `bytes` as the cache counts them (an estimate that errs high). */
export interface CacheGauge {
  readonly name: string;
  readonly entries: number;
  readonly bytes: number;
  readonly maxBytes: number;
}

export interface ServiceMetrics {
  readonly registry: Registry;
  /** For createHttp: requests by route and status, and their duration. */
  readonly http: HttpMetrics;
  /** For createAccess: 429 refusals by bucket kind. */
  readonly access: AccessMetrics;
  /** For the anchor loop: anchor latency, ledger errors and back-pressure refusals. */
  readonly anchoring: AnchorMetrics;
  /** For the verification route: verdicts by verdict and tier. */
  verdict(verdict: Verdict, tier: DisclosureTier): void;
  /** The exposition text. */
  render(): string;
}

export function createServiceMetrics(deps: ServiceMetricsDeps): ServiceMetrics {
  const registry = createRegistry();
  const p = "docverify_";

  const requests = registry.counter(`${p}http_requests_total`, "HTTP requests answered, by method, route pattern and status.", ["method", "route", "status"]);
  const duration = registry.histogram(
    `${p}http_request_duration_seconds`,
    "Time to answer an HTTP request, from arrival to the response (body streaming excluded), by method and route pattern.",
    ["method", "route"],
    LATENCY_BUCKETS,
  );
  const verdicts = registry.counter(`${p}verifications_total`, "Verdicts computed by POST /v1/verifications, by verdict and disclosure tier.", ["verdict", "tier"]);
  const rateLimited = registry.counter(`${p}rate_limited_total`, "Requests refused with 429, by the kind of bucket that was empty (ip, key, org).", ["bucket"]);
  const recordsByState = registry.gauge(`${p}records`, "Records by anchor state, counted in storage: at scrape time (SQLite), or at most once a second in the background (PostgreSQL).", ["state"]);
  const backlog = registry.gauge(`${p}anchor_backlog`, "Unfinished ledger transactions by state, as of the anchor loop's last pass (about once a second).", ["state"]);
  const anchorLatency = registry.histogram(
    `${p}anchor_latency_seconds`,
    "Time from a ledger transaction being queued to its consensus being confirmed (the row reaching anchored), by kind.",
    ["kind"],
    ANCHOR_BUCKETS,
  );
  const ledgerErrors = registry.counter(
    `${p}ledger_errors_total`,
    "Failed ledger calls of the anchor loop, by class: retryable, expired or permanent refusals, and unknown (no usable answer).",
    ["kind"],
  );
  const backPressure = registry.counter(
    `${p}anchor_backpressure_total`,
    "Record creations refused with 503 by the anchor queue's back-pressure, by cause: queue_full (the backlog bound), behind (more unfinished than anchored in the last window), too_old (the oldest unaccepted message waits too long).",
    ["cause"],
  );
  const batches = registry.counter(`${p}anchor_batches_total`, "Batches whose one ledger message reached consensus (docs/anchoring.md, Batches).");
  const batchLeaves = registry.histogram(`${p}anchor_batch_leaves`, "Records and revocations per batch anchored.", [], BATCH_SIZE_BUCKETS);
  const openBatches = registry.gauge(`${p}anchor_open_batches`, "Batches still taking records and revocations, as of the anchor loop's last look.");
  const openLeaves = registry.gauge(`${p}anchor_open_batch_leaves`, "Records and revocations in the open batches, as of the anchor loop's last look.");
  const oldestWaiting = registry.gauge(
    `${p}anchor_oldest_waiting_seconds`,
    "Age of the oldest record, revocation or message not yet accepted by the ledger (an open batch's first leaf, a batch waiting to be submitted), as of the anchor loop's last pass; 0 when none waits.",
  );
  const signatureChecks = registry.counter(
    `${p}signature_verifications_total`,
    "Signature verifications made for POST /v1/verifications that no memo answered, by where they ran: thread (the API's own) or workers (the signing workers, while verification is busy).",
    ["where"],
  );
  const cacheBytes = registry.gauge(
    `${p}cache_bytes`,
    "Bytes an in-memory cache holds now, by cache: its entries as the cache counts them (an estimate that errs high; docs/operations.md, Memory). Never above docverify_cache_budget_bytes.",
    ["cache"],
  );
  const cacheEntries = registry.gauge(`${p}cache_entries`, "Entries an in-memory cache holds now, by cache.", ["cache"]);
  const cacheBudget = registry.gauge(`${p}cache_budget_bytes`, "The most bytes a cache may hold, by cache (its named budget in the code).", ["cache"]);
  const idleReleases = registry.counter(`${p}idle_releases_total`, "Times the service gave memory back after a quiet period (caches emptied, SQLite's page caches shrunk, heaps collected).");
  let releasesSeen = 0;
  const uptime = registry.gauge(`${p}uptime_seconds`, "Seconds since the process started.");
  const rss = registry.gauge(`${p}resident_memory_bytes`, "Resident set size of the process, bytes.");
  registry.gauge(`${p}build_info`, "The running build: always 1, with version and commit as labels.", ["version", "commit"]).labels(deps.version, deps.commit).set(1);

  // Zero series from the start for the closed sets, so rate() and alerts see them before the first event.
  for (const b of ["ip", "key", "org"] as const) rateLimited.labels(b);
  for (const k of ["retryable", "expired", "permanent", "unknown"] satisfies LedgerErrorKind[]) ledgerErrors.labels(k);
  for (const c of ["queue_full", "behind", "too_old"] satisfies BackPressureCause[]) backPressure.labels(c);
  const checkedHere = signatureChecks.labels("thread");
  const checkedOnWorkers = signatureChecks.labels("workers");
  let checksSeen = { thread: 0, workers: 0 };
  const backlogPending = backlog.labels("pending");
  const backlogAccepted = backlog.labels("accepted");
  const anchorLatencyByKind = new Map<string, HistogramChild>();
  const batchLeavesChild = batchLeaves.labels();

  registry.onCollect(() => {
    for (const [state, n] of Object.entries(deps.records())) recordsByState.labels(state).set(n);
    const b = deps.backlog();
    backlogPending.set(b.pending);
    backlogAccepted.set(b.accepted);
    const oldest = b.oldestPendingAt ?? null;
    oldestWaiting.set(oldest === null ? 0 : Math.max(0, ((deps.now ?? Date.now)() - oldest) / 1000));
    if (deps.openBatches !== undefined) {
      const o = deps.openBatches();
      openBatches.set(o.batches);
      openLeaves.set(o.leaves);
    }
    if (deps.signatureVerifications !== undefined) {
      const now = deps.signatureVerifications();
      checkedHere.inc(now.thread - checksSeen.thread);
      checkedOnWorkers.inc(now.workers - checksSeen.workers);
      checksSeen = now;
    }
    for (const c of deps.caches?.() ?? []) {
      cacheBytes.labels(c.name).set(c.bytes);
      cacheEntries.labels(c.name).set(c.entries);
      cacheBudget.labels(c.name).set(c.maxBytes);
    }
    if (deps.idleReleases !== undefined) {
      const now = deps.idleReleases();
      idleReleases.inc(now - releasesSeen);
      releasesSeen = now;
    }
    uptime.set(Math.round(process.uptime() * 1000) / 1000);
    rss.set(process.memoryUsage.rss());
  });

  // Verdict × tier is 12 children, resolved once here; recording is two property reads.
  const verdictChildren = new Map<string, Record<DisclosureTier, CounterChild>>();
  const verdictChild = (verdict: Verdict, tier: DisclosureTier): CounterChild => {
    let byTier = verdictChildren.get(verdict);
    if (byTier === undefined) verdictChildren.set(verdict, (byTier = { public: verdicts.labels(verdict, "public"), organisation: verdicts.labels(verdict, "organisation") }));
    return byTier[tier];
  };

  return {
    registry,
    http: {
      route(method: string, route: string): RouteRecorder {
        const byStatus = new Map<number, CounterChild>();
        let hist: HistogramChild | null = null;
        return {
          record(status, seconds) {
            let c = byStatus.get(status);
            if (c === undefined) byStatus.set(status, (c = requests.labels(method, route, String(status))));
            c.inc();
            (hist ??= duration.labels(method, route)).observe(seconds);
          },
        };
      },
    },
    access: {
      rateLimited(bucket) {
        rateLimited.labels(bucket).inc();
      },
    },
    anchoring: {
      anchored(kind, latencyMs) {
        let h = anchorLatencyByKind.get(kind);
        if (h === undefined) anchorLatencyByKind.set(kind, (h = anchorLatency.labels(kind)));
        h.observe(Math.max(0, latencyMs) / 1000);
      },
      ledgerError(kind) {
        ledgerErrors.labels(kind).inc();
      },
      backPressure(cause) {
        backPressure.labels(cause).inc();
      },
      batchAnchored(leaves) {
        batches.inc();
        batchLeavesChild.observe(leaves);
      },
    },
    verdict(verdict, tier) {
      verdictChild(verdict, tier).inc();
    },
    render: () => registry.render(),
  };
}

export interface MetricsRouteDeps {
  readonly metrics: Pick<ServiceMetrics, "render">;
  /** DOCVERIFY_METRICS_ALLOW: who may scrape, by direct peer address. */
  readonly allow: readonly Cidr[];
  /** DOCVERIFY_TRUSTED_PROXIES: whose X-Forwarded-For is believed. */
  readonly trustedProxies: readonly Cidr[];
  /** Each request's context: its direct peer. */
  readonly requests: RequestContexts;
}

/** May this request read /metrics? See the module comment. */
export function mayScrape(request: Request, peer: string | undefined, deps: Pick<MetricsRouteDeps, "allow" | "trustedProxies">): boolean {
  if (peer === undefined) return false;
  const forwarded = request.headers.has("x-forwarded-for") || request.headers.has("forwarded");
  if (!forwarded) return anyContains(deps.allow, peer);
  // Through a proxy: only a trusted one's X-Forwarded-For names the scraper (`Forwarded` alone names nobody we believe).
  if (!anyContains(deps.trustedProxies, peer) || !request.headers.has("x-forwarded-for")) return false;
  const client = clientIp(request, peer, deps.trustedProxies);
  return client !== peer && anyContains(deps.allow, client);
}

export function metricsRoutes(deps: MetricsRouteDeps) {
  const { metrics } = deps;
  return new Elysia({ name: "metrics" }).get(
    "/metrics",
    ({ request }) => {
      if (!mayScrape(request, deps.requests.of(request).peer, deps)) throw new DomainError("NOT_FOUND", "No route /metrics.");
      return new Response(metrics.render(), { status: 200, headers: { "content-type": CONTENT_TYPE, "cache-control": "no-store" } });
    },
    { detail: { hide: true } },
  );
}
