/**
 * The consensus handlers: what a transaction does when it reaches consensus, in the order the
 * nodes' handlers check (expiry, payer balance, then topic creation or message submission rules).
 *
 * `decide` writes nothing. It reads the store and the batch's `Overlay` (what earlier
 * transactions of the same batch changed) and returns a `Decision`: the result for the receipt,
 * the fee to charge, and the writes (`effects`) that the caller (consensus.ts) applies with every
 * other decision of the batch in one SQLite transaction. It MUST update the overlay with any
 * topic or entity number it changes, so a later transaction of the batch sees it.
 */
import { proto } from "@hashgraph/proto";
import { timestampToNs, type Timestamp } from "./ids.ts";
import { decodeKey, encodeKey } from "./key-codec.ts";
import { createSignatureCheck, isEmptyKeyList, isValidKey } from "./keys.ts";
import type { NodeOptions } from "./node.ts";
import type { TopicRow, TxRow } from "./rows.ts";
import { FEES, MAX_AUTO_RENEW_S, MAX_MEMO_BYTES, MAX_MESSAGE_BYTES, MIN_AUTO_RENEW_S } from "./rules.ts";
import { nextRunningHash, RUNNING_HASH_BYTES, RUNNING_HASH_VERSION } from "./running-hash.ts";
import type { LedgerStore } from "./store.ts";
import { openTransaction, toNumber, tsOf, utf8Length } from "./wire.ts";

const R = proto.ResponseCodeEnum;

/** Changes made by earlier transactions of the batch being decided, not yet written. */
export interface Overlay {
  topics: Map<number, TopicRow>;
  balanceDelta: Map<number, number>;
  nextEntityNum: number;
}

export type Effect = (s: LedgerStore) => void;

export interface Decision {
  result: number;
  fee: number;
  entityNum: number | null;
  sequenceNumber: number | null;
  runningHash: Uint8Array | null;
  effects: Effect[];
}

function fail(result: number, fee: number): Decision {
  return { result, fee, entityNum: null, sequenceNumber: null, runningHash: null, effects: [] };
}

/**
 * `clockNs`: the ledger clock when the batch is decided. It is the consensus time unless the
 * clock stepped back (consensus times stay increasing, 1 ns apart, until the clock passes them):
 * a transaction's validity window is judged on the clock, as its precheck was.
 */
export type Decide = (tx: TxRow, consensus: Timestamp, overlay: Overlay, clockNs?: bigint) => Decision;

export function createDecide(options: Pick<NodeOptions, "store" | "verifyEd25519">): Decide {
  const { store } = options;

  function topicAt(overlay: Overlay, num: number): TopicRow | null {
    return overlay.topics.get(num) ?? store.getTopic(num);
  }

  return function decide(tx: TxRow, consensus: Timestamp, overlay: Overlay, clockNs?: bigint): Decision {
    const fee = FEES[tx.type];
    if (tx.forcedStatus != null) return fail(tx.forcedStatus, fee);

    // Late for its own window (consensus paused, or the ledger was down): the node, not the
    // payer, bears that failure.
    const expiresNs = timestampToNs(tx.validStart) + BigInt(tx.validDurationSeconds) * 1_000_000_000n;
    const consensusNs = timestampToNs(consensus);
    const judgedAtNs = clockNs !== undefined && clockNs < consensusNs ? clockNs : consensusNs;
    if (judgedAtNs >= expiresNs) return fail(R.TRANSACTION_EXPIRED, 0);

    const payer = store.getAccount(tx.payer);
    const balance = (payer?.balance ?? 0) + (overlay.balanceDelta.get(tx.payer) ?? 0);
    if (payer == null || balance < fee) return fail(R.INSUFFICIENT_PAYER_BALANCE, 0);

    const opened = openTransaction(proto.Transaction.decode(tx.transactionBytes));
    if ("code" in opened) return fail(opened.code, 0);
    const sigs = createSignatureCheck(opened.bodyBytes, opened.sigMap, options.verifyEd25519);

    if (tx.type === "CONSENSUSCREATETOPIC") {
      const op = opened.body.consensusCreateTopic!;
      const adminKey = op.adminKey != null && !isEmptyKeyList(op.adminKey) ? op.adminKey : null;
      if (adminKey != null && !isValidKey(adminKey)) return fail(R.BAD_ENCODING, fee);
      let autoRenewKey: proto.IKey | null = null;
      let autoRenewNum: number | null = null;
      if (op.autoRenewAccount != null) {
        const a = op.autoRenewAccount;
        autoRenewNum = toNumber(a.accountNum);
        const account = toNumber(a.shardNum) === 0 && toNumber(a.realmNum) === 0 ? store.getAccount(autoRenewNum) : null;
        if (account == null) return fail(R.INVALID_AUTORENEW_ACCOUNT, fee);
        autoRenewKey = decodeKey(account.key);
      }
      if ((adminKey != null && !sigs.satisfies(adminKey)) || (autoRenewKey != null && !sigs.satisfies(autoRenewKey))) {
        return fail(R.INVALID_SIGNATURE, fee);
      }
      if (op.submitKey != null && !isValidKey(op.submitKey)) return fail(R.BAD_ENCODING, fee);
      const memo = op.memo ?? "";
      if (utf8Length(memo) > MAX_MEMO_BYTES) return fail(R.MEMO_TOO_LONG, fee);
      if (memo.includes("\0")) return fail(R.INVALID_ZERO_BYTE_IN_STRING, fee);
      const autoRenewPeriod = toNumber(op.autoRenewPeriod?.seconds);
      if (autoRenewPeriod < MIN_AUTO_RENEW_S || autoRenewPeriod > MAX_AUTO_RENEW_S) return fail(R.AUTORENEW_DURATION_NOT_IN_RANGE, fee);

      const num = overlay.nextEntityNum++;
      const topic: TopicRow = {
        num,
        memo,
        adminKey: adminKey ? encodeKey(adminKey) : null,
        submitKey: op.submitKey ? encodeKey(op.submitKey) : null,
        autoRenewAccount: autoRenewNum,
        autoRenewPeriod,
        expirationSeconds: consensus.seconds + autoRenewPeriod,
        sequenceNumber: 0,
        runningHash: new Uint8Array(RUNNING_HASH_BYTES),
        createdSeconds: consensus.seconds,
        createdNanos: consensus.nanos,
      };
      overlay.topics.set(num, topic);
      return {
        result: R.SUCCESS,
        fee,
        entityNum: num,
        sequenceNumber: null,
        runningHash: null,
        effects: [
          (s) => {
            s.nextEntityNum();
            s.insertTopic(topic);
          },
        ],
      };
    }

    const op = opened.body.consensusSubmitMessage!;
    const topicId = op.topicID!;
    const topicNum = toNumber(topicId.topicNum);
    const topic = toNumber(topicId.shardNum) === 0 && toNumber(topicId.realmNum) === 0 ? topicAt(overlay, topicNum) : null;
    if (topic == null) return fail(R.INVALID_TOPIC_ID, fee);
    if (topic.submitKey != null) {
      const submitKey = decodeKey(topic.submitKey);
      if (!sigs.satisfies(submitKey)) return { ...fail(R.INVALID_SIGNATURE, fee), entityNum: topicNum };
    }
    const message = op.message ?? new Uint8Array();
    if (message.length > MAX_MESSAGE_BYTES) return { ...fail(R.MESSAGE_SIZE_TOO_LARGE, fee), entityNum: topicNum };
    const chunk = op.chunkInfo;
    if (chunk != null) {
      const number = chunk.number ?? 0;
      const total = chunk.total ?? 0;
      if (number < 1 || number > total) return { ...fail(R.INVALID_CHUNK_NUMBER, fee), entityNum: topicNum };
      const initial = chunk.initialTransactionID;
      const initialPayer = initial?.accountID;
      if (initialPayer == null || toNumber(initialPayer.shardNum) !== 0 || toNumber(initialPayer.realmNum) !== 0 || toNumber(initialPayer.accountNum) !== tx.payer) {
        return { ...fail(R.INVALID_CHUNK_TRANSACTION_ID, fee), entityNum: topicNum };
      }
      const initialStart = tsOf(initial?.transactionValidStart);
      if (number === 1 && (initialStart.seconds !== tx.validStart.seconds || initialStart.nanos !== tx.validStart.nanos || initial?.scheduled || (initial?.nonce ?? 0) !== 0)) {
        return { ...fail(R.INVALID_CHUNK_TRANSACTION_ID, fee), entityNum: topicNum };
      }
    }

    const sequenceNumber = topic.sequenceNumber + 1;
    const runningHash = nextRunningHash({
      previousRunningHash: topic.runningHash,
      payer: { shard: 0, realm: 0, num: tx.payer },
      topic: { shard: 0, realm: 0, num: topicNum },
      consensusSeconds: consensus.seconds,
      consensusNanos: consensus.nanos,
      sequenceNumber,
      message,
    });
    overlay.topics.set(topicNum, { ...topic, sequenceNumber, runningHash });
    const initialTransactionId = chunk?.initialTransactionID ? proto.TransactionID.encode(chunk.initialTransactionID).finish() : null;
    return {
      result: R.SUCCESS,
      fee,
      entityNum: topicNum,
      sequenceNumber,
      runningHash,
      effects: [
        (s) => {
          s.advanceTopic(topicNum, sequenceNumber, runningHash);
          s.insertMessage({
            topicNum,
            sequenceNumber,
            consensus,
            message,
            payer: tx.payer,
            runningHash,
            runningHashVersion: RUNNING_HASH_VERSION,
            chunkNumber: chunk ? (chunk.number ?? 0) : null,
            chunkTotal: chunk ? (chunk.total ?? 0) : null,
            initialTransactionId,
            txSeq: tx.seq,
          });
        },
      ],
    };
  };
}
