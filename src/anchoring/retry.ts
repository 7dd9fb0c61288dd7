/**
 * How the anchor loop waits and what it says while it does, as Litestream's replication loop
 * does: capped exponential backoff, error lines rate-limited per kind, and one line when the
 * ledger answers again after failures. No storage, no ledger: a clock and a logger.
 */
import type { Logger } from "../lib/log.ts";

/**
 * The delay before try `n` (n ≥ 1; 0 counts as 1): `baseMs` doubling with each try, capped at
 * `maxMs`. Every backoff of anchoring is this one curve: the loop's retries (500 ms to 60 s, with
 * `jittered`), a revocation queued again (30 s to an hour), a topic creation queued again (10 s
 * to an hour).
 */
export function backoffDelay(n: number, baseMs: number, maxMs: number): number {
  // The exponent is capped before the cap applies, so a large `n` never overflows to Infinity.
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, Math.min(30, n - 1)));
}

/**
 * The wait before re-submitting a transaction that may have been sent (`unknown`): its backoff,
 * but never past the last moment it can still be submitted (`untilCutoffMs` from now, the window's
 * end less the nodes' margin), so a ledger that returns while the loop backs off still gets the
 * transaction before its window closes (a long backoff would otherwise sleep through a short
 * window, and the record be abandoned with the ledger back). Past the cutoff, the backoff as it
 * is: the window decides, and a ledger still down is never asked in a tight loop.
 */
export function retryBeforeCutoff(backoffMs: number, untilCutoffMs: number): number {
  return untilCutoffMs > 1 ? Math.min(backoffMs, untilCutoffMs - 1) : backoffMs;
}

/** `ms` drawn uniformly from its upper half, so rows that failed together do not retry together. */
export function jittered(ms: number, random: () => number = Math.random): number {
  return Math.round(ms / 2 + (random() * ms) / 2);
}

const ERROR_LOG_EVERY_MS = 60_000;
/** Most error kinds the rate limit remembers at once (kinds carry transaction ids and error texts). */
const ERROR_LOG_MAX_KINDS = 256;

/**
 * The rate limit of the loop's error lines: one line per kind per `everyMs`, the next one saying
 * how many were skipped meanwhile. Kinds may carry ids (a transaction, an error's text), so the
 * memory of them is bounded: once a kind's period is over with nothing skipped, it is forgotten
 * (its next line would be logged anyway); and past `maxKinds` the oldest kinds are forgotten
 * first, skipped counts and all.
 */
export class ErrorLogLimiter {
  /** kind → when it was last logged and how many lines were skipped since; oldest first. */
  private readonly seen = new Map<string, { at: number; suppressed: number }>();
  private sweptAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly everyMs: number = ERROR_LOG_EVERY_MS,
    private readonly maxKinds: number = ERROR_LOG_MAX_KINDS,
  ) {
    if (!(everyMs > 0) || !Number.isInteger(maxKinds) || maxKinds < 1) throw new RangeError("ErrorLogLimiter: everyMs > 0 and maxKinds ≥ 1");
  }

  /** Kinds remembered now. */
  get size(): number {
    return this.seen.size;
  }

  /** Null: skip this line. Otherwise log it, with the count of lines of its kind skipped before it. */
  admit(kind: string, now: number): { suppressed: number } | null {
    this.sweep(now);
    const seen = this.seen.get(kind);
    if (seen !== undefined && now - seen.at < this.everyMs) {
      seen.suppressed++;
      return null;
    }
    // Re-inserted, so the map stays ordered by `at` and eviction takes the oldest.
    this.seen.delete(kind);
    while (this.seen.size >= this.maxKinds) this.seen.delete(this.seen.keys().next().value!);
    this.seen.set(kind, { at: now, suppressed: 0 });
    return { suppressed: seen?.suppressed ?? 0 };
  }

  /** At most once a period: forgets the kinds whose period is over with nothing skipped. */
  private sweep(now: number): void {
    if (now - this.sweptAt < this.everyMs) return;
    this.sweptAt = now;
    for (const [kind, e] of this.seen) if (e.suppressed === 0 && now - e.at >= this.everyMs) this.seen.delete(kind);
  }
}

/**
 * The loop's warnings, through an `ErrorLogLimiter` on real time (a line a minute is for the
 * operator reading the log, whatever clock the loop runs on). Silenced once the loop stops:
 * calls still settling then are not news.
 */
export class ErrorLog {
  private silenced = false;

  constructor(
    private readonly log: Logger,
    private readonly limiter: ErrorLogLimiter = new ErrorLogLimiter(),
    private readonly now: () => number = Date.now,
  ) {}

  /** Logs `msg` at warn unless a line of `kind` was logged within the period; adds `suppressed`. */
  warn(kind: string, msg: string, fields: Record<string, unknown>): void {
    if (this.silenced) return;
    const admitted = this.limiter.admit(kind, this.now());
    if (admitted === null) return;
    this.log.warn(msg, { ...fields, ...(admitted.suppressed > 0 ? { suppressed: admitted.suppressed } : {}) });
  }

  /** Logs `msg` at info, unless silenced. Not rate-limited: for lines that come once per episode. */
  info(msg: string, fields: Record<string, unknown>): void {
    if (!this.silenced) this.log.info(msg, fields);
  }

  silence(): void {
    this.silenced = true;
  }
}

/**
 * Whether the ledger answers, as the loop last saw it: the readiness value, the count of failures
 * in a row (which sizes the loop's backoff), and the moment it answers again after failures.
 * Each failure is a warn line (rate-limited, with the count so far); the first answer after
 * failures is one info line, `ledger reachable again`, with that count; it calls `onRecovered`,
 * and `takeRecovery` answers true once (the loop's next pass then makes every row waiting on a
 * backoff due at once).
 */
export class LedgerHealth {
  private observed: { value: true | string; at: number } | null = null;
  private streak = 0;
  /** When the current run of failures began (`now()`), or null while the ledger answers. */
  private downSince: number | null = null;
  private recovered = false;
  private probing: Promise<void> | null = null;

  constructor(
    private readonly errors: ErrorLog,
    private readonly onRecovered: () => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** Failures in a row since the ledger last answered. */
  get failures(): number {
    return this.streak;
  }

  /** The last observation, if younger than `ttlMs`. */
  fresh(ttlMs: number): true | string | null {
    const h = this.observed;
    return h !== null && this.now() - h.at < ttlMs ? h.value : null;
  }

  /** The last observation, however old; null before the first. */
  get last(): true | string | null {
    return this.observed?.value ?? null;
  }

  /** The ledger answered (whatever it answered). */
  ok(): void {
    const failures = this.streak;
    this.streak = 0;
    this.downSince = null;
    this.observed = { value: true, at: this.now() };
    if (failures > 0) {
      this.recovered = true;
      this.errors.info("ledger reachable again", { failures });
      this.onRecovered();
    }
  }

  /** How long the ledger has not answered, in ms (0 while it answers, or before the first observation). */
  unreachableForMs(): number {
    return this.downSince === null ? 0 : Math.max(0, this.now() - this.downSince);
  }

  /** True once after each recovery (the first answer after failures). */
  takeRecovery(): boolean {
    const r = this.recovered;
    this.recovered = false;
    return r;
  }

  /** No usable answer from the ledger. */
  down(error: string): void {
    this.streak++;
    this.downSince ??= this.now();
    this.observed = { value: `ledger unreachable: ${error}`, at: this.now() };
    this.errors.warn("ledger-unreachable", "ledger unreachable; anchoring waits and retries", { error, failures: this.streak });
  }

  /** One `ping` at a time: concurrent callers share it. Never rejects. */
  probe(ping: () => Promise<true | string>): Promise<void> {
    this.probing ??= ping()
      .then((r) => (r === true ? this.ok() : this.down(r)))
      .catch((e: unknown) => this.down(String(e)))
      .finally(() => (this.probing = null));
    return this.probing;
  }

  /** The probe under way, if any (for a quiet stop). */
  settled(): Promise<void> {
    return this.probing?.catch(() => undefined) ?? Promise.resolve();
  }
}
