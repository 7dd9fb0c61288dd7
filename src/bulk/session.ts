/**
 * What every bulk command shares: the io it runs with, the client (paced by the pool's `Pace`),
 * and the preflight that makes sure the run can work before anything is changed or written. The
 * preflights send requests the service refuses in a known order (docs/access.md, "Order of
 * refusals"): credential, rate limit, API access, scope or environment, suspension, and only then
 * the body. A 400 for an empty body therefore means the key may do the operation, and nothing was
 * done.
 */
import { createClient, DocverifyConnectionError, DocverifyError, type DocverifyClient } from "../../packages/client/src/index.ts";
import { CannotStart, keyPrefix, type Env } from "./args.ts";
import { hashFile } from "./hash.ts";
import { Pace, sleep } from "./pool.ts";
import type { WalkEntry } from "./walk.ts";

/** The world a bulk command runs in; `nodeClientIo()` (cli.ts) builds the real one. */
export interface ClientIo {
  stdout(text: string): void;
  stderr(text: string): void;
  readonly stderrIsTTY: boolean;
  /** The terminal's width, when stderr is one: the progress line is cut to it (a wrapped line cannot be redrawn in place). */
  readonly columns?: number;
  readonly env: Env;
  /** Aborted at SIGINT or SIGTERM, with the signal's name as its reason. */
  readonly signal?: AbortSignal;
  /** Injectable for tests; the global fetch otherwise. */
  readonly fetch?: typeof fetch;
  /** Resolves once everything written has left the process (before it exits). */
  flush?(): Promise<void>;
}

export interface Session {
  readonly url: string;
  readonly key: string | undefined;
  readonly client: DocverifyClient;
  readonly pace: Pace;
  /** Requests the client repeated (429, 500, 503, network), for the summary. */
  readonly retries: { count: number };
}

const USER_AGENT = "docverify-bulk";
/** Preflight attempts while the service answers 429, 500 or 503. */
const PREFLIGHT_ATTEMPTS = 5;

export function openSession(url: string, key: string | undefined, concurrency: number, io: ClientIo): Session {
  const pace = new Pace(concurrency);
  const retries = { count: 0 };
  const client = createClient({
    url,
    ...(key === undefined ? {} : { apiKey: key }),
    ...(io.fetch === undefined ? {} : { fetch: io.fetch }),
    userAgent: USER_AGENT,
    onResponse: (info) => pace.observe(info),
    retry: {
      attempts: 10,
      onRetry: () => void retries.count++,
      ...(io.signal === undefined ? {} : { signal: io.signal }),
    },
  });
  return { url, key, client, pace, retries };
}

interface Answer {
  readonly status: number;
  readonly code?: string;
  readonly message?: string;
}

/** One request of a preflight, repeated while the service is busy (429, 500, 503). */
async function ask(url: string, path: string, init: RequestInit, io: ClientIo): Promise<Answer> {
  const fetchFn = io.fetch ?? globalThis.fetch;
  for (let attempt = 1; ; attempt++) {
    let res: Response;
    try {
      res = await fetchFn(url + path, { ...init, headers: { "user-agent": USER_AGENT, accept: "application/json", ...(init.headers as Record<string, string>) } });
    } catch (e) {
      // Node puts the system error in `cause`; Bun gives the error its code itself.
      const cause = (e as { cause?: { code?: unknown; message?: string } }).cause;
      const code = cause?.code ?? (e as { code?: unknown }).code;
      throw new CannotStart(`cannot reach the docverify service at ${url}: ${typeof code === "string" ? code : (cause?.message ?? (e as Error).message)}`);
    }
    let body: { error?: { code?: string; message?: string } } = {};
    try {
      body = (await res.json()) as typeof body;
    } catch {
      // Not JSON: judged by its status alone.
    }
    const answer = { status: res.status, code: body.error?.code, message: body.error?.message };
    const busy = res.status === 429 || res.status === 500 || res.status === 503;
    if (!busy || attempt >= PREFLIGHT_ATTEMPTS || io.signal?.aborted === true) return answer;
    const retryAfter = Number(res.headers.get("retry-after"));
    await sleep(Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : 500 * 2 ** attempt, io.signal);
  }
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}`, "content-type": "application/json" });

/** Why the service refused: a sentence naming the key by its prefix at most. */
function refusal(answer: Answer, key: string | undefined, url: string, what: string): CannotStart {
  const k = key === undefined ? "" : ` ${keyPrefix(key)}`;
  const said = `${answer.status} ${answer.code ?? ""}`.trim();
  switch (answer.code) {
    case "UNAUTHENTICATED":
      return new CannotStart(`the service at ${url} refused the key${k} (${said}): unknown, revoked or expired`);
    case "TEST_ENVIRONMENT":
      return new CannotStart(`the key${k} is a test key: test keys can never ${what} records (${said})`);
    case "SCOPE_REQUIRED":
      return new CannotStart(`the key${k} may not ${what} records (${said}: it lacks records:${what === "create" ? "write" : "revoke"}); nothing was changed`);
    case undefined:
      return new CannotStart(`the service at ${url} answered ${answer.status} where a docverify service answers 400: is it the right URL?`);
    default:
      return new CannotStart(`the service at ${url} refused to ${what} records with the key${k} (${said}): ${answer.message ?? ""}`.trimEnd());
  }
}

/** Whether `key` may create records: POST /v1/records with `{}`, expecting the body's 400. */
export async function preflightCreate(url: string, key: string, io: ClientIo): Promise<void> {
  const answer = await ask(url, "/v1/records", { method: "POST", headers: bearer(key), body: "{}" }, io);
  if (answer.status === 400 && answer.code === "VALIDATION_FAILED") return;
  throw refusal(answer, key, url, "create");
}

/** Whether `key` may revoke records: POST /v1/records/{recordId}/revoke with `{}`, expecting the body's 400. */
export async function preflightRevoke(url: string, key: string, recordId: string, io: ClientIo): Promise<void> {
  const answer = await ask(url, `/v1/records/${encodeURIComponent(recordId)}/revoke`, { method: "POST", headers: bearer(key), body: "{}" }, io);
  if (answer.status === 400 && answer.code === "VALIDATION_FAILED") return;
  throw refusal(answer, key, url, "revoke");
}

/** Whether the service answers, and accepts `key` for verifications when one is given. */
export async function preflightVerify(url: string, key: string | undefined, io: ClientIo): Promise<void> {
  if (key === undefined) {
    const answer = await ask(url, "/healthz", { method: "GET" }, io);
    if (answer.status !== 200) throw new CannotStart(`the service at ${url} answered ${answer.status} to GET /healthz: is it the right URL?`);
    return;
  }
  const answer = await ask(url, "/v1/verifications?limit=1", { method: "GET", headers: { authorization: `Bearer ${key}` } }, io);
  if (answer.status === 200) return;
  throw refusal(answer, key, url, "verify");
}

/** Rounds of the client's retries a busy service (429, 503) gets before the call counts as failed. */
const BUSY_ROUNDS = 4;

/**
 * `call`, asked again while the service is still busy (429 or 503) after the client's own
 * retries: each round waits on the run's pace first, which that answer has just paused.
 */
export async function patiently<T>(session: Session, signal: AbortSignal, call: () => Promise<T>): Promise<T> {
  for (let round = 1; ; round++) {
    try {
      return await call();
    } catch (e) {
      const busy = e instanceof DocverifyError && (e.code === "RATE_LIMITED" || e.code === "SERVICE_UNAVAILABLE");
      if (!busy || round >= BUSY_ROUNDS) throw e;
      await session.pace.ready(signal);
      if (signal.aborted) throw e;
    }
  }
}

/** An error's code for the manifest and the output: the service's, the file system's, or NETWORK. */
export function errorCode(e: unknown): string {
  if (e instanceof DocverifyError) return e.code;
  if (e instanceof DocverifyConnectionError) return "NETWORK";
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === "string" ? code : "ERROR";
}

/** The code a walk error ends with ("no such file or folder (ENOENT)"), else UNREADABLE. */
export function walkErrorCode(error: string): string {
  return /\((E[A-Z]+)\)$/.exec(error)?.[1] ?? "UNREADABLE";
}

export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** A walked file's hash; null once `fail` was told why it has none (the walk could not read it, or its read failed). */
export async function hashEntry(entry: WalkEntry, fail: (path: string, hash: undefined, code: string, message: string) => void): Promise<string | null> {
  if (entry.error !== undefined) {
    fail(entry.path, undefined, walkErrorCode(entry.error), entry.error);
    return null;
  }
  try {
    return await hashFile(entry.path);
  } catch (e) {
    fail(entry.path, undefined, errorCode(e), errorMessage(e));
    return null;
  }
}

/**
 * Errors after which no further request can succeed: the server is gone (after the client's
 * retries), or the key or organisation lost the right to do this (revoked key, suspension…).
 */
export function isFatal(e: unknown): boolean {
  if (e instanceof DocverifyConnectionError) return true;
  if (!(e instanceof DocverifyError)) return false;
  return ["UNAUTHENTICATED", "PAYMENT_REQUIRED", "ADDON_REQUIRED", "FORBIDDEN", "TEST_ENVIRONMENT", "SCOPE_REQUIRED", "ORGANISATION_SUSPENDED"].includes(e.code);
}

/** Exit code of a run stopped by a signal: 128 + its number, as a shell reports it. */
export function interruptedCode(io: ClientIo): number | null {
  if (io.signal?.aborted !== true) return null;
  return io.signal.reason === "SIGTERM" ? 143 : 130;
}
