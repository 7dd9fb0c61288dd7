/**
 * Back-pressure on record creation (src/anchoring/back-pressure.ts): which cause refuses when,
 * the 503 it becomes (Retry-After, `details.cause`), its counter on /metrics, and the anchor
 * loop reporting it.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { BackPressure, backPressureError, type BackPressureCause } from "../../src/anchoring/back-pressure.ts";
import { errorResponse } from "../../src/http/errors.ts";
import { createServiceMetrics } from "../../src/http/routes/metrics.ts";
import { parseExposition, sampleValue } from "../support/prometheus.ts";
import { cleanup } from "../support/env.ts";
import { makeRig } from "./rig.ts";

afterAll(cleanup);

const T = 1_000_000;

describe("causes", () => {
  test("queue_full at the backlog bound, whatever else holds", () => {
    const p = new BackPressure({ backlogLimit: 10, floor: 100, maxQueueAgeMs: 1000 });
    p.observe({ pending: 4, accepted: 5, oldestPendingAt: T - 5000 });
    expect(p.check(T)).toBe("too_old");
    p.observe({ pending: 5, accepted: 5, oldestPendingAt: T - 5000 });
    expect(p.check(T)).toBe("queue_full");
  });

  test("behind: more rows not yet accepted by the ledger than anchored in the window, the floor always allowed", () => {
    const p = new BackPressure({ floor: 3, windowMs: 10_000 });
    p.observe({ pending: 2, accepted: 50, oldestPendingAt: T });
    expect(p.check(T)).toBeNull(); // accepted rows only wait for consensus: they never make it behind
    p.observe({ pending: 3, accepted: 0, oldestPendingAt: T });
    expect(p.check(T)).toBe("behind");
    for (let i = 0; i < 4; i++) p.noteAnchored(T - 9_000 + i);
    expect(p.check(T)).toBeNull(); // 4 anchored in the last 10 s > 3 pending
    expect(p.anchoredRecently(T)).toBe(4); // what a leader reports to the other nodes
    expect(p.check(T + 1_500)).toBe("behind"); // they age out of the window
  });

  test("several nodes: a node that does not lead judges behind by what the leader reports it anchored", () => {
    const p = new BackPressure({ floor: 3, windowMs: 10_000 });
    p.observe({ pending: 50, accepted: 0, oldestPendingAt: T, anchoredByLeader: 0 });
    expect(p.check(T)).toBe("behind");
    p.observe({ pending: 50, accepted: 0, oldestPendingAt: T, anchoredByLeader: 80 });
    expect(p.check(T)).toBeNull();
    p.observe({ pending: 81, accepted: 0, oldestPendingAt: T, anchoredByLeader: 80 });
    expect(p.check(T)).toBe("behind");
    expect(p.anchoredRecently(T)).toBe(0);
  });

  test("too_old: the oldest pending row waits longer than the bound; accepted rows do not age", () => {
    const p = new BackPressure({ maxQueueAgeMs: 30_000 });
    p.observe({ pending: 1, accepted: 0, oldestPendingAt: T });
    expect(p.check(T + 30_000)).toBeNull();
    expect(p.check(T + 30_001)).toBe("too_old");
    p.observe({ pending: 0, accepted: 1, oldestPendingAt: null });
    expect(p.check(T + 60_000)).toBeNull();
  });

  test("defaults: 5000 rows, 30 s, a floor of 200", () => {
    const p = new BackPressure();
    p.observe({ pending: 199, accepted: 0, oldestPendingAt: T });
    expect(p.check(T + 30_000)).toBeNull();
    expect(p.check(T + 30_001)).toBe("too_old");
    p.observe({ pending: 200, accepted: 0, oldestPendingAt: T });
    expect(p.check(T)).toBe("behind");
    p.observe({ pending: 4000, accepted: 1000, oldestPendingAt: T });
    expect(p.check(T)).toBe("queue_full");
    expect(p.backlog()).toEqual({ pending: 4000, accepted: 1000, oldestPendingAt: T });
  });
});

test("a refusal is 503 with its cause in details; Retry-After 1 while the loop only has to catch up, 5 when the ledger is not keeping up", async () => {
  for (const [cause, retryAfter] of [["queue_full", "5"], ["behind", "1"], ["too_old", "5"]] satisfies [BackPressureCause, string][]) {
    const res = errorResponse(backPressureError(cause));
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe(retryAfter);
    const body = (await res.json()) as { error: { code: string; message: string; details: Record<string, string> } };
    expect(body.error.code).toBe("SERVICE_UNAVAILABLE");
    expect(body.error.details).toEqual({ cause });
    expect(body.error.message).toMatch(/retry shortly\.$/);
  }
});

test("/metrics counts refusals by cause, every cause present from the start", () => {
  const m = createServiceMetrics({ version: "0", commit: "x", records: () => ({ pending: 0, accepted: 0, anchored: 0, abandoned: 0 }), backlog: () => ({ pending: 0, accepted: 0 }) });
  m.anchoring.backPressure!("behind");
  m.anchoring.backPressure!("behind");
  m.anchoring.backPressure!("too_old");
  const f = parseExposition(m.render());
  expect(f.get("docverify_anchor_backpressure_total")!.type).toBe("counter");
  expect(sampleValue(f, "docverify_anchor_backpressure_total", { cause: "queue_full" })).toBe(0);
  expect(sampleValue(f, "docverify_anchor_backpressure_total", { cause: "behind" })).toBe(2);
  expect(sampleValue(f, "docverify_anchor_backpressure_total", { cause: "too_old" })).toBe(1);
});

test("the anchor loop refuses with the cause and reports it to its monitoring sink", async () => {
  const causes: BackPressureCause[] = [];
  const rig = await makeRig({ backlogLimit: 1, metrics: { anchored() {}, ledgerError() {}, backPressure: (c) => causes.push(c) } });
  const { orgId, topicId } = await rig.orgWithTopic();
  rig.local.faults.pauseConsensus();
  rig.insertRecord(orgId, topicId);
  await rig.anchoring.runOnce();
  await rig.anchoring.runOnce();
  expect(() => rig.anchoring.assertCapacity()).toThrow(expect.objectContaining({ code: "SERVICE_UNAVAILABLE", retryAfterSeconds: 5, details: { cause: "queue_full" } }));
  expect(causes).toEqual(["queue_full"]);
  rig.local.faults.resumeConsensus();
}, 30_000);
