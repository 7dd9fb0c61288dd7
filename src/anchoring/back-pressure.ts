/**
 * Back-pressure on record creation: records are taken only as fast as the ledger takes their
 * messages, so the queue stays flat and nothing queued waits long enough to risk its validity
 * window (docs/anchoring.md, docs/benchmarks.md "Decision taken: pace creation to anchoring").
 *
 * A refusal is an explicit error: `SERVICE_UNAVAILABLE` (503) with `details.cause` and a
 * Retry-After of its own (RETRY_AFTER_SECONDS), one of
 * - `queue_full`: the unfinished rows reached `backlogLimit`;
 * - `behind`: the rows the ledger has not accepted yet (`pending`) outnumber what was anchored
 *   in the last `windowMs` (at least `floor` are always allowed), so the backlog would grow
 *   faster than it drains. Accepted rows do not count: the ledger has them, and they wait only
 *   for consensus, a fixed delay. Counted, they made every burst above `floor` / consensus time
 *   (about 60 records/s at 3 s) "behind" before the first of it could be anchored, and the
 *   clients' 5 s pause then left the machine idle (docs/benchmarks.md "Anchoring under record
 *   creation");
 * - `too_old`: the oldest row not yet accepted by the ledger was queued more than `maxQueueAgeMs`
 *   ago (the ledger is unreachable, or slow to accept).
 * The checks are in that order; the first that holds is the cause. `check` is synchronous and
 * reads no storage: it works on the queue counts the anchor loop observed last (`observe`: at most
 * 100 ms old, COUNTS_EVERY_MS in anchorer.ts).
 */
import { DomainError } from "../lib/errors.ts";

export type BackPressureCause = "queue_full" | "behind" | "too_old";

export const BACK_PRESSURE_CAUSES: readonly BackPressureCause[] = ["queue_full", "behind", "too_old"];

/** What the queue holds as of the loop's last pass. */
export interface QueueCounts {
  readonly pending: number;
  readonly accepted: number;
  /** created_at of the oldest `pending` row, or open batch (its first leaf's time; null: none). */
  readonly oldestPendingAt: number | null;
  /**
   * Several nodes: what the anchor loop's leader anchored in its last window, as it reported with
   * its heartbeat. A node that does not lead anchors nothing itself and judges "behind" by this.
   */
  readonly anchoredByLeader?: number;
}

export interface BackPressureOptions {
  /** Unfinished rows past which creation is refused. Default 5000. */
  readonly backlogLimit?: number;
  /** Age of the oldest row not yet accepted past which creation is refused. Default 30 s. */
  readonly maxQueueAgeMs?: number;
  /** The window of anchored rows the backlog is measured against. Default 10 s. */
  readonly windowMs?: number;
  /** Pending rows always allowed, whatever was anchored. Default 200. */
  readonly floor?: number;
}

/**
 * `behind` clears as soon as the loop submits what waits, within a second or two: a client told
 * to wait 5 s would leave the ledger idle. The other two mean the ledger is not keeping up.
 */
export const RETRY_AFTER_SECONDS: Readonly<Record<BackPressureCause, number>> = { queue_full: 5, behind: 1, too_old: 5 };

const MESSAGES: Readonly<Record<BackPressureCause, string>> = {
  queue_full: "The ledger queue is full; retry shortly.",
  behind: "The ledger is behind: records are accepted again as it catches up; retry shortly.",
  too_old: "The ledger is behind: records are accepted again once it catches up; retry shortly.",
};

/** The 503 a refusal is, with its cause in `details`. */
export function backPressureError(cause: BackPressureCause): DomainError {
  return new DomainError("SERVICE_UNAVAILABLE", MESSAGES[cause], { cause }, RETRY_AFTER_SECONDS[cause]);
}

export class BackPressure {
  private readonly backlogLimit: number;
  private readonly maxQueueAgeMs: number;
  private readonly windowMs: number;
  private readonly floor: number;
  /** When recent messages reached consensus, oldest first, and how many leaves (or records) each carried; entries before `head` are spent. */
  private readonly anchoredAt: number[] = [];
  private readonly anchoredN: number[] = [];
  private head = 0;
  /** The sum of `anchoredN` from `head` on. */
  private live = 0;
  private counts: QueueCounts = { pending: 0, accepted: 0, oldestPendingAt: null };

  constructor(options: BackPressureOptions = {}) {
    this.backlogLimit = options.backlogLimit ?? 5000;
    this.maxQueueAgeMs = options.maxQueueAgeMs ?? 30_000;
    this.windowMs = options.windowMs ?? 10_000;
    this.floor = options.floor ?? 200;
  }

  /** The queue as the loop's pass found it. */
  observe(counts: QueueCounts): void {
    this.counts = counts;
  }

  /** Unfinished rows as of the last `observe`. */
  backlog(): { readonly pending: number; readonly accepted: number; readonly oldestPendingAt: number | null } {
    return { pending: this.counts.pending, accepted: this.counts.accepted, oldestPendingAt: this.counts.oldestPendingAt };
  }

  /** A message reached consensus at `now`, carrying `n` records or revocations (a batch's leaves; 1 otherwise). */
  noteAnchored(now: number, n = 1): void {
    this.anchoredAt.push(now);
    this.anchoredN.push(n);
    this.live += n;
  }

  /** Why creation must be refused at `now`, or null. */
  check(now: number): BackPressureCause | null {
    const unfinished = this.counts.pending + this.counts.accepted;
    if (unfinished >= this.backlogLimit) return "queue_full";
    if (this.counts.pending >= Math.max(this.floor, this.anchoredSince(now - this.windowMs), this.counts.anchoredByLeader ?? 0)) return "behind";
    if (this.counts.oldestPendingAt !== null && now - this.counts.oldestPendingAt > this.maxQueueAgeMs) return "too_old";
    return null;
  }

  /** Records and revocations this loop anchored in the last window before `now` (what a leader reports to the other nodes). */
  anchoredRecently(now: number): number {
    return this.anchoredSince(now - this.windowMs);
  }

  /** Records and revocations anchored at or after `since`; forgets the older ones. */
  private anchoredSince(since: number): number {
    while (this.head < this.anchoredAt.length && this.anchoredAt[this.head]! < since) this.live -= this.anchoredN[this.head++]!;
    if (this.head > 4096 && this.head * 2 > this.anchoredAt.length) {
      this.anchoredAt.splice(0, this.head);
      this.anchoredN.splice(0, this.head);
      this.head = 0;
    }
    return this.live;
  }
}
