/**
 * Signing workers: a record's two ML-DSA signatures (and the check of each) off the calling
 * thread, which is the API's one JavaScript thread (signing and its checks were two fifths of
 * record creation's main thread: docs/benchmarks.md "Record creation"), and, while verification is busy, the signature
 * verifications a memo does not answer (`verifyMany`: two ML-DSA-65 verifications took 69 % of
 * that thread with the memo off). The parent side of sign-worker.ts.
 *
 * What a caller may assume:
 * - No worker runs before the first job, signing or verifying (idle memory); workers are added
 *   up to `size` while every running one is busy, and all of them stop after `idleMs` without a
 *   job (they start again on the next one). An idle worker does not keep the process alive.
 * - A job resolves with exactly what `signAndSealWith` on the calling thread returns for the same
 *   keys and payload (the worker runs that function: signer.ts), or rejects with its error: a
 *   `KeyDecryptionError` as such, anything else as an Error with the worker's message.
 * - A verification job resolves with, per call and in order, what `verify` on the calling thread
 *   answers (the worker runs the same `createPublicKeyVerifier`), or null where it threw.
 * - A worker that stops while it holds jobs (an uncaught error, the thread ending) rejects each
 *   of them with `SignWorkerError` and is replaced on the next job; no job is retried here, and
 *   none resolves twice.
 * - `close()` stops every worker and rejects the jobs they hold with `SignWorkerError`.
 *
 * Key material: a worker receives the seed-encryption key (derived from the master key, never
 * the master key itself; none on a node without a master key, whose workers only verify) once
 * when it starts, and each job's keys in their sealed form only. It opens a seed itself, keeps
 * the native private key in its own bounded cache exactly as the calling thread's signer does,
 * and zeroises the seed. A clear seed never crosses threads, and nothing here logs or puts key
 * bytes in an error message.
 */
import type { SealedKey, RecordSignatures, VerifyCall } from "./signer.ts";
import { KeyDecryptionError, type KeyDecryptionFailure } from "./errors.ts";

/**
 * Set by scripts/build.ts in the compiled executable: the worker's path relative to the bundle
 * root (`./crypto/sign-worker.ts`), where `bun build --compile` embeds that entry point.
 */
declare const DOCVERIFY_SIGN_WORKER: string | undefined;

/**
 * The worker's entry point, always an absolute URL (as the ledger's worker: src/local-ledger/
 * thread.ts): in the executable, the embedded file named from the executable's own URL; from
 * source, sign-worker.ts beside this file. Never a relative path, which Bun would load from the
 * working folder.
 */
export function signWorkerUrl(): URL {
  if (typeof DOCVERIFY_SIGN_WORKER === "string") return new URL(DOCVERIFY_SIGN_WORKER, import.meta.url);
  return new URL("./sign-worker.ts", import.meta.url);
}

/** Messages to a signing worker. */
export type ToSignWorker =
  | { readonly type: "init"; readonly encryptionKey: Uint8Array | null; readonly cacheSize: number; readonly publicKeyCacheSize: number }
  | { readonly type: "job"; readonly id: number; readonly signerKey: SealedKey; readonly sealKey: SealedKey & { readonly fingerprint: Uint8Array }; readonly recordPayload: Uint8Array }
  | { readonly type: "verify"; readonly id: number; readonly calls: readonly VerifyCall[] };

/** Messages from a signing worker. */
export type FromSignWorker =
  | { readonly type: "done"; readonly id: number; readonly signature: Uint8Array; readonly sealSignature: Uint8Array }
  | { readonly type: "verified"; readonly id: number; readonly results: readonly (boolean | null)[] }
  | { readonly type: "failed"; readonly id: number; readonly message: string; readonly keyDecryption?: { readonly reason: KeyDecryptionFailure; readonly keyId: string | null } };

/** A signing worker stopped while it held the job: nothing was signed for it. A 500, logged. */
export class SignWorkerError extends Error {
  override readonly name = "SignWorkerError";
}

export interface SignPoolOptions {
  /** Null on a node without a master key: its workers only verify. */
  readonly encryptionKey: Uint8Array | null;
  readonly size: number;
  /** The private-key cache of each worker. */
  readonly cacheSize: number;
  /** The imported public-key cache of each worker; default 1024. */
  readonly publicKeyCacheSize?: number;
  /** Milliseconds without a job after which every worker stops; default 30000. */
  readonly idleMs?: number;
  /** For tests only: another entry point (one that wraps sign-worker.ts). Default `signWorkerUrl()`. */
  readonly entry?: URL;
}

interface Job {
  readonly resolve: (reply: FromSignWorker) => void;
  readonly reject: (error: Error) => void;
}

interface PoolWorker {
  readonly worker: Worker;
  readonly jobs: Map<number, Job>;
  stopped: boolean;
}

export interface SignPool {
  signAndSeal(signerKey: SealedKey, sealKey: SealedKey & { readonly fingerprint: Uint8Array }, recordPayload: Uint8Array): Promise<RecordSignatures>;
  /** Each call's verification, in order: true or false as `verify` answers, null where it threw. */
  verifyMany(calls: readonly VerifyCall[]): Promise<(boolean | null)[]>;
  /** Workers running now. */
  running(): number;
  close(): void;
}

/** The one useful line of Bun's worker error text (which can carry a source excerpt above it). */
function errorText(event: Event): string {
  const e = event as ErrorEvent;
  if (e.error instanceof Error) return e.error.message;
  const text = String(e.message ?? "unknown error");
  return (text.split("\n").find((l) => l.trim() !== "") ?? text).trim();
}

export function createSignPool(options: SignPoolOptions): SignPool {
  const { encryptionKey, size, cacheSize } = options;
  const idleMs = options.idleMs ?? 30_000;
  if (!Number.isSafeInteger(size) || size < 1) throw new RangeError("size must be a positive integer");
  const workers: PoolWorker[] = [];
  let nextId = 1;
  let idleTimer: ReturnType<typeof setTimeout> | null = null;

  function stop(w: PoolWorker, why: string): void {
    if (w.stopped) return;
    w.stopped = true;
    const at = workers.indexOf(w);
    if (at >= 0) workers.splice(at, 1);
    w.worker.terminate();
    for (const job of w.jobs.values()) job.reject(new SignWorkerError(`signing worker stopped: ${why}`));
    w.jobs.clear();
  }

  function start(): PoolWorker {
    const worker = new Worker(options.entry ?? signWorkerUrl(), { smol: true });
    const w: PoolWorker = { worker, jobs: new Map(), stopped: false };
    worker.addEventListener("message", (event: MessageEvent<FromSignWorker>) => {
      const reply = event.data;
      const job = w.jobs.get(reply.id);
      if (job === undefined) return;
      w.jobs.delete(reply.id);
      if (w.jobs.size === 0) worker.unref();
      if (reply.type !== "failed") job.resolve(reply);
      else job.reject(reply.keyDecryption !== undefined ? new KeyDecryptionError(reply.keyDecryption.reason, reply.keyDecryption.keyId) : new Error(reply.message));
      armIdle();
    });
    worker.addEventListener("error", (event) => {
      event.preventDefault();
      stop(w, errorText(event));
      armIdle();
    });
    worker.addEventListener("close", () => {
      stop(w, "its thread ended");
      armIdle();
    });
    worker.postMessage({ type: "init", encryptionKey, cacheSize, publicKeyCacheSize: options.publicKeyCacheSize ?? 1024 } satisfies ToSignWorker);
    worker.unref();
    workers.push(w);
    return w;
  }

  function armIdle(): void {
    if (workers.some((w) => w.jobs.size > 0)) return;
    if (idleTimer !== null) clearTimeout(idleTimer);
    idleTimer = setTimeout(() => {
      idleTimer = null;
      if (workers.some((w) => w.jobs.size > 0)) return;
      for (const w of [...workers]) stop(w, "idle");
    }, idleMs);
    idleTimer.unref();
  }

  /** The least busy worker; a new one while every running one is busy and the pool is not full. */
  function pick(): PoolWorker {
    let best: PoolWorker | undefined;
    for (const w of workers) if (best === undefined || w.jobs.size < best.jobs.size) best = w;
    if (best === undefined || (best.jobs.size > 0 && workers.length < size)) return start();
    return best;
  }

  /** Sends `message(id)` to the least busy worker; resolves with its reply. */
  function submit(message: (id: number) => ToSignWorker): Promise<FromSignWorker> {
    if (idleTimer !== null) {
      clearTimeout(idleTimer);
      idleTimer = null;
    }
    const w = pick();
    const id = nextId++;
    return new Promise<FromSignWorker>((resolve, reject) => {
      w.jobs.set(id, { resolve, reject });
      if (w.jobs.size === 1) w.worker.ref();
      w.worker.postMessage(message(id));
    });
  }

  return {
    async signAndSeal(signerKey, sealKey, recordPayload) {
      // Plain copies of the sealed keys: a caller's object may carry more fields than a worker needs.
      const reply = await submit((id) => ({
        type: "job",
        id,
        signerKey: { algorithm: signerKey.algorithm, publicKey: signerKey.publicKey, purpose: signerKey.purpose, sealedSeed: signerKey.sealedSeed, ...(signerKey.fingerprint === undefined ? {} : { fingerprint: signerKey.fingerprint }) },
        sealKey: { algorithm: sealKey.algorithm, publicKey: sealKey.publicKey, purpose: sealKey.purpose, sealedSeed: sealKey.sealedSeed, fingerprint: sealKey.fingerprint },
        recordPayload,
      }));
      if (reply.type !== "done") throw new Error(`signing worker answered a signing job with ${reply.type}`);
      return { signature: reply.signature, sealSignature: reply.sealSignature };
    },
    async verifyMany(calls) {
      // Plain copies, as above.
      const reply = await submit((id) => ({
        type: "verify",
        id,
        calls: calls.map((c) => ({ algorithm: c.algorithm, publicKey: c.publicKey, message: c.message, signature: c.signature })),
      }));
      if (reply.type !== "verified" || reply.results.length !== calls.length) throw new Error("signing worker answered a verification job with something else");
      return [...reply.results];
    },
    running: () => workers.length,
    close() {
      if (idleTimer !== null) clearTimeout(idleTimer);
      idleTimer = null;
      for (const w of [...workers]) stop(w, "the signer was closed");
    },
  };
}
