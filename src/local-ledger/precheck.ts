/**
 * Precheck: what a consensus node answers in the `TransactionResponse` of a transaction RPC, in
 * the order the nodes check (hedera-services IngestChecker): size and syntax, transaction id,
 * node account, memo, validity window, supported type, duplicates, the fault hooks, the payer's
 * account and signature, fees.
 *
 * Guarantee: an OK answer is given only after the transaction is stored (`pending`, or `dropped`
 * by a fault hook), so it reaches consensus across a crash or restart; every other answer leaves
 * nothing behind. The store refusing a duplicate id is answered DUPLICATE_TRANSACTION even when
 * the earlier check passed.
 */
import { proto } from "@hashgraph/proto";
import { decodeKey } from "./key-codec.ts";
import { createSignatureCheck } from "./keys.ts";
import { msToNs, timestampToNs } from "./ids.ts";
import type { NodeOptions, Received } from "./node.ts";
import type { Faults } from "./faults.ts";
import { sha384 } from "./running-hash.ts";
import {
  FEES,
  MAX_MEMO_BYTES,
  MAX_TRANSACTION_BYTES,
  MAX_VALID_DURATION_S,
  MIN_VALID_DURATION_S,
  NODE_ACCOUNT,
  VALIDITY_BUFFER_S,
} from "./rules.ts";
import { int64, openTransaction, toNumber, tsOf, txKind, utf8Length } from "./wire.ts";

const R = proto.ResponseCodeEnum;

function precheck(code: number, cost = 0): proto.ITransactionResponse {
  return { nodeTransactionPrecheckCode: code, cost: int64(cost) };
}

type PrecheckOptions = Pick<NodeOptions, "store" | "clock" | "consensusMs" | "consensusIntervalMs" | "verifyEd25519" | "onAccepted"> & { readonly faults: Faults };

/** The node's answer to any transaction RPC; stores the transaction when the answer is OK. */
export function createPrecheck(options: PrecheckOptions): (request: Received<proto.Transaction>) => Promise<proto.ITransactionResponse> {
  const { store, clock, faults } = options;
  const interval = options.consensusIntervalMs;
  /**
   * The latest due time given so far (transactions left pending by the last run included): with a
   * consensus interval, the next transaction is due no sooner than `interval` after it. Read once,
   * and only with an interval.
   */
  let lastDueMs = interval > 0 ? (store.lastDueMs() ?? Number.NEGATIVE_INFINITY) : Number.NEGATIVE_INFINITY;

  return async function submit(request: Received<proto.Transaction>): Promise<proto.ITransactionResponse> {
    if (request.bytes.length > MAX_TRANSACTION_BYTES) return precheck(R.TRANSACTION_OVERSIZE);
    if (request.message == null) return precheck(R.INVALID_TRANSACTION);
    const opened = openTransaction(request.message);
    if ("code" in opened) return precheck(opened.code);
    const { body } = opened;

    const txId = body.transactionID;
    if (txId?.accountID == null || txId.transactionValidStart == null) return precheck(R.INVALID_TRANSACTION_ID);
    if (txId.scheduled || (txId.nonce ?? 0) !== 0) return precheck(R.TRANSACTION_ID_FIELD_NOT_ALLOWED);
    const payer = txId.accountID;
    const payerNum = toNumber(payer.accountNum);
    if (toNumber(payer.shardNum) !== 0 || toNumber(payer.realmNum) !== 0 || payerNum <= 0) return precheck(R.PAYER_ACCOUNT_NOT_FOUND);
    const node = body.nodeAccountID;
    if (node == null || toNumber(node.shardNum) !== 0 || toNumber(node.realmNum) !== 0 || toNumber(node.accountNum) !== NODE_ACCOUNT) {
      return precheck(R.INVALID_NODE_ACCOUNT);
    }
    if (utf8Length(body.memo ?? "") > MAX_MEMO_BYTES) return precheck(R.MEMO_TOO_LONG);
    if ((body.memo ?? "").includes("\0")) return precheck(R.INVALID_ZERO_BYTE_IN_STRING);

    // The validity window, with the nodes' margin: a transaction must have VALIDITY_BUFFER_S to
    // live when it arrives.
    const validDuration = toNumber(body.transactionValidDuration?.seconds);
    if (validDuration < MIN_VALID_DURATION_S || validDuration > MAX_VALID_DURATION_S) return precheck(R.INVALID_TRANSACTION_DURATION);
    const validStart = tsOf(txId.transactionValidStart);
    const validStartNs = timestampToNs(validStart);
    const nowNs = msToNs(clock.now());
    if (nowNs >= validStartNs + BigInt(validDuration - VALIDITY_BUFFER_S) * 1_000_000_000n) return precheck(R.TRANSACTION_EXPIRED);
    if (validStartNs > nowNs) return precheck(R.INVALID_TRANSACTION_START);

    const kind = txKind(body);
    if (kind == null) return precheck(R.NOT_SUPPORTED);
    if (body.batchKey != null) return precheck(R.BATCH_KEY_SET_ON_NON_INNER_TRANSACTION);
    if (kind === "CONSENSUSSUBMITMESSAGE") {
      const op = body.consensusSubmitMessage!;
      if (op.topicID == null) return precheck(R.INVALID_TOPIC_ID);
      if (op.message == null || op.message.length === 0) return precheck(R.INVALID_TOPIC_MESSAGE);
    } else {
      const op = body.consensusCreateTopic!;
      // HIP-991 fees are not implemented here; refusing beats silently ignoring them.
      if ((op.customFees ?? []).length > 0 || op.feeScheduleKey != null || (op.feeExemptKeyList ?? []).length > 0) {
        return precheck(R.NOT_SUPPORTED);
      }
    }

    if (store.findTransaction(payerNum, validStart, 0, false)) return precheck(R.DUPLICATE_TRANSACTION);
    const injected = faults.atPrecheck();
    if (injected !== null) return precheck(injected);

    const account = store.getAccount(payerNum);
    if (account == null) return precheck(R.PAYER_ACCOUNT_NOT_FOUND);
    const payerKey = decodeKey(account.key);
    const sigs = createSignatureCheck(opened.bodyBytes, opened.sigMap, options.verifyEd25519);
    if (!sigs.satisfies(payerKey)) return precheck(R.INVALID_SIGNATURE);

    const fee = FEES[kind];
    const maxFee = toNumber(body.transactionFee);
    if (maxFee < fee) return precheck(R.INSUFFICIENT_TX_FEE, fee);
    if (account.balance < fee) return precheck(R.INSUFFICIENT_PAYER_BALANCE, fee);

    const { dropped, forcedStatus } = faults.atAcceptance();
    const acceptedMs = clock.now();
    // With a consensus interval, each transaction takes its turn after the one accepted before it:
    // the node brings at most one to consensus per interval.
    const dueMs = Math.max(acceptedMs + options.consensusMs, lastDueMs + interval);
    const inserted = store.insertTransaction({
      payer: payerNum,
      validStart,
      nonce: 0,
      scheduled: false,
      type: kind,
      transactionBytes: request.bytes,
      transactionHash: sha384(opened.signedBytesForHash),
      validDurationSeconds: validDuration,
      maxFee,
      memo: new TextEncoder().encode(body.memo ?? ""),
      acceptedMs,
      dueMs,
      state: dropped ? "dropped" : "pending",
      forcedStatus,
    });
    // The duplicate check above and this insert run without a pause in between; the store
    // refusing the row anyway still means a duplicate.
    if (!inserted) return precheck(R.DUPLICATE_TRANSACTION);
    if (interval > 0) lastDueMs = dueMs;
    options.onAccepted(dueMs);
    return precheck(R.OK);
  };
}
