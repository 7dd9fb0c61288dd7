/**
 * The retry rules of the interface, in one place: every operation is safe to retry; 429 waits
 * Retry-After; 503 waits Retry-After or backs off; 500 backs off; a network error (refused,
 * reset, timed out) backs off. Nothing else is retried: another 4xx will answer the same again.
 */
import type { ErrorCode } from "./errors.ts";

export interface RetryOptions {
  /** Total attempts per call, the first included. Default 6. */
  attempts?: number;
  /** Back-off base: attempt n waits a random time in [0, min(maxDelayMs, baseDelayMs·2^(n−1))). Default 500. */
  baseDelayMs?: number;
  /** Back-off cap. Default 30 000. A Retry-After the service sends is honoured even when longer. */
  maxDelayMs?: number;
  /** Called before each wait, with what is waited for and why. */
  onRetry?: (info: RetryInfo) => void;
  /** Aborts the call: a wait in progress ends at once and the call rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface RetryInfo {
  /** The attempt that failed (1 for the first). */
  attempt: number;
  /** How long the client waits before the next attempt. */
  delayMs: number;
  status?: number;
  code?: ErrorCode | "NETWORK";
}

export interface RetryPolicy {
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  onRetry?: (info: RetryInfo) => void;
  signal?: AbortSignal;
}

export const DEFAULT_RETRY = { attempts: 6, baseDelayMs: 500, maxDelayMs: 30_000 } as const;

/** The policy from the options; `false` is one attempt and no waiting. */
export function retryPolicy(options: RetryOptions | false | undefined, signal?: AbortSignal): RetryPolicy {
  if (options === false) return { attempts: 1, baseDelayMs: 0, maxDelayMs: 0, ...(signal === undefined ? {} : { signal }) };
  const policy: RetryPolicy = {
    attempts: Math.max(1, Math.floor(options?.attempts ?? DEFAULT_RETRY.attempts)),
    baseDelayMs: Math.max(0, options?.baseDelayMs ?? DEFAULT_RETRY.baseDelayMs),
    maxDelayMs: Math.max(0, options?.maxDelayMs ?? DEFAULT_RETRY.maxDelayMs),
  };
  if (options?.onRetry !== undefined) policy.onRetry = options.onRetry;
  const s = options?.signal ?? signal;
  if (s !== undefined) policy.signal = s;
  return policy;
}

/** Whether an answer with this status is worth another attempt. */
export function retryableStatus(status: number): boolean {
  return status === 429 || status === 500 || status === 503;
}

/**
 * Exponential back-off with full jitter: spreads clients that failed together (a restart) over
 * the window instead of sending them back in step.
 */
export function backoffMs(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(random() * ceiling);
}

/**
 * How long to wait after a retryable answer: Retry-After when the service sent it (429 and 503;
 * it knows when capacity returns), else back-off. 500 always backs off.
 */
export function delayFor(status: number, retryAfterSeconds: number | undefined, attempt: number, policy: RetryPolicy): number {
  if (status !== 500 && retryAfterSeconds !== undefined) return retryAfterSeconds * 1000;
  return backoffMs(attempt, policy);
}

/** Retry-After as seconds: the service sends integer seconds; an HTTP date (a proxy's) is tolerated. */
export function parseRetryAfter(value: string | null): number | undefined {
  if (value === null) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
