/**
 * The servers under test, each started as its own process with its output in files: a pipe
 * would make the harness read every per-request log line docverify writes, and that reading
 * would compete for the same cores as the server being measured.
 */
import { closeSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";

export interface Server {
  readonly pid: number;
  /** Base URL announced by the process, without a trailing slash. */
  readonly url: string;
  /** Sends SIGTERM and resolves with the exit code (null when a signal ended it). */
  stop(): Promise<number | null>;
}

const live = new Set<Subprocess>();

/** Kills every process still running, for an interrupted or failed run. */
export function killAll(): void {
  for (const proc of live) proc.kill("SIGKILL");
  live.clear();
}

/**
 * A clean environment, so a DOCVERIFY_* variable in the caller's shell (a log level, say)
 * cannot change what is measured.
 */
export function baseEnv(): Record<string, string> {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp" };
}

/** `--env NAME=VALUE` flags (idle-memory.ts, profile.ts) as an environment to add. */
export function envPairs(pairs: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new Error(`--env wants NAME=VALUE, got ${pair}`);
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return env;
}

export interface Spawned {
  readonly proc: Subprocess<"ignore", number, number>;
  readonly stdoutFile: string;
  readonly stderrFile: string;
}

export function spawnLogged(cmd: string[], env: Record<string, string>, dir: string): Spawned {
  mkdirSync(dir, { recursive: true });
  const stdoutFile = join(dir, "stdout.log");
  const stderrFile = join(dir, "stderr.log");
  const out = openSync(stdoutFile, "w");
  const err = openSync(stderrFile, "w");
  try {
    const proc = Bun.spawn(cmd, { cwd: dir, env: { ...baseEnv(), ...env }, stdin: "ignore", stdout: out, stderr: err });
    live.add(proc);
    void proc.exited.then(() => live.delete(proc));
    return { proc, stdoutFile, stderrFile };
  } finally {
    closeSync(out);
    closeSync(err);
  }
}

function output(s: Spawned): string {
  return `${readFileSync(s.stderrFile, "utf8")}${readFileSync(s.stdoutFile, "utf8")}`.slice(-4000);
}

export async function stopProcess(proc: Subprocess, graceMs: number): Promise<number | null> {
  if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM");
  const exited = await Promise.race([proc.exited.then(() => true), Bun.sleep(graceMs).then(() => false)]);
  if (!exited) {
    proc.kill("SIGKILL");
    await proc.exited;
    throw new Error(`process ${proc.pid} did not stop within ${graceMs} ms of SIGTERM`);
  }
  return proc.exitCode;
}

/**
 * Starts `cmd` and waits for the JSON line on stdout whose `msg` is `startedMsg`, which
 * carries the listening `url`, and, when given, for the line `readyMsg` too (docverify logs
 * "ledger ready" once the ledger it started after listening is up).
 */
async function launch(cmd: string[], env: Record<string, string>, dir: string, startedMsg: string, readyMsg?: string): Promise<Server> {
  const spawned = spawnLogged(cmd, env, dir);
  const { proc } = spawned;
  const deadline = performance.now() + 15_000;
  for (;;) {
    let url: string | null = null;
    let ready = readyMsg === undefined;
    for (const line of readFileSync(spawned.stdoutFile, "utf8").split("\n")) {
      if (!line.startsWith("{")) continue;
      const entry = JSON.parse(line) as { msg?: unknown; url?: unknown };
      if (entry.msg === startedMsg && typeof entry.url === "string") url = entry.url;
      if (entry.msg === readyMsg) ready = true;
    }
    if (url !== null && ready) {
      // docverify drains for up to 10 s on SIGTERM; allow that and a little more.
      return { pid: proc.pid, url, stop: () => stopProcess(proc, 15_000) };
    }
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(`${cmd.join(" ")} exited (${proc.exitCode ?? proc.signalCode}) before starting:\n${output(spawned)}`);
    }
    if (performance.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`${cmd.join(" ")} did not start within 15 s:\n${output(spawned)}`);
    }
    await Bun.sleep(5);
  }
}

export function startFloor(dir: string): Promise<Server> {
  return launch([process.execPath, join(import.meta.dir, "floor-server.ts")], {}, dir, "floor started");
}

/**
 * Starts the compiled binary on a free loopback port, in `dir` (logs there), with the data
 * folder `dataDir` (default `dir/data`) and any extra settings.
 */
export function startDocverify(binary: string, dir: string, options: { dataDir?: string; env?: Record<string, string> } = {}): Promise<Server> {
  const env = { DOCVERIFY_PORT: "0", DOCVERIFY_DATA_DIR: options.dataDir ?? join(dir, "data"), ...options.env };
  return launch([binary, "serve"], env, dir, "docverify started", "ledger ready");
}

/** The app with a benchmark-only switch (scripts/bench/app-server.ts): `--memo-off` or `--unpaced`. */
export function startAppServer(dir: string, options: { dataDir: string; env?: Record<string, string>; flag: "--memo-off" | "--unpaced" }): Promise<Server> {
  const env = { DOCVERIFY_PORT: "0", DOCVERIFY_DATA_DIR: options.dataDir, ...options.env };
  return launch([process.execPath, join(import.meta.dir, "app-server.ts"), options.flag], env, dir, "docverify started");
}

/**
 * Milliseconds from spawning the binary on a fresh data folder to its first 200 on
 * /healthz, as a supervisor or load balancer would see it. The port is chosen beforehand so
 * polling can begin at once, without waiting for the log line.
 */
export async function coldStart(binary: string, dir: string): Promise<number> {
  const port = freePort();
  const url = `http://127.0.0.1:${port}/healthz`;
  const started = performance.now();
  const spawned = spawnLogged([binary, "serve"], { DOCVERIFY_PORT: String(port), DOCVERIFY_DATA_DIR: join(dir, "data") }, dir);
  const { proc } = spawned;
  let elapsed: number;
  for (;;) {
    const response = await fetch(url).catch(() => null);
    if (response !== null) {
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`GET /healthz answered ${response.status} during cold start:\n${output(spawned)}`);
      elapsed = performance.now() - started;
      break;
    }
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(`docverify exited (${proc.exitCode ?? proc.signalCode}) during cold start:\n${output(spawned)}`);
    }
    if (performance.now() - started > 15_000) throw new Error(`docverify did not answer within 15 s:\n${output(spawned)}`);
    // Polling more often than this only takes CPU from the process being timed.
    await Bun.sleep(2);
  }
  const code = await stopProcess(proc, 15_000);
  if (code !== 0) throw new Error(`docverify exited with ${code ?? proc.signalCode} on SIGTERM after cold start:\n${output(spawned)}`);
  return elapsed;
}

/** A port free on loopback right now; another process could take it before we do, rarely. */
function freePort(): number {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const { port } = listener;
  listener.stop(true);
  return port;
}

/** Resident and peak resident memory of a process, in bytes, from /proc. */
export function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) => {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status);
    if (m === null) throw new Error(`no ${field} in /proc/${pid}/status`);
    return Number(m[1]) * 1024;
  };
  return { rss: kib("VmRSS"), peak: kib("VmHWM") };
}

/** The kernel's clock ticks per second, as /proc/<pid>/stat counts CPU time (USER_HZ: 100 on Linux). */
const TICKS = 100;

/**
 * Fields of a /proc stat file (a process's, `/proc/<pid>/stat`, or a thread's,
 * `/proc/<pid>/task/<tid>/stat`) after the command's closing parenthesis: [0] is the state, [1]
 * the parent. Null when the process or thread is gone.
 */
export function statFields(statFile: string): string[] | null {
  try {
    const stat = readFileSync(statFile, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/** CPU seconds in those fields: utime + stime (fields 14 and 15 of the file). */
export function cpuSecondsOf(fields: readonly string[]): number {
  return (Number(fields[11]) + Number(fields[12])) / TICKS;
}
