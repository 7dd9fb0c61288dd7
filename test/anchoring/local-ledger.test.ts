/**
 * The local ledger driven through the real @hashgraph/sdk over real gRPC, and read back through
 * its mirror REST API: what the product's adapter will see. No mocks.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  AccountId,
  AccountInfoQuery,
  Client,
  Hbar,
  PrecheckStatusError,
  PrivateKey,
  ReceiptStatusError,
  Status,
  Timestamp,
  TopicCreateTransaction,
  TopicId,
  TopicInfoQuery,
  TopicMessageSubmitTransaction,
  Transaction,
  TransactionId,
  TransactionReceiptQuery,
  TransferTransaction,
} from "@hashgraph/sdk";
import { proto } from "@hashgraph/proto";
import * as grpc from "@grpc/grpc-js";
import { Database } from "bun:sqlite";
import { mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { manualClock } from "../../src/lib/clock.ts";
import { startLocalLedger, transactionPageUrl, type LocalLedger, type LocalLedgerOptions } from "../../src/local-ledger/index.ts";
import { nextRunningHash } from "../../src/local-ledger/running-hash.ts";
import { LEDGER_PRAGMAS } from "../../src/local-ledger/schema.ts";

const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "docverify-ledger-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function ledgerAt(dataDir: string, options: Partial<LocalLedgerOptions> = {}): Promise<LocalLedger> {
  const ledger = await startLocalLedger({ dataDir, consensusMs: 200, ...options });
  cleanups.push(() => ledger.close());
  return ledger;
}

function clientFor(ledger: LocalLedger): Client {
  const client = Client.forNetwork({ [ledger.grpcAddress]: ledger.nodeAccountId });
  client.setOperator(ledger.operator.accountId, PrivateKey.fromStringDer(ledger.operator.privateKeyDer));
  // The SDK waits at least 250 ms before asking again for a receipt not yet final (and before
  // retrying a BUSY node), doubling each time: against a ledger whose consensus takes 200 ms,
  // most of each test was that wait. It still asks again, as often as it must.
  client.setMinBackoff(25);
  cleanups.push(() => client.close());
  return client;
}

async function mirror(ledger: LocalLedger, path: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${ledger.mirrorUrl}${path}`);
  return { status: res.status, body: await res.json() };
}

/** `0.0.2@1700000000.000000001` → `0.0.2-1700000000-000000001`, the mirror's form. */
function mirrorId(id: TransactionId): string {
  const [account, start] = id.toString().split("@") as [string, string];
  const [s, n] = start.split(".") as [string, string];
  return `${account}-${s}-${n.padStart(9, "0")}`;
}

async function createTopic(client: Client, submitKey?: PrivateKey): Promise<TopicId> {
  const tx = new TopicCreateTransaction().setTopicMemo("docverify test");
  if (submitKey) tx.setSubmitKey(submitKey.publicKey);
  const receipt = await (await tx.execute(client)).getReceipt(client);
  expect(receipt.status).toBe(Status.Success);
  return receipt.topicId!;
}

async function submit(client: Client, topicId: TopicId, message: string, signer?: PrivateKey) {
  const tx = new TopicMessageSubmitTransaction().setTopicId(topicId).setMessage(message).freezeWith(client);
  if (signer) await tx.sign(signer);
  return tx.execute(client);
}

/** SDK round trips wait for consensus and the SDK's retry backoff; bun's default 5 s is tight. */
const SLOW = 20_000;

const NOT_FOUND = { _status: { messages: [{ message: "Not found" }] } };

describe("local ledger through the SDK", () => {
  let ledger: LocalLedger;
  let client: Client;
  let submitKey: PrivateKey;
  let topicId: TopicId;

  beforeAll(async () => {
    ledger = await ledgerAt(tempDir());
    client = clientFor(ledger);
    submitKey = PrivateKey.generateED25519();
    topicId = await createTopic(client, submitKey);
  }, SLOW);

  test("starts, answers a balance query, and creates a topic with a submit key", async () => {
    expect(ledger.grpcAddress).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(ledger.mirrorUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(ledger.nodeAccountId).toBe("0.0.3");
    expect(ledger.operator.accountId).toBe("0.0.2");
    await client.ping(AccountId.fromString("0.0.3"));

    expect(topicId.toString()).toBe("0.0.1001");
    const info = await new TopicInfoQuery().setTopicId(topicId).execute(client);
    expect(info.submitKey?.toString()).toBe(submitKey.publicKey.toString());
    expect(info.sequenceNumber.toNumber()).toBe(0);
  }, SLOW);

  test("messages get sequence numbers 1 then 2, and running hashes that chain", async () => {
    const first = await (await submit(client, topicId, "first", submitKey)).getReceipt(client);
    const second = await (await submit(client, topicId, "second", submitKey)).getReceipt(client);
    expect(first.status).toBe(Status.Success);
    expect(first.topicSequenceNumber?.toNumber()).toBe(1);
    expect(second.topicSequenceNumber?.toNumber()).toBe(2);
    expect(first.topicRunningHash?.length).toBe(48);

    // Recompute both running hashes from what the mirror publishes: a client can verify the chain.
    const { body } = await mirror(ledger, `/api/v1/topics/${topicId}/messages`);
    expect(body.messages.map((m: any) => m.sequence_number)).toEqual([1, 2]);
    let previous: Uint8Array = new Uint8Array(48);
    for (const [m, receipt] of [body.messages[0], body.messages[1]].map((m: any, i) => [m, [first, second][i]!] as const)) {
      const [seconds, nanos] = (m.consensus_timestamp as string).split(".").map(Number) as [number, number];
      const expected = nextRunningHash({
        previousRunningHash: previous,
        payer: { shard: 0, realm: 0, num: 2 },
        topic: { shard: 0, realm: 0, num: topicId.num.toNumber() },
        consensusSeconds: seconds,
        consensusNanos: nanos,
        sequenceNumber: m.sequence_number,
        message: Buffer.from(m.message, "base64"),
      });
      expect(Buffer.from(m.running_hash, "base64").toString("hex")).toBe(Buffer.from(expected).toString("hex"));
      expect(Buffer.from(receipt.topicRunningHash!).toString("hex")).toBe(Buffer.from(expected).toString("hex"));
      previous = expected;
    }
  }, SLOW);

  test("a message signed with the wrong submit key fails with INVALID_SIGNATURE in the receipt", async () => {
    const response = await submit(client, topicId, "intruder", PrivateKey.generateED25519());
    const err = await response.getReceipt(client).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReceiptStatusError);
    expect((err as ReceiptStatusError).status).toBe(Status.InvalidSignature);
    // Not signed by the submit key at all: the same.
    const unsigned = await submit(client, topicId, "unsigned");
    expect(((await unsigned.getReceipt(client).catch((e: unknown) => e)) as ReceiptStatusError).status).toBe(Status.InvalidSignature);
    // Neither got a sequence number.
    const next = await (await submit(client, topicId, "third", submitKey)).getReceipt(client);
    expect(next.topicSequenceNumber?.toNumber()).toBe(3);
  }, SLOW);

  test("resubmitting the same signed bytes answers DUPLICATE_TRANSACTION", async () => {
    const txId = TransactionId.generate(ledger.operator.accountId);
    const tx = new TopicMessageSubmitTransaction().setTopicId(topicId).setMessage("once").setTransactionId(txId).freezeWith(client);
    await tx.sign(submitKey);
    const bytes = tx.toBytes();
    const receipt = await (await Transaction.fromBytes(bytes).execute(client)).getReceipt(client);
    expect(receipt.status).toBe(Status.Success);
    const err = await Transaction.fromBytes(bytes)
      .execute(client)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PrecheckStatusError);
    expect((err as PrecheckStatusError).status).toBe(Status.DuplicateTransaction);
  }, SLOW);

  test("a transaction outside its validity window is refused at precheck", async () => {
    const at = (offsetMs: number) => TransactionId.withValidStart(AccountId.fromString("0.0.2"), Timestamp.fromDate(new Date(Date.now() + offsetMs)));
    const expired = await new TopicMessageSubmitTransaction()
      .setTopicId(topicId)
      .setMessage("late")
      .setTransactionId(at(-200_000))
      .execute(client)
      .catch((e: unknown) => e);
    expect((expired as PrecheckStatusError).status).toBe(Status.TransactionExpired);
    const early = await new TopicMessageSubmitTransaction()
      .setTopicId(topicId)
      .setMessage("early")
      .setTransactionId(at(60_000))
      .execute(client)
      .catch((e: unknown) => e);
    expect((early as PrecheckStatusError).status).toBe(Status.InvalidTransactionStart);
  }, SLOW);

  test("an unknown topic fails in the receipt with INVALID_TOPIC_ID; an oversized message with MESSAGE_SIZE_TOO_LARGE", async () => {
    const unknown = await submit(client, TopicId.fromString("0.0.999999"), "nowhere");
    expect(((await unknown.getReceipt(client).catch((e: unknown) => e)) as ReceiptStatusError).status).toBe(Status.InvalidTopicId);
    const big = new TopicMessageSubmitTransaction().setTopicId(topicId).setMessage("x".repeat(2000)).setChunkSize(4096).freezeWith(client);
    await big.sign(submitKey);
    const err = await (await big.execute(client)).getReceipt(client).catch((e: unknown) => e);
    expect((err as ReceiptStatusError).status).toBe(Status.MessageSizeTooLarge);
  }, SLOW);

  test("a long message in the SDK's default 1024-byte chunks gets one sequence number per chunk", async () => {
    const topic = await createTopic(client);
    const responses = await new TopicMessageSubmitTransaction().setTopicId(topic).setMessage("y".repeat(2500)).executeAll(client);
    const receipts = await Promise.all(responses.map((r) => r.getReceipt(client)));
    expect(receipts.map((r) => r.topicSequenceNumber?.toNumber())).toEqual([1, 2, 3]);
    const { body } = await mirror(ledger, `/api/v1/topics/${topic}/messages`);
    expect(body.messages.map((m: any) => [m.chunk_info.number, m.chunk_info.total, Buffer.from(m.message, "base64").length])).toEqual([
      [1, 3, 1024],
      [2, 3, 1024],
      [3, 3, 452],
    ]);
    expect(new Set(body.messages.map((m: any) => m.chunk_info.initial_transaction_id.transaction_valid_start)).size).toBe(1);
  }, SLOW);

  test("payer problems, fees and unsupported calls get the network's precheck codes", async () => {
    const wrongKey = Client.forNetwork({ [ledger.grpcAddress]: ledger.nodeAccountId }).setOperator("0.0.2", PrivateKey.generateED25519());
    const noAccount = Client.forNetwork({ [ledger.grpcAddress]: ledger.nodeAccountId }).setOperator("0.0.5000", PrivateKey.generateED25519());
    cleanups.push(() => wrongKey.close(), () => noAccount.close());
    const status = (e: unknown) => (e as PrecheckStatusError).status;
    expect(status(await new TopicCreateTransaction().execute(wrongKey).catch((e: unknown) => e))).toBe(Status.InvalidSignature);
    expect(status(await new TopicCreateTransaction().execute(noAccount).catch((e: unknown) => e))).toBe(Status.PayerAccountNotFound);
    expect(status(await new TopicCreateTransaction().setMaxTransactionFee(Hbar.fromTinybars(1)).execute(client).catch((e: unknown) => e))).toBe(
      Status.InsufficientTxFee,
    );
    const transfer = new TransferTransaction().addHbarTransfer("0.0.2", Hbar.fromTinybars(-1)).addHbarTransfer("0.0.3", Hbar.fromTinybars(1));
    expect(status(await transfer.execute(client).catch((e: unknown) => e))).toBe(Status.NotSupported);
    expect(String(await new AccountInfoQuery().setAccountId("0.0.2").execute(client).catch((e: unknown) => e))).toContain("NOT_SUPPORTED");
  }, SLOW);

  test("what the SDK never sends still gets an answer: wrong node, garbage, oversize", async () => {
    const raw = grpc.makeGenericClientConstructor(
      {
        createTopic: {
          path: "/proto.ConsensusService/createTopic",
          requestStream: false,
          responseStream: false,
          requestSerialize: (b: Uint8Array) => Buffer.from(b),
          requestDeserialize: (b: Buffer) => b,
          responseSerialize: (b: Buffer) => b,
          responseDeserialize: (b: Buffer) => proto.TransactionResponse.decode(b),
        },
      },
      "ConsensusService",
    );
    const rpc = new raw(ledger.grpcAddress, grpc.credentials.createInsecure()) as unknown as {
      createTopic(b: Uint8Array, cb: (e: Error | null, r: proto.TransactionResponse) => void): void;
      close(): void;
    };
    cleanups.push(() => rpc.close());
    const send = (bytes: Uint8Array) =>
      new Promise<string | undefined>((resolve, reject) =>
        rpc.createTopic(bytes, (e, r) => (e ? reject(e) : resolve(proto.ResponseCodeEnum[r.nodeTransactionPrecheckCode]))),
      );
    const operatorKey = PrivateKey.fromStringDer(ledger.operator.privateKeyDer);
    const toNode4 = await new TopicCreateTransaction()
      .setNodeAccountIds([AccountId.fromString("0.0.4")])
      .setTransactionId(TransactionId.generate("0.0.2"))
      .freeze()
      .sign(operatorKey);
    const signed = proto.TransactionList.decode(toNode4.toBytes()).transactionList[0]!;
    expect(await send(proto.Transaction.encode(signed).finish())).toBe("INVALID_NODE_ACCOUNT");
    expect(await send(Uint8Array.of(0x0a, 0xff, 0xff))).toBe("INVALID_TRANSACTION");
    expect(await send(new Uint8Array(7000))).toBe("TRANSACTION_OVERSIZE");
  }, SLOW);

  test("ECDSA secp256k1 submit keys are verified like the network does", async () => {
    const ecdsa = PrivateKey.generateECDSA();
    const topic = await createTopic(client, ecdsa);
    const ok = await (await submit(client, topic, "ecdsa", ecdsa)).getReceipt(client);
    expect(ok.topicSequenceNumber?.toNumber()).toBe(1);
    const bad = await (await submit(client, topic, "ecdsa", PrivateKey.generateECDSA())).getReceipt(client).catch((e: unknown) => e);
    expect((bad as ReceiptStatusError).status).toBe(Status.InvalidSignature);
  }, SLOW);

  test("the mirror shows a message and its transaction only after consensus, with the public mirror's shapes", async () => {
    ledger.faults.pauseConsensus();
    const response = await submit(client, topicId, "mirror me", submitKey);
    const txPath = `/api/v1/transactions/${mirrorId(response.transactionId)}`;
    // Accepted, not yet at consensus: the receipt is UNKNOWN and the mirror knows nothing.
    const pending = await new TransactionReceiptQuery()
      .setTransactionId(response.transactionId)
      .setMaxAttempts(1)
      .execute(client)
      .catch((e: unknown) => e);
    expect(String(pending)).toContain("UNKNOWN");
    expect(await mirror(ledger, txPath)).toEqual({ status: 404, body: NOT_FOUND });
    const latest = await mirror(ledger, `/api/v1/topics/${topicId}/messages?order=desc&limit=1`);
    expect(latest.body.messages[0].sequence_number).toBe(4);

    ledger.faults.resumeConsensus();
    const receipt = await response.getReceipt(client);
    const seq = receipt.topicSequenceNumber!.toNumber();
    expect(seq).toBe(5);

    const message = await mirror(ledger, `/api/v1/topics/${topicId}/messages/${seq}`);
    expect(message.status).toBe(200);
    expect(Object.keys(message.body).sort()).toEqual(
      ["chunk_info", "consensus_timestamp", "message", "payer_account_id", "running_hash", "running_hash_version", "sequence_number", "topic_id"].sort(),
    );
    expect(message.body).toMatchObject({
      topic_id: topicId.toString(),
      sequence_number: seq,
      payer_account_id: "0.0.2",
      running_hash_version: 3,
      message: Buffer.from("mirror me").toString("base64"),
      running_hash: Buffer.from(receipt.topicRunningHash!).toString("base64"),
      chunk_info: {
        number: 1,
        total: 1,
        initial_transaction_id: { account_id: "0.0.2", nonce: 0, scheduled: false },
      },
    });
    expect(message.body.consensus_timestamp).toMatch(/^\d+\.\d{9}$/);
    expect(message.body.chunk_info.initial_transaction_id.transaction_valid_start).toBe(mirrorId(response.transactionId).split("-").slice(1).join("."));

    const tx = await mirror(ledger, txPath);
    expect(tx.status).toBe(200);
    expect(tx.body.transactions).toHaveLength(1);
    expect(tx.body.transactions[0]).toMatchObject({
      consensus_timestamp: message.body.consensus_timestamp,
      transaction_id: mirrorId(response.transactionId),
      name: "CONSENSUSSUBMITMESSAGE",
      result: "SUCCESS",
      entity_id: topicId.toString(),
      node: "0.0.3",
      nonce: 0,
      scheduled: false,
      valid_duration_seconds: "120",
      transaction_hash: Buffer.from(response.transactionHash).toString("base64"),
    });
    const fee = tx.body.transactions[0].charged_tx_fee;
    expect(fee).toBeGreaterThan(0);
    expect(tx.body.transactions[0].transfers.reduce((s: number, t: any) => s + t.amount, 0)).toBe(0);

    // The explorer page for the same transaction, through the URL helper the product uses.
    const page = await fetch(transactionPageUrl(ledger.mirrorUrl, mirrorId(response.transactionId)));
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toContain(mirrorId(response.transactionId));
    expect(html).toContain("mirror me");

    const nodes = await mirror(ledger, "/api/v1/network/nodes");
    expect(nodes.body.nodes[0]).toMatchObject({
      node_account_id: "0.0.3",
      service_endpoints: [{ ip_address_v4: "127.0.0.1", port: Number(ledger.grpcAddress.split(":")[1]), domain_name: "" }],
    });
  }, SLOW);
});

describe("consensus timing", () => {
  test("a transaction reaches consensus exactly consensusMs after acceptance, by the injected clock", async () => {
    const clock = manualClock(Date.now());
    const ledger = await ledgerAt(tempDir(), { consensusMs: 1000, clock });
    const client = clientFor(ledger);
    const accepted = clock.now();
    const response = await new TopicCreateTransaction().execute(client);
    const txPath = `/api/v1/transactions/${mirrorId(response.transactionId)}`;

    clock.advance(999);
    await ledger.runConsensus();
    expect((await mirror(ledger, txPath)).status).toBe(404);

    clock.advance(1);
    await ledger.runConsensus();
    const { status, body } = await mirror(ledger, txPath);
    expect(status).toBe(200);
    const expected = accepted + 1000;
    expect(body.transactions[0].consensus_timestamp).toBe(`${Math.floor(expected / 1000)}.${String((expected % 1000) * 1_000_000).padStart(9, "0")}`);
    expect((await response.getReceipt(client)).topicId?.toString()).toBe("0.0.1001");

    // Receipts are kept for three minutes after consensus, as on Hedera; the mirror keeps all.
    clock.advance(180_001);
    const gone = await new TransactionReceiptQuery()
      .setTransactionId(response.transactionId)
      .setMaxAttempts(1)
      .execute(client)
      .catch((e: unknown) => e);
    expect(String(gone)).toContain("RECEIPT_NOT_FOUND");
    expect((await mirror(ledger, txPath)).status).toBe(200);
  }, SLOW);

  test("consensusIntervalMs: a burst reaches consensus one transaction per interval; a transaction after a pause, consensusMs after its acceptance", async () => {
    const clock = manualClock(Date.now());
    const ledger = await ledgerAt(tempDir(), { consensusMs: 1000, consensusIntervalMs: 100, clock });
    const client = clientFor(ledger);
    const t0 = clock.now();
    const paths: string[] = [];
    for (let i = 0; i < 3; i++) paths.push(`/api/v1/transactions/${mirrorId((await new TopicCreateTransaction().execute(client)).transactionId)}`);
    const final = async () => (await Promise.all(paths.map((p) => mirror(ledger, p)))).filter((r) => r.status === 200).length;
    const at = async (ms: number) => {
      clock.set(t0 + ms);
      await ledger.runConsensus();
      return await final();
    };
    // Due at t0 + 1000, + 1100, + 1200: one per 100 ms after the first's consensusMs.
    expect(await at(999)).toBe(0);
    expect(await at(1000)).toBe(1);
    expect(await at(1099)).toBe(1);
    expect(await at(1100)).toBe(2);
    expect(await at(1199)).toBe(2);
    expect(await at(1200)).toBe(3);
    // Accepted well after the last one's turn: consensusMs after its own acceptance, not later.
    clock.set(t0 + 5000);
    paths.push(`/api/v1/transactions/${mirrorId((await new TopicCreateTransaction().execute(client)).transactionId)}`);
    expect(await at(5999)).toBe(3);
    expect(await at(6000)).toBe(4);
  }, SLOW);

  test("with the system clock, consensusMs is respected", async () => {
    const ledger = await ledgerAt(tempDir(), { consensusMs: 300 });
    const client = clientFor(ledger);
    const before = Date.now();
    const response = await new TopicCreateTransaction().execute(client);
    const txPath = `/api/v1/transactions/${mirrorId(response.transactionId)}`;
    expect((await mirror(ledger, txPath)).status).toBe(404);
    await response.getReceipt(client);
    const { body } = await mirror(ledger, txPath);
    const consensusMs = Number(body.transactions[0].consensus_timestamp.split(".")[0]) * 1000 + Math.floor(Number(body.transactions[0].consensus_timestamp.split(".")[1]) / 1e6);
    expect(consensusMs - before).toBeGreaterThanOrEqual(300);
  }, SLOW);
});

describe("restart", () => {
  test("history, seen transaction ids and the genesis key survive; pending transactions reach consensus after it", async () => {
    const dataDir = tempDir();
    const first = await ledgerAt(dataDir);
    const client1 = clientFor(first);
    const submitKey = PrivateKey.generateED25519();
    const topicId = await createTopic(client1, submitKey);

    const txId = TransactionId.generate(first.operator.accountId);
    const once = new TopicMessageSubmitTransaction().setTopicId(topicId).setMessage("before").setTransactionId(txId).freezeWith(client1);
    await once.sign(submitKey);
    const onceBytes = once.toBytes();
    await (await Transaction.fromBytes(onceBytes).execute(client1)).getReceipt(client1);

    first.faults.pauseConsensus();
    const pending = await submit(client1, topicId, "accepted before the restart", submitKey);
    client1.close();
    await first.close();

    // Another ledger on the same folder while the first runs is refused; after close it starts.
    const second = await ledgerAt(dataDir);
    await expect(startLocalLedger({ dataDir, consensusMs: 200 })).rejects.toThrow(/in use/);
    expect(second.operator).toEqual(first.operator);
    const client2 = clientFor(second);
    const receipt = await new TransactionReceiptQuery().setTransactionId(pending.transactionId).execute(client2);
    expect(receipt.status).toBe(Status.Success);
    expect(receipt.topicSequenceNumber?.toNumber()).toBe(2);

    const { body } = await mirror(second, `/api/v1/topics/${topicId}/messages`);
    expect(body.messages.map((m: any) => Buffer.from(m.message, "base64").toString())).toEqual(["before", "accepted before the restart"]);
    const dup = await Transaction.fromBytes(onceBytes)
      .execute(client2)
      .catch((e: unknown) => e);
    expect((dup as PrecheckStatusError).status).toBe(Status.DuplicateTransaction);
    const next = await (await submit(client2, topicId, "after", submitKey)).getReceipt(client2);
    expect(next.topicSequenceNumber?.toNumber()).toBe(3);
  }, SLOW);
});

describe("data folder and options", () => {
  test("the database and the operator key file are owner-only; pragmas in the documented order", async () => {
    const dir = tempDir();
    const ledger = await ledgerAt(dir);
    expect(LEDGER_PRAGMAS.map((p) => p.split(" ")[1])).toEqual(["busy_timeout", "journal_mode", "foreign_keys", "synchronous"]);
    expect(LEDGER_PRAGMAS).toContain("PRAGMA synchronous = FULL");
    expect(statSync(join(dir, "ledger.sqlite")).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, "operator.key")).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, "operator.key"), "utf8").trim()).toBe(ledger.operator.privateKeyDer);
    expect(PrivateKey.fromStringDer(ledger.operator.privateKeyDer).publicKey.toStringDer()).toBe(ledger.operator.publicKeyDer);
    const db = new Database(join(dir, "ledger.sqlite"), { readonly: true });
    expect(db.query("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" });
    db.close();
  }, SLOW);

  test("the example in docs/local-ledger.md runs as written", async () => {
    const root = resolve(import.meta.dir, "..", "..");
    const snippet = /```ts\n([\s\S]*?)```/.exec(readFileSync(join(root, "docs", "local-ledger.md"), "utf8"))![1]!;
    const dir = tempDir();
    symlinkSync(join(root, "node_modules"), join(dir, "node_modules"));
    const code = snippet.replace('"./src/', `"${root}/src/`).replace('"./data/local-ledger"', JSON.stringify(join(dir, "ledger")));
    writeFileSync(join(dir, "example.ts"), `${code}\nexport const result = [String(topicId), page];\n`);
    // In process: a process that used the SDK lingers up to its 10 s gRPC deadline after close().
    const { result } = (await import(join(dir, "example.ts"))) as { result: [string, string] };
    expect(result[0]).toBe("0.0.1001");
    expect(result[1]).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/transaction\/0\.0\.2-1700000000-000000000$/);
  }, SLOW);

  test("options are checked strictly", async () => {
    const dataDir = tempDir();
    await expect(startLocalLedger({ dataDir, grpcPort: 70000 })).rejects.toThrow(TypeError);
    await expect(startLocalLedger({ dataDir, consensusMs: -1 })).rejects.toThrow(TypeError);
    await expect(startLocalLedger({ dataDir, consensusIntervalMs: -1 })).rejects.toThrow(TypeError);
    await expect(startLocalLedger({ dataDir, consensusMS: 5 } as unknown as LocalLedgerOptions)).rejects.toThrow(/unknown option consensusMS/);
  }, SLOW);
});

describe("fault hooks", () => {
  let ledger: LocalLedger;
  let client: Client;
  let topicId: TopicId;

  beforeAll(async () => {
    ledger = await ledgerAt(tempDir());
    client = clientFor(ledger);
    topicId = await createTopic(client);
  }, SLOW);

  test("busyNext: BUSY prechecks, which the SDK retries, then success", async () => {
    ledger.faults.busyNext(1);
    const receipt = await (await submit(client, topicId, "after busy")).getReceipt(client);
    expect(receipt.status).toBe(Status.Success);
  }, SLOW);

  test("rejectNext: a permanent precheck error", async () => {
    ledger.faults.rejectNext(1, "INSUFFICIENT_PAYER_BALANCE");
    const err = await submit(client, topicId, "refused").catch((e: unknown) => e);
    expect((err as PrecheckStatusError).status).toBe(Status.InsufficientPayerBalance);
    expect(() => ledger.faults.rejectNext(1, "NO_SUCH_CODE")).toThrow(TypeError);
  }, SLOW);

  test("failNextAtConsensus: accepted, then failed in the receipt", async () => {
    ledger.faults.failNextAtConsensus(1, "INVALID_SIGNATURE");
    const err = await (await submit(client, topicId, "fails")).getReceipt(client).catch((e: unknown) => e);
    expect((err as ReceiptStatusError).status).toBe(Status.InvalidSignature);
  }, SLOW);

  test("dropNext: accepted but never reaches consensus; a resubmission is a duplicate", async () => {
    ledger.faults.dropNext(1);
    const txId = TransactionId.generate(ledger.operator.accountId);
    const tx = new TopicMessageSubmitTransaction().setTopicId(topicId).setMessage("lost").setTransactionId(txId).freezeWith(client);
    const bytes = tx.toBytes();
    const response = await Transaction.fromBytes(bytes).execute(client);
    // A fixed wait on purpose: past the ledger's 200 ms consensus delay, the dropped message
    // would be due; what is tested is that it does not reach consensus.
    await Bun.sleep(400);
    await ledger.runConsensus();
    const receipt = await new TransactionReceiptQuery()
      .setTransactionId(response.transactionId)
      .setMaxAttempts(1)
      .execute(client)
      .catch((e: unknown) => e);
    expect(String(receipt)).toContain("UNKNOWN");
    expect((await mirror(ledger, `/api/v1/transactions/${mirrorId(txId)}`)).status).toBe(404);
    const again = await Transaction.fromBytes(bytes)
      .execute(client)
      .catch((e: unknown) => e);
    expect((again as PrecheckStatusError).status).toBe(Status.DuplicateTransaction);
  }, SLOW);

  test("unreachable: both sockets refuse connections, then listen again on the same ports", async () => {
    const [host, port] = ledger.grpcAddress.split(":") as [string, string];
    const connects = () =>
      new Promise<boolean>((resolve) => {
        void Bun.connect({
          hostname: host,
          port: Number(port),
          socket: {
            open: (s) => {
              s.end();
              resolve(true);
            },
            connectError: () => resolve(false),
            data: () => undefined,
          },
        }).catch(() => resolve(false));
      });
    await ledger.faults.unreachable(true);
    expect(await connects()).toBe(false);
    expect(await fetch(`${ledger.mirrorUrl}/api/v1/network/nodes`).catch((e: unknown) => e)).toBeInstanceOf(Error);

    await ledger.faults.unreachable(false);
    expect(await connects()).toBe(true);
    expect((await mirror(ledger, "/api/v1/network/nodes")).status).toBe(200);
    // A client that saw the node down marks it unhealthy for a while (SDK behaviour); a new one
    // gets through at once.
    const fresh = clientFor(ledger);
    const receipt = await (await submit(fresh, topicId, "back")).getReceipt(fresh);
    expect(receipt.status).toBe(Status.Success);
  }, SLOW);
});
