/**
 * The security matrix (docs/access.md "The security matrix"): every /v1 operation × every kind of
 * caller, with the exact status and `error.code`, in-process and over HTTP against the running
 * service. Keys for the running service are minted on its data folder by another process (the
 * administration core), while it runs: they work immediately, and so does a revocation.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { openCore, type Core } from "../../src/app/core.ts";
import { parseConfig } from "../../src/config/index.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { CALLERS, expected, giveTopics, giveTopicsOn, OPERATIONS, provisionCallers, type Callers } from "../support/access-matrix.ts";
import { ENGINE_NAME, sqliteOnlyDescribe, testService } from "../support/engine.ts";
import { BUN, ROOT, cleanup, startService, tempDir } from "../support/env.ts";
import { waitFor } from "../support/wait.ts";

afterAll(cleanup);

// High enough that the matrix itself is never rate limited; limits have their own tests.
const LIMITS = { DOCVERIFY_RATE_LIMIT_ANONYMOUS: "100000", DOCVERIFY_RATE_LIMIT_KEY: "100000", DOCVERIFY_RATE_LIMIT_ORG: "100000" };

type Send = (path: string, init: RequestInit) => Promise<Response>;

function runMatrix(label: string, setup: () => Promise<{ send: Send; callers: Callers }>, sqliteOnlyBecause?: string) {
  (sqliteOnlyBecause === undefined ? describe : (name: string, fn: () => void) => sqliteOnlyDescribe(name, sqliteOnlyBecause, fn))(`access matrix (${label})`, () => {
    let ctx: { send: Send; callers: Callers };
    beforeAll(async () => {
      ctx = await setup();
    }, 30_000);
    for (const op of OPERATIONS) {
      test(`${op.method} ${op.path}`, async () => {
        const problems: string[] = [];
        for (const caller of CALLERS) {
          const headers: Record<string, string> = { ...ctx.callers.headers[caller] };
          if (op.body !== undefined) headers["content-type"] = "application/json";
          const res = await ctx.send(op.path, { method: op.method, headers, body: op.body === undefined ? undefined : JSON.stringify(op.body) });
          const body = (await res.json()) as { error?: { code: string } };
          const want = expected(op, caller);
          const got = `${res.status} ${body.error?.code ?? ""}`.trim();
          const wanted = want === "admitted" ? op.admitted : `${want.status} ${want.code}`;
          // a repeat of an admitted record creation answers 200 with the same record
          const ok = got === wanted || (want === "admitted" && op.operation === "records.create" && res.status === 200);
          if (!ok) problems.push(`${caller}: got ${got}, want ${wanted}`);
          if (res.headers.get("x-ratelimit-limit") === null || res.headers.get("x-ratelimit-remaining") === null) {
            problems.push(`${caller}: no X-RateLimit-* headers`);
          }
        }
        expect(problems).toEqual([]);
      });
    }

    test("every unusable credential gets the same 401 body", async () => {
      const bodies = new Set<string>();
      for (const caller of ["malformed key", "bad CRC", "unknown key id", "wrong secret", "revoked key", "expired key", "two Authorization headers", "non-Bearer scheme"] as const) {
        const res = await ctx.send("/v1/verifications", { method: "GET", headers: ctx.callers.headers[caller] });
        bodies.add(await res.text());
      }
      expect(bodies.size).toBe(1);
      expect(JSON.parse([...bodies][0]!)).toEqual({
        error: { code: "UNAUTHENTICATED", message: expect.stringContaining("Authorization: Bearer") },
      });
    });

    test("a present but unusable credential on POST /v1/verifications is never downgraded to the public tier", async () => {
      const res = await ctx.send("/v1/verifications", {
        method: "POST",
        headers: { ...ctx.callers.headers["wrong secret"], "content-type": "application/json" },
        body: JSON.stringify({ originalDocHash: "sha256:" + "cd".repeat(32) }),
      });
      expect(res.status).toBe(401);
    });
  });
}

// `serve`'s app on the engine DOCVERIFY_TEST_ENGINE selects (test/support/engine.ts).
runMatrix(`in-process, ${ENGINE_NAME}`, async () => {
  const service = await testService({ env: LIMITS });
  const callers = await provisionCallers(service);
  await giveTopicsOn(service.store);
  return { send: (path, init) => service.request(path, init), callers };
});

describe(`a key's expiry, by the service's own clock (in-process, ${ENGINE_NAME})`, () => {
  test("a key kept in memory is admitted to every operation until its expiry, then refused on every one with a revoked key's 401", async () => {
    const clock = manualClock(Date.now());
    const service = await testService({ env: LIMITS, clock });
    const org = await service.organisations.create({ name: "Expiring Ltd", apiAccess: true, addon: true, validated: true }, "test");
    await giveTopicsOn(service.store);
    const expiresAt = clock.now() + 60_000;
    const key = (await service.apiKeys.mint({ orgId: org.id, environment: "live", revoke: true, expiresAt }, "test")).key;
    const revoked = await service.apiKeys.mint({ orgId: org.id, environment: "live" }, "test");
    await service.apiKeys.revoke(revoked.keyId, "test");
    const send = (op: (typeof OPERATIONS)[number], bearer: string) =>
      service.request(op.path, {
        method: op.method,
        headers: { authorization: `Bearer ${bearer}`, ...(op.body === undefined ? {} : { "content-type": "application/json" }) },
        body: op.body === undefined ? undefined : JSON.stringify(op.body),
      });
    const answer = async (res: Response) => `${res.status} ${((await res.json()) as { error?: { code: string } }).error?.code ?? ""}`.trim();

    clock.set(expiresAt - 1);
    for (const op of OPERATIONS) expect({ op: op.operation, got: await answer(await send(op, key)) }).toEqual({ op: op.operation, got: op.admitted });
    clock.set(expiresAt);
    const unusable = await (await send(OPERATIONS[1]!, revoked.key)).text();
    for (const op of OPERATIONS) {
      const res = await send(op, key);
      expect({ op: op.operation, status: res.status, body: await res.text() }).toEqual({ op: op.operation, status: 401, body: unusable });
    }
  });
});

// The served process and the command line on its data folder: on PostgreSQL, serve processes
// and the command line on a shared database are test/storage/several-nodes.test.ts's.
const SERVED_ON_SQLITE = "serve as a process on a data folder; on PostgreSQL see test/storage/several-nodes.test.ts";

let service: Awaited<ReturnType<typeof startService>>;
let admin: Core;
const data = tempDir();
let serviceStarted: Promise<void> | undefined;
/** The running service on `data`, started once for every describe that uses it, whichever runs. */
const startServiceOnce = () =>
  (serviceStarted ??= (async () => {
    service = await startService({ env: { ...LIMITS, DOCVERIFY_DATA_DIR: data } });
    // The administration core on the same folder, in this (another) process, as the CLI does.
    admin = openCore({ config: parseConfig({ DOCVERIFY_DATA_DIR: data }), log: memoryLogger() });
  })());

runMatrix(
  "running service over HTTP",
  async () => {
    await startServiceOnce();
    const callers = await provisionCallers(admin);
    giveTopics(admin);
    return { send: (path, init) => fetch(service.url + path, init), callers };
  },
  SERVED_ON_SQLITE,
);

sqliteOnlyDescribe("keys from the command line against a running service", SERVED_ON_SQLITE, () => {
  let orgId: string;
  beforeAll(async () => {
    await startServiceOnce();
    orgId = (await admin.organisations.create({ name: "Raw Socket Ltd", apiAccess: true }, "test")).id;
  }, 30_000);

  test("a key minted by `docverify key mint` works at once, and is refused at once after `key revoke`", async () => {
    const dv = (...args: string[]) => {
      const p = Bun.spawnSync([BUN, join(ROOT, "src", "main.ts"), ...args, "--data", data, "--json"], { env: { PATH: process.env.PATH, USER: "ops" } });
      if (p.exitCode !== 0) throw new Error(p.stderr.toString());
      return JSON.parse(p.stdout.toString()) as Record<string, string>;
    };
    const org = dv("org", "create", "--name", "CLI Org", "--api-access").id!;
    const minted = dv("key", "mint", "--org", org, "--env", "test");
    const list = () => fetch(service.url + "/v1/verifications", { headers: { authorization: `Bearer ${minted.key}` } });
    expect((await list()).status).toBe(200);
    expect((await list()).status).toBe(200); // now answered from what the service keeps (nothing committed since)
    dv("key", "revoke", minted.keyId!);
    const refused = await list();
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("UNAUTHENTICATED");
    // and turning API access off answers 402 on the next request
    const again = dv("key", "mint", "--org", org, "--env", "live");
    expect((await fetch(service.url + "/v1/verifications", { headers: { authorization: `Bearer ${again.key}` } })).status).toBe(200);
    dv("org", "set", org, "--api-access", "off");
    const off = await fetch(service.url + "/v1/verifications", { headers: { authorization: `Bearer ${again.key}` } });
    expect(off.status).toBe(402);
  }, 30_000);

  test("a key minted by `docverify key mint --expires` works against the running service until that time, then gets the 401 of a revoked key", async () => {
    // Time enough for the command to run and the first requests to be answered on a busy machine.
    const expiresAt = Date.now() + 5_000;
    const p = Bun.spawnSync([BUN, join(ROOT, "src", "main.ts"), "key", "mint", "--org", orgId, "--env", "live", "--expires", new Date(expiresAt).toISOString(), "--data", data, "--json"], {
      env: { PATH: process.env.PATH, USER: "ops" },
    });
    expect(p.exitCode).toBe(0);
    const minted = JSON.parse(p.stdout.toString()) as { key: string; expiresAt: string };
    expect(minted.expiresAt).toBe(new Date(expiresAt).toISOString());
    const list = () => fetch(service.url + "/v1/verifications", { headers: { authorization: `Bearer ${minted.key}` } });
    expect((await list()).status).toBe(200);
    expect((await list()).status).toBe(200); // kept by the service: nothing is committed when it expires
    const refused = await waitFor("the key refused once expired", async () => {
      const res = await list();
      return res.status === 200 ? undefined : { status: res.status, body: await res.text(), at: Date.now() };
    }, 15_000, 100);
    expect(refused.at).toBeGreaterThanOrEqual(expiresAt);
    expect(refused.status).toBe(401);
    const revoked = await admin.apiKeys.mint({ orgId, environment: "live" }, "test");
    await admin.apiKeys.revoke(revoked.keyId, "test");
    const res = await fetch(service.url + "/v1/verifications", { headers: { authorization: `Bearer ${revoked.key}` } });
    expect(refused.body).toBe(await res.text());
  }, 30_000);

  test("two Authorization header lines on the wire are refused (raw socket)", async () => {
    const { port, hostname } = new URL(service.url);
    const key = (await admin.apiKeys.mint({ orgId, environment: "live" }, "test")).key;
    const raw = `GET /v1/verifications HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${key}\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`;
    const text = await new Promise<string>((resolve, reject) => {
      let got = "";
      void Bun.connect({
        hostname,
        port: Number(port),
        socket: {
          open(s) {
            s.write(raw);
          },
          data(_s, chunk) {
            got += Buffer.from(chunk).toString();
          },
          close() {
            resolve(got);
          },
          error(_s, e) {
            reject(e);
          },
        },
      });
    });
    expect(text.split("\r\n")[0]).toBe("HTTP/1.1 401 Unauthorized");
    // a single header with the same key passes
    expect((await fetch(service.url + "/v1/verifications", { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
  });

  test("the request log line names the key by its prefix and never carries the key", async () => {
    const key = await admin.apiKeys.mint({ orgId, environment: "live" }, "test");
    await fetch(service.url + "/v1/verifications", { headers: { authorization: `Bearer ${key.key}` } });
    await waitFor("the request's log line", () => service.logLines().find((l) => l.key === `dv_live_${key.keyId}`));
    const lines = service.logLines();
    expect(lines.some((l) => l.key === `dv_live_${key.keyId}`)).toBe(true);
    expect(JSON.stringify(lines)).not.toContain(key.key.slice(24));
  });

  afterAll(async () => {
    await admin?.close();
  });
});
