/**
 * The command-line shells' GET (src/verifier/http-get.ts): what the mirror reader relies on of
 * fetch (status, body, redirects, the abort signal, errors), and the size cap fetch lacks.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { httpGet, MAX_BODY_BYTES } from "../../src/verifier/http-get.ts";

const big = "x".repeat(MAX_BODY_BYTES + 1);
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const url = new URL(req.url);
    switch (url.pathname) {
      case "/ok":
        return Response.json({ accept: req.headers.get("accept"), ok: true });
      case "/missing":
        return Response.json({ _status: { messages: [{ message: "Not found" }] } }, { status: 404 });
      case "/redirect":
        return new Response(null, { status: 302, headers: { location: "/ok" } });
      case "/loop":
        return new Response(null, { status: 307, headers: { location: "/loop" } });
      case "/big":
        return new Response(big);
      case "/slow":
        await Bun.sleep(5_000);
        return new Response("late");
      default:
        return new Response("?", { status: 500 });
    }
  },
});
afterAll(() => server.stop(true));
const base = `http://127.0.0.1:${server.port}`;

describe("httpGet", () => {
  test("a 200: its status and its body's text, with the headers asked for", async () => {
    const res = await httpGet(`${base}/ok`, { headers: { accept: "application/json" } });
    expect(res.status).toBe(200);
    expect(JSON.parse(await res.text())).toEqual({ accept: "application/json", ok: true });
  });

  test("a 404 is an answer, not an error", async () => {
    const res = await httpGet(`${base}/missing`);
    expect(res.status).toBe(404);
    expect(await res.text()).toContain("Not found");
  });

  test("a redirect is followed, as fetch does; more than five is an error", async () => {
    const res = await httpGet(`${base}/redirect`);
    expect(res.status).toBe(200);
    expect(JSON.parse(await res.text()).ok).toBe(true);
    await expect(httpGet(`${base}/loop`)).rejects.toThrow("more than 5 redirects");
  });

  test("an answer over the cap is refused rather than held in memory", async () => {
    await expect(httpGet(`${base}/big`)).rejects.toThrow("larger than 16 MiB");
  });

  test("the abort signal ends a request that does not answer", async () => {
    const started = performance.now();
    await expect(httpGet(`${base}/slow`, { signal: AbortSignal.timeout(100) })).rejects.toThrow();
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  test("a refused connection and a protocol other than http(s) reject", async () => {
    const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    const port = closed.port;
    closed.stop(true);
    await expect(httpGet(`http://127.0.0.1:${port}/`)).rejects.toThrow();
    await expect(httpGet("ftp://127.0.0.1/")).rejects.toThrow("unsupported protocol");
  });
});
