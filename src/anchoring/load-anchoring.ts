/**
 * Loads the anchoring code for `serve`, which listens first and starts the ledger after
 * (docs/anchoring.md, "Start-up"), a turn of the event loop after it is asked for, as load.ts loads
 * the SDK. Apart from load.ts, which index.ts reaches through setup.ts: no import cycle.
 */
import { turn } from "./load.ts";

/** The anchor loop and the ledger's setup, without the SDK (a local ledger loads it on first use: deferred-ledger.ts). */
export async function loadAnchoring(): Promise<typeof import("./index.ts")> {
  await turn();
  return await import("./index.ts");
}
