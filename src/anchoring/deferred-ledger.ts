/**
 * A `Ledger` (ledger.ts) that loads the SDK adapter (hedera-ledger.ts, `@hashgraph/sdk` and
 * grpc-js under it) only when the first transaction or receipt needs it. For local networks,
 * whose consensus nodes are known without the SDK's address book. An appliance whose records
 * are all anchored never loads it after a restart: about 24 MB of its idle memory
 * (docs/benchmarks.md "Idle memory").
 *
 * What it guarantees, beyond the `Ledger` contract:
 * - Without the SDK: the mirror reads (mirror-client.ts), a new submit key (node:crypto), and
 *   `ping`, which then checks that a consensus node accepts a TCP connection within the gRPC
 *   deadline (node-reachability.ts). Once the adapter is loaded, `ping` is its own: a free query
 *   answered by a node.
 * - The adapter is loaded once; calls made meanwhile wait for that one load. A load that fails
 *   rejects the calls waiting for it and is tried again by the next call.
 * - `close` closes the adapter if it was loaded, also one still loading.
 */
import { generateEd25519KeyPair } from "../crypto/ed25519.ts";
import type { Ledger, LedgerNetwork } from "./ledger.ts";
import { createMirrorClient } from "./mirror-client.ts";
import { nodeUnreachable } from "./node-reachability.ts";

export interface DeferredLedgerOptions {
  readonly network: LedgerNetwork;
  readonly operatorAccountId: string;
  /** Mirror REST base URL. */
  readonly mirrorUrl: string;
  /** Consensus nodes `{ "host:port": "0.0.3" }`. */
  readonly nodes: Readonly<Record<string, string>>;
  /** gRPC deadline per request (the TCP check's too). Default 5000. */
  readonly grpcDeadlineMs?: number;
  /** Mirror REST timeout per request. Default 5000. */
  readonly mirrorTimeoutMs?: number;
  /** Builds the SDK adapter (imports hedera-ledger.ts). */
  readonly load: () => Promise<Ledger>;
}

export function deferredLedger(options: DeferredLedgerOptions): Ledger {
  const mirrorUrl = options.mirrorUrl.replace(/\/+$/, "");
  const grpcDeadlineMs = options.grpcDeadlineMs ?? 5000;
  const mirror = createMirrorClient({ mirrorUrl, timeoutMs: options.mirrorTimeoutMs ?? 5000 });
  let loading: Promise<Ledger> | null = null;
  let loaded: Ledger | null = null;
  let closed = false;
  const sdk = (): Promise<Ledger> => {
    if (closed) return Promise.reject(new Error("ledger closed"));
    loading ??= options.load().then(
      (ledger) => {
        loaded = ledger;
        return ledger;
      },
      (e: unknown) => {
        loading = null;
        throw e;
      },
    );
    return loading;
  };
  return {
    network: options.network,
    operatorAccountId: options.operatorAccountId,
    mirrorUrl,
    generateSubmitKey: () => generateEd25519KeyPair(),
    prepareTopicCreate: async (request) => (await sdk()).prepareTopicCreate(request),
    prepareMessage: async (request) => (await sdk()).prepareMessage(request),
    submit: async (bytes) => (await sdk()).submit(bytes),
    receipt: async (transactionId) => (await sdk()).receipt(transactionId),
    lookupTransaction: mirror.lookupTransaction,
    confirmMessage: mirror.confirmMessage,
    topicMessages: mirror.topicMessages,
    async ping() {
      if (loaded !== null) return loaded.ping();
      if (closed) return "ledger closed";
      return (await nodeUnreachable(options.nodes, null, grpcDeadlineMs)) ?? true;
    },
    async close() {
      closed = true;
      const pending = loading;
      if (pending === null) return;
      try {
        await (await pending).close();
      } catch {
        /* it never loaded: nothing to close */
      }
    },
  };
}
