/**
 * createClient: the operations of the docverify API as typed methods over one transport with
 * the interface's retry rules (transport.ts). Plain `fetch`, no dependency: runs on Node.js 20
 * and Bun.
 */
import { DocverifyTimeoutError } from "./errors.ts";
import { retryPolicy, sleep, type RetryOptions } from "./retry.ts";
import { send, type Answer, type ResponseInfo, type Transport } from "./transport.ts";
import type { Identity, Receipt, Record as DocRecord, RevocationReason, Verdict, Verification, VerificationPage, VerificationSummary } from "./types.ts";
import { VERSION } from "./version.ts";

export interface ClientOptions {
  /** Base URL, e.g. http://127.0.0.1:8080 (a trailing `/` is tolerated). */
  url: string;
  /** Bearer key; absent = anonymous (verification at the public tier, public receipts, identity). */
  apiKey?: string;
  /** false: no retries at all. */
  retry?: RetryOptions | false;
  /** Injectable for tests; the global fetch by default. */
  fetch?: typeof fetch;
  userAgent?: string;
  /** Every HTTP answer, retried ones included. */
  onResponse?: (info: ResponseInfo) => void;
  /** Per-attempt limit in ms (default 30 000): an attempt without an answer by then is retried as a network error. */
  timeoutMs?: number;
  /** Aborts every call of this client (also when `retry` is false). */
  signal?: AbortSignal;
}

/** Filters of the verification log (GET /v1/verifications). */
export interface VerificationFilter {
  verdict?: Verdict;
  originalDocHash?: string;
  /** RFC 3339 bounds of `verifiedAt`. */
  from?: string;
  to?: string;
}

export interface WaitOptions {
  /** The verdicts to wait for. Default ["verified_org", "verified"]. */
  until?: Verdict[];
  /** Default 120 000. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Sent with each verification (logged at the organisation tier). */
  reference?: string;
}

export interface DocverifyClient {
  createRecord(body: { originalDocHash: string; filename?: string }): Promise<{ record: DocRecord; created: boolean }>;
  revokeRecord(recordId: string, reason: RevocationReason): Promise<{ recordId: string }>;
  verify(originalDocHash: string, options?: { reference?: string }): Promise<Verification>;
  getVerification(verificationId: string): Promise<VerificationSummary>;
  listVerifications(options?: { limit?: number; cursor?: string } & VerificationFilter): Promise<VerificationPage>;
  verifications(options?: { limit?: number } & VerificationFilter): AsyncIterable<VerificationSummary>;
  receipt(recordId: string, options?: { public?: boolean }): Promise<{ receipt: Receipt; text: string }>;
  identity(): Promise<Identity>;
  waitForVerdict(originalDocHash: string, options?: WaitOptions): Promise<Verification>;
}

/**
 * Verdicts that no amount of waiting turns into another: a revoked record stays revoked, a
 * signature that fails keeps failing. waitForVerdict resolves with them rather than spin.
 */
const FINAL: readonly Verdict[] = ["revoked", "signature_invalid"];

/** When a still-pending verification gives no retryAfterSeconds, poll this often. */
const DEFAULT_POLL_MS = 1000;

/** A success's body. One that is not JSON came from something other than the service (a proxy's page). */
function parse<T>(answer: Answer): T {
  try {
    return JSON.parse(answer.text) as T;
  } catch {
    throw new Error(`${answer.method} ${answer.path}: ${answer.status} with a body that is not JSON (${JSON.stringify(answer.text.slice(0, 80))})`);
  }
}

const enc = encodeURIComponent;

export function createClient(options: ClientOptions): DocverifyClient {
  const transport: Transport = {
    base: options.url.replace(/\/+$/, ""),
    userAgent: options.userAgent ?? `docverify-client/${VERSION}`,
    // The global is looked up at each call, not captured: a fetch installed later is the one used.
    fetch: options.fetch ?? ((url, init) => fetch(url, init)),
    policy: retryPolicy(options.retry, options.signal),
    timeoutMs: options.timeoutMs ?? 30_000,
  };
  if (options.apiKey !== undefined) transport.apiKey = options.apiKey;
  if (options.onResponse !== undefined) transport.onResponse = options.onResponse;
  // Validate once here, so a typo fails at construction and not inside the first call.
  new URL(transport.base);

  const listVerifications = async (o: { limit?: number; cursor?: string } & VerificationFilter = {}): Promise<VerificationPage> =>
    parse<VerificationPage>(
      await send(transport, {
        method: "GET",
        path: "/v1/verifications",
        query: { limit: o.limit, after: o.cursor, verdict: o.verdict, originalDocHash: o.originalDocHash, from: o.from, to: o.to },
        auth: true,
      }),
    );

  const verify = async (originalDocHash: string, o: { reference?: string; signal?: AbortSignal } = {}): Promise<Verification> => {
    const body: { originalDocHash: string; reference?: string } = { originalDocHash };
    if (o.reference !== undefined) body.reference = o.reference;
    return parse<Verification>(await send(transport, { method: "POST", path: "/v1/verifications", body, auth: true, ...(o.signal === undefined ? {} : { signal: o.signal }) }));
  };

  return {
    async createRecord(body) {
      const answer = await send(transport, { method: "POST", path: "/v1/records", body, auth: true });
      // 201: a new record; 200: the organisation already held this hash, nothing was created.
      return { record: parse<DocRecord>(answer), created: answer.status === 201 };
    },

    async revokeRecord(recordId, reason) {
      return parse<{ recordId: string }>(await send(transport, { method: "POST", path: `/v1/records/${enc(recordId)}/revoke`, body: { reason }, auth: true }));
    },

    verify: (originalDocHash, o) => verify(originalDocHash, o),

    async getVerification(verificationId) {
      return parse<VerificationSummary>(await send(transport, { method: "GET", path: `/v1/verifications/${enc(verificationId)}`, auth: true }));
    },

    listVerifications,

    verifications(o = {}) {
      return {
        async *[Symbol.asyncIterator]() {
          let cursor: string | undefined;
          do {
            const page = await listVerifications({ ...o, ...(cursor === undefined ? {} : { cursor }) });
            yield* page.data;
            cursor = page.pagination.nextCursor ?? undefined;
          } while (cursor !== undefined);
        },
      };
    },

    async receipt(recordId, o = {}) {
      // The public download needs no key and is never sent one; the /v1 one is the organisation's.
      const answer = o.public
        ? await send(transport, { method: "GET", path: `/verify/${enc(recordId)}/receipt`, auth: false })
        : await send(transport, { method: "GET", path: `/v1/records/${enc(recordId)}/receipt`, auth: true });
      return { receipt: parse<Receipt>(answer), text: answer.text };
    },

    async identity() {
      return parse<Identity>(await send(transport, { method: "GET", path: "/.well-known/docverify.json", auth: false }));
    },

    async waitForVerdict(originalDocHash, o = {}) {
      const until = o.until ?? ["verified_org", "verified"];
      const timeoutMs = o.timeoutMs ?? 120_000;
      // The deadline bounds everything, the verifications' own retries and waits included.
      const deadline = new AbortController();
      const timer = setTimeout(() => deadline.abort(), timeoutMs);
      const caller = o.signal ?? transport.policy.signal;
      const onAbort = () => deadline.abort(caller!.reason);
      if (caller?.aborted) onAbort();
      caller?.addEventListener("abort", onAbort, { once: true });
      let last: Verification | undefined;
      try {
        for (;;) {
          last = await verify(originalDocHash, { ...(o.reference === undefined ? {} : { reference: o.reference }), signal: deadline.signal });
          if (until.includes(last.verdict) || FINAL.includes(last.verdict)) return last;
          // The service says when anchoring should be done; polling sooner only adds log rows.
          await sleep(last.retryAfterSeconds === undefined ? DEFAULT_POLL_MS : last.retryAfterSeconds * 1000, deadline.signal);
        }
      } catch (e) {
        if (deadline.signal.aborted && !caller?.aborted) throw new DocverifyTimeoutError(originalDocHash, until, timeoutMs, last?.verdict);
        throw e;
      } finally {
        clearTimeout(timer);
        caller?.removeEventListener("abort", onAbort);
      }
    },
  };
}
