/**
 * Memory given back once the service goes quiet. Under load the service's memory grows for good
 * reasons: caches fill (each bounded in bytes), SQLite's page caches fill (64 MiB a connection),
 * the JavaScript heap grows to what the load needs. None of it shrinks by itself when the load
 * stops: a cache holds what it holds, SQLite keeps its pages, and the allocator keeps freed
 * memory only partly returned. Measured (docs/operations.md, "Memory"): 30 s of keyed
 * verification at 200 connections left 253 MB resident after a minute idle, against 129 MB
 * before, 78 MB of it the log writer's page cache.
 *
 * So once no request has been answered for `quietMs` (checked every `quietMs`: the release comes
 * between `quietMs` and twice that after the last request), `release` runs once; it runs again
 * only after the next request and the next quiet period. What it does is the caller's
 * (app/compose.ts): empty the caches, shrink SQLite's page caches, collect the heaps. The first requests
 * afterwards read from the database file (from the system's page cache) and fill the caches again.
 *
 * Noting a request costs one increment; nothing runs per request. The timer never keeps the
 * process alive. A `release` that throws is reported to `failed`, and tried again only after
 * the next request and quiet period (never in a loop while quiet).
 */

/** How long without a request before memory is released (at most twice this after the last request). */
export const QUIET_MS = 15_000;

export interface IdleRelease {
  /** A request was answered (one increment). */
  active(): void;
  /** Releases done so far (/metrics: docverify_idle_releases_total). */
  readonly releases: number;
  /** Stops watching; a release in progress finishes. */
  stop(): void;
}

export interface IdleReleaseOptions {
  /** Default `QUIET_MS`. */
  readonly quietMs?: number;
  readonly release: () => void;
  readonly failed?: (error: unknown) => void;
}

export function createIdleRelease(options: IdleReleaseOptions): IdleRelease {
  const quietMs = options.quietMs ?? QUIET_MS;
  if (!Number.isSafeInteger(quietMs) || quietMs < 1) throw new RangeError("quietMs must be a positive integer");
  let requests = 0;
  /** `requests` at the last check, and when memory was last released (0: nothing to release yet). */
  let seen = 0;
  let releasedAt = 0;
  let releases = 0;
  const timer = setInterval(() => {
    const now = requests;
    if (now === seen && now !== releasedAt) {
      releasedAt = now;
      try {
        options.release();
        releases++;
      } catch (error) {
        options.failed?.(error);
      }
    }
    seen = now;
  }, quietMs);
  timer.unref();
  return {
    active() {
      requests++;
    },
    get releases() {
      return releases;
    },
    stop() {
      clearInterval(timer);
    },
  };
}
