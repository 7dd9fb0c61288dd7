/**
 * The mirror node's view models: rows of the local ledger (messages, transactions) in the public
 * mirror node's JSON field names and value formats (hiero-mirror-node REST v1): timestamps as
 * `seconds.nanos` text, entity ids as `0.0.N`, bytes as base64, results by ResponseCodeEnum name.
 * Pure functions over rows; what to show is decided by the caller.
 *
 * Evaluates @hashgraph/proto (result names, chunk transaction ids): mirror.ts imports it with the
 * first request that shows a row, not at the ledger's start (docs/local-ledger.md, "Idle memory").
 */
import { proto } from "@hashgraph/proto";
import { base64, entityId, formatTimestamp, mirrorTransactionId } from "./ids.ts";
import type { MessageRow, TxRow } from "./rows.ts";
import { NODE_ACCOUNT, transfersOf } from "./rules.ts";

export function transactionIdView(bytes: Uint8Array): Record<string, unknown> {
  const id = proto.TransactionID.decode(bytes);
  const a = id.accountID;
  const start = id.transactionValidStart;
  return {
    account_id: `${Number(a?.shardNum ?? 0)}.${Number(a?.realmNum ?? 0)}.${Number(a?.accountNum ?? 0)}`,
    nonce: id.nonce ?? 0,
    scheduled: id.scheduled ?? false,
    transaction_valid_start: formatTimestamp({ seconds: Number(start?.seconds ?? 0), nanos: start?.nanos ?? 0 }),
  };
}

export function messageView(m: MessageRow, encoding: "base64" | "utf-8" = "base64"): Record<string, unknown> {
  return {
    chunk_info:
      m.chunkNumber == null
        ? null
        : {
            initial_transaction_id: m.initialTransactionId ? transactionIdView(m.initialTransactionId) : null,
            number: m.chunkNumber,
            total: m.chunkTotal,
          },
    consensus_timestamp: formatTimestamp(m.consensus),
    message: encoding === "utf-8" ? Buffer.from(m.message).toString("utf8") : base64(m.message),
    payer_account_id: entityId(m.payer),
    running_hash: base64(m.runningHash),
    running_hash_version: m.runningHashVersion,
    sequence_number: m.sequenceNumber,
    topic_id: entityId(m.topicNum),
  };
}

export function resultName(code: number | null): string {
  return (code != null ? proto.ResponseCodeEnum[code] : undefined) ?? "UNKNOWN";
}

export function transactionView(tx: TxRow): Record<string, unknown> {
  return {
    // Not part of an atomic batch: the mirror node always writes the field, null then.
    batch_key: null,
    bytes: null,
    charged_tx_fee: tx.chargedFee ?? 0,
    consensus_timestamp: tx.consensus ? formatTimestamp(tx.consensus) : null,
    entity_id: tx.entityNum != null ? entityId(tx.entityNum) : null,
    max_custom_fees: [],
    max_fee: String(tx.maxFee),
    memo_base64: base64(tx.memo),
    name: tx.type,
    nft_transfers: [],
    node: entityId(NODE_ACCOUNT),
    nonce: tx.nonce,
    parent_consensus_timestamp: null,
    result: resultName(tx.result),
    scheduled: tx.scheduled,
    staking_reward_transfers: [],
    token_transfers: [],
    transaction_hash: base64(tx.transactionHash),
    transaction_id: mirrorTransactionId(tx.payer, tx.validStart),
    transfers: transfersOf(tx)
      .sort((a, b) => a.account - b.account)
      .map((t) => ({ account: entityId(t.account), amount: t.amount, is_approval: false })),
    valid_duration_seconds: String(tx.validDurationSeconds),
    valid_start_timestamp: formatTimestamp(tx.validStart),
  };
}
