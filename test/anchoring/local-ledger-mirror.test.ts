/**
 * The local ledger's mirror REST subset and transaction page, table-driven: request → status and
 * content, with the public mirror node's parameters, pagination links and error bodies.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client, PrivateKey, TopicCreateTransaction, TopicMessageSubmitTransaction, type TopicId, type TransactionResponse } from "@hashgraph/sdk";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalLedger, type LocalLedger } from "../../src/local-ledger/index.ts";

let ledger: LocalLedger;
let client: Client;
let dir: string;
let topic: TopicId;
let submitKey: PrivateKey;
const responses: TransactionResponse[] = [];
/** Consensus timestamps of messages 1..5, by sequence number. */
const ts: string[] = [];
const MESSAGES = ["one", "two", "three", "four", "<script>alert('five')</script> & \"more\""];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "docverify-mirror-"));
  ledger = await startLocalLedger({ dataDir: dir, consensusMs: 0 });
  client = Client.forNetwork({ [ledger.grpcAddress]: ledger.nodeAccountId });
  client.setOperator(ledger.operator.accountId, PrivateKey.fromStringDer(ledger.operator.privateKeyDer));
  submitKey = PrivateKey.generateED25519();
  topic = (await (await new TopicCreateTransaction().setSubmitKey(submitKey.publicKey).setTopicMemo("memo").execute(client)).getReceipt(client)).topicId!;
  for (const m of MESSAGES) {
    const tx = new TopicMessageSubmitTransaction().setTopicId(topic).setMessage(m).freezeWith(client);
    await tx.sign(submitKey);
    const response = await tx.execute(client);
    await response.getReceipt(client);
    responses.push(response);
  }
  const all = (await (await fetch(`${ledger.mirrorUrl}/api/v1/topics/${topic}/messages`)).json()) as { messages: { consensus_timestamp: string }[] };
  ts.push("", ...all.messages.map((m) => m.consensus_timestamp));
}, 20_000);

afterAll(async () => {
  client.close();
  await ledger.close();
  rmSync(dir, { recursive: true, force: true });
});

const err = (...messages: string[]) => ({ _status: { messages: messages.map((message) => ({ message })) } });
const seqs = (body: { messages: { sequence_number: number }[] }) => body.messages.map((m) => m.sequence_number);
const mirrorId = (r: TransactionResponse) => {
  const [account, start] = r.transactionId.toString().split("@") as [string, string];
  const [s, n] = start.split(".") as [string, string];
  return `${account}-${s}-${n}`;
};

interface Case {
  name: string;
  method?: string;
  path: () => string;
  status: number;
  check?: (body: any) => void;
}

const cases: Case[] = [
  { name: "all messages, ascending", path: () => `/api/v1/topics/${topic}/messages`, status: 200, check: (b) => expect([seqs(b), b.links.next]).toEqual([[1, 2, 3, 4, 5], null]) },
  {
    name: "a full page links to the next one by timestamp",
    path: () => `/api/v1/topics/${topic}/messages?limit=2`,
    status: 200,
    check: (b) => expect([seqs(b), b.links.next]).toEqual([[1, 2], `/api/v1/topics/${topic}/messages?limit=2&timestamp=gt:${ts[2]}`]),
  },
  {
    name: "descending pages link with lt",
    path: () => `/api/v1/topics/${topic}/messages?order=desc&limit=2`,
    status: 200,
    check: (b) => expect([seqs(b), b.links.next]).toEqual([[5, 4], `/api/v1/topics/${topic}/messages?order=desc&limit=2&timestamp=lt:${ts[4]}`]),
  },
  { name: "sequencenumber gte", path: () => `/api/v1/topics/${topic}/messages?sequencenumber=gte:3`, status: 200, check: (b) => expect(seqs(b)).toEqual([3, 4, 5]) },
  { name: "sequencenumber range", path: () => `/api/v1/topics/${topic}/messages?sequencenumber=gt:2&sequencenumber=lte:4`, status: 200, check: (b) => expect(seqs(b)).toEqual([3, 4]) },
  { name: "sequencenumber equality", path: () => `/api/v1/topics/${topic}/messages?sequencenumber=3`, status: 200, check: (b) => expect(seqs(b)).toEqual([3]) },
  { name: "sequencenumber ne", path: () => `/api/v1/topics/${topic}/messages?sequencenumber=ne:3`, status: 200, check: (b) => expect(seqs(b)).toEqual([1, 2, 4, 5]) },
  { name: "timestamp gt", path: () => `/api/v1/topics/${topic}/messages?timestamp=gt:${ts[4]}`, status: 200, check: (b) => expect(seqs(b)).toEqual([5]) },
  { name: "utf-8 encoding", path: () => `/api/v1/topics/${topic}/messages?encoding=utf-8&limit=1`, status: 200, check: (b) => expect(b.messages[0].message).toBe("one") },
  { name: "limit above the maximum is clamped", path: () => `/api/v1/topics/${topic}/messages?limit=500`, status: 200, check: (b) => expect(b.messages).toHaveLength(5) },
  { name: "limit 0", path: () => `/api/v1/topics/${topic}/messages?limit=0`, status: 400, check: (b) => expect(b).toEqual(err("Invalid parameter: limit")) },
  { name: "bad order", path: () => `/api/v1/topics/${topic}/messages?order=up`, status: 400, check: (b) => expect(b).toEqual(err("Invalid parameter: order")) },
  { name: "bad operator", path: () => `/api/v1/topics/${topic}/messages?sequencenumber=xx:3`, status: 400, check: (b) => expect(b).toEqual(err("Invalid parameter: sequencenumber")) },
  { name: "unknown parameter", path: () => `/api/v1/topics/${topic}/messages?foo=1`, status: 400, check: (b) => expect(b).toEqual(err("Unknown query parameter: foo")) },
  { name: "malformed topic id", path: () => "/api/v1/topics/abc/messages", status: 400, check: (b) => expect(b).toEqual(err("Invalid parameter: topic.id")) },
  { name: "unknown topic: an empty page", path: () => "/api/v1/topics/0.0.424242/messages", status: 200, check: (b) => expect(b).toEqual({ messages: [], links: { next: null } }) },
  { name: "one message by sequence number", path: () => `/api/v1/topics/${topic}/messages/3`, status: 200, check: (b) => expect([b.sequence_number, b.consensus_timestamp]).toEqual([3, ts[3]]) },
  { name: "a plain topic number works too", path: () => `/api/v1/topics/${topic.num}/messages/3`, status: 200, check: (b) => expect(b.topic_id).toBe(topic.toString()) },
  { name: "missing sequence number", path: () => `/api/v1/topics/${topic}/messages/99`, status: 404, check: (b) => expect(b).toEqual(err("Not found")) },
  { name: "sequence number 0", path: () => `/api/v1/topics/${topic}/messages/0`, status: 400, check: (b) => expect(b).toEqual(err("Invalid parameter: sequencenumber")) },
  { name: "message by consensus timestamp", path: () => `/api/v1/topics/messages/${ts[2]}`, status: 200, check: (b) => expect(b.sequence_number).toBe(2) },
  {
    name: "topic info",
    path: () => `/api/v1/topics/${topic}`,
    status: 200,
    check: (b) =>
      expect(b).toMatchObject({
        topic_id: topic.toString(),
        memo: "memo",
        admin_key: null,
        submit_key: { _type: "ED25519", key: Buffer.from(submitKey.publicKey.toBytesRaw()).toString("hex") },
        auto_renew_account: "0.0.2",
        deleted: false,
      }),
  },
  {
    name: "transaction by id",
    path: () => `/api/v1/transactions/${mirrorId(responses[0]!)}`,
    status: 200,
    check: (b) => {
      expect(Object.keys(b.transactions[0]).sort()).toEqual(
        [
          "batch_key", "bytes", "charged_tx_fee", "consensus_timestamp", "entity_id", "max_custom_fees", "max_fee", "memo_base64", "name", "nft_transfers", "node",
          "nonce", "parent_consensus_timestamp", "result", "scheduled", "staking_reward_transfers", "token_transfers", "transaction_hash",
          "transaction_id", "transfers", "valid_duration_seconds", "valid_start_timestamp",
        ].sort(),
      );
      expect(b.transactions[0]).toMatchObject({ consensus_timestamp: ts[1], result: "SUCCESS", name: "CONSENSUSSUBMITMESSAGE" });
    },
  },
  {
    name: "transaction by hash (hex)",
    path: () => `/api/v1/transactions/${Buffer.from(responses[1]!.transactionHash).toString("hex")}`,
    status: 200,
    check: (b) => expect(b.transactions[0].consensus_timestamp).toBe(ts[2]),
  },
  { name: "the SDK's id form is not the mirror's", path: () => `/api/v1/transactions/${responses[0]!.transactionId.toString()}`, status: 400 },
  { name: "unknown transaction", path: () => "/api/v1/transactions/0.0.2-1-1", status: 404, check: (b) => expect(b).toEqual(err("Not found")) },
  { name: "unknown parameter on a transaction", path: () => `/api/v1/transactions/${mirrorId(responses[0]!)}?foo=1`, status: 400 },
  { name: "unknown route", path: () => "/api/v1/nope", status: 404, check: (b) => expect(b).toEqual(err("Not found")) },
  { name: "POST is not a route", method: "POST", path: () => "/api/v1/network/nodes", status: 404 },
];

describe("mirror REST", () => {
  for (const c of cases) {
    test(c.name, async () => {
      const res = await fetch(`${ledger.mirrorUrl}${c.path()}`, { method: c.method ?? "GET" });
      expect(res.status).toBe(c.status);
      expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
      const body = await res.json();
      c.check?.(body);
    });
  }

  test("following links.next walks every message once", async () => {
    const seen: number[] = [];
    let next: string | null = `/api/v1/topics/${topic}/messages?limit=2`;
    while (next) {
      const body = (await (await fetch(`${ledger.mirrorUrl}${next}`)).json()) as { messages: { sequence_number: number }[]; links: { next: string | null } };
      seen.push(...seqs(body));
      next = body.links.next;
    }
    expect(seen).toEqual([1, 2, 3, 4, 5]);
  });
});

describe("transaction page", () => {
  test("renders the transaction with everything escaped and nothing external", async () => {
    const res = await fetch(`${ledger.mirrorUrl}/transaction/${responses[4]!.transactionId.toString()}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await res.text();
    expect(html).not.toContain("<script>");
    expect(html).toContain("&lt;script&gt;alert(&#39;five&#39;)&lt;/script&gt; &amp; &quot;more&quot;");
    expect(html).not.toMatch(/(?:src|href)="(?:https?:)?\/\//);
    expect(html).toContain("Nothing here is public");
  });

  test("an unknown or malformed id is a plain, escaped error page", async () => {
    const missing = await fetch(`${ledger.mirrorUrl}/transaction/0.0.2-1-1`);
    expect(missing.status).toBe(404);
    const bad = await fetch(`${ledger.mirrorUrl}/transaction/${encodeURIComponent("<b>x</b>")}`);
    expect(bad.status).toBe(400);
    expect(await bad.text()).not.toContain("<b>");
  });
});
