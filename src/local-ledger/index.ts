/**
 * The local ledger: a single-node Hedera network on loopback for machines with no route to a
 * real one. It is a separate program, not part of docverify's anchoring: it speaks Hedera's wire
 * protocol (the gRPC API `@hashgraph/sdk` talks to, and the mirror node's REST API), and the
 * product reaches it only through that protocol, with the real SDK, as it would reach Hedera. It
 * runs on its own (`docverify local-ledger`), on a worker thread of `serve` (the embedded
 * default), or in a test's thread. It imports only src/lib/ and src/crypto/ of docverify, plus
 * its own vendor libraries (@hashgraph/proto, protobufjs; its gRPC server is node:http2). See
 * docs/local-ledger.md for what it implements and how faithfully.
 *
 * Contract of `startLocalLedger`:
 * - Resolves once every listener is up; `grpcAddress`, `mirrorUrl` and `mirrorUrls` carry the
 *   real ports (ports 0 pick free ones).
 * - With `secondMirrorPort`, the mirror REST API listens on a second port as well: two mirror
 *   base URLs over the same store, so the same answers (a receipt is checked against two mirror
 *   nodes, docs/receipts.md §3). They are not independent witnesses; they let the verifier's
 *   two-mirror path run end to end on one machine.
 * - The data folder holds the ledger's SQLite file and a lock file; one ledger at a time may use
 *   a folder. Everything (accounts, topics, messages, seen transaction ids, pending
 *   transactions, the genesis key) survives a restart, and pending transactions reach consensus
 *   after it.
 * - `operator` is the genesis account 0.0.2. Its ED25519 key is fixed when the ledger is created:
 *   `operatorKey` if given, else the public development key (keys.ts). A ledger
 *   keeps the key it was created with; given a different `operatorKey` later, it refuses to start.
 * - `close()` stops listening, waits for work in flight and closes the database; a pending
 *   transaction stays pending for the next start.
 * - Nothing here reads process.env: the caller passes every setting.
 * - Test hooks (`faults`, faults.ts) exist only on a ledger started with `startLocalLedger`; one
 *   started with `startLedger` (what runs for real) has none.
 */
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/log.ts";
import { transactionPageUrl } from "./addresses.ts";
import { mirrorTransactionId } from "./ids.ts";
import type { LocalLedgerFaults } from "./faults.ts";
import { DEVELOPMENT_OPERATOR_KEY } from "./keys.ts";
// The implementation (open.ts: consensus, gRPC, the mirror, the store) is loaded by the first
// start, never by importing this file or keys.ts. serve's thread imports both only to name the
// ledger's files and key, and runs the ledger on its worker thread: evaluated there, the
// implementation would hold the ledger's code and a second copy of Hedera's protobuf classes (the
// SDK has its own) for nothing, ~1.7 MB of idle memory (docs/benchmarks.md, "Idle memory"). A
// started ledger loads @hashgraph/proto later still, when it first needs it (open.ts says when;
// docs/local-ledger.md, "Idle memory"). test/local-ledger/lazy-implementation.test.ts keeps both so.

export type { LocalLedgerFaults };

export interface LocalLedgerOptions {
  /** Folder for the ledger's SQLite file (created if missing). */
  readonly dataDir: string;
  /** Listen address of both servers. Default 127.0.0.1. */
  readonly host?: string;
  /** gRPC port; 0 (default) picks a free one. */
  readonly grpcPort?: number;
  /** Mirror REST port; 0 (default) picks a free one. */
  readonly mirrorPort?: number;
  /** A second mirror REST port over the same store; 0 picks a free one. Absent: one mirror listener. */
  readonly secondMirrorPort?: number;
  /** Delay from acceptance to consensus. Default 3000. */
  readonly consensusMs?: number;
  /**
   * The least time between the consensus of two transactions on the node: a throughput cost per
   * transaction, as a network's throttles give one node (a transaction accepted while others wait
   * reaches consensus this long after the one before it, when that is later than `consensusMs`
   * after its acceptance). Default 0: no such cost, every transaction `consensusMs` after its
   * acceptance.
   */
  readonly consensusIntervalMs?: number;
  /** How long receipts (and records) stay queryable after consensus, as on Hedera. Default 180000. */
  readonly receiptTtlMs?: number;
  /**
   * The genesis account's private key (hex DER PKCS#8, ED25519), used when the ledger is created.
   * Default: the public development key (`DEVELOPMENT_OPERATOR_KEY`). A ledger created with
   * another key refuses to start with this one.
   */
  readonly operatorKey?: string;
  /** Time source for validity windows, consensus timestamps and due times. Default the system clock. */
  readonly clock?: Clock;
  readonly log?: Logger;
}

/**
 * What a user of a running local ledger needs: where it is, its operator, and how to close it.
 * Both a ledger started in this thread (`LocalLedger`) and the embedded one on its worker thread
 * (`thread.ts`) are this.
 */
export interface LocalLedgerEndpoint {
  /** `host:port` of the consensus node, for `Client.forNetwork({ [grpcAddress]: nodeAccountId })`. */
  readonly grpcAddress: string;
  readonly nodeAccountId: "0.0.3";
  /** `http://host:port`, the mirror node's base URL (REST under /api/v1). */
  readonly mirrorUrl: string;
  /** Every mirror base URL the ledger serves, `mirrorUrl` first (two with `secondMirrorPort`). */
  readonly mirrorUrls: readonly string[];
  /** The genesis account, funded with 50,000,000 hbar. Keys are hex DER (PKCS#8 / SPKI). */
  readonly operator: { readonly accountId: string; readonly privateKeyDer: string; readonly publicKeyDer: string };
  close(): Promise<void>;
}

/** A ledger running in this thread (`startLedger`). */
export interface RunningLedger extends LocalLedgerEndpoint {
  /**
   * Brings every transaction that is due (per the injected clock) to consensus now and returns how
   * many did. The ledger does this on its own timer; tests driving a manual clock call it.
   */
  runConsensus(): Promise<number>;
}

/**
 * A ledger started in this thread by `startLocalLedger`, for tests. The test hooks exist only
 * here: they act on the ledger's in-memory state and its injected clock, which a worker thread
 * does not share.
 */
export interface LocalLedger extends RunningLedger {
  /** Test hooks; all off until asked for. */
  readonly faults: LocalLedgerFaults;
}

/** The page a local record's explorer link points to. */
export { transactionPageUrl };

export { mirrorTransactionId };

export { DEVELOPMENT_OPERATOR_KEY };

export { LOCAL_LEDGER_FILES } from "./files.ts";

/** Starts a ledger in this thread with test hooks (`faults`): for tests. */
export async function startLocalLedger(options: LocalLedgerOptions): Promise<LocalLedger> {
  return (await import("./open.ts")).startLocalLedger(options);
}

/** Starts a ledger in this thread without test hooks: what runs for real (remembered.ts). */
export async function startLedger(options: LocalLedgerOptions): Promise<RunningLedger> {
  return (await import("./open.ts")).startLedger(options);
}
