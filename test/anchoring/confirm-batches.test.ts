/**
 * Confirmation in batches (anchorer.ts, topic-watches.ts): accepted messages confirmed from
 * listings of their topic on the mirror node instead of a receipt poll per second and a mirror
 * read each; the listing's checks (transaction, payer, bytes); the row's own path as the
 * fallback; a restart; the mirror client's listing.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { and, eq, ne } from "drizzle-orm";
import { createMirrorClient } from "../../src/anchoring/mirror-client.ts";
import type { Ledger, TopicMessage } from "../../src/anchoring/ledger.ts";
import { TopicWatches } from "../../src/anchoring/topic-watches.ts";
import { ledgerTransactions } from "../../src/storage/schema.ts";
import { cleanup, onCleanup } from "../support/env.ts";
import { makeRig, type Rig } from "./rig.ts";

afterEach(cleanup);

type Calls = { receipt: number; confirmMessage: number; lookupTransaction: number; topicMessages: number };

/** The ledger, counting the calls that confirm messages; `tamper` rewrites what a listing returns. */
function counted(ledger: Ledger, calls: Calls, tamper?: (messages: readonly TopicMessage[]) => readonly TopicMessage[] | "unreachable"): Ledger {
  return {
    ...ledger,
    receipt: (id) => (calls.receipt++, ledger.receipt(id)),
    confirmMessage: (e) => (calls.confirmMessage++, ledger.confirmMessage(e)),
    lookupTransaction: (id) => (calls.lookupTransaction++, ledger.lookupTransaction(id)),
    topicMessages: async (topicId, from, limit) => {
      calls.topicMessages++;
      const got = await ledger.topicMessages!(topicId, from, limit);
      if (got.kind !== "found" || tamper === undefined) return got;
      const t = tamper(got.value);
      return t === "unreachable" ? { kind: "unreachable", error: "test: mirror down" } : { kind: "found", value: t };
    },
  };
}

const zero = (calls: Calls) => Object.assign(calls, { receipt: 0, confirmMessage: 0, lookupTransaction: 0, topicMessages: 0 });

/** A rig whose ledger counts its confirming calls (`tamper` as in `counted`), an organisation whose topic and announcement are anchored, the counts then zeroed. */
async function countedRig(tamper?: Parameters<typeof counted>[2]) {
  const calls = zero({} as Calls);
  const rig = await makeRig({ wrapLedger: (l) => counted(l, calls, tamper) });
  const { orgId, topicId } = await rig.orgWithTopic();
  zero(calls);
  return { rig, calls, orgId, topicId };
}

function anchorEvents(rig: Rig, transactionId: string): string[] {
  return rig.log.lines.filter((l) => l.msg === "anchor" && l.transactionId === transactionId).map((l) => String(l.event));
}

/** Every record message of the topic anchored at the sequence number whose mirror entry carries its transaction and bytes, each exactly once. */
async function expectAnchoredAsListed(rig: Rig, topicId: string, recs: { recordId: string; transactionId: string; message: Uint8Array }[]) {
  const seen = new Set<number>();
  for (const rec of recs) {
    const row = rig.row(rec.transactionId);
    expect(row.state).toBe("anchored");
    expect(rig.record(rec.recordId)).toMatchObject({ anchorState: "anchored", sequenceNumber: row.sequenceNumber, consensusAt: row.consensusAt });
    const { status, body } = await rig.mirror(`/api/v1/topics/${topicId}/messages/${row.sequenceNumber}`);
    expect(status).toBe(200);
    expect(Buffer.from(String(body.message), "base64").equals(Buffer.from(rec.message))).toBe(true);
    expect(body.consensus_timestamp).toBe(row.consensusAt);
    expect(Buffer.from(String(body.running_hash), "base64").equals(Buffer.from(row.runningHash!))).toBe(true);
    const initial = (body.chunk_info as { initial_transaction_id: { account_id: string; transaction_valid_start: string } }).initial_transaction_id;
    expect(`${initial.account_id}@${initial.transaction_valid_start}`).toBe(rec.transactionId);
    expect(seen.has(row.sequenceNumber!)).toBe(false);
    seen.add(row.sequenceNumber!);
  }
  const { body } = await rig.mirror(`/api/v1/topics/${topicId}/messages?limit=100&order=asc&sequencenumber=gt:1`);
  expect((body.messages as unknown[]).length).toBe(Math.min(100, recs.length));
}

describe("confirmation in batches", () => {
  test("accepted messages are anchored from one listing of their topic: no receipt, no mirror read of their own", async () => {
    const { rig, calls, orgId, topicId } = await countedRig();
    const recs = Array.from({ length: 5 }, () => rig.insertRecord(orgId, topicId));
    await rig.anchoring.runOnce();
    for (const r of recs) expect(rig.row(r.transactionId).state).toBe("accepted");
    await rig.drive(2);
    await expectAnchoredAsListed(rig, topicId, recs);
    expect(calls).toMatchObject({ receipt: 0, confirmMessage: 0, lookupTransaction: 0 });
    expect(calls.topicMessages).toBeGreaterThanOrEqual(1);
    expect(calls.topicMessages).toBeLessThanOrEqual(2);
    for (const r of recs) expect(anchorEvents(rig, r.transactionId)).toEqual(["accepted", "anchored"]);
  }, 30_000);

  test("more than a page: listed 100 at a time, every message anchored once, at its own sequence number", async () => {
    const { rig, calls, orgId, topicId } = await countedRig();
    const recs = Array.from({ length: 130 }, () => rig.insertRecord(orgId, topicId));
    // 64 rows are worked on at once: three passes submit them all.
    for (let i = 0; i < 3; i++) await rig.anchoring.runOnce();
    await rig.drive(3);
    expect(rig.core.db.select().from(ledgerTransactions).where(and(eq(ledgerTransactions.topicId, topicId), ne(ledgerTransactions.state, "anchored"))).all()).toEqual([]);
    await expectAnchoredAsListed(rig, topicId, recs);
    const sequenceNumbers = recs.map((r) => rig.row(r.transactionId).sequenceNumber!).sort((a, b) => a - b);
    expect(sequenceNumbers).toEqual(Array.from({ length: 130 }, (_, i) => i + 2));
    expect(calls).toMatchObject({ receipt: 0, confirmMessage: 0, lookupTransaction: 0 });
    expect(calls.topicMessages).toBeGreaterThanOrEqual(2);
  }, 60_000);

  test("a listed message with other bytes or another payer anchors nothing: the row is confirmed alone once the fallback time has passed", async () => {
    let targets: { bytes: string; payer: string } = { bytes: "", payer: "" };
    const { rig, calls, orgId, topicId } = await countedRig((messages) =>
      messages.map((m) =>
        m.transactionId === targets.bytes
          ? { ...m, message: new Uint8Array([...m.message.slice(0, -1), m.message.at(-1)! ^ 1]) }
          : m.transactionId === targets.payer
            ? { ...m, payerAccountId: "0.0.98" }
            : m,
      ),
    );
    const [bytes, payer, plain] = [rig.insertRecord(orgId, topicId), rig.insertRecord(orgId, topicId), rig.insertRecord(orgId, topicId)];
    targets = { bytes: bytes.transactionId, payer: payer.transactionId };
    zero(calls);
    await rig.anchoring.runOnce();
    await rig.drive(3);
    expect(rig.row(plain.transactionId).state).toBe("anchored");
    expect(rig.row(bytes.transactionId).state).toBe("accepted");
    expect(rig.row(payer.transactionId).state).toBe("accepted");
    expect(rig.record(bytes.recordId).anchorState).toBe("accepted");
    expect(calls.receipt).toBe(0);
    // 15 s after acceptance: each is confirmed alone, against the (honest) mirror.
    await rig.drive(1, 13_000);
    await rig.drive(2);
    await expectAnchoredAsListed(rig, topicId, [bytes, payer, plain]);
    expect(calls.receipt).toBe(2);
    expect(calls.confirmMessage).toBe(2);
  }, 30_000);

  test("a mirror whose listings do not answer: warned, and every message confirmed alone once the fallback time has passed", async () => {
    let down = false;
    const { rig, calls, orgId, topicId } = await countedRig((m) => (down ? "unreachable" : m));
    down = true;
    const recs = [rig.insertRecord(orgId, topicId), rig.insertRecord(orgId, topicId)];
    await rig.anchoring.runOnce();
    await rig.drive(3);
    for (const r of recs) expect(rig.row(r.transactionId).state).toBe("accepted");
    expect(rig.log.lines.some((l) => l.level === "warn" && l.msg === "mirror node unreachable; confirmation waits" && l.error === "test: mirror down")).toBe(true);
    await rig.drive(1, 13_000);
    await rig.drive(2);
    await expectAnchoredAsListed(rig, topicId, recs);
    expect(calls.confirmMessage).toBe(2);
  }, 30_000);

  test("a loop that starts with accepted messages waiting lists their topic at its first pass", async () => {
    const { rig, calls, orgId, topicId } = await countedRig();
    const recs = [rig.insertRecord(orgId, topicId), rig.insertRecord(orgId, topicId)];
    await rig.anchoring.runOnce();
    for (const r of recs) expect(rig.row(r.transactionId).state).toBe("accepted");
    await rig.anchoring.stop();
    rig.restart();
    zero(calls);
    await rig.drive(2);
    await expectAnchoredAsListed(rig, topicId, recs);
    expect(calls).toMatchObject({ receipt: 0, confirmMessage: 0 });
  }, 30_000);
});

describe("TopicWatches", () => {
  test("a topic is read from the earliest valid start until its first listing, then after the last sequence number", () => {
    const w = new TopicWatches(500, 15_000);
    w.watch("0.0.7", 2_000, 10_000);
    w.watch("0.0.7", 1_000, 10_100);
    expect(w.due(10_100)).toEqual([{ topicId: "0.0.7", from: { fromConsensusMs: 1_000 } }]);
    expect(w.due(10_100)).toEqual([]); // busy
    expect(w.nextAt()).toBeNull();
    w.read("0.0.7", 41, false, 10_200);
    expect(w.nextAt()).toBe(10_700);
    expect(w.due(10_600)).toEqual([]);
    w.watch("0.0.7", 500, 10_650); // an earlier valid start no longer matters: the listing goes on after 41
    expect(w.due(10_700)).toEqual([{ topicId: "0.0.7", from: { afterSequenceNumber: 41 } }]);
    w.read("0.0.7", null, false, 10_800); // an empty listing keeps the place
    expect(w.due(11_300)).toEqual([{ topicId: "0.0.7", from: { afterSequenceNumber: 41 } }]);
    w.read("0.0.7", 141, true, 11_400); // a full page: again at once
    expect(w.due(11_400)).toEqual([{ topicId: "0.0.7", from: { afterSequenceNumber: 141 } }]);
  });

  test("a failed listing is retried after the caller's backoff; a topic with nothing accepted for the keep time is dropped", () => {
    const w = new TopicWatches(500, 15_000);
    w.watch("0.0.7", 0, 0);
    w.due(0);
    w.failed("0.0.7", 100, (n) => n * 4_000);
    expect(w.nextAt()).toBe(4_100);
    w.due(4_100);
    w.failed("0.0.7", 4_200, (n) => n * 4_000);
    expect(w.nextAt()).toBe(12_200);
    expect(w.due(15_001)).toEqual([]);
    expect(w.size).toBe(0);
    w.watch("0.0.7", 0, 20_000);
    expect(w.due(20_000)).toEqual([{ topicId: "0.0.7", from: { fromConsensusMs: 0 } }]);
  });
});

describe("the mirror client's listing of a topic", () => {
  function fakeMirror(answer: (url: URL) => Response): string {
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => answer(new URL(req.url)) });
    onCleanup(() => server.stop(true));
    return `http://127.0.0.1:${server.port}`;
  }
  const good = {
    chunk_info: { initial_transaction_id: { account_id: "0.0.2", nonce: 0, scheduled: false, transaction_valid_start: "1768469400.000000123" }, number: 1, total: 1 },
    consensus_timestamp: "1768469403.000000001",
    message: Buffer.from("hello").toString("base64"),
    payer_account_id: "0.0.2",
    running_hash: Buffer.from([1, 2, 3]).toString("base64"),
    running_hash_version: 3,
    sequence_number: 5,
    topic_id: "0.0.1001",
  };

  test("asks in consensus order from where it is told, and reads each message", async () => {
    const asked: string[] = [];
    const url = fakeMirror((u) => (asked.push(`${u.pathname}?${u.searchParams}`), Response.json({ messages: [good, { ...good, sequence_number: 6, chunk_info: null }], links: { next: null } })));
    const client = createMirrorClient({ mirrorUrl: url, timeoutMs: 2000 });
    const got = await client.topicMessages("0.0.1001", { afterSequenceNumber: 4 }, 100);
    expect(got).toEqual({
      kind: "found",
      value: [
        { topicId: "0.0.1001", sequenceNumber: 5, consensusAt: "1768469403.000000001", runningHash: new Uint8Array([1, 2, 3]), payerAccountId: "0.0.2", transactionId: "0.0.2@1768469400.000000123", message: new Uint8Array(Buffer.from("hello")) },
        { topicId: "0.0.1001", sequenceNumber: 6, consensusAt: "1768469403.000000001", runningHash: new Uint8Array([1, 2, 3]), payerAccountId: "0.0.2", transactionId: null, message: new Uint8Array(Buffer.from("hello")) },
      ],
    });
    await client.topicMessages("0.0.1001", { fromConsensusMs: 1_768_469_400_123 }, 7);
    expect(asked).toEqual([
      "/api/v1/topics/0.0.1001/messages?sequencenumber=gte%3A5&order=asc&limit=100",
      "/api/v1/topics/0.0.1001/messages?timestamp=gte%3A1768469400.123000000&order=asc&limit=7",
    ]);
  });

  test("a scheduled or later-nonce transaction is named as none; an unreadable listing or a message of another topic is unreachable; 404 is not_found", async () => {
    let body: unknown = null;
    let status = 200;
    const url = fakeMirror(() => (status === 404 ? new Response("{}", { status: 404 }) : Response.json(body)));
    const client = createMirrorClient({ mirrorUrl: url, timeoutMs: 2000 });
    body = { messages: [{ ...good, chunk_info: { initial_transaction_id: { ...good.chunk_info.initial_transaction_id, scheduled: true } } }, { ...good, chunk_info: { initial_transaction_id: { ...good.chunk_info.initial_transaction_id, nonce: 1 } } }] };
    const named = await client.topicMessages("0.0.1001", { afterSequenceNumber: 0 }, 10);
    expect(named.kind === "found" && named.value.map((m) => m.transactionId)).toEqual([null, null]);
    for (const bad of [{ messages: [{ ...good, sequence_number: "5" }] }, { messages: [{ ...good, consensus_timestamp: "1768469403" }] }, { messages: [{ ...good, topic_id: "0.0.9" }] }, { messages: [null] }, { nothing: [] }]) {
      body = bad;
      expect((await client.topicMessages("0.0.1001", { afterSequenceNumber: 0 }, 10)).kind).toBe("unreachable");
    }
    status = 404;
    expect(await client.topicMessages("0.0.1001", { afterSequenceNumber: 0 }, 10)).toEqual({ kind: "not_found" });
    await expect(client.topicMessages("0.0.1001", { afterSequenceNumber: 0 }, 101)).rejects.toThrow(RangeError);
  });
});
