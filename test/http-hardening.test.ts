/**
 * HTTP defects, each as a caller meets it: prototype names as asset names, a client
 * that disconnects mid-body, a body declared over the service's ceiling, framing the runtime's
 * parser refuses, readiness detail, a private key that does not open, the docs page's headers,
 * IPv6 and forwarded clients' rate-limit buckets.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import type { Core } from "../src/app/core.ts";
import { createHttp } from "../src/http/server.ts";
import { memoryLogger } from "../src/lib/log.ts";
import { giveTopics } from "./support/access-matrix.ts";
import { cleanup, testApp, type ServiceProcess } from "./support/env.ts";
import { startServiceWithOrg } from "./support/service-with-org.ts";
import { rawRequest } from "./support/raw-http.ts";
import { docHashOf } from "./support/records-fixture.ts";
import { waitFor } from "./support/wait.ts";
import net from "node:net";

afterAll(cleanup);

describe("documentation assets", () => {
  test("prototype names are unknown assets: 404 in the envelope, never 500", async () => {
    const { request } = await testApp();
    for (const name of ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"]) {
      const res = await request(`/docs/assets/${name}`);
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("NOT_FOUND");
    }
  });

  test("the docs page and its assets carry CSP, X-Frame-Options and nosniff; the page has no inline script", async () => {
    const { request } = await testApp();
    const page = await request("/docs");
    expect(page.status).toBe(200);
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    const html = await page.text();
    // Every script element loads a file; none has inline text.
    for (const m of html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)) {
      expect(m[1]).toMatch(/src="\/docs\/assets\//);
      expect(m[2]!.trim()).toBe("");
    }
    for (const asset of ["swagger-ui-bundle.js", "swagger-ui.css", "init.js"]) {
      const res = await request(`/docs/assets/${asset}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    }
  });
});

describe("readiness", () => {
  test("/readyz names the failed check with its public reason only; the detail (hosts, ports) goes to the log once", async () => {
    const log = memoryLogger();
    let ledger: true | string = "ledger unreachable: connect ECONNREFUSED 10.20.30.40:50211";
    const http = createHttp({
      log,
      version: "test",
      readiness: { storage: () => true, ledger: () => ledger, broken: () => Promise.reject(new Error("open /var/lib/docverify/x: EACCES")) },
    });
    for (let i = 0; i < 3; i++) {
      const res = await http.handle(new Request("http://localhost/readyz"), "203.0.113.1");
      expect(res.status).toBe(503);
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({ status: "not_ready", checks: { storage: "ok", ledger: "ledger unreachable", broken: "failed" } });
      expect(text).not.toContain("10.20.30.40");
      expect(text).not.toContain("/var/lib");
    }
    const warnings = log.lines.filter((l) => l.msg === "readiness check fails");
    expect(warnings.map((l) => l.check)).toEqual(["ledger", "broken"]);
    expect(JSON.stringify(warnings)).toContain("10.20.30.40:50211");
    ledger = true;
    const ok = await http.handle(new Request("http://localhost/readyz"), "203.0.113.1");
    expect(((await ok.json()) as { checks: Record<string, string> }).checks.ledger).toBe("ok");
    expect(log.lines.filter((l) => l.msg === "readiness check passes again").map((l) => l.check)).toEqual(["ledger"]);
  });
});

describe("a private key that does not open", () => {
  test("record creation answers 500 INTERNAL_ERROR, commits nothing, and the operator's log says which key and why", async () => {
    const { app, log, request } = await testApp();
    const org = await app.organisations.create({ name: "Broken Key Ltd", apiAccess: true, addon: true, validated: true }, "test");
    giveTopics(app);
    const key = (await app.apiKeys.mint({ orgId: org.id, environment: "live" }, "test")).key;
    // Tamper with the organisation's sealed key: AES-GCM refuses it.
    app.db.$client.run(
      "UPDATE signing_keys SET sealed_seed = substr(sealed_seed, 1, length(sealed_seed) - 1) || x'00' WHERE fingerprint = (SELECT system_key_fingerprint FROM organisations WHERE id = ?)",
      [org.id],
    );
    const res = await request("/v1/records", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ originalDocHash: docHashOf("broken key") }),
    });
    expect(res.status).toBe(500);
    const id = res.headers.get("x-request-id");
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("INTERNAL_ERROR");
    const line = log.lines.find((l) => l.msg === "internal error" && l.requestId === id);
    expect(line).toBeDefined();
    expect(line!.error).toMatchObject({ name: "KeyDecryptionError", reason: "authentication_failed" });
    expect(app.db.$client.query("SELECT count(*) AS n FROM records").get()).toEqual({ n: 0 });
  });
});

describe("rate-limit buckets", () => {
  const verify = (request: (p: string, i?: RequestInit, peer?: string) => Promise<Response>, peer: string, headers: Record<string, string> = {}) =>
    request("/v1/verifications", { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ originalDocHash: docHashOf("bucket") }) }, peer);

  test("IPv6 clients share one anonymous bucket per /64; another /64 has its own", async () => {
    const { request } = await testApp({ env: { DOCVERIFY_RATE_LIMIT_ANONYMOUS: "3" } });
    for (const peer of ["2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2:ffff::9"]) expect((await verify(request, peer)).status).toBe(200);
    const refused = await verify(request, "2001:db8:1:2::77");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).not.toBeNull();
    expect((await verify(request, "2001:db8:1:3::1")).status).toBe(200);
    expect((await verify(request, "192.0.2.1")).status).toBe(200);
  });

  test("behind a trusted proxy that writes ports or `unknown`, clients do not share the proxy's budget", async () => {
    const { request } = await testApp({ env: { DOCVERIFY_RATE_LIMIT_ANONYMOUS: "2", DOCVERIFY_TRUSTED_PROXIES: "10.0.0.0/8" } });
    const proxy = "10.0.0.5";
    for (let i = 0; i < 2; i++) expect((await verify(request, proxy, { "x-forwarded-for": "203.0.113.9:4711" })).status).toBe(200);
    expect((await verify(request, proxy, { "x-forwarded-for": "203.0.113.9:4712" })).status).toBe(429);
    // Other clients, and clients the proxy cannot name, keep their own budgets.
    expect((await verify(request, proxy, { "x-forwarded-for": "203.0.113.10:4711" })).status).toBe(200);
    expect((await verify(request, proxy, { "x-forwarded-for": "[2001:db8::5]:443" })).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await verify(request, proxy, { "x-forwarded-for": "unknown" })).status).toBe(200);
    expect((await verify(request, proxy, { "x-forwarded-for": "unknown" })).status).toBe(429);
    expect((await verify(request, proxy)).status).toBe(200);
  });
});

describe("framing and disconnects against docverify serve", () => {
  let svc: ServiceProcess;
  let port: number;
  let admin: Core;
  let key: string;

  beforeAll(async () => {
    ({ svc, port, admin, key } = await startServiceWithOrg({ orgName: "Framing Ltd", env: { DOCVERIFY_RATE_LIMIT_ANONYMOUS: "100000" } }));
  }, 60_000);

  test("a body declared over 1 MiB is refused by the application: 413 in the envelope, with X-Request-Id and a log line", async () => {
    for (const [method, path] of [["POST", "/v1/verifications"], ["POST", "/v1/records"], ["GET", "/healthz"]] as const) {
      const reply = await rawRequest(port, `${method} ${path} HTTP/1.1\r\nHost: dv.example\r\nContent-Type: application/json\r\nContent-Length: 1048577\r\n\r\n{"a":`);
      expect(reply.status).toBe(413);
      expect(JSON.parse(reply.body)).toMatchObject({ error: { code: "PAYLOAD_TOO_LARGE" } });
      const id = reply.headers.get("x-request-id")!;
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      await waitFor("the log line", () => svc.logLines().find((l) => l.requestId === id && l.status === 413));
    }
    expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);
  });

  test("malformed Content-Length values are refused by the runtime's parser, before the application (docs/operations.md)", async () => {
    for (const value of ["-1", "1e3", "0x10", "1 2", "abc"]) {
      const reply = await rawRequest(port, `POST /v1/verifications HTTP/1.1\r\nHost: dv.example\r\nContent-Length: ${value}\r\n\r\n{}`);
      expect(reply.status).toBe(400);
      expect(reply.headers.has("x-request-id")).toBe(false);
    }
    expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);
  });

  test("a client that disconnects mid-body is logged at info as 499, never as an error or a 500", async () => {
    for (const [path, auth] of [["/v1/verifications", false], ["/v1/records", true]] as const) {
      await new Promise<void>((resolve) => {
        const socket = net.connect(port, "127.0.0.1", () => {
          socket.write(
            `POST ${path} HTTP/1.1\r\nHost: dv.example\r\nContent-Type: application/json\r\n${auth ? `Authorization: Bearer ${key}\r\n` : ""}Content-Length: 500\r\n\r\n{"originalDocHash":`,
          );
          // Wait until the service has the request (its handler is reading the body), then go.
          // A fixed wait on purpose: the service gives no sign of a request until it ends (its
          // log line is written then), so there is no event to wait on from outside the process.
          setTimeout(() => {
            socket.destroy();
            resolve();
          }, 150);
        });
      });
      const line = await waitFor(`the abandoned ${path} line`, () => svc.logLines().find((l) => l.msg === "request abandoned by the client" && l.route === path));
      expect(line).toMatchObject({ level: "info", status: 499 });
    }
    const lines = svc.logLines();
    expect(lines.filter((l) => l.level === "error")).toEqual([]);
    expect(lines.filter((l) => l.status === 500)).toEqual([]);
    expect(admin.db.$client.query("SELECT count(*) AS n FROM records").get()).toEqual({ n: 0 });
  });
});

describe("the wrapper's last resort", () => {
  test("a route that throws after the client left is a 499, not an error", async () => {
    const log = memoryLogger();
    const controller = new AbortController();
    const http = createHttp({
      log,
      version: "test",
      readiness: {},
      plugins: [
        new Elysia().get("/probe/left", () => {
          controller.abort();
          throw new DOMException("The connection was closed.", "AbortError");
        }),
      ],
    });
    const res = await http.handle(new Request("http://localhost/probe/left", { signal: controller.signal }), "127.0.0.1");
    expect(res.status).toBe(499);
    expect(log.lines.filter((l) => l.level === "error")).toEqual([]);
    expect(log.lines.find((l) => l.msg === "request abandoned by the client")).toMatchObject({ route: "/probe/left", status: 499 });
  });
});
