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

/**
 * Set in this order on purpose:
 * 1. `busy_timeout` first, so even the next pragmas wait for a lock another connection holds
 *    rather than failing at once with SQLITE_BUSY.
 * 2. `journal_mode=WAL`: the mirror's readers never block the consensus writer, nor it them.
 * 3. `foreign_keys=ON`: off by default and per connection.
 * 4. `synchronous=FULL`: a precheck OK promises the transaction will reach consensus, and the
 *    product relies on that promise across crashes; in WAL mode NORMAL may lose the last commits
 *    on power loss, FULL syncs the WAL on every commit.
 */
export const LEDGER_PRAGMAS = ["PRAGMA busy_timeout = 5000", "PRAGMA journal_mode = WAL", "PRAGMA foreign_keys = ON", "PRAGMA synchronous = FULL"];

const SCHEMA_VERSION = 1;

const SCHEMA = `
CREATE TABLE meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;

CREATE TABLE accounts (
  num INTEGER PRIMARY KEY,
  key BLOB NOT NULL,              -- proto.Key bytes
  balance INTEGER NOT NULL        -- tinybars
) STRICT;

CREATE TABLE topics (
  num INTEGER PRIMARY KEY,
  memo TEXT NOT NULL,
  admin_key BLOB,                 -- proto.Key bytes, NULL when immutable
  submit_key BLOB,                -- proto.Key bytes, NULL when anyone may submit
  auto_renew_account INTEGER,
  auto_renew_period INTEGER NOT NULL,
  expiration_seconds INTEGER NOT NULL,
  sequence_number INTEGER NOT NULL,
  running_hash BLOB NOT NULL,
  created_seconds INTEGER NOT NULL,
  created_nanos INTEGER NOT NULL
) STRICT;

-- Every transaction accepted at precheck, in acceptance order (seq). The unique key is the
-- transaction id: the deduplication the nodes do.
CREATE TABLE transactions (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  payer INTEGER NOT NULL,
  valid_start_seconds INTEGER NOT NULL,
  valid_start_nanos INTEGER NOT NULL,
  nonce INTEGER NOT NULL,
  scheduled INTEGER NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('CONSENSUSCREATETOPIC', 'CONSENSUSSUBMITMESSAGE')),
  transaction_bytes BLOB NOT NULL,  -- proto.Transaction exactly as received
  transaction_hash BLOB NOT NULL,   -- SHA-384 of signedTransactionBytes, as the SDK computes it
  valid_duration_seconds INTEGER NOT NULL,
  max_fee INTEGER NOT NULL,
  memo BLOB NOT NULL,
  accepted_ms INTEGER NOT NULL,
  due_ms INTEGER NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'dropped', 'final')),
  forced_status INTEGER,            -- fault hook: the result to give at consensus
  consensus_seconds INTEGER,
  consensus_nanos INTEGER,
  result INTEGER,                   -- ResponseCodeEnum
  entity_num INTEGER,               -- the topic created, or the topic submitted to
  charged_fee INTEGER,
  topic_sequence_number INTEGER,
  topic_running_hash BLOB,
  UNIQUE (payer, valid_start_seconds, valid_start_nanos, nonce, scheduled)
) STRICT;
CREATE INDEX transactions_pending ON transactions (due_ms, seq) WHERE state = 'pending';
CREATE INDEX transactions_consensus ON transactions (consensus_seconds, consensus_nanos) WHERE state = 'final';
CREATE INDEX transactions_hash ON transactions (transaction_hash);

CREATE TABLE topic_messages (
  topic_num INTEGER NOT NULL REFERENCES topics (num),
  sequence_number INTEGER NOT NULL,
  consensus_seconds INTEGER NOT NULL,
  consensus_nanos INTEGER NOT NULL,
  message BLOB NOT NULL,
  payer INTEGER NOT NULL,
  running_hash BLOB NOT NULL,
  running_hash_version INTEGER NOT NULL,
  chunk_number INTEGER,
  chunk_total INTEGER,
  initial_transaction_id BLOB,      -- proto.TransactionID bytes
  tx_seq INTEGER NOT NULL REFERENCES transactions (seq),
  PRIMARY KEY (topic_num, sequence_number)
) STRICT;
CREATE INDEX topic_messages_consensus ON topic_messages (consensus_seconds, consensus_nanos);
CREATE INDEX topic_messages_topic_consensus ON topic_messages (topic_num, consensus_seconds, consensus_nanos);
`;

export type TxType = "CONSENSUSCREATETOPIC" | "CONSENSUSSUBMITMESSAGE";
export type TxState = "pending" | "dropped" | "final";

export interface AccountRow {
  readonly num: number;
  readonly key: Uint8Array;
  readonly balance: number;
}

export interface TopicRow {
  readonly num: number;
  readonly memo: string;
  readonly adminKey: Uint8Array | null;
  readonly submitKey: Uint8Array | null;
  readonly autoRenewAccount: number | null;
  readonly autoRenewPeriod: number;
  readonly expirationSeconds: number;
  readonly sequenceNumber: number;
  readonly runningHash: Uint8Array;
  readonly createdSeconds: number;
  readonly createdNanos: number;
}

export interface NewTransaction {
  readonly payer: number;
  readonly validStart: Timestamp;
  readonly nonce: number;
  readonly scheduled: boolean;
  readonly type: TxType;
  readonly transactionBytes: Uint8Array;
  readonly transactionHash: Uint8Array;
  readonly validDurationSeconds: number;
  readonly maxFee: number;
  readonly memo: Uint8Array;
  readonly acceptedMs: number;
  readonly dueMs: number;
  readonly state: "pending" | "dropped";
  readonly forcedStatus: number | null;
}

export interface TxRow extends Omit<NewTransaction, "state"> {
  readonly seq: number;
  readonly state: TxState;
  readonly consensus: Timestamp | null;
  readonly result: number | null;
  readonly entityNum: number | null;
  readonly chargedFee: number | null;
  readonly topicSequenceNumber: number | null;
  readonly topicRunningHash: Uint8Array | null;
}

export interface TxOutcome {
  readonly consensus: Timestamp;
  readonly result: number;
  readonly entityNum: number | null;
  readonly chargedFee: number;
  readonly topicSequenceNumber: number | null;
  readonly topicRunningHash: Uint8Array | null;
}

export interface MessageRow {
  readonly topicNum: number;
  readonly sequenceNumber: number;
  readonly consensus: Timestamp;
  readonly message: Uint8Array;
  readonly payer: number;
  readonly runningHash: Uint8Array;
  readonly runningHashVersion: number;
  readonly chunkNumber: number | null;
  readonly chunkTotal: number | null;
  readonly initialTransactionId: Uint8Array | null;
  readonly txSeq: number;
}

export type Comparison = "eq" | "ne" | "gt" | "gte" | "lt" | "lte";

export interface MessageQuery {
  readonly topicNum: number;
  readonly sequenceNumber: readonly { op: Comparison; value: number }[];
  readonly timestamp: readonly { op: Comparison; value: Timestamp }[];
  readonly order: "asc" | "desc";
  readonly limit: number;
}

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

interface RawTx {
  seq: number;
  payer: number;
  valid_start_seconds: number;
  valid_start_nanos: number;
  nonce: number;
  scheduled: number;
  type: TxType;
  transaction_bytes: Uint8Array;
  transaction_hash: Uint8Array;
  valid_duration_seconds: number;
  max_fee: number;
  memo: Uint8Array;
  accepted_ms: number;
  due_ms: number;
  state: TxState;
  forced_status: number | null;
  consensus_seconds: number | null;
  consensus_nanos: number | null;
  result: number | null;
  entity_num: number | null;
  charged_fee: number | null;
  topic_sequence_number: number | null;
  topic_running_hash: Uint8Array | null;
}

interface RawMessage {
  topic_num: number;
  sequence_number: number;
  consensus_seconds: number;
  consensus_nanos: number;
  message: Uint8Array;
  payer: number;
  running_hash: Uint8Array;
  running_hash_version: number;
  chunk_number: number | null;
  chunk_total: number | null;
  initial_transaction_id: Uint8Array | null;
  tx_seq: number;
}

interface RawTopic {
  num: number;
  memo: string;
  admin_key: Uint8Array | null;
  submit_key: Uint8Array | null;
  auto_renew_account: number | null;
  auto_renew_period: number;
  expiration_seconds: number;
  sequence_number: number;
  running_hash: Uint8Array;
  created_seconds: number;
  created_nanos: number;
}

function txFromRow(r: RawTx): TxRow {
  return {
    seq: r.seq,
    payer: r.payer,
    validStart: { seconds: r.valid_start_seconds, nanos: r.valid_start_nanos },
    nonce: r.nonce,
    scheduled: r.scheduled === 1,
    type: r.type,
    transactionBytes: r.transaction_bytes,
    transactionHash: r.transaction_hash,
    validDurationSeconds: r.valid_duration_seconds,
    maxFee: r.max_fee,
    memo: r.memo,
    acceptedMs: r.accepted_ms,
    dueMs: r.due_ms,
    state: r.state,
    forcedStatus: r.forced_status,
    consensus: r.consensus_seconds == null || r.consensus_nanos == null ? null : { seconds: r.consensus_seconds, nanos: r.consensus_nanos },
    result: r.result,
    entityNum: r.entity_num,
    chargedFee: r.charged_fee,
    topicSequenceNumber: r.topic_sequence_number,
    topicRunningHash: r.topic_running_hash,
  };
}

function messageFromRow(r: RawMessage): MessageRow {
  return {
    topicNum: r.topic_num,
    sequenceNumber: r.sequence_number,
    consensus: { seconds: r.consensus_seconds, nanos: r.consensus_nanos },
    message: r.message,
    payer: r.payer,
    runningHash: r.running_hash,
    runningHashVersion: r.running_hash_version,
    chunkNumber: r.chunk_number,
    chunkTotal: r.chunk_total,
    initialTransactionId: r.initial_transaction_id,
    txSeq: r.tx_seq,
  };
}

function topicFromRow(r: RawTopic): TopicRow {
  return {
    num: r.num,
    memo: r.memo,
    adminKey: r.admin_key,
    submitKey: r.submit_key,
    autoRenewAccount: r.auto_renew_account,
    autoRenewPeriod: r.auto_renew_period,
    expirationSeconds: r.expiration_seconds,
    sequenceNumber: r.sequence_number,
    runningHash: r.running_hash,
    createdSeconds: r.created_seconds,
    createdNanos: r.created_nanos,
  };
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
