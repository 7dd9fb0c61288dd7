/**
 * Fuzzing `docverify serve` over raw sockets: at least 100,000 requests made by
 * mutating valid ones (methods, hosts, header sets, bodies, paths, query strings), from a
 * seeded generator so a failure can be replayed (`DOCVERIFY_FUZZ_SEED`, `DOCVERIFY_FUZZ_REQUESTS`).
 *
 * Two kinds of answer are counted apart. An application response carries `X-Request-Id`: it
 * must never be a 5xx other than a deliberate 503 with `Retry-After`, and every error is in the
 * envelope. The runtime's HTTP parser refuses some requests before the application sees them
 * (a bare 400, 431, 505, or a closed connection): those are counted and reported, never a 5xx.
 * Afterwards the server is alive, logged no error, and storage changed exactly as the
 * successful responses say: every refused request changed nothing.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Core } from "../src/app/core.ts";
import { cleanup, type ServiceProcess } from "./support/env.ts";
import { startServiceWithOrg } from "./support/service-with-org.ts";
import { rawRequest, requestText, type RawReply } from "./support/raw-http.ts";
import { docHashOf } from "./support/records-fixture.ts";
import { createRecordOnceTopicExists } from "./support/topic.ts";
import { waitFor } from "./support/wait.ts";
import { seededRandom } from "./support/random.ts";

const REQUESTS = Number(process.env.DOCVERIFY_FUZZ_REQUESTS ?? 100_000);
const SEED = Number(process.env.DOCVERIFY_FUZZ_SEED ?? 20261124);
const CONCURRENCY = 48;

afterAll(cleanup);

let svc: ServiceProcess;
let port: number;
let admin: Core;
let key: string;
let readOnlyKey: string;
let recordIds: string[] = [];
const HASHES = Array.from({ length: 16 }, (_, i) => docHashOf(`fuzz ${i}`));

beforeAll(async () => {
  let org: { id: string };
  ({ svc, port, admin, key, org } = await startServiceWithOrg({
    orgName: 'Fuzz <Ltd> & "Co"',
    revoke: true,
    env: {
      DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: "100",
      DOCVERIFY_RATE_LIMIT_ANONYMOUS: "100000000",
      DOCVERIFY_RATE_LIMIT_KEY: "100000000",
      DOCVERIFY_RATE_LIMIT_ORG: "100000000",
      DOCVERIFY_TRUSTED_PROXIES: "127.0.0.0/8",
    },
  }));
  readOnlyKey = (await admin.apiKeys.mint({ orgId: org.id, environment: "test" }, "test")).key;
  await createRecordOnceTopicExists(() =>
    rawRequest(port, requestText("POST", "/v1/records", { headers: [["Authorization", `Bearer ${key}`]], body: JSON.stringify({ originalDocHash: HASHES[0] }) })),
  );
  for (const h of HASHES) {
    const r = await rawRequest(port, requestText("POST", "/v1/records", { headers: [["Authorization", `Bearer ${key}`]], body: JSON.stringify({ originalDocHash: h, filename: "a.pdf" }) }));
    recordIds.push((JSON.parse(r.body) as { recordId: string }).recordId);
  }
  // Revocation needs consensus: wait for every record to be anchored.
  await waitFor("anchoring", () => (admin.db.$client.query("SELECT count(*) AS n FROM records WHERE anchor_state != 'anchored'").get() as { n: number }).n === 0 || undefined, 30_000);
}, 90_000);


interface Template {
  method: string;
  path: string;
  auth?: "key" | "readonly";
  body?: string;
}

function templates(): Template[] {
  const id = recordIds[3]!;
  return [
    { method: "GET", path: "/healthz" },
    { method: "GET", path: "/readyz" },
    { method: "GET", path: "/v1/openapi.json" },
    { method: "GET", path: "/docs" },
    { method: "GET", path: "/docs/assets/init.js" },
    { method: "GET", path: "/metrics" },
    { method: "POST", path: "/v1/verifications", body: JSON.stringify({ originalDocHash: HASHES[1] }) },
    { method: "POST", path: "/v1/verifications", auth: "key", body: JSON.stringify({ originalDocHash: HASHES[2], reference: "ref-1" }) },
    { method: "POST", path: "/v1/verifications", auth: "readonly", body: JSON.stringify({ originalDocHash: docHashOf("nothing") }) },
    { method: "GET", path: "/v1/verifications?limit=5", auth: "key" },
    { method: "GET", path: `/v1/verifications?verdict=verified_org&originalDocHash=${HASHES[2]}&from=2020-01-01T00:00:00Z`, auth: "key" },
    { method: "GET", path: "/v1/verifications/0190f5c2-0000-7000-8000-000000000000", auth: "key" },
    { method: "POST", path: "/v1/records", auth: "key", body: JSON.stringify({ originalDocHash: HASHES[4], filename: "contract.pdf" }) },
    { method: "POST", path: `/v1/records/${id}/revoke`, auth: "key", body: JSON.stringify({ reason: "SUPERSEDED" }) },
    { method: "GET", path: `/verify/${recordIds[5]!}` },
  ];
}

const METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE", "get", "Post", "FOO", "CONNECT", "PROPFIND", "M-SEARCH"];
const HOSTS = ["localhost", "dv", "x", "", "a b", "a/b", "a?b", "a#b", "a@b", "[::1]", "[::1]:8080", "a:b", "999.1.1.1", "%41", "é", "dv.example:0", "xn--a", "a\tb", "localhost:99999"];
const PATH_BITS = ["", "/", "//", "/.", "/..", "/%2e%2e", "/%00", "/%2F", "/é", "/" + "a".repeat(300), "/__proto__", "/constructor", "/%", "/;x", "/:id", "/*", "/v1", "/v2", "/zz"];
const QUERIES = ["", "?", "?limit=05", "?limit=+5", "?limit=5.0", "?limit=101", "?__proto__=1", "?constructor=1", "?limit=1&limit=2", "?after=%%%", "?after=AAAA", "?from=2030-01-01T00:00:00Z&to=2020-01-01T00:00:00Z", "?verdict=nope", "?a=" + "b".repeat(2000), "?%00=1", "#frag"];
const AUTHS = ["Bearer dv_live_", "Bearer dv_live_0000000000000000aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa000000", "Basic dXNlcjpwYXNz", "bearer", "Bearer  ", "Bearer a, Bearer b", "Token x"];
const BODIES = [
  "",
  "{",
  "null",
  "[]",
  '"x"',
  "1e999",
  "{}",
  '{"originalDocHash":"sha256:XYZ"}',
  '{"originalDocHash":null}',
  '{"__proto__":{"admin":true},"originalDocHash":"sha256:' + "a".repeat(64) + '"}',
  '{"originalDocHash":"sha256:' + "a".repeat(64) + '","filename":"\\u0000"}',
  '{"originalDocHash":"sha256:' + "a".repeat(64) + '","reference":"' + "r".repeat(200) + '"}',
  '{"reason":"NOPE"}',
  "[".repeat(5000),
  '{"a":' + "1".repeat(9000) + "}",
  "\xff\xfe\x00garbage",
];

function mutate(t: Template, rand: () => number): { text: string; method: string } {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  let method = t.method;
  let path = t.path;
  let host: string | null = "localhost";
  const headers: [string, string][] = [];
  if (t.auth === "key") headers.push(["Authorization", `Bearer ${key}`]);
  if (t.auth === "readonly") headers.push(["Authorization", `Bearer ${readOnlyKey}`]);
  let body = t.body;
  // Some record creations are for a new hash, so committed writes meet every mutation too.
  if (t.path === "/v1/records" && rand() < 0.2) {
    const hex = Array.from({ length: 8 }, () => Math.floor(rand() * 2 ** 32).toString(16).padStart(8, "0")).join("");
    body = JSON.stringify({ originalDocHash: `sha256:${hex}`, filename: "fuzz.pdf" });
  }
  let declared: string | null = null;
  let chunked = false;
  let version = "HTTP/1.1";
  const mutations = 1 + Math.floor(rand() * 3);
  for (let m = 0; m < mutations; m++) {
    switch (Math.floor(rand() * 16)) {
      case 0:
        method = pick(METHODS);
        break;
      case 1:
        host = rand() < 0.1 ? null : pick(HOSTS);
        if (host === null) version = "HTTP/1.0";
        break;
      case 2: {
        const cut = Math.floor(rand() * (path.length + 1));
        path = path.slice(0, cut) + pick(PATH_BITS) + path.slice(cut);
        if (!path.startsWith("/")) path = "/" + path;
        break;
      }
      case 3:
        path = (path.split("?")[0] ?? "/") + pick(QUERIES);
        break;
      case 4:
        headers.length = 0;
        if (rand() < 0.7) headers.push(["Authorization", pick(AUTHS)]);
        break;
      case 5:
        headers.push(["Authorization", `Bearer ${key}`]);
        break;
      case 6:
        headers.push(["Origin", "https://evil.example"]);
        break;
      case 7:
        headers.push(["X-Forwarded-For", pick(["203.0.113.9", "unknown", "1.2.3.4:5", "[2001:db8::1]:80", "garbage, 127.0.0.1", "", "::1"])]);
        if (rand() < 0.3) headers.push(["Forwarded", "for=127.0.0.1"]);
        break;
      case 8:
        headers.push(["Content-Type", pick(["application/json", "text/plain", "application/x-www-form-urlencoded", "application/problem+json; charset=utf-8", "", "application/json; charset=latin1"])]);
        break;
      case 9:
        body = pick(BODIES);
        break;
      case 10:
        declared = pick(["-1", "1e3", "0", "99999999999", "1048577", "2", " 5", "5,5", "abc"]);
        break;
      case 11:
        chunked = true;
        break;
      case 12:
        headers.push([pick(["X-Junk", "Accept", "Cookie", "Expect", "If-None-Match", "Range"]), pick(["x".repeat(100), "100-continue", "bytes=0-1", "*/*", "\u00e9"])]);
        break;
      case 13:
        if (body !== undefined && body.length > 2) body = body.slice(0, Math.floor(rand() * body.length));
        break;
      case 14:
        version = pick(["HTTP/1.0", "HTTP/2.0", "HTTP/1.2", "HTTP/0.9", "http/1.1", "HTTP/1.1 x"]);
        break;
      case 15:
        headers.push(["X-Large", "y".repeat(pick([5000, 20_000, 70_000]))]);
        break;
    }
  }
  const lines = [`${method} ${path} ${version}`];
  if (host !== null) lines.push(`Host: ${host}`);
  for (const [k, v] of headers) lines.push(`${k}: ${v}`);
  if (body !== undefined && !chunked) lines.push(`Content-Length: ${declared ?? Buffer.byteLength(body, "latin1")}`);
  else if (declared !== null) lines.push(`Content-Length: ${declared}`);
  if (chunked) lines.push("Transfer-Encoding: chunked");
  lines.push("Connection: close");
  let text = lines.join("\r\n") + "\r\n\r\n";
  if (body !== undefined) text += chunked ? `${Buffer.byteLength(body, "latin1").toString(16)}\r\n${body}\r\n0\r\n\r\n` : body;
  return { text, method };
}

interface Tally {
  application: Map<number, number>;
  parser: Map<string, number>;
  created: number;
  revoked: number;
  logged: number;
  problems: string[];
}

function judge(reply: RawReply, method: string, request: string, tally: Tally): void {
  const requestId = reply.headers.get("x-request-id");
  if (requestId === undefined) {
    const kind = reply.status === null ? (reply.raw === "" ? "closed without a byte" : "unparseable") : String(reply.status);
    tally.parser.set(kind, (tally.parser.get(kind) ?? 0) + 1);
    if (reply.status !== null && reply.status >= 500 && reply.status !== 505) tally.problems.push(`parser ${reply.status} for ${JSON.stringify(request.slice(0, 200))}`);
    return;
  }
  const status = reply.status!;
  tally.application.set(status, (tally.application.get(status) ?? 0) + 1);
  const problem = (what: string) => tally.problems.push(`${what}: ${status} ${JSON.stringify(reply.raw.slice(0, 300))} for ${JSON.stringify(request.slice(0, 300))}`);
  if (status >= 500 && !(status === 503 && reply.headers.has("retry-after"))) problem("application 5xx");
  const line = request.slice(0, request.indexOf("\r\n"));
  // The public verify pages are for people: their errors are HTML pages, by design.
  const page = / \/verify\//.test(line) && (reply.headers.get("content-type") ?? "").startsWith("text/html");
  if (status >= 400 && method.toUpperCase() !== "HEAD" && !page) {
    try {
      const e = (JSON.parse(reply.body) as { error?: { code?: unknown; message?: unknown } }).error;
      if (typeof e?.code !== "string" || typeof e.message !== "string") problem("error outside the envelope");
    } catch {
      problem("error body not JSON");
    }
    if (!(reply.headers.get("content-type") ?? "").includes("application/json")) problem("error without a JSON content type");
  }
  // What storage must show afterwards: only successful operations change it.
  if (status === 201) tally.created++; // only record creation answers 201
  if (status === 200 && line.startsWith("POST ") && line.includes("/revoke")) tally.revoked++;
  // Only POST answers with a verificationId log a row (the path may carry a trailing slash or a query).
  if (status === 200 && line.startsWith("POST ") && reply.body.includes('"verificationId"')) tally.logged++;
}

function counts(): { records: number; revoked: number; verifications: number; organisations: number; apiKeys: number; audit: number } {
  const q = (sql: string) => (admin.db.$client.query(sql).get() as { n: number }).n;
  return {
    records: q("SELECT count(*) AS n FROM records"),
    revoked: q("SELECT count(*) AS n FROM records WHERE revoked_at IS NOT NULL"),
    verifications: q("SELECT count(*) AS n FROM verifications"),
    organisations: q("SELECT count(*) AS n FROM organisations"),
    apiKeys: q("SELECT count(*) AS n FROM api_keys"),
    audit: q("SELECT count(*) AS n FROM audit_log"),
  };
}

test(`${REQUESTS} mutated requests: no application 5xx, every error in the envelope, the server alive, storage changed only by successes`, async () => {
  const before = counts();
  const rowsBefore = admin.db.$client.query("SELECT id, doc_hash, signed_at_ms, signature, seal_signature FROM records ORDER BY id").all();
  const rand = seededRandom(SEED);
  const base = templates();
  const tally: Tally = { application: new Map(), parser: new Map(), created: 0, revoked: 0, logged: 0, problems: [] };
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < REQUESTS) {
      next++;
      const { text, method } = mutate(base[Math.floor(rand() * base.length)]!, rand);
      judge(await rawRequest(port, text, { timeoutMs: 3000 }), method, text, tally);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;

  const applicationTotal = [...tally.application.values()].reduce((a, b) => a + b, 0);
  const parserTotal = [...tally.parser.values()].reduce((a, b) => a + b, 0);
  console.log(
    `fuzz: seed ${SEED}, ${REQUESTS} requests in ${seconds.toFixed(1)} s; application responses ${applicationTotal} ${JSON.stringify(Object.fromEntries([...tally.application].sort()))}; ` +
      `parser refusals ${parserTotal} ${JSON.stringify(Object.fromEntries(tally.parser))}`,
  );
  expect(tally.problems.slice(0, 10)).toEqual([]);
  expect(applicationTotal + parserTotal).toBe(REQUESTS);
  expect(applicationTotal).toBeGreaterThan(REQUESTS / 2);

  // Alive, and nothing it did was an error.
  const health = await fetch(`${svc.url}/healthz`);
  expect(health.status).toBe(200);
  const lines = svc.logLines();
  expect(lines.filter((l) => l.level === "error").slice(0, 5)).toEqual([]);
  expect(lines.filter((l) => l.msg === "request" && typeof l.status === "number" && l.status >= 500 && l.status !== 503)).toEqual([]);

  // Storage moved exactly by the successes (the verification log is group-committed: wait for it).
  const expected = { ...before, records: before.records + tally.created, revoked: before.revoked + tally.revoked, verifications: before.verifications + tally.logged };
  await waitFor("the verification log to flush", () => (counts().verifications === expected.verifications ? true : undefined), 10_000).catch(() => undefined);
  expect(counts()).toEqual(expected);
  // The records that existed are intact: same ids, hashes, signed times and signatures.
  const rowsAfter = admin.db.$client.query("SELECT id, doc_hash, signed_at_ms, signature, seal_signature FROM records ORDER BY id").all();
  for (const row of rowsBefore) expect(rowsAfter).toContainEqual(row);
}, 900_000);
