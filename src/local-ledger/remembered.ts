/**
 * A local ledger on remembered ports: the first start picks free ports and writes them to
 * `<dir>/ports.json` (gRPC, the mirror, and the second mirror when one is served); later starts on
 * the same folder use them again, so the `hashscanUrl` and `mirrorNodeUrl` links and the receipts'
 * mirror URLs already handed out keep working across restarts. When a remembered port is taken by
 * something else, the ledger starts on fresh ports (logged as a warning) rather than not at all,
 * and remembers those.
 *
 * Used by the embedded ledger's worker thread (worker.ts) and `docverify local-ledger`, which run
 * it for real, without test hooks (index.ts `startLedger`), and by `serve` in-thread when a test
 * injects a clock, which gets them (`startLocalLedger`). The product's anchoring/setup.ts
 * re-exports it.
 */
import "../lib/protobuf-long.ts"; // before the ledger loads @hashgraph/proto: see the file
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { systemClock, type Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/log.ts";
import { PORTS_FILE, readRememberedAddress, type RememberedAddress } from "./addresses.ts";
import { startLedger, startLocalLedger, type RunningLedger } from "./index.ts";

export { readRememberedAddress, type RememberedAddress };


function remember(dir: string, address: RememberedAddress): void {
  const file = join(dir, PORTS_FILE);
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, JSON.stringify(address) + "\n", { mode: 0o600 });
  renameSync(tmp, file);
}

function portOf(hostPort: string): number {
  return Number(hostPort.slice(hostPort.lastIndexOf(":") + 1));
}

export interface RememberedLedgerOptions {
  readonly dir: string;
  readonly host?: string;
  readonly grpcPort?: number;
  readonly mirrorPort?: number;
  /** A second mirror listener on this port (0: a free one). Default: the remembered one, if any. */
  readonly secondMirrorPort?: number;
  /**
   * Serve a second mirror listener even when none is remembered or given (the embedded ledger
   * does, for receipts, docs/receipts.md §3). Without it, a second is served only when given or
   * remembered, so a folder's second address is never forgotten by a start that did not ask.
   */
  readonly secondMirror?: boolean;
  readonly consensusMs: number;
  /** The least time between two transactions' consensus (index.ts `consensusIntervalMs`); default 0, none. `docverify local-ledger --consensus-interval-ms` only. */
  readonly consensusIntervalMs?: number;
  /** The genesis operator's key when the ledger is created (`startLedger`'s `operatorKey`); default the development key. */
  readonly operatorKey?: string;
  readonly clock?: Clock;
  readonly log: Logger;
}

/**
 * Starts a local ledger in `dir`, on the remembered ports unless ports are given, and remembers
 * the ports it got. Used by the embedded ledger's worker (worker.ts), by `serve` in-thread when a
 * test injects a clock, and by `docverify local-ledger`.
 *
 * A folder remembered by a release without a second mirror port (no `secondMirrorPort` in
 * `ports.json`) keeps its gRPC and first mirror ports; the second, when asked for, comes up on
 * a free port and is remembered from then on. When remembered ports are taken, the second alone
 * is moved first (the first mirror's address is in every link handed out), then all of them.
 */
export async function startRememberedLedger(options: RememberedLedgerOptions): Promise<RunningLedger> {
  mkdirSync(options.dir, { recursive: true, mode: 0o700 });
  const remembered = readRememberedAddress(options.dir);
  const host = options.host ?? remembered?.host ?? "127.0.0.1";
  const sameHost = remembered !== null && remembered.host === host;
  const grpcPort = options.grpcPort ?? (sameHost ? remembered.grpcPort : 0);
  const mirrorPort = options.mirrorPort ?? (sameHost ? remembered.mirrorPort : 0);
  const rememberedSecond = sameHost && remembered.secondMirrorPort !== undefined && remembered.secondMirrorPort !== mirrorPort ? remembered.secondMirrorPort : undefined;
  // undefined: no second listener.
  const secondMirrorPort = options.secondMirrorPort ?? rememberedSecond ?? (options.secondMirror ? 0 : undefined);
  // A ledger on an injected clock is a test's (serve runs the real one on the system clock, on its
  // worker thread): it gets the test hooks, a real one none.
  const forTest = options.clock !== undefined && options.clock !== systemClock;
  const start = (g: number, m: number, second: number | undefined) =>
    (forTest ? startLocalLedger : startLedger)({
      dataDir: options.dir,
      host,
      grpcPort: g,
      mirrorPort: m,
      ...(second !== undefined ? { secondMirrorPort: second } : {}),
      consensusMs: options.consensusMs,
      ...(options.consensusIntervalMs !== undefined ? { consensusIntervalMs: options.consensusIntervalMs } : {}),
      log: options.log,
      ...(options.operatorKey !== undefined ? { operatorKey: options.operatorKey } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
    });
  const explicit = options.grpcPort !== undefined || options.mirrorPort !== undefined || options.secondMirrorPort !== undefined;
  const notAboutPorts = (e: unknown) => /in use by process|lock|operator key/i.test((e as Error).message);
  let ledger: RunningLedger;
  try {
    ledger = await start(grpcPort, mirrorPort, secondMirrorPort);
  } catch (e) {
    const usedRemembered = (grpcPort !== 0 || mirrorPort !== 0 || (secondMirrorPort ?? 0) !== 0) && !explicit;
    if (!usedRemembered || notAboutPorts(e)) throw e;
    const warn = (what: string, error: unknown) =>
      options.log.warn(what, { host, grpcPort, mirrorPort, ...(secondMirrorPort !== undefined ? { secondMirrorPort } : {}), error: (error as Error).message });
    let moved: RunningLedger | null = null;
    if (secondMirrorPort !== undefined && secondMirrorPort !== 0) {
      try {
        moved = await start(grpcPort, mirrorPort, 0);
        warn("local ledger: its remembered second mirror port is taken; the second mirror starts on a new port, so receipts issued before name the old one", e);
      } catch (again) {
        if (notAboutPorts(again)) throw again;
      }
    }
    if (moved === null) {
      warn("local ledger: its remembered ports are taken; starting on new ports, so ledger links handed out before point at the old address", e);
      moved = await start(0, 0, secondMirrorPort !== undefined ? 0 : undefined);
    }
    ledger = moved;
  }
  const [, second] = ledger.mirrorUrls;
  remember(options.dir, {
    host,
    grpcPort: portOf(ledger.grpcAddress),
    mirrorPort: Number(new URL(ledger.mirrorUrl).port),
    ...(second !== undefined ? { secondMirrorPort: Number(new URL(second).port) } : {}),
  });
  return ledger;
}
