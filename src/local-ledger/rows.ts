/**
 * The local ledger's rows: what the store hands the node and the mirror (accounts, topics,
 * transactions, topic messages, message filters), the raw SQLite rows they are read from, and
 * the one mapping between the two. Types and pure functions; the columns are schema.ts's.
 */
import type { Timestamp } from "./ids.ts";

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

export interface RawTx {
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

export interface RawMessage {
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

export interface RawTopic {
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

export function txFromRow(r: RawTx): TxRow {
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

export function messageFromRow(r: RawMessage): MessageRow {
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

export function topicFromRow(r: RawTopic): TopicRow {
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
