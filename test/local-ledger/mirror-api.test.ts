/**
 * What the receipt verifier reads from a mirror node (docs/receipts.md §3), on the local ledger's
 * mirror, as the public mirror node answers it: CORS on every answer and the OPTIONS preflight,
 * the revocation scan (`timestamp=gt:` pages, `links.next` built as hiero-mirror-node's
 * `getPaginationLink` builds it), `sequencenumber` with each operator, and the topic's
 * `submit_key`. Table-driven: request → status and content.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PrivateKey, TopicCreateTransaction } from "@hashgraph/sdk";
import { startLedgerWithMessages, type LedgerWithMessages } from "./ledger-with-messages.ts";

let env: LedgerWithMessages;
let ts: readonly string[];
let topic: string;

beforeAll(async () => {
  env = await startLedgerWithMessages(["m1", "m2", "m3", "m4", "m5", "m6", "m7"], { secondMirrorPort: 0 });
  ts = env.timestamps;
  topic = env.topicId;
}, 30_000);

afterAll(() => env.close());

interface Page {
  messages: { sequence_number: number; consensus_timestamp: string; message: string }[];
  links: { next: string | null };
}
const get = async (path: string, base = env.ledger.mirrorUrl) => {
  const res = await fetch(base + path);
  return { status: res.status, body: (await res.json()) as Page };
};
const seqs = (p: Page) => p.messages.map((m) => m.sequence_number);
const list = (query: string) => `/api/v1/topics/${topic}/messages?${query}`;

/** Follows `links.next` from `path` to the end; the pages' sequence numbers and the links seen. */
async function scan(path: string, base = env.ledger.mirrorUrl): Promise<{ pages: number[][]; links: (string | null)[] }> {
  const pages: number[][] = [];
  const links: (string | null)[] = [];
  for (let next: string | null = path; next !== null; ) {
    const { status, body } = await get(next, base);
    expect(status).toBe(200);
    pages.push(seqs(body));
    links.push(body.links.next);
    next = body.links.next;
    if (pages.length > 20) throw new Error("links.next does not end");
  }
  return { pages, links };
}

describe("CORS", () => {
  const paths = () => [
    { path: `/api/v1/topics/${topic}`, status: 200 },
    { path: `/api/v1/topics/${topic}/messages/1`, status: 200 },
    { path: list(`timestamp=gt:${ts[1]}&limit=100&order=asc`), status: 200 },
    { path: `/api/v1/topics/${topic}/messages/999`, status: 404 },
    { path: list("limit=-1"), status: 400 },
    { path: "/nowhere", status: 404 },
  ];
  test("every answer, on both listeners, carries Access-Control-Allow-Origin: *", async () => {
    for (const base of env.ledger.mirrorUrls) {
      for (const { path, status } of paths()) {
        const res = await fetch(base + path, { headers: { origin: "null" } });
        await res.body?.cancel();
        expect({ path, status: res.status, allow: res.headers.get("access-control-allow-origin") }).toEqual({ path, status, allow: "*" });
      }
    }
    const head = await fetch(env.ledger.mirrorUrl + paths()[0]!.path, { method: "HEAD" });
    expect([head.status, head.headers.get("access-control-allow-origin")]).toEqual([200, "*"]);
  });

  test("an OPTIONS preflight, on any path, is 204 allowing GET and HEAD and the asked headers", async () => {
    for (const path of [list("limit=100"), "/api/v1/topics/0.0.1", "/anything"]) {
      const res = await fetch(env.ledger.mirrorUrls[1] + path, {
        method: "OPTIONS",
        headers: { origin: "https://example.org", "access-control-request-method": "GET", "access-control-request-headers": "accept, x-requested-with" },
      });
      expect({
        status: res.status,
        body: await res.text(),
        origin: res.headers.get("access-control-allow-origin"),
        methods: res.headers.get("access-control-allow-methods"),
        headers: res.headers.get("access-control-allow-headers"),
        vary: res.headers.get("vary"),
      }).toEqual({ status: 204, body: "", origin: "*", methods: "GET,HEAD", headers: "accept, x-requested-with", vary: "Access-Control-Request-Headers" });
    }
    const bare = await fetch(env.ledger.mirrorUrl + "/api/v1/topics/" + topic, { method: "OPTIONS" });
    expect([bare.status, bare.headers.get("access-control-allow-origin"), bare.headers.get("access-control-allow-headers")]).toEqual([204, "*", null]);
  });

  test("a method the mirror does not serve is still 404, with CORS", async () => {
    const res = await fetch(env.ledger.mirrorUrl + `/api/v1/topics/${topic}`, { method: "POST", body: "{}" });
    expect([res.status, res.headers.get("access-control-allow-origin"), await res.json()]).toEqual([404, "*", { _status: { messages: [{ message: "Not found" }] } }]);
  });
});

describe("the revocation scan: timestamp=gt:, limit, order=asc and links.next", () => {
  test("the verifier's request: everything after the record's message, on one page when it fits", async () => {
    const { status, body } = await get(list(`timestamp=gt:${ts[2]}&limit=100&order=asc`));
    expect([status, seqs(body), body.links.next]).toEqual([200, [3, 4, 5, 6, 7], null]);
  });

  test("paged: each next link is the request's parameters with timestamp=gt:<page's last> moved to the end, until a page is not full", async () => {
    const { pages, links } = await scan(list(`timestamp=gt:${ts[1]}&limit=2&order=asc`));
    expect(pages).toEqual([[2, 3], [4, 5], [6, 7], []]);
    expect(links).toEqual([list(`limit=2&order=asc&timestamp=gt:${ts[3]}`), list(`limit=2&order=asc&timestamp=gt:${ts[5]}`), list(`limit=2&order=asc&timestamp=gt:${ts[7]}`), null]);
  });

  test("the same scan on the second listener gives the same pages and links", async () => {
    const path = list(`timestamp=gt:${ts[1]}&limit=2&order=asc`);
    expect(await scan(path, env.ledger.mirrorUrls[1])).toEqual(await scan(path));
  });

  test("a page that is not full ends the scan without an empty page", async () => {
    const { pages, links } = await scan(list(`timestamp=gt:${ts[2]}&limit=2&order=asc`));
    expect(pages).toEqual([[3, 4], [5, 6], [7]]);
    expect(links.at(-1)).toBeNull();
  });

  test("a message that reaches consensus during the scan is found by the next page", async () => {
    const first = await get(list(`timestamp=gt:${ts[5]}&limit=2&order=asc`));
    expect(seqs(first.body)).toEqual([6, 7]);
    const { sequenceNumber } = await env.submit("m8");
    expect(sequenceNumber).toBe(8);
    const second = await get(first.body.links.next!);
    expect([seqs(second.body), second.body.links.next]).toEqual([[8], null]);
  });

  const cases: { name: string; query: () => string; seqs: number[] | (() => number[]); next: () => string | null }[] = [
    { name: "gt with nine digits of nanoseconds excludes exactly that message", query: () => `timestamp=gt:${ts[3]}&sequencenumber=lte:5`, seqs: [4, 5], next: () => null },
    { name: "gte includes it", query: () => `timestamp=gte:${ts[3]}&sequencenumber=lte:5`, seqs: [3, 4, 5], next: () => null },
    // Message 1 is in the answer unless its consensus time is that whole second to the nanosecond
    // (the local ledger's times are whole milliseconds: one time in a thousand).
    { name: "a timestamp in whole seconds", query: () => `timestamp=gt:${ts[1]!.split(".")[0]}&sequencenumber=lte:2`, seqs: () => (ts[1]!.endsWith(".000000000") ? [2] : [1, 2]), next: () => null },
    {
      name: "a range given twice keeps its place, the new bound appended",
      query: () => `timestamp=gt:${ts[1]}&timestamp=lte:${ts[5]}&limit=2`,
      seqs: [2, 3],
      next: () => list(`timestamp=lte:${ts[5]}&timestamp=gt:${ts[3]}&limit=2`),
    },
    { name: "no next link when the range left is empty", query: () => `timestamp=gt:${ts[1]}&timestamp=lte:${ts[3]}&limit=2`, seqs: [2, 3], next: () => null },
    { name: "an upper bound given once, ascending: kept, the lower bound added beside it", query: () => `timestamp=lt:${ts[5]}&limit=2`, seqs: [1, 2], next: () => list(`timestamp=lt:${ts[5]}&timestamp=gt:${ts[2]}&limit=2`) },
    { name: "descending pages by lt", query: () => `order=desc&limit=2&timestamp=lt:${ts[7]}`, seqs: [6, 5], next: () => list(`order=desc&limit=2&timestamp=lt:${ts[5]}`) },
    { name: "an equality timestamp keeps its link as it was, as the mirror node's does", query: () => `timestamp=${ts[3]}&limit=1`, seqs: [3], next: () => list(`timestamp=${ts[3]}&limit=1`) },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const { status, body } = await get(list(c.query()));
      expect([status, seqs(body), body.links.next]).toEqual([200, typeof c.seqs === "function" ? c.seqs() : c.seqs, c.next()]);
    });
  }

  test("bad timestamps are 400 with the mirror node's message", async () => {
    for (const bad of ["gt:abc", "gt:1.1234567890", "xx:1", "gt:"]) {
      const res = await fetch(env.ledger.mirrorUrl + list(`timestamp=${bad}`));
      expect([bad, res.status, await res.json()]).toEqual([bad, 400, { _status: { messages: [{ message: "Invalid parameter: timestamp" }] } }]);
    }
  });
});

describe("sequencenumber", () => {
  const cases: { op: string; seqs: number[] }[] = [
    { op: "4", seqs: [4] },
    { op: "eq:4", seqs: [4] },
    { op: "gt:4", seqs: [5, 6, 7] },
    { op: "gte:4", seqs: [4, 5, 6, 7] },
    { op: "lt:4", seqs: [1, 2, 3] },
    { op: "lte:4", seqs: [1, 2, 3, 4] },
  ];
  for (const c of cases) {
    test(`sequencenumber=${c.op}`, async () => {
      const { status, body } = await get(list(`sequencenumber=${c.op}&sequencenumber=lte:7`));
      expect([status, seqs(body)]).toEqual([200, c.seqs]);
    });
  }

  test("sequencenumber=gt:N pages by timestamp, keeping the sequence number filter", async () => {
    const { pages, links } = await scan(list("sequencenumber=gt:2&sequencenumber=lte:7&limit=2"));
    expect(pages).toEqual([[3, 4], [5, 6], [7]]);
    expect(links).toEqual([list(`sequencenumber=gt:2&sequencenumber=lte:7&limit=2&timestamp=gt:${ts[4]}`), list(`sequencenumber=gt:2&sequencenumber=lte:7&limit=2&timestamp=gt:${ts[6]}`), null]);
  });

  test("zero, negative or not a number is 400", async () => {
    for (const bad of ["gt:0", "0", "gt:-1", "gt:x", "zz:3"]) {
      const res = await fetch(env.ledger.mirrorUrl + list(`sequencenumber=${bad}`));
      expect([bad, res.status, await res.json()]).toEqual([bad, 400, { _status: { messages: [{ message: "Invalid parameter: sequencenumber" }] } }]);
    }
  });
});

describe("GET /api/v1/topics/{id}", () => {
  test("carries submit_key as the mirror node writes it: {_type, key} with the raw key in hex", async () => {
    const res = await fetch(`${env.ledger.mirrorUrl}/api/v1/topics/${topic}`);
    const body = (await res.json()) as Record<string, unknown>;
    expect(res.status).toBe(200);
    expect(body.topic_id).toBe(topic);
    expect(body.submit_key).toEqual({ _type: "ED25519", key: env.submitKey.publicKey.toStringRaw() });
    expect(body.admin_key).toBeNull();
  });

  test("a topic without a submit key shows null (anyone may write to it)", async () => {
    const open = (await (await new TopicCreateTransaction().execute(env.client)).getReceipt(env.client)).topicId!.toString();
    const body = (await (await fetch(`${env.ledger.mirrorUrl}/api/v1/topics/${open}`)).json()) as Record<string, unknown>;
    expect(body.submit_key).toBeNull();
  });

  test("an ECDSA submit key shows as ECDSA_SECP256K1 with the compressed key", async () => {
    const key = PrivateKey.generateECDSA();
    const id = (await (await new TopicCreateTransaction().setSubmitKey(key.publicKey).execute(env.client)).getReceipt(env.client)).topicId!.toString();
    const body = (await (await fetch(`${env.ledger.mirrorUrl}/api/v1/topics/${id}`)).json()) as Record<string, unknown>;
    expect(body.submit_key).toEqual({ _type: "ECDSA_SECP256K1", key: key.publicKey.toStringRaw() });
  });

  test("an unknown topic is 404; a malformed id 400", async () => {
    expect((await fetch(`${env.ledger.mirrorUrl}/api/v1/topics/0.0.999999`)).status).toBe(404);
    expect((await fetch(`${env.ledger.mirrorUrl}/api/v1/topics/not-a-topic`)).status).toBe(400);
  });
});
