/**
 * The anchor journal's public module: what records/, persons/ and `docverify status` use without
 * loading the loop or the ledger SDK. The journal's port and its contract (states, exactly-once,
 * crash-safety, fencing on PostgreSQL) are in journal/ports.ts; the rules every engine applies
 * alike in journal/rules.ts; the drivers in storage/sqlite/journal.ts and
 * storage/postgres/journal.ts (each engine's drivers.ts).
 *
 * A `pending` message row is written by the caller in the transaction that writes its record (or
 * revocation, or enrolled person), here; the loop is woken after commit.
 */
import { and, asc, count, desc, eq, inArray, isNotNull, min, sql } from "drizzle-orm";
import type { Db } from "../storage/db.ts";
import { ledgerTransactions } from "../storage/schema.ts";
import { INSERT_OPEN_BATCH, INSERT_PENDING_MESSAGE, JOIN_OPEN_BATCH, JOIN_OPEN_REVOCATION_BATCH, RECORD_TO_BATCH, REVOCATION_TO_BATCH } from "../storage/statements.ts";
import { changes, firstRow, q, type Body, type Op, type StoreDb, type Tables } from "../storage/store.ts";
import type { BatchPolicy } from "./journal/ports.ts";
import { checkLength, pendingValues } from "./journal/rules.ts";
import type { NewTransaction } from "./transaction-ids.ts";

export type { Changed, ConfirmedFields, Journal, LedgerTransactionRow, TransactionKind, TransactionState } from "./journal/ports.ts";
export type { Maybe } from "../lib/maybe.ts";

/** Anything that can insert: the Db or a transaction handle inside `db.transaction(...)`. */
export type Writer = Pick<Db, "insert">;

/** What a ledger message row carries besides its id. */
interface MessageFields {
  readonly orgId: string;
  readonly recordId: string;
  readonly topicId: string;
  readonly message: Uint8Array;
}

function insertPending(tx: Writer, id: NewTransaction, row: Parameters<typeof pendingValues>[1], now: number): void {
  tx.insert(ledgerTransactions).values(pendingValues(id, row, now)).run();
}

function checkMessage(input: { readonly kind: string; readonly message: Uint8Array; readonly keyFingerprint?: Uint8Array }): void {
  checkLength(input.message);
  if (input.keyFingerprint !== undefined && input.kind !== "record_message") throw new TypeError("only a record message waits for its key's announcement");
}

/** `insertPendingPersonKeyAnnouncement` as a step of a store operation, on either engine. */
export function* pendingPersonKeyAnnouncement(tx: StoreDb, t: Tables, input: PersonKeyAnnouncement): Op<void> {
  yield* q(tx.insert(t.ledgerTransactions).values(personKeyAnnouncementValues(input)));
}

/**
 * A record's or revocation's message as a step of a store operation, on either engine
 * (storage/store.ts), in the transaction that writes the record or its revocation: a leaf of its
 * organisation's open batch for the record's signer key and seal key (for a revocation: its open
 * batch of revocations), made when none has room (docs/anchoring.md "Batches"). The record (or
 * its revocation) then carries the batch's transaction id, which the step returns. With a batch
 * window of 0, or `batchLeaf: 0`, a message sent on its own, as every one was before batches; its
 * own id is returned.
 */
export function* pendingMessage(
  _tx: StoreDb,
  _t: Tables,
  input: Parameters<typeof insertPendingMessage>[1] & {
    /** A record message: the seal key that sealed its record (its batch's). */
    readonly sealFingerprint?: Uint8Array;
    /** How batches are joined, and where a new batch's transaction id comes from. */
    readonly batches?: { readonly policy: BatchPolicy; newBatchId(): NewTransaction };
    readonly batchLeaf?: 0 | 1;
  },
): Op<string> {
  checkMessage(input);
  // A batch window of 0 (DOCVERIFY_BATCH_WINDOW_MS=0): no batches, each message its own, as before batches.
  const leaf = (input.batchLeaf ?? (input.batches?.policy.windowMs === 0 ? 0 : 1)) === 1;
  let batchId: string | null = null;
  if (leaf) {
    const batches = input.batches;
    if (batches === undefined) throw new TypeError("a batch leaf needs the batch policy");
    const revocation = input.kind === "revocation_message";
    if (!revocation && (input.keyFingerprint === undefined || input.sealFingerprint === undefined)) throw new TypeError("a record message's leaf names its key and seal key");
    const max = revocation ? Math.min(batches.policy.max, batches.policy.maxRevocations) : batches.policy.max;
    const joined = revocation
      ? yield* q(firstRow(JOIN_OPEN_REVOCATION_BATCH, input.orgId, max, input.now))
      : yield* q(firstRow(JOIN_OPEN_BATCH, input.orgId, input.keyFingerprint!, input.sealFingerprint!, max, input.now));
    if (joined !== undefined) batchId = joined.transaction_id;
    else {
      const id = batches.newBatchId();
      const key = revocation ? null : input.keyFingerprint!;
      const seal = revocation ? null : input.sealFingerprint!;
      yield* q(changes(INSERT_OPEN_BATCH, id.transactionId, input.orgId, input.topicId, key, seal, id.validStartMs, id.validSeconds, input.now + batches.policy.windowMs, input.now, input.now));
      batchId = id.transactionId;
    }
  }
  const v = pendingValues(input, { ...input, batchLeaf: leaf ? 1 : 0 }, input.now);
  yield* q(
    changes(INSERT_PENDING_MESSAGE, v.transactionId, v.kind, v.orgId, v.recordId, v.topicId, v.message, v.keyFingerprint, v.signedBytes, v.validStartMs, v.validSeconds, v.state, v.attempts, v.nextAttemptAt, v.createdAt, v.updatedAt, v.batchLeaf, batchId),
  );
  if (batchId === null) return v.transactionId;
  yield* q(changes(input.kind === "record_message" ? RECORD_TO_BATCH : REVOCATION_TO_BATCH, batchId, input.recordId, v.transactionId));
  return batchId;
}

/**
 * Writes a `pending` message row the way the loop expects it. Call it inside the same
 * transaction that writes the record (or the revocation), then wake the loop after commit.
 */
export function insertPendingMessage(
  tx: Writer,
  input: NewTransaction &
    MessageFields & {
      readonly kind: "record_message" | "revocation_message";
      /** ms since the epoch (the caller's clock). */
      readonly now: number;
      /**
       * A record message only: the key that signed it (the person's, or the organisation's),
       * whose announcement must be anchored before the message goes (`ANNOUNCED`). Absent: the
       * organisation's current key's (rows written before messages named their key).
       */
      readonly keyFingerprint?: Uint8Array;
    },
): void {
  checkMessage(input);
  insertPending(tx, input, input, input.now);
}

/**
 * Writes the `pending` announcement of a person's key (docs/persons.md "What enrolling creates") on
 * their organisation's topic, in the transaction that enrols them: a new key, so never a duplicate.
 * Their record messages wait for it to be anchored; abandoned, it is queued again like any
 * announcement.
 */
export function insertPendingPersonKeyAnnouncement(tx: Writer, input: PersonKeyAnnouncement): void {
  tx.insert(ledgerTransactions).values(personKeyAnnouncementValues(input)).run();
}

type PersonKeyAnnouncement = NewTransaction & {
  readonly orgId: string;
  readonly topicId: string;
  readonly message: Uint8Array;
  readonly keyFingerprint: Uint8Array;
  /** The seal key the message names. */
  readonly sealFingerprint: Uint8Array;
  readonly now: number;
};

/** The pending row of a person's key announcement, for both forms above. */
function personKeyAnnouncementValues(input: PersonKeyAnnouncement) {
  checkLength(input.message);
  return pendingValues(input, { kind: "key_announcement", orgId: input.orgId, recordId: null, topicId: input.topicId, message: input.message, keyFingerprint: input.keyFingerprint, sealFingerprint: input.sealFingerprint }, input.now);
}

/** What `docverify status` reports about the queue. Works on any process's view of the database. */
/** What `docverify status` shows of the queue, as a read operation on either engine (storage/store.ts). */
export function queueSummary(nowMs: number): Body<QueueSummary> {
  return function* (db, t) {
    const lt = t.ledgerTransactions;
    // Ledger messages (a batch is one; its leaves are counted with it, below).
    const byState = yield* q(db.select({ state: lt.state, n: count() }).from(lt).where(eq(lt.batchLeaf, 0)).groupBy(lt.state));
    const batchRows = yield* q(
      db
        .select({ state: lt.state, n: count(), leaves: sql<number>`coalesce(sum(${lt.batchSize}), 0)`.mapWith(Number), oldest: min(lt.createdAt) })
        .from(lt)
        .where(eq(lt.kind, "batch_message"))
        .groupBy(lt.state),
    );
    const [oldest] = yield* q(
      db
        .select({ id: lt.transactionId, kind: lt.kind, state: lt.state, createdAt: lt.createdAt })
        .from(lt)
        .where(and(inArray(lt.state, ["open", "pending", "accepted"]), eq(lt.batchLeaf, 0)))
        .orderBy(asc(lt.createdAt))
        .limit(1),
    );
    const [lastError] = yield* q(
      db
        .select({ id: lt.transactionId, state: lt.state, error: lt.lastError, at: lt.updatedAt })
        .from(lt)
        .where(isNotNull(lt.lastError))
        .orderBy(desc(lt.updatedAt))
        .limit(1),
    );
    const n = (s: string) => byState.find((r) => r.state === s)?.n ?? 0;
    const b = (s: string) => batchRows.find((r) => r.state === s);
    const waiting = ["open", "pending", "accepted"].map(b).filter((r) => r !== undefined);
    const oldestWaiting = waiting.reduce<number | null>((at, r) => (r.oldest === null ? at : at === null ? Number(r.oldest) : Math.min(at, Number(r.oldest))), null);
    const anchored = b("anchored");
    return {
      batches: {
        open: b("open")?.n ?? 0,
        waiting: waiting.reduce((sum, r) => sum + r.n, 0),
        waitingLeaves: waiting.reduce((sum, r) => sum + r.leaves, 0),
        oldestWaitingSeconds: oldestWaiting === null ? null : Math.max(0, Math.round((nowMs - oldestWaiting) / 1000)),
        anchored: anchored?.n ?? 0,
        anchoredLeaves: anchored?.leaves ?? 0,
      },
      pending: n("pending"),
      accepted: n("accepted"),
      anchored: n("anchored"),
      abandoned: n("abandoned"),
      oldestUnfinished: oldest === undefined ? null : { transactionId: oldest.id, kind: oldest.kind, state: oldest.state, ageSeconds: Math.max(0, Math.round((nowMs - oldest.createdAt) / 1000)) },
      lastError: lastError === undefined ? null : { transactionId: lastError.id, state: lastError.state, error: lastError.error!, at: new Date(lastError.at).toISOString() },
    };
  };
}

export interface QueueSummary {
  /**
   * Batches (docs/anchoring.md "Batches"): still open; waiting (open, or closed and not yet
   * anchored) with their leaves and the age of the oldest; anchored with their leaves.
   */
  readonly batches: {
    readonly open: number;
    readonly waiting: number;
    readonly waitingLeaves: number;
    readonly oldestWaitingSeconds: number | null;
    readonly anchored: number;
    readonly anchoredLeaves: number;
  };
  /** Ledger messages (a batch is one) by state. */
  readonly pending: number;
  readonly accepted: number;
  readonly anchored: number;
  readonly abandoned: number;
  readonly oldestUnfinished: { readonly transactionId: string; readonly kind: string; readonly state: string; readonly ageSeconds: number } | null;
  readonly lastError: { readonly transactionId: string; readonly state: string; readonly error: string; readonly at: string } | null;
}
