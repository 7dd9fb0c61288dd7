/**
 * Fault injection for tests of the product's anchor loop. Every fault is off until a test asks
 * for it, lives in memory only (a restart clears it), and affects only the ledger it was set on.
 */
import { proto } from "@hashgraph/proto";

/** The test hooks of one local ledger. */
export interface LocalLedgerFaults {
  /**
   * The next `n` transactions (createTopic, submitMessage) get precheck BUSY, as from a throttled
   * node; nothing is recorded, so the SDK's automatic retry of the same bytes then succeeds.
   */
  busyNext(n: number): void;
  /**
   * The next `n` transactions are refused at precheck with `status`, a ResponseCodeEnum name such
   * as "INSUFFICIENT_PAYER_BALANCE": a permanent error the SDK does not retry.
   */
  rejectNext(n: number, status: string): void;
  /**
   * The next `n` accepted transactions reach consensus failed with `status` (e.g.
   * "INVALID_SIGNATURE") instead of being executed; the payer is charged as for any failure.
   */
  failNextAtConsensus(n: number, status: string): void;
  /**
   * The next `n` transactions are accepted (precheck OK) and then lost: they never reach
   * consensus. Their receipt answers UNKNOWN until their validity window has closed, then
   * RECEIPT_NOT_FOUND, and resubmitting them answers DUPLICATE_TRANSACTION, as on a real node.
   */
  dropNext(n: number): void;
  /**
   * Stops consensus: accepted transactions stay pending (receipt UNKNOWN, invisible on the mirror).
   * After `resumeConsensus()` they reach consensus at the time of resumption, so those whose
   * validity window closed meanwhile fail with TRANSACTION_EXPIRED.
   */
  pauseConsensus(): void;
  resumeConsensus(): void;
  /**
   * `true` closes both listening sockets (gRPC and mirror), so clients get connection refused;
   * `false` listens again on the same ports. Consensus of transactions already accepted goes on
   * meanwhile, as a network does when only the link to it is down. Resolves once the sockets are
   * closed or listening.
   */
  unreachable(on: boolean): Promise<void>;
  /** Clears every fault and makes the ledger reachable again. */
  reset(): Promise<void>;
}

/** The fault state the node consults; the counters are consumed one transaction at a time. */
export interface FaultState {
  takeBusy(): boolean;
  takeReject(): number | null;
  takeFailAtConsensus(): number | null;
  takeDrop(): boolean;
  readonly consensusPaused: boolean;
}

function statusCode(name: string): number {
  const code = (proto.ResponseCodeEnum as unknown as Record<string, unknown>)[name];
  if (typeof code !== "number") throw new TypeError(`unknown ResponseCodeEnum name: ${name}`);
  return code;
}

function count(n: number): number {
  if (!Number.isSafeInteger(n) || n < 0) throw new TypeError(`a fault count must be a non-negative integer, got ${n}`);
  return n;
}

/** What the hooks need from the ledger: its sockets, and a nudge to run consensus now. */
export interface FaultControls {
  setUnreachable(on: boolean): Promise<void>;
  wake(): void;
}

export function createFaultState(controls: FaultControls): { state: FaultState; hooks: LocalLedgerFaults } {
  let busy = 0;
  let reject: { n: number; code: number } = { n: 0, code: 0 };
  let failAtConsensus: { n: number; code: number } = { n: 0, code: 0 };
  let drop = 0;
  let paused = false;

  const state: FaultState = {
    takeBusy() {
      if (busy === 0) return false;
      busy--;
      return true;
    },
    takeReject() {
      if (reject.n === 0) return null;
      reject.n--;
      return reject.code;
    },
    takeFailAtConsensus() {
      if (failAtConsensus.n === 0) return null;
      failAtConsensus.n--;
      return failAtConsensus.code;
    },
    takeDrop() {
      if (drop === 0) return false;
      drop--;
      return true;
    },
    get consensusPaused() {
      return paused;
    },
  };

  const hooks: LocalLedgerFaults = {
    busyNext(n) {
      busy = count(n);
    },
    rejectNext(n, status) {
      reject = { n: count(n), code: statusCode(status) };
    },
    failNextAtConsensus(n, status) {
      failAtConsensus = { n: count(n), code: statusCode(status) };
    },
    dropNext(n) {
      drop = count(n);
    },
    pauseConsensus() {
      paused = true;
    },
    resumeConsensus() {
      paused = false;
      controls.wake();
    },
    unreachable: (on) => controls.setUnreachable(on),
    async reset() {
      busy = 0;
      reject = { n: 0, code: 0 };
      failAtConsensus = { n: 0, code: 0 };
      drop = 0;
      paused = false;
      controls.wake();
      await controls.setUnreachable(false);
    },
  };
  return { state, hooks };
}
