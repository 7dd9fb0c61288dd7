/**
 * The consensus node: precheck of incoming transactions, consensus, receipts and the queries the
 * SDK sends. Transport-free: the gRPC layer hands it decoded protobuf messages and encodes what
 * it returns.
 *
 * Guarantees (what a client may rely on, as on a Hedera network):
 * - A transaction answered OK at precheck is stored before the answer is sent, and reaches
 *   consensus `consensusMs` after acceptance (unless a fault hook says otherwise), also across a
 *   restart of the ledger.
 * - Consensus timestamps are strictly increasing across the whole ledger; per topic, sequence
 *   numbers increase by one in consensus order and each message carries the topic's running hash
 *   (version 3, see running-hash.ts).
 * - Receipts answer UNKNOWN before consensus and the final status after it, for `receiptTtlMs`
 *   after consensus (180 s on Hedera); then RECEIPT_NOT_FOUND, and the mirror node is the
 *   durable place to look.
 *
 * Where a check happens follows the nodes (hedera-services IngestChecker and the consensus
 * handlers): syntax, node account, validity window, duplicates, throttling, payer account and
 * payer signature, fees at precheck; topic existence, the submit key's signature, message size and
 * chunk rules at consensus, reported in the receipt.
 */
import { proto } from "@hashgraph/proto";
import type { Clock } from "../lib/clock.ts";
import { NO_FAULTS, type Faults } from "./faults.ts";
import { msToNs, nsToTimestamp, timestampToNs, type Timestamp } from "./ids.ts";
import type { Ed25519Verifier } from "../crypto/ed25519.ts";
import { createSignatureCheck, decodeKey, encodeKey, isEmptyKeyList, isValidKey } from "./keys.ts";
import { nextRunningHash, RUNNING_HASH_BYTES, RUNNING_HASH_VERSION, sha384 } from "./running-hash.ts";
import type { LedgerStore, TopicRow, TxRow, TxType } from "./store.ts";

const R = proto.ResponseCodeEnum;

/** Accounts every fresh local ledger has. */
export const GENESIS_ACCOUNT = 2;
export const NODE_ACCOUNT = 3;
export const FEE_COLLECTION_ACCOUNT = 98;

/** Hedera's limits (hedera-services defaults). */
export const MAX_TRANSACTION_BYTES = 6144;
export const MIN_VALID_DURATION_S = 15;
export const MAX_VALID_DURATION_S = 180;
/** At ingest a transaction must still have this long to live, so it can reach consensus in time. */
export const VALIDITY_BUFFER_S = 10;
export const MAX_MEMO_BYTES = 100;
export const MAX_MESSAGE_BYTES = 1024;
export const MIN_AUTO_RENEW_S = 6_999_999;
export const MAX_AUTO_RENEW_S = 8_000_001;

/**
 * A fixed fee schedule in tinybars at a fixed rate of 12 US cents per hbar: about $0.01 to create
 * a topic and $0.0001 per message, Hedera's published prices. A tenth goes to the node, the rest
 * to the fee collection account, as the mirror node shows in `transfers`.
 */
export const FEES: Readonly<Record<TxType, number>> = { CONSENSUSCREATETOPIC: 8_333_333, CONSENSUSSUBMITMESSAGE: 83_333 };
export const QUERY_COST = 8_333;
export const EXCHANGE_RATE = { hbarEquiv: 1, centEquiv: 12 } as const;

export function nodeShareOf(fee: number): number {
  return Math.floor(fee / 10);
}

type Int64 = NonNullable<proto.ITimestamp["seconds"]>;

/** protobufjs encodes plain numbers in int64 fields; its typings only name Long. */
function int64(n: number): Int64 {
  return n as unknown as Int64;
}

function toNumber(v: Int64 | number | null | undefined): number {
  if (v == null) return 0;
  return typeof v === "number" ? v : v.toNumber();
}

function tsOf(t: proto.ITimestamp | null | undefined): Timestamp {
  return { seconds: toNumber(t?.seconds), nanos: t?.nanos ?? 0 };
}

function protoTs(t: Timestamp): proto.ITimestamp {
  return { seconds: int64(t.seconds), nanos: t.nanos };
}

function utf8Length(s: string): number {
  return Buffer.byteLength(s, "utf8");
}

/** A transaction taken apart: the bytes the signatures cover, the signatures, the body. */
interface Opened {
  readonly signedBytesForHash: Uint8Array;
  readonly bodyBytes: Uint8Array;
  readonly sigMap: proto.ISignatureMap | null | undefined;
  readonly body: proto.TransactionBody;
}

/** Decodes a Transaction down to its body, or gives the precheck code the nodes would give. */
function openTransaction(tx: proto.Transaction): Opened | { code: number } {
  const hasSigned = tx.signedTransactionBytes != null && tx.signedTransactionBytes.length > 0;
  const hasLegacy = tx.bodyBytes != null && tx.bodyBytes.length > 0;
  if (hasSigned && hasLegacy) return { code: R.INVALID_TRANSACTION };
  let bodyBytes: Uint8Array;
  let sigMap: proto.ISignatureMap | null | undefined;
  let signedBytesForHash: Uint8Array;
  if (hasSigned) {
    let signed: proto.SignedTransaction;
    try {
      signed = proto.SignedTransaction.decode(tx.signedTransactionBytes);
    } catch {
      return { code: R.INVALID_TRANSACTION };
    }
    bodyBytes = signed.bodyBytes;
    sigMap = signed.sigMap;
    signedBytesForHash = tx.signedTransactionBytes;
  } else if (hasLegacy) {
    bodyBytes = tx.bodyBytes;
    sigMap = tx.sigMap;
    signedBytesForHash = proto.Transaction.encode(tx).finish();
  } else {
    return { code: R.INVALID_TRANSACTION_BODY };
  }
  if (bodyBytes.length === 0) return { code: R.INVALID_TRANSACTION_BODY };
  let body: proto.TransactionBody;
  try {
    body = proto.TransactionBody.decode(bodyBytes);
  } catch {
    return { code: R.INVALID_TRANSACTION_BODY };
  }
  return { signedBytesForHash, bodyBytes, sigMap, body };
}

/** A protobuf request as the gRPC layer received it: the raw bytes and, when they parse, the message. */
export interface Received<T> {
  readonly bytes: Uint8Array;
  readonly message: T | null;
}

/** Whether an RPC carries a Transaction (answered by a TransactionResponse) or a Query (a Response). */
export type RpcKind = "transaction" | "query";

export interface LedgerNode {
  /** Any transaction RPC. Only topic creation and message submission are supported. */
  submit(request: Received<proto.Transaction>): Promise<proto.ITransactionResponse>;
  /** Any query RPC: receipts, records, balances, topic and version info are answered. */
  query(request: Received<proto.Query>): Promise<proto.IResponse>;
  /**
   * Brings every transaction whose time has come (per the injected clock) to consensus; returns
   * how many did. Serialised: a call while one runs waits for it and runs again.
   */
  runConsensus(): Promise<number>;
  /** When the next pending transaction is due, or null. */
  nextDueMs(): number | null;
  /** Resolves once no consensus run is in progress. */
  whenIdle(): Promise<void>;
}

export interface NodeOptions {
  readonly store: LedgerStore;
  readonly clock: Clock;
  readonly consensusMs: number;
  readonly receiptTtlMs: number;
  /** Where tests inject faults; default none (a ledger that runs for real). */
  readonly faults?: Faults;
  readonly verifyEd25519: Ed25519Verifier;
  /** Told the due time of each accepted transaction, so the scheduler can wake up then. */
  readonly onAccepted: (dueMs: number) => void;
}

function txKind(body: proto.TransactionBody): TxType | null {
  if (body.data === "consensusCreateTopic") return "CONSENSUSCREATETOPIC";
  if (body.data === "consensusSubmitMessage") return "CONSENSUSSUBMITMESSAGE";
  return null;
}

function precheck(code: number, cost = 0): proto.ITransactionResponse {
  return { nodeTransactionPrecheckCode: code, cost: int64(cost) };
}

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

/** The crypto transfers a final transaction caused, as the mirror node lists them. */
export function transfersOf(tx: TxRow): { account: number; amount: number }[] {
  const fee = tx.chargedFee ?? 0;
  if (fee === 0) return [];
  const nodeShare = nodeShareOf(fee);
  return [
    { account: tx.payer, amount: -fee },
    { account: NODE_ACCOUNT, amount: nodeShare },
    { account: FEE_COLLECTION_ACCOUNT, amount: fee - nodeShare },
  ];
}

/** Query field name in proto.Query → response field name in proto.Response, where they differ. */
const RESPONSE_FIELD: Readonly<Record<string, string>> = {
  contractGetBytecode: "contractGetBytecodeResponse",
  ContractGetRecords: "contractGetRecordsResponse",
};

export function createLedgerNode(options: NodeOptions): LedgerNode {
  const { store, clock } = options;
  const faults = options.faults ?? NO_FAULTS;
  let lastConsensusNs = (() => {
    const last = store.lastConsensus();
    return last ? timestampToNs(last) : 0n;
  })();

  function nowTs(): Timestamp {
    return nsToTimestamp(msToNs(clock.now()));
  }

  // ---- precheck --------------------------------------------------------------------------------

  async function submit(request: Received<proto.Transaction>): Promise<proto.ITransactionResponse> {
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
    const dueMs = acceptedMs + options.consensusMs;
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
    options.onAccepted(dueMs);
    return precheck(R.OK);
  }

  // ---- consensus -------------------------------------------------------------------------------

  /** Changes made by earlier transactions of the batch being decided, not yet written. */
  interface Overlay {
    topics: Map<number, TopicRow>;
    balanceDelta: Map<number, number>;
    nextEntityNum: number;
  }

  type Effect = (s: LedgerStore) => void;

  interface Decision {
    result: number;
    fee: number;
    entityNum: number | null;
    sequenceNumber: number | null;
    runningHash: Uint8Array | null;
    effects: Effect[];
  }

  function topicAt(overlay: Overlay, num: number): TopicRow | null {
    return overlay.topics.get(num) ?? store.getTopic(num);
  }

  function fail(result: number, fee: number): Decision {
    return { result, fee, entityNum: null, sequenceNumber: null, runningHash: null, effects: [] };
  }

  function decide(tx: TxRow, consensus: Timestamp, overlay: Overlay): Decision {
    const fee = FEES[tx.type];
    if (tx.forcedStatus != null) return fail(tx.forcedStatus, fee);

    // Late for its own window (consensus paused, or the ledger was down): the node, not the
    // payer, bears that failure.
    const expiresNs = timestampToNs(tx.validStart) + BigInt(tx.validDurationSeconds) * 1_000_000_000n;
    if (timestampToNs(consensus) >= expiresNs) return fail(R.TRANSACTION_EXPIRED, 0);

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
  }

  const BATCH = 500;

  /** One batch: decide each due transaction in order, then write all at once. */
  function consensusBatch(): number {
    if (faults.consensusPaused()) return 0;
    const due = store.duePending(clock.now(), BATCH);
    if (due.length === 0) return 0;
    const overlay: Overlay = { topics: new Map(), balanceDelta: new Map(), nextEntityNum: store.peekEntityNum() };
    const nowNs = msToNs(clock.now());
    const decided: { tx: TxRow; consensus: Timestamp; d: Decision }[] = [];
    let last = lastConsensusNs;
    for (const tx of due) {
      last = nowNs > last ? nowNs : last + 1n;
      const consensus = nsToTimestamp(last);
      const d = decide(tx, consensus, overlay);
      if (d.fee > 0) overlay.balanceDelta.set(tx.payer, (overlay.balanceDelta.get(tx.payer) ?? 0) - d.fee);
      decided.push({ tx, consensus, d });
    }
    store.atomically(() => {
      for (const { tx, consensus, d } of decided) {
        if (d.fee > 0) {
          const nodeShare = nodeShareOf(d.fee);
          store.addBalance(tx.payer, -d.fee);
          store.addBalance(NODE_ACCOUNT, nodeShare);
          store.addBalance(FEE_COLLECTION_ACCOUNT, d.fee - nodeShare);
        }
        for (const effect of d.effects) effect(store);
        store.finalizeTransaction(tx.seq, {
          consensus,
          result: d.result,
          entityNum: d.entityNum,
          chargedFee: d.fee,
          topicSequenceNumber: d.sequenceNumber,
          topicRunningHash: d.runningHash,
        });
      }
    });
    lastConsensusNs = last;
    return due.length;
  }

  let running: Promise<number> | null = null;
  let again = false;

  async function runConsensus(): Promise<number> {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      let total = 0;
      try {
        do {
          again = false;
          for (;;) {
            const n = consensusBatch();
            total += n;
            // Always yield after a batch: `running` is assigned only once this function first
            // awaits, and a call that arrives meanwhile must find it (and ask for another pass).
            // After a full batch, yield to the event loop, so requests get in before the next.
            await (n < BATCH ? Promise.resolve() : new Promise<void>((resolve) => setImmediate(resolve)));
            if (n < BATCH) break;
          }
        } while (again);
      } finally {
        running = null;
      }
      return total;
    })();
    return running;
  }

  // ---- queries ---------------------------------------------------------------------------------

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

  async function query(request: Received<proto.Query>): Promise<proto.IResponse> {
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
  }

  return {
    submit,
    query,
    runConsensus,
    nextDueMs: () => store.nextDueMs(),
    whenIdle: async () => {
      while (running) await running.catch(() => 0);
    },
  };
}
