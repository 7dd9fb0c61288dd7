/**
 * A `Ledger` (ledger.ts) for a ledger that did not answer when `serve` started: the appliance
 * comes up all the same (after a power cut its ledger egress may come back later than it does),
 * answers verification, takes records as `pending`, and finds the ledger when it answers, without
 * a restart.
 *
 * What it guarantees, beyond the `Ledger` contract:
 * - `find` (what would have been done at start: the nodes from the mirror, the operator key
 *   checked against it) is tried again by every call until it succeeds once; calls meanwhile
 *   share one try. After that every call is the found ledger's.
 * - Until then nothing can have been sent: `submit` is `unsent` (so a record is abandoned when its
 *   window closes, as for a ledger refusing connections), `receipt` `unreachable`, `ping` says
 *   why, and preparing a transaction throws (the anchor loop retries the row later). The mirror
 *   reads go to the mirror URL, which is known from the settings.
 * - The change is logged once each way: unreachable, then found.
 * - `close` closes the found ledger, also one being found.
 */
import { generateEd25519KeyPair } from "../crypto/ed25519.ts";
import type { Logger } from "../lib/log.ts";
import type { Ledger, LedgerNetwork } from "./ledger.ts";
import { createMirrorClient } from "./mirror-client.ts";

export interface FoundLaterOptions {
  readonly network: LedgerNetwork;
  readonly operatorAccountId: string;
  /** Mirror REST base URL. */
  readonly mirrorUrl: string;
  /** Why the ledger could not be found at start. */
  readonly firstError: string;
  /** Finds the ledger: the same work as at start. Rejects while it does not answer. */
  readonly find: () => Promise<Ledger>;
  readonly log: Logger;
  /** Mirror REST timeout per request. Default 5000. */
  readonly mirrorTimeoutMs?: number;
}

export function foundLaterLedger(options: FoundLaterOptions): Ledger {
  const { log } = options;
  const mirrorUrl = options.mirrorUrl.replace(/\/+$/, "");
  const mirror = createMirrorClient({ mirrorUrl, timeoutMs: options.mirrorTimeoutMs ?? 5000 });
  let found: Ledger | null = null;
  let finding: Promise<Ledger> | null = null;
  let lastError = options.firstError;
  let closed = false;
  log.warn("ledger unreachable at start; serving, and anchoring once it answers", { mirrorUrl, error: options.firstError });

  const ledger = (): Promise<Ledger> => {
    if (found !== null) return Promise.resolve(found);
    if (closed) return Promise.reject(new Error("ledger closed"));
    finding ??= options.find().then(
      (l) => {
        found = l;
        log.info("ledger reached", { mirrorUrl });
        return l;
      },
      (e: unknown) => {
        finding = null;
        lastError = e instanceof Error ? e.message : String(e);
        throw new Error(`the ledger has not answered since the start: ${lastError}`);
      },
    );
    return finding;
  };
  const reason = (e: unknown) => (e instanceof Error ? e.message : String(e));

  return {
    network: options.network,
    operatorAccountId: options.operatorAccountId,
    mirrorUrl,
    generateSubmitKey: () => generateEd25519KeyPair(),
    prepareTopicCreate: async (request) => (await ledger()).prepareTopicCreate(request),
    prepareMessage: async (request) => (await ledger()).prepareMessage(request),
    async submit(bytes) {
      let l: Ledger;
      try {
        l = await ledger();
      } catch (e) {
        return { kind: "unsent", error: reason(e) };
      }
      return l.submit(bytes);
    },
    async receipt(transactionId) {
      let l: Ledger;
      try {
        l = await ledger();
      } catch (e) {
        return { kind: "unreachable", error: reason(e) };
      }
      return l.receipt(transactionId);
    },
    lookupTransaction: (transactionId) => (found !== null ? found.lookupTransaction(transactionId) : mirror.lookupTransaction(transactionId)),
    confirmMessage: (expected) => (found !== null ? found.confirmMessage(expected) : mirror.confirmMessage(expected)),
    topicMessages: (topicId, from, limit) => (found?.topicMessages !== undefined ? found.topicMessages(topicId, from, limit) : mirror.topicMessages(topicId, from, limit)),
    async ping() {
      try {
        return await (await ledger()).ping();
      } catch (e) {
        return reason(e);
      }
    },
    async close() {
      closed = true;
      const pending = finding;
      if (found !== null) await found.close();
      else if (pending !== null) await pending.then((l) => l.close(), () => {});
    },
  };
}
