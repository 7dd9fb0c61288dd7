/**
 * Transaction ids, chosen before anything is signed or submitted (docs/anchoring.md "Transaction
 * ids and the clock"): the id is the
 * primary key of `ledger_transactions`, so it is stored with the row and the same bytes can be
 * re-submitted after a crash.
 *
 * What it guarantees: ids are `<operator>@<seconds>.<nanoseconds>` (nanoseconds 9 digits) and
 * follow the clock, one millisecond back. Within a millisecond, or when the clock steps back by
 * up to a second, valid starts strictly increase; a larger step back is followed (ids ahead of
 * the clock are refused by the nodes as INVALID_TRANSACTION_START until the clock catches up, so
 * keeping them monotonic stalled anchoring for as long as the step). An id is never handed out
 * twice: one at or below the highest valid start handed out so far (the journal's newest when
 * made, and every id since) may repeat an earlier one, so it takes the upper half of its
 * millisecond, which ids made on time never reach (a million ids a second would be needed
 * before they did), and on SQLite each such id is also looked up in the journal and passed over
 * if it is a row (loop/ports.ts `TransactionIdJournal`, implemented by the storage drivers). The
 * journal's primary key refuses a repeat on either engine. Synchronous: the records service
 * calls it between its signatures and its write transaction.
 *
 * Several nodes (docs/storage.md "Transaction ids across nodes") pay with one operator account, so
 * their ids must differ too: each node holds a lane (storage/pg-cluster.ts `claimLane`, an advisory
 * lock per lane for the node's lifetime) and hands out only valid starts whose nanoseconds are its
 * lane modulo the number of lanes. Two live nodes never hold one lane, so they never hand out one
 * id; a node that takes over a dead node's lane starts after the newest valid start in the journal,
 * as a restart does.
 */
import type { Clock } from "../lib/clock.ts";
import { DomainError } from "../lib/errors.ts";
import type { TransactionIdJournalNow } from "./loop/ports.ts";

/** A transaction id and the validity window its row must store. */
export interface NewTransaction {
  /** `<account>@<seconds>.<nanoseconds>`, e.g. "0.0.2@1768469400.123456789". */
  readonly transactionId: string;
  /** Start of the validity window, ms since the epoch. */
  readonly validStartMs: number;
  /** Length of the validity window, seconds. */
  readonly validSeconds: number;
}

export interface TransactionIdOptions {
  /** Where the last valid start handed out is read, and each id that may repeat one is looked up (SQLite), unless `lastValidStartNs` gives it. */
  readonly journal?: TransactionIdJournalNow;
  /** The last valid start any transaction in the journal has, in ns (read by the caller: PostgreSQL). */
  readonly lastValidStartNs?: bigint;
  readonly clock: Clock;
  /** The account that pays, e.g. `0.0.2`. */
  readonly operator: string;
  /** Validity window of every transaction, seconds (15–180). */
  readonly validSeconds: number;
  /** Valid start is set this far before now, for clock skew with public nodes. */
  readonly backdateMs: number;
  /**
   * Several nodes: this node's lane; every valid start handed out is `index` modulo `lanes` (in ns).
   * `held()` false (the lane's lock was lost with its connection) refuses every id until the node
   * has a lane again: another node may have taken this one.
   */
  readonly lane?: { readonly index: number; readonly lanes: number; held?(): boolean };
}

/** The latest valid start among these transaction ids, in ns (0 for none). */
export function maxValidStartNs(rows: readonly { readonly id: string }[]): bigint {
  let max = 0n;
  for (const { id } of rows) {
    const m = /@(\d+)\.(\d+)$/.exec(id);
    if (m !== null) {
      const ns = BigInt(m[1]!) * 1_000_000_000n + BigInt(m[2]!);
      if (ns > max) max = ns;
    }
  }
  return max;
}

const MS_NS = 1_000_000n;
/** Where ids that may fall among earlier ones start within their millisecond. */
const HALF_MS_NS = 500_000n;
/** A step back of the clock up to this is taken as jitter: ids stay monotonic. Beyond it, they follow the clock. */
export const CLOCK_STEP_TOLERANCE_MS = 1_000;

/** A source of fresh transaction ids over one journal. Reads the journal once, when made. */
export function createTransactionIds(options: TransactionIdOptions): () => NewTransaction {
  const { clock, operator, validSeconds, backdateMs } = options;
  if (!Number.isInteger(validSeconds) || validSeconds < 15 || validSeconds > 180) throw new TypeError(`validSeconds must be 15 to 180, got ${validSeconds}`);
  const lane = options.lane;
  if (lane !== undefined && (!Number.isSafeInteger(lane.lanes) || lane.lanes < 1 || lane.lanes > 1_000_000 || !Number.isSafeInteger(lane.index) || lane.index < 0 || lane.index >= lane.lanes)) {
    throw new TypeError(`lane must be 0 to lanes - 1 of 1 to 1000000 lanes, got ${lane.index} of ${lane.lanes}`);
  }
  const lanes = BigInt(lane?.lanes ?? 1);
  /** The smallest valid start in this node's lane at or after `ns` (read at each id: a node that lost its lane claims another). */
  const inLane = (ns: bigint): bigint => {
    const index = BigInt(lane?.index ?? 0);
    return ns + ((index - (ns % lanes) + lanes) % lanes);
  };
  /** The last valid start handed out, in ns. */
  if (options.lastValidStartNs === undefined && options.journal === undefined) throw new TypeError("createTransactionIds needs journal or lastValidStartNs");
  let lastNs: bigint = options.lastValidStartNs ?? maxValidStartNs(options.journal!.newestIds().map((id) => ({ id })));
  /** The highest valid start handed out (or in the journal when made): ids at or below it may repeat one. */
  let highNs = lastNs;
  const idOf = (ns: bigint) => `${operator}@${ns / 1_000_000_000n}.${(ns % 1_000_000_000n).toString().padStart(9, "0")}`;
  const isRow = options.journal?.exists ?? null;
  const stepNs = BigInt(CLOCK_STEP_TOLERANCE_MS) * MS_NS;
  return () => {
    if (lane?.held !== undefined && !lane.held()) {
      throw new DomainError("SERVICE_UNAVAILABLE", "This node lost its place among the nodes sharing the ledger account; retry shortly.", undefined, 1);
    }
    // One millisecond back, so the nanosecond bumps that keep ids unique within a millisecond
    // (up to a lane's width, or to the upper half below) never put a valid start in the
    // ledger's future (INVALID_TRANSACTION_START).
    const nowNs = BigInt(clock.now() - backdateMs - 1) * MS_NS;
    let next = nowNs > lastNs ? nowNs : lastNs - nowNs > stepNs ? nowNs : lastNs + 1n;
    if (next <= highNs) {
      // Where ids were handed out before the clock stepped back: the upper half of the millisecond.
      const within = next % MS_NS;
      if (within < HALF_MS_NS) next += HALF_MS_NS - within;
      next = inLane(next);
      if (isRow !== null) while (isRow(idOf(next))) next = inLane(next + 1n);
    } else {
      next = inLane(next);
    }
    lastNs = next;
    if (next > highNs) highNs = next;
    return { transactionId: idOf(next), validStartMs: Number(next / MS_NS), validSeconds };
  };
}
