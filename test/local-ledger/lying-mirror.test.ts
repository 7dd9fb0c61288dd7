/**
 * The lying-mirror fixture (test/support/lying-mirror.ts) against a local ledger with real
 * messages: each lie is observable, exactly where it says and nowhere else, and the honest proxy
 * answers as the mirror itself does.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startLyingMirror, type LyingMirror } from "../support/lying-mirror.ts";
import { nextLoopback } from "../support/loopback.ts";
import { startLedgerWithMessages, type LedgerWithMessages } from "./ledger-with-messages.ts";

const RECORD = "0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d";
const MESSAGES = [
  '{"v":1,"type":"key","orgId":"x"}',
  '{"v":1,"type":"record","recordId":"0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d"}',
  '{"v":1,"type":"revocation","recordId":"0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d","reason":"SUPERSEDED","revokedAt":"2026-01-16T09:30:00.123Z"}',
  "four",
  "five",
];

interface Message {
  sequence_number: number;
  consensus_timestamp: string;
  message: string;
  running_hash: string;
  topic_id: string;
  [k: string]: unknown;
}
interface Page {
  messages: Message[];
  links: { next: string | null };
}

let env: LedgerWithMessages;
let liar: LyingMirror;
let topic: string;

beforeAll(async () => {
  env = await startLedgerWithMessages(MESSAGES);
  topic = env.topicId;
  liar = await startLyingMirror({ upstream: env.ledger.mirrorUrl, lie: { kind: "none" } });
}, 30_000);

afterAll(async () => {
  await liar.close();
  await env.close();
});

const read = async (base: string, path: string) => {
  const res = await fetch(base + path);
  return { status: res.status, body: (await res.json()) as any };
};
const truth = (path: string) => read(env.ledger.mirrorUrl, path);
const lie = (path: string) => read(liar.url, path);
const list = (q: string) => `/api/v1/topics/${topic}/messages?${q}`;
const byNumber = (n: number) => `/api/v1/topics/${topic}/messages/${n}`;
const byTime = (t: string) => `/api/v1/topics/messages/${t}`;
const ns = (t: string) => {
  const [s, n] = t.split(".") as [string, string];
  return BigInt(s) * 1_000_000_000n + BigInt(n);
};
/** Every page of a scan, concatenated, following links.next on `base`. */
async function scan(base: string, path: string): Promise<Message[]> {
  const all: Message[] = [];
  for (let next: string | null = path, n = 0; next !== null; n++) {
    if (n > 20) throw new Error("links.next does not end");
    const { status, body } = await read(base, next);
    expect(status).toBe(200);
    all.push(...(body as Page).messages);
    next = (body as Page).links.next;
  }
  return all;
}
const differingBytes = (a: string, b: string) => {
  const x = Buffer.from(a, "base64");
  const y = Buffer.from(b, "base64");
  if (x.length !== y.length) return -1;
  return x.reduce((n, v, i) => n + (v !== y[i] ? 1 : 0), 0);
};

const PATHS = () => [
  `/api/v1/topics/${topic}`,
  byNumber(2),
  byTime(env.timestamps[3]!),
  list("limit=2"),
  list(`timestamp=gt:${env.timestamps[1]}&limit=100&order=asc`),
  list("order=desc&limit=2"),
  byNumber(99),
  list("limit=zero"),
  "/api/v1/accounts/0.0.2",
];

describe("kind none: an honest proxy", () => {
  test("every answer is the mirror's own, status and body", async () => {
    await liar.setLie({ kind: "none" });
    for (const path of PATHS()) expect({ path, ...(await lie(path)) }).toEqual({ path, ...(await truth(path)) });
    expect(liar.requests()).toContain(byNumber(2));
  });

  test("links.next is relative, so a scan through the proxy stays on the proxy and sees the same messages", async () => {
    const path = list(`timestamp=gt:${env.timestamps[1]}&limit=2&order=asc`);
    const before = liar.requests().length;
    expect(await scan(liar.url, path)).toEqual(await scan(env.ledger.mirrorUrl, path));
    expect(liar.requests().length - before).toBe(3); // [2,3], [4,5], []
  });
});

describe("kind message-bytes", () => {
  beforeAll(() => liar.setLie({ kind: "message-bytes", sequenceNumber: 2 }));

  test("message 2 differs from the ledger's by exactly one byte, by number and by timestamp; nothing else changes", async () => {
    for (const path of [byNumber(2), byTime(env.timestamps[2]!)]) {
      const [t, l] = [await truth(path), await lie(path)];
      expect(l.status).toBe(200);
      expect(differingBytes(t.body.message, l.body.message)).toBe(1);
      expect({ ...l.body, message: t.body.message }).toEqual(t.body);
    }
    expect(await lie(byNumber(3))).toEqual(await truth(byNumber(3)));
  });

  test("in list answers too (base64 and utf-8), and only message 2", async () => {
    const [t, l] = [await truth(list("limit=100")), await lie(list("limit=100"))];
    const changed = (l.body as Page).messages.filter((m, i) => m.message !== (t.body as Page).messages[i]!.message);
    expect(changed.map((m) => m.sequence_number)).toEqual([2]);
    expect(differingBytes(changed[0]!.message, (t.body as Page).messages[1]!.message)).toBe(1);
    const utf8 = (await lie(list("encoding=utf-8&sequencenumber=2"))).body as Page;
    expect(utf8.messages[0]!.message).not.toBe(MESSAGES[1]);
    expect(utf8.messages[0]!.message).toHaveLength(MESSAGES[1]!.length);
  });

  test("scoped to a topic: another topic's message 2 is left alone", async () => {
    await liar.setLie({ kind: "message-bytes", sequenceNumber: 2, topicId: "0.0.1" });
    expect(await lie(byNumber(2))).toEqual(await truth(byNumber(2)));
    await liar.setLie({ kind: "message-bytes", sequenceNumber: 2, topicId: topic.split(".")[2]! });
    expect(differingBytes((await lie(byNumber(2))).body.message, (await truth(byNumber(2))).body.message)).toBe(1);
  });
});

describe("kind consensus-time", () => {
  beforeAll(() => liar.setLie({ kind: "consensus-time", sequenceNumber: 2 }));

  test("message 2's consensus timestamp is 1 ns later, by number and in lists; the rest is the ledger's", async () => {
    const [t, l] = [await truth(byNumber(2)), await lie(byNumber(2))];
    expect(ns(l.body.consensus_timestamp) - ns(t.body.consensus_timestamp)).toBe(1n);
    expect(l.body.consensus_timestamp).toMatch(/^\d+\.\d{9}$/);
    expect({ ...l.body, consensus_timestamp: t.body.consensus_timestamp }).toEqual(t.body);
    const page = (await lie(list("limit=100"))).body as Page;
    const honest = (await truth(list("limit=100"))).body as Page;
    expect(page.messages.map((m) => m.consensus_timestamp)).toEqual(honest.messages.map((m) => (m.sequence_number === 2 ? l.body.consensus_timestamp : m.consensus_timestamp)));
  });
});

describe("kind hide", () => {
  beforeAll(() => liar.setLie({ kind: "hide", sequenceNumber: 3 }));

  test("the revocation (message 3) is 404 by number and by timestamp, as the mirror says Not found", async () => {
    for (const path of [byNumber(3), byTime(env.timestamps[3]!)]) {
      expect(await lie(path)).toEqual({ status: 404, body: { _status: { messages: [{ message: "Not found" }] } } });
    }
    expect((await truth(byNumber(3))).status).toBe(200);
  });

  test("and missing from a scan, paged or not; the other messages are there", async () => {
    for (const limit of [2, 100]) {
      const seen = await scan(liar.url, list(`timestamp=gt:${env.timestamps[1]}&limit=${limit}&order=asc`));
      expect(seen.map((m) => m.sequence_number)).toEqual([2, 4, 5]);
    }
  });
});

describe("kind invent-revocation", () => {
  const revokedAt = "2026-11-24T12:00:00.000Z";
  beforeAll(() => liar.setLie({ kind: "invent-revocation", recordId: RECORD, topicId: topic, revokedAt }));

  test("a well-formed revocation of the record ends the topic's scan, once, paged or not", async () => {
    const honestLast = ((await truth(list("order=desc&limit=1"))).body as Page).messages[0]!;
    for (const limit of [2, 3, 100]) {
      const seen = await scan(liar.url, list(`timestamp=gt:${env.timestamps[1]}&limit=${limit}&order=asc`));
      expect(seen.map((m) => m.sequence_number)).toEqual([2, 3, 4, 5, 6]);
      const invented = seen.at(-1)!;
      expect(Buffer.from(invented.message, "base64").toString()).toBe(`{"v":1,"type":"revocation","recordId":"${RECORD}","reason":"KEY_COMPROMISE","revokedAt":"${revokedAt}"}`);
      expect(ns(invented.consensus_timestamp)).toBe(ns(honestLast.consensus_timestamp) + 1n);
      expect(invented.topic_id).toBe(topic);
      expect(Buffer.from(invented.running_hash, "base64")).toHaveLength(48);
      expect(invented).toMatchObject({ chunk_info: null, payer_account_id: "0.0.2", running_hash_version: 3 });
    }
  });

  test("it answers by number and by timestamp, newest first in descending order, and not where the filters exclude it", async () => {
    const invented = ((await lie(byNumber(6))).body as Message);
    expect(invented.sequence_number).toBe(6);
    expect((await truth(byNumber(6))).status).toBe(404);
    expect((await lie(byTime(invented.consensus_timestamp))).body).toEqual(invented);
    const desc = (await lie(list("order=desc&limit=2"))).body as Page;
    expect(desc.messages.map((m) => m.sequence_number)).toEqual([6, 5]);
    expect((await scan(liar.url, list("order=desc&limit=2"))).map((m) => m.sequence_number)).toEqual([6, 5, 4, 3, 2, 1]);
    expect(((await lie(list("sequencenumber=lte:5"))).body as Page).messages.map((m) => m.sequence_number)).toEqual([1, 2, 3, 4, 5]);
    expect(((await lie(list(`timestamp=lt:${invented.consensus_timestamp}`))).body as Page).messages).toHaveLength(5);
  });

  test("another topic is left alone", async () => {
    expect(await lie("/api/v1/topics/0.0.999999/messages")).toEqual({ status: 200, body: { messages: [], links: { next: null } } });
  });

  test("the default reason is KEY_COMPROMISE and revokedAt an RFC 3339 time", async () => {
    await liar.setLie({ kind: "invent-revocation", recordId: RECORD, topicId: topic });
    const m = JSON.parse(Buffer.from(((await lie(byNumber(6))).body as Message).message, "base64").toString()) as Record<string, unknown>;
    expect(Object.keys(m)).toEqual(["v", "type", "recordId", "reason", "revokedAt"]);
    expect(m.reason).toBe("KEY_COMPROMISE");
    expect(String(m.revokedAt)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });
});

describe("its address", () => {
  test("127.0.0.1 unless given one; on a loopback address of its own it answers there (and there only), also after being down", async () => {
    expect(new URL(liar.url).hostname).toBe("127.0.0.1");
    const address = nextLoopback();
    const own = await startLyingMirror({ upstream: env.ledger.mirrorUrl, hostname: address });
    try {
      const url = new URL(own.url);
      expect(url.hostname).toBe(address);
      expect(await read(own.url, byNumber(1))).toEqual(await truth(byNumber(1)));
      await expect(fetch(`http://127.0.0.1:${url.port}${byNumber(1)}`)).rejects.toThrow();
      await own.setLie({ kind: "down" });
      await expect(fetch(own.url + byNumber(1))).rejects.toThrow();
      await own.setLie({ kind: "none" });
      expect(await read(own.url, byNumber(1))).toEqual(await truth(byNumber(1)));
    } finally {
      await own.close();
    }
  });
});

describe("kind down", () => {
  test("refused: the connection is refused, then the proxy answers again on the same URL", async () => {
    await liar.setLie({ kind: "down" });
    await expect(fetch(liar.url + byNumber(1))).rejects.toThrow();
    await liar.setLie({ kind: "none" });
    expect(await lie(byNumber(1))).toEqual(await truth(byNumber(1)));
  });

  test("503: every request answers 503", async () => {
    await liar.setLie({ kind: "down", mode: "503" });
    for (const path of [byNumber(1), list("limit=1"), `/api/v1/topics/${topic}`]) expect((await fetch(liar.url + path)).status).toBe(503);
    await liar.setLie({ kind: "none" });
    expect((await fetch(liar.url + byNumber(1))).status).toBe(200);
  });

  test("after close() it refuses connections and takes no more lies", async () => {
    const other = await startLyingMirror({ upstream: env.ledger.mirrorUrl });
    expect((await fetch(other.url + byNumber(1))).status).toBe(200);
    await other.close();
    await expect(fetch(other.url + byNumber(1))).rejects.toThrow();
    await expect(other.setLie({ kind: "none" })).rejects.toThrow(/closed/);
  });
});
