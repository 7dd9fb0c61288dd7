/**
 * The anchor loop's timer (anchorer.ts runs its passes on it): at most one pass pending, passes
 * never overlapping and at least MIN_PASS_GAP_MS apart.
 */

/**
 * Passes start at least this far apart. Every record created wakes the loop and every step that
 * ends asks for a pass, and each pass reads the queue (counts, due rows, provisioning): under
 * sustained creation that was a pass per turn of the event loop, a seventh of the API thread
 * (docs/benchmarks.md "Anchoring under record creation"). Whatever asks within the gap is served by
 * the next pass, at most this much later.
 */
export const MIN_PASS_GAP_MS = 5;

/**
 * The loop's timer and lifecycle: at most one tick pending, the earliest asked for wins, and
 * passes start at least `minGapMs` apart; nothing is scheduled before `start` or after `stop`.
 * `pass` runs one pass and says when to run again. Exported for its test.
 */
export class Ticker {
  private started = false;
  private stopping = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private timerAt = Number.POSITIVE_INFINITY;
  private lastPassAt = Number.NEGATIVE_INFINITY;

  /** A pass is under way (an asynchronous one): a timer that fires meanwhile asks for another after it. */
  private passing = false;
  private again = false;

  constructor(
    private readonly pass: () => number | Promise<number>,
    private readonly minGapMs: number = MIN_PASS_GAP_MS,
  ) {}

  /** Started and not stopping: steps that finish ask for the next pass. */
  get running(): boolean {
    return this.started && !this.stopping;
  }

  /** False if already started or stopped. */
  start(): boolean {
    if (this.started || this.stopping) return false;
    this.started = true;
    return true;
  }

  stop(): void {
    this.stopping = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** A pass in `delayMs` (real time), unless one is already due sooner. */
  schedule(delayMs: number): void {
    if (!this.running) return;
    const now = Date.now();
    const at = Math.max(now + delayMs, this.lastPassAt + this.minGapMs);
    delayMs = at - now;
    if (this.timer !== null && this.timerAt <= at) return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(this.fire, delayMs);
  }

  private readonly fire = (): void => {
    this.timer = null;
    this.timerAt = Number.POSITIVE_INFINITY;
    if (this.stopping) return;
    // Passes never overlap: one asked for while another runs follows it at once.
    if (this.passing) {
      this.again = true;
      return;
    }
    this.lastPassAt = Date.now();
    const next = this.pass();
    if (typeof next === "number") return this.schedule(next);
    this.passing = true;
    const after = (delayMs: number) => {
      this.passing = false;
      const again = this.again;
      this.again = false;
      this.schedule(again ? 0 : delayMs);
    };
    next.then(after, () => after(1000));
  };
}
