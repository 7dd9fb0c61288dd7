/**
 * A lying mirror node, for tests of whatever reads mirror nodes (the receipt verifier above all,
 * docs/receipts.md §3-4): an HTTP proxy in front of a real mirror REST API (a local ledger's) that
 * passes every request through and alters the answers as `lie` says.
 *
 * - `message-bytes`: the message at `sequenceNumber` has one byte of its decoded `message` flipped
 *   (the middle byte, XOR 0x01), in the single-message answers (by number and by timestamp) and in
 *   list answers.
 * - `consensus-time`: that message's `consensus_timestamp` is 1 ns later, wherever it is shown.
 * - `hide`: that message is left out of list answers and is 404 by number and by timestamp (a
 *   mirror hiding a revocation).
 * - `invent-revocation`: a well-formed revocation message for `recordId` is added at the end of
 *   `topicId` (sequence number one past the upstream's last, 1 ns after its last timestamp): in
 *   list answers that reach the topic's end and pass the request's filters, and by number and
 *   timestamp.
 * - `down`: the listener is closed (connection refused), or with `mode: "503"` every request
 *   answers 503; another lie brings it back on the same port.
 * - `none`: an honest proxy.
 *
 * The message lies apply to every topic unless given `topicId`. Nothing of the server's code is
 * used: the liar knows the mirror API only from its wire form, as a real one would.
 *
 * It listens on `hostname` (default 127.0.0.1): a verifier counts witnesses by host, so a proxy
 * that must count as a host of its own beside its upstream takes a loopback address of its own
 * (test/support/loopback.ts).
 */

export type Lie =
  | { readonly kind: "none" }
  | { readonly kind: "message-bytes"; readonly sequenceNumber: number; readonly topicId?: string }
  | { readonly kind: "consensus-time"; readonly sequenceNumber: number; readonly topicId?: string }
  | { readonly kind: "hide"; readonly sequenceNumber: number; readonly topicId?: string }
  | { readonly kind: "invent-revocation"; readonly recordId: string; readonly topicId: string; readonly reason?: string; readonly revokedAt?: string }
  | { readonly kind: "down"; readonly mode?: "refused" | "503" };

export interface LyingMirror {
  /** The proxy's base URL (`http://HOSTNAME:port`), stable across `down` and back. */
  readonly url: string;
  /** Changes the lie for the requests that follow; resolves once the listener is closed or open as the lie needs. */
  setLie(lie: Lie): Promise<void>;
  /** Paths (with query) of the requests answered so far, in order. */
  requests(): readonly string[];
  close(): Promise<void>;
}

interface MirrorMessage {
  consensus_timestamp: string;
  topic_id: string;
  message: string;
  sequence_number: number;
  [field: string]: unknown;
}

const NOT_FOUND = { _status: { messages: [{ message: "Not found" }] } };

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8", "access-control-allow-origin": "*" } });
}

/** `0.0.N` for `N` or `0.0.N`; other text as given. */
function normalTopic(text: string): string {
  return /^\d+$/.test(text) ? `0.0.${text}` : text;
}

/** A `seconds.nanos` timestamp in nanoseconds. */
function ns(ts: string): bigint {
  const [s, n = "0"] = ts.split(".");
  return BigInt(s!) * 1_000_000_000n + BigInt(n.padEnd(9, "0"));
}

function tsText(v: bigint): string {
  return `${v / 1_000_000_000n}.${String(v % 1_000_000_000n).padStart(9, "0")}`;
}

function flipByte(message: string, encoding: "base64" | "utf-8"): string {
  const bytes = encoding === "base64" ? Buffer.from(message, "base64") : Buffer.from(message, "utf8");
  if (bytes.length === 0) return message;
  const i = Math.floor(bytes.length / 2);
  bytes[i] = bytes[i]! ^ 0x01;
  return encoding === "base64" ? bytes.toString("base64") : bytes.toString("utf8");
}

/** Whether `value` passes the mirror filters given for a parameter (`gt:x`, `lte:x`, a plain `x`...). */
function passes(values: readonly string[], value: bigint, parse: (text: string) => bigint): boolean {
  for (const v of values) {
    const [op, text] = v.includes(":") ? (v.split(":") as [string, string]) : ["eq", v];
    const bound = parse(text);
    const ok = { eq: value === bound, ne: value !== bound, gt: value > bound, gte: value >= bound, lt: value < bound, lte: value <= bound }[op as "eq"];
    if (ok !== true) return false;
  }
  return true;
}

export async function startLyingMirror(options: { upstream: string; lie?: Lie; hostname?: string }): Promise<LyingMirror> {
  const hostname = options.hostname ?? "127.0.0.1";
  const upstream = options.upstream.replace(/\/+$/, "");
  let lie: Lie = options.lie ?? { kind: "none" };
  const seen: string[] = [];

  const targets = (m: MirrorMessage): boolean =>
    "sequenceNumber" in lie && m.sequence_number === lie.sequenceNumber && (lie.topicId === undefined || normalTopic(lie.topicId) === m.topic_id);

  /** The message as the lie shows it, or null when it hides it. */
  const alter = (m: MirrorMessage, encoding: "base64" | "utf-8"): MirrorMessage | null => {
    if (!targets(m)) return m;
    switch (lie.kind) {
      case "message-bytes":
        return { ...m, message: flipByte(m.message, encoding) };
      case "consensus-time":
        return { ...m, consensus_timestamp: tsText(ns(m.consensus_timestamp) + 1n) };
      case "hide":
        return null;
      default:
        return m;
    }
  };

  /** The invented revocation, placed after the upstream topic's last message. */
  const invented = async (): Promise<MirrorMessage | null> => {
    if (lie.kind !== "invent-revocation") return null;
    const topic = normalTopic(lie.topicId);
    const res = await fetch(`${upstream}/api/v1/topics/${topic}/messages?order=desc&limit=1`);
    const last = res.ok ? ((await res.json()) as { messages: MirrorMessage[] }).messages[0] : undefined;
    const body = JSON.stringify({
      v: 1,
      type: "revocation",
      recordId: lie.recordId,
      reason: lie.reason ?? "KEY_COMPROMISE",
      revokedAt: lie.revokedAt ?? new Date().toISOString(),
    });
    return {
      chunk_info: null,
      consensus_timestamp: last ? tsText(ns(last.consensus_timestamp) + 1n) : tsText(BigInt(Date.now()) * 1_000_000n),
      message: Buffer.from(body).toString("base64"),
      payer_account_id: "0.0.2",
      running_hash: Buffer.from(new Bun.CryptoHasher("sha384").update(body).digest()).toString("base64"),
      running_hash_version: 3,
      sequence_number: (last?.sequence_number ?? 0) + 1,
      topic_id: topic,
    };
  };

  const list = async (topicText: string, url: URL, upstreamBody: { messages: MirrorMessage[]; links: { next: string | null } }): Promise<unknown> => {
    const encoding = url.searchParams.get("encoding")?.toLowerCase() === "utf-8" ? "utf-8" : "base64";
    let messages = upstreamBody.messages.map((m) => alter(m, encoding)).filter((m): m is MirrorMessage => m !== null);
    let next = upstreamBody.links.next;
    const extra = lie.kind === "invent-revocation" && normalTopic(lie.topicId) === normalTopic(topicText) ? await invented() : null;
    if (extra && passes(url.searchParams.getAll("timestamp"), ns(extra.consensus_timestamp), ns) && passes(url.searchParams.getAll("sequencenumber"), BigInt(extra.sequence_number), BigInt)) {
      const shown = encoding === "utf-8" ? { ...extra, message: Buffer.from(extra.message, "base64").toString("utf8") } : extra;
      const limit = Number(url.searchParams.get("limit") ?? 25);
      if (url.searchParams.get("order") === "desc") {
        // The newest message comes first; a page that overflows loses its oldest one to the next page.
        messages = [shown, ...messages];
        if (messages.length > limit) {
          messages.pop();
          const q = new URLSearchParams(url.search);
          const kept = q.getAll("timestamp").filter((v) => !/^lte?:/.test(v));
          q.delete("timestamp");
          for (const v of [...kept, `lt:${messages[messages.length - 1]!.consensus_timestamp}`]) q.append("timestamp", v);
          next = `${url.pathname}?${decodeURIComponent(q.toString())}`;
        }
      } else if (next === null) {
        messages = [...messages, shown]; // only the page that reaches the topic's end
      }
    }
    return { ...upstreamBody, messages, links: { ...upstreamBody.links, next } };
  };

  const single = async (body: MirrorMessage): Promise<Response> => {
    const shown = alter(body, "base64");
    return shown === null ? json(404, NOT_FOUND) : json(200, shown);
  };

  const handle = async (req: Request): Promise<Response> => {
    const url = new URL(req.url);
    seen.push(url.pathname + url.search);
    if (lie.kind === "down") return json(503, { _status: { messages: [{ message: "Service Unavailable" }] } });
    const headers = new Headers(req.headers);
    headers.delete("host");
    const res = await fetch(upstream + url.pathname + url.search, { method: req.method, headers, redirect: "manual" });
    const parts = url.pathname.split("/");
    const [, a, b, c, d, e, f] = parts;
    const isTopics = a === "api" && b === "v1" && c === "topics" && req.method === "GET";
    const inventedHere = async (match: (m: MirrorMessage) => boolean): Promise<Response | null> => {
      const extra = await invented();
      return extra && match(extra) ? json(200, extra) : null;
    };
    // By number: /api/v1/topics/{t}/messages/{seq}
    if (isTopics && d !== undefined && e === "messages" && f !== undefined && parts.length === 7) {
      if (res.status === 404) {
        await res.body?.cancel();
        return (await inventedHere((m) => m.topic_id === normalTopic(d) && String(m.sequence_number) === f)) ?? json(404, NOT_FOUND);
      }
      if (res.ok) return single((await res.json()) as MirrorMessage);
    }
    // By timestamp: /api/v1/topics/messages/{ts}
    if (isTopics && d === "messages" && e !== undefined && parts.length === 6) {
      if (res.status === 404) {
        await res.body?.cancel();
        return (await inventedHere((m) => /^\d+(\.\d+)?$/.test(e) && ns(m.consensus_timestamp) === ns(e))) ?? json(404, NOT_FOUND);
      }
      if (res.ok) return single((await res.json()) as MirrorMessage);
    }
    // A list: /api/v1/topics/{t}/messages
    if (isTopics && d !== undefined && d !== "messages" && e === "messages" && parts.length === 6 && res.ok) {
      return json(200, await list(d, url, (await res.json()) as { messages: MirrorMessage[]; links: { next: string | null } }));
    }
    const passed = new Headers(res.headers);
    for (const h of ["content-encoding", "content-length", "transfer-encoding"]) passed.delete(h);
    return new Response(req.method === "HEAD" || res.status === 204 ? null : await res.arrayBuffer(), { status: res.status, headers: passed });
  };

  let server: ReturnType<typeof Bun.serve> | null = Bun.serve({ hostname, port: 0, fetch: handle });
  const port = server.port!;
  const listen = async (): Promise<void> => {
    for (let attempt = 0; server === null; attempt++) {
      try {
        server = Bun.serve({ hostname, port, fetch: handle });
      } catch (err) {
        if (attempt >= 50) throw err;
        await Bun.sleep(20);
      }
    }
  };
  const stop = async (): Promise<void> => {
    const s = server;
    server = null;
    await s?.stop(true);
  };

  let closed = false;
  const apply = async (l: Lie): Promise<void> => {
    if (closed) throw new Error("lying mirror: closed");
    lie = l;
    if (l.kind === "down" && (l.mode ?? "refused") === "refused") await stop();
    else await listen();
  };
  await apply(lie);

  return {
    url: `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`,
    setLie: apply,
    requests: () => [...seen],
    async close() {
      closed = true;
      await stop();
    },
  };
}
