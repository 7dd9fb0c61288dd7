/**
 * Shared test fixtures: throwaway data folders, settings, in-process apps and the service
 * started as a real process. Every helper cleans up after itself through `cleanup()`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import { createApp, type App } from "../../src/app/sqlite.ts";
import { parseConfig, type Config } from "../../src/config/index.ts";
import type { AnyElysia } from "../../src/http/server.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { waitFor } from "./wait.ts";

export const ROOT = resolve(import.meta.dir, "..", "..");
export const BUN = process.execPath;

const cleanups: (() => unknown)[] = [];
/** Runs every registered cleanup, newest first. Call from afterAll/afterEach. */
export async function cleanup(): Promise<void> {
  while (cleanups.length > 0) await cleanups.pop()!();
}
export function onCleanup(fn: () => unknown): void {
  cleanups.push(fn);
}

export function tempDir(prefix = "docverify-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function testConfig(env: Record<string, string> = {}): Config {
  return parseConfig({ DOCVERIFY_DATA_DIR: tempDir(), DOCVERIFY_PORT: "0", ...env });
}

export async function testApp(options: { env?: Record<string, string>; plugins?: AnyElysia[] } = {}) {
  const log = memoryLogger();
  const app: App = await createApp({ config: testConfig(options.env), log, plugins: options.plugins });
  onCleanup(() => app.close());
  // The ledger starts in the background (serve listens meanwhile); tests start from a ready app.
  await app.anchoringStarted;
  /** Sends a request in-process. Paths are relative to http://localhost. */
  const request = (path: string, init?: RequestInit, peer = "127.0.0.1") =>
    app.http.handle(new Request(`http://localhost${path}`, init), peer);
  return { app, log, request };
}

export interface ServiceProcess {
  readonly url: string;
  readonly proc: Subprocess<"ignore", "pipe", "pipe">;
  /** Everything the process has printed on stdout so far, one parsed JSON object per line. */
  logLines(): Record<string, unknown>[];
  stderr(): string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number>;
}

/**
 * Starts `cmd` (the source entry point or the compiled binary) with `serve` on a free port and
 * waits until it logs its address and then that its ledger is up ("ledger ready"; serve listens
 * before the ledger has started).
 */
export async function startService(options: { cmd?: string[]; env?: Record<string, string>; cwd?: string; args?: string[] } = {}): Promise<ServiceProcess> {
  const cmd = options.cmd ?? [BUN, join(ROOT, "src", "main.ts")];
  const cwd = options.cwd ?? tempDir();
  const { proc, stdout, stderr } = spawnCollecting([...cmd, "serve", ...(options.args ?? [])], { cwd, env: { DOCVERIFY_PORT: "0", ...options.env } });
  const logLines = () =>
    stdout()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  let exited = false;
  void proc.exited.then(() => (exited = true));
  const stop = async (signal: NodeJS.Signals = "SIGTERM") => {
    if (!exited) proc.kill(signal);
    return await proc.exited;
  };
  onCleanup(() => stop("SIGKILL"));
  const url = await waitFor(
    "the service to start",
    () => {
      const started = logLines().find((l) => l.msg === "docverify started");
      if (started !== undefined && logLines().some((l) => l.msg === "ledger ready")) return String(started.url);
      if (exited) throw new Error(`service exited with ${proc.exitCode} before starting:\n${stderr()}\n${stdout()}`);
      return undefined;
    },
    15_000,
    20,
  ).catch((e: unknown) => {
    throw exited ? e : new Error(`service did not start within 15 s:\n${stderr()}\n${stdout()}`);
  });
  return { url, proc, logLines, stderr, stop };
}

/**
 * A child process with nothing of the test runner's environment but PATH and HOME (and `env`),
 * its stdout and stderr collected as they come: what it has printed so far, at any moment.
 */
export function spawnCollecting(cmd: string[], options: { cwd: string; env?: Record<string, string> }): { proc: Subprocess<"ignore", "pipe", "pipe">; stdout(): string; stderr(): string } {
  const proc = Bun.spawn(cmd, {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", ...options.env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let out = "";
  let err = "";
  const decoder = new TextDecoder();
  const pump = async (stream: ReadableStream<Uint8Array>, add: (s: string) => void) => {
    for await (const chunk of stream) add(decoder.decode(chunk, { stream: true }));
  };
  void pump(proc.stdout, (s) => (out += s));
  void pump(proc.stderr, (s) => (err += s));
  return { proc, stdout: () => out, stderr: () => err };
}
