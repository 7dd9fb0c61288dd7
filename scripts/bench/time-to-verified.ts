/**
 * Time from a record's 201 to `verified_org` (docs/benchmarks.md "Batched anchoring"): records
 * created one at a time at a steady, moderate rate (RATE a second, COUNT of them), and for each,
 * from the moment its 201 arrived, POST /v1/verifications anonymous with its hash every POLL_MS
 * until the verdict is `verified_org`: the record waited in its organisation's open batch (the
 * window), the batch was closed, submitted, reached consensus and was confirmed on the mirror.
 * What a client polling for its record sees, to within the poll's interval.
 */
import type { Database } from "bun:sqlite";
import type { Json, Poster } from "./anchor-load.ts";

const COUNT = 300;
const RATE = 20;
const POLL_MS = 50;
/** A record not verified within this is counted as never (and the run is BROKEN). */
const GIVE_UP_MS = 60_000;
export const P99_TARGET_MS = 5_000;

export interface TimeToVerified {
  readonly records: number;
  readonly ratePerSecond: number;
  readonly pollMs: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** Records never `verified_org` within GIVE_UP_MS, and creations not answered 201. */
  readonly notVerified: number;
  readonly notCreated: number;
  /** The batches the phase's records went into, and their mean leaves. */
  readonly batches: number;
  readonly meanLeavesPerBatch: number | null;
  readonly targetP99Ms: number;
  readonly verdict: "PASS" | "MISS";
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Measures; each record acknowledged (201) is added to `acknowledged`, for the exactly-once check. */
export async function measureTimeToVerified(options: { url: string; poster: Poster; db: Database; topicId: string; acknowledged: string[] }): Promise<TimeToVerified> {
  const { url, poster: p } = options;
  const times: number[] = [];
  let notVerified = 0;
  let notCreated = 0;
  const startedWallMs = Date.now();
  const verify = async (hash: string, answeredAt: number): Promise<void> => {
    for (;;) {
      const res = await fetch(`${url}/v1/verifications`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ originalDocHash: hash }) });
      const body = (await res.json()) as Json;
      const now = performance.now();
      if (body.verdict === "verified_org") {
        times.push(now - answeredAt);
        return;
      }
      if (now - answeredAt > GIVE_UP_MS) {
        notVerified++;
        return;
      }
      await Bun.sleep(POLL_MS);
    }
  };
  const pollers: Promise<void>[] = [];
  const t0 = performance.now();
  for (let i = 0; i < COUNT; i++) {
    await Bun.sleep(Math.max(0, t0 + (i * 1000) / RATE - performance.now()));
    // Each creation in flight on its own, so a slow answer does not shift the next one's time.
    pollers.push(
      (async () => {
        const r = await p.post();
        const answeredAt = performance.now();
        if (r.status !== 201) {
          notCreated++;
          return;
        }
        options.acknowledged.push(String(r.body.recordId));
        await verify(r.hash, answeredAt);
      })(),
    );
  }
  await Promise.all(pollers);
  const batchRows = options.db
    .query("SELECT count(*) AS n, sum(batch_size) AS leaves FROM ledger_transactions WHERE kind = 'batch_message' AND topic_id = ? AND created_at >= ? AND state = 'anchored'")
    .get(options.topicId, startedWallMs) as { n: number; leaves: number | null };
  const sorted = [...times].sort((a, b) => a - b);
  const p99Ms = percentile(sorted, 99);
  return {
    records: COUNT,
    ratePerSecond: RATE,
    pollMs: POLL_MS,
    p50Ms: percentile(sorted, 50),
    p99Ms,
    maxMs: sorted.at(-1) ?? Number.NaN,
    notVerified,
    notCreated,
    batches: batchRows.n,
    meanLeavesPerBatch: batchRows.n === 0 ? null : (batchRows.leaves ?? 0) / batchRows.n,
    targetP99Ms: P99_TARGET_MS,
    verdict: notVerified === 0 && notCreated === 0 && p99Ms <= P99_TARGET_MS ? "PASS" : "MISS",
  };
}

export function describeTimeToVerified(t: TimeToVerified): string {
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  return (
    `201 → verified_org (POST /v1/verifications anonymous every ${t.pollMs} ms), ${t.records} records at ${t.ratePerSecond}/s: p50 ${s(t.p50Ms)}, p99 ${s(t.p99Ms)}, max ${s(t.maxMs)}` +
    `${t.notVerified + t.notCreated > 0 ? `, ${t.notVerified} never verified, ${t.notCreated} not created` : ""}` +
    `; ${t.batches} batches, mean ${t.meanLeavesPerBatch === null ? "—" : t.meanLeavesPerBatch.toFixed(1)} leaves; target p99 ≤ ${s(t.targetP99Ms)}  ${t.verdict}`
  );
}
