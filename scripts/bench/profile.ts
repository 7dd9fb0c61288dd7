/**
 * One scenario of `npm run bench`, profiled, to find where the time goes from profiles rather
 * than guesses (docs/benchmarks.md "Running it"):
 *
 *   bun scripts/bench/profile.ts SCENARIO [--seconds N] [--windows K] [--prof DIR] [--fresh] [--tree DIR] [--env NAME=VALUE]...
 *
 * SCENARIO is a name from scripts/bench/scenarios.ts on the 1,000,000-record dataset
 * (`verify-public`, `verify-organisation`, `log-first-page`, `log-page-10k-deep`,
 * `receipt-public`, `records-create`, `verify-public-memo-off`). The app runs from source
 * (scripts/bench/app-server.ts, the app the binary serves, with the scenario's switch) on a copy
 * of the cached dataset in `.bench-cache/profile-data` (made once; `--fresh` makes it again, for
 * scenarios that write), takes the scenario's wrk load for 2 s, then N s (default 10) measured.
 *
 * Printed: requests/s and latency, and CPU per request for each of the process's threads, read
 * from `/proc/<pid>/task/<tid>/stat` at the start and end of the measured window (`--windows K`:
 * of each of K windows one after the other, for a rate that drifts with time). With `--prof
 * DIR` the app runs under Bun's `--cpu-prof-md` and the main thread's profile (the whole run,
 * start-up and warm-up included) is written to DIR when it stops, and its samples inside the
 * measured window are summed by function. `--tree DIR` serves the app of another checkout (a
 * `git worktree` of an earlier commit, with node_modules), for a before/after on the same data;
 * `--env NAME=VALUE` (repeatable) adds to the app's environment (a JSC option, `BUN_JSC_*`).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { CACHE_ROOT, copyDataset, ensureDataset } from "./dataset.ts";
import { baseEnv, cpuSecondsOf, envPairs, spawnLogged, statFields, stopProcess } from "./processes.ts";
import { LOG_DEPTH, millionScenarios, type Scenario } from "./scenarios.ts";
import { preflight } from "./preflight.ts";
import { ensureWrk, runWrk, wrkProblem } from "./wrk.ts";

const { values, positionals } = parseArgs({
  args: process.argv.slice(2),
  options: { seconds: { type: "string" }, prof: { type: "string" }, fresh: { type: "boolean" }, tree: { type: "string" }, windows: { type: "string" }, env: { type: "string", multiple: true } },
  allowPositionals: true,
  strict: true,
});
const name = positionals[0];
const seconds = Number(values.seconds ?? "10");
const windows = Number(values.windows ?? "1");
if (name === undefined || positionals.length !== 1 || !(seconds > 0) || !Number.isInteger(windows) || windows < 1) {
  console.error("usage: bun scripts/bench/profile.ts SCENARIO [--seconds N] [--windows K] [--prof DIR] [--fresh] [--tree DIR] [--env NAME=VALUE]...");
  process.exit(2);
}

const dataset = await ensureDataset((line) => console.log(line));
const dataDir = join(CACHE_ROOT, "profile-data");
if (values.fresh === true || !existsSync(join(dataDir, "docverify.db"))) {
  rmSync(dataDir, { recursive: true, force: true });
  const started = performance.now();
  copyDataset(dataset, dataDir);
  console.log(`copied the dataset in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

const scenarios = millionScenarios(dataset, "DEEP_CURSOR");
const found = scenarios.find((s) => s.name === name);
if (found === undefined) {
  console.error(`unknown scenario ${name}; one of: ${scenarios.map((s) => s.name).join(", ")}`);
  process.exit(2);
}

const work = join(CACHE_ROOT, "profile-work");
mkdirSync(work, { recursive: true });
const flag = found.target === "million-unpaced" ? ["--unpaced"] : found.target === "million-memo-off" ? ["--memo-off"] : [];
const prof = values.prof === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${resolve(values.prof)}`];
const spawned = spawnLogged(
  [process.execPath, ...prof, join(values.tree === undefined ? join(import.meta.dir, "..", "..") : resolve(values.tree), "scripts", "bench", "app-server.ts"), ...flag],
  {
    ...baseEnv(),
    DOCVERIFY_PORT: "0",
    DOCVERIFY_DATA_DIR: dataDir,
    DOCVERIFY_RATE_LIMIT_ANONYMOUS: "1000000000",
    DOCVERIFY_RATE_LIMIT_KEY: "1000000000",
    DOCVERIFY_RATE_LIMIT_ORG: "1000000000",
    ...envPairs(values.env ?? []),
  },
  work,
);
const url = await (async () => {
  const deadline = performance.now() + 60_000;
  while (performance.now() < deadline) {
    for (const line of readFileSync(spawned.stdoutFile, "utf8").split("\n")) {
      if (line.includes('"docverify started"')) return (JSON.parse(line) as { url: string }).url;
    }
    if (spawned.proc.exitCode !== null) break;
    await Bun.sleep(20);
  }
  throw new Error(`app-server did not start:\n${readFileSync(spawned.stderrFile, "utf8")}`);
})();

/** The page `LOG_DEPTH` rows deep's cursor, paged for through the API. */
async function deepCursor(): Promise<string> {
  let after: string | null = null;
  const auth = { authorization: `Bearer ${dataset.logKey}` };
  for (let rows = 0; rows < LOG_DEPTH; rows += 100) {
    const res: Response = await fetch(`${url}/v1/verifications?limit=100${after === null ? "" : `&after=${after}`}`, { headers: auth });
    after = ((await res.json()) as { pagination: { nextCursor: string } }).pagination.nextCursor;
  }
  return after!;
}
const scenario: Scenario = found.path.includes("DEEP_CURSOR") ? { ...found, path: found.path.replace("DEEP_CURSOR", await deepCursor()) } : found;

/** CPU seconds of each thread of `pid`, by thread name (threads of one name summed, workers apart). */
function threadCpu(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const fields = statFields(`/proc/${pid}/task/${tid}/stat`);
    if (fields === null) continue; // the thread ended
    let label = "main";
    if (tid !== String(pid)) {
      try {
        label = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim();
        // Worker threads apart (the ledger's, the signing pool's, the log's writer), by thread id.
        if (label === "Worker") label = `Worker ${tid}`;
      } catch {
        continue;
      }
    }
    out.set(label, (out.get(label) ?? 0) + cpuSecondsOf(fields));
  }
  return out;
}

const wrk = await ensureWrk();
const base = { wrk, url, scenario, threads: 2, workDir: work };
// As the bench: one request answered 2xx first (record creation answers 503 until its topic exists).
await preflight({ url }, scenario);
await runWrk({ ...base, durationS: 2 });
/** One measured window: requests/s and latency, and CPU per request for each thread. */
async function measure(windowS: number): Promise<void> {
  const before = threadCpu(spawned.proc.pid);
  const result = await runWrk({ ...base, durationS: windowS });
  const after = threadCpu(spawned.proc.pid);
  const problem = wrkProblem(result);
  console.log(
    `${scenario.name}: ${Math.round(result.requestsPerSecond).toLocaleString("en-US")} req/s, p50 ${result.latencyMs.p50.toFixed(2)} ms, p99 ${result.latencyMs.p99.toFixed(2)} ms` +
      (problem === null ? "" : ` (${problem})`),
  );
  let total = 0;
  const rows: [string, number][] = [];
  for (const [label, cpu] of after) {
    const used = cpu - (before.get(label) ?? 0);
    if (used <= 0) continue;
    total += used;
    rows.push([label, used]);
  }
  rows.sort((a, b) => b[1] - a[1]);
  for (const [label, used] of rows) {
    console.log(`  ${label.padEnd(16)} ${((used / windowS) * 100).toFixed(0).padStart(4)} % busy, ${((used * 1e6) / result.requests).toFixed(1).padStart(7)} µs/request`);
  }
  console.log(`  ${"process".padEnd(16)} ${((total / windowS) * 100).toFixed(0).padStart(4)} % busy, ${((total * 1e6) / result.requests).toFixed(1).padStart(7)} µs/request`);
}
// `--windows K`: the measured time in K windows one after the other, to see a rate that drifts.
for (let w = 0; w < windows; w++) await measure(seconds / windows);
const measuredEnd = performance.now();
await stopProcess(spawned.proc, 20_000);
const tailMs = performance.now() - measuredEnd;
if (values.prof !== undefined) {
  const dir = resolve(values.prof);
  const file = readdirSync(dir).filter((f) => f.endsWith(".cpuprofile")).sort().at(-1);
  if (file === undefined) throw new Error(`no .cpuprofile in ${dir}`);
  printProfile(JSON.parse(readFileSync(join(dir, file), "utf8")) as CpuProfile, seconds * 1e6, tailMs * 1e3);
  console.log(`profile: ${join(dir, file)}`);
}

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/**
 * The main thread's samples inside the measured window only (the profile runs from start-up to
 * exit: the window is the `windowUs` before the last `tailUs`, the time the process took to stop
 * after the load ended): the functions with the most self time, and the most inclusive time.
 */
function printProfile(profile: CpuProfile, windowUs: number, tailUs: number): void {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const label = (id: number) => {
    const f = byId.get(id)!.callFrame;
    const where = f.url === "" ? "native" : `${f.url.replace(/^.*\/(node_modules|src|scripts)\//, "$1/")}:${f.lineNumber + 1}`;
    return `${f.functionName || "(anonymous)"} ${where}`;
  };
  const times: number[] = [];
  let t = profile.startTime;
  for (const d of profile.timeDeltas) times.push((t += d));
  const end = times.at(-1)! - tailUs;
  const start = end - windowUs;
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let counted = 0;
  profile.samples.forEach((id, i) => {
    if (times[i]! < start || times[i]! > end) return;
    counted++;
    const l = label(id);
    self.set(l, (self.get(l) ?? 0) + 1);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const name = label(at);
      if (seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + 1);
    }
  });
  const idle = [...self].filter(([l]) => /^\(idle\)|^\(program\)/.test(l)).reduce((a, [, n]) => a + n, 0);
  console.log(`main thread, measured window: ${counted} samples, ${((idle / counted) * 100).toFixed(1)} % idle`);
  const top = (m: Map<string, number>, n: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n);
  console.log("self:");
  for (const [l, c] of top(self, 45)) console.log(`  ${((c / counted) * 100).toFixed(1).padStart(5)} %  ${l}`);
  console.log("inclusive:");
  for (const [l, c] of top(inclusive, 60)) console.log(`  ${((c / counted) * 100).toFixed(1).padStart(5)} %  ${l}`);
}
