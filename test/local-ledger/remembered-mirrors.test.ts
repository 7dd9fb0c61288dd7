/**
 * The second mirror port of the embedded ledger, remembered with the others (docs/anchoring.md
 * "Stable local addresses"): stable across restarts, on the worker thread as in this one; a
 * `ports.json` of the previous release (no second port) is still read and completed; a taken
 * second port moves alone; and `suggestedMirrorNodes` names both embedded mirrors.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { suggestedMirrorNodes } from "../../src/anchoring/links.ts";
import { ledgerDir, openLedger } from "../../src/anchoring/setup.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { readRememberedAddress, rememberedMirrorUrls } from "../../src/local-ledger/addresses.ts";
import { startLocalLedger } from "../../src/local-ledger/index.ts";
import { startRememberedLedger } from "../../src/local-ledger/remembered.ts";
import { startLedgerWorker } from "../../src/local-ledger/thread.ts";
import { cleanup, onCleanup, tempDir, testConfig } from "../support/env.ts";

afterEach(cleanup);

const portOf = (url: string) => Number(new URL(url).port);
const portsFile = (dir: string) => JSON.parse(readFileSync(join(dir, "ports.json"), "utf8")) as Record<string, unknown>;

/** Two free ports on 127.0.0.1 (listened on with port 0, then let go), distinct. */
async function freePorts(n: number): Promise<number[]> {
  const servers = Array.from({ length: n }, () => Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() }));
  const ports = servers.map((s) => s.port!);
  await Promise.all(servers.map((s) => s.stop(true)));
  return ports;
}

/** The address file as the release before the second mirror port wrote it. */
function writeOldPortsFile(dir: string, grpcPort: number, mirrorPort: number): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "ports.json"), JSON.stringify({ host: "127.0.0.1", grpcPort, mirrorPort }) + "\n");
}

async function answers(url: string): Promise<number> {
  const res = await fetch(`${url}/api/v1/accounts/0.0.2`);
  await res.body?.cancel();
  return res.status;
}

describe("startRememberedLedger with a second mirror", () => {
  test("picks three free ports, remembers them, and uses the same ones after a restart", async () => {
    const dir = join(tempDir(), "ledger");
    const log = memoryLogger();
    const first = await startRememberedLedger({ dir, consensusMs: 0, log, secondMirror: true });
    const urls = [...first.mirrorUrls];
    expect(urls).toHaveLength(2);
    expect(portsFile(dir)).toEqual({ host: "127.0.0.1", grpcPort: portOf(`http://${first.grpcAddress}`), mirrorPort: portOf(urls[0]!), secondMirrorPort: portOf(urls[1]!) });
    const grpc = first.grpcAddress;
    await first.close();

    const again = await startRememberedLedger({ dir, consensusMs: 0, log, secondMirror: true });
    onCleanup(() => again.close());
    expect([again.grpcAddress, ...again.mirrorUrls]).toEqual([grpc, ...urls]);
    expect(await Promise.all(again.mirrorUrls.map(answers))).toEqual([200, 200]);
    expect(log.lines.filter((l) => l.level === "warn")).toEqual([]);
  }, 20_000);

  test("a ports.json of the previous release (no second port) is read: gRPC and first mirror kept, the second on a fresh port, remembered from then on", async () => {
    const dir = join(tempDir(), "ledger");
    const [grpcPort, mirrorPort] = await freePorts(2);
    writeOldPortsFile(dir, grpcPort!, mirrorPort!);
    expect(readRememberedAddress(dir)).toEqual({ host: "127.0.0.1", grpcPort: grpcPort!, mirrorPort: mirrorPort! });

    const log = memoryLogger();
    const ledger = await startRememberedLedger({ dir, consensusMs: 0, log, secondMirror: true });
    expect(ledger.grpcAddress).toBe(`127.0.0.1:${grpcPort}`);
    expect(ledger.mirrorUrl).toBe(`http://127.0.0.1:${mirrorPort}`);
    const second = portOf(ledger.mirrorUrls[1]!);
    expect([grpcPort, mirrorPort]).not.toContain(second);
    expect(portsFile(dir)).toEqual({ host: "127.0.0.1", grpcPort, mirrorPort, secondMirrorPort: second });
    expect(log.lines.filter((l) => l.level === "warn")).toEqual([]); // nothing was moved
    await ledger.close();

    const again = await startRememberedLedger({ dir, consensusMs: 0, log, secondMirror: true });
    onCleanup(() => again.close());
    expect(again.mirrorUrls).toEqual([`http://127.0.0.1:${mirrorPort}`, `http://127.0.0.1:${second}`]);
  }, 20_000);

  test("a start that does not ask for a second mirror still serves the remembered one (docverify local-ledger on serve's folder)", async () => {
    const dir = join(tempDir(), "ledger");
    const first = await startRememberedLedger({ dir, consensusMs: 0, log: memoryLogger(), secondMirror: true });
    const urls = [...first.mirrorUrls];
    await first.close();
    const plain = await startRememberedLedger({ dir, consensusMs: 0, log: memoryLogger() });
    onCleanup(() => plain.close());
    expect(plain.mirrorUrls).toEqual(urls);
    expect(portsFile(dir).secondMirrorPort).toBe(portOf(urls[1]!));
  }, 20_000);

  test("without a second remembered or asked for, there is none, and the file keeps the old shape", async () => {
    const dir = join(tempDir(), "ledger");
    const ledger = await startRememberedLedger({ dir, consensusMs: 0, log: memoryLogger() });
    onCleanup(() => ledger.close());
    expect(ledger.mirrorUrls).toEqual([ledger.mirrorUrl]);
    expect(Object.keys(portsFile(dir)).sort()).toEqual(["grpcPort", "host", "mirrorPort"]);
  }, 20_000);

  test("the remembered second port taken by another program: only it moves, with a warning; the first mirror's links keep working", async () => {
    const dir = join(tempDir(), "ledger");
    const first = await startRememberedLedger({ dir, consensusMs: 0, log: memoryLogger(), secondMirror: true });
    const [url1, url2] = first.mirrorUrls as [string, string];
    const grpc = first.grpcAddress;
    await first.close();
    const squatter = Bun.serve({ hostname: "127.0.0.1", port: portOf(url2), fetch: () => new Response("squatter") });
    onCleanup(() => squatter.stop(true));

    const log = memoryLogger();
    const moved = await startRememberedLedger({ dir, consensusMs: 0, log, secondMirror: true });
    onCleanup(() => moved.close());
    expect(moved.grpcAddress).toBe(grpc);
    expect(moved.mirrorUrl).toBe(url1);
    expect(moved.mirrorUrls[1]).not.toBe(url2);
    expect(await answers(moved.mirrorUrls[1]!)).toBe(200);
    expect(portsFile(dir).secondMirrorPort).toBe(portOf(moved.mirrorUrls[1]!));
    const warning = log.lines.find((l) => String(l.msg).startsWith("local ledger: its remembered second mirror port is taken"));
    expect(warning).toMatchObject({ level: "warn", host: "127.0.0.1", secondMirrorPort: portOf(url2) });
    expect(await (await fetch(url2)).text()).toBe("squatter");
  }, 20_000);

  test("an explicit second port that is taken is an error, not a move", async () => {
    const dir = join(tempDir(), "ledger");
    const squatter = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("squatter") });
    onCleanup(() => squatter.stop(true));
    await expect(startRememberedLedger({ dir, consensusMs: 0, log: memoryLogger(), secondMirrorPort: squatter.port! })).rejects.toThrow();
  }, 20_000);
});

describe("readRememberedAddress and rememberedMirrorUrls", () => {
  const cases: { name: string; file: unknown; expected: unknown }[] = [
    { name: "all four ports", file: { host: "127.0.0.1", grpcPort: 5001, mirrorPort: 5002, secondMirrorPort: 5003 }, expected: { host: "127.0.0.1", grpcPort: 5001, mirrorPort: 5002, secondMirrorPort: 5003 } },
    { name: "the previous release's file", file: { host: "127.0.0.1", grpcPort: 5001, mirrorPort: 5002 }, expected: { host: "127.0.0.1", grpcPort: 5001, mirrorPort: 5002 } },
    { name: "a second port that is text", file: { host: "127.0.0.1", grpcPort: 5001, mirrorPort: 5002, secondMirrorPort: "5003" }, expected: { host: "127.0.0.1", grpcPort: 5001, mirrorPort: 5002 } },
    { name: "a second port out of range", file: { host: "127.0.0.1", grpcPort: 5001, mirrorPort: 5002, secondMirrorPort: 70000 }, expected: { host: "127.0.0.1", grpcPort: 5001, mirrorPort: 5002 } },
    { name: "a second port equal to the first", file: { host: "127.0.0.1", grpcPort: 5001, mirrorPort: 5002, secondMirrorPort: 5002 }, expected: { host: "127.0.0.1", grpcPort: 5001, mirrorPort: 5002 } },
    { name: "a first mirror port missing", file: { host: "127.0.0.1", grpcPort: 5001, secondMirrorPort: 5003 }, expected: null },
    { name: "JSON null", file: null, expected: null },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const dir = tempDir();
      writeFileSync(join(dir, "ports.json"), JSON.stringify(c.file));
      expect(readRememberedAddress(dir)).toEqual(c.expected as never);
    });
  }
  test("not JSON, or no file: null", () => {
    const dir = tempDir();
    expect(readRememberedAddress(dir)).toBeNull();
    writeFileSync(join(dir, "ports.json"), "{");
    expect(readRememberedAddress(dir)).toBeNull();
  });
  test("mirror URLs: the first, then the second; an IPv6 host in brackets", () => {
    expect(rememberedMirrorUrls({ host: "127.0.0.1", grpcPort: 1, mirrorPort: 2, secondMirrorPort: 3 })).toEqual(["http://127.0.0.1:2", "http://127.0.0.1:3"]);
    expect(rememberedMirrorUrls({ host: "::1", grpcPort: 1, mirrorPort: 2 })).toEqual(["http://[::1]:2"]);
  });
});

describe("the embedded ledger of serve", () => {
  test("on its worker thread: two mirrors, the same answers, remembered and the same after a restart", async () => {
    const dir = join(tempDir(), "ledger");
    const log = memoryLogger();
    const first = await startLedgerWorker({ dir, consensusMs: 100, log });
    onCleanup(() => first.close());
    const urls = [...first.mirrorUrls];
    expect(urls).toHaveLength(2);
    expect(urls[0]).toBe(first.mirrorUrl);
    const bodies = await Promise.all(urls.map(async (u) => (await fetch(`${u}/api/v1/accounts/0.0.2`)).text()));
    expect(bodies[1]).toBe(bodies[0]!);
    await first.close();
    expect(readRememberedAddress(dir)?.secondMirrorPort).toBe(portOf(urls[1]!));

    const again = await startLedgerWorker({ dir, consensusMs: 100, log });
    onCleanup(() => again.close());
    expect(again.mirrorUrls).toEqual(urls);
  }, 30_000);

  test("openLedger (serve's path) on a folder of the previous release: the second comes up and is remembered; suggestedMirrorNodes names both", async () => {
    const config = testConfig({ DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: "100" });
    const dir = ledgerDir(config.dataDir);
    expect(suggestedMirrorNodes(config)).toEqual([]); // never started here
    const [grpcPort, mirrorPort] = await freePorts(2);
    writeOldPortsFile(dir, grpcPort!, mirrorPort!);
    expect(suggestedMirrorNodes(config)).toEqual([`http://127.0.0.1:${mirrorPort}`]);

    const setup = await openLedger({ config, log: memoryLogger() });
    onCleanup(() => setup.close());
    const embedded = setup.embedded!;
    expect(embedded.mirrorUrl).toBe(`http://127.0.0.1:${mirrorPort}`);
    expect(embedded.mirrorUrls).toHaveLength(2);
    expect(setup.describe.ledgerSecondMirrorUrl).toBe(embedded.mirrorUrls[1]!);
    expect(suggestedMirrorNodes(config)).toEqual([...embedded.mirrorUrls]);
    expect(await Promise.all(suggestedMirrorNodes(config).map(answers))).toEqual([200, 200]);
    expect(await setup.ledger.ping()).toBe(true);
    await setup.close();
    // Remembered: the same two after the ledger stopped.
    expect(suggestedMirrorNodes(config)).toEqual([...embedded.mirrorUrls]);
  }, 30_000);

  test("openLedger in this thread (a test's clock) serves two mirrors as well", async () => {
    const config = testConfig();
    const setup = await openLedger({ config, log: memoryLogger(), clock: { now: () => Date.now() } });
    onCleanup(() => setup.close());
    expect(setup.embedded!.mirrorUrls).toHaveLength(2);
    expect(suggestedMirrorNodes(config)).toEqual([...setup.embedded!.mirrorUrls]);
  }, 30_000);

  test("suggestedMirrorNodes: DOCVERIFY_MIRROR_NODES wins; a separately started ledger is its one URL", async () => {
    const other = await startLocalLedger({ dataDir: tempDir(), consensusMs: 0, secondMirrorPort: 0 });
    onCleanup(() => other.close());
    expect(suggestedMirrorNodes(testConfig({ DOCVERIFY_LOCAL_LEDGER_URL: other.mirrorUrl }))).toEqual([other.mirrorUrl]);
    expect(suggestedMirrorNodes(testConfig({ DOCVERIFY_MIRROR_NODES: other.mirrorUrls.join(",") }))).toEqual([...other.mirrorUrls]);
  });
});
