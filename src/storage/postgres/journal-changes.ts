/**
 * The PostgreSQL anchor journal's changes (storage/postgres/journal.ts), as operation bodies the
 * journal runs in its fenced transaction: a topic creation anchored, a row abandoned (and a
 * revocation or announcement queued again), topic provisioning and key announcements. Each change
 * is an UPDATE guarded by the row's expected state (`move`), or an insert a unique index refuses
 * with `ON CONFLICT DO NOTHING`: a failed statement would abort the PostgreSQL transaction.
 */
import { and, count, eq, inArray, isNull, sql, type SQL } from "drizzle-orm";
import type { CompromisedKey, JournalRules, KeyAnnouncement, LedgerTransactionRow, PersonKeyAnnouncement, TransactionState } from "../../anchoring/journal/ports.ts";
import {
  CHANGE_COUNTER,
  IS_CURRENT_SEAL,
  OLDER_KEY_MESSAGES_UNSETTLED,
  PERSON_OLDER_MESSAGES_UNSETTLED,
  WANTING_ANNOUNCEMENT,
  WANTING_COMPROMISE,
  WANTING_PERSON_ANNOUNCEMENT,
} from "../journal-sql.ts";
import { INSERT_OPEN_BATCH, JOIN_OPEN_BATCH, JOIN_OPEN_REVOCATION_BATCH } from "../statements.ts";
import { changes, firstRow, q, type Body, type Op, type StoreDb, type Tables } from "../store.ts";

type Row = LedgerTransactionRow;

/** The row as the journal hands it on (the pg schema's row has the same columns and types). */
export const asRow = (r: unknown): Row => r as Row;

/**
 * pending or accepted → anchored, for a topic creation, at `at`; the organisation gets the topic
 * if it has none, and then the announcement unless built at another generation.
 */
export function anchoredTopic(rules: JournalRules, row: Row, topicId: string, consensusAt: string | null, announcement: KeyAnnouncement | null, at: number): Body<{ readonly at: number; readonly announced: Row | null } | null> {
  return function* (tx, t) {
    if (!(yield* move(tx, t, row.transactionId, ["pending", "accepted"], { state: "anchored", topicId, consensusAt, lastError: null, updatedAt: at }))) return null;
    // The organisation gets the topic only if it has none.
    const given = yield* q(
      tx
        .update(t.organisations)
        .set({ topicId })
        .where(and(eq(t.organisations.id, row.orgId), isNull(t.organisations.topicId)))
        .returning({ id: t.organisations.id, generation: t.organisations.announcementGeneration }),
    );
    if (given.length === 0) return { at, announced: null };
    // Built at another generation (the domain or name changed meanwhile): provisioning builds it afresh.
    const current = announcement !== null && announcement.generation === Number(given[0]!.generation);
    const announced = current ? yield* insertAnnouncement(tx, t, rules, row.orgId, topicId, announcement, at) : null;
    return { at, announced };
  };
}

/**
 * open, pending or accepted → abandoned with `reason`, at `at`: a record message's record is
 * abandoned, a revocation or key announcement queued again (the port's header). A batch's leaves
 * follow it (journal-batches.ts `abandonLeaves`, which the journal runs next in the same
 * transaction). The loop never abandons a leaf alone: it follows its batch.
 */
export function abandon(rules: JournalRules, row: Row, reason: string, at: number): Body<{ readonly at: number; readonly requeued: string | null } | null> {
  return function* (tx, t) {
    const lt = t.ledgerTransactions;
    if (!(yield* move(tx, t, row.transactionId, ["open", "pending", "accepted"], { state: "abandoned", lastError: reason, updatedAt: at }))) return null;
    let requeued: string | null = null;
    const reached = sql`NOT (${lt.attempts} = 0 AND ${lt.signedBytes} IS NOT NULL)`;
    if (row.kind === "record_message") {
      yield* q(tx.update(t.records).set({ anchorState: "abandoned" }).where(recordOf(t, row)));
    } else if (row.kind === "revocation_message") {
      requeued = yield* requeueRevocation(tx, t, rules, row, row.transactionId, at);
    } else if ((row.kind === "key_announcement" || row.kind === "key_compromise") && row.message !== null && row.topicId !== null && row.keyFingerprint !== null) {
      // A key announcement (records wait for it) or a key compromise (declared): never lost.
      const [earlier] = yield* q(
        tx
          .select({ n: count() })
          .from(lt)
          .where(
            and(
              eq(lt.orgId, row.orgId),
              eq(lt.keyFingerprint, Buffer.from(row.keyFingerprint)),
              eq(lt.announcementGeneration, row.announcementGeneration),
              eq(lt.kind, row.kind),
              eq(lt.state, "abandoned"),
              reached,
            ),
          ),
      );
      const next = rules.pendingRow(rules.newTransactionId(), row, at, at + rules.requeueDelay(earlier?.n ?? 0));
      yield* q(tx.insert(lt).values(next));
      requeued = next.transactionId;
    }
    return { at, requeued };
  };
}

/**
 * Inside a change: the abandoned revocation `row` (an acknowledged revocation, which must reach
 * the ledger) queued again with the same bytes under a new transaction id, after the delay of its
 * predecessors abandoned after reaching a node. A leaf stays a leaf (`pendingRow` keeps
 * `batch_leaf`) and joins an open batch of revocations (`joinBatch`); the record's
 * revocation moves to what it is now carried by (the new row, or the batch it joined) while the
 * record carries `carrier` (the row's own transaction id, or its batch's). The new row's id for a
 * message sent on its own; null for a leaf, or a row missing what a message needs.
 */
export function* requeueRevocation(tx: StoreDb, t: Tables, rules: JournalRules, row: Row, carrier: string, at: number): Op<string | null> {
  if (row.recordId === null || row.message === null || row.topicId === null) return null;
  const lt = t.ledgerTransactions;
  const [earlier] = yield* q(
    tx
      .select({ n: count() })
      .from(lt)
      .where(and(eq(lt.recordId, row.recordId), eq(lt.kind, "revocation_message"), eq(lt.state, "abandoned"), sql`NOT (${lt.attempts} = 0 AND ${lt.signedBytes} IS NOT NULL)`)),
  );
  const next = rules.pendingRow(rules.newTransactionId(), row, at, at + rules.requeueDelay(earlier?.n ?? 0));
  const leaf = next.batchLeaf === 1;
  const carries = leaf ? yield* joinBatch(rules, row.orgId, row.topicId, null, null, at) : next.transactionId;
  yield* q(tx.insert(lt).values(leaf ? { ...next, batchTransactionId: carries } : next));
  yield* q(tx.update(t.records).set({ revocationTransactionId: carries }).where(and(eq(t.records.id, row.recordId), eq(t.records.revocationTransactionId, carrier))));
  return leaf ? null : next.transactionId;
}

/**
 * Inside a change: the organisation's open batch with room for a leaf of `key` and `seal` (a
 * record's; both null: of revocations), joined (its leaf count raised under its row's lock), or a
 * new one; its transaction id. The statements of `pendingMessage`.
 */
export function* joinBatch(rules: JournalRules, orgId: string, topicId: string, key: Uint8Array | null, seal: Uint8Array | null, at: number): Op<string> {
  const revocations = key === null || seal === null;
  const max = revocations ? Math.min(rules.batches.max, rules.batches.maxRevocations) : rules.batches.max;
  const joined = revocations ? yield* q(firstRow(JOIN_OPEN_REVOCATION_BATCH, orgId, max, at)) : yield* q(firstRow(JOIN_OPEN_BATCH, orgId, key, seal, max, at));
  if (joined !== undefined) return joined.transaction_id;
  const id = rules.newTransactionId();
  yield* q(changes(INSERT_OPEN_BATCH, id.transactionId, orgId, topicId, revocations ? null : key, revocations ? null : seal, id.validStartMs, id.validSeconds, at + rules.batches.windowMs, at, at));
  return id.transactionId;
}

// ---- topic provisioning and key announcements --------------------------------------------

/** Organisations with the add-on, no topic and no live topic creation. */
export function* organisationsWantingTopic(db: StoreDb, t: Tables): Op<string[]> {
  const o = t.organisations;
  const lt = t.ledgerTransactions;
  const rows = yield* q(
    db
      .select({ id: o.id })
      .from(o)
      .where(
        and(
          eq(o.addon, true),
          sql`${o.topicId} IS NULL`,
          sql`NOT EXISTS (SELECT 1 FROM ${lt} WHERE ${lt.orgId} = ${o.id} AND ${lt.kind} = 'topic_create' AND ${lt.state} <> 'abandoned')`,
        ),
      ),
  );
  return rows.map((r) => r.id);
}

/** Queues a topic creation for `orgId` at `at`, unless one was abandoned too recently or a live one exists. The new row, or null. */
export function queueTopicCreate(rules: JournalRules, orgId: string, at: number): Body<Row | null> {
  return function* (tx, t) {
    const lt = t.ledgerTransactions;
    const [prior] = yield* q(
      tx
        .select({ n: count(), last: sql<number | null>`max(${lt.updatedAt})`.mapWith((v) => (v === null ? null : Number(v))) })
        .from(lt)
        .where(and(eq(lt.orgId, orgId), eq(lt.kind, "topic_create"), eq(lt.state, "abandoned"), sql`NOT (${lt.attempts} = 0 AND ${lt.signedBytes} IS NOT NULL)`)),
    );
    if (prior !== undefined && prior.n > 0 && prior.last !== null && at < prior.last + rules.topicRequeueDelay(prior.n)) return null;
    const values = rules.pendingRow(rules.newTransactionId(), { kind: "topic_create", orgId, recordId: null, topicId: null, message: null }, at);
    const inserted = yield* q(tx.insert(lt).values(values).onConflictDoNothing().returning({ id: lt.transactionId }));
    return inserted.length === 0 ? null : asRow({ ...values, sequenceNumber: null, consensusAt: null, runningHash: null, lastError: null });
  };
}

/** Organisations with a topic whose current system key has no live announcement at their current generation. */
export function* organisationsWantingAnnouncement(db: StoreDb): Op<string[]> {
  const rows = (yield* q(db.execute(sql.raw(WANTING_ANNOUNCEMENT)))) as unknown as { id: string }[];
  return rows.map((r) => r.id);
}

/**
 * Queues `announcement` on `orgId`'s topic at `at`, unless no topic, another key or generation, a
 * live one, or an older key's record message unsettled (`OLDER_KEY_MESSAGES_UNSETTLED`). The new row, or null.
 */
export function queueAnnouncement(rules: JournalRules, orgId: string, announcement: KeyAnnouncement, at: number): Body<Row | null> {
  return function* (tx, t) {
    const o = t.organisations;
    const [org] = yield* q(tx.select({ topicId: o.topicId, key: o.systemKeyFingerprint, generation: o.announcementGeneration }).from(o).where(eq(o.id, orgId)));
    if (org === undefined || org.topicId === null || Number(org.generation) !== announcement.generation || !Buffer.from(org.key).equals(Buffer.from(announcement.keyFingerprint))) return null;
    const held = (yield* q(tx.execute(sql`SELECT 1 AS held FROM organisations o WHERE o.id = ${orgId} AND ${sql.raw(OLDER_KEY_MESSAGES_UNSETTLED)}`))) as unknown as unknown[];
    if (held.length > 0) return null;
    return yield* insertAnnouncement(tx, t, rules, orgId, org.topicId, announcement, at);
  };
}

/** The announcement's pending row, or null when the key has a live one at its generation already (`ledger_transactions_one_announcement`). */
function* insertAnnouncement(tx: StoreDb, t: Tables, rules: JournalRules, orgId: string, topicId: string, announcement: KeyAnnouncement, at: number): Op<Row | null> {
  rules.checkLength(announcement.message);
  // Built before a seal rotation: the next pass builds it with the new seal key.
  if (!(yield* sealIsCurrent(tx, announcement.sealFingerprint))) return null;
  const values = rules.pendingRow(
    rules.newTransactionId(),
    { kind: "key_announcement", orgId, recordId: null, topicId, message: announcement.message, keyFingerprint: announcement.keyFingerprint, announcementGeneration: announcement.generation, sealFingerprint: announcement.sealFingerprint },
    at,
  );
  const inserted = yield* q(tx.insert(t.ledgerTransactions).values(values).onConflictDoNothing().returning({ id: t.ledgerTransactions.transactionId }));
  return inserted.length === 0 ? null : asRow({ ...values, sequenceNumber: null, consensusAt: null, runningHash: null, lastError: null });
}

/** Inside a change: whether `seal` is the installation's current seal key (read under a share lock: a seal rotation updates the row). */
function* sealIsCurrent(tx: StoreDb, seal: Uint8Array): Op<boolean> {
  const rows = (yield* q(tx.execute(sql`SELECT 1 AS ok FROM signing_keys cs WHERE cs.fingerprint = ${Buffer.from(seal)} AND ${sql.raw(IS_CURRENT_SEAL)} FOR SHARE`))) as unknown as unknown[];
  return rows.length > 0;
}

/** Persons whose current key has no live announcement naming the current seal key (`WANTING_PERSON_ANNOUNCEMENT`). */
export function* personsWantingAnnouncement(db: StoreDb): Op<string[]> {
  const rows = (yield* q(db.execute(sql.raw(WANTING_PERSON_ANNOUNCEMENT)))) as unknown as { id: string }[];
  return rows.map((r) => r.id);
}

/** Queues person `personId`'s key announcement at `at`, as on SQLite (storage/sqlite/journal-changes.ts `queuePersonAnnouncementIn`). The new row, or null. */
export function queuePersonAnnouncement(rules: JournalRules, personId: string, announcement: PersonKeyAnnouncement, at: number): Body<Row | null> {
  return function* (tx, t) {
    rules.checkLength(announcement.message);
    const key = Buffer.from(announcement.keyFingerprint);
    const [p] = (yield* q(
      tx.execute(sql`SELECT p.org_id AS org_id, p.key_fingerprint AS key, o.topic_id AS topic_id FROM persons p JOIN organisations o ON o.id = p.org_id WHERE p.id = ${personId} FOR SHARE OF p`),
    )) as unknown as { org_id: string; key: Uint8Array | null; topic_id: string | null }[];
    if (p === undefined || p.topic_id === null || p.key === null || p.org_id !== announcement.orgId || !Buffer.from(p.key).equals(key)) return null;
    if (!(yield* sealIsCurrent(tx, announcement.sealFingerprint))) return null;
    const held = (yield* q(tx.execute(sql`SELECT 1 AS held FROM persons p WHERE p.id = ${personId} AND ${sql.raw(PERSON_OLDER_MESSAGES_UNSETTLED)}`))) as unknown as unknown[];
    if (held.length > 0) return null;
    const [prior] = (yield* q(
      tx.execute(
        sql`SELECT count(CASE WHEN state <> 'abandoned' AND seal_fingerprint = ${Buffer.from(announcement.sealFingerprint)} THEN 1 END)::int AS live, max(announcement_generation)::float8 AS last
              FROM ledger_transactions WHERE org_id = ${p.org_id} AND key_fingerprint = ${key} AND kind = 'key_announcement'`,
      ),
    )) as unknown as { live: number; last: number | null }[];
    if (prior !== undefined && prior.live > 0) return null;
    const generation = prior?.last === null || prior?.last === undefined ? 0 : Number(prior.last) + 1;
    const values = rules.pendingRow(
      rules.newTransactionId(),
      { kind: "key_announcement", orgId: p.org_id, recordId: null, topicId: p.topic_id, message: announcement.message, keyFingerprint: key, announcementGeneration: generation, sealFingerprint: announcement.sealFingerprint },
      at,
    );
    const inserted = yield* q(tx.insert(t.ledgerTransactions).values(values).onConflictDoNothing().returning({ id: t.ledgerTransactions.transactionId }));
    return inserted.length === 0 ? null : asRow({ ...values, sequenceNumber: null, consensusAt: null, runningHash: null, lastError: null });
  };
}

/**
 * Inside a change: sets `values` on the row only if it is still in one of `states` and meets
 * `also`, if given (PostgreSQL re-checks the condition on the newest row version); whether it
 * was. Makes every change idempotent, as `inState` does on SQLite (storage/sqlite/journal-changes.ts).
 */
export function* move(
  tx: StoreDb,
  t: Tables,
  transactionId: string,
  states: readonly TransactionState[],
  values: Partial<Tables["ledgerTransactions"]["$inferInsert"]>,
  also?: SQL,
): Op<boolean> {
  const lt = t.ledgerTransactions;
  const moved = yield* q(
    tx
      .update(lt)
      .set(values)
      .where(and(eq(lt.transactionId, transactionId), inArray(lt.state, [...states]), also))
      .returning({ id: lt.transactionId }),
  );
  return moved.length === 1;
}

/** The record a `record_message` row anchors: by its primary key and this transaction (as on SQLite). */
export function recordOf(t: Tables, row: Pick<Row, "recordId" | "transactionId">) {
  const r = t.records;
  return row.recordId !== null ? and(eq(r.id, row.recordId), eq(r.transactionId, row.transactionId))! : eq(r.transactionId, row.transactionId);
}

// ---- key compromises ---------------------------------------------------------------------

/** The change counter's value now, and the keys declared compromised without a live `key_compromise` row. */
export function* changeCounter(db: StoreDb): Op<number> {
  const [row] = (yield* q(db.execute(sql.raw(CHANGE_COUNTER)))) as unknown as { value: number | string }[];
  return Number(row?.value ?? 0);
}

export function* keysWantingCompromise(db: StoreDb): Op<CompromisedKey[]> {
  const rows = (yield* q(db.execute(sql.raw(WANTING_COMPROMISE)))) as unknown as { org_id: string; person_id: string | null; fingerprint: Uint8Array; since: number | string }[];
  return rows.map((r) => ({ orgId: r.org_id, personId: r.person_id, keyFingerprint: new Uint8Array(r.fingerprint), sinceMs: Number(r.since) }));
}

/** Queues the key's `key_compromise` row at `at`, unless its organisation has no topic or a live one exists. The new row, or null. */
export function queueCompromise(rules: JournalRules, key: CompromisedKey, message: Uint8Array, at: number): Body<Row | null> {
  return function* (tx, t) {
    rules.checkLength(message);
    const [org] = yield* q(tx.select({ topicId: t.organisations.topicId }).from(t.organisations).where(eq(t.organisations.id, key.orgId)));
    if (org === undefined || org.topicId === null) return null;
    const values = rules.pendingRow(rules.newTransactionId(), { kind: "key_compromise", orgId: key.orgId, recordId: null, topicId: org.topicId, message, keyFingerprint: key.keyFingerprint }, at);
    const inserted = yield* q(tx.insert(t.ledgerTransactions).values(values).onConflictDoNothing().returning({ id: t.ledgerTransactions.transactionId }));
    return inserted.length === 0 ? null : asRow({ ...values, sequenceNumber: null, consensusAt: null, runningHash: null, lastError: null });
  };
}
