/**
 * The options of the SDK adapter (hedera-ledger.ts), checked, and the settings they give with
 * their defaults. No SDK here: setup.ts names the options without loading it.
 */
import type { Logger } from "../lib/log.ts";
import type { LedgerNetwork } from "./ledger.ts";
import { PUBLIC_MIRRORS } from "./links.ts";

export interface HederaLedgerOptions {
  readonly network: LedgerNetwork;
  readonly operatorAccountId: string;
  /** The operator's private key as text (see `parseLedgerPrivateKey`). */
  readonly operatorPrivateKey: string;
  /** Consensus nodes `{ "host:port": "0.0.3" }`. Required for `local`; public networks use the SDK's address book. */
  readonly nodes?: Readonly<Record<string, string>>;
  /** Mirror REST base URL; defaults to the public mirror of a public network. Required for `local`. */
  readonly mirrorUrl?: string;
  /** gRPC deadline per request. Default 5000. */
  readonly grpcDeadlineMs?: number;
  /** Mirror REST timeout per request. Default 5000. */
  readonly mirrorTimeoutMs?: number;
  /** How many nodes a transaction is signed for on a public network (failover). Default 3. */
  readonly nodesPerTransaction?: number;
  /** How long a node's answer vouches for its client's connection (`ANSWER_FRESH_MS`). Default 10 s; 0 checks before every request. */
  readonly answerFreshMs?: number;
  readonly log?: Logger;
}

/**
 * How long a node's answer vouches for its client's connection. Past it (an idle appliance) the
 * next request checks the node first, so a ledger that went down meanwhile is found before any
 * bytes are handed to the SDK: its submissions are then `unsent`, not `unknown`.
 */
const ANSWER_FRESH_MS = 10_000;
const OPTION_NAMES = ["network", "operatorAccountId", "operatorPrivateKey", "nodes", "mirrorUrl", "grpcDeadlineMs", "mirrorTimeoutMs", "nodesPerTransaction", "answerFreshMs", "log"];

/** Refuses an unknown option and an operator account that is not `0.0.N` (before the key is read). */
export function checkOptions(options: HederaLedgerOptions): void {
  for (const key of Object.keys(options)) if (!OPTION_NAMES.includes(key)) throw new TypeError(`createHederaLedger: unknown option ${key}`);
  const { operatorAccountId } = options;
  if (!/^\d+\.\d+\.\d+$/.test(operatorAccountId)) throw new TypeError(`createHederaLedger: operatorAccountId ${operatorAccountId} is not 0.0.N`);
}

/** The adapter's settings, defaults applied; the local network's nodes and mirror node are required. */
export function ledgerSettings(options: HederaLedgerOptions) {
  const { network } = options;
  const grpcDeadlineMs = options.grpcDeadlineMs ?? 5000;
  const mirrorTimeoutMs = options.mirrorTimeoutMs ?? 5000;
  const nodesPerTransaction = options.nodesPerTransaction ?? 3;
  const answerFreshMs = options.answerFreshMs ?? ANSWER_FRESH_MS;
  let mirrorUrl: string;
  if (network === "local") {
    if (options.nodes === undefined || Object.keys(options.nodes).length === 0) throw new TypeError("createHederaLedger: nodes are required for the local network");
    if (options.mirrorUrl === undefined) throw new TypeError("createHederaLedger: mirrorUrl is required for the local network");
    mirrorUrl = options.mirrorUrl;
  } else {
    mirrorUrl = options.mirrorUrl ?? PUBLIC_MIRRORS[network];
  }
  mirrorUrl = mirrorUrl.replace(/\/+$/, "");
  return { grpcDeadlineMs, mirrorTimeoutMs, nodesPerTransaction, answerFreshMs, mirrorUrl };
}
