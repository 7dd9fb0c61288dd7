/**
 * The local mirror against the public mirror node: every response docverify and its
 * verifier read validated against schemas written from the mirror node's published document
 * (mirror-schemas.ts), and the behaviours the real service has and the local one lacked: query
 * names and `order` lowercased, `encoding=utf8`, 10-digit timestamps, unknown parameters refused
 * on the single-message routes, `network/nodes`' parameters, `links.next` null on an exhausted
 * range, the rest-java error bodies of `/topics/{id}`, `cache-control`, `batch_key`, and every
 * link the service hands out in the form its target accepts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createMirrorClient } from "../../src/anchoring/mirror-client.ts";
import { localLinks, publicLinks } from "../../src/anchoring/links.ts";
import { mirrorFormTransactionId } from "../../src/anchoring/ledger.ts";
import { discoverNodes } from "../../src/anchoring/setup.ts";
import { startLedgerWithMessages, type LedgerWithMessages } from "./ledger-with-messages.ts";
import * as S from "./mirror-schemas.ts";

const TEXTS = ["m1", "m2", "m3", "m4", "m5", "héllo ✓ <b>"];
let env: LedgerWithMessages;
let base: string;
let topic: string;
let ts: readonly string[];
/** The SDK-form id (`0.0.2@s.n`) of message 1's transaction, as a Record carries it. */
let sdkId: string;

beforeAll(async () => {
  env = await startLedgerWithMessages(TEXTS);
  base = env.ledger.mirrorUrl;
  topic = env.topicId;
  ts = env.timestamps;
  const first = (await (await fetch(`${base}/api/v1/topics/${topic}/messages/1`)).json()) as {
    chunk_info: { initial_transaction_id: { account_id: string; transaction_valid_start: string } };
  };
  const i = first.chunk_info.initial_transaction_id;
  sdkId = `${i.account_id}@${i.transaction_valid_start}`;
}, 30_000);

afterAll(() => env.close());

const get = async (path: string): Promise<{ status: number; body: any; headers: Headers }> => {
  const res = await fetch(path.startsWith("http") ? path : base + path);
  const text = await res.text();
  return { status: res.status, body: res.headers.get("content-type")?.startsWith("application/json") ? JSON.parse(text) : text, headers: res.headers };
};
const err = (...messages: (string | { message: string; detail: string })[]) => ({
  _status: { messages: messages.map((m) => (typeof m === "string" ? { message: m } : m)) },
});
const seqs = (b: { messages: { sequence_number: number }[] }) => b.messages.map((m) => m.sequence_number);
const list = (query: string) => `/api/v1/topics/${topic}/messages?${query}`;
const mirrorId = () => mirrorFormTransactionId(sdkId);

describe("the schema checker", () => {
  test("reports a missing field, a field the document does not name, a wrong type and a bad format", () => {
    const good = { consensus_timestamp: "1.000000001", message: "AA==", payer_account_id: "0.0.2", running_hash: "AA==", running_hash_version: 3, sequence_number: 1, topic_id: "0.0.9" };
    expect(S.check(S.TopicMessage, good)).toEqual([]);
    const { topic_id: _, ...missing } = good;
    expect(S.check(S.TopicMessage, missing)).toEqual(["$.topic_id: missing"]);
    expect(S.check(S.TopicMessage, { ...good, extra: 1 })).toEqual(["$.extra: not in the published document"]);
    expect(S.check(S.TopicMessage, { ...good, sequence_number: "1" })).toEqual(['$.sequence_number: "1" is not an integer']);
    expect(S.check(S.TopicMessage, { ...good, consensus_timestamp: "12345678901.0" })).toHaveLength(1);
    expect(S.check(S.TopicMessage, { ...good, topic_id: null })).toEqual([]); // EntityId is nullable in the document
    expect(S.check(S.TopicMessage, { ...good, message: null })).toEqual(["$.message: null where string is required"]);
  });
});

describe("responses conform to the published document", () => {
  const cases: { name: string; path: () => string; status: number; schema: S.Schema }[] = [
    { name: "GET /topics/{id}", path: () => `/api/v1/topics/${topic}`, status: 200, schema: S.Topic },
    { name: "GET /topics/{id}/messages", path: () => list(""), status: 200, schema: S.TopicMessagesResponse },
    { name: "GET /topics/{id}/messages, a page with a next link", path: () => list("limit=2"), status: 200, schema: S.TopicMessagesResponse },
    { name: "GET /topics/{id}/messages?encoding=utf-8", path: () => list("encoding=utf-8"), status: 200, schema: S.TopicMessagesResponse },
    { name: "GET /topics/{id}/messages/{seq}", path: () => `/api/v1/topics/${topic}/messages/6`, status: 200, schema: S.TopicMessage },
    { name: "GET /topics/messages/{ts}", path: () => `/api/v1/topics/messages/${ts[2]}`, status: 200, schema: S.TopicMessage },
    { name: "GET /transactions/{id}", path: () => `/api/v1/transactions/${mirrorId()}`, status: 200, schema: S.TransactionByIdResponse },
    { name: "GET /accounts/{id}", path: () => "/api/v1/accounts/0.0.2", status: 200, schema: S.AccountBalanceTransactions },
    { name: "GET /network/nodes", path: () => "/api/v1/network/nodes", status: 200, schema: S.NetworkNodesResponse },
    { name: "GET /network/nodes?limit=1 (a next link)", path: () => "/api/v1/network/nodes?limit=1", status: 200, schema: S.NetworkNodesResponse },
    { name: "404 of /topics/{id}", path: () => "/api/v1/topics/0.0.424242", status: 404, schema: S.ErrorBody },
    { name: "400 of /topics/{id}", path: () => "/api/v1/topics/abc", status: 400, schema: S.ErrorBody },
    { name: "400 of /topics/{id}/messages", path: () => list("limit=0&foo=1"), status: 400, schema: S.ErrorBody },
    { name: "404 of /topics/{id}/messages/{seq}", path: () => `/api/v1/topics/${topic}/messages/99`, status: 404, schema: S.ErrorBody },
    { name: "400 of /topics/messages/{ts}", path: () => "/api/v1/topics/messages/x", status: 400, schema: S.ErrorBody },
    { name: "400 of /transactions/{id}", path: () => "/api/v1/transactions/nope", status: 400, schema: S.ErrorBody },
    { name: "404 of /transactions/{id}", path: () => "/api/v1/transactions/0.0.2-1-1", status: 404, schema: S.ErrorBody },
    { name: "404 of /accounts/{id}", path: () => "/api/v1/accounts/0.0.999999", status: 404, schema: S.ErrorBody },
    { name: "400 of /network/nodes", path: () => "/api/v1/network/nodes?file.id=gt:101", status: 400, schema: S.ErrorBody },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const { status, body } = await get(c.path());
      expect(status).toBe(c.status);
      expect(S.check(c.schema, body)).toEqual([]);
    });
  }

  test("a transaction carries batch_key: null (not part of a batch)", async () => {
    const { body } = await get(`/api/v1/transactions/${mirrorId()}`);
    expect(body.transactions[0]).toHaveProperty("batch_key", null);
  });

  test("network/nodes keeps grpc_proxy_endpoint: null, as the real service sends it", async () => {
    const { body } = await get("/api/v1/network/nodes");
    expect(body.nodes[0]).toHaveProperty("grpc_proxy_endpoint", null);
  });
});

describe("query handling as the mirror node's REST module does it", () => {
  test("parameter names are case-insensitive: LIMIT, Order, sequenceNumber", async () => {
    expect(seqs((await get(list("LIMIT=1"))).body)).toEqual([1]);
    expect(seqs((await get(list("Order=desc&limit=2"))).body)).toEqual([6, 5]);
    expect(seqs((await get(list("sequenceNumber=2"))).body)).toEqual([2]);
    expect(seqs((await get(list("SEQUENCENUMBER=gte:5"))).body)).toEqual([5, 6]);
  });

  test("order values are case-insensitive: DESC, Asc", async () => {
    expect(seqs((await get(list("order=DESC&limit=2"))).body)).toEqual([6, 5]);
    expect(seqs((await get(list("order=Asc&limit=2"))).body)).toEqual([1, 2]);
  });

  test("a next link carries the names and order lowercased, as the mirror node rebuilds it", async () => {
    const { body } = await get(list("LIMIT=2&ORDER=DESC"));
    expect(body.links.next).toBe(`/api/v1/topics/${topic}/messages?limit=2&order=desc&timestamp=lt:${ts[5]}`);
  });

  test("the same name in two cases is one repeated parameter", async () => {
    const { status, body } = await get(list("sequencenumber=gt:2&SequenceNumber=lt:5"));
    expect([status, seqs(body)]).toEqual([200, [3, 4]]);
  });

  test("encoding=utf8, utf-8, UTF-8 give the message as UTF-8 text; base64 (any case) and no encoding as base64", async () => {
    for (const e of ["utf8", "utf-8", "UTF-8", "Utf8"]) {
      const { status, body } = await get(list(`encoding=${e}&sequencenumber=6`));
      expect([e, status, body.messages[0].message]).toEqual([e, 200, "héllo ✓ <b>"]);
    }
    const b64 = Buffer.from("héllo ✓ <b>").toString("base64");
    for (const q of ["encoding=base64&", "encoding=BASE64&", ""]) {
      expect([q, (await get(list(`${q}sequencenumber=6`))).body.messages[0].message]).toEqual([q, b64]);
    }
  });

  test("any other encoding, or one with an operator, is 400", async () => {
    for (const e of ["latin1", "utf16", "gt:utf8", "hex"]) {
      const { status, body } = await get(list(`encoding=${e}`));
      expect([e, status, body]).toEqual([e, 400, err("Invalid parameter: encoding")]);
    }
  });

  test("a timestamp with more than 10 digits of seconds is 400, in a filter and in the path", async () => {
    for (const q of ["timestamp=gt:12345678901", "timestamp=12345678901.000000001", "timestamp=lte:00000000001"]) {
      expect([q, ...Object.values(await get(list(q))).slice(0, 2)]).toEqual([q, 400, err("Invalid parameter: timestamp")]);
    }
    const path = await get("/api/v1/topics/messages/12345678901.000000001");
    expect([path.status, path.body]).toEqual([400, err("Invalid parameter: consensus_timestamp")]);
    // 10 digits is the longest accepted.
    expect((await get(list("timestamp=lt:9999999999.999999999"))).status).toBe(200);
  });

  test("a value with two colons is split at the last one, so its operator is unknown: 400", async () => {
    const { status, body } = await get(list("sequencenumber=gt:1:2"));
    expect([status, body]).toEqual([400, err("Invalid parameter: sequencenumber")]);
  });
});

describe("the single-message routes refuse every query parameter", () => {
  const cases = [
    { name: "by number, an unknown one", path: () => `/api/v1/topics/${topic}/messages/1?foo=1`, messages: ["Unknown query parameter: foo"] },
    { name: "by number, even one the list takes", path: () => `/api/v1/topics/${topic}/messages/1?encoding=utf-8`, messages: ["Unknown query parameter: encoding"] },
    { name: "by timestamp, two of them, names lowercased", path: () => `/api/v1/topics/messages/${ts[1]}?LIMIT=1&order=desc`, messages: ["Unknown query parameter: limit", "Unknown query parameter: order"] },
    { name: "before the path is read (a bad sequence number)", path: () => `/api/v1/topics/${topic}/messages/0?x=1`, messages: ["Unknown query parameter: x"] },
    { name: "before the path is read (a bad timestamp)", path: () => "/api/v1/topics/messages/nope?x=1", messages: ["Unknown query parameter: x"] },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const { status, body } = await get(c.path());
      expect([status, body]).toEqual([400, err(...c.messages)]);
    });
  }

  test("without parameters both still answer", async () => {
    expect((await get(`/api/v1/topics/${topic}/messages/1`)).status).toBe(200);
    expect((await get(`/api/v1/topics/messages/${ts[1]}`)).status).toBe(200);
  });
});

describe("paging: links.next", () => {
  test("timestamp=lte:T ascending, the page ending at T: no next link", async () => {
    const { body } = await get(list(`timestamp=lte:${ts[3]}&limit=3`));
    expect([seqs(body), body.links.next]).toEqual([[1, 2, 3], null]);
  });

  test("timestamp=gte:T descending, the page ending at T: no next link", async () => {
    const { body } = await get(list(`order=desc&timestamp=gte:${ts[4]}&limit=3`));
    expect([seqs(body), body.links.next]).toEqual([[6, 5, 4], null]);
  });

  test("timestamp=lte:T with more to come: the bound kept, gt: the page's last beside it, and the next page ends the walk", async () => {
    const first = await get(list(`timestamp=lte:${ts[4]}&limit=3`));
    expect([seqs(first.body), first.body.links.next]).toEqual([[1, 2, 3], `/api/v1/topics/${topic}/messages?timestamp=lte:${ts[4]}&timestamp=gt:${ts[3]}&limit=3`]);
    const second = await get(first.body.links.next);
    expect([seqs(second.body), second.body.links.next]).toEqual([[4], null]);
  });

  test("an lte: bound given in seconds only still ends the walk when the last row is at that second's start", async () => {
    // 1.5 and 1.500000000 are the same instant; the check compares nanoseconds.
    const [s, n] = ts[2]!.split(".") as [string, string];
    const short = `${s}.${n.replace(/0+$/, "") || "0"}`;
    const { body } = await get(list(`timestamp=lte:${short}&limit=2`));
    expect([seqs(body), body.links.next]).toEqual([[1, 2], null]);
  });

  test("repeated timestamps: the paging direction's bound replaced, the new bound added when the first value is a range", async () => {
    const { body } = await get(list(`timestamp=gte:${ts[1]}&timestamp=lte:${ts[6]}&limit=2`));
    expect(body.links.next).toBe(`/api/v1/topics/${topic}/messages?timestamp=lte:${ts[6]}&timestamp=gt:${ts[2]}&limit=2`);
  });

  test("repeated timestamps whose first is a plain value: no new bound (the mirror node tests the list's text)", async () => {
    const { body } = await get(list(`timestamp=${ts[2]}&timestamp=gte:${ts[1]}&limit=1`));
    expect([seqs(body), body.links.next]).toEqual([[2], `/api/v1/topics/${topic}/messages?timestamp=${ts[2]}&limit=1`]);
  });
});

describe("GET /api/v1/topics/{id}: the rest-java service's error bodies", () => {
  test("an unknown topic is 404 Not Found with the detail Topic not found", async () => {
    for (const id of ["0.0.424242", "424242", "1.2.3"]) {
      const { status, body } = await get(`/api/v1/topics/${id}`);
      expect([id, status, body]).toEqual([id, 404, err({ message: "Not Found", detail: "Topic not found" })]);
    }
  });

  test("a malformed id is 400 Bad Request with the detail Failed to convert 'id'", async () => {
    for (const id of ["abc", "0.0.-1", "0.0.1234567890123", "0.0.1.2"]) {
      const { status, body } = await get(`/api/v1/topics/${encodeURIComponent(id)}`);
      expect([id, status, body]).toEqual([id, 400, err({ message: "Bad Request", detail: "Failed to convert 'id'" })]);
    }
  });

  test("an id in any of the mirror node's forms: shard.realm.num, realm.num, num", async () => {
    const num = topic.split(".")[2]!;
    for (const id of [topic, `0.${num}`, num]) {
      const one = await get(`/api/v1/topics/${id}`);
      const page = await get(`/api/v1/topics/${id}/messages?limit=1`);
      const message = await get(`/api/v1/topics/${id}/messages/1`);
      expect([id, one.status, one.body.topic_id, page.status, seqs(page.body), message.status, message.body.topic_id]).toEqual([id, 200, topic, 200, [1], 200, topic]);
    }
    // Another realm is well formed and names nothing here.
    expect((await get(`/api/v1/topics/1.${num}`)).status).toBe(404);
    expect(seqs((await get(`/api/v1/topics/1.${num}/messages`)).body)).toEqual([]);
  });

  test("query parameters are ignored there, as by the rest-java service", async () => {
    const { status, body } = await get(`/api/v1/topics/${topic}?foo=1`);
    expect([status, body.topic_id]).toEqual([200, topic]);
  });
});

describe("GET /api/v1/network/nodes: limit, node.id, file.id, order", () => {
  const nodes = async (q: string) => {
    const { status, body } = await get(`/api/v1/network/nodes${q ? `?${q}` : ""}`);
    return { status, body, ids: status === 200 ? (body.nodes as { node_id: number; file_id: string }[]).map((n) => n.node_id) : null };
  };

  test("no parameter: the node, from address book 0.0.102, no next link", async () => {
    const { status, body } = await nodes("");
    expect([status, body.nodes.map((n: any) => [n.node_id, n.file_id, n.node_account_id]), body.links.next]).toEqual([200, [[0, "0.0.102", "0.0.3"]], null]);
  });

  test("limit=1 fills the page: a next link by node.id, whose page is empty and ends the walk", async () => {
    const first = await nodes("limit=1");
    expect([first.ids, first.body.links.next]).toEqual([[0], "/api/v1/network/nodes?limit=1&node.id=gt:0"]);
    const second = await get(first.body.links.next);
    expect([second.status, second.body]).toEqual([200, { nodes: [], links: { next: null } }]);
  });

  test("limit above 25 is used as 25; blank is the default", async () => {
    expect((await nodes("limit=500")).ids).toEqual([0]);
    expect((await nodes("limit=")).ids).toEqual([0]);
  });

  const filters: [string, number[]][] = [
    ["node.id=0", [0]],
    ["node.id=eq:0", [0]],
    ["node.id=0.0.0", [0]],
    ["node.id=gt:0", []],
    ["node.id=gte:0", [0]],
    ["node.id=lte:0", [0]],
    ["node.id=lt:0", []],
    ["node.id=3", []],
    ["node.id=gte:0&node.id=lt:5", [0]],
    ["file.id=0.0.101", [0]],
    ["file.id=102", [0]],
    ["file.id=0.0.150", []],
    ["order=DESC", [0]],
    ["order=asc", [0]],
  ];
  for (const [q, ids] of filters) {
    test(`${q} → ${JSON.stringify(ids)}`, async () => {
      expect((await nodes(q)).ids).toEqual(ids);
    });
  }

  test("file.id names the address book the node is listed from", async () => {
    expect((await nodes("file.id=0.0.101")).body.nodes[0].file_id).toBe("0.0.101");
  });

  const refusals: [string, ReturnType<typeof err>][] = [
    ["limit=0", err("Invalid parameter: limit")],
    ["limit=abc", err("Invalid parameter: limit")],
    ["limit=-1", err("Invalid parameter: limit")],
    ["node.id=abc", err("Invalid parameter: node.id")],
    ["node.id=ne:0", err("Invalid parameter: node.id")],
    ["file.id=x", err("Invalid parameter: file.id")],
    ["order=sideways", err("Invalid parameter: order")],
    ["foo=1", err("Unknown query parameter: foo")],
    // rest-java reads names as written: no lowercasing on this route.
    ["LIMIT=1", err("Unknown query parameter: LIMIT")],
    ["limit=0&foo=1", err("Invalid parameter: limit", "Unknown query parameter: foo")],
    ["file.id=gt:0.0.101", err({ message: "Bad Request", detail: "Only equality operator is supported for file.id" })],
    ["limit=1&limit=2", err({ message: "Bad Request", detail: "Only a single instance is supported for limit" })],
  ];
  for (const [q, body] of refusals) {
    test(`${q} → 400`, async () => {
      const got = await nodes(q);
      expect([got.status, got.body]).toEqual([400, body]);
    });
  }

  test("discoverNodes (serve's ledger setup) still finds the node", async () => {
    expect(await discoverNodes(base)).toEqual({ [env.ledger.grpcAddress]: "0.0.3" });
  });
});

describe("headers", () => {
  const cases: [string, () => string, string | null][] = [
    ["one topic: max-age=5", () => `/api/v1/topics/${topic}`, "public, max-age=5"],
    ["a message page", () => list("limit=1"), "public, max-age=1"],
    ["one message by number", () => `/api/v1/topics/${topic}/messages/1`, "public, max-age=1"],
    ["one message by timestamp", () => `/api/v1/topics/messages/${ts[1]}`, "public, max-age=1"],
    ["a transaction", () => `/api/v1/transactions/${mirrorId()}`, "public, max-age=1"],
    ["an account", () => "/api/v1/accounts/0.0.2", "public, max-age=1"],
    ["network/nodes", () => "/api/v1/network/nodes", "public, max-age=1"],
    ["a 404", () => "/api/v1/topics/0.0.424242", null],
    ["a 400", () => list("limit=0"), null],
    ["the HTML transaction page", () => `/transaction/${mirrorId()}`, null],
  ];
  for (const [name, path, cache] of cases) {
    test(`${name}: cache-control ${cache ?? "absent"}, Access-Control-Allow-Origin *`, async () => {
      const { headers } = await get(path());
      expect([headers.get("cache-control"), headers.get("access-control-allow-origin")]).toEqual([cache, "*"]);
    });
  }
});

describe("the links the service hands out answer on their target", () => {
  test("a local record's hashscanUrl uses the mirror form and answers 200 with the transaction's page", async () => {
    const url = localLinks(base).transactionUrl(sdkId);
    expect(url).toBe(`${base}/transaction/${mirrorId()}`);
    expect(mirrorId()).toMatch(/^0\.0\.\d+-\d+-\d{9}$/);
    const { status, body } = await get(url);
    expect(status).toBe(200);
    expect(body).toContain(mirrorId());
  });

  test("a record's mirrorNodeUrl answers 200 with the message", async () => {
    const url = localLinks(`${base}/`).topicMessageUrl(topic, 3);
    const { status, body } = await get(url);
    expect([status, body.sequence_number, body.topic_id]).toEqual([200, 3, topic]);
  });

  test("on a public network the hashscanUrl is HashScan's transaction page in the mirror form", () => {
    expect(publicLinks("testnet").transactionUrl("0.0.2@1795507107.624000000")).toBe("https://hashscan.io/testnet/transaction/0.0.2-1795507107-624000000");
    expect(publicLinks("mainnet").transactionUrl("0.0.1234@1795507107.5")).toBe("https://hashscan.io/mainnet/transaction/0.0.1234-1795507107-000000005");
    expect(publicLinks("testnet").topicMessageUrl("0.0.7", 2)).toBe("https://testnet.mirrornode.hedera.com/api/v1/topics/0.0.7/messages/2");
  });

  test("the SDK form is refused by the mirror's REST (400), the mirror form found: hence the conversion", async () => {
    expect((await get(`/api/v1/transactions/${sdkId}`)).status).toBe(400);
    expect((await get(`/api/v1/transactions/${mirrorId()}`)).status).toBe(200);
  });

  test("the anchor loop's mirror client finds the transaction and confirms the message on the stricter mirror", async () => {
    const client = createMirrorClient({ mirrorUrl: base, timeoutMs: 5000 });
    const found = await client.lookupTransaction(sdkId);
    expect(found).toMatchObject({ kind: "found", value: { result: "SUCCESS", consensusAt: ts[1] } });
    const confirmed = await client.confirmMessage({ topicId: topic, sequenceNumber: 1, transactionId: sdkId, message: new TextEncoder().encode("m1") });
    expect(confirmed).toMatchObject({ kind: "confirmed", value: { sequenceNumber: 1, consensusAt: ts[1] } });
  });
});
