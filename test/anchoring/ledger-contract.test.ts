/**
 * One contract suite for the `Ledger` interface (src/anchoring/ledger.ts), run against the local
 * ledger always and against Hedera testnet when HEDERA_TESTNET_OPERATOR_ID and
 * HEDERA_TESTNET_OPERATOR_KEY (hex DER) are set; without them the testnet suite is
 * reported as skipped, by name, never silently passed.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createHederaLedger } from "../../src/anchoring/hedera-ledger.ts";
import { mirrorFormTransactionId, type Ledger, type ReceiptOutcome } from "../../src/anchoring/ledger.ts";
import { hederaLedgerOver } from "./rig.ts";
import { startLocalLedger } from "../../src/local-ledger/index.ts";
import { waitFor } from "../support/wait.ts";
import { cleanup, onCleanup, tempDir } from "../support/env.ts";

afterAll(cleanup);

let lastNs = 0n;
function freshId(account: string): string {
  const now = BigInt(Date.now() - 2000) * 1_000_000n;
  lastNs = now > lastNs ? now : lastNs + 1n;
  return `${account}@${lastNs / 1_000_000_000n}.${(lastNs % 1_000_000_000n).toString().padStart(9, "0")}`;
}

const finalReceipt = (ledger: Ledger, id: string, timeoutMs: number) =>
  waitFor<ReceiptOutcome>(`the receipt of ${id}`, async () => {
    const r = await ledger.receipt(id);
    return r.kind === "pending" || r.kind === "unreachable" ? null : r;
  }, timeoutMs, 100);

function ledgerContract(name: string, open: () => Promise<Ledger>, timeoutMs: number) {
  describe(`Ledger contract: ${name}`, () => {
    test(
      "topic with a submit key; message submitted, receipted, confirmed on the mirror; wrong key refused; duplicates; unknown ids",
      async () => {
        const ledger = await open();
        expect(await ledger.ping()).toBe(true);
        const key = ledger.generateSubmitKey();
        expect(key.privateKey.length).toBe(32);
        expect(key.publicKey.length).toBe(32);

        const createId = freshId(ledger.operatorAccountId);
        const createBytes = await ledger.prepareTopicCreate({ transactionId: createId, validSeconds: 120, submitPublicKey: key.publicKey, memo: "docverify contract test" });
        expect(await ledger.submit(createBytes)).toEqual({ kind: "accepted", duplicate: false });
        const created = await finalReceipt(ledger, createId, timeoutMs);
        if (created.kind !== "success") throw new Error(`topic creation: ${JSON.stringify(created)}`);
        const topicId = created.topicId!;
        expect(topicId).toMatch(/^0\.0\.\d+$/);

        const message = new TextEncoder().encode(JSON.stringify({ v: 1, test: name, at: Date.now() }));
        const id = freshId(ledger.operatorAccountId);
        const bytes = await ledger.prepareMessage({ transactionId: id, validSeconds: 120, topicId, message, submitPrivateKey: key.privateKey });
        // Preparing is deterministic in what it commits to: the same id, window and content.
        expect(await ledger.submit(bytes)).toEqual({ kind: "accepted", duplicate: false });
        expect(await ledger.submit(bytes)).toEqual({ kind: "accepted", duplicate: true });
        const receipt = await finalReceipt(ledger, id, timeoutMs);
        expect(receipt).toMatchObject({ kind: "success", sequenceNumber: 1 });

        const confirmed = await waitFor("the mirror node", async () => {
          const c = await ledger.confirmMessage({ topicId, sequenceNumber: 1, transactionId: id, message });
          return c.kind === "not_found" ? null : c;
        }, timeoutMs, 100);
        if (confirmed.kind !== "confirmed") throw new Error(JSON.stringify(confirmed));
        expect(confirmed.value.sequenceNumber).toBe(1);
        expect(confirmed.value.consensusAt).toMatch(/^\d+\.\d{9}$/);
        expect(confirmed.value.runningHash.length).toBe(48);
        // The same message looked up by consensus timestamp.
        expect((await ledger.confirmMessage({ topicId, consensusAt: confirmed.value.consensusAt, transactionId: id, message })).kind).toBe("confirmed");
        // Confirmation checks the bytes, the topic, the sequence number and the paying transaction.
        expect((await ledger.confirmMessage({ topicId, sequenceNumber: 1, transactionId: id, message: new TextEncoder().encode("other") })).kind).toBe("mismatch");
        expect((await ledger.confirmMessage({ topicId, sequenceNumber: 1, transactionId: freshId(ledger.operatorAccountId), message })).kind).toBe("mismatch");
        expect((await ledger.confirmMessage({ topicId, sequenceNumber: 2, transactionId: id, message })).kind).toBe("not_found");

        const tx = await ledger.lookupTransaction(id);
        expect(tx).toEqual({ kind: "found", value: { result: "SUCCESS", consensusAt: confirmed.value.consensusAt, entityId: topicId } });

        // A message signed with another key is accepted at precheck and fails at consensus.
        const stranger = ledger.generateSubmitKey();
        const badId = freshId(ledger.operatorAccountId);
        const bad = await ledger.prepareMessage({ transactionId: badId, validSeconds: 120, topicId, message, submitPrivateKey: stranger.privateKey });
        expect((await ledger.submit(bad)).kind).toBe("accepted");
        expect(await finalReceipt(ledger, badId, timeoutMs)).toEqual({ kind: "failed", status: "INVALID_SIGNATURE" });

        // An id never submitted.
        const never = freshId(ledger.operatorAccountId);
        expect(await ledger.receipt(never)).toEqual({ kind: "not_found" });
        expect(await ledger.lookupTransaction(never)).toEqual({ kind: "not_found" });
        expect(mirrorFormTransactionId(id)).toMatch(/^0\.0\.\d+-\d+-\d{9}$/);
        await ledger.close();
      },
      timeoutMs * 6,
    );
  });
}

ledgerContract(
  "local ledger",
  async () => {
    const local = await startLocalLedger({ dataDir: join(tempDir(), "ledger"), consensusMs: 100 });
    onCleanup(() => local.close());
    return hederaLedgerOver(local);
  },
  5_000,
);

describe("the SDK adapter: `unsent` only when the SDK never had the bytes", () => {
  const closedPort = async () => {
    const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = server.port;
    server.stop(true);
    return port;
  };

  test("a node that refuses connections: unsent at once, and queries unreachable, without waiting for a gRPC deadline", async () => {
    const dead = `127.0.0.1:${await closedPort()}`;
    const key = "302e020100300506032b6570042204205a3bc9e5d3b6e1a2f2e58eab61f0a4bb9b3a0ee64cbd7d5a4ed1ef8c1a37c8d1";
    const ledger = createHederaLedger({ network: "local", operatorAccountId: "0.0.2", operatorPrivateKey: key, nodes: { [dead]: "0.0.3" }, mirrorUrl: `http://${dead}`, grpcDeadlineMs: 5_000 });
    onCleanup(() => ledger.close());
    const submitKey = ledger.generateSubmitKey();
    const bytes = await ledger.prepareTopicCreate({ transactionId: freshId("0.0.2"), validSeconds: 120, submitPublicKey: submitKey.publicKey, memo: "never sent" });
    const started = performance.now();
    const outcome = await ledger.submit(bytes);
    expect(outcome).toEqual({ kind: "unsent", error: `nothing sent: consensus node 0.0.3 unreachable: ${dead}: ECONNREFUSED` });
    expect(await ledger.ping()).toBe(`consensus node unreachable: ${dead}: ECONNREFUSED`);
    expect(await ledger.receipt(freshId("0.0.2"))).toEqual({ kind: "unreachable", error: `consensus node unreachable: ${dead}: ECONNREFUSED` });
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  test("after a node has answered: a submission the node takes without answering is unknown; into an outage, one whose connection is never made is unsent though the SDK had it, the next ones unsent before the SDK; none of them lands once the ledger is back", async () => {
    const local = await startLocalLedger({ dataDir: join(tempDir(), "ledger"), consensusMs: 100 });
    onCleanup(() => local.close());
    const ledger = hederaLedgerOver(local, { grpcDeadlineMs: 500 });
    const submitKey = ledger.generateSubmitKey();
    const topicCreate = async () => {
      const id = freshId(ledger.operatorAccountId);
      return { id, bytes: await ledger.prepareTopicCreate({ transactionId: id, validSeconds: 120, submitPublicKey: submitKey.publicKey, memo: "outage" }) };
    };
    expect(await ledger.ping()).toBe(true);
    // The node takes the bytes and never answers: whether they were taken is not known.
    local.faults.swallowNext(1);
    const swallowed = await topicCreate();
    expect(await ledger.submit(swallowed.bytes)).toMatchObject({ kind: "unknown" });
    expect(await ledger.ping()).toBe(true);
    await local.faults.unreachable(true);
    const first = await topicCreate();
    // The node answered a moment ago, so the SDK had the bytes; but its call's connection was
    // refused: nothing left this machine.
    const outcome = await ledger.submit(first.bytes);
    expect(outcome.kind).toBe("unsent");
    expect(outcome.kind === "unsent" && outcome.error).toContain("ECONNREFUSED");
    const second = await topicCreate();
    const third = await topicCreate();
    expect(await ledger.submit(second.bytes)).toMatchObject({ kind: "unsent", error: expect.stringContaining("consensus node 0.0.3 unreachable") });
    expect((await ledger.submit(third.bytes)).kind).toBe("unsent");
    await local.faults.unreachable(false);
    const after = await topicCreate();
    // gRPC's reconnect backoff (real time) decides when the node is used again: re-send the same
    // bytes until they are accepted, as the anchor loop does.
    await waitFor("the ledger to accept again", async () => ((await ledger.submit(after.bytes)).kind === "accepted" ? true : null), 10_000, 100);
    expect(await finalReceipt(ledger, after.id, 5_000)).toMatchObject({ kind: "success" });
    for (const t of [swallowed, first, second, third]) {
      expect(await ledger.receipt(t.id)).toEqual({ kind: "not_found" });
      expect(await ledger.lookupTransaction(t.id)).toEqual({ kind: "not_found" });
    }
  }, 30_000);
});

const testnetId = process.env.HEDERA_TESTNET_OPERATOR_ID;
const testnetKey = process.env.HEDERA_TESTNET_OPERATOR_KEY;
if (testnetId && testnetKey) {
  ledgerContract("Hedera testnet", async () => createHederaLedger({ network: "testnet", operatorAccountId: testnetId, operatorPrivateKey: testnetKey }), 30_000);
} else {
  test.skip("Ledger contract: Hedera testnet (set HEDERA_TESTNET_OPERATOR_ID and HEDERA_TESTNET_OPERATOR_KEY to run)", () => undefined);
}
