/**
 * GET /metrics: the registry's text format (checked by a strict parser), values that move with
 * the requests, verdicts, refusals and anchoring they count, who may scrape (the direct peer in
 * DOCVERIFY_METRICS_ALLOW; X-Forwarded-For never), and that no label carries a key, a hash or
 * an id. Then the same against `docverify serve` over HTTP, with its embedded ledger, including
 * its log lines never holding a key or a secret.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createRegistry, escapeLabelValue } from "../../src/lib/metrics.ts";
import { openCore, type Core } from "../../src/app/core.ts";
import { type App } from "../../src/app/sqlite.ts";
import { parseConfig } from "../../src/config/index.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { createRecordsFixture, docHashOf } from "../support/records-fixture.ts";
import { parseExposition, sampleValue } from "../support/prometheus.ts";
import { cleanup, startService, tempDir, testApp } from "../support/env.ts";
import { createRecordOnceTopicExists } from "../support/topic.ts";
import { waitFor } from "../support/wait.ts";

afterAll(cleanup);

const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
/** Anything that looks like a key, a document hash or an id (UUID), anywhere in the text. */
const LEAKS = [/dv_(?:live|test)_/, /[0-9a-f]{64}/, /sha256:/, /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/];

describe("the registry's text format", () => {
  test("counters, gauges and histograms parse, with HELP and TYPE first and cumulative buckets", () => {
    const r = createRegistry();
    const c = r.counter("t_events_total", "Events.", ["kind"]);
    c.labels("a").inc();
    c.labels("a").inc(2);
    c.labels("b");
    r.gauge("t_level", "A level.").set(1.5);
    const h = r.histogram("t_seconds", "Durations.", ["route"], [0.1, 1]);
    for (const v of [0.05, 0.1, 0.5, 3]) h.labels("/x").observe(v);
    const f = parseExposition(r.render());
    expect([...f.keys()]).toEqual(["t_events_total", "t_level", "t_seconds"]);
    expect(sampleValue(f, "t_events_total", { kind: "a" })).toBe(3);
    expect(sampleValue(f, "t_events_total", { kind: "b" })).toBe(0);
    expect(sampleValue(f, "t_level")).toBe(1.5);
    expect(sampleValue(f, "t_seconds_bucket", { le: "0.1" })).toBe(2); // le is inclusive
    expect(sampleValue(f, "t_seconds_bucket", { le: "1" })).toBe(3);
    expect(sampleValue(f, "t_seconds_bucket", { le: "+Inf" })).toBe(4);
    expect(sampleValue(f, "t_seconds_count")).toBe(4);
    expect(sampleValue(f, "t_seconds_sum")).toBeCloseTo(3.65);
  });

  test("label values are escaped (backslash, double quote, newline) and read back exactly", () => {
    const nasty = 'a\\b"c\nd}{,=e';
    expect(escapeLabelValue(nasty)).toBe('a\\\\b\\"c\\nd}{,=e');
    const r = createRegistry();
    r.counter("t_total", 'Help with a \\ and a\nnewline and "quotes".', ["v"]).labels(nasty).inc();
    const text = r.render();
    expect(text.split("\n").filter((l) => l.startsWith("t_total"))).toHaveLength(1);
    const f = parseExposition(text);
    expect(f.get("t_total")!.samples[0]!.labels.v).toBe(nasty);
    expect(f.get("t_total")!.help).toBe('Help with a \\ and a\nnewline and "quotes".');
  });

  test("misuse is refused: names, counters without _total, reserved labels, unordered buckets, wrong arity", () => {
    const r = createRegistry();
    expect(() => r.counter("t_events", "x")).toThrow(/_total/);
    expect(() => r.gauge("1bad", "x")).toThrow(/name/);
    expect(() => r.histogram("t_h", "x", ["le"], [1])).toThrow(/label/);
    expect(() => r.histogram("t_h2", "x", [], [1, 1])).toThrow(/increasing/);
    const c = r.counter("t_ok_total", "x", ["a"]);
    expect(() => c.labels("1", "2")).toThrow(/label value/);
    expect(() => c.inc()).toThrow(/labels/);
    expect(() => c.labels("x").inc(-1)).toThrow(/up/);
    expect(() => r.gauge("t_ok_total", "x")).toThrow(/twice/);
  });

  test("the parser rejects what a scraper would", () => {
    const ok = "# HELP a_total x\n# TYPE a_total counter\na_total 1\n";
    expect(() => parseExposition(ok)).not.toThrow();
    expect(() => parseExposition("a_total 1\n")).toThrow(/before/);
    expect(() => parseExposition("# TYPE a_total counter\na_total 1\n")).toThrow(/HELP/);
    expect(() => parseExposition(ok.replace("a_total 1", 'a_total{x="\\q"} 1'))).toThrow(/escape/);
    expect(() => parseExposition(ok + "a_total 2\n")).toThrow(/twice/);
    expect(() => parseExposition("# HELP h x\n# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n")).toThrow(/cumulative/);
    expect(() => parseExposition("# HELP h x\n# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 3\n")).toThrow(/_count/);
  });
});

describe("GET /metrics in-process", () => {
  let app: App;
  let request: (path: string, init?: RequestInit, peer?: string) => Promise<Response>;
  let liveKey: string;
  let slowKey: string; // an unvalidated organisation's key: the anonymous limit, per key
  let signedHash: string;
  let recordIds: string[];

  const scrape = async (peer = "127.0.0.1", headers: Record<string, string> = {}) => {
    const res = await request("/metrics", { headers }, peer);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe(CONTENT_TYPE);
    const text = await res.text();
    return { text, f: parseExposition(text) };
  };
  const verify = (hash: string, key?: string, peer = "198.51.100.7") =>
    request(
      "/v1/verifications",
      {
        method: "POST",
        headers: { "content-type": "application/json", ...(key !== undefined ? { authorization: `Bearer ${key}` } : {}) },
        body: JSON.stringify({ originalDocHash: hash }),
      },
      peer,
    );

  beforeAll(async () => {
    ({ app, request } = await testApp({ env: { DOCVERIFY_RATE_LIMIT_ANONYMOUS: "3", DOCVERIFY_TRUSTED_PROXIES: "203.0.113.0/24" } }));
    const fx = createRecordsFixture({ db: app.db, signer: app.signer, clock: manualClock(Date.now()) });
    const org = await fx.createOrg("Metrics Ltd", { apiAccess: true, addon: true, validated: true });
    const unvalidated = await fx.createOrg("Unvalidated Ltd", { apiAccess: true });
    liveKey = (await app.apiKeys.mint({ orgId: org.id, environment: "live" }, "test")).key;
    slowKey = (await app.apiKeys.mint({ orgId: unvalidated.id, environment: "live" }, "test")).key;
    signedHash = docHashOf("metrics signed");
    recordIds = [
      fx.addOrgRecord(org, { docHash: signedHash }),
      fx.addOrgRecord(org, { docHash: docHashOf("metrics pending"), anchorState: "accepted" }),
      fx.addOrgRecord(org, { docHash: docHashOf("metrics abandoned"), anchorState: "abandoned" }),
    ];
  });

  test("every family has the docverify_ prefix; process and build gauges are there", async () => {
    const { f } = await scrape();
    for (const name of f.keys()) expect(name).toStartWith("docverify_");
    expect(sampleValue(f, "docverify_build_info", { version: "0.1.0", commit: "source" })).toBe(1);
    expect(sampleValue(f, "docverify_uptime_seconds")).toBeGreaterThan(0);
    expect(sampleValue(f, "docverify_resident_memory_bytes")).toBeGreaterThan(10_000_000);
    // The loop's own view (here: the topic creation it queued for the organisation with the add-on).
    expect(sampleValue(f, "docverify_anchor_backlog", { state: "pending" })).toBe(app.anchoring.backlog().pending);
    expect(sampleValue(f, "docverify_anchor_backlog", { state: "accepted" })).toBe(app.anchoring.backlog().accepted);
    expect(f.get("docverify_http_request_duration_seconds")!.type).toBe("histogram");
    expect(f.get("docverify_anchor_latency_seconds")!.type).toBe("histogram");
  });

  test("records by anchor state come from storage at scrape time", async () => {
    const { f } = await scrape();
    expect(sampleValue(f, "docverify_records", { state: "anchored" })).toBe(1);
    expect(sampleValue(f, "docverify_records", { state: "accepted" })).toBe(1);
    expect(sampleValue(f, "docverify_records", { state: "abandoned" })).toBe(1);
    expect(sampleValue(f, "docverify_records", { state: "pending" })).toBe(0);
  });

  test("requests by route and status, durations, verdicts and 429s move as expected", async () => {
    const before = (await scrape()).f;
    const count = (f: typeof before, labels: Record<string, string>) => sampleValue(f, "docverify_http_requests_total", labels) ?? 0;

    expect((await request("/healthz")).status).toBe(200);
    expect((await verify(signedHash)).status).toBe(200); // verified_org, public tier
    expect((await verify(signedHash, liveKey)).status).toBe(200); // verified_org, organisation tier
    expect((await verify(docHashOf("metrics nothing"), liveKey)).status).toBe(200); // no_record
    const unknownId = "0196a3c2-0000-7000-8000-000000000000";
    const notFound = await request(`/v1/verifications/${unknownId}`, { headers: { authorization: `Bearer ${liveKey}` } });
    expect(notFound.status).toBe(404);
    expect((await request("/v1/no-such-thing")).status).toBe(404);
    // 429 from the IP bucket: limit 3 a minute, from a peer of its own.
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await verify(signedHash, undefined, "192.0.2.77")).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    // 429 from the key bucket: an unvalidated organisation's key has the anonymous limit.
    const keyStatuses = [];
    for (let i = 0; i < 4; i++) keyStatuses.push((await verify(signedHash, slowKey)).status);
    expect(keyStatuses).toEqual([200, 200, 200, 429]);

    const { f, text } = await scrape();
    const moved = (labels: Record<string, string>) => count(f, labels) - count(before, labels);
    expect(moved({ method: "GET", route: "/healthz", status: "200" })).toBe(1);
    expect(moved({ method: "POST", route: "/v1/verifications", status: "200" })).toBe(9);
    expect(moved({ method: "POST", route: "/v1/verifications", status: "429" })).toBe(2);
    expect(moved({ method: "GET", route: "/v1/verifications/:verificationId", status: "404" })).toBe(1);
    expect(moved({ method: "GET", route: "(unmatched)", status: "404" })).toBe(1);
    expect(count(f, { method: "GET", route: "/metrics", status: "200" })).toBeGreaterThan(0);
    const durations = (g: typeof f) => sampleValue(g, "docverify_http_request_duration_seconds_count", { method: "POST", route: "/v1/verifications" }) ?? 0;
    expect(durations(f) - durations(before)).toBe(11);

    const verdicts = (g: typeof f, verdict: string, tier: string) => sampleValue(g, "docverify_verifications_total", { verdict, tier }) ?? 0;
    expect(verdicts(f, "verified_org", "public") - verdicts(before, "verified_org", "public")).toBe(4);
    expect(verdicts(f, "verified_org", "organisation") - verdicts(before, "verified_org", "organisation")).toBe(4);
    expect(verdicts(f, "no_record", "organisation") - verdicts(before, "no_record", "organisation")).toBe(1);

    expect(sampleValue(f, "docverify_rate_limited_total", { bucket: "ip" })).toBe(1);
    expect(sampleValue(f, "docverify_rate_limited_total", { bucket: "key" })).toBe(1);
    expect(sampleValue(f, "docverify_rate_limited_total", { bucket: "org" })).toBe(0);

    // No label carries a key, a hash or an id, whatever the requests carried.
    for (const leak of LEAKS) expect(text).not.toMatch(leak);
    for (const secret of [liveKey, slowKey, signedHash, unknownId, ...recordIds]) expect(text).not.toContain(secret);
  });

  test("only the direct peer in DOCVERIFY_METRICS_ALLOW may scrape; others get the unknown route's 404", async () => {
    const unknown = await request("/no-such-route", {}, "203.0.113.5");
    const unknownBody = (await unknown.json()) as { error: { code: string; message: string } };
    for (const peer of ["203.0.113.5", "10.0.0.1", "127.0.0.2", "::2", undefined]) {
      const res = await app.http.handle(new Request("http://localhost/metrics"), peer);
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toContain("application/json");
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe(unknownBody.error.code);
      expect(body.error.message).toBe("No route /metrics.");
    }
    // The defaults: IPv4 and IPv6 loopback, and IPv4 loopback as a dual-stack socket reports it.
    for (const peer of ["127.0.0.1", "::1", "::ffff:127.0.0.1"]) await scrape(peer);
  });

  test("a forwarded request from an allowed peer is refused: it came through a proxy", async () => {
    // The reverse proxy the docs recommend runs on loopback: what it forwards is not the scraper.
    for (const headers of [{ "x-forwarded-for": "203.0.113.9" }, { "x-forwarded-for": "127.0.0.1" }, { forwarded: "for=203.0.113.9" }, { forwarded: "for=127.0.0.1" }] as Record<string, string>[]) {
      for (const peer of ["127.0.0.1", "::1"]) {
        const res = await request("/metrics", { headers }, peer);
        expect(res.status).toBe(404);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe("NOT_FOUND");
      }
    }
  });

  test("through a trusted proxy, only a forwarded client in DOCVERIFY_METRICS_ALLOW may scrape", async () => {
    // 203.0.113.0/24 is a trusted proxy in this app.
    for (const xff of ["198.51.100.7", "127.0.0.1, 198.51.100.7", "unknown", "127.0.0.1, unknown"]) {
      const res = await request("/metrics", { headers: { "x-forwarded-for": xff, "x-real-ip": "127.0.0.1" } }, "203.0.113.5");
      expect(res.status).toBe(404);
    }
    // Forwarded alone names nobody this service believes.
    expect((await request("/metrics", { headers: { forwarded: "for=127.0.0.1" } }, "203.0.113.5")).status).toBe(404);
    // An untrusted peer's X-Forwarded-For is never read.
    expect((await request("/metrics", { headers: { "x-forwarded-for": "127.0.0.1" } }, "198.51.100.7")).status).toBe(404);
    await scrape("203.0.113.5", { "x-forwarded-for": "127.0.0.1" });
    await scrape("203.0.113.5", { "x-forwarded-for": "198.51.100.7, [::1]:443", forwarded: "for=127.0.0.1" });
  });
});

describe("GET /metrics against docverify serve", () => {
  let admin: Core | undefined;
  afterAll(async () => {
    await admin?.close();
  });

  test(
    "a record created and anchored through the service moves records, backlog and anchor latency; log lines never hold a key",
    async () => {
      const data = tempDir();
      const svc = await startService({ env: { DOCVERIFY_DATA_DIR: data, DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: "300" } });
      admin = openCore({ config: parseConfig({ DOCVERIFY_DATA_DIR: data }), log: memoryLogger() });
      const org = await admin.organisations.create({ name: "Metrics Over HTTP Ltd", apiAccess: true, addon: true, validated: true }, "test");
      const minted = await admin.apiKeys.mint({ orgId: org.id, environment: "live" }, "test");
      const key = minted.key;
      const secret = key.slice("dv_live_".length + 16, "dv_live_".length + 16 + 32);
      const metrics = async () => {
        const res = await fetch(`${svc.url}/metrics`);
        expect(res.status).toBe(200);
        expect(res.headers.get("content-type")).toBe(CONTENT_TYPE);
        const text = await res.text();
        return { text, f: parseExposition(text) };
      };
      const hash = docHashOf(`metrics over http ${Math.random()}`);
      const created = (await (
        await createRecordOnceTopicExists(() =>
          fetch(`${svc.url}/v1/records`, {
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
            body: JSON.stringify({ originalDocHash: hash }),
          }),
        )
      ).json()) as { recordId: string };
      // Wait for the anchor, as a scraper would see it.
      await waitFor("the record anchored, in the scrape", async () => ((sampleValue((await metrics()).f, "docverify_records", { state: "anchored" }) ?? 0) >= 1 ? true : undefined), 30_000, 200);
      const verified = await fetch(`${svc.url}/v1/verifications`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ originalDocHash: hash }),
      });
      expect(((await verified.json()) as { verdict: string }).verdict).toBe("verified_org");
      const { f, text } = await metrics();
      expect(sampleValue(f, "docverify_http_requests_total", { method: "POST", route: "/v1/records", status: "201" })).toBe(1);
      expect(sampleValue(f, "docverify_verifications_total", { verdict: "verified_org", tier: "organisation" })).toBe(1);
      expect(sampleValue(f, "docverify_records", { state: "anchored" })).toBe(1);
      expect(sampleValue(f, "docverify_records", { state: "pending" })).toBe(0);
      // The record's message went in a batch: one batch message, of one leaf, and none left open.
      expect(sampleValue(f, "docverify_anchor_latency_seconds_count", { kind: "batch_message" })).toBe(1);
      expect(sampleValue(f, "docverify_anchor_latency_seconds_count", { kind: "record_message" })).toBeUndefined();
      expect(sampleValue(f, "docverify_anchor_latency_seconds_count", { kind: "topic_create" })).toBe(1);
      expect(sampleValue(f, "docverify_anchor_latency_seconds_sum", { kind: "batch_message" })).toBeGreaterThan(0);
      expect(sampleValue(f, "docverify_anchor_batches_total", {})).toBe(1);
      expect(sampleValue(f, "docverify_anchor_batch_leaves_count", {})).toBe(1);
      expect(sampleValue(f, "docverify_anchor_batch_leaves_sum", {})).toBe(1);
      expect(sampleValue(f, "docverify_anchor_open_batches", {})).toBe(0);
      expect(sampleValue(f, "docverify_anchor_open_batch_leaves", {})).toBe(0);
      expect(sampleValue(f, "docverify_anchor_oldest_waiting_seconds", {})).toBe(0);
      expect(sampleValue(f, "docverify_ledger_errors_total", { kind: "unknown" })).toBe(0);
      for (const leak of LEAKS) expect(text).not.toMatch(leak);
      expect(text).not.toContain(created.recordId);

      // Through a reverse proxy on loopback (X-Forwarded-For set), the scraper is not loopback: refused.
      expect((await fetch(`${svc.url}/metrics`, { headers: { "x-forwarded-for": "203.0.113.5" } })).status).toBe(404);

      await svc.stop();
      const lines = svc.logLines();
      const requests = lines.filter((l) => l.msg === "request");
      expect(requests.length).toBeGreaterThan(3);
      const keyed = requests.filter((l) => l.route === "/v1/records" || l.route === "/v1/verifications");
      expect(keyed.length).toBeGreaterThan(0);
      for (const l of keyed) expect(l.key).toBe(`dv_live_${minted.keyId}`);
      const stdout = lines.map((l) => JSON.stringify(l)).join("\n");
      expect(stdout).not.toContain(key);
      expect(stdout).not.toContain(secret);
      expect(svc.stderr()).not.toContain(secret);
    },
    90_000,
  );

  test("with DOCVERIFY_METRICS_ALLOW narrowed past loopback, a local scraper is refused; a trusted proxy's allowed client is not", async () => {
    const svc = await startService({ env: { DOCVERIFY_DATA_DIR: tempDir(), DOCVERIFY_METRICS_ALLOW: "10.0.0.0/8", DOCVERIFY_TRUSTED_PROXIES: "127.0.0.1/32" } });
    try {
      for (const headers of [{}, { "x-forwarded-for": "203.0.113.5" }, { "x-forwarded-for": "10.1.2.3, 203.0.113.5" }, { forwarded: "for=10.1.2.3" }] as Record<string, string>[]) {
        const res = await fetch(`${svc.url}/metrics`, { headers });
        expect(res.status).toBe(404);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe("NOT_FOUND");
      }
      // 127.0.0.1 is a trusted proxy and the client it forwards for is in the allow list.
      expect((await fetch(`${svc.url}/metrics`, { headers: { "x-forwarded-for": "10.1.2.3" } })).status).toBe(200);
      expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);
      await svc.stop();
      const refused = svc.logLines().filter((l) => l.msg === "request" && l.route === "/metrics");
      expect(refused.map((l) => l.status)).toEqual([404, 404, 404, 404, 200]);
    } finally {
      await svc.stop();
    }
  }, 60_000);
});
