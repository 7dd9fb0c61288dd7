/**
 * The anchor journal's port: `ledger_transactions` as queue and crash journal, and every change to
 * it. The anchor loop (anchorer.ts) decides, the journal writes. Implemented per engine by
 * storage/sqlite/journal.ts (synchronous, group-committed with record writes) and
 * storage/postgres/journal.ts (every change fenced by the anchor loop's leader's epoch), given by
 * each engine's drivers.ts. Types only.
 *
 * States (docs/anchoring.md, "States"):
 *
 *     pending ──▶ accepted ──▶ anchored
 *        │           │
 *        └───────────┴──▶ abandoned
 *
 * What every implementation MUST guarantee (each method's comment adds its own):
 * - Every state change is atomic and guarded by the row's current state: a change to a row that
 *   moved on (another worker, a replay after a crash) changes nothing and reports null. Rows only
 *   move forward; `anchored` and `abandoned` are final.
 * - A `record_message` row's record follows it in the same transaction: `anchor_state`, and on
 *   consensus `sequence_number` and `consensus_at`. The record is found by its primary key and
 *   still carrying the row's transaction id (or, without a record id, by the transaction id):
 *   never a scan of the records table; a record that no longer carries the transaction is left
 *   alone.
 * - An abandoned `revocation_message` (an acknowledged revocation) is queued again, same bytes
 *   under a new transaction id, with `records.revocation_transaction_id` moved to it, in the
 *   transaction that abandons it: a revocation is never lost. An abandoned `key_announcement`
 *   likewise (same bytes, key fingerprint and generation, new id).
 * - Key announcements (docs/anchoring.md "Key announcements"): at most one live (not abandoned)
 *   per organisation, key and announcement generation (the unique index
 *   `ledger_transactions_one_announcement`), whichever process or pass queues it; a refusal by
 *   that index is an answer (null), never an error, and never aborts the caller's transaction.
 *   An announcement built at another generation than the organisation's is never queued. A
 *   `record_message` row is never returned by `due` until an `anchored` announcement of the key it
 *   waits for exists (its `key_fingerprint`, or else its organisation's current system key), of
 *   any generation. One found waiting is set aside (`JournalRules.waitingRecheckMs`) and made due
 *   again at once when an announcement of its organisation is anchored.
 * - Reschedules and set-aside rows are hints, not journal entries: kept in memory and written by
 *   `flush`, which runs before the queue is read again (`unfinished`, `due`, `nextDueAt`,
 *   `unsentPastCutoff`, `topicsAwaitingConfirmation`), so no row is picked up on a stale due time.
 * - On PostgreSQL (several nodes, one database): every change runs in a transaction that first
 *   checks, under a lock on the leader row, that this node's epoch is still the leader's, and
 *   refuses (rejects) otherwise, changing nothing; a node that does not lead (epoch null) is refused
 *   at once, and drops its hints. Reads are not fenced. A unique index's refusal is written as
 *   `ON CONFLICT DO NOTHING` (a failed statement would abort the transaction).
 * - On SQLite: nothing awaits inside a transaction (an async bun:sqlite transaction commits at its
 *   first `await`); each change is its own IMMEDIATE transaction, or a savepoint of the
 *   store's group commit (`grouped`).
 *
 * - Batches (docs/anchoring.md "Batches"): a record or revocation message the records
 *   capability queues is a leaf (`batch_leaf` 1) of an open batch, joined in the record's own
 *   transaction (`pendingMessage`, anchoring/queue.ts): a `batch_message` row in state `open`,
 *   one per organisation, signer key and seal key (revocations: neither), whose transaction id the
 *   record carries from then on. A leaf is never submitted itself: never returned by `due`,
 *   `unfinishedMessage`, `topicsAwaitingConfirmation`, `unsentPastCutoff` or `nextDueAt`, never
 *   touched by `retryAllNow` or an announcement's wake-up; it follows its batch. An open batch is
 *   never `due`: `closeBatch` makes it `pending` with its message once its window has passed
 *   (its `next_attempt_at`, which `nextDueAt` counts) or it is full; `unsentPastCutoff` returns one
 *   whose validity window closes first. A batch's message goes once its key is announced and
 *   anchored with its seal key (`ANNOUNCED`). A batch's state changes carry its leaves and their
 *   records in the same transaction (`grouped.toAccepted`, `grouped.toAnchoredMessage`,
 *   `abandon`). `unfinished` counts an open or pending batch as its number of leaves, pending.
 *
 * What a caller may assume after a crash:
 * - Every committed state change holds, with its record's; an uncommitted one never happened.
 * - A `pending` row with signed bytes and `attempts ≥ 1` may have reached a node: send the same
 *   bytes again, or settle it once its window has closed. With `attempts = 0` and bytes, every
 *   submission was refused before anything was sent. A lost take-back leaves one attempt too
 *   many: the safe side.
 * - A lost reschedule leaves the row due at once: it is looked at again sooner, never later.
 * - `accepted` means the ledger took the bytes: only the receipt or the mirror node decides.
 */
import type { Clock } from "../../lib/clock.ts";
import type { Maybe } from "../../lib/maybe.ts";
import type { ledgerTransactions } from "../../storage/schema.ts";
import type { QueueCounts } from "../back-pressure.ts";
import type { NewTransaction } from "../transaction-ids.ts";
import type { CompromisedKey, KeyAnnouncement, PersonKeyAnnouncement } from "../types.ts";

export type { CompromisedKey, KeyAnnouncement, NewTransaction, PersonKeyAnnouncement, QueueCounts };

export type LedgerTransactionRow = typeof ledgerTransactions.$inferSelect;
export type TransactionKind = LedgerTransactionRow["kind"];
export type TransactionState = LedgerTransactionRow["state"];

/** What the mirror node confirmed of an anchored message. */
export type ConfirmedFields = { readonly sequenceNumber: number; readonly consensusAt: string; readonly runningHash: Uint8Array };

/** A state change's outcome: when it was made (the row's new `updated_at`), or null if the row had moved on. */
export type Changed = number | null;

/** What a new row is made of besides its id (`JournalRules.pendingRow`). */
export interface PendingFields {
  readonly kind: TransactionKind;
  readonly orgId: string;
  readonly recordId: string | null;
  readonly topicId: string | null;
  readonly message: Uint8Array | null;
  readonly keyFingerprint?: Uint8Array | null;
  /** A key announcement's generation (`KeyAnnouncement.generation`); 0 otherwise. */
  readonly announcementGeneration?: number;
  /** A key announcement's seal key (`KeyAnnouncement.sealFingerprint`); null otherwise. */
  readonly sealFingerprint?: Uint8Array | null;
  /** 1: a leaf of a batch (a record or revocation message anchored in a batch message); default 0. A row queued again keeps its predecessor's. */
  readonly batchLeaf?: number;
  /** A batch message's batch sequence and number of leaves; null otherwise. */
  readonly batchSequence?: number | null;
  readonly batchSize?: number | null;
}

/** The values of a new `pending` row, as both engines insert them (blobs as Buffers). */
export type PendingRow = Omit<LedgerTransactionRow, "sequenceNumber" | "consensusAt" | "runningHash" | "lastError">;

/** A batch's leaf as `closeBatch` hands it to its builder. */
export interface BatchLeaf {
  readonly kind: "record_message" | "revocation_message";
  readonly recordId: string;
  readonly message: Uint8Array;
}

/**
 * Builds a closing batch's message and every leaf's inclusion path (the loop's, anchoring/loop/
 * batcher.ts): pure and synchronous, called inside the journal's transaction.
 */
export type BatchBuilder = (batch: { readonly orgId: string; readonly sequence: number; readonly leaves: readonly BatchLeaf[] }) => {
  readonly message: Uint8Array;
  readonly paths: readonly Uint8Array[];
};

/** How records and revocations join batches (DOCVERIFY_BATCH_WINDOW_MS, DOCVERIFY_BATCH_MAX). */
export interface BatchPolicy {
  /** How long an open batch takes leaves, from its first. */
  readonly windowMs: number;
  /** At most this many leaves in one batch. */
  readonly max: number;
  /** At most this many in a batch of revocations, whose message lists them (journal/rules.ts `MAX_REVOCATIONS_PER_BATCH`). */
  readonly maxRevocations: number;
}

/** The unfinished rows a caller is working on: `due` leaves them out. */
export interface Busy {
  readonly size: number;
  has(transactionId: string): boolean;
}

/**
 * What a driver takes from the capability: the engine-independent rules, written once in
 * anchoring/journal/rules.ts. Every function is pure and synchronous.
 */
export interface JournalRules {
  readonly clock: Clock;
  /** Ids for the rows the journal queues itself (a revocation or announcement queued again, a topic creation, an announcement). MUST be unique. */
  newTransactionId(): NewTransaction;
  /** The `pending` row of a new transaction, due at `nextAttemptAt` (default `now`). */
  pendingRow(id: NewTransaction, fields: PendingFields, now: number, nextAttemptAt?: number): PendingRow;
  /** Throws a TypeError for a message that is not 1 to 1024 bytes, before anything is written. */
  checkLength(message: Uint8Array): void;
  /** The delay before a revocation or announcement abandoned for the `n`th time (counting those that reached a node) goes again. */
  requeueDelay(n: number): number;
  /** After `n` abandoned topic creations (counting those that reached a node), the next waits this long after the last. */
  topicRequeueDelay(n: number): number;
  /** How much later `due` looks again at a record message waiting for its key's announcement. */
  readonly waitingRecheckMs: number;
  /** How a revocation queued again joins an open batch. */
  readonly batches: BatchPolicy;
}

/**
 * The anchor loop's journal, on either engine. Methods answer synchronously on SQLite and with a
 * promise on PostgreSQL (`Maybe`); the loop awaits every answer. `grouped` answers with a promise
 * on both, settled once the change is committed. On PostgreSQL every method that changes a row
 * MUST run fenced (the header) and reject, changing nothing, when this node does not lead.
 */
export interface Journal {
  /**
   * MUST `flush` first, then count the unfinished rows by state, with the `created_at` of the
   * oldest `pending` one (null: none). Changes no row. On PostgreSQL also `anchoredByLeader`: what
   * the leader reported with a heartbeat that is still fresh (0 otherwise).
   */
  unfinished(): Maybe<QueueCounts>;
  /**
   * MUST `flush` first, then return up to `limit` unfinished rows due now (`next_attempt_at <=
   * now`), soonest first (on equal times `pending` before `accepted`), leaving out those in
   * `busy`; `limit <= 0` returns nothing. A record message whose key is not announced and anchored
   * yet MUST NOT be returned: it is set aside (the header). MUST NOT change a row's state.
   */
  due(limit: number, busy: Busy): Maybe<LedgerTransactionRow[]>;
  /**
   * The unfinished (`pending` or `accepted`) message row with this transaction id (not a topic
   * creation, with a topic and a message), or null: what a message listed by the mirror node may
   * confirm. MUST only read.
   */
  unfinishedMessage(transactionId: string): Maybe<LedgerTransactionRow | null>;
  /**
   * MUST `flush` first, then list the topics with messages that may have reached consensus
   * unconfirmed (accepted, or pending with `attempts > 0`), each once, with the earliest valid
   * start among them: no such message reached consensus before it.
   */
  topicsAwaitingConfirmation(): Maybe<{ readonly topicId: string; readonly validStartMs: number }[]>;
  /** MUST `flush` first; when the next unfinished row is due (null: none). */
  nextDueAt(): Maybe<number | null>;
  /**
   * MUST `flush` first, then return up to `limit` pending rows no submission of which can have
   * reached a node (`attempts` 0) whose validity window ends before `now + marginMs`, soonest due
   * first, wherever their backoff or a wait for an announcement has put them: they can never be
   * submitted, so the loop abandons them.
   */
  unsentPastCutoff(marginMs: number, limit: number): Maybe<LedgerTransactionRow[]>;
  /**
   * A hint: MUST only remember it (synchronously, no I/O). At the next `flush` (or group commit)
   * the row is due `delayMs` (at least 0) from the time of the call, with `lastError` if not null,
   * only if it is still in `row.state`.
   */
  reschedule(row: Pick<LedgerTransactionRow, "transactionId" | "state">, delayMs: number, lastError: string | null): void;
  /**
   * MUST write the remembered hints (reschedules, set-aside rows) in one transaction; nothing
   * remembered: nothing happens. A failed write may lose them (a lost hint leaves its row due at
   * once: looked at sooner, never later). On PostgreSQL a node that does not lead drops them.
   */
  flush(): Maybe<void>;
  /** MUST make every unfinished row due later than now due now (the ledger answers again), in one transaction. */
  retryAllNow(): Maybe<void>;
  /**
   * The changes every message goes through. Each MUST be made at the time of the call and
   * committed with the other grouped changes (and remembered hints) made within the group window,
   * in one transaction, in the order they were made; each promise MUST resolve with its change's
   * outcome only once that transaction has committed (a caller sends the bytes, or logs the
   * change, only then). A transaction that fails as a whole MUST reject them all and store none;
   * on SQLite a change that throws is undone alone (a savepoint) and rejects alone.
   */
  readonly grouped: {
    /**
     * Journals an attempt before the bytes leave: a `pending` row MUST store `bytes` (the first
     * time) and count the attempt. The new count, or null if the row is no longer pending or holds
     * other bytes (one transaction id, one set of bytes). Concurrent calls MUST never lose a count.
     */
    beginAttempt(row: Pick<LedgerTransactionRow, "transactionId">, bytes: Uint8Array): Promise<number | null>;
    /**
     * pending → accepted, due again in `pollMs`, `last_error` cleared; a pending record MUST become
     * accepted with it. A batch's pending leaves MUST become accepted, and their pending records.
     */
    toAccepted(row: LedgerTransactionRow, pollMs: number): Promise<Changed>;
    /**
     * pending or accepted → anchored with the confirmed fields; the record MUST follow. An
     * anchored key announcement MUST make its organisation's pending record messages due now. A
     * batch's leaves MUST become anchored with the same fields, and the records of its record
     * message leaves with them.
     */
    toAnchoredMessage(row: LedgerTransactionRow, confirmed: ConfirmedFields): Promise<Changed>;
  };
  /**
   * Uncounts an attempt that provably sent nothing: MUST change the row only if it is still
   * `pending` at `attempts`; returns the count it has now (`attempts - 1`, or `attempts`).
   */
  takeBack(row: Pick<LedgerTransactionRow, "transactionId">, attempts: number): Maybe<number>;
  /**
   * pending or accepted → anchored, for a topic creation. In the same transaction the organisation
   * MUST get the topic if it has none, and then `announcement` MUST be queued (the header) unless
   * it is null or built at another generation. `announced` is the queued announcement's row (null:
   * none queued). Null if the row had moved on.
   */
  toAnchoredTopic(
    row: LedgerTransactionRow,
    topicId: string,
    consensusAt: string | null,
    announcement?: KeyAnnouncement | null,
  ): Maybe<{ readonly at: number; readonly announced: LedgerTransactionRow | null } | null>;
  /**
   * pending or accepted → abandoned with `reason`, in one transaction with what MUST follow: a
   * record message's record is abandoned; a revocation or key announcement is queued again, due
   * after `JournalRules.requeueDelay` of its abandoned predecessors that reached a node
   * (`requeued`: the new row's id). An abandoned batch (open, pending or accepted) MUST abandon
   * each of its unfinished leaves the same way, in the same transaction: a creation leaf's record
   * abandoned, a revocation leaf queued again as a leaf of an open batch (`requeued` names none).
   * Null if the row had moved on.
   */
  abandon(row: LedgerTransactionRow, reason: string): Maybe<{ readonly at: number; readonly requeued: string | null } | null>;
  /**
   * MUST `flush` first, then return every open batch (state `open`): its row, with `batch_size`
   * the number of leaves joined so far and `next_attempt_at` the end of its window. MUST only read.
   */
  openBatches(): Maybe<LedgerTransactionRow[]>;
  /**
   * Closes the open batch `row`, in one transaction (fenced on PostgreSQL), unless it is no longer
   * open (null, nothing changed): MUST read its leaves in the order they joined (`created_at`, then
   * transaction id), call `build` once with them and the organisation's next batch sequence (one
   * more than its highest), and store what it returns: the batch becomes `pending`, due now, with
   * the message, `batch_sequence` and `batch_size` (the number of leaves); leaf `i` gets
   * `leaf_index` i and `inclusion_path` `paths[i]`. A batch without a leaf is abandoned instead. A
   * `build` that throws undoes everything.
   */
  closeBatch(row: LedgerTransactionRow, build: BatchBuilder): Maybe<LedgerTransactionRow | null>;
  /**
   * A pending or accepted batch whose transaction reached consensus carrying other bytes than its
   * message (closed again from a restored backup after the first close was sent): in one
   * transaction (fenced on PostgreSQL) MUST abandon it with `reason`, and put each of its
   * unfinished leaves, as a new leaf with the same bytes, in an open batch as `pendingMessage`
   * would (a record's: of the batch's signer key and seal key; a revocation's: of revocations),
   * moving its record (its `transaction_id`, pending again, or its `revocation_transaction_id`)
   * there: acknowledged records are not lost. The batches the leaves went to; null if the row had
   * moved on.
   */
  rebatch(row: LedgerTransactionRow, reason: string): Maybe<{ readonly at: number; readonly batches: readonly string[] } | null>;
  /** Organisations with the add-on, no topic and no live (not abandoned) topic creation. MUST only read. */
  organisationsWantingTopic(): Maybe<string[]>;
  /**
   * Queues a topic creation for `orgId`, unless its earlier ones that reached a node were
   * abandoned too recently (`JournalRules.topicRequeueDelay`) or a live one exists (the unique
   * index `ledger_transactions_one_topic`, whichever process or node queued it: at most one MUST
   * ever be live). The new row, or null.
   */
  queueTopicCreate(orgId: string): Maybe<LedgerTransactionRow | null>;
  /**
   * Organisations with a topic whose current system key has no live announcement at their current
   * announcement generation. MUST only read.
   */
  organisationsWantingAnnouncement(): Maybe<string[]>;
  /**
   * Queues `announcement` on `orgId`'s topic, unless the organisation has no topic, its key or
   * generation is not the one announced, or a live announcement of them exists (at most one MUST
   * ever be live, whichever process or node queues it). The new row, or null.
   */
  queueAnnouncement(orgId: string, announcement: KeyAnnouncement): Maybe<LedgerTransactionRow | null>;
  /**
   * Persons with a key, in an organisation with a topic, whose key has no live announcement naming
   * the current seal key (re-enrolled persons; every person after a seal rotation). MUST only read.
   * May answer from memory (nothing) while the change counter has not moved since it last found none.
   */
  personsWantingAnnouncement(): Maybe<string[]>;
  /**
   * Queues person `personId`'s key announcement on their organisation's topic, unless the
   * organisation has no topic, the person's key or the current seal key is not the one announced,
   * a live announcement of that key and seal key exists (at most one MUST ever be live), or a record
   * message of the person's older key or older seal key is unsettled (it MUST land first). The new
   * row, or null.
   */
  queuePersonAnnouncement(personId: string, announcement: PersonKeyAnnouncement): Maybe<LedgerTransactionRow | null>;
  /**
   * The organisations' keys declared compromised (`signing_keys.compromised_at`) whose organisation
   * has a topic and that have no live `key_compromise` row. MUST only read. May answer from memory
   * (nothing) while the change counter has not moved since it last found none: a declaration
   * raises it.
   */
  keysWantingCompromiseMessage(): Maybe<CompromisedKey[]>;
  /**
   * Queues `message`, the key's `key_compromise` message, on its organisation's topic: kind
   * `key_compromise`, `key_fingerprint` the compromised key. At most one live (not abandoned) per
   * key, whichever process or node queues it (the unique index `ledger_transactions_one_compromise`):
   * a refusal by it is an answer (null). Null too when the organisation has no topic. Never waits
   * for an announcement; abandoned, it is queued again like an announcement (same bytes, new id);
   * anchored, it raises the change counter (verification's revocation time becomes its consensus time).
   */
  queueCompromise(key: CompromisedKey, message: Uint8Array): Maybe<LedgerTransactionRow | null>;
}
