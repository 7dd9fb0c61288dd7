/**
 * The node's answers to query RPCs: receipts and account balances (free), transaction records,
 * topic info and version info (paid: the payment is checked as the nodes check it, not charged).
 *
 * Guarantees, as on a Hedera network: a receipt is UNKNOWN before consensus and final after it,
 * for `receiptTtlMs` after consensus, then RECEIPT_NOT_FOUND; a dropped transaction's receipt
 * stays UNKNOWN until its window closes; a query for anything else gets NOT_SUPPORTED in its
 * response header. Queries read the store and write nothing.
 */
import { proto } from "@hashgraph/proto";
import { msToNs, timestampToNs, type Timestamp } from "./ids.ts";
import { decodeKey } from "./key-codec.ts";
import { createSignatureCheck } from "./keys.ts";
import type { NodeOptions, Received } from "./node.ts";
import type { TxRow } from "./rows.ts";
import { EXCHANGE_RATE, MAX_VALID_DURATION_S, MIN_VALID_DURATION_S, NODE_ACCOUNT, QUERY_COST, transfersOf } from "./rules.ts";
import { RUNNING_HASH_VERSION } from "./running-hash.ts";
import { int64, openTransaction, protoTs, toNumber, tsOf } from "./wire.ts";

const R = proto.ResponseCodeEnum;

function exchangeRates(now: Timestamp): proto.IExchangeRateSet {
  const expiration = { seconds: int64(Math.floor(now.seconds / 3600 + 1) * 3600), nanos: 0 };
  return {
    currentRate: { hbarEquiv: EXCHANGE_RATE.hbarEquiv, centEquiv: EXCHANGE_RATE.centEquiv, expirationTime: expiration },
    nextRate: { hbarEquiv: EXCHANGE_RATE.hbarEquiv, centEquiv: EXCHANGE_RATE.centEquiv, expirationTime: expiration },
  };
}

/** The receipt of a transaction that reached consensus. */
export function receiptOf(tx: TxRow): proto.ITransactionReceipt {
  const receipt: proto.ITransactionReceipt = {
    status: tx.result ?? R.UNKNOWN,
    exchangeRate: exchangeRates(tx.consensus ?? { seconds: 0, nanos: 0 }),
  };
  if (tx.result === R.SUCCESS && tx.type === "CONSENSUSCREATETOPIC" && tx.entityNum != null) {
    receipt.topicID = { shardNum: int64(0), realmNum: int64(0), topicNum: int64(tx.entityNum) };
  }
  if (tx.result === R.SUCCESS && tx.type === "CONSENSUSSUBMITMESSAGE" && tx.topicSequenceNumber != null) {
    receipt.topicSequenceNumber = int64(tx.topicSequenceNumber);
    receipt.topicRunningHash = tx.topicRunningHash ?? new Uint8Array();
    receipt.topicRunningHashVersion = int64(RUNNING_HASH_VERSION);
  }
  return receipt;
}

/** Query field name in proto.Query → response field name in proto.Response, where they differ. */
const RESPONSE_FIELD: Readonly<Record<string, string>> = {
  contractGetBytecode: "contractGetBytecodeResponse",
  ContractGetRecords: "contractGetRecordsResponse",
};

export function createQueries(options: Pick<NodeOptions, "store" | "clock" | "receiptTtlMs" | "verifyEd25519">): (request: Received<proto.Query>) => Promise<proto.IResponse> {
  const { store, clock } = options;

  function header(code: number, responseType: number | null | undefined, cost = 0): proto.IResponseHeader {
    return { nodeTransactionPrecheckCode: code, responseType: responseType ?? proto.ResponseType.ANSWER_ONLY, cost: int64(cost) };
  }

  /**
   * Checks the payment of a paid query as the nodes do at precheck. Payments are validated, not
   * charged: the ledger keeps no record of query payments (a documented simplification).
   */
  async function checkPayment(payment: proto.ITransaction | null | undefined, cost: number): Promise<number> {
    if (payment == null) return R.INSUFFICIENT_TX_FEE;
    const opened = openTransaction(proto.Transaction.create(payment));
    if ("code" in opened) return opened.code;
    const { body } = opened;
    if (body.data !== "cryptoTransfer") return R.INSUFFICIENT_TX_FEE;
    const node = body.nodeAccountID;
    if (node == null || toNumber(node.accountNum) !== NODE_ACCOUNT) return R.INVALID_NODE_ACCOUNT;
    const txId = body.transactionID;
    if (txId?.accountID == null || txId.transactionValidStart == null) return R.INVALID_TRANSACTION_ID;
    const validStartNs = timestampToNs(tsOf(txId.transactionValidStart));
    const validDuration = toNumber(body.transactionValidDuration?.seconds);
    const nowNs = msToNs(clock.now());
    if (validDuration < MIN_VALID_DURATION_S || validDuration > MAX_VALID_DURATION_S) return R.INVALID_TRANSACTION_DURATION;
    if (nowNs >= validStartNs + BigInt(validDuration) * 1_000_000_000n) return R.TRANSACTION_EXPIRED;
    if (validStartNs > nowNs) return R.INVALID_TRANSACTION_START;
    const payerNum = toNumber(txId.accountID.accountNum);
    const account = store.getAccount(payerNum);
    if (account == null) return R.PAYER_ACCOUNT_NOT_FOUND;
    const payerKey = decodeKey(account.key);
    const sigs = createSignatureCheck(opened.bodyBytes, opened.sigMap, options.verifyEd25519);
    if (!sigs.satisfies(payerKey)) return R.INVALID_SIGNATURE;
    const toNode = (body.cryptoTransfer?.transfers?.accountAmounts ?? [])
      .filter((a) => toNumber(a.accountID?.accountNum) === NODE_ACCOUNT)
      .reduce((sum, a) => sum + toNumber(a.amount), 0);
    if (toNode < cost) return R.INSUFFICIENT_TX_FEE;
    if (account.balance < cost) return R.INSUFFICIENT_PAYER_BALANCE;
    return R.OK;
  }

  /** The transaction a receipt or record query names, and whether its answer is still kept. */
  function lookup(id: proto.ITransactionID | null | undefined): { code: number; tx: TxRow | null } {
    if (id?.accountID == null || id.transactionValidStart == null) return { code: R.INVALID_TRANSACTION_ID, tx: null };
    const tx = store.findTransaction(toNumber(id.accountID.accountNum), tsOf(id.transactionValidStart), id.nonce ?? 0, id.scheduled ?? false);
    if (tx == null || toNumber(id.accountID.shardNum) !== 0 || toNumber(id.accountID.realmNum) !== 0) return { code: R.RECEIPT_NOT_FOUND, tx: null };
    const nowNs = msToNs(clock.now());
    if (tx.state === "dropped") {
      // The node that lost it still remembers the id until the window closes.
      const windowEnd = timestampToNs(tx.validStart) + BigInt(tx.validDurationSeconds) * 1_000_000_000n;
      return nowNs < windowEnd ? { code: R.OK, tx } : { code: R.RECEIPT_NOT_FOUND, tx: null };
    }
    if (tx.state === "final" && tx.consensus && timestampToNs(tx.consensus) + msToNs(options.receiptTtlMs) < nowNs) {
      return { code: R.RECEIPT_NOT_FOUND, tx: null };
    }
    return { code: R.OK, tx };
  }

  async function answer(field: string, q: Record<string, unknown> & { header?: proto.IQueryHeader | null }): Promise<proto.IResponse> {
    const responseType = q.header?.responseType ?? proto.ResponseType.ANSWER_ONLY;
    const costOnly = responseType === proto.ResponseType.COST_ANSWER || responseType === proto.ResponseType.COST_ANSWER_STATE_PROOF;
    const stateProof = responseType === proto.ResponseType.ANSWER_STATE_PROOF || responseType === proto.ResponseType.COST_ANSWER_STATE_PROOF;
    if (stateProof) return { [field]: { header: header(R.NOT_SUPPORTED, responseType) } };

    switch (field) {
      case "transactionGetReceipt": {
        const { code, tx } = lookup(q.transactionID as proto.ITransactionID | null);
        if (costOnly) return { transactionGetReceipt: { header: header(R.OK, responseType) } };
        if (tx == null) return { transactionGetReceipt: { header: header(code, responseType) } };
        const receipt = tx.state === "final" ? receiptOf(tx) : { status: R.UNKNOWN };
        return { transactionGetReceipt: { header: header(R.OK, responseType), receipt } };
      }
      case "cryptogetAccountBalance": {
        if (costOnly) return { cryptogetAccountBalance: { header: header(R.OK, responseType) } };
        const id = q.accountID as proto.IAccountID | null | undefined;
        const account = id != null && toNumber(id.shardNum) === 0 && toNumber(id.realmNum) === 0 ? store.getAccount(toNumber(id.accountNum)) : null;
        if (account == null) return { cryptogetAccountBalance: { header: header(R.INVALID_ACCOUNT_ID, responseType) } };
        return { cryptogetAccountBalance: { header: header(R.OK, responseType), accountID: id, balance: int64(account.balance) } };
      }
      case "transactionGetRecord":
      case "consensusGetTopicInfo":
      case "networkGetVersionInfo": {
        if (costOnly) return { [field]: { header: header(R.OK, responseType, QUERY_COST) } };
        const paid = await checkPayment(q.header?.payment, QUERY_COST);
        if (paid !== R.OK) return { [field]: { header: header(paid, responseType, QUERY_COST) } };
        return paidAnswer(field, q, responseType);
      }
      default:
        return { [field]: { header: header(R.NOT_SUPPORTED, responseType) } };
    }
  }

  function paidAnswer(field: string, q: Record<string, unknown>, responseType: number): proto.IResponse {
    if (field === "transactionGetRecord") {
      const { code, tx } = lookup(q.transactionID as proto.ITransactionID | null);
      if (tx == null || tx.state !== "final" || tx.consensus == null) {
        return { transactionGetRecord: { header: header(code === R.OK || code === R.RECEIPT_NOT_FOUND ? R.RECORD_NOT_FOUND : code, responseType) } };
      }
      const record: proto.ITransactionRecord = {
        receipt: receiptOf(tx),
        transactionHash: tx.transactionHash,
        consensusTimestamp: protoTs(tx.consensus),
        transactionID: {
          accountID: { shardNum: int64(0), realmNum: int64(0), accountNum: int64(tx.payer) },
          transactionValidStart: protoTs(tx.validStart),
        },
        memo: new TextDecoder().decode(tx.memo),
        transactionFee: int64(tx.chargedFee ?? 0),
        transferList: {
          accountAmounts: transfersOf(tx).map((t) => ({
            accountID: { shardNum: int64(0), realmNum: int64(0), accountNum: int64(t.account) },
            amount: int64(t.amount),
          })),
        },
      };
      return { transactionGetRecord: { header: header(R.OK, responseType), transactionRecord: record } };
    }
    if (field === "consensusGetTopicInfo") {
      const id = q.topicID as proto.ITopicID | null | undefined;
      const topic = id != null && toNumber(id.shardNum) === 0 && toNumber(id.realmNum) === 0 ? store.getTopic(toNumber(id.topicNum)) : null;
      if (topic == null) return { consensusGetTopicInfo: { header: header(R.INVALID_TOPIC_ID, responseType) } };
      return {
        consensusGetTopicInfo: {
          header: header(R.OK, responseType),
          topicID: id,
          topicInfo: {
            memo: topic.memo,
            runningHash: topic.runningHash,
            sequenceNumber: int64(topic.sequenceNumber),
            expirationTime: { seconds: int64(topic.expirationSeconds), nanos: 0 },
            adminKey: topic.adminKey ? decodeKey(topic.adminKey) : null,
            submitKey: topic.submitKey ? decodeKey(topic.submitKey) : null,
            autoRenewPeriod: { seconds: int64(topic.autoRenewPeriod) },
            autoRenewAccount:
              topic.autoRenewAccount != null ? { shardNum: int64(0), realmNum: int64(0), accountNum: int64(topic.autoRenewAccount) } : null,
            // 0x03: the ledger id local Hedera networks report.
            ledgerId: Uint8Array.of(3),
          },
        },
      };
    }
    return {
      networkGetVersionInfo: {
        header: header(R.OK, responseType),
        hapiProtoVersion: { major: 0, minor: 66, patch: 0 },
        hederaServicesVersion: { major: 0, minor: 66, patch: 0 },
      },
    };
  }

  return async function query(request: Received<proto.Query>): Promise<proto.IResponse> {
    const q = request.message;
    const field = q?.query;
    if (q == null || field == null) {
      // Nothing to answer in: the nodes reply with an empty response too.
      return {};
    }
    const body = (q as unknown as Record<string, unknown>)[field] as Record<string, unknown> & { header?: proto.IQueryHeader | null };
    const responseField = RESPONSE_FIELD[field] ?? field;
    const response = await answer(responseField, body ?? {});
    return response;
  };
}
