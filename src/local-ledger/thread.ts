/**
 * The embedded local ledger on a worker thread of this process: the parent side of worker.ts.
 * `serve` runs the ledger this way (network `local`, no DOCVERIFY_LOCAL_LEDGER_URL, system
 * clock), so consensus, gRPC and the mirror have their own thread and event loop and do not take
 * the API thread's time, while the ledger stays in `serve`'s process: one executable, one process.
 *
 * - `startLedgerWorker` resolves once the ledger listens, with its addresses and operator, and
 *   rejects with the ledger's own message when it cannot start (folder locked, port taken...).
 * - The worker's log lines are written through the caller's logger, on this thread.
 * - `close()` asks the ledger to close, waits for its answer (bounded), then ends the thread.
 * - If the thread dies on its own (an uncaught error in the ledger), that is logged and
 *   `failure()` says why from then on; the caller decides what it means (serve: /readyz fails,
 *   the API goes on). The ledger is not restarted: its lock names this process.
 *
 * The test hooks of an in-thread ledger (`faults`, `runConsensus`) do not exist here: they act on
 * the ledger's in-memory state and on an injected clock, neither of which crosses threads. A test
 * that needs them starts the ledger with `startLocalLedger` or passes a clock to `openLedger`.
 */
import type { Level, Logger } from "../lib/log.ts";
import type { LocalLedgerEndpoint } from "./index.ts";
import type { FromLedgerWorker, ToLedgerWorker } from "./worker-protocol.ts";

/**
 * Set by scripts/build.ts in the compiled executable: the worker's path relative to the bundle
 * root (`./local-ledger/worker.ts`), where `bun build --compile` embeds that entry point.
 */
declare const DOCVERIFY_LEDGER_WORKER: string | undefined;

/**
 * The worker's entry point, always as an absolute URL. From source it is worker.ts beside this
 * file. In the compiled executable every module's `import.meta.url` is the executable's own
 * (`file:///$bunfs/root/docverify`), and the worker is embedded under the bundle root; the URL
 * is built from both, so it names the embedded file. Never a relative path: Bun loads a relative
 * worker path that is not embedded from the working folder, which would run whatever file is
 * there (test/binary.test.ts plants one).
 */
export function ledgerWorkerUrl(): URL {
  if (typeof DOCVERIFY_LEDGER_WORKER === "string") return new URL(DOCVERIFY_LEDGER_WORKER, import.meta.url);
  return new URL("./worker.ts", import.meta.url);
}

export interface EmbeddedLedger extends LocalLedgerEndpoint {
  /** Why the ledger's thread stopped on its own, or null while it runs (and after `close()`). */
  failure(): string | null;
}

export interface LedgerWorkerOptions {
  readonly dir: string;
  readonly host?: string;
  readonly grpcPort?: number;
  readonly mirrorPort?: number;
  /** The second mirror listener's port; default the remembered one, else a free one. */
  readonly secondMirrorPort?: number;
  readonly consensusMs: number;
  readonly log: Logger;
  /** How long `close()` waits for the ledger to close before ending its thread anyway. Default 10000 (serve's drain, 10 s, plus this stay within the systemd unit's 30 s stop timeout). */
  readonly closeTimeoutMs?: number;
  /** For tests only: another entry point (one that wraps worker.ts). Default `ledgerWorkerUrl()`. */
  readonly entry?: URL;
}

const LEVELS: readonly Level[] = ["debug", "info", "warn", "error"];

/** The least severe level the logger writes, so the worker formats nothing that would be dropped. */
function levelOf(log: Logger): Level {
  return LEVELS.find((l) => log.enabled(l)) ?? "error";
}

/** The one useful line of Bun's worker error text (which carries a source excerpt above it). */
function errorText(event: Event): string {
  const e = event as ErrorEvent;
  if (e.error instanceof Error) return e.error.message;
  const text = String(e.message ?? "unknown error");
  const line = text.split("\n").find((l) => /^\s*(\w*Error|error)(\s*\[[^\]]*\])?:\s/.test(l));
  return (line ?? text.split("\n").find((l) => l.trim() !== "") ?? text).trim();
}

export function startLedgerWorker(options: LedgerWorkerOptions): Promise<EmbeddedLedger> {
  const { log } = options;
  const closeTimeoutMs = options.closeTimeoutMs ?? 10_000;
  const worker = new Worker(options.entry ?? ledgerWorkerUrl());
  const send = (message: ToLedgerWorker): void => worker.postMessage(message);

  let phase: "starting" | "running" | "closing" | "exited" = "starting";
  let failure: string | null = null;
  let lastError: string | null = null;
  let onClosedAnswer: ((answer: { error?: string } | null) => void) | null = null;
  let onExit: (() => void) | null = null;
  let closing: Promise<void> | null = null;
  const exited = new Promise<void>((resolve) => (onExit = resolve));

  /** A line the worker's logger formatted: written by ours, with the worker's time. */
  const forward = (line: string): void => {
    let entry: Record<string, unknown>;
    try {
      entry = JSON.parse(line) as Record<string, unknown>;
    } catch {
      log.warn("local ledger: unreadable log line from its thread", { line });
      return;
    }
    const { level, msg, ...fields } = entry;
    const l = LEVELS.find((x) => x === level) ?? "error";
    log[l](String(msg), fields);
  };

  return new Promise<EmbeddedLedger>((resolve, reject) => {
    worker.addEventListener("message", (event: MessageEvent<FromLedgerWorker>) => {
      const m = event.data;
      switch (m.type) {
        case "log":
          forward(m.line);
          return;
        case "started": {
          if (phase !== "starting") return;
          phase = "running";
          const { grpcAddress, mirrorUrl, mirrorUrls, nodeAccountId, operator } = m;
          resolve({ grpcAddress, mirrorUrl, mirrorUrls: Object.freeze([...mirrorUrls]), nodeAccountId, operator, failure: () => failure, close });
          return;
        }
        case "error":
          if (phase !== "starting") return;
          phase = "closing"; // an expected end: not a crash
          worker.terminate();
          reject(new Error(m.message));
          return;
        case "closed":
          onClosedAnswer?.(m);
          return;
      }
    });
    worker.addEventListener("error", (event) => {
      lastError = errorText(event);
      if (phase === "running") log.error("local ledger: uncaught error on its thread", { error: lastError });
    });
    worker.addEventListener("close", (event) => {
      const was = phase;
      phase = "exited";
      onExit?.();
      onClosedAnswer?.(null);
      const why = lastError ?? `its thread exited with code ${(event as CloseEvent).code}`;
      if (was === "starting") {
        reject(new Error(`local ledger: its thread stopped before the ledger started: ${why}`));
      } else if (was === "running") {
        failure = `the embedded local ledger's thread stopped: ${why}`;
        log.error("local ledger: its thread stopped; nothing is anchored until serve is restarted", { error: why });
      }
    });
    send({
      type: "init",
      dir: options.dir,
      consensusMs: options.consensusMs,
      logLevel: levelOf(log),
      ...(options.host !== undefined ? { host: options.host } : {}),
      ...(options.grpcPort !== undefined ? { grpcPort: options.grpcPort } : {}),
      ...(options.mirrorPort !== undefined ? { mirrorPort: options.mirrorPort } : {}),
      ...(options.secondMirrorPort !== undefined ? { secondMirrorPort: options.secondMirrorPort } : {}),
    });
  });

  function close(): Promise<void> {
    return (closing ??= (async () => {
      if (phase === "exited") return;
      phase = "closing";
      const answer = await new Promise<{ error?: string } | null | "timeout">((resolve) => {
        const timer = setTimeout(() => resolve("timeout"), closeTimeoutMs);
        onClosedAnswer = (a) => {
          clearTimeout(timer);
          resolve(a);
        };
        send({ type: "close" });
      });
      worker.terminate();
      await exited;
      if (answer === "timeout") log.error("local ledger: did not close in time; its thread was ended", { timeoutMs: closeTimeoutMs });
      else if (answer === null) log.error("local ledger: its thread stopped while closing", { error: lastError });
      else if (answer.error !== undefined) throw new Error(`local ledger: closing failed: ${answer.error}`);
    })());
  }
}
