/**
 * `serve` on the embedded SQLite: the core over the data folder, the services assembled over it
 * (compose.ts) with what this engine brings: its drivers, the group commit of the request path's
 * writes, the log's writer thread, a rate limiter in memory, and readiness by the write lock.
 */
import { createRateLimiter } from "../keys/rate-limit.ts";
import { createWriteQueue } from "../records/write-queue.ts";
import { shrinkMemory, storageWritable } from "../storage/db.ts";
import type { SqliteStore } from "../storage/store.ts";
import { assemble, type AppOptions, type ServiceApp } from "./compose.ts";
import { openCoreAndKey, type Core } from "./core.ts";

export interface App extends Core, ServiceApp {
  readonly store: SqliteStore;
}

export async function createApp(options: AppOptions): Promise<App> {
  const { core, masterKey } = openCoreAndKey(options);
  const limiter = createRateLimiter({ clock: core.clock });
  const service = await assemble(
    core,
    {
      anchoring: { journal: core.drivers.journal().journal, loop: core.drivers.anchoring().loop },
      masterKey,
      writes: createWriteQueue(core.drivers.records().writes),
      limiter,
      memory: {
        held: () => [{ name: "rate_limit_buckets", ...limiter.stats() }],
        release() {
          limiter.sweep();
          shrinkMemory(core.db);
        },
      },
      storageCheck: () => storageWritable(core.db),
      // Its group commits are written by a worker thread with its own connection (docs/architecture.md, "Storage"), so
      // the inserts, the commit and its fsync never hold the event loop.
      logWriterThread: { path: core.db.$client.filename },
      close: () => core.close(),
    },
    options,
  );
  // Descriptors, not a spread: `anchoring` is a getter that throws until the ledger is up.
  return Object.defineProperties({ ...core }, Object.getOwnPropertyDescriptors(service)) as unknown as App;
}
