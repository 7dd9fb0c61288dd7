/**
 * The `Ledger` (ledger.ts) over Hedera Consensus Service, through `@hashgraph/sdk`: the only
 * module that imports the SDK. The same code serves `mainnet`, `testnet`, `previewnet` and the
 * local ledger (which speaks the same gRPC and mirror REST interfaces).
 *
 * How the SDK is driven, and why:
 * - Every request runs with `maxAttempts = 1`: the anchor loop owns retries (its backoff is
 *   capped, jittered and follows the injected clock), so the SDK must report BUSY, UNKNOWN and
 *   RECEIPT_NOT_FOUND instead of sleeping on them.
 * - After a gRPC failure the SDK marks the node unhealthy for 8 s and more (doubling), and with
 *   few nodes every request through that `Client` then fails at once. A failure of that kind
 *   therefore throws the `Client` away; the next request gets a fresh one.
 * - Transactions are frozen with explicit node account ids, never from the client's health
 *   view, so preparing never depends on the network being reachable.
 * - `unsent` (ledger.ts) is answered only when the SDK was never called: before a request
 *   through a `Client` no node has answered in the last 10 s (a new one, as after a failure
 *   threw the last away, or an idle one), a plain TCP connection to the node must open; if none
 *   does (refused, no route, not within the gRPC deadline), a submission's bytes are not handed
 *   to the SDK at all (`unsent`) and a query is `unreachable`. Once the SDK has the bytes, a
 *   failure is `unsent` only if the connection its call went through was never established
 *   (`SubmissionTrace`: the node went down while its last answer was still fresh), else `unknown`.
 *   A call that times out is cancelled and its connection destroyed, so bytes queued on a
 *   connection still being made never go out after the answer.
 * - The SDK signs with the ED25519 keys itself (operator and topic submit keys): these are ledger
 *   keys, not docverify's own signing keys, which stay in src/crypto.
 *
 * The parts that need no SDK are beside it: node-reachability.ts (the TCP check and the answer's
 * freshness), mirror-client.ts (the mirror REST reads), outcomes.ts (what a precheck status means),
 * hedera-options.ts (the options, checked, and their defaults).
 */
import "../lib/protobuf-long.ts"; // first: see the file
import {
  AccountBalanceQuery,
  AccountId,
  Client,
  Hbar,
  MaxAttemptsOrTimeoutError,
  PrecheckStatusError,
  PrivateKey,
  PublicKey,
  Timestamp,
  TopicCreateTransaction,
  TopicId,
  TopicMessageSubmitTransaction,
  Transaction,
  TransactionId,
  TransactionReceiptQuery,
} from "@hashgraph/sdk";
import { ed25519RawSigner, generateEd25519KeyPair } from "../crypto/ed25519.ts";
import {
  parseTransactionId,
  type Ledger,
  type MessageRequest,
  type ReceiptOutcome,
  type SubmitKeyPair,
  type SubmitOutcome,
  type TopicCreateRequest,
} from "./ledger.ts";
import { AsyncLocalStorage } from "node:async_hooks";
import { grpcConnection, type CallWatch, type GrpcConnection } from "./grpc-unary.ts";
import { createMirrorClient } from "./mirror-client.ts";
import { answerFreshness, nodeUnreachable } from "./node-reachability.ts";
import { classifyPrecheck, lastStatus } from "./outcomes.ts";
import { checkOptions, ledgerSettings, type HederaLedgerOptions } from "./hedera-options.ts";

/**
 * Reads a ledger private key written as hex DER (PKCS#8, as the Hedera portal's "DER encoded"
 * key and the local ledger's `operator.key`), with or without `0x`. ED25519 or ECDSA secp256k1.
 * A bare 32-byte hex key is refused: it does not say which algorithm it is for.
 */
export function parseLedgerPrivateKey(text: string): PrivateKey {
  const t = text.trim().replace(/^0x/i, "");
  if (!/^[0-9a-fA-F]+$/.test(t) || !t.startsWith("30")) {
    throw new Error("the ledger private key must be hex DER (PKCS#8, starting 30...), ED25519 or ECDSA secp256k1");
  }
  return PrivateKey.fromStringDer(t);
}

function toSdkTransactionId(id: string): TransactionId {
  const { account, seconds, nanos } = parseTransactionId(id);
  return TransactionId.withValidStart(AccountId.fromString(account), new Timestamp(seconds, nanos));
}

function statusName(status: unknown): string {
  return String(status);
}

interface Ed25519Signer {
  readonly publicKey: PublicKey;
  readonly sign: (message: Uint8Array) => Promise<Uint8Array>;
}

/**
 * Signs through node:crypto (src/crypto/ed25519.ts) for the SDK's `signWith`. The SDK's own
 * ED25519 code (tweetnacl, pure JavaScript) costs milliseconds per signature and as much again
 * to parse a key; with two signatures per message that was most of the anchor loop's CPU, on
 * the thread that serves the API. ED25519 is deterministic: the bytes are the same.
 */
function ed25519Signer(seed: Uint8Array): Ed25519Signer {
  const raw = ed25519RawSigner(seed);
  return { publicKey: PublicKey.fromBytesED25519(raw.publicKey), sign: (m) => Promise.resolve(raw.sign(m)) };
}

/**
 * The SDK's channel to a consensus node, with the wire under it made by grpc-unary.ts instead of
 * `@grpc/grpc-js` (see that file for why and what it answers). The SDK's own code path is
 * unchanged above it: its `Executable` picks the node, builds the request and reads the answer or
 * the gRPC error exactly as it does over its own channel. A TLS address (port 50212, where the
 * SDK fetches the node's certificate first) keeps the SDK's own channel.
 *
 * The SDK does not export its channel classes: `NodeChannel` is the class of what its `Client`
 * creates for an address (constructing one only parses the address), and the `Client` subclass
 * overrides the method its constructor calls for each node (`_createNetworkChannel`).
 */
type NodeChannel = ReturnType<ReturnType<Client["_createNetworkChannel"]>>;
/** protobufjs's RPCImpl, as the SDK's services call it. */
type RpcImpl = (method: { name: string }, requestData: Uint8Array, callback: (error: Error | null, answer?: Uint8Array | null) => void) => void;
const SdkNodeChannel = Client.prototype._createNetworkChannel.call({ grpcDeadline: 1000 } as Client)("127.0.0.1:1").constructor as new (address: string, grpcDeadline?: number) => NodeChannel;

/**
 * What the gRPC calls made for one submission say about whether its bytes can have left this
 * machine: `calls` made through a `DirectChannel`, and whether the connection carrying any of
 * them was established. Calls made, none connected: nothing was sent (the node was down or
 * refused the connection), whatever error the SDK reports. The SDK hands its own error on, not
 * the call's, so the channel learns the submission's trace from the async context it runs in
 * (`SubmissionTraces`, one per ledger, handed to its clients and their channels).
 */
class SubmissionTrace implements CallWatch {
  calls = 0;
  connected = false;
  sent(): void {
    this.connected = true;
  }
  /** Calls were made and none can have reached the node. */
  get nothingSent(): boolean {
    return this.calls > 0 && !this.connected;
  }
}
type SubmissionTraces = AsyncLocalStorage<SubmissionTrace>;

class DirectChannel extends SdkNodeChannel {
  private readonly connection: GrpcConnection | null;
  constructor(address: string, grpcDeadline: number | undefined, private readonly traces: SubmissionTraces) {
    super(address, grpcDeadline);
    this.connection = address.endsWith(":50212") ? null : grpcConnection(address);
  }
  protected override _createUnaryClient(serviceName: string): RpcImpl {
    const connection = this.connection;
    if (connection === null) return super._createUnaryClient(serviceName) as RpcImpl;
    return (method, requestData, callback) => {
      const trace = this.traces.getStore();
      if (trace !== undefined) trace.calls++;
      connection.call(`/proto.${serviceName}/${method.name}`, requestData, this.grpcDeadline, callback, trace);
    };
  }
  override close(): void {
    if (this.connection === null) super.close();
    else this.connection.close();
  }
}

class DirectClient extends Client {
  constructor(config: ConstructorParameters<typeof Client>[0], private readonly traces: SubmissionTraces) {
    super(config);
  }
  // Called by the SDK's constructor, before `traces` is set: it makes its channels later, on first use.
  override _createNetworkChannel(): (address: string) => NodeChannel {
    return (address) => new DirectChannel(address, this.grpcDeadline, this.traces);
  }
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export function createHederaLedger(options: HederaLedgerOptions): Ledger {
  checkOptions(options);
  const { network, operatorAccountId } = options;
  const operatorKey = parseLedgerPrivateKey(options.operatorPrivateKey);
  const operatorSigner = operatorKey.type === "ED25519" ? ed25519Signer(operatorKey.toBytesRaw()) : null;
  const signAsOperator = async (tx: Transaction): Promise<void> => {
    if (operatorSigner !== null) await tx.signWith(operatorSigner.publicKey, operatorSigner.sign);
    else await tx.sign(operatorKey);
  };
  /** Submit keys opened so far (one in practice: one key serves every topic), by their hex. */
  const submitSigners = new Map<string, Ed25519Signer>();
  const submitSignerOf = (raw: Uint8Array): Ed25519Signer => {
    const hex = Buffer.from(raw).toString("hex");
    let signer = submitSigners.get(hex);
    if (signer === undefined) {
      signer = ed25519Signer(raw);
      submitSigners.set(hex, signer);
    }
    return signer;
  };
  const { grpcDeadlineMs, mirrorTimeoutMs, nodesPerTransaction, answerFreshMs, mirrorUrl } = ledgerSettings(options);

  const mirror = createMirrorClient({ mirrorUrl, timeoutMs: mirrorTimeoutMs });
  const traces: SubmissionTraces = new AsyncLocalStorage<SubmissionTrace>();

  let client: Client | null = null;
  let closed = false;
  const newClient = (): Client => {
    // The local network's nodes as given; a public network's from the SDK's address book.
    const c = new DirectClient({ network: network === "local" ? { ...options.nodes } : network, scheduleNetworkUpdate: false }, traces);
    c.setOperator(AccountId.fromString(operatorAccountId), operatorKey);
    c.setMaxAttempts(1);
    // With one attempt, the SDK's pause before the next attempt (250 ms and up) is pure waste.
    c.setMinBackoff(0);
    c.setGrpcDeadline(grpcDeadlineMs);
    c.setRequestTimeout(grpcDeadlineMs * 2);
    return c;
  };
  const getClient = (): Client => {
    if (closed) throw new Error("ledger closed");
    client ??= newClient();
    return client;
  };
  /**
   * The client through which a consensus node last answered (even with a refusal), and when: a
   * request through it goes straight to the SDK while that answer is fresh. See `unsent` in the
   * header.
   */
  const answers = answerFreshness<Client>(answerFreshMs);
  /** Forget a client whose node the SDK has put on backoff; see the header comment. */
  const discardClient = (c: Client): void => {
    answers.forget(c);
    if (client !== c) return;
    client = null;
    try {
      c.close();
    } catch {
      /* closing a broken client */
    }
  };

  /**
   * Before a request through `c` while no answer through it is fresh (see `answers`): null if a
   * TCP connection to `node` opens, otherwise why not (node-reachability.ts). `node` is the one
   * the SDK sends a transaction to (its first node: one attempt), null for a query. Checking
   * first also means a ledger that is down costs a TCP attempt, not a gRPC call for each request
   * under way, so anchoring resumes soon after it returns.
   */
  const checkNode = (c: Client, node: string | null): Promise<string | null> => nodeUnreachable(c.network, node, grpcDeadlineMs);

  /** The node account ids a transaction is signed for. */
  const nodeIdsForTransaction = (): AccountId[] => {
    const all = [...new Set(Object.values(getClient().network).map((id) => id.toString()))];
    for (let i = all.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [all[i], all[j]] = [all[j]!, all[i]!];
    }
    return all.slice(0, Math.max(1, nodesPerTransaction)).map((id) => AccountId.fromString(id));
  };

  return {
    network,
    operatorAccountId,
    mirrorUrl,

    generateSubmitKey: (): SubmitKeyPair => generateEd25519KeyPair(),

    async prepareTopicCreate(request: TopicCreateRequest): Promise<Uint8Array> {
      if (new TextEncoder().encode(request.memo).length > 100) throw new TypeError("topic memo over 100 bytes");
      const tx = new TopicCreateTransaction()
        .setTransactionId(toSdkTransactionId(request.transactionId))
        .setTransactionValidDuration(request.validSeconds)
        .setNodeAccountIds(nodeIdsForTransaction())
        .setMaxTransactionFee(new Hbar(5))
        .setSubmitKey(PublicKey.fromBytesED25519(request.submitPublicKey))
        .setAutoRenewAccountId(AccountId.fromString(operatorAccountId))
        .setTopicMemo(request.memo)
        .freeze();
      await signAsOperator(tx);
      return tx.toBytes();
    },

    async prepareMessage(request: MessageRequest): Promise<Uint8Array> {
      if (request.message.length === 0 || request.message.length > 1024) throw new TypeError("a message must be 1 to 1024 bytes (one chunk)");
      const submitKey = submitSignerOf(request.submitPrivateKey);
      const tx = new TopicMessageSubmitTransaction()
        .setTransactionId(toSdkTransactionId(request.transactionId))
        .setTransactionValidDuration(request.validSeconds)
        .setNodeAccountIds(nodeIdsForTransaction())
        .setMaxTransactionFee(new Hbar(1))
        .setTopicId(TopicId.fromString(request.topicId))
        .setMessage(request.message)
        .setMaxChunks(1)
        .freeze();
      await tx.signWith(submitKey.publicKey, submitKey.sign);
      await signAsOperator(tx);
      return tx.toBytes();
    },

    async submit(signedBytes: Uint8Array): Promise<SubmitOutcome> {
      const tx = Transaction.fromBytes(signedBytes);
      let c: Client;
      try {
        c = getClient();
      } catch (e) {
        return { kind: "unknown", error: message(e) };
      }
      if (!answers.trusted(c)) {
        const problem = await checkNode(c, tx.nodeAccountIds?.[0]?.toString() ?? null);
        // The SDK never had the bytes: nothing was sent.
        if (problem !== null) return { kind: "unsent", error: `nothing sent: ${problem}` };
      }
      const trace = new SubmissionTrace();
      try {
        await traces.run(trace, () => tx.execute(c));
        answers.noted(c);
        return { kind: "accepted", duplicate: false };
      } catch (e) {
        if (e instanceof PrecheckStatusError) {
          answers.noted(c);
          return classifyPrecheck(statusName(e.status));
        }
        if (e instanceof MaxAttemptsOrTimeoutError) {
          const status = lastStatus(e);
          if (status !== null) {
            answers.noted(c);
            return classifyPrecheck(status);
          }
        }
        discardClient(c);
        // The connection was never made: the node cannot have the bytes.
        if (trace.nothingSent) return { kind: "unsent", error: `nothing sent: ${message(e)}` };
        return { kind: "unknown", error: message(e) };
      }
    },

    async receipt(transactionId: string): Promise<ReceiptOutcome> {
      let c: Client;
      try {
        c = getClient();
      } catch (e) {
        return { kind: "unreachable", error: message(e) };
      }
      if (!answers.trusted(c)) {
        const problem = await checkNode(c, null);
        if (problem !== null) return { kind: "unreachable", error: problem };
      }
      try {
        const r = await new TransactionReceiptQuery().setTransactionId(toSdkTransactionId(transactionId)).setValidateStatus(false).setMaxAttempts(1).execute(c);
        answers.noted(c);
        const status = statusName(r.status);
        if (status !== "SUCCESS") return { kind: "failed", status };
        return {
          kind: "success",
          topicId: r.topicId?.toString() ?? null,
          sequenceNumber: r.topicSequenceNumber == null ? null : Number(r.topicSequenceNumber.toString()),
          runningHash: r.topicRunningHash ?? null,
        };
      } catch (e) {
        if (e instanceof MaxAttemptsOrTimeoutError && lastStatus(e) !== null) answers.noted(c);
        if (e instanceof PrecheckStatusError) answers.noted(c);
        if (e instanceof MaxAttemptsOrTimeoutError) {
          const status = lastStatus(e);
          if (status === "UNKNOWN") return { kind: "pending" };
          if (status === "RECEIPT_NOT_FOUND") return { kind: "not_found" };
          if (status !== null) return { kind: "unreachable", error: `receipt query answered ${status}` };
        }
        if (e instanceof PrecheckStatusError) return { kind: "unreachable", error: `receipt query answered ${statusName(e.status)}` };
        discardClient(c);
        return { kind: "unreachable", error: message(e) };
      }
    },

    lookupTransaction: mirror.lookupTransaction,
    confirmMessage: mirror.confirmMessage,
    topicMessages: mirror.topicMessages,

    async ping(): Promise<true | string> {
      let c: Client;
      try {
        c = getClient();
      } catch (e) {
        return message(e);
      }
      if (!answers.trusted(c)) {
        const problem = await checkNode(c, null);
        if (problem !== null) return problem;
      }
      try {
        await new AccountBalanceQuery().setAccountId(AccountId.fromString(operatorAccountId)).setMaxAttempts(1).execute(c);
        answers.noted(c);
        return true;
      } catch (e) {
        if (e instanceof MaxAttemptsOrTimeoutError && lastStatus(e) !== null) {
          answers.noted(c);
          return `consensus node answered ${lastStatus(e)}`;
        }
        if (e instanceof PrecheckStatusError) {
          answers.noted(c);
          return `consensus node answered ${statusName(e.status)}`;
        }
        discardClient(c);
        return `consensus node unreachable: ${message(e)}`;
      }
    },

    async close(): Promise<void> {
      closed = true;
      const c = client;
      client = null;
      c?.close();
    },
  };
}
