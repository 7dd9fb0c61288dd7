/**
 * Verification log retention (docs/verification.md "Retention"): rows older than
 * `DOCVERIFY_LOG_RETENTION_DAYS` (default 400; 0 keeps every row) are deleted in the background.
 *
 * What this MUST guarantee (and callers may assume):
 * - Never stalls requests. Rows go in small batches, each its own short transaction on the
 *   oldest ids (the primary key's index, no scan), and the loop yields to the event loop between
 *   batches, so a request waits at most one batch. A batch never waits for the write lock
 *   (`LogExpiry.deleteExpired`, verification/log/ports.ts): if another connection holds it (the
 *   admin command line, a backup), the batch is skipped and the sweep tried again later, instead
 *   of blocking the event loop for `busy_timeout`.
 * - Deletes only what has expired: a row goes once its `verifiedAt` (its UUIDv7's millisecond)
 *   is more than the retention older than the injected clock's now. Rows are deleted oldest
 *   first, so the log always holds a contiguous, newest part.
 * - Cursors stay valid: a cursor authenticates its last row's id, not the row, and pages by
 *   `id < last id`, so a cursor whose row (or every row after it) was deleted still decodes; its
 *   next page holds whatever remains.
 * - After a crash nothing is half done: each batch commits or not; the next sweep goes on.
 */
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/log.ts";
import { idFloor } from "./log/ids.ts";
import type { LogExpiry } from "./log/ports.ts";

export const DAY_MS = 86_400_000;
/**
 * Rows per transaction: measured 4 ms a batch with its fsync (500 rows: 9 ms), so a request
 * arriving during a sweep waits at most that long.
 */
export const DEFAULT_BATCH_ROWS = 200;
/**
 * Pause between batches: a large backlog (the first sweep after the setting was lowered) is
 * worked off at a fraction of the event loop and of the disk, not as fast as it can go.
 */
export const DEFAULT_BATCH_PAUSE_MS = 10;
/** Between sweeps. Expiry is by the day; a sweep finds at most this long's worth of rows. */
export const DEFAULT_SWEEP_INTERVAL_MS = 10 * 60_000;
/** After start: not while the service is still starting. */
export const DEFAULT_FIRST_SWEEP_MS = 30_000;

export interface LogRetentionDeps {
  /** The log's storage, on either engine (storage/engine-drivers.ts). */
  readonly store: LogExpiry;
  readonly clock: Clock;
  readonly log: Logger;
  /** Days a row is kept; 0 keeps every row for ever (the job does nothing). */
  readonly days: number;
  readonly batchRows?: number;
  /** Between batches; 0 only yields to the I/O already due. */
  readonly batchPauseMs?: number;
  readonly intervalMs?: number;
  readonly firstSweepMs?: number;
  /**
   * Several nodes: whether this node sweeps now (the anchor loop's leader does, so the nodes do not
   * delete the same rows at once). Absent: always. `sweep()` called directly ignores it.
   */
  readonly active?: () => boolean;
}

export interface LogRetention {
  /** Sweeps `firstSweepMs` after start, then every `intervalMs`. Does nothing when `days` is 0. */
  start(): void;
  /** Stops the schedule; resolves once a sweep in progress has finished its current batch. */
  stop(): Promise<void>;
  /**
   * Deletes every expired row now, batch by batch, yielding between batches; resolves with the
   * number of rows deleted (0 when `days` is 0). A sweep already running is joined, not doubled.
   */
  sweep(): Promise<number>;
}

/** Lets the I/O already due (incoming requests, their log rows) run before the next batch. */
const yieldToRequests = (pauseMs: number) => new Promise<void>((resolve) => (pauseMs > 0 ? setTimeout(resolve, pauseMs) : setImmediate(resolve)));

export function createLogRetention(deps: LogRetentionDeps): LogRetention {
  const { store, clock, log, days } = deps;
  if (!Number.isSafeInteger(days) || days < 0) throw new RangeError("days must be a whole number of days, 0 or more");
  const batchRows = deps.batchRows ?? DEFAULT_BATCH_ROWS;
  if (!Number.isSafeInteger(batchRows) || batchRows < 1) throw new RangeError("batchRows must be a positive integer");
  const batchPauseMs = deps.batchPauseMs ?? DEFAULT_BATCH_PAUSE_MS;
  const intervalMs = deps.intervalMs ?? DEFAULT_SWEEP_INTERVAL_MS;
  const firstSweepMs = deps.firstSweepMs ?? DEFAULT_FIRST_SWEEP_MS;

  /** One batch: the rows deleted, or null when the storage is busy (SQLite: another connection writes). */
  const batch = (floor: string) => store.deleteExpired(floor, batchRows);

  let running: Promise<number> | null = null;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let failures = 0;

  async function run(): Promise<number> {
    if (days === 0) return 0;
    const floor = idFloor(clock.now() - days * DAY_MS);
    let deleted = 0;
    for (;;) {
      const n = await batch(floor);
      if (n === null) {
        log.info("verification log retention: storage busy, sweep postponed", { deleted });
        break;
      }
      deleted += n;
      if (n < batchRows) break;
      await yieldToRequests(batchPauseMs);
      if (stopped) break;
    }
    if (deleted > 0) log.info("verification log retention: expired rows deleted", { deleted, days });
    return deleted;
  }

  function sweep(): Promise<number> {
    running ??= run().finally(() => (running = null));
    return running;
  }

  function schedule(delayMs: number): void {
    if (stopped) return;
    timer = setTimeout(() => {
      timer = null;
      if (deps.active !== undefined && !deps.active()) return schedule(intervalMs);
      sweep().then(
        () => {
          failures = 0;
          schedule(intervalMs);
        },
        (error: unknown) => {
          // Retried at the next interval; reported once per run of failures, not every time.
          if (failures++ === 0) log.error("verification log retention failed; retrying at the next sweep", { error });
          schedule(intervalMs);
        },
      );
    }, delayMs);
    timer.unref?.();
  }

  return {
    start() {
      if (days === 0 || timer !== null) return;
      stopped = false;
      schedule(firstSweepMs);
    },
    async stop() {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
      await running?.catch(() => undefined);
    },
    sweep,
  };
}
