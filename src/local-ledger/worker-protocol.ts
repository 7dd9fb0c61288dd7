/**
 * Messages between the embedded local ledger's worker thread (worker.ts) and the thread that
 * started it (thread.ts). Types only: importing this file loads nothing.
 */
import type { Level } from "../lib/log.ts";
import type { LocalLedgerEndpoint } from "./index.ts";

/** Parent → worker. `init` once, first; `close` once, last. */
export type ToLedgerWorker =
  | {
      readonly type: "init";
      readonly dir: string;
      readonly host?: string;
      readonly grpcPort?: number;
      readonly mirrorPort?: number;
      /** The second mirror listener's port; absent: the remembered one, else a free one (the embedded ledger always serves two). */
      readonly secondMirrorPort?: number;
      readonly consensusMs: number;
      readonly logLevel: Level;
    }
  | { readonly type: "close" };

/** Worker → parent. */
export type FromLedgerWorker =
  /** A JSON log line, as the worker's logger formatted it; the parent writes it through its own logger. */
  | { readonly type: "log"; readonly line: string }
  /** Answer to `init`: the ledger is up. */
  | ({ readonly type: "started" } & Omit<LocalLedgerEndpoint, "close">)
  /** Answer to `init`: the ledger did not start; the worker has nothing running. */
  | { readonly type: "error"; readonly message: string }
  /** Answer to `close`; `error` when closing failed (the ledger is stopped as far as it could be). */
  | { readonly type: "closed"; readonly error?: string };
