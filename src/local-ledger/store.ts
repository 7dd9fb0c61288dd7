/**
 * The local ledger's own SQLite file: accounts, topics, every accepted transaction (pending,
 * dropped or final) and the topic messages that reached consensus.
 *
 * Contract: a transaction the node answered OK to at precheck is in `transactions` before the
 * answer leaves (so it reaches consensus after a crash or restart, and a resubmission is a
 * DUPLICATE_TRANSACTION); topic state, fees, the message and the transaction's result are written
 * in one SQLite transaction, so a crash never leaves a sequence number without its message.
 */
import { Database } from "bun:sqlite";
import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { Timestamp } from "./ids.ts";
import {
  messageFromRow,
  topicFromRow,
  txFromRow,
  type AccountRow,
  type Comparison,
  type MessageQuery,
  type MessageRow,
  type NewTransaction,
  type RawMessage,
  type RawTopic,
  type RawTx,
  type TopicRow,
  type TxOutcome,
  type TxRow,
} from "./rows.ts";
import { LEDGER_PRAGMAS, SCHEMA, SCHEMA_VERSION } from "./schema.ts";

const SQL_OP: Record<Comparison, string> = { eq: "=", ne: "!=", gt: ">", gte: ">=", lt: "<", lte: "<=" };

export interface LedgerStore {
  getMeta(key: string): string | null;
  setMeta(key: string, value: string): void;
  getAccount(num: number): AccountRow | null;
  insertAccount(row: AccountRow): void;
  addBalance(num: number, delta: number): void;
  getTopic(num: number): TopicRow | null;
  insertTopic(row: TopicRow): void;
  advanceTopic(num: number, sequenceNumber: number, runningHash: Uint8Array): void;
  /** Allocates the next entity number (accounts and topics share one sequence, as on Hedera). */
  nextEntityNum(): number;
  peekEntityNum(): number;
  findTransaction(payer: number, validStart: Timestamp, nonce: number, scheduled: boolean): TxRow | null;
  /** Inserts an accepted transaction; returns false when its transaction id is already known. */
  insertTransaction(tx: NewTransaction): boolean;
  duePending(nowMs: number, limit: number): TxRow[];
  nextDueMs(): number | null;
  /** The latest due time of a pending transaction, or null when none is pending. */
  lastDueMs(): number | null;
  finalizeTransaction(seq: number, outcome: TxOutcome): void;
  insertMessage(row: MessageRow): void;
  lastConsensus(): Timestamp | null;
  /** Final transactions with this payer and valid start, in consensus order. */
  finalTransactionsById(payer: number, validStart: Timestamp): TxRow[];
  finalTransactionsByHash(hash: Uint8Array): TxRow[];
  getMessage(topicNum: number, sequenceNumber: number): MessageRow | null;
  messageAt(consensus: Timestamp): MessageRow | null;
  listMessages(query: MessageQuery): MessageRow[];
  /** Runs `fn` in one synchronous SQLite transaction. `fn` MUST NOT be async. */
  atomically<T>(fn: () => T): T;
  close(): void;
}

/** First entity number handed out, as on a fresh local Hedera network. */
export const FIRST_ENTITY_NUM = 1001;

/** Opens (creating when absent) the ledger database at `path`. */
export function openLedgerStore(path: string): LedgerStore {
  const isNew = !existsSync(path);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const db = new Database(path, { create: true, readwrite: true });
  for (const pragma of LEDGER_PRAGMAS) db.run(pragma);
  // The file holds the genesis account's private key: owner-only, whatever the umask.
  if (isNew) chmodSync(path, 0o600);

  const version = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
  if (version === 0) {
    db.transaction(() => {
      db.run(SCHEMA);
      db.run(`PRAGMA user_version = ${SCHEMA_VERSION}`);
    })();
  } else if (version !== SCHEMA_VERSION) {
    db.close();
    throw new Error(`local ledger database ${path} has schema version ${version}; this build reads version ${SCHEMA_VERSION}`);
  }

  const q = {
    getMeta: db.query<{ value: string }, [string]>("SELECT value FROM meta WHERE key = ?"),
    setMeta: db.query("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"),
    getAccount: db.query<AccountRow, [number]>("SELECT num, key, balance FROM accounts WHERE num = ?"),
    insertAccount: db.query("INSERT INTO accounts (num, key, balance) VALUES (?, ?, ?)"),
    addBalance: db.query("UPDATE accounts SET balance = balance + ? WHERE num = ?"),
    getTopic: db.query<RawTopic, [number]>("SELECT * FROM topics WHERE num = ?"),
    insertTopic: db.query(
      `INSERT INTO topics (num, memo, admin_key, submit_key, auto_renew_account, auto_renew_period, expiration_seconds,
         sequence_number, running_hash, created_seconds, created_nanos) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    advanceTopic: db.query("UPDATE topics SET sequence_number = ?, running_hash = ? WHERE num = ?"),
    findTx: db.query<RawTx, [number, number, number, number, number]>(
      "SELECT * FROM transactions WHERE payer = ? AND valid_start_seconds = ? AND valid_start_nanos = ? AND nonce = ? AND scheduled = ?",
    ),
    insertTx: db.query(
      `INSERT INTO transactions (payer, valid_start_seconds, valid_start_nanos, nonce, scheduled, type, transaction_bytes,
         transaction_hash, valid_duration_seconds, max_fee, memo, accepted_ms, due_ms, state, forced_status)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    ),
    duePending: db.query<RawTx, [number, number]>("SELECT * FROM transactions WHERE state = 'pending' AND due_ms <= ? ORDER BY seq LIMIT ?"),
    nextDue: db.query<{ due: number | null }, []>("SELECT min(due_ms) AS due FROM transactions WHERE state = 'pending'"),
    lastDue: db.query<{ due: number | null }, []>("SELECT max(due_ms) AS due FROM transactions WHERE state = 'pending'"),
    finalize: db.query(
      `UPDATE transactions SET state = 'final', consensus_seconds = ?, consensus_nanos = ?, result = ?, entity_num = ?,
         charged_fee = ?, topic_sequence_number = ?, topic_running_hash = ? WHERE seq = ?`,
    ),
    insertMessage: db.query(
      `INSERT INTO topic_messages (topic_num, sequence_number, consensus_seconds, consensus_nanos, message, payer, running_hash,
         running_hash_version, chunk_number, chunk_total, initial_transaction_id, tx_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    lastConsensus: db.query<{ consensus_seconds: number; consensus_nanos: number }, []>(
      "SELECT consensus_seconds, consensus_nanos FROM transactions WHERE state = 'final' ORDER BY consensus_seconds DESC, consensus_nanos DESC LIMIT 1",
    ),
    finalById: db.query<RawTx, [number, number, number]>(
      `SELECT * FROM transactions WHERE state = 'final' AND payer = ? AND valid_start_seconds = ? AND valid_start_nanos = ?
       ORDER BY consensus_seconds, consensus_nanos`,
    ),
    finalByHash: db.query<RawTx, [Uint8Array]>(
      "SELECT * FROM transactions WHERE state = 'final' AND transaction_hash = ? ORDER BY consensus_seconds, consensus_nanos",
    ),
    getMessage: db.query<RawMessage, [number, number]>("SELECT * FROM topic_messages WHERE topic_num = ? AND sequence_number = ?"),
    messageAt: db.query<RawMessage, [number, number]>("SELECT * FROM topic_messages WHERE consensus_seconds = ? AND consensus_nanos = ?"),
  };

  return {
    getMeta: (key) => q.getMeta.get(key)?.value ?? null,
    setMeta: (key, value) => void q.setMeta.run(key, value),
    getAccount: (num) => q.getAccount.get(num) ?? null,
    insertAccount: (row) => void q.insertAccount.run(row.num, row.key, row.balance),
    addBalance: (num, delta) => void q.addBalance.run(delta, num),
    getTopic: (num) => {
      const r = q.getTopic.get(num);
      return r ? topicFromRow(r) : null;
    },
    insertTopic: (t) =>
      void q.insertTopic.run(
        t.num,
        t.memo,
        t.adminKey,
        t.submitKey,
        t.autoRenewAccount,
        t.autoRenewPeriod,
        t.expirationSeconds,
        t.sequenceNumber,
        t.runningHash,
        t.createdSeconds,
        t.createdNanos,
      ),
    advanceTopic: (num, seq, hash) => void q.advanceTopic.run(seq, hash, num),
    nextEntityNum() {
      const next = Number(q.getMeta.get("next_entity_num")?.value ?? FIRST_ENTITY_NUM);
      q.setMeta.run("next_entity_num", String(next + 1));
      return next;
    },
    peekEntityNum: () => Number(q.getMeta.get("next_entity_num")?.value ?? FIRST_ENTITY_NUM),
    findTransaction(payer, validStart, nonce, scheduled) {
      const r = q.findTx.get(payer, validStart.seconds, validStart.nanos, nonce, scheduled ? 1 : 0);
      return r ? txFromRow(r) : null;
    },
    insertTransaction(tx) {
      const result = q.insertTx.run(
        tx.payer,
        tx.validStart.seconds,
        tx.validStart.nanos,
        tx.nonce,
        tx.scheduled ? 1 : 0,
        tx.type,
        tx.transactionBytes,
        tx.transactionHash,
        tx.validDurationSeconds,
        tx.maxFee,
        tx.memo,
        tx.acceptedMs,
        tx.dueMs,
        tx.state,
        tx.forcedStatus,
      );
      return result.changes === 1;
    },
    duePending: (nowMs, limit) => q.duePending.all(nowMs, limit).map(txFromRow),
    nextDueMs: () => q.nextDue.get()?.due ?? null,
    lastDueMs: () => q.lastDue.get()?.due ?? null,
    finalizeTransaction: (seq, o) =>
      void q.finalize.run(
        o.consensus.seconds,
        o.consensus.nanos,
        o.result,
        o.entityNum,
        o.chargedFee,
        o.topicSequenceNumber,
        o.topicRunningHash,
        seq,
      ),
    insertMessage: (m) =>
      void q.insertMessage.run(
        m.topicNum,
        m.sequenceNumber,
        m.consensus.seconds,
        m.consensus.nanos,
        m.message,
        m.payer,
        m.runningHash,
        m.runningHashVersion,
        m.chunkNumber,
        m.chunkTotal,
        m.initialTransactionId,
        m.txSeq,
      ),
    lastConsensus() {
      const r = q.lastConsensus.get();
      return r ? { seconds: r.consensus_seconds, nanos: r.consensus_nanos } : null;
    },
    finalTransactionsById: (payer, vs) => q.finalById.all(payer, vs.seconds, vs.nanos).map(txFromRow),
    finalTransactionsByHash: (hash) => q.finalByHash.all(hash).map(txFromRow),
    getMessage(topicNum, sequenceNumber) {
      const r = q.getMessage.get(topicNum, sequenceNumber);
      return r ? messageFromRow(r) : null;
    },
    messageAt(ts) {
      const r = q.messageAt.get(ts.seconds, ts.nanos);
      return r ? messageFromRow(r) : null;
    },
    listMessages(query) {
      const where = ["topic_num = ?"];
      const params: number[] = [query.topicNum];
      for (const f of query.sequenceNumber) {
        where.push(`sequence_number ${SQL_OP[f.op]} ?`);
        params.push(f.value);
      }
      for (const f of query.timestamp) {
        // Row-value comparison orders by (seconds, nanos), i.e. by the instant.
        where.push(`(consensus_seconds, consensus_nanos) ${SQL_OP[f.op]} (?, ?)`);
        params.push(f.value.seconds, f.value.nanos);
      }
      const dir = query.order === "desc" ? "DESC" : "ASC";
      params.push(query.limit);
      // Not cached: the filter shape varies per request.
      const rows = db
        .prepare<RawMessage, number[]>(
          `SELECT * FROM topic_messages WHERE ${where.join(" AND ")} ORDER BY consensus_seconds ${dir}, consensus_nanos ${dir} LIMIT ?`,
        )
        .all(...params);
      return rows.map(messageFromRow);
    },
    atomically: (fn) => db.transaction(fn)(),
    close: () => db.close(),
  };
}
