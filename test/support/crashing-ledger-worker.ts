/**
 * The embedded ledger's real worker (src/local-ledger/worker.ts) plus a way for a test
 * to crash its thread: once `<dir>/crash-now` exists, an uncaught error is thrown on the thread.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import "../../src/local-ledger/worker.ts";

declare const self: Worker;

self.addEventListener("message", (event: MessageEvent<{ type: string; dir?: string }>) => {
  if (event.data.type !== "init" || event.data.dir === undefined) return;
  const trigger = join(event.data.dir, "crash-now");
  const poll = setInterval(() => {
    if (!existsSync(trigger)) return;
    clearInterval(poll);
    throw new Error("ledger thread crash (test)");
  }, 20);
});
