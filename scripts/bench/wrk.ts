/**
 * wrk, Debian's package, as the load generator: it is written in C and runs outside Bun, so
 * the harness's own costs never count against the servers. Results come from a Lua `done()`
 * hook that prints exact figures as JSON, rather than from wrk's rounded text summary.
 */
import { join } from "node:path";
import { installCommand } from "../test-programs.ts";
import type { Scenario } from "./scenarios.ts";

/**
 * Returns wrk's path, or stops with the one command that installs it: the harness installs
 * nothing itself (like the tests: docs/testing.md).
 */
export async function ensureWrk(): Promise<string> {
  const found = Bun.which("wrk");
  if (found !== null) return found;
  throw new Error(`wrk is not installed; install it with:  ${installCommand(["wrk"])}`);
}

/** wrk's version banner, e.g. "wrk debian/4.1.0-3+b2". */
export async function wrkVersion(wrk: string): Promise<string> {
  // `wrk -v` prints its banner and usage, then exits 1: only the banner's start is wanted.
  const out = await new Response(Bun.spawn([wrk, "-v"], { stdout: "pipe", stderr: "pipe" }).stdout).text();
  return out.split("\n")[0]?.replace(/\s*\[.*$/, "").trim() ?? "wrk";
}

export interface WrkResult {
  readonly requests: number;
  readonly durationS: number;
  readonly requestsPerSecond: number;
  readonly latencyMs: { readonly p50: number; readonly p90: number; readonly p99: number; readonly max: number };
  /** wrk counts a status of 400 or more as "Non-2xx or 3xx"; the others are socket errors. */
  readonly errors: {
    readonly non2xx: number;
    readonly connect: number;
    readonly read: number;
    readonly write: number;
    readonly timeout: number;
  };
}

export interface WrkRun {
  readonly wrk: string;
  /** Base URL of the server, without a path. */
  readonly url: string;
  readonly scenario: Scenario;
  readonly threads: number;
  readonly durationS: number;
  /** Folder for the generated Lua script. */
  readonly workDir: string;
  /**
   * When set, every response's status and body are written, one line each (`status<TAB>body`),
   * to `<responsesFile>.<thread>`: for a run that must know which requests were acknowledged
   * (the failover of `--postgres`). Off by default: wrk then reads no body at all.
   */
  readonly responsesFile?: string;
}

/** The lines `runWrk` wrote with `responsesFile`: each response's status and body. */
export async function readResponses(responsesFile: string, threads: number): Promise<{ status: number; body: string }[]> {
  const out: { status: number; body: string }[] = [];
  for (let t = 0; t < threads; t++) {
    const file = Bun.file(`${responsesFile}.${t}`);
    if (!(await file.exists())) continue;
    for (const line of (await file.text()).split("\n")) {
      const tab = line.indexOf("\t");
      if (tab > 0) out.push({ status: Number(line.slice(0, tab)), body: line.slice(tab + 1) });
    }
  }
  return out;
}

const RESULT_MARK = "BENCH_RESULT ";

export async function runWrk(run: WrkRun): Promise<WrkResult> {
  const { scenario } = run;
  const script = join(run.workDir, `wrk-${scenario.name}.lua`);
  await Bun.write(script, luaScript(scenario, run.responsesFile));
  const args = [
    run.wrk,
    `--threads=${Math.min(run.threads, scenario.connections)}`,
    `--connections=${scenario.connections}`,
    `--duration=${run.durationS}s`,
    `--script=${script}`,
    run.url + scenario.path,
  ];
  const proc = Bun.spawn(args, { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const line = out.split("\n").find((l) => l.startsWith(RESULT_MARK));
  if (code !== 0 || line === undefined) {
    throw new Error(`wrk failed (exit ${code}) on ${scenario.method} ${run.url}${scenario.path}:\n${out}${err}`);
  }
  const raw = JSON.parse(line.slice(RESULT_MARK.length)) as {
    requests: number;
    durationUs: number;
    errors: { connect: number; read: number; write: number; status: number; timeout: number };
    latencyUs: { p50: number; p90: number; p99: number; max: number };
  };
  const durationS = raw.durationUs / 1e6;
  return {
    requests: raw.requests,
    durationS,
    requestsPerSecond: raw.requests / durationS,
    latencyMs: {
      p50: raw.latencyUs.p50 / 1000,
      p90: raw.latencyUs.p90 / 1000,
      p99: raw.latencyUs.p99 / 1000,
      max: raw.latencyUs.max / 1000,
    },
    errors: {
      non2xx: raw.errors.status,
      connect: raw.errors.connect,
      read: raw.errors.read,
      write: raw.errors.write,
      timeout: raw.errors.timeout,
    },
  };
}

/** Describes what went wrong in a run, or returns null when every request got a good answer. */
export function wrkProblem(result: WrkResult): string | null {
  const e = result.errors;
  const socket = e.connect + e.read + e.write + e.timeout;
  if (result.requests === 0) return "no request completed";
  if (e.non2xx === 0 && socket === 0) return null;
  return `${e.non2xx} non-2xx responses; socket errors: connect ${e.connect}, read ${e.read}, write ${e.write}, timeout ${e.timeout}`;
}

/** `{{hash}}` in a scenario's `freshHashBody`. */
export const HASH_SLOT = "{{hash}}";

/**
 * With a fixed body the request is fixed at load time (wrk.format caches it per connection), so
 * a scenario's method, headers and body cost nothing per request. With `bodies`, every request
 * is formatted once per thread in `init()` and `request()` only picks the next one; `paths` the
 * same, one request per path. With
 * `freshHashBody`, `request()` formats a body with a DocHash never sent before: a random
 * prefix new for every wrk run (so the warm-up's hashes are not repeated), the thread's
 * number and a counter. `done()` runs once, after all threads.
 */
function luaScript(scenario: Scenario, responsesFile?: string): string {
  const lines = [`wrk.method = ${luaString(scenario.method)}`];
  if (responsesFile !== undefined && scenario.freshHashBody === undefined) throw new Error(`scenario ${scenario.name}: responsesFile needs freshHashBody (its threads' numbers)`);
  for (const [name, value] of Object.entries(scenario.headers ?? {})) lines.push(`wrk.headers[${luaString(name)}] = ${luaString(value)}`);
  if (scenario.body !== undefined) lines.push(`wrk.body = ${luaString(scenario.body)}`);
  if (scenario.bodies !== undefined && scenario.paths !== undefined) throw new Error(`scenario ${scenario.name}: bodies and paths cannot be combined`);
  if (scenario.bodies !== undefined || scenario.freshHashBody !== undefined || scenario.paths !== undefined) {
    // setup() runs in the main Lua state once per thread, before that thread's init().
    lines.push("local threads = 0", "function setup(thread)", "  thread:set(\"tid\", threads)", "  threads = threads + 1", "end");
  }
  // Requests formatted once per thread and sent in turn: each body, or each path.
  const inTurn = scenario.bodies !== undefined ? { values: scenario.bodies, format: "wrk.format(nil, nil, nil, v)" } : scenario.paths !== undefined ? { values: scenario.paths, format: "wrk.format(nil, v)" } : null;
  if (inTurn !== null) {
    lines.push(
      `local values = {${inTurn.values.map(luaString).join(",\n")}}`,
      "local reqs = {}",
      "local n = 0",
      "function init(args)",
      `  for i, v in ipairs(values) do reqs[i] = ${inTurn.format} end`,
      "  n = (tid * 7919) % #reqs",
      "end",
      "function request()",
      "  n = n % #reqs + 1",
      "  return reqs[n]",
      "end",
    );
  }
  if (scenario.freshHashBody !== undefined) {
    const [before, after] = scenario.freshHashBody.split(HASH_SLOT);
    if (after === undefined) throw new Error(`scenario ${scenario.name}: freshHashBody has no ${HASH_SLOT}`);
    const prefix = Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString("hex"); // 48 hex digits
    lines.push(
      "local k = 0",
      "function request()",
      "  k = k + 1",
      // 7 + 48 + 2 + 14 = 71 characters: sha256: and 64 lowercase hex digits (decimal digits are hex digits).
      `  local body = ${luaString(before!)} .. string.format("sha256:%s%02x%014d", ${luaString(prefix)}, tid, k) .. ${luaString(after)}`,
      "  return wrk.format(nil, nil, nil, body)",
      "end",
    );
  }
  if (responsesFile !== undefined) {
    // Line-buffered, so that every response is in the file however wrk's Lua states end.
    lines.push(
      "local out = nil",
      "function response(status, headers, body)",
      `  if out == nil then out = io.open(${luaString(responsesFile)} .. "." .. tid, "w"); out:setvbuf("line") end`,
      '  out:write(status, "\\t", (string.gsub(body, "[\\r\\n]", " ")), "\\n")',
      "end",
    );
  }
  lines.push(
    "function done(summary, latency, requests)",
    "  local e = summary.errors",
    "  io.write(string.format(",
    `    '${RESULT_MARK}{"requests":%d,"durationUs":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..`,
    `    '"latencyUs":{"p50":%d,"p90":%d,"p99":%d,"max":%d}}\\n',`,
    "    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,",
    "    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))",
    "end",
    "",
  );
  return lines.join("\n");
}

/** A Lua 5.1 string literal for any UTF-8 text: bytes outside plain ASCII become \ddd escapes. */
function luaString(text: string): string {
  let out = '"';
  for (const byte of new TextEncoder().encode(text)) {
    const plain = byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c;
    out += plain ? String.fromCharCode(byte) : "\\" + String(byte).padStart(3, "0");
  }
  return out + '"';
}
