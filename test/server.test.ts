/**
 * The service as a real server: over sockets in-process (startServer), and as a separate
 * process started the way an operator starts it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { Elysia } from "elysia";
import { readJsonObject } from "../src/http/body.ts";
import { memoryLogger } from "../src/lib/log.ts";
import { startServer } from "../src/app/serve.ts";
import { BUN, ROOT, cleanup, onCleanup, startService, tempDir, testConfig } from "./support/env.ts";

afterAll(cleanup);

/** Writes raw bytes to host:port and resolves with everything read until the peer closes or `ms` pass. */
function rawExchange(port: number, write: (send: (s: string) => boolean) => void, ms = 3000): Promise<string> {
  return new Promise((resolve) => {
    let got = "";
    const sock = connect(port, "127.0.0.1", () => write((s) => sock.write(s)));
    sock.on("data", (d) => (got += d.toString()));
    sock.on("error", () => {});
    const done = () => {
      sock.destroy();
      resolve(got);
    };
    sock.on("close", done);
    setTimeout(done, ms);
  });
}

describe("in-process server on a real socket", () => {
  let release: () => void = () => {};
  const gate = new Promise<void>((r) => (release = r));
  let arrived: () => void = () => {};
  const slowArrived = new Promise<void>((r) => (arrived = r));
  const probe = new Elysia()
    .post("/probe/body", async ({ request }) => ({ got: await readJsonObject(request, 64) }), { parse: "none" })
    .get("/probe/slow", async () => {
      arrived();
      await gate;
      return { slow: "done" };
    });
  const log = memoryLogger();
  let running: Awaited<ReturnType<typeof startServer>>;
  beforeAll(async () => {
    running = await startServer(testConfig(), log, { plugins: [probe] });
    onCleanup(() => running.stop());
  });

  test("a chunked body over the limit is refused with 413 before the client finishes sending", async () => {
    const t0 = Date.now();
    const reply = await rawExchange(running.port, (send) => {
      send("POST /probe/body HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
      // 4 chunks of 32 bytes = 128 bytes, twice the limit, and never the terminating chunk.
      for (let i = 0; i < 4; i++) send(`20\r\n${" ".repeat(32)}\r\n`);
    });
    expect(reply).toStartWith("HTTP/1.1 413");
    expect(reply).toContain('"code":"PAYLOAD_TOO_LARGE"');
    expect(Date.now() - t0).toBeLessThan(2000); // the server closed the connection; no timeout
  });

  test("a Content-Length over the limit is refused with 413 without sending the body", async () => {
    const t0 = Date.now();
    const reply = await rawExchange(running.port, (send) => {
      send("POST /probe/body HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{");
    });
    expect(reply).toStartWith("HTTP/1.1 413");
    expect(reply).toContain('"code":"PAYLOAD_TOO_LARGE"');
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  test("shutdown lets an in-flight request finish, then refuses new connections", async () => {
    const inflight = fetch(`${running.url}/probe/slow`);
    await slowArrived; // the request is in its handler
    const stopped = running.stop();
    let stoppedYet = false;
    void stopped.then(() => (stoppedYet = true));
    // A fixed wait on purpose: what is tested is that stop() does not finish within it while
    // the request is still in flight.
    await Bun.sleep(100);
    expect(stoppedYet).toBe(false);
    release();
    const res = await inflight;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ slow: "done" });
    await stopped;
    expect(log.lines.some((l) => l.msg === "docverify stopped")).toBe(true);
    await expect(fetch(`${running.url}/healthz`)).rejects.toThrow();
  });
});

describe("the service as a process", () => {
  test("starts on its defaults, answers HTTP, and exits 0 on SIGTERM", async () => {
    const svc = await startService();
    const health = await fetch(`${svc.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });
    expect(health.headers.get("x-request-id")).toBeTruthy();
    const ready = await fetch(`${svc.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: "ready", checks: { storage: "ok", ledger: "ok" } });
    const missing = await fetch(`${svc.url}/v1/nothing`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe("NOT_FOUND");
    const wrong = await fetch(`${svc.url}/readyz`, { method: "POST" });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("GET, HEAD");
    const started = svc.logLines().find((l) => l.msg === "docverify started")!;
    expect(started.notice).toContain("nothing is public");
    expect(await svc.stop("SIGTERM")).toBe(0);
    expect(svc.logLines().some((l) => l.msg === "docverify stopped")).toBe(true);
    // one JSON log line per request, with its request id
    expect(svc.logLines().filter((l) => l.msg === "request").map((l) => l.status)).toEqual([200, 200, 404, 405]);
  });

  test("SIGINT also stops it cleanly", async () => {
    const svc = await startService();
    expect(await svc.stop("SIGINT")).toBe(0);
  });

  test("a bad setting refuses to start, naming the setting", async () => {
    const proc = Bun.spawnSync([BUN, `${ROOT}/src/main.ts`, "serve"], {
      env: { PATH: process.env.PATH, DOCVERIFY_PORT: "http" },
    });
    expect(proc.exitCode).toBe(2);
    expect(proc.stderr.toString()).toBe('docverify: DOCVERIFY_PORT: "http" is not a whole number; allowed: 0 to 65535\n');
    expect(proc.stdout.toString()).toBe("");
  });

  test("an unknown flag or command is a usage error", async () => {
    const flag = Bun.spawnSync([BUN, `${ROOT}/src/main.ts`, "serve", "--dta", "x"]);
    expect(flag.exitCode).toBe(2);
    expect(flag.stderr.toString()).toContain("--dta");
    const cmd = Bun.spawnSync([BUN, `${ROOT}/src/main.ts`, "srve"]);
    expect(cmd.exitCode).toBe(2);
    expect(cmd.stderr.toString()).toContain('unknown command "srve"');
  });

  test("a port already in use is reported, not a crash dump", async () => {
    const svc = await startService();
    const port = new URL(svc.url).port;
    const proc = Bun.spawnSync([BUN, `${ROOT}/src/main.ts`, "serve"], {
      env: { PATH: process.env.PATH, DOCVERIFY_PORT: port, DOCVERIFY_DATA_DIR: tempDir() },
    });
    expect(proc.exitCode).toBe(1);
    expect(proc.stderr.toString()).toMatch(/^docverify: .*(in use|EADDRINUSE)/i);
    await svc.stop();
  });
});
