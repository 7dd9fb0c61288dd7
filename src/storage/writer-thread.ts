/**
 * A writer thread: group-committed batches written by a worker thread with its own connection
 * to the service's database file, so that a batch's inserts, its commit and the commit's fsync
 * never hold the event loop (docs/benchmarks.md, "How the figures moved": the verification log's writes were a third of an
 * organisation-tier verification's main thread, most of it the fsync).
 *
 * What it guarantees:
 * - `write(sql, rows)` resolves only after the transaction holding every row has committed with
 *   the service's pragmas (synchronous FULL: synced); it rejects, with none of the rows written,
 *   when that transaction fails (`WriterBusyError` when another connection held the write lock
 *   for the whole busy timeout).
 * - Batches commit one at a time, in the order `write` was called.
 * - The worker is started on the first write, never before (idle memory), and again after it
 *   died: a crash rejects what was in flight and queued, and the next write starts a new one.
 * - `close()` waits for everything written so far, then closes the connection and ends the thread.
 * - `releaseMemory()` has the thread, after the batches posted before it, give back its
 *   connection's page cache (`PRAGMA shrink_memory`: up to the page cache's budget, 64 MiB, which
 *   a busy log fills) and collect its heap; it writes nothing and changes no answer.
 * Only statements registered at creation may be run (the worker prepares them once).
 */
declare const DOCVERIFY_WRITER_WORKER: string | undefined;

/** The worker's entry point: embedded in the compiled binary (scripts/build.ts), else beside this file. */
export function writerWorkerUrl(): URL {
  if (typeof DOCVERIFY_WRITER_WORKER === "string") return new URL(DOCVERIFY_WRITER_WORKER, import.meta.url);
  return new URL("./writer-worker.ts", import.meta.url);
}

export type SqlValue = string | number | bigint | null | Uint8Array;

export type WorkerRequest =
  | { readonly type: "open"; readonly path: string; readonly statements: readonly string[]; readonly claims?: SharedArrayBuffer }
  /** `rows`, or `json`: the rows as JSON text when no value is a blob or bigint (one string crosses the thread faster than a cloned array of arrays). */
  | { readonly type: "batch"; readonly id: number; readonly sql: string; readonly rows?: readonly (readonly SqlValue[])[]; readonly json?: string }
  | { readonly type: "release" }
  | { readonly type: "close" };

export type WorkerReply =
  | { readonly type: "opened" }
  | { readonly type: "open-failed"; readonly message: string }
  | { readonly type: "committed"; readonly id: number }
  | { readonly type: "failed"; readonly id: number; readonly busy: boolean; readonly message: string }
  | { readonly type: "closed" };

/** Another connection held the write lock for the whole busy timeout. */
export class WriterBusyError extends Error {
  override readonly name = "WriterBusyError";
}

export interface WriterThread {
  write(sql: string, rows: readonly (readonly SqlValue[])[]): Promise<void>;
  /** Waits for every write so far, then closes the worker's connection and ends it. */
  close(): Promise<void>;
  /** Has a running thread give back its page cache and its heap's garbage (nothing when none runs). */
  releaseMemory(): void;
  /** Whether a worker is running now (tests, and idle memory). */
  readonly started: boolean;
}

export interface WriterThreadOptions {
  /** The database file (the main connection's); the worker opens it, never creates it. */
  readonly path: string;
  /** Every statement `write` may be given. */
  readonly statements: readonly string[];
  /**
   * The main connection's `DataVersion.claims`, when every statement only inserts rows that no read
   * kept under `others()` depends on (the verification log): the thread claims its commits there.
   */
  readonly claims?: SharedArrayBuffer;
  /** For tests only: another entry point. Default `writerWorkerUrl()`. */
  readonly entry?: URL;
}

interface Pending {
  readonly resolve: () => void;
  readonly reject: (e: unknown) => void;
}

/** Whether JSON carries every value exactly: strings, finite numbers and nulls only. */
function jsonSafe(rows: readonly (readonly SqlValue[])[]): boolean {
  for (const row of rows) {
    for (const v of row) {
      if (v !== null && typeof v !== "string" && !(typeof v === "number" && Number.isFinite(v))) return false;
    }
  }
  return true;
}

export function createWriterThread(options: WriterThreadOptions): WriterThread {
  const registered = new Set(options.statements);
  let worker: Worker | null = null;
  let nextId = 1;
  const pending = new Map<number, Pending>();
  let closing: { resolve: () => void } | null = null;
  let closed = false;

  function failAll(error: Error): void {
    const all = [...pending.values()];
    pending.clear();
    for (const p of all) p.reject(error);
  }

  function start(): Worker {
    const w = new Worker(options.entry ?? writerWorkerUrl());
    w.onmessage = (event: MessageEvent<WorkerReply>) => {
      const m = event.data;
      if (m.type === "committed" || m.type === "failed") {
        const p = pending.get(m.id);
        if (p === undefined) return;
        pending.delete(m.id);
        if (m.type === "committed") p.resolve();
        else p.reject(m.busy ? new WriterBusyError(m.message) : new Error(`writer thread: ${m.message}`));
      } else if (m.type === "open-failed") {
        stop(w, new Error(`writer thread could not open the database: ${m.message}`));
      } else if (m.type === "closed") {
        w.terminate();
        if (worker === w) worker = null;
        closing?.resolve();
        closing = null;
      }
    };
    w.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      stop(w, new Error(`writer thread failed: ${event.message}`));
    };
    w.postMessage({ type: "open", path: options.path, statements: [...registered], ...(options.claims === undefined ? {} : { claims: options.claims }) } satisfies WorkerRequest);
    // The thread never keeps the process alive on its own: serve's listener does that.
    w.unref();
    return w;
  }

  function stop(w: Worker, error: Error): void {
    if (worker === w) worker = null;
    w.terminate();
    failAll(error);
    closing?.resolve();
    closing = null;
  }

  return {
    get started() {
      return worker !== null;
    },
    write(sql, rows) {
      if (closed) return Promise.reject(new Error("the writer thread is closed"));
      if (!registered.has(sql)) return Promise.reject(new TypeError("statement not registered with the writer thread"));
      worker ??= start();
      const id = nextId++;
      const done = new Promise<void>((resolve, reject) => pending.set(id, { resolve, reject }));
      worker.postMessage((jsonSafe(rows) ? { type: "batch", id, sql, json: JSON.stringify(rows) } : { type: "batch", id, sql, rows }) satisfies WorkerRequest);
      return done;
    },
    releaseMemory() {
      worker?.postMessage({ type: "release" } satisfies WorkerRequest);
    },
    async close() {
      closed = true;
      const w = worker;
      if (w === null) return;
      // The worker answers "closed" after every batch posted before it: all of them settle first.
      const ended = new Promise<void>((resolve) => (closing = { resolve }));
      w.postMessage({ type: "close" } satisfies WorkerRequest);
      await ended;
    },
  };
}
