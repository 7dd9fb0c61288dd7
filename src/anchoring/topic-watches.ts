/**
 * Which topics the anchor loop reads from the mirror node to confirm accepted messages in
 * batches, and from where (loop/confirm-batches.ts). Bookkeeping only: no I/O,
 * times are the loop's clock.
 *
 * What it guarantees:
 * - A topic is watched from the moment a message on it is accepted (or, when a loop starts, for
 *   every topic with such messages) until `keepMs` after the last one: past that, the messages
 *   it has not confirmed are confirmed alone (receipt, then mirror), so a watch never decides
 *   whether a message landed, only how soon it is seen.
 * - Each topic is read from where the last listing ended (after its last sequence number), or,
 *   before any listing, from the earliest valid start among the messages it waits for: no
 *   transaction reaches consensus before its valid start, and a topic's messages are listed in
 *   consensus order, so nothing waited for is skipped. A message accepted later always has a
 *   later sequence number than any listed before it was sent.
 * - At most one read per topic at a time, at most one every `pollMs` (and after a failure, the
 *   caller's backoff).
 */

interface Watch {
  until: number;
  /** The last sequence number listed: the next listing starts after it. */
  after: number | null;
  /** Before any listing: the earliest valid start (ms) of the messages waited for. */
  fromMs: number;
  busy: boolean;
  nextAt: number;
  failures: number;
}

export type WatchStart = { readonly afterSequenceNumber: number } | { readonly fromConsensusMs: number };

export class TopicWatches {
  private readonly watches = new Map<string, Watch>();

  constructor(
    private readonly pollMs: number,
    private readonly keepMs: number,
  ) {}

  get size(): number {
    return this.watches.size;
  }

  /** A message on `topicId`, valid from `validStartMs`, awaits confirmation as of `now`. */
  watch(topicId: string, validStartMs: number, now: number): void {
    const w = this.watches.get(topicId);
    if (w === undefined) {
      this.watches.set(topicId, { until: now + this.keepMs, after: null, fromMs: validStartMs, busy: false, nextAt: now, failures: 0 });
      return;
    }
    w.until = Math.max(w.until, now + this.keepMs);
    if (w.after === null) w.fromMs = Math.min(w.fromMs, validStartMs);
  }

  /** Topics to read now, each marked busy until `read` or `failed`; watches past their time are dropped. */
  due(now: number): { readonly topicId: string; readonly from: WatchStart }[] {
    const out: { topicId: string; from: WatchStart }[] = [];
    for (const [topicId, w] of this.watches) {
      if (w.busy) continue;
      if (now > w.until) {
        this.watches.delete(topicId);
        continue;
      }
      if (now < w.nextAt) continue;
      w.busy = true;
      out.push({ topicId, from: w.after !== null ? { afterSequenceNumber: w.after } : { fromConsensusMs: w.fromMs } });
    }
    return out;
  }

  /** A listing of `topicId` ended at `lastSequenceNumber` (null: it was empty); `more`: it was cut short, read again at once. */
  read(topicId: string, lastSequenceNumber: number | null, more: boolean, now: number): void {
    const w = this.watches.get(topicId);
    if (w === undefined) return;
    w.busy = false;
    w.failures = 0;
    if (lastSequenceNumber !== null && (w.after === null || lastSequenceNumber > w.after)) w.after = lastSequenceNumber;
    w.nextAt = more ? now : now + this.pollMs;
  }

  /** A listing of `topicId` failed: read again after `delayMs(failures)`. */
  failed(topicId: string, now: number, delayMs: (failures: number) => number): void {
    const w = this.watches.get(topicId);
    if (w === undefined) return;
    w.busy = false;
    w.failures++;
    w.nextAt = now + Math.max(this.pollMs, delayMs(w.failures));
  }

  /** The clock stepped back by `byMs`: every time set on it moves back with it. */
  steppedBack(byMs: number): void {
    for (const w of this.watches.values()) {
      w.nextAt -= byMs;
      w.until -= byMs;
    }
  }

  /** When the next read is due (null: no watch waits for one). */
  nextAt(): number | null {
    let at: number | null = null;
    for (const w of this.watches.values()) if (!w.busy && (at === null || w.nextAt < at)) at = w.nextAt;
    return at;
  }
}
