/**
 * Memory after load (docs/operations.md, "Memory"): does the service give back what a burst of
 * work made it hold? The compiled binary serves a copy of the 1,000,000-record dataset; its
 * resident memory (VmRSS, /proc/<pid>/status) is read
 *
 * - idle: after "ledger ready", 20 requests to /healthz and 2 s, as `measureIdle` does;
 * - after load: right after `LOAD_S` seconds of keyed verification (the organisation tier, with a
 *   reference, so every request also writes a log row) at `CONNECTIONS` connections over the hot
 *   set of real records, the operator's audit's load;
 * - after idle: `IDLE_S` seconds later, with no request meanwhile (read every 10 s).
 *
 * The target: after idle at most `RATIO_TARGET` × idle. The caches' sizes (docverify_cache_bytes)
 * and the releases counted (docverify_idle_releases_total) are read from /metrics after the load
 * and at the end.
 *
 *   bun scripts/bench/memory-after-load.ts [--binary dist/docverify] [--load 30] [--idle 60]
 *
 * Run by `npm run bench` after the 1,000,000-record scenarios, on their data folder.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { copyDataset, ensureDataset, type Dataset } from "./dataset.ts";
import { settleIdle } from "./idle-memory.ts";
import { killAll, memoryOf, startDocverify } from "./processes.ts";
import { hotSet, type Scenario } from "./scenarios.ts";
import { ensureWrk, runWrk, wrkProblem, type WrkResult } from "./wrk.ts";

export const CONNECTIONS = 200;
export const LOAD_S = 30;
export const IDLE_S = 60;
export const RATIO_TARGET = 1.5;
/** As the other million-record scenarios: the bench measures work, not refusals. */
const UNLIMITED = {
  DOCVERIFY_RATE_LIMIT_ANONYMOUS: "1000000000",
  DOCVERIFY_RATE_LIMIT_KEY: "1000000000",
  DOCVERIFY_RATE_LIMIT_ORG: "1000000000",
};

export interface MemoryAfterLoad {
  readonly connections: number;
  readonly loadS: number;
  readonly idleS: number;
  /** VmRSS in bytes. */
  readonly idleRss: number;
  readonly afterLoadRss: number;
  readonly afterIdleRss: number;
  /** VmRSS every 10 s of the idle minute, bytes. */
  readonly idleSamples: readonly { readonly atS: number; readonly rss: number }[];
  /** afterIdleRss / idleRss. */
  readonly ratio: number;
  readonly targetRatio: number;
  readonly verdict: "PASS" | "MISS";
  readonly load: WrkResult;
  /** docverify_cache_bytes summed over the caches, after the load and at the end. */
  readonly cacheBytesAfterLoad: number;
  readonly cacheBytesAfterIdle: number;
  /** docverify_idle_releases_total at the end. */
  readonly idleReleases: number;
}

/** The keyed verification load: the organisation tier over the hot set, each request with its own reference. */
export function keyedScenario(data: Pick<Dataset, "realHashes" | "logKey">, loadS: number): Scenario {
  return {
    name: "memory-keyed-verification",
    target: "million",
    method: "POST",
    path: "/v1/verifications",
    bodies: hotSet(data.realHashes).map((h, i) => JSON.stringify({ originalDocHash: h, reference: `memory-${i}` })),
    headers: { "content-type": "application/json", authorization: `Bearer ${data.logKey}` },
    connections: CONNECTIONS,
    duration: loadS,
  };
}

/** What /metrics says of the caches: their bytes summed, and the releases counted. */
async function cachesOf(url: string): Promise<{ bytes: number; releases: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let bytes = 0;
  let releases = 0;
  for (const line of text.split("\n")) {
    const cache = /^docverify_cache_bytes\{[^}]*\} (\S+)$/.exec(line);
    if (cache !== null) bytes += Number(cache[1]);
    const released = /^docverify_idle_releases_total (\S+)$/.exec(line);
    if (released !== null) releases = Number(released[1]);
  }
  return { bytes, releases };
}

export interface MemoryAfterLoadRun {
  readonly binary: string;
  readonly wrk: string;
  readonly dataset: Pick<Dataset, "realHashes" | "logKey">;
  /** A data folder holding a copy of the dataset (served in place, written to). */
  readonly dataDir: string;
  /** For the server's logs and wrk's script. */
  readonly workDir: string;
  readonly loadS?: number;
  readonly idleS?: number;
  readonly threads?: number;
  readonly say?: (line: string) => void;
}

export async function measureMemoryAfterLoad(run: MemoryAfterLoadRun): Promise<MemoryAfterLoad> {
  const loadS = run.loadS ?? LOAD_S;
  const idleS = run.idleS ?? IDLE_S;
  const say = run.say ?? (() => {});
  const server = await startDocverify(run.binary, run.workDir, { dataDir: run.dataDir, env: UNLIMITED });
  try {
    await settleIdle(server.url);
    const idleRss = memoryOf(server.pid).rss;
    say(`  idle: ${mb(idleRss)}`);
    const load = await runWrk({ wrk: run.wrk, url: server.url, scenario: keyedScenario(run.dataset, loadS), threads: run.threads ?? 2, durationS: loadS, workDir: run.workDir });
    const problem = wrkProblem(load);
    if (problem !== null) throw new Error(`keyed verification at ${CONNECTIONS} connections: ${problem}`);
    const afterLoadRss = memoryOf(server.pid).rss;
    const afterLoad = await cachesOf(server.url);
    say(
      `  after ${loadS} s of keyed verification at ${CONNECTIONS} connections (${Math.round(load.requestsPerSecond).toLocaleString("en-US")} req/s): ` +
        `${mb(afterLoadRss)}; caches ${mb(afterLoad.bytes)}`,
    );
    // Nothing is asked of the service meanwhile; /metrics again only at the end.
    const idleSamples: { atS: number; rss: number }[] = [];
    for (let at = 0; at < idleS; ) {
      const step = Math.min(10, idleS - at);
      await Bun.sleep(step * 1000);
      at += step;
      idleSamples.push({ atS: at, rss: memoryOf(server.pid).rss });
    }
    const afterIdleRss = memoryOf(server.pid).rss;
    const end = await cachesOf(server.url);
    const ratio = afterIdleRss / idleRss;
    say(`  idle minute: ${idleSamples.map((s) => `${s.atS} s ${mb(s.rss)}`).join(", ")}; caches ${mb(end.bytes)}, releases ${end.releases}`);
    return {
      connections: CONNECTIONS,
      loadS,
      idleS,
      idleRss,
      afterLoadRss,
      afterIdleRss,
      idleSamples,
      ratio,
      targetRatio: RATIO_TARGET,
      verdict: ratio <= RATIO_TARGET ? "PASS" : "MISS",
      load,
      cacheBytesAfterLoad: afterLoad.bytes,
      cacheBytesAfterIdle: end.bytes,
      idleReleases: end.releases,
    };
  } finally {
    await server.stop();
  }
}

/** The one-line summary `npm run bench` prints. */
export function describeMemoryAfterLoad(m: MemoryAfterLoad): string {
  return (
    `memory after load (VmRSS; keyed verification, ${m.connections} connections, ${m.loadS} s; then ${m.idleS} s idle): ` +
    `idle ${mb(m.idleRss)}, after load ${mb(m.afterLoadRss)}, after idle ${mb(m.afterIdleRss)}; ` +
    `after idle / idle ${m.ratio.toFixed(2)}  target ≤ ${m.targetRatio}  ${m.verdict}`
  );
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { binary: { type: "string" }, load: { type: "string" }, idle: { type: "string" } },
    strict: true,
    allowPositionals: false,
  });
  const binary = values.binary ?? join(import.meta.dir, "..", "..", "dist", "docverify");
  const loadS = Number(values.load ?? LOAD_S);
  const idleS = Number(values.idle ?? IDLE_S);
  if (!Number.isInteger(loadS) || loadS < 1 || !Number.isInteger(idleS) || idleS < 1) throw new Error("--load and --idle must be whole seconds, at least 1");
  const wrk = await ensureWrk();
  const dataset = await ensureDataset((line) => console.log(line));
  const work = mkdtempSync(join(tmpdir(), "docverify-memory-"));
  try {
    const dataDir = join(work, "data");
    copyDataset(dataset, dataDir);
    const m = await measureMemoryAfterLoad({ binary: binary.startsWith("/") ? binary : join(process.cwd(), binary), wrk, dataset, dataDir, workDir: work, loadS, idleS, say: (l) => console.log(l) });
    console.log(describeMemoryAfterLoad(m));
    return 0;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  try {
    process.exitCode = await main(process.argv.slice(2));
  } catch (e) {
    killAll();
    process.stderr.write(`memory-after-load: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  }
}
