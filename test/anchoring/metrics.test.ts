/**
 * The anchor loop's monitoring sink (what /metrics shows as anchor latency and ledger errors),
 * against the local ledger over real gRPC with its fault switches.
 */
import { afterAll, expect, test } from "bun:test";
import type { AnchorMetrics, LedgerErrorKind } from "../../src/anchoring/anchorer.ts";
import { cleanup } from "../support/env.ts";
import { makeRig } from "./rig.ts";

afterAll(cleanup);

function recordingSink() {
  const anchored: { kind: string; latencyMs: number }[] = [];
  const errors: LedgerErrorKind[] = [];
  const sink: AnchorMetrics = { anchored: (kind, latencyMs) => anchored.push({ kind, latencyMs }), ledgerError: (k) => errors.push(k) };
  return { sink, anchored, errors };
}

test("anchored rows report their kind and the time from queued to anchored, on the loop's clock", async () => {
  const m = recordingSink();
  const rig = await makeRig({ metrics: m.sink });
  const { orgId, topicId } = await rig.orgWithTopic();
  expect(m.anchored.map((a) => a.kind)).toEqual(["topic_create", "key_announcement"]);
  const rec = rig.insertRecord(orgId, topicId);
  const queuedAt = rig.row(rec.transactionId).createdAt;
  await rig.drive(3);
  expect(rig.row(rec.transactionId).state).toBe("anchored");
  const last = m.anchored.at(-1)!;
  expect(last.kind).toBe("record_message");
  expect(last.latencyMs).toBe(rig.row(rec.transactionId).updatedAt - queuedAt);
  expect(last.latencyMs).toBeGreaterThan(0);
  expect(m.errors).toEqual([]);
}, 30_000);

test("ledger errors are reported by class: retryable, permanent, unknown", async () => {
  const m = recordingSink();
  const rig = await makeRig({ metrics: m.sink, grpcDeadlineMs: 500 });
  const { orgId, topicId } = await rig.orgWithTopic();
  rig.local.faults.busyNext(1);
  rig.insertRecord(orgId, topicId);
  await rig.anchoring.runOnce();
  expect(m.errors).toEqual(["retryable"]);
  rig.local.faults.rejectNext(1, "INSUFFICIENT_PAYER_BALANCE");
  rig.insertRecord(orgId, topicId);
  await rig.anchoring.runOnce();
  expect(m.errors).toContain("permanent");
  await rig.local.faults.unreachable(true);
  rig.insertRecord(orgId, topicId);
  rig.clock.advance(60_000);
  await rig.anchoring.runOnce();
  expect(m.errors).toContain("unknown");
  await rig.local.faults.unreachable(false);
}, 30_000);

test("a sink that throws does not disturb the loop", async () => {
  const rig = await makeRig({
    metrics: {
      anchored() {
        throw new Error("sink broke");
      },
      ledgerError() {
        throw new Error("sink broke");
      },
    },
  });
  const { orgId, topicId } = await rig.orgWithTopic();
  const rec = rig.insertRecord(orgId, topicId);
  await rig.drive(3);
  expect(rig.row(rec.transactionId).state).toBe("anchored");
}, 30_000);
