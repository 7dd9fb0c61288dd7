/**
 * The progress line on a terminal: one line on stderr, redrawn in place (carriage return, then
 * erase to the end of the line) at most ten times a second, and ended with a newline, so the
 * summary and any error after it start on a line of their own. Off when stderr is not a terminal,
 * with --no-progress and with --json.
 */

const MIN_REDRAW_MS = 100;

export class ProgressLine {
  private last = 0;
  private timer: ReturnType<typeof setInterval> | null = null;
  private drawn = false;

  constructor(
    private readonly write: (text: string) => void,
    private readonly enabled: boolean,
    private readonly render: () => string,
    private readonly now: () => number = Date.now,
  ) {
    if (!enabled) return;
    // Redrawn while nothing happens too, so the rate and time left stay true during a pause.
    this.timer = setInterval(() => this.update(), 250);
    (this.timer as { unref?: () => void }).unref?.();
  }

  /** Something changed: redraws, unless it was redrawn less than 100 ms ago. */
  update(): void {
    if (!this.enabled || this.now() - this.last < MIN_REDRAW_MS) return;
    this.draw();
  }

  /** Writes `text` (whole lines) on stderr above the progress line, which is then drawn again. */
  above(text: string): void {
    if (!this.enabled || !this.drawn) {
      this.write(text);
      return;
    }
    this.write(`\r\x1b[K${text}`);
    this.draw();
  }

  /** The last state drawn, then a newline; no more redraws. */
  finish(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    if (!this.enabled) return;
    this.draw();
    if (this.drawn) this.write("\n");
    this.drawn = false;
  }

  private draw(): void {
    this.last = this.now();
    this.drawn = true;
    this.write(`\r${this.render()}\x1b[K`);
  }
}

/** Files per second since `startedAt`, and the time left at that rate (null until it can be told). */
export function pace(done: number, total: number, startedAt: number, now: number): { rate: number; left: number | null } {
  const seconds = (now - startedAt) / 1000;
  const rate = seconds > 0 ? done / seconds : 0;
  return { rate, left: rate > 0 ? (total - done) / rate : null };
}

/** "42 s", "3 min 05 s", "1 h 02 min". */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")} min`;
}

/** "12.3 files/s · 45 s left" for the progress line. */
export function rateText(done: number, total: number, startedAt: number, now: number): string {
  const { rate, left } = pace(done, total, startedAt, now);
  return `${rate.toFixed(1)} files/s · ${left === null ? "time left unknown" : done >= total ? "done" : `${duration(left)} left`}`;
}
