/**
 * One call to the service with the interface's retry rules: sends the request, reports every
 * answer (onResponse), retries what may be retried, and turns the last answer into the body text
 * or a DocverifyError / DocverifyConnectionError.
 */
import { DocverifyConnectionError, DocverifyError, codeForStatus, isErrorCode, type AnyErrorCode } from "./errors.ts";
import { delayFor, backoffMs, parseRetryAfter, retryableStatus, sleep, type RetryPolicy } from "./retry.ts";

export interface ResponseInfo {
  method: string;
  path: string;
  status: number;
  requestId?: string;
  rateLimitLimit?: number;
  rateLimitRemaining?: number;
  retryAfterSeconds?: number;
}

export interface Transport {
  /** Base URL without a trailing slash. */
  base: string;
  apiKey?: string;
  userAgent: string;
  /** Narrower than `typeof fetch` (Bun's adds `preconnect`): all the transport calls. */
  fetch: (url: string, init: RequestInit) => Promise<Response>;
  policy: RetryPolicy;
  /** Per-attempt limit; an attempt that takes longer counts as a network error. */
  timeoutMs: number;
  onResponse?: (info: ResponseInfo) => void;
}

export interface Call {
  method: "GET" | "POST";
  /** The path, starting with `/`, with any path parameters already encoded. */
  path: string;
  query?: { [name: string]: string | number | undefined };
  body?: unknown;
  /** Send the API key (when there is one). Public endpoints never receive it. */
  auth: boolean;
  /** Overrides the policy's signal (waitForVerdict's own). */
  signal?: AbortSignal;
}

export interface Answer {
  method: string;
  path: string;
  status: number;
  headers: Headers;
  /** The body exactly as served. */
  text: string;
}

function intHeader(headers: Headers, name: string): number | undefined {
  const v = headers.get(name);
  return v !== null && /^\d+$/.test(v.trim()) ? Number(v) : undefined;
}

function responseInfo(method: string, path: string, res: { status: number; headers: Headers }): ResponseInfo {
  const info: ResponseInfo = { method, path, status: res.status };
  const requestId = res.headers.get("x-request-id");
  if (requestId !== null) info.requestId = requestId;
  const limit = intHeader(res.headers, "x-ratelimit-limit");
  if (limit !== undefined) info.rateLimitLimit = limit;
  const remaining = intHeader(res.headers, "x-ratelimit-remaining");
  if (remaining !== undefined) info.rateLimitRemaining = remaining;
  const retryAfter = parseRetryAfter(res.headers.get("retry-after"));
  if (retryAfter !== undefined) info.retryAfterSeconds = retryAfter;
  return info;
}

/** The error an unsuccessful answer stands for: its envelope, else its status alone. */
function errorOf(method: string, path: string, answer: Answer, info: ResponseInfo): DocverifyError {
  let code: AnyErrorCode = codeForStatus(answer.status);
  let message = `HTTP ${answer.status}`;
  let details: { [field: string]: string } | undefined;
  try {
    const parsed = JSON.parse(answer.text) as { error?: { code?: unknown; message?: unknown; details?: unknown } };
    const e = parsed.error;
    if (e !== undefined && typeof e.code === "string") {
      code = e.code;
      if (typeof e.message === "string") message = e.message;
      if (e.details !== null && typeof e.details === "object") details = e.details as { [field: string]: string };
    }
  } catch {
    // Not the service's envelope (a proxy's page): the status says what happened.
  }
  return new DocverifyError({
    method,
    path,
    status: answer.status,
    code,
    message,
    ...(details === undefined ? {} : { details }),
    ...(info.requestId === undefined ? {} : { requestId: info.requestId }),
    ...(info.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: info.retryAfterSeconds }),
  });
}

/** An attempt that got no answer: the service was not reached, or stopped answering. */
class NetworkFailure {
  constructor(readonly cause: unknown) {}
}

/**
 * One attempt. Resolves with the whole answer (the body read too: a connection reset mid-body is
 * a network error like any other); rejects with the caller's abort reason, or with a network
 * NetworkFailure.
 */
async function attempt(t: Transport, call: Call, url: string, signal: AbortSignal | undefined): Promise<Answer> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`no answer within ${t.timeoutMs} ms`)), t.timeoutMs);
  const onAbort = () => controller.abort(signal!.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const headers: { [name: string]: string } = { accept: "application/json, application/vnd.docverify.receipt+json", "user-agent": t.userAgent };
    if (call.auth && t.apiKey !== undefined) headers.authorization = `Bearer ${t.apiKey}`;
    if (call.body !== undefined) headers["content-type"] = "application/json";
    // A redirect is answered as it is, never followed: the key must reach only the URL it was given for.
    const init: RequestInit = { method: call.method, headers, signal: controller.signal, redirect: "manual" };
    if (call.body !== undefined) init.body = JSON.stringify(call.body);
    const res = await t.fetch(url, init);
    const text = await res.text();
    return { method: call.method, path: call.path, status: res.status, headers: res.headers, text };
  } catch (e) {
    if (signal?.aborted) throw signal.reason;
    throw new NetworkFailure(controller.signal.aborted ? controller.signal.reason : e);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
}

function urlOf(t: Transport, call: Call): string {
  const url = new URL(t.base + call.path);
  for (const [name, value] of Object.entries(call.query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
  return url.href;
}

/** Sends `call`, retrying as the policy says; resolves with a 2xx answer. */
export async function send(t: Transport, call: Call): Promise<Answer> {
  const url = urlOf(t, call);
  const signal = call.signal ?? t.policy.signal;
  const { attempts } = t.policy;
  for (let n = 1; ; n++) {
    let answer: Answer;
    try {
      answer = await attempt(t, call, url, signal);
    } catch (e) {
      if (!(e instanceof NetworkFailure)) throw e;
      if (n >= attempts) throw new DocverifyConnectionError(t.base, e.cause, n);
      const delayMs = backoffMs(n, t.policy);
      t.policy.onRetry?.({ attempt: n, delayMs, code: "NETWORK" });
      await sleep(delayMs, signal);
      continue;
    }
    const info = responseInfo(call.method, call.path, answer);
    t.onResponse?.(info);
    if (answer.status >= 200 && answer.status < 300) return answer;
    const error = errorOf(call.method, call.path, answer, info);
    if (!retryableStatus(answer.status) || n >= attempts) throw error;
    const delayMs = delayFor(answer.status, info.retryAfterSeconds, n, t.policy);
    t.policy.onRetry?.({ attempt: n, delayMs, status: answer.status, ...(isErrorCode(error.code) ? { code: error.code } : {}) });
    await sleep(delayMs, signal);
  }
}
