/**
 * Fault injection, for tests of the product's anchor loop, kept out of the ledger's own logic.
 *
 * The node (node.ts) is given a `Faults` when it is built and asks it at three fixed points what
 * to do instead of the normal course; it knows nothing of counters or tests. A ledger that runs
 * for real (the embedded one on its worker thread, `docverify local-ledger`) gets `NO_FAULTS`,
 * which never says anything. A ledger started in a test's thread (`startLocalLedger`) gets a
 * `FaultInjector`: the `Faults` the node asks, and the `LocalLedgerFaults` controls the test
 * drives. Every fault is off until a test asks for it, lives in memory only (a restart clears it),
 * and affects only the ledger it was set on.
 */
import { proto } from "@hashgraph/proto";

/**
 * What the node asks. An implementation MUST answer synchronously and MAY change its answers
 * between calls (a count of transactions to affect is consumed one call at a time).
 */
export interface Faults {
  /**
   * At precheck, after the duplicate check and before the payer's account and signature: a
   * response code to answer instead (BUSY, or a permanent refusal), or null to go on. Nothing is
   * recorded for a transaction answered this way.
   */
  atPrecheck(): number | null;
  /**
   * When a transaction passes precheck: whether it is lost (`dropped`: never reaches consensus)
   * and the status it fails with at consensus instead of being executed (`forcedStatus`, or null).
   */
  atAcceptance(): { readonly dropped: boolean; readonly forcedStatus: number | null };
  /** Before each consensus batch: true leaves every accepted transaction pending. */
  consensusPaused(): boolean;
  /**
   * When a transaction arrives, before anything else: true takes its bytes and never answers nor
   * handles them (the client's deadline ends the call).
   */
  swallowed(): boolean;
}

const UNAFFECTED = Object.freeze({ dropped: false, forcedStatus: null });

/** The faults of a ledger that runs for real: none. */
export const NO_FAULTS: Faults = Object.freeze({
  atPrecheck: () => null,
  atAcceptance: () => UNAFFECTED,
  consensusPaused: () => false,
  swallowed: () => false,
});

/** The test controls of a ledger started in the test's thread (`LocalLedger.faults`). */
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
   * The next `n` transactions reach the node and get no answer at all, and are never handled:
   * the client, whose deadline ends the call, cannot know whether they were taken. Nothing is
   * recorded for them.
   */
  swallowNext(n: number): void;
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

/** What the controls need from the ledger: its sockets, and a nudge to run consensus now. */
export interface LedgerControls {
  setUnreachable(on: boolean): Promise<void>;
  wake(): void;
}

export interface FaultInjector {
  /** For the node. */
  readonly faults: Faults;
  /** For the test. */
  readonly controls: LocalLedgerFaults;
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

export function createFaultInjector(ledger: LedgerControls): FaultInjector {
  let busy = 0;
  let reject: { n: number; code: number } = { n: 0, code: 0 };
  let failAtConsensus: { n: number; code: number } = { n: 0, code: 0 };
  let drop = 0;
  let paused = false;
  let swallow = 0;

  const faults: Faults = {
    atPrecheck() {
      // BUSY first: a throttled node answers that before anything else.
      if (busy > 0) {
        busy--;
        return proto.ResponseCodeEnum.BUSY;
      }
      if (reject.n > 0) {
        reject.n--;
        return reject.code;
      }
      return null;
    },
    atAcceptance() {
      const dropped = drop > 0;
      if (dropped) drop--;
      let forcedStatus: number | null = null;
      if (failAtConsensus.n > 0) {
        failAtConsensus.n--;
        forcedStatus = failAtConsensus.code;
      }
      return { dropped, forcedStatus };
    },
    consensusPaused: () => paused,
    swallowed() {
      if (swallow === 0) return false;
      swallow--;
      return true;
    },
  };

  const controls: LocalLedgerFaults = {
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
    swallowNext(n) {
      swallow = count(n);
    },
    resumeConsensus() {
      paused = false;
      ledger.wake();
    },
    unreachable: (on) => ledger.setUnreachable(on),
    async reset() {
      busy = 0;
      reject = { n: 0, code: 0 };
      failAtConsensus = { n: 0, code: 0 };
      drop = 0;
      paused = false;
      swallow = 0;
      ledger.wake();
      await ledger.setUnreachable(false);
    },
  };
  return { faults, controls };
}
