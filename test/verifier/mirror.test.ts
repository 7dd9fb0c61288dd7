/**
 * The mirror-node reader over an injected fetch: the three kinds of answer (found, not found,
 * failed) for each request, and the scan's paging and its guards; every request asks for JSON,
 * follows no redirect off the mirror's origin, and is pinned to the addresses its host was counted by.
 */
import { describe, expect, test } from "bun:test";
import { mirrorReader, type FetchFn, type FetchInit } from "../../src/verifier/mirror.ts";

const BASE = "https://mirror.example.org/prefix";
const TOPIC = "0.0.42";
const message = (n: number, over: Record<string, unknown> = {}) => ({
  chunk_info: null,
  consensus_timestamp: `17000000${String(n).padStart(2, "0")}.000000001`,
  message: Buffer.from(`m${n}`).toString("base64"),
  payer_account_id: "0.0.2",
  running_hash: Buffer.alloc(48, n).toString("base64"),
  running_hash_version: 3,
  sequence_number: n,
  topic_id: TOPIC,
  ...over,
});

/** A fetch answering `answer(url)`; every URL asked is recorded. */
function fake(answer: (url: string) => Response | Promise<Response>): { fetch: FetchFn; asked: string[] } {
  const asked: string[] = [];
  return { asked, fetch: async (url) => (asked.push(url), answer(url)) };
}
const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status });
const NOT_FOUND = () => json({ _status: { messages: [{ message: "Not found" }] } }, 404);

describe("one message", () => {
  test("found: decoded, from the base URL's path", async () => {
    const f = fake(() => json(message(7)));
    const a = await mirrorReader(BASE + "/", { fetch: f.fetch }).message(TOPIC, 7);
    expect(a.kind).toBe("found");
    if (a.kind !== "found") return;
    expect(new TextDecoder().decode(a.value.message)).toBe("m7");
    expect(a.value.runningHash.length).toBe(48);
    expect(f.asked).toEqual([`${BASE}/api/v1/topics/0.0.42/messages/7`]);
  });

  test("not found only with the API's 404 body", async () => {
    expect((await mirrorReader(BASE, { fetch: fake(NOT_FOUND).fetch }).message(TOPIC, 7)).kind).toBe("not_found");
    const plain = await mirrorReader(BASE, { fetch: fake(() => new Response("{}", { status: 404 })).fetch }).message(TOPIC, 7);
    expect(plain).toEqual({ kind: "failed", reason: "HTTP 404 without the mirror API's error body" });
  });

  const failures: [string, () => Response | Promise<Response>, string][] = [
    ["a network error", () => Promise.reject(new TypeError("fetch failed")), "unreachable (fetch failed)"],
    ["HTTP 503", () => json({ _status: { messages: [] } }, 503), "HTTP 503"],
    ["a body that is not JSON", () => new Response("<html>", { status: 200 }), "HTTP 200 with a body that is not JSON"],
    ["another message", () => json(message(8)), "asked for 0.0.42 #7, answered with 0.0.42 #8"],
    ["another topic", () => json(message(7, { topic_id: "0.0.43" })), "asked for 0.0.42 #7, answered with 0.0.43 #7"],
    ["a consensus time in another format", () => json(message(7, { consensus_timestamp: "1700000007" })), "a message without a consensus_timestamp"],
    ["a message not in base64", () => json(message(7, { message: "m7!" })), "a message whose message is not base64"],
    ["an array", () => json([message(7)]), "a message that is not an object"],
  ];
  for (const [what, answer, reason] of failures) {
    test(`failed: ${what}`, async () => {
      expect(await mirrorReader(BASE, { fetch: fake(answer).fetch }).message(TOPIC, 7)).toEqual({ kind: "failed", reason });
    });
  }

  test("failed: no answer within the timeout", async () => {
    const hang: FetchFn = (_url, init) => new Promise((_, reject) => init!.signal!.addEventListener("abort", () => reject(new Error("aborted"))));
    expect(await mirrorReader(BASE, { fetch: hang, timeoutMs: 50 }).message(TOPIC, 7)).toEqual({ kind: "failed", reason: "no answer within 0.05 s" });
  });
});

describe("the topic", () => {
  test("its submit key, null when anyone may submit, failed when the shape is wrong", async () => {
    const reader = (body: unknown) => mirrorReader(BASE, { fetch: fake(() => json(body)).fetch });
    expect(await reader({ topic_id: TOPIC, submit_key: { _type: "ED25519", key: "AB".repeat(32) } }).topic(TOPIC)).toEqual({ kind: "found", value: { topicId: TOPIC, submitKey: { type: "ED25519", key: "ab".repeat(32) } } });
    expect(await reader({ topic_id: TOPIC, submit_key: null }).topic(TOPIC)).toEqual({ kind: "found", value: { topicId: TOPIC, submitKey: null } });
    expect((await reader({ topic_id: TOPIC }).topic(TOPIC)).kind).toBe("failed");
    expect((await reader({ topic_id: "0.0.1", submit_key: null }).topic(TOPIC)).kind).toBe("failed");
    expect((await reader({ topic_id: TOPIC, submit_key: "ab" }).topic(TOPIC)).kind).toBe("failed");
  });
});

describe("the scan", () => {
  const keepAll = { maxPages: 10, keep: () => true };

  test("follows links.next relative to the mirror's origin, keeps what it is told, reports each page", async () => {
    const pages: Record<string, unknown> = {
      [`${BASE}/api/v1/topics/0.0.42/messages?timestamp=gt:1700000001.000000001&limit=100&order=asc`]: { messages: [message(2), message(3)], links: { next: "/prefix/api/v1/topics/0.0.42/messages?timestamp=gt:1700000003.000000001&limit=100&order=asc" } },
      ["https://mirror.example.org/prefix/api/v1/topics/0.0.42/messages?timestamp=gt:1700000003.000000001&limit=100&order=asc"]: { messages: [message(4)], links: { next: null } },
    };
    const f = fake((url) => (url in pages ? json(pages[url]) : NOT_FOUND()));
    const progress: [number, number][] = [];
    const a = await mirrorReader(BASE, { fetch: f.fetch }).scanAfter(TOPIC, "1700000001.000000001", { maxPages: 10, keep: (m) => m.sequenceNumber !== 3, onPage: (p, n) => progress.push([p, n]) });
    expect(a.kind).toBe("found");
    if (a.kind !== "found") return;
    expect(a.value.kept.map((m) => m.sequenceNumber)).toEqual([2, 4]);
    expect([a.value.scanned, a.value.pages]).toEqual([3, 2]);
    expect(progress).toEqual([[1, 2], [2, 3]]);
    expect(f.asked).toEqual(Object.keys(pages));
  });

  const bad: [string, unknown, string][] = [
    ["a link to another origin", { messages: [message(2)], links: { next: "https://evil.example/api/v1/topics/0.0.42/messages" } }, "a links.next to another origin"],
    ["an empty page with a link", { messages: [], links: { next: "/api/v1/topics/0.0.42/messages?x" } }, "an empty page with a links.next"],
    ["messages out of order", { messages: [message(3), message(2)], links: { next: null } }, "a message page out of order"],
    ["a message before the start", { messages: [message(1)], links: { next: null } }, "a message page out of order"],
    ["another topic's message", { messages: [message(2, { topic_id: "0.0.9" })], links: { next: null } }, "a page of 0.0.42 with a message of 0.0.9"],
    ["no links", { messages: [] }, "a message page of the wrong shape"],
  ];
  for (const [what, body, reason] of bad) {
    test(`failed: ${what}`, async () => {
      expect(await mirrorReader(BASE, { fetch: fake(() => json(body)).fetch }).scanAfter(TOPIC, "1700000001.000000001", keepAll)).toEqual({ kind: "failed", reason });
    });
  }

  test("failed past its page limit, having asked no more than the limit", async () => {
    let n = 1;
    const f = fake(() => {
      n++;
      return json({ messages: [message(n)], links: { next: `/api/v1/topics/0.0.42/messages?page=${n}` } });
    });
    const a = await mirrorReader(BASE, { fetch: f.fetch }).scanAfter(TOPIC, "1700000001.000000001", { maxPages: 3, keep: () => false });
    expect(a).toEqual({ kind: "failed", reason: "the topic scan stopped after 3 pages (3 messages) before the topic's end", limit: true });
    expect(f.asked).toHaveLength(3);
  });
});

describe("what every request asks of the GET", () => {
  test("JSON, redirects within the mirror's origin only, the addresses counted for its host, a deadline", async () => {
    const inits: FetchInit[] = [];
    const f: FetchFn = async (url, init) => {
      inits.push(init!);
      if (url.endsWith("/topics/0.0.42")) return json({ topic_id: TOPIC, submit_key: null });
      if (url.includes("/messages?")) return json({ messages: [], links: { next: null } });
      return json(message(7));
    };
    const reader = mirrorReader(BASE, { fetch: f, addresses: ["192.0.2.1", "2001:db8::1"] });
    await Promise.all([reader.topic(TOPIC), reader.message(TOPIC, 7), reader.scanAfter(TOPIC, "1700000001.000000001", { maxPages: 1, keep: () => true })]);
    expect(inits).toHaveLength(3);
    for (const init of inits) {
      expect(init).toMatchObject({ headers: { accept: "application/json" }, redirects: "same-origin", addresses: ["192.0.2.1", "2001:db8::1"] });
      expect(init.signal).toBeInstanceOf(AbortSignal);
    }
    // Without addresses (the page), none is asked for.
    const plain: FetchInit[] = [];
    await mirrorReader(BASE, { fetch: async (_u, init) => (plain.push(init!), json(message(7))) }).message(TOPIC, 7);
    expect("addresses" in plain[0]!).toBe(false);
  });
});
