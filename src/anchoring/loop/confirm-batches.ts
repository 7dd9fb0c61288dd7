/**
 * Confirmation in batches: one listing of a topic's messages on the mirror node confirms up to 100 accepted messages,
 * where each would otherwise take a receipt poll per second until consensus and a mirror read
 * of its own (docs/anchoring.md "Confirmation in batches"). A listed message confirms the row
 * with its transaction id only if it is on the row's topic, paid by the transaction's account,
 * with the exact bytes: the checks of `confirmMessage`, the sequence number being the mirror's
 * own. Anything else (a different message, a mirror that does not answer, a message it has not
 * listed yet) is left to the row's own path once `confirmFallbackMs` has passed since its
 * acceptance: a listing only ever anchors, never abandons or delays (topic-watches.ts).
 */
import { parseTransactionId, type TopicMessage, type TopicMessagesFrom } from "../ledger.ts";
import type { LoopContext } from "./context.ts";
import type { StateChanges } from "./state-changes.ts";

const LISTING_LIMIT = 100;

export function createBatchConfirmation(ctx: LoopContext, changes: StateChanges) {
  const { listing, journal, watches, metrics, errors, ticker, now, backoff } = ctx;
  const { toAnchoredMessage } = changes;
  let watchesLoaded = false;
  const reading = new Set<Promise<void>>();

  const confirmListed = async (topicId: string, m: TopicMessage): Promise<void> => {
    if (m.transactionId === null) return;
    const row = await journal.unfinishedMessage(m.transactionId);
    if (row === null || row.topicId !== topicId || m.payerAccountId !== parseTransactionId(row.transactionId).account) return;
    if (!Buffer.from(row.message!).equals(Buffer.from(m.message))) return;
    return toAnchoredMessage(row, { sequenceNumber: m.sequenceNumber, consensusAt: m.consensusAt, runningHash: m.runningHash });
  };

  const readTopic = async (topicId: string, from: TopicMessagesFrom): Promise<void> => {
    const got = await listing!(topicId, from, LISTING_LIMIT);
    if (got.kind !== "found") {
      if (got.kind === "unreachable") {
        metrics.ledgerError("unknown");
        errors.warn("mirror-unreachable", "mirror node unreachable; confirmation waits", { error: got.error });
      }
      watches.failed(topicId, now(), backoff);
      return;
    }
    await Promise.all(got.value.map((m) => confirmListed(topicId, m)));
    const last = got.value.at(-1)?.sequenceNumber ?? null;
    watches.read(topicId, last, got.value.length === LISTING_LIMIT, now());
  };

  const readTopics = async (): Promise<Promise<void>[]> => {
    if (listing === null) return [];
    if (!watchesLoaded) {
      watchesLoaded = true;
      for (const t of await journal.topicsAwaitingConfirmation()) watches.watch(t.topicId, t.validStartMs, now());
    }
    return watches.due(now()).map(({ topicId, from }) => {
      const p = readTopic(topicId, from)
        .catch((e: unknown) => {
          errors.warn(`listing:${(e as Error)?.message ?? e}`, "confirming a topic's messages failed; it will be retried", { topicId, error: e });
          watches.failed(topicId, now(), backoff);
        })
        .finally(() => {
          reading.delete(p);
          ticker.schedule(0);
        });
      reading.add(p);
      return p;
    });
  };

  return {
    readTopics,
    /** The listings under way. */
    reading,
    /** This node no longer leads: the topics awaiting confirmation are read again when it does. */
    forget() {
      watchesLoaded = false;
    },
  };
}
