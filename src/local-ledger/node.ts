/**
 * The consensus node: precheck of incoming transactions, consensus, receipts and the queries the
 * SDK sends. Transport-free: the gRPC layer hands it decoded protobuf messages and encodes what
 * it returns.
 *
 * Guarantees (what a client may rely on, as on a Hedera network):
 * - A transaction answered OK at precheck is stored before the answer is sent, and reaches
 *   consensus `consensusMs` after acceptance (unless a fault hook says otherwise), also across a
 *   restart of the ledger; with `consensusIntervalMs`, no sooner than that after the transaction
 *   accepted before it.
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
 *
 * The parts, each in its own file: precheck.ts (the TransactionResponse), handlers.ts (what a
 * transaction does at consensus), consensus.ts (batching and the run loop), queries.ts (the
 * Response of every query); rules.ts holds the limits and fees, wire.ts the protobuf helpers,
 * faults.ts the test hooks asked at precheck, acceptance and each batch.
 */
import type { proto } from "@hashgraph/proto";
import type { Ed25519Verifier } from "../crypto/ed25519.ts";
import type { Clock } from "../lib/clock.ts";
import { createConsensus } from "./consensus.ts";
import { NO_FAULTS, type Faults } from "./faults.ts";
import { createDecide } from "./handlers.ts";
import { createPrecheck } from "./precheck.ts";
import { createQueries } from "./queries.ts";
import type { LedgerStore } from "./store.ts";

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
  /** The least time between two transactions' consensus (index.ts `consensusIntervalMs`); 0: none. */
  readonly consensusIntervalMs: number;
  readonly receiptTtlMs: number;
  /** Where tests inject faults; default none (a ledger that runs for real). */
  readonly faults?: Faults;
  readonly verifyEd25519: Ed25519Verifier;
  /** Told the due time of each accepted transaction, so the scheduler can wake up then. */
  readonly onAccepted: (dueMs: number) => void;
}

export function createLedgerNode(options: NodeOptions): LedgerNode {
  const faults = options.faults ?? NO_FAULTS;
  const consensus = createConsensus({ store: options.store, clock: options.clock, faults, decide: createDecide(options) });
  return {
    submit: createPrecheck({ ...options, faults }),
    query: createQueries(options),
    runConsensus: consensus.runConsensus,
    nextDueMs: () => options.store.nextDueMs(),
    whenIdle: consensus.whenIdle,
  };
}
