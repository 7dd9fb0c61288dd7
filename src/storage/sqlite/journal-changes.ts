/**
 * The SQLite anchor journal's changes beyond a message's own (storage/sqlite/journal.ts): a topic
 * creation anchored, a row abandoned (and a revocation or announcement queued again), topic
 * provisioning and key announcements. Each is one IMMEDIATE transaction, or a read; a unique
 * index's refusal (`ledger_transactions_one_topic`, `ledger_transactions_one_announcement`) undoes
 * the one statement (SQLite) and is answered with null.
 */
import { and, eq, inArray, sql } from "drizzle-orm";
import type { CompromisedKey, JournalRules, KeyAnnouncement, LedgerTransactionRow, NewTransaction, PendingFields, PersonKeyAnnouncement, TransactionState } from "../../anchoring/journal/ports.ts";
import type { Db } from "../db.ts";
import {
  CHANGE_COUNTER,
  IS_CURRENT_SEAL,
  OLDER_KEY_MESSAGES_UNSETTLED,
  PERSON_OLDER_MESSAGES_UNSETTLED,
  WANTING_ANNOUNCEMENT,
  WANTING_COMPROMISE,
  WANTING_PERSON_ANNOUNCEMENT,
} from "../journal-sql.ts";
import { ledgerTransactions, organisations, records } from "../schema.ts";
import { INSERT_OPEN_BATCH, JOIN_OPEN_BATCH, JOIN_OPEN_REVOCATION_BATCH } from "../statements.ts";

/** Anything that can insert and select: the Db or a transaction handle inside `db.transaction(...)`. */
type Tx = Pick<Db, "insert" | "select" | "get">;

const IMMEDIATE = { behavior: "immediate" } as const;

/** Rows abandoned without reaching a node (every submission `unsent`) do not count towards a re-queue's backoff. */
const REACHED_A_NODE = sql`NOT (${ledgerTransactions.attempts} = 0 AND ${ledgerTransactions.signedBytes} IS NOT NULL)`;

function insertPending(tx: Pick<Db, "insert">, rules: JournalRules, id: NewTransaction, row: PendingFields, now: number, nextAttemptAt: number = now): LedgerTransactionRow {
  const values = rules.pendingRow(id, row, now, nextAttemptAt);
  tx.insert(ledgerTransactions).values(values).run();
  return { ...values, sequenceNumber: null, consensusAt: null, runningHash: null, lastError: null };
}

/**
 * pending or accepted → anchored, for a topic creation; the organisation gets its topic (if it
 * has none) and, in the same transaction, the key announcement `announcement` (built by the
 * caller before: nothing is computed under the write lock), unless it is null, was built at
 * another announcement generation than the organisation's (provisioning builds it afresh), or
 * the organisation's key has a live one. `announced` is the queued announcement's row.
 */
export function anchoredTopicIn(
  db: Db,
  rules: JournalRules,
  row: LedgerTransactionRow,
  topicId: string,
  consensusAt: string | null,
  announcement: KeyAnnouncement | null,
): { readonly at: number; readonly announced: LedgerTransactionRow | null } | null {
  const t = rules.clock.now();
  return db.transaction((tx) => {
    if (!inState(tx, row.transactionId, ["pending", "accepted"])) return null;
    tx.update(ledgerTransactions)
      .set({ state: "anchored", topicId, consensusAt, lastError: null, updatedAt: t })
      .where(eq(ledgerTransactions.transactionId, row.transactionId))
      .run();
    const org = tx
      .select({ topicId: organisations.topicId, generation: organisations.announcementGeneration })
      .from(organisations)
      .where(eq(organisations.id, row.orgId))
      .get();
    if (org === undefined || org.topicId !== null) return { at: t, announced: null };
    tx.update(organisations).set({ topicId }).where(eq(organisations.id, row.orgId)).run();
    // Only on the topic the organisation has just been given: anything else is provisioning's.
    const announced = announcement !== null && announcement.generation === org.generation ? insertAnnouncement(tx, rules, row.orgId, topicId, announcement, t) : null;
    return { at: t, announced };
  }, IMMEDIATE);
}

/**
 * pending or accepted → abandoned, with `reason`. A record message's record is abandoned too;
 * a revocation or a key announcement is queued again (the port's header), due at once the first
 * time and after `rules.requeueDelay` when it keeps failing. `requeued` is the new row's id.
 */
export function abandonIn(db: Db, rules: JournalRules, row: LedgerTransactionRow, reason: string): { readonly at: number; readonly requeued: string | null } | null {
  const t = rules.clock.now();
  let requeued: string | null = null;
  const changed = db.transaction((tx) => {
    if (!inState(tx, row.transactionId, ["open", "pending", "accepted"])) return false;
    requeued = abandonRowIn(db, tx, rules, row, reason, row.transactionId, t);
    if (row.kind === "batch_message") {
      // Each of its leaves as if it had been its own message: its record abandoned, a revocation
      // queued again (a leaf of an open batch). Their records carry the batch's id.
      const leaves = tx.select().from(ledgerTransactions).where(and(eq(ledgerTransactions.batchTransactionId, row.transactionId), inArray(ledgerTransactions.state, ["pending", "accepted"]))).all();
      for (const leaf of leaves) abandonRowIn(db, tx, rules, leaf, `its batch was abandoned: ${reason}`, row.transactionId, t);
    }
    return true;
  }, IMMEDIATE);
  return changed ? { at: t, requeued } : null;
}

/**
 * Inside the abandon's transaction: `row` abandoned, and what follows (the header of abandonIn).
 * `carried` is the transaction id its record carries: the row's own, or its batch's for a leaf.
 * The re-queued row's id, or null.
 */
function abandonRowIn(db: Db, tx: Tx & Pick<Db, "update">, rules: JournalRules, row: LedgerTransactionRow, reason: string, carried: string, t: number): string | null {
  tx.update(ledgerTransactions)
    .set({ state: "abandoned", lastError: reason, updatedAt: t })
    .where(eq(ledgerTransactions.transactionId, row.transactionId))
    .run();
  if (row.kind === "record_message") {
    tx.update(records).set({ anchorState: "abandoned" }).where(recordOf({ recordId: row.recordId, transactionId: carried })).run();
  } else if (row.kind === "revocation_message" && row.recordId !== null && row.message !== null && row.topicId !== null) {
    // The revocation was acknowledged: it must reach the ledger. Same bytes, new transaction (a
    // leaf stays a leaf). Abandoned rows that never reached a node (every submission `unsent`: the
    // ledger was down) do not count: the next goes at once, so the revocation follows the
    // ledger's return.
    const earlier = tx
      .select({ n: sql<number>`count(*)` })
      .from(ledgerTransactions)
      .where(and(eq(ledgerTransactions.recordId, row.recordId), eq(ledgerTransactions.kind, "revocation_message"), eq(ledgerTransactions.state, "abandoned"), REACHED_A_NODE))
      .get()!.n;
    const next = insertPending(tx, rules, rules.newTransactionId(), row, t, t + rules.requeueDelay(earlier));
    // A leaf joins an open batch of revocations (pendingMessage's rule), which the record carries.
    const carries = row.batchLeaf === 1 ? joinBatchIn(db, rules, row.orgId, row.topicId, null, null, t) : next.transactionId;
    if (row.batchLeaf === 1) tx.update(ledgerTransactions).set({ batchTransactionId: carries }).where(eq(ledgerTransactions.transactionId, next.transactionId)).run();
    tx.update(records)
      .set({ revocationTransactionId: carries })
      .where(and(eq(records.id, row.recordId), eq(records.revocationTransactionId, carried)))
      .run();
    return row.batchLeaf === 1 ? null : next.transactionId;
  } else if ((row.kind === "key_announcement" || row.kind === "key_compromise") && row.message !== null && row.topicId !== null && row.keyFingerprint !== null) {
    // The same for a key announcement (records of the organisation wait for it) and a key
    // compromise (declared, it must reach the ledger). Same bytes, key and generation, new
    // transaction; the unique index allows it, this row being abandoned now.
    const earlier = tx
      .select({ n: sql<number>`count(*)` })
      .from(ledgerTransactions)
      .where(
        and(
          eq(ledgerTransactions.orgId, row.orgId),
          eq(ledgerTransactions.keyFingerprint, Buffer.from(row.keyFingerprint)),
          eq(ledgerTransactions.announcementGeneration, row.announcementGeneration),
          eq(ledgerTransactions.kind, row.kind),
          eq(ledgerTransactions.state, "abandoned"),
          REACHED_A_NODE,
        ),
      )
      .get()!.n;
    return insertPending(tx, rules, rules.newTransactionId(), row, t, t + rules.requeueDelay(earlier)).transactionId;
  }
  return null;
}

/**
 * Inside a transaction: the organisation's open batch with room for a leaf of `key` and `seal` (a
 * record's; both null: of revocations), joined (its leaf count raised), or a new one; its
 * transaction id. The same statements as `pendingMessage`'s.
 */
function joinBatchIn(db: Db, rules: JournalRules, orgId: string, topicId: string, key: Uint8Array | null, seal: Uint8Array | null, t: number): string {
  const revocations = key === null || seal === null;
  const max = revocations ? Math.min(rules.batches.max, rules.batches.maxRevocations) : rules.batches.max;
  const joined = revocations
    ? db.$client.prepare<{ transaction_id: string }, [string, number, number]>(JOIN_OPEN_REVOCATION_BATCH.sqlite).get(orgId, max, t)
    : db.$client.prepare<{ transaction_id: string }, [string, Uint8Array, Uint8Array, number, number]>(JOIN_OPEN_BATCH.sqlite).get(orgId, key, seal, max, t);
  if (joined !== null) return joined.transaction_id;
  const id = rules.newTransactionId();
  db.$client.prepare(INSERT_OPEN_BATCH.sqlite).run(id.transactionId, orgId, topicId, revocations ? null : key, revocations ? null : seal, id.validStartMs, id.validSeconds, t + rules.batches.windowMs, t, t);
  return id.transactionId;
}

/**
 * A batch whose transaction carried other bytes (the port's `rebatch`): abandoned, each unfinished
 * leaf put again, as a new leaf with the same bytes, in an open batch, its record following.
 */
export function rebatchIn(db: Db, rules: JournalRules, row: LedgerTransactionRow, reason: string): { readonly at: number; readonly batches: readonly string[] } | null {
  const t = rules.clock.now();
  const batches = new Set<string>();
  const changed = db.transaction((tx) => {
    if (row.kind !== "batch_message" || !inState(tx, row.transactionId, ["pending", "accepted"])) return false;
    tx.update(ledgerTransactions).set({ state: "abandoned", lastError: reason, updatedAt: t }).where(eq(ledgerTransactions.transactionId, row.transactionId)).run();
    const leaves = tx.select().from(ledgerTransactions).where(and(eq(ledgerTransactions.batchTransactionId, row.transactionId), inArray(ledgerTransactions.state, ["pending", "accepted"]))).all();
    for (const leaf of leaves) {
      if (leaf.recordId === null || leaf.topicId === null) continue;
      tx.update(ledgerTransactions).set({ state: "abandoned", lastError: `its batch was put again: ${reason}`, updatedAt: t }).where(eq(ledgerTransactions.transactionId, leaf.transactionId)).run();
      const creation = leaf.kind === "record_message";
      const batch = joinBatchIn(db, rules, leaf.orgId, leaf.topicId, creation ? row.keyFingerprint : null, creation ? row.sealFingerprint : null, t);
      const next = insertPending(tx, rules, rules.newTransactionId(), leaf, t);
      tx.update(ledgerTransactions).set({ batchTransactionId: batch }).where(eq(ledgerTransactions.transactionId, next.transactionId)).run();
      if (creation) tx.update(records).set({ transactionId: batch, anchorState: "pending" }).where(and(eq(records.id, leaf.recordId), eq(records.transactionId, row.transactionId))).run();
      else tx.update(records).set({ revocationTransactionId: batch }).where(and(eq(records.id, leaf.recordId), eq(records.revocationTransactionId, row.transactionId))).run();
      batches.add(batch);
    }
    return true;
  }, IMMEDIATE);
  return changed ? { at: t, batches: [...batches] } : null;
}

// ---- topic provisioning --------------------------------------------------------------

/** Organisations with the add-on, no topic and no live topic creation. */
export function organisationsWantingTopic(db: Db): string[] {
  const rows = db.$client
    .query(
      `SELECT o.id AS id FROM organisations o
       WHERE o.addon = 1 AND o.topic_id IS NULL
         AND NOT EXISTS (SELECT 1 FROM ledger_transactions t WHERE t.org_id = o.id AND t.kind = 'topic_create' AND t.state <> 'abandoned')`,
    )
    .all() as { id: string }[];
  return rows.map((r) => r.id);
}

/**
 * Queues a topic creation for `orgId`, unless its earlier ones (those that reached a node)
 * were abandoned too recently (`rules.topicRequeueDelay`) or another pass or process queued one
 * first (`ledger_transactions_one_topic`). The new row, or null.
 */
export function queueTopicCreate(db: Db, rules: JournalRules, orgId: string): LedgerTransactionRow | null {
  const t = rules.clock.now();
  const prior = db.$client
    .query(
      `SELECT count(*) AS n, max(updated_at) AS last FROM ledger_transactions
       WHERE org_id = ? AND kind = 'topic_create' AND state = 'abandoned' AND NOT (attempts = 0 AND signed_bytes IS NOT NULL)`,
    )
    .get(orgId) as { n: number; last: number | null };
  if (prior.n > 0 && prior.last !== null && t < prior.last + rules.topicRequeueDelay(prior.n)) return null;
  try {
    return insertPending(db, rules, rules.newTransactionId(), { kind: "topic_create", orgId, recordId: null, topicId: null, message: null }, t);
  } catch (e) {
    if (/UNIQUE/i.test((e as Error).message)) return null;
    throw e;
  }
}

// ---- key announcements ---------------------------------------------------------------

/**
 * Organisations with a topic whose current system key has no live (not abandoned) key
 * announcement at their current announcement generation: topics that predate announcements, a
 * topic whose announcement could not be built when it was created, a changed key, a changed
 * domain or name.
 */
export function organisationsWantingAnnouncement(db: Db): string[] {
  const rows = db.$client.query(WANTING_ANNOUNCEMENT).all() as { id: string }[];
  return rows.map((r) => r.id);
}

/**
 * Queues `announcement` on `orgId`'s topic, unless the organisation has no topic, its current
 * system key or announcement generation is not the one announced (it changed meanwhile: the
 * next pass builds another), or its key has a live announcement at that generation already,
 * queued by another pass or process (`ledger_transactions_one_announcement`), or a record message
 * of an older key of the organisation is unsettled (`OLDER_KEY_MESSAGES_UNSETTLED`: a later pass
 * queues it). The new row, or null.
 */
export function queueAnnouncementIn(db: Db, rules: JournalRules, orgId: string, announcement: KeyAnnouncement): LedgerTransactionRow | null {
  const t = rules.clock.now();
  return db.transaction((tx) => {
    const org = tx
      .select({ topicId: organisations.topicId, key: organisations.systemKeyFingerprint, generation: organisations.announcementGeneration })
      .from(organisations)
      .where(eq(organisations.id, orgId))
      .get();
    if (org === undefined || org.topicId === null || org.generation !== announcement.generation || !Buffer.from(org.key).equals(Buffer.from(announcement.keyFingerprint))) return null;
    if (tx.get(sql`SELECT 1 AS held FROM organisations o WHERE o.id = ${orgId} AND ${sql.raw(OLDER_KEY_MESSAGES_UNSETTLED)}`) !== undefined) return null;
    return insertAnnouncement(tx, rules, orgId, org.topicId, announcement, t);
  }, IMMEDIATE);
}

/**
 * Inside an IMMEDIATE transaction: the announcement's pending row, or null if the key has a
 * live one (a UNIQUE violation of `ledger_transactions_one_announcement`: someone else queued
 * it). A failed statement is undone alone; the caller's transaction goes on.
 */
function insertAnnouncement(tx: Tx, rules: JournalRules, orgId: string, topicId: string, announcement: KeyAnnouncement, t: number): LedgerTransactionRow | null {
  rules.checkLength(announcement.message);
  // Built before a seal rotation: the next pass builds it with the new seal key.
  if (!sealIsCurrent(tx, announcement.sealFingerprint)) return null;
  try {
    return insertPending(
      tx,
      rules,
      rules.newTransactionId(),
      { kind: "key_announcement", orgId, recordId: null, topicId, message: announcement.message, keyFingerprint: announcement.keyFingerprint, announcementGeneration: announcement.generation, sealFingerprint: announcement.sealFingerprint },
      t,
    );
  } catch (e) {
    if (/UNIQUE/i.test((e as Error).message)) return null;
    throw e;
  }
}

/** Inside a transaction: whether `seal` is the installation's current seal key. */
function sealIsCurrent(tx: Pick<Db, "get">, seal: Uint8Array): boolean {
  return tx.get(sql`SELECT 1 AS ok FROM signing_keys cs WHERE cs.fingerprint = ${Buffer.from(seal)} AND ${sql.raw(IS_CURRENT_SEAL)}`) !== undefined;
}

/** Persons whose current key has no live announcement naming the current seal key (`WANTING_PERSON_ANNOUNCEMENT`). */
export function personsWantingAnnouncement(db: Db): string[] {
  return (db.$client.query(WANTING_PERSON_ANNOUNCEMENT).all() as { id: string }[]).map((r) => r.id);
}

/**
 * Queues person `personId`'s key announcement, unless the person's organisation has no topic,
 * the person's key or the current seal key is not the one announced (changed meanwhile), a live
 * announcement of the pair exists, or a record message of the person's older key or older seal
 * key is unsettled (`PERSON_OLDER_MESSAGES_UNSETTLED`: a later pass queues it). Its generation is
 * one more than the key's last announcement's, so each seal key gets its own row under
 * `ledger_transactions_one_announcement`. The new row, or null.
 */
export function queuePersonAnnouncementIn(db: Db, rules: JournalRules, personId: string, announcement: PersonKeyAnnouncement): LedgerTransactionRow | null {
  rules.checkLength(announcement.message);
  const t = rules.clock.now();
  const key = Buffer.from(announcement.keyFingerprint);
  // Raw reads through the client: drizzle's `get` of raw SQL answers arrays on this driver.
  const client = db.$client;
  return db.transaction((tx) => {
    const p = client
      .query("SELECT p.org_id AS org_id, p.key_fingerprint AS key, o.topic_id AS topic_id FROM persons p JOIN organisations o ON o.id = p.org_id WHERE p.id = ?")
      .get(personId) as { org_id: string; key: Uint8Array | null; topic_id: string | null } | null;
    if (p === null || p.topic_id === null || p.key === null || p.org_id !== announcement.orgId || !Buffer.from(p.key).equals(key)) return null;
    if (!sealIsCurrent(tx, announcement.sealFingerprint)) return null;
    if (tx.get(sql`SELECT 1 AS held FROM persons p WHERE p.id = ${personId} AND ${sql.raw(PERSON_OLDER_MESSAGES_UNSETTLED)}`) !== undefined) return null;
    const prior = client
      .query(
        `SELECT count(CASE WHEN state <> 'abandoned' AND seal_fingerprint = ? THEN 1 END) AS live, max(announcement_generation) AS last
           FROM ledger_transactions WHERE org_id = ? AND key_fingerprint = ? AND kind = 'key_announcement'`,
      )
      .get(Buffer.from(announcement.sealFingerprint), p.org_id, key) as { live: number; last: number | null } | null;
    if (prior !== null && prior.live > 0) return null;
    const generation = prior === null || prior.last === null ? 0 : Number(prior.last) + 1;
    try {
      return insertPending(
        tx,
        rules,
        rules.newTransactionId(),
        { kind: "key_announcement", orgId: p.org_id, recordId: null, topicId: p.topic_id, message: announcement.message, keyFingerprint: key, announcementGeneration: generation, sealFingerprint: announcement.sealFingerprint },
        t,
      );
    } catch (e) {
      if (/UNIQUE/i.test((e as Error).message)) return null;
      throw e;
    }
  }, IMMEDIATE);
}

// ---- key compromises ---------------------------------------------------------------------

/** The change counter's value now. */
export function changeCounter(db: Db): number {
  return Number((db.$client.query(CHANGE_COUNTER).get() as { value: number } | null)?.value ?? 0);
}

/** The keys declared compromised without a live `key_compromise` row (the port's `keysWantingCompromiseMessage`). */
export function keysWantingCompromise(db: Db): CompromisedKey[] {
  const rows = db.$client.query(WANTING_COMPROMISE).all() as { org_id: string; person_id: string | null; fingerprint: Uint8Array; since: number }[];
  return rows.map((r) => ({ orgId: r.org_id, personId: r.person_id, keyFingerprint: new Uint8Array(r.fingerprint), sinceMs: Number(r.since) }));
}

/** Queues the key's `key_compromise` row on its organisation's topic, unless it has none or a live one exists (`ledger_transactions_one_compromise`). */
export function queueCompromiseIn(db: Db, rules: JournalRules, key: CompromisedKey, message: Uint8Array): LedgerTransactionRow | null {
  rules.checkLength(message);
  const t = rules.clock.now();
  return db.transaction((tx) => {
    const org = tx.select({ topicId: organisations.topicId }).from(organisations).where(eq(organisations.id, key.orgId)).get();
    if (org === undefined || org.topicId === null) return null;
    try {
      return insertPending(tx, rules, rules.newTransactionId(), { kind: "key_compromise", orgId: key.orgId, recordId: null, topicId: org.topicId, message, keyFingerprint: key.keyFingerprint }, t);
    } catch (e) {
      if (/UNIQUE/i.test((e as Error).message)) return null;
      throw e;
    }
  }, IMMEDIATE);
}

/** Inside an IMMEDIATE transaction: is the row still in one of `states`? Makes every change idempotent. */
function inState(tx: Pick<Db, "select">, id: string, states: readonly TransactionState[]): boolean {
  const cur = tx.select({ state: ledgerTransactions.state }).from(ledgerTransactions).where(eq(ledgerTransactions.transactionId, id)).get();
  return cur !== undefined && states.includes(cur.state);
}

/**
 * The record a `record_message` row anchors: by its primary key, and still carrying this
 * transaction. `records.transaction_id` has no index, and a scan of the records table (each row
 * holds ML-DSA signatures, kilobytes) on every state change made anchoring slow down as the table
 * grew, until it fell behind record creation for good.
 */
function recordOf(row: Pick<LedgerTransactionRow, "recordId" | "transactionId">) {
  return row.recordId !== null ? and(eq(records.id, row.recordId), eq(records.transactionId, row.transactionId)) : eq(records.transactionId, row.transactionId);
}
