/**
 * The embedded local ledger's worker thread: `serve` (network `local`, no
 * DOCVERIFY_LOCAL_LEDGER_URL, system clock) starts the ledger here, in its own thread and event
 * loop, so consensus, gRPC and the mirror do not take the API thread's time (still the same
 * process). The parent side is thread.ts; the messages are worker-protocol.ts.
 *
 * This file is an entry point of its own, in the source tree and in the compiled executable
 * (scripts/build.ts lists it), and imports only the local ledger: never `@hashgraph/sdk`.
 *
 * - `init` starts the ledger on its remembered ports (remembered.ts), with a second mirror
 *   listener (receipts name two mirror nodes, docs/receipts.md §3), and answers `started` with
 *   its addresses and operator, or `error` with the reason (nothing is left running then).
 * - `close` closes it and answers `closed`.
 * - Log lines go to the parent as text; the parent writes them through its logger, so stdout stays
 *   one JSON-lines stream written by one thread.
 */
import "../lib/protobuf-long.ts"; // first: see the file
import { createLogger } from "../lib/log.ts";
import type { RunningLedger } from "./index.ts";
import { startRememberedLedger } from "./remembered.ts";
import type { FromLedgerWorker, ToLedgerWorker } from "./worker-protocol.ts";

declare const self: Worker;

if (Bun.isMainThread) throw new Error("local-ledger/worker.ts runs only as a worker thread (see thread.ts)");

const post = (message: FromLedgerWorker): void => self.postMessage(message);

let ledger: RunningLedger | null = null;
let starting: Promise<unknown> | null = null;

self.onmessage = (event: MessageEvent<ToLedgerWorker>) => {
  const message = event.data;
  if (message.type === "init") {
    if (starting !== null) return;
    const log = createLogger({ level: message.logLevel, write: (line) => post({ type: "log", line }) });
    starting = startRememberedLedger({
      dir: message.dir,
      consensusMs: message.consensusMs,
      log,
      ...(message.host !== undefined ? { host: message.host } : {}),
      ...(message.grpcPort !== undefined ? { grpcPort: message.grpcPort } : {}),
      ...(message.mirrorPort !== undefined ? { mirrorPort: message.mirrorPort } : {}),
      ...(message.secondMirrorPort !== undefined ? { secondMirrorPort: message.secondMirrorPort } : {}),
      secondMirror: true,
    }).then(
      (started) => {
        ledger = started;
        post({
          type: "started",
          grpcAddress: started.grpcAddress,
          mirrorUrl: started.mirrorUrl,
          mirrorUrls: [...started.mirrorUrls],
          nodeAccountId: started.nodeAccountId,
          operator: { ...started.operator },
        });
      },
      (e: unknown) => post({ type: "error", message: e instanceof Error ? e.message : String(e) }),
    );
    return;
  }
  if (message.type === "close") {
    void (async () => {
      await starting;
      try {
        await ledger?.close();
        post({ type: "closed" });
      } catch (e) {
        post({ type: "closed", error: e instanceof Error ? e.message : String(e) });
      }
    })();
  }
};
