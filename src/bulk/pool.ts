/**
 * Work on many files at once, paced by what the service says. Every request of the pool first
 * waits on one shared `Pace`: a 429 pauses the whole pool until its Retry-After (instead of every
 * worker running into its own 429), and while the rate-limit bucket is empty (X-RateLimit-Remaining
 * 0) requests are spaced at the bucket's refill rate, so the pool settles at the limit. A 503 with
 * Retry-After (the service pacing record creation to its ledger, or starting up) pauses the pool
 * the same way.
 */

/** Resolves after `ms`, or at once when `signal` is aborted. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0 || signal?.aborted === true) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

export interface RateInfo {
  readonly status: number;
  readonly rateLimitLimit?: number;
  readonly rateLimitRemaining?: number;
  readonly retryAfterSeconds?: number;
}

export class Pace {
  /** The earliest time the next request may start. */
  private next = 0;
  /** Spacing between requests while the bucket is empty; 0 while it has room. */
  private intervalMs = 0;
  /** 429 answers seen (the client's retries included). */
  rateLimited = 0;
  /** 503 answers seen (the client's retries included). */
  unavailable = 0;

  constructor(
    private readonly concurrency: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Every answer of the service, through the client's onResponse. */
  observe(info: RateInfo): void {
    if (info.status === 429) {
      this.rateLimited++;
      this.pauseFor((info.retryAfterSeconds ?? 1) * 1000);
    }
    if (info.status === 503) {
      this.unavailable++;
      if (info.retryAfterSeconds !== undefined) this.pauseFor(info.retryAfterSeconds * 1000);
    }
    const remaining = info.rateLimitRemaining;
    const limit = info.rateLimitLimit;
    if (remaining === undefined || limit === undefined || limit <= 0) return;
    // The bucket refills at `limit` per minute: one token every 60000/limit ms.
    if (remaining === 0) this.intervalMs = 60_000 / limit;
    else if (remaining > this.concurrency) this.intervalMs = 0;
  }

  /** No request of the pool starts before `ms` from now. */
  pauseFor(ms: number): void {
    this.next = Math.max(this.next, this.now() + ms);
  }

  /** Waits for this request's turn. */
  async ready(signal?: AbortSignal): Promise<void> {
    for (;;) {
      const now = this.now();
      if (now >= this.next) {
        this.next = now + this.intervalMs;
        return;
      }
      await sleep(this.next - now, signal);
      if (signal?.aborted === true) return;
    }
  }
}

/**
 * Runs `work` over `items`, `concurrency` at a time, in order of start. Stops taking new items once
 * `signal` is aborted; resolves when every started item has finished.
 */
export async function runPool<T>(items: readonly T[], concurrency: number, work: (item: T, index: number) => Promise<void>, signal?: AbortSignal): Promise<void> {
  let at = 0;
  const worker = async () => {
    while (at < items.length && signal?.aborted !== true) {
      const index = at++;
      await work(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}
