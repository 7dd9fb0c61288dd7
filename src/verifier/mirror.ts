/**
 * Reads one mirror node over the Hedera mirror node REST API (v1), through an injected `fetch`.
 *
 * Every answer is one of three kinds, and the verdict depends on telling them apart:
 * - `found`: a 200 in the API's shape, echoing what was asked (topic, sequence number);
 * - `not_found`: a 404 carrying the API's error body (`{"_status":{"messages":[…]}}`);
 * - `failed`: anything else (network error, timeout, another status, not JSON, the wrong shape,
 *   a page link to another origin, a scan past its page limit): the mirror did not answer as a
 *   mirror node does, so nothing can be concluded from it (verdict `unverifiable`).
 */
import { base64ToBytes } from "./encoding.ts";

export const MIRROR_TIMEOUT_MS = 10_000;

/** What the reader asks of a GET. */
export interface FetchInit {
  readonly signal?: AbortSignal;
  readonly headers?: Record<string, string>;
  /**
   * Which redirects to follow: `same-origin` (a mirror node: a redirect elsewhere would make one
   * witness speak for another, so it fails), or `https` (the identity document: to https URLs
   * only). Absent: `same-origin`.
   */
  readonly redirects?: "same-origin" | "https";
  /**
   * The addresses to connect to for the URL's host, in turn until one accepts, as resolved when
   * the witnesses were counted (witnesses.ts), so the host answering is one of those counted.
   * Shells that cannot pin (the page) ignore it.
   */
  readonly addresses?: readonly string[];
}

/** What the reader needs of an answer: its status and its body's text. */
export interface FetchAnswer {
  readonly status: number;
  text(): Promise<string>;
}

/**
 * What the reader needs of `fetch`: the global one fits (the page uses it), the command-line
 * shells pass http-get.ts's, tests their own.
 */
export type FetchFn = (url: string, init?: FetchInit) => Promise<FetchAnswer>;

/**
 * A FetchFn over the platform's `fetch` (the page; the default elsewhere): a mirror node's
 * redirect fails (`redirect: "error"`: a browser cannot tell where a redirect leads before
 * following it), the identity document's is followed. `addresses` cannot be honoured here.
 */
export const webFetch: FetchFn = (url, init) =>
  fetch(url, { signal: init?.signal, headers: init?.headers, redirect: init?.redirects === "https" ? "follow" : "error" });

export interface MirrorMessage {
  readonly topicId: string;
  readonly sequenceNumber: number;
  /** `seconds.nanoseconds`, nine digits of nanoseconds. */
  readonly consensusAt: string;
  readonly message: Uint8Array;
  readonly runningHash: Uint8Array;
  readonly runningHashVersion: number;
  readonly chunk: { readonly number: number; readonly total: number } | null;
}

export interface TopicInfo {
  readonly topicId: string;
  /** The key that must sign every submission, as the mirror shows it; null when anyone may submit. */
  readonly submitKey: { readonly type: string; readonly key: string } | null;
}

/** `limit`: the failure is the topic scan's page bound (`maxPages`), not the mirror node's fault. */
export type Answer<T> = { readonly kind: "found"; readonly value: T } | { readonly kind: "not_found" } | { readonly kind: "failed"; readonly reason: string; readonly limit?: true };

export interface ScanResult {
  /** The messages `keep` accepted, in consensus order. */
  readonly kept: readonly MirrorMessage[];
  readonly scanned: number;
  readonly pages: number;
}

export interface ScanOptions {
  /** Pages of 100 messages read at most; past it the scan fails rather than run for ever. */
  readonly maxPages: number;
  /** Which messages to keep (the rest are counted and dropped, so a long topic is not held in memory). */
  readonly keep: (m: MirrorMessage) => boolean;
  /** Called after each page. */
  readonly onPage?: (pages: number, scanned: number) => void;
}

export interface MirrorReader {
  /** The normalised base URL. */
  readonly url: string;
  topic(topicId: string): Promise<Answer<TopicInfo>>;
  message(topicId: string, sequenceNumber: number): Promise<Answer<MirrorMessage>>;
  /** Every message of the topic after `consensusAt` ("0.000000000": from its first), page by page (`links.next`). */
  scanAfter(topicId: string, consensusAt: string, options: ScanOptions): Promise<Answer<ScanResult>>;
}

const CONSENSUS_RE = /^\d{1,12}\.\d{9}$/;

/** Orders two `seconds.nanoseconds` texts (both already checked against CONSENSUS_RE). */
export function compareConsensus(a: string, b: string): number {
  const [as, an] = a.split(".") as [string, string];
  const [bs, bn] = b.split(".") as [string, string];
  return Number(as) - Number(bs) || Number(an) - Number(bn);
}

class BadAnswer extends Error {}
/** The scan reached its page bound before the topic's end. */
class ScanLimit extends BadAnswer {}

type Got = { kind: "ok"; body: unknown } | { kind: "not_found" };

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

function messageOf(v: unknown): MirrorMessage {
  if (!isObject(v)) throw new BadAnswer("a message that is not an object");
  const { topic_id, sequence_number, consensus_timestamp, message, running_hash, running_hash_version, chunk_info } = v;
  if (typeof topic_id !== "string") throw new BadAnswer("a message without topic_id");
  if (typeof sequence_number !== "number" || !Number.isSafeInteger(sequence_number) || sequence_number < 1) throw new BadAnswer("a message without a sequence_number");
  if (typeof consensus_timestamp !== "string" || !CONSENSUS_RE.test(consensus_timestamp)) throw new BadAnswer("a message without a consensus_timestamp");
  const bytes = typeof message === "string" ? base64ToBytes(message) : null;
  if (bytes === null) throw new BadAnswer("a message whose message is not base64");
  const hash = typeof running_hash === "string" ? base64ToBytes(running_hash) : null;
  if (hash === null) throw new BadAnswer("a message whose running_hash is not base64");
  if (typeof running_hash_version !== "number") throw new BadAnswer("a message without running_hash_version");
  let chunk: MirrorMessage["chunk"] = null;
  if (chunk_info !== null && chunk_info !== undefined) {
    if (!isObject(chunk_info) || typeof chunk_info.number !== "number" || typeof chunk_info.total !== "number") throw new BadAnswer("a message with a malformed chunk_info");
    chunk = { number: chunk_info.number, total: chunk_info.total };
  }
  return { topicId: topic_id, sequenceNumber: sequence_number, consensusAt: consensus_timestamp, message: bytes, runningHash: hash, runningHashVersion: running_hash_version, chunk };
}

export function mirrorReader(baseUrl: string, options: { fetch: FetchFn; timeoutMs?: number; addresses?: readonly string[] }): MirrorReader {
  const base = baseUrl.replace(/\/+$/, "");
  const origin = new URL(base).origin;
  const timeoutMs = options.timeoutMs ?? MIRROR_TIMEOUT_MS;

  /** One GET: the parsed 200 body, or a 404 in the API's error shape; throws BadAnswer for the rest. */
  async function get(url: string): Promise<Got> {
    let res: FetchAnswer;
    let text: string;
    // One deadline for the headers and the body alike.
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      res = await options.fetch(url, { signal, headers: { accept: "application/json" }, redirects: "same-origin", ...(options.addresses === undefined ? {} : { addresses: options.addresses }) });
      text = await res.text();
    } catch (e) {
      if (signal.aborted) throw new BadAnswer(`no answer within ${timeoutMs / 1000} s`);
      throw new BadAnswer(`unreachable (${e instanceof Error ? e.message : String(e)})`);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new BadAnswer(`HTTP ${res.status} with a body that is not JSON`);
    }
    if (res.status === 404) {
      if (isObject(body) && isObject(body._status) && Array.isArray(body._status.messages)) return { kind: "not_found" };
      throw new BadAnswer("HTTP 404 without the mirror API's error body");
    }
    if (res.status !== 200) throw new BadAnswer(`HTTP ${res.status}`);
    return { kind: "ok", body };
  }

  async function answer<T>(work: () => Promise<T | null>): Promise<Answer<T>> {
    try {
      const value = await work();
      return value === null ? { kind: "not_found" } : { kind: "found", value };
    } catch (e) {
      if (e instanceof ScanLimit) return { kind: "failed", reason: e.message, limit: true };
      if (e instanceof BadAnswer) return { kind: "failed", reason: e.message };
      return { kind: "failed", reason: e instanceof Error ? e.message : String(e) };
    }
  }

  const topicPath = (topicId: string) => `${base}/api/v1/topics/${encodeURIComponent(topicId)}`;

  return {
    url: base,

    topic: (topicId) =>
      answer(async () => {
        const got = await get(topicPath(topicId));
        if (got.kind === "not_found") return null;
        const b = got.body;
        if (!isObject(b) || b.topic_id !== topicId || !("submit_key" in b)) throw new BadAnswer("a topic answer of the wrong shape");
        const k = b.submit_key;
        if (k === null) return { topicId, submitKey: null };
        if (!isObject(k) || typeof k._type !== "string" || typeof k.key !== "string") throw new BadAnswer("a topic whose submit_key is malformed");
        return { topicId, submitKey: { type: k._type, key: k.key.toLowerCase() } };
      }),

    message: (topicId, sequenceNumber) =>
      answer(async () => {
        const got = await get(`${topicPath(topicId)}/messages/${sequenceNumber}`);
        if (got.kind === "not_found") return null;
        const m = messageOf(got.body);
        if (m.topicId !== topicId || m.sequenceNumber !== sequenceNumber) throw new BadAnswer(`asked for ${topicId} #${sequenceNumber}, answered with ${m.topicId} #${m.sequenceNumber}`);
        return m;
      }),

    scanAfter: (topicId, consensusAt, scan) =>
      answer(async () => {
        const kept: MirrorMessage[] = [];
        let url = `${topicPath(topicId)}/messages?timestamp=gt:${consensusAt}&limit=100&order=asc`;
        let last = consensusAt;
        let lastSequence = 0;
        let scanned = 0;
        for (let pages = 1; ; pages++) {
          if (pages > scan.maxPages) throw new ScanLimit(`the topic scan stopped after ${scan.maxPages} pages (${scanned} messages) before the topic's end`);
          const got = await get(url);
          if (got.kind === "not_found") return null;
          const b = got.body;
          if (!isObject(b) || !Array.isArray(b.messages) || !isObject(b.links)) throw new BadAnswer("a message page of the wrong shape");
          for (const raw of b.messages) {
            const m = messageOf(raw);
            // Asked for this topic after `consensusAt`, in order: anything else is not the API's answer.
            if (m.topicId !== topicId) throw new BadAnswer(`a page of ${topicId} with a message of ${m.topicId}`);
            if (compareConsensus(m.consensusAt, last) <= 0 || m.sequenceNumber <= lastSequence) throw new BadAnswer("a message page out of order");
            last = m.consensusAt;
            lastSequence = m.sequenceNumber;
            scanned++;
            if (scan.keep(m)) kept.push(m);
          }
          scan.onPage?.(pages, scanned);
          const next = b.links.next;
          if (next === null || next === undefined) return { kept, scanned, pages };
          if (typeof next !== "string") throw new BadAnswer("a links.next that is not a string");
          let target: URL;
          try {
            target = new URL(next, origin);
          } catch {
            throw new BadAnswer("a links.next that is not a URL");
          }
          if (target.origin !== origin) throw new BadAnswer("a links.next to another origin");
          if (b.messages.length === 0) throw new BadAnswer("an empty page with a links.next");
          url = target.href;
        }
      }),
  };
}
