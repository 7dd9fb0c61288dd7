/**
 * The verification log (docs/verification.md, "The log"): one row per successful credentialed
 * verification, kept per organisation and environment. Written once for every engine over the
 * `LogStore` port (ports.ts); its drivers are src/storage/{sqlite,postgres}/log-store.ts.
 *
 * What this MUST guarantee (and callers may assume):
 * - Durable before acknowledged: `record()` resolves only after the transaction holding its row
 *   has committed (`LogStore.append`), so a response sent after it cannot name a row that a crash
 *   loses. Rows from concurrent callers are grouped into one transaction (group commit) of at
 *   most `maxBatch` rows; if that transaction fails, every caller in it is rejected and none of
 *   its rows exist. One batch is in flight at a time: rows arriving meanwhile form the next.
 * - Where the store appends synchronously (SQLite on the calling thread), a batch is written when
 *   it is full or at the next turn of the event loop; where it answers with a promise (SQLite's
 *   writer thread, src/storage/writer-thread.ts, whose inserts, commit and fsync never hold the
 *   event loop; PostgreSQL), when the batch before it has settled.
 * - Ids are UUIDv7 (ids.ts) and strictly increasing in the order `record()` is called within this
 *   process, and (seeded from the newest stored id before the first is handed out) across
 *   restarts, even if the clock steps back. Batches commit one at a time, in order, so a reader
 *   never sees a row while an older row of this process is still to come. A row's `verifiedAt` is
 *   its id's timestamp.
 * - Listing is keyset pagination, newest first (`id < last id`): rows recorded while a client
 *   pages have larger ids, so they never appear on a later page nor shift rows between pages.
 *   Ids are ordered as bytes on both engines, so a cursor (cursor.ts) made by one node is accepted
 *   by every node of the database with the same `cursorKey` (it is kept in the database). Two
 *   nodes' ids interleave by their clocks, so on PostgreSQL "never behind a page already read"
 *   holds for the rows of one node, and across nodes only as far as their clocks agree and their
 *   batches commit in time (a few milliseconds).
 * - `list`, `listJson` and `get` answer synchronously when the store reads synchronously (SQLite),
 *   with a promise otherwise. Where the store can tell whether anything was committed since
 *   (`LogStore.kept`), pages are kept in memory (kept-pages.ts).
 * - A storage fault the store reports as busy or unavailable (lib/storage-faults.ts) is answered
 *   as 503 SERVICE_UNAVAILABLE, Retry-After 1.
 */
import type { Clock } from "../../lib/clock.ts";
import { rfc3339Ms } from "../../lib/formats.ts";
import type { NamedCache } from "../../lib/lru.ts";
import { mapMaybe, settleMaybe } from "../../lib/maybe.ts";
import { isBusy, isUnavailable } from "../../lib/storage-faults.ts";
import type { Environment, RecordedVerification } from "../types.ts";
import { createCursorCodec } from "./cursor.ts";
import { createIdGenerator } from "./ids.ts";
import { createKeptPages } from "./kept-pages.ts";
import { checkId, malformed, pageJson, pageList, pageOf, pageQuery, recorded, rowOf, serviceBusy, type ListInput, type ListPage, type VerificationLogRow } from "./page.ts";
import type { LogRow, LogStore, SyncLogStore } from "./ports.ts";

export interface VerificationLogDeps {
  /** The log's storage (src/storage/engine-drivers.ts). */
  readonly store: LogStore;
  readonly clock: Clock;
  /** 32-byte server-side secret that authenticates cursors. */
  readonly cursorKey: Uint8Array;
  /** Rows per transaction at most; a full batch is written at once (when none is in flight). Default 256. */
  readonly maxBatch?: number;
}

export interface VerificationLog {
  record(row: VerificationLogRow): Promise<{ verificationId: string; verifiedAt: string }>;
  /** At once on SQLite, a promise on PostgreSQL (as `listJson` and `get`). */
  list(input: ListInput): ListPage | Promise<ListPage>;
  /** `JSON.stringify(list(input))`, written from the rows without building the page's objects. */
  listJson(input: ListInput): string | Promise<string>;
  get(input: { orgId: string; environment: Environment; verificationId: string }): RecordedVerification | Promise<RecordedVerification>;
  /**
   * Writes whatever is queued now (its callers' promises settle as usual). Where the store appends
   * synchronously this is synchronous; otherwise the promise settles once every row recorded so
   * far is committed (or its batch failed). Never rejects.
   */
  flush(): Promise<void>;
  /** Flushes, then closes the store's driver (its writer thread, if any). Call before closing the database at shutdown. */
  close(): Promise<void>;
  /** Transactions and rows written so far (for tests and metrics). */
  stats(): { readonly batches: number; readonly rows: number; readonly failedBatches: number };
  /** What it keeps in memory, each with its size and budget (/metrics), and emptied when the service goes quiet. */
  caches(): readonly NamedCache[];
  /**
   * Gives back what its store's driver holds beyond its work (SQLite's writer thread: that
   * connection's page cache and its heap's garbage), when the service has gone quiet.
   */
  releaseMemory(): void;
}

/** The log over a store that reads synchronously (SQLite): pages and rows answered at once. */
export interface SqliteVerificationLog extends VerificationLog {
  list(input: ListInput): ListPage;
  listJson(input: ListInput): string;
  get(input: { orgId: string; environment: Environment; verificationId: string }): RecordedVerification;
}

interface Pending {
  readonly row: LogRow;
  resolve(v: { verificationId: string; verifiedAt: string }): void;
  reject(e: unknown): void;
}

function checkDeps(deps: VerificationLogDeps): { maxBatch: number; cursorKey: Uint8Array } {
  const maxBatch = deps.maxBatch ?? 256;
  if (!Number.isSafeInteger(maxBatch) || maxBatch < 1) throw new RangeError("maxBatch must be a positive integer");
  if (!(deps.cursorKey instanceof Uint8Array) || deps.cursorKey.length !== 32) throw new TypeError("cursorKey must be 32 bytes");
  // Our own copy: a caller zeroing theirs changes nothing.
  return { maxBatch, cursorKey: new Uint8Array(deps.cursorKey) };
}

/** What a caller is told of a storage fault: 503 when the store is busy or not there, the error itself otherwise. */
const refusal = (e: unknown): unknown => (isBusy(e) || isUnavailable(e) ? serviceBusy(e) : e);

export function createVerificationLog(deps: VerificationLogDeps & { readonly store: SyncLogStore }): SqliteVerificationLog;
export function createVerificationLog(deps: VerificationLogDeps): VerificationLog;
export function createVerificationLog(deps: VerificationLogDeps): VerificationLog {
  const { store, clock } = deps;
  const { maxBatch, cursorKey } = checkDeps(deps);
  const cursors = createCursorCodec(cursorKey);
  const kept = store.kept === null ? null : createKeptPages(store.kept, cursors);

  /**
   * Ids start above the newest stored one, read before the first id is handed out: rows recorded
   * meanwhile wait for it, in the order they came. A failed read is tried again by the next row.
   */
  let nextId: ReturnType<typeof createIdGenerator> | null = null;
  /** The read of the newest id while it is awaited (and once done); null when it answered at once or failed. */
  let seeding: Promise<void> | null = null;
  const seed = (): Promise<void> | null =>
    (seeding ??= settleMaybe(
      () => store.newestId(),
      (newest) => {
        nextId ??= createIdGenerator(clock, newest);
      },
      (e) => {
        seeding = null;
        throw refusal(e);
      },
    ));

  let queue: Pending[] = [];
  let scheduled = false;
  let batches = 0;
  let written = 0;
  let failedBatches = 0;
  /** The batch being written, settled (never rejected) when it is done; null when none. */
  let inFlight: Promise<void> | null = null;

  function settle(batch: readonly Pending[]): void {
    batches++;
    written += batch.length;
    for (const p of batch) p.resolve({ verificationId: p.row.id, verifiedAt: rfc3339Ms(p.row.verified_at_ms) });
  }

  function fail(batch: readonly Pending[], e: unknown): void {
    failedBatches++;
    const err = refusal(e);
    for (const p of batch) p.reject(err);
  }

  /**
   * Writes the queue, `maxBatch` rows per transaction, unless a batch is in flight (its end sends
   * the next). A store that appends synchronously writes them all now, one at a time, in order.
   */
  function writeQueued(): void {
    scheduled = false;
    while (inFlight === null && queue.length > 0) {
      const batch = queue.length <= maxBatch ? queue : queue.slice(0, maxBatch);
      queue = batch === queue ? [] : queue.slice(maxBatch);
      const pending = settleMaybe(
        () => store.append(batch.map((p) => p.row)),
        () => settle(batch),
        (e) => fail(batch, e),
      );
      if (pending !== null) {
        inFlight = pending.then(() => {
          inFlight = null;
          // Rows recorded while this batch was written: the next batch, at once.
          writeQueued();
        });
      }
    }
  }

  function schedule(): void {
    if (scheduled || inFlight !== null) return;
    scheduled = true;
    // setImmediate runs after the I/O callbacks already due: requests that arrived while the last
    // batch was syncing are queued first and share the next transaction.
    setImmediate(writeQueued);
  }

  function enqueue(row: LogRow): Promise<{ verificationId: string; verifiedAt: string }> {
    const done = new Promise<{ verificationId: string; verifiedAt: string }>((resolve, reject) => queue.push({ row, resolve, reject }));
    if (inFlight !== null) return done; // joins a batch after the one in flight
    if (queue.length >= maxBatch) writeQueued();
    else schedule();
    return done;
  }

  async function flush(): Promise<void> {
    // Rows recorded before the first id could be handed out join the queue once it can.
    if (seeding !== null) await seeding.then(() => new Promise((resolve) => setImmediate(resolve)), () => {});
    writeQueued();
    while (inFlight !== null || queue.length > 0) {
      if (inFlight === null) writeQueued();
      await inFlight;
      // The in-flight batch's end sent what was queued behind it; wait for that one too.
      await Promise.resolve();
    }
  }

  const readPage = (input: ListInput) => {
    const query = pageQuery(input, cursors);
    return mapMaybe(store.page(query.rows), (found) => pageOf(found, query, cursors));
  };

  const log: VerificationLog = {
    record(input) {
      // Checked first, so one caller's bad row cannot fail the batch it would share with others.
      const probe = rowOf(input, "", 0);
      if (probe === null) return malformed();
      const make = (): Promise<{ verificationId: string; verifiedAt: string }> => {
        const { id, ms } = nextId!();
        return enqueue({ ...probe, id, verified_at_ms: ms });
      };
      if (nextId !== null) return make();
      let seeded: Promise<void> | null;
      try {
        seeded = seed();
      } catch (e) {
        return Promise.reject(e);
      }
      return seeded === null ? make() : seeded.then(make);
    },

    list: (input) => (kept !== null ? pageList(kept.readPage(input)) : mapMaybe(readPage(input), pageList)),
    listJson: (input) => (kept !== null ? kept.listJson(input) : mapMaybe(readPage(input), (found) => pageJson(found))),

    get(input) {
      checkId(input.verificationId);
      return mapMaybe(store.row(input.verificationId, input.orgId, input.environment), recorded);
    },

    flush,

    async close() {
      await flush();
      await store.close();
    },

    stats() {
      return { batches, rows: written, failedBatches };
    },

    caches: () => kept?.caches() ?? [],

    releaseMemory() {
      store.releaseMemory();
    },
  };
  return log;
}
