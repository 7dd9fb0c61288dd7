/**
 * Loads the ledger SDK when it is needed (`loadHederaLedger`); the anchoring code itself, which
 * `serve` loads after it listens, is loaded by load-anchoring.ts (apart, since index.ts reaches this
 * file through setup.ts: no import cycle). The SDK and the libraries under it take ~40 ms of this thread to evaluate in the compiled
 * executable; loaded in one go, a request that arrives meanwhile waits all of that. Loaded
 * library by library with a turn of the event loop between, the longest wait is one step
 * (~20 ms, the SDK itself). Each step only evaluates modules the next would have evaluated
 * anyway; nothing is loaded that anchoring does not use.
 */

/** One turn of the event loop: pending requests are answered before the next step. */
export const turn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** The SDK adapter, loaded a library at a time. */
export async function loadHederaLedger(): Promise<typeof import("./hedera-ledger.ts")> {
  const steps: { load: () => Promise<unknown>; warmUpOnly: boolean }[] = [
    // First, as everywhere: see the file.
    { load: () => import("../lib/protobuf-long.ts"), warmUpOnly: false },
    // The SDK's generated protobuf classes and its key handling, which the SDK loads first. These
    // are the SDK's own dependencies, not ours: importing them here only splits the work, so if a
    // later SDK no longer has them, the step is skipped and the SDK loads them (or not) itself.
    { load: () => import("@hiero-ledger/proto"), warmUpOnly: true },
    { load: () => import("@hiero-ledger/cryptography"), warmUpOnly: true },
  ];
  for (const step of steps) {
    await turn();
    try {
      await step.load();
    } catch (e) {
      if (!step.warmUpOnly) throw e;
    }
  }
  await turn();
  return await import("./hedera-ledger.ts");
}
