/**
 * `npm run bench`: throughput and latency of docverify against a floor (a bare Bun.serve in
 * its own process), plus the compiled binary's cold start and idle memory against their
 * targets. See docs/benchmarks.md.
 *
 * A benchmark reports: a missed target is printed as MISS and the exit code stays 0. The exit
 * code is 1 only when the measurement itself broke (a server did not start, wrk failed, or
 * the load saw error responses or socket errors), since those figures mean nothing.
 *
 *   bun scripts/bench.ts [--quick] [--json FILE]
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, release, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { coldStart, killAll, memoryOf, startDocverify, startFloor, type Server } from "./bench/processes.ts";
import { SCENARIOS, type Scenario } from "./bench/scenarios.ts";
import { ensureWrk, runWrk, wrkProblem, wrkVersion, type WrkResult } from "./bench/wrk.ts";

const TARGETS = { coldStartMs: 100, idleRssBytes: 80e6 };
/** One wrk thread per core of the reference machine (2 cores). */
const WRK_THREADS = 2;
const IDLE_REQUESTS = 20;
const IDLE_WAIT_MS = 2_000;
/** Above this share of busy CPU before the run, the figures are not comparable with a quiet run's. */
const BUSY_WARNING = 0.2;

interface Mode {
  readonly name: "full" | "quick";
  readonly warmupS: number;
  /** Caps each scenario's duration. */
  readonly maxDurationS: number;
  readonly coldStartRuns: number;
}
const FULL: Mode = { name: "full", warmupS: 2, maxDurationS: Infinity, coldStartRuns: 10 };
const QUICK: Mode = { name: "quick", warmupS: 1, maxDurationS: 3, coldStartRuns: 5 };

type Verdict = "PASS" | "MISS";

interface ScenarioReport {
  readonly name: string;
  readonly method: string;
  readonly path: string;
  readonly connections: number;
  readonly threads: number;
  readonly durationS: number;
  readonly floor: WrkResult;
  readonly docverify: WrkResult;
  readonly ratio: number;
  readonly floorRatioTarget: number | null;
  readonly verdict: Verdict | null;
}

const USAGE = `Usage: bun scripts/bench.ts [--quick] [--json FILE]
  --quick      short smoke run (${QUICK.maxDurationS} s per measurement, ${QUICK.coldStartRuns} cold starts)
  --json FILE  also write the results as JSON to FILE
`;

async function main(argv: string[]): Promise<number> {
  let options: { quick?: boolean; json?: string; help?: boolean };
  try {
    options = parseArgs({
      args: argv,
      options: { quick: { type: "boolean" }, json: { type: "string" }, help: { type: "boolean", short: "h" } },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (e) {
    process.stderr.write(`bench: ${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  if (options.help === true) {
    process.stdout.write(USAGE);
    return 0;
  }
  const mode = options.quick === true ? QUICK : FULL;
  const wrk = await ensureWrk();
  const machine = {
    cpus: availableParallelism(),
    cpuModel: cpuModel(),
    kernel: release(),
    bun: Bun.version,
    wrk: await wrkVersion(wrk),
    busyBeforeRun: await cpuBusy(1_000),
  };
  const date = new Date().toISOString();
  console.log(`docverify benchmark, ${mode.name} run, ${date}`);
  console.log(`machine: ${machine.cpus} × ${machine.cpuModel}, Linux ${machine.kernel}, Bun ${machine.bun}, ${machine.wrk}`);
  console.log(`CPU busy with other work just before the run: ${Math.round(machine.busyBeforeRun * 100)}%`);
  if (machine.busyBeforeRun > BUSY_WARNING) {
    console.log("  the machine is busy: the servers will get fewer cores than usual, and the floor loses most, so ratios read high");
  }

  const work = mkdtempSync(join(tmpdir(), "docverify-bench-"));
  const broken: string[] = [];
  const interrupted = () => {
    killAll();
    rmSync(work, { recursive: true, force: true });
    process.exit(130);
  };
  process.once("SIGINT", interrupted);
  process.once("SIGTERM", interrupted);
  try {
    const binary = await build(work);

    console.log(`\nload: wrk ${WRK_THREADS} threads, ${mode.warmupS} s warm-up, then the measurement; same settings for floor and docverify`);
    const scenarios: ScenarioReport[] = [];
    let peakRss: number | null = null;
    const floor = await startFloor(join(work, "floor"));
    const service = await startDocverify(binary, join(work, "load"));
    try {
      for (const scenario of SCENARIOS) {
        const report = await measureScenario(scenario, { wrk, mode, floor, service, workDir: work });
        scenarios.push(report);
        printScenario(report);
        for (const [who, result] of [["floor", report.floor], ["docverify", report.docverify]] as const) {
          const problem = wrkProblem(result);
          if (problem !== null) broken.push(`${scenario.name} (${who}): ${problem}`);
        }
      }
      peakRss = memoryOf(service.pid).peak;
      console.log(`docverify peak RSS during the load: ${mb(peakRss)}`);
    } finally {
      await floor.stop();
      const code = await service.stop();
      if (code !== 0) broken.push(`docverify exited with ${code} on SIGTERM after the load`);
    }

    const startMs: number[] = [];
    // The first start reads the binary from disk; the measured ones find it in the page cache,
    // as a service restarted by its supervisor does.
    for (let i = 0; i <= mode.coldStartRuns; i++) {
      const elapsed = await coldStart(binary, join(work, `cold-${i}`));
      if (i > 0) startMs.push(elapsed);
    }
    const startMedian = median(startMs);
    const startVerdict: Verdict = startMedian <= TARGETS.coldStartMs ? "PASS" : "MISS";
    console.log(
      `\ncold start (spawn → first 200 on /healthz, fresh data folder, median of ${startMs.length}): ${ms(startMedian)}` +
        ` (min ${ms(Math.min(...startMs))}, max ${ms(Math.max(...startMs))})  target ≤ ${TARGETS.coldStartMs} ms  ${startVerdict}`,
    );

    const idleRss = await idleMemory(binary, join(work, "idle"));
    const rssVerdict: Verdict = idleRss <= TARGETS.idleRssBytes ? "PASS" : "MISS";
    console.log(
      `idle RSS (after ${IDLE_REQUESTS} requests and ${IDLE_WAIT_MS / 1000} s idle): ${mb(idleRss)}  target ≤ ${mb(TARGETS.idleRssBytes)}  ${rssVerdict}`,
    );

    if (options.json !== undefined) {
      const results = {
        date,
        mode: mode.name,
        machine,
        load: { threads: WRK_THREADS, warmupS: mode.warmupS, scenarios, peakRssBytes: peakRss },
        coldStart: { runsMs: startMs, medianMs: startMedian, targetMs: TARGETS.coldStartMs, verdict: startVerdict },
        idleRss: { bytes: idleRss, targetBytes: TARGETS.idleRssBytes, verdict: rssVerdict },
        broken,
      };
      await Bun.write(options.json, JSON.stringify(results, null, 2) + "\n");
      console.log(`results written to ${options.json}`);
    }
  } catch (e) {
    broken.push(e instanceof Error ? e.message : String(e));
  } finally {
    killAll();
    rmSync(work, { recursive: true, force: true });
  }
  if (broken.length > 0) {
    process.stderr.write(`\nBROKEN: these figures cannot be trusted:\n${broken.map((b) => `  - ${b}`).join("\n")}\n`);
    return 1;
  }
  return 0;
}

/** Compiles the binary exactly as `npm run build` does, into the run's temporary folder. */
async function build(work: string): Promise<string> {
  const binary = join(work, "docverify");
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "build.ts"), binary], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`build failed (exit ${code}):\n${out}${err}`);
  console.log(out.trim().split("\n").at(-1));
  return binary;
}

interface LoadContext {
  readonly wrk: string;
  readonly mode: Mode;
  readonly floor: Server;
  readonly service: Server;
  readonly workDir: string;
}

async function measureScenario(scenario: Scenario, ctx: LoadContext): Promise<ScenarioReport> {
  const durationS = Math.min(scenario.duration, ctx.mode.maxDurationS);
  const measure = async (server: Server) => {
    await preflight(server, scenario);
    const base = { wrk: ctx.wrk, url: server.url, scenario, threads: WRK_THREADS, workDir: ctx.workDir };
    await runWrk({ ...base, durationS: ctx.mode.warmupS });
    return await runWrk({ ...base, durationS });
  };
  // Each server is warmed up right before its own measurement, and the two measurements of a
  // scenario run back to back so that drift in the machine's speed touches both alike.
  const floor = await measure(ctx.floor);
  const docverify = await measure(ctx.service);
  const ratio = docverify.requestsPerSecond / floor.requestsPerSecond;
  const target = scenario.floorRatioTarget ?? null;
  return {
    name: scenario.name,
    method: scenario.method,
    path: scenario.path,
    connections: scenario.connections,
    threads: Math.min(WRK_THREADS, scenario.connections),
    durationS,
    floor,
    docverify,
    ratio,
    floorRatioTarget: target,
    verdict: target === null ? null : ratio >= target ? "PASS" : "MISS",
  };
}

/** One request before the load, so a scenario that gets errors fails at once with the reason. */
async function preflight(server: Server, scenario: Scenario): Promise<void> {
  const response = await fetch(server.url + scenario.path, { method: scenario.method, headers: scenario.headers, body: scenario.body });
  const text = await response.text();
  if (response.status < 200 || response.status > 299) {
    throw new Error(`${scenario.method} ${server.url}${scenario.path} answered ${response.status} before the load: ${text.slice(0, 500)}`);
  }
}

async function idleMemory(binary: string, dir: string): Promise<number> {
  const server = await startDocverify(binary, dir);
  try {
    for (let i = 0; i < IDLE_REQUESTS; i++) {
      const response = await fetch(`${server.url}/healthz`);
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`GET /healthz answered ${response.status}`);
    }
    await Bun.sleep(IDLE_WAIT_MS);
    return memoryOf(server.pid).rss;
  } finally {
    await server.stop();
  }
}

function printScenario(r: ScenarioReport): void {
  const row = (who: string, w: WrkResult) =>
    `  ${who.padEnd(10)} ${Math.round(w.requestsPerSecond).toLocaleString("en-US").padStart(9)} req/s` +
    `   p50 ${ms(w.latencyMs.p50).padStart(9)}   p99 ${ms(w.latencyMs.p99).padStart(9)}`;
  console.log(`\n${r.method} ${r.path}  (${r.connections} connections, ${r.durationS} s)`);
  console.log(row("floor", r.floor));
  console.log(row("docverify", r.docverify));
  const target = r.floorRatioTarget === null ? "no target set" : `target ≥ ${r.floorRatioTarget.toFixed(2)}  ${r.verdict}`;
  console.log(`  ratio docverify/floor: ${r.ratio.toFixed(2)}  (${target})`);
  for (const [who, w] of [["floor", r.floor], ["docverify", r.docverify]] as const) {
    const problem = wrkProblem(w);
    if (problem !== null) console.log(`  BROKEN ${who}: ${problem}`);
  }
}

function cpuModel(): string {
  const m = /^model name\s*:\s*(.+)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"));
  return m?.[1]?.trim() ?? "unknown CPU";
}

/**
 * Share of all cores busy over `ms`, from /proc/stat. Other work on the machine takes cores
 * from the servers under test; a high figure here says the results are low for that reason.
 */
async function cpuBusy(ms: number): Promise<number> {
  const sample = () => {
    const fields = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal: idle and iowait are the idle time.
    const idle = fields[3]! + fields[4]!;
    return { idle, total: fields.slice(0, 8).reduce((a, b) => a + b, 0) };
  };
  const before = sample();
  await Bun.sleep(ms);
  const after = sample();
  const total = after.total - before.total;
  return total === 0 ? 0 : 1 - (after.idle - before.idle) / total;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function ms(value: number): string {
  return `${value < 10 ? value.toFixed(2) : value.toFixed(1)} ms`;
}

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

process.exit(await main(process.argv.slice(2)));
