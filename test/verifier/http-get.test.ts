/**
 * The command-line shells' GET (src/verifier/http-get.ts): what the mirror reader relies on of
 * fetch (status, body, redirects, the abort signal, errors), and the size cap fetch lacks; the
 * redirects it refuses (a mirror node's to another origin; the identity document's to anything but
 * https), and where it connects: the addresses a mirror node's host was counted by, and
 * `--connect-to`'s, while the request stays for the URL's host.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createHttpGet, httpGet, MAX_BODY_BYTES } from "../../src/verifier/http-get.ts";
import { BUN, ROOT, cleanup, onCleanup, tempDir } from "../support/env.ts";
import { nextLoopback } from "../support/loopback.ts";
import { createTestCa } from "../support/test-ca.ts";

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
      case "/elsewhere":
        return new Response(null, { status: 302, headers: { location: `${url.searchParams.get("to")}` } });
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
afterAll(cleanup);
const base = `http://127.0.0.1:${server.port}`;

/** A server on a loopback address of its own that answers every request with its Host header, recording the paths asked. */
function hostEcho(hostname = nextLoopback(), tls?: { key: string; cert: string }) {
  const requests: string[] = [];
  const s = Bun.serve({
    port: 0,
    hostname,
    ...(tls === undefined ? {} : { tls }),
    fetch: (req) => {
      const url = new URL(req.url);
      requests.push(url.pathname);
      if (url.pathname === "/redirect") return new Response(null, { status: 301, headers: { location: "/host" } });
      return Response.json({ host: req.headers.get("host"), path: url.pathname });
    },
  });
  onCleanup(() => s.stop(true));
  return { address: hostname, port: s.port!, url: `${tls === undefined ? "http" : "https"}://${hostname}:${s.port}`, requests };
}

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

describe("redirects", () => {
  test("a mirror node's redirect to another origin is refused, and the other origin never asked", async () => {
    const other = hostEcho();
    const sameAddressOtherPort = hostEcho("127.0.0.1");
    for (const to of [`${other.url}/host`, `${sameAddressOtherPort.url}/host`]) {
      const origin = new URL(to).origin;
      const refused = `redirected to ${origin}: another host (name it with --mirror if you trust it)`;
      await expect(httpGet(`${base}/elsewhere?to=${encodeURIComponent(to)}`)).rejects.toThrow(refused);
      await expect(httpGet(`${base}/elsewhere?to=${encodeURIComponent(to)}`, { redirects: "same-origin" })).rejects.toThrow(refused);
    }
    expect([other.requests, sameAddressOtherPort.requests]).toEqual([[], []]);
  });

  test("the identity document's redirect (redirects: https) is not followed to http", async () => {
    const other = hostEcho();
    await expect(httpGet(`${base}/elsewhere?to=${encodeURIComponent(`${other.url}/host`)}`, { redirects: "https" })).rejects.toThrow(`redirected to ${other.url}, which is not https`);
    expect(other.requests).toEqual([]);
  });

  test("the identity document's redirect to https is followed, the certificate checked for the name (a process trusting a test CA)", async () => {
    const ca = createTestCa();
    const docs = hostEcho(nextLoopback(), ca.serverCertificate(["docs.test"]));
    const target = `https://docs.test:${docs.port}/.well-known/docverify.json`;
    const from = `${base}/elsewhere?to=${encodeURIComponent(target)}`;
    // NODE_EXTRA_CA_CERTS is read when a process starts: the GET runs in one started with it.
    const script = join(tempDir("docverify-http-get-"), "get.ts");
    writeFileSync(
      script,
      `import { createHttpGet } from ${JSON.stringify(join(ROOT, "src", "verifier", "http-get.ts"))};
const [url, redirects, hostPort, address, port] = process.argv.slice(2);
const get = createHttpGet(new Map([[hostPort, { address, port: Number(port) }]]));
try {
  const res = await get(url, { redirects });
  console.log(JSON.stringify({ status: res.status, body: JSON.parse(await res.text()) }));
} catch (e) {
  console.log(JSON.stringify({ error: e.message }));
}
`,
    );
    const run = async (redirects: string, env: Record<string, string>) => {
      const p = Bun.spawn([BUN, script, from, redirects, `docs.test:${docs.port}`, docs.address, String(docs.port)], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env }, stdout: "pipe", stderr: "pipe" });
      const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      expect(err).toBe("");
      return JSON.parse(out);
    };
    expect(await run("https", { NODE_EXTRA_CA_CERTS: ca.caFile })).toEqual({ status: 200, body: { host: `docs.test:${docs.port}`, path: "/.well-known/docverify.json" } });
    expect(docs.requests).toEqual(["/.well-known/docverify.json"]);
    // Without the CA the certificate is not trusted: the redirect was followed, and failed there.
    expect((await run("https", {})).error).toMatch(/certificate|self.signed|issuer/i);
    // A mirror node's GET does not follow it at all.
    expect(await run("same-origin", { NODE_EXTRA_CA_CERTS: ca.caFile })).toEqual({ error: `redirected to https://docs.test:${docs.port}: another host (name it with --mirror if you trust it)` });
    expect(docs.requests).toEqual(["/.well-known/docverify.json"]);
  }, 30_000);
});

describe("where it connects", () => {
  test("init.addresses pins the URL's host: a name that resolves nowhere reaches the address, the request still names the host", async () => {
    const mirror = hostEcho();
    const url = `http://mirror.invalid:${mirror.port}`;
    const res = await httpGet(`${url}/host`, { addresses: [mirror.address] });
    expect(res.status).toBe(200);
    expect(JSON.parse(await res.text())).toEqual({ host: `mirror.invalid:${mirror.port}`, path: "/host" });
    // Through a redirect within the origin too.
    expect(JSON.parse(await (await httpGet(`${url}/redirect`, { addresses: [mirror.address] })).text())).toEqual({ host: `mirror.invalid:${mirror.port}`, path: "/host" });
    // Without it, the name is looked up, and does not resolve.
    await expect(httpGet(`${url}/host`)).rejects.toThrow();
    expect(mirror.requests).toEqual(["/host", "/redirect", "/host"]);
  });

  test("init.addresses are tried in turn until one connects", async () => {
    const mirror = hostEcho();
    const nobody = nextLoopback(); // an address where nothing listens on that port
    const res = await httpGet(`http://mirror.invalid:${mirror.port}/host`, { addresses: [nobody, mirror.address] });
    expect(JSON.parse(await res.text())).toEqual({ host: `mirror.invalid:${mirror.port}`, path: "/host" });
    await expect(httpGet(`http://mirror.invalid:${mirror.port}/host`, { addresses: [nobody] })).rejects.toThrow();
  });

  test("--connect-to's map sends HOST:PORT to ADDRESS:PORT, the Host header still HOST:PORT", async () => {
    const target = hostEcho();
    const get = createHttpGet(new Map([["x.invalid:8081", { address: target.address, port: target.port }]]));
    const res = await get("http://x.invalid:8081/host");
    expect(res.status).toBe(200);
    expect(JSON.parse(await res.text())).toEqual({ host: "x.invalid:8081", path: "/host" });
    // Only that HOST:PORT: another port of the name is looked up as usual, and does not resolve.
    await expect(get("http://x.invalid:8082/host")).rejects.toThrow();
    expect(target.requests).toEqual(["/host"]);
  });

  test("the map wins over init.addresses (the user said where that host is)", async () => {
    const target = hostEcho();
    const decoy = hostEcho();
    const get = createHttpGet(new Map([[`x.invalid:${target.port}`, { address: target.address, port: target.port }]]));
    const res = await get(`http://x.invalid:${target.port}/host`, { addresses: [decoy.address] });
    expect(JSON.parse(await res.text()).host).toBe(`x.invalid:${target.port}`);
    expect([target.requests, decoy.requests]).toEqual([["/host"], []]);
  });
});
