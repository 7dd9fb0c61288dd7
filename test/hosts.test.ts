/**
 * docs/architecture.md "HTTP": every request, whatever its `Host` header (absent, empty, malformed, one
 * character long, an IPv6 literal, with a port), is routed by its path and answered through
 * the envelope, the log line and `X-Request-Id`; a write is never answered 500 after it
 * committed. Every route, over raw sockets against `docverify serve`, and in-process.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Core } from "../src/app/core.ts";
import { cleanup, testApp, type ServiceProcess } from "./support/env.ts";
import { startServiceWithOrg } from "./support/service-with-org.ts";
import { rawRequest, requestText, type RawReply } from "./support/raw-http.ts";
import { docHashOf } from "./support/records-fixture.ts";
import { createRecordOnceTopicExists } from "./support/topic.ts";
import { waitFor } from "./support/wait.ts";

afterAll(cleanup);

/** `null`: no Host header at all, sent as HTTP/1.0 (HAProxy's default health check). */
const HOSTS: (string | null)[] = [
  null,
  "",
  "x",
  "ab",
  "api",
  "dv.x",
  "a b",
  "a/b",
  "a?b",
  "a#b",
  "a@b",
  "a:b",
  "999.1.1.1",
  "1.2.3.4.5",
  "xn--a",
  "%41",
  "[::1]",
  "[::1]:8080",
  "[2001:db8::1]:443",
  "127.0.0.1:1",
  "localhost:99999",
];
const UNKNOWN_ID = "0190f5c2-0000-7000-8000-000000000000";

let svc: ServiceProcess;
let port: number;
let admin: Core;
let key: string;

beforeAll(async () => {
  ({ svc, port, admin, key } = await startServiceWithOrg({
    orgName: "Hosts Ltd",
    revoke: true,
    env: {
      DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: "200",
      DOCVERIFY_RATE_LIMIT_ANONYMOUS: "100000",
      DOCVERIFY_RATE_LIMIT_KEY: "100000",
      DOCVERIFY_RATE_LIMIT_ORG: "100000",
    },
  }));
  await createRecordOnceTopicExists(() => send("dv.example", "POST", "/v1/records", { auth: true, body: { originalDocHash: docHashOf("warm-up") } }));
}, 60_000);

function send(host: string | null, method: string, target: string, options: { auth?: boolean; body?: unknown } = {}): Promise<RawReply> {
  const headers: [string, string][] = [];
  if (options.auth === true) headers.push(["Authorization", `Bearer ${key}`]);
  if (options.body !== undefined) headers.push(["Content-Type", "application/json"]);
  return rawRequest(
    port,
    requestText(method, target, {
      host,
      version: host === null ? "HTTP/1.0" : "HTTP/1.1",
      headers,
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    }),
  );
}

function expectAnswered(reply: RawReply, status: number, what: string): void {
  if (reply.status !== status) throw new Error(`${what}: expected ${status}, got ${reply.status}: ${reply.raw.slice(0, 300)}`);
  expect(reply.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  if (status >= 400) {
    expect(reply.headers.get("content-type")).toContain("application/json");
    expect(typeof (JSON.parse(reply.body) as { error: { code: string } }).error.code).toBe("string");
  }
}

const label = (host: string | null) => (host === null ? "no Host (HTTP/1.0)" : `Host ${JSON.stringify(host)}`);

describe("every route, whatever the Host header, against docverify serve", () => {
  for (const host of HOSTS) {
    test(`${label(host)}: each route answers as it would on an ordinary host`, async () => {
      const tag = `${label(host)}`;
      expectAnswered(await send(host, "GET", "/healthz"), 200, `${tag} GET /healthz`);
      expectAnswered(await send(host, "HEAD", "/healthz"), 200, `${tag} HEAD /healthz`);
      expectAnswered(await send(host, "GET", "/readyz"), 200, `${tag} GET /readyz`);
      expectAnswered(await send(host, "GET", "/v1/openapi.json"), 200, `${tag} GET /v1/openapi.json`);
      expectAnswered(await send(host, "GET", "/docs"), 200, `${tag} GET /docs`);
      expectAnswered(await send(host, "GET", "/docs/assets/init.js"), 200, `${tag} GET /docs/assets/init.js`);
      expectAnswered(await send(host, "GET", "/metrics"), 200, `${tag} GET /metrics`);

      const hash = docHashOf(`hosts ${host}`);
      const created = await send(host, "POST", "/v1/records", { auth: true, body: { originalDocHash: hash } });
      expectAnswered(created, 201, `${tag} POST /v1/records`);
      const recordId = (JSON.parse(created.body) as { recordId: string }).recordId;
      const again = await send(host, "POST", "/v1/records", { auth: true, body: { originalDocHash: hash } });
      expectAnswered(again, 200, `${tag} POST /v1/records again`);
      expect((JSON.parse(again.body) as { recordId: string }).recordId).toBe(recordId);

      const anonymous = await send(host, "POST", "/v1/verifications", { body: { originalDocHash: hash } });
      expectAnswered(anonymous, 200, `${tag} POST /v1/verifications`);
      expect((JSON.parse(anonymous.body) as { verdict: string }).verdict).toMatch(/^(no_record|pending_anchor|verified_org)$/);
      const logged = await send(host, "POST", "/v1/verifications", { auth: true, body: { originalDocHash: hash } });
      expectAnswered(logged, 200, `${tag} POST /v1/verifications with a key`);
      const verificationId = (JSON.parse(logged.body) as { verificationId: string }).verificationId;
      expectAnswered(await send(host, "GET", `/v1/verifications/${verificationId}`, { auth: true }), 200, `${tag} GET /v1/verifications/{id}`);
      expectAnswered(await send(host, "GET", `/v1/verifications?limit=5&verdict=no_record`, { auth: true }), 200, `${tag} GET /v1/verifications?…`);
      expectAnswered(await send(host, "GET", `/v1/verifications/${UNKNOWN_ID}`, { auth: true }), 404, `${tag} GET /v1/verifications/{unknown}`);
      expectAnswered(await send(host, "POST", `/v1/records/${UNKNOWN_ID}/revoke`, { auth: true, body: { reason: "SUPERSEDED" } }), 404, `${tag} revoke unknown`);
      expectAnswered(await send(host, "GET", `/verify/${recordId}`), 200, `${tag} GET /verify/{id}`);

      // Routing is by path: a path that only ends like a route is unknown, and creates nothing.
      expectAnswered(await send(host, "POST", "/zz/v1/records", { auth: true, body: { originalDocHash: docHashOf(`zz ${host}`) } }), 404, `${tag} POST /zz/v1/records`);
      expectAnswered(await send(host, "PUT", "/healthz"), 405, `${tag} PUT /healthz`);
      expectAnswered(await send(host, "GET", "/nowhere"), 404, `${tag} GET /nowhere`);
    });
  }

  test("every 201 is a committed record, nothing unmatched was created, and each request has its log line", async () => {
    const rows = admin.db.$client.query("SELECT doc_hash AS h FROM records").all() as { h: string }[];
    const hashes = new Set(rows.map((r) => r.h));
    for (const host of HOSTS) {
      expect(hashes.has(docHashOf(`hosts ${host}`))).toBe(true);
      expect(hashes.has(docHashOf(`zz ${host}`))).toBe(false);
    }
    // Log lines reach stdout shortly after their responses: wait for the last host's.
    const expectedUnmatched = HOSTS.length * 3;
    await waitFor("every request's log line", () => (svc.logLines().filter((l) => l.msg === "request" && l.route === "(unmatched)").length >= expectedUnmatched ? true : undefined));
    const lines = svc.logLines().filter((l) => l.msg === "request");
    expect(lines.filter((l) => l.status === 500)).toEqual([]);
    const created = lines.filter((l) => l.route === "/v1/records" && l.status === 201);
    expect(created.length).toBe(HOSTS.length + 1); // and the warm-up
    // Per host: POST /zz/v1/records and GET /nowhere (404), PUT /healthz (405); nothing else is unmatched.
    const unmatched = lines.filter((l) => l.route === "(unmatched)").map((l) => `${l.method} ${l.status}`);
    expect(unmatched.sort()).toEqual([...Array(HOSTS.length).fill("GET 404"), ...Array(HOSTS.length).fill("POST 404"), ...Array(HOSTS.length).fill("PUT 405")]);
    expect(svc.stderr()).not.toContain("Error");
  });
});

describe("short host names in-process", () => {
  test("hosts of one to four characters, IPv6 literals and ports route like any other", async () => {
    const { app } = await testApp();
    for (const origin of ["http://x", "http://ab", "http://api", "http://dv.x", "https://x", "https://ab", "http://[::1]", "http://[::1]:8", "http://x:1", "http://a.b:65535"]) {
      const health = await app.http.handle(new Request(`${origin}/healthz`), "127.0.0.1");
      expect(health.status).toBe(200);
      const verify = await app.http.handle(
        new Request(`${origin}/v1/verifications`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ originalDocHash: docHashOf("x") }) }),
        "127.0.0.1",
      );
      expect(verify.status).toBe(200);
      expect((await app.http.handle(new Request(`${origin}/zz/v1/verifications`, { method: "POST" }), "127.0.0.1")).status).toBe(404);
    }
  });
});
