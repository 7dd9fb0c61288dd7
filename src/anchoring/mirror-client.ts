/**
 * The mirror node's REST API, as the anchor loop reads it (ledger.ts: `lookupTransaction`,
 * `confirmMessage`, `topicMessages`): the same paths on the public mirrors and on the local ledger's.
 *
 * Guarantees: a 404 is `not_found`; anything else that is not an answer (no connection, a
 * timeout, another status, unreadable JSON) is `unreachable`, never `not_found`, so the loop
 * never abandons a row on a mirror it could not read. `confirmMessage` checks every field the
 * message must have (topic, sequence number or timestamp, payer, chunk's transaction, bytes)
 * and says which one differs.
 */
import {
  mirrorFormTransactionId,
  parseTransactionId,
  type ConfirmOutcome,
  type ExpectedMessage,
  type MirrorLookup,
  type MirrorTransaction,
  type TopicMessage,
  type TopicMessagesFrom,
} from "./ledger.ts";

export interface MirrorClient {
  lookupTransaction(transactionId: string): Promise<MirrorLookup<MirrorTransaction>>;
  confirmMessage(expected: ExpectedMessage): Promise<ConfirmOutcome>;
  topicMessages(topicId: string, from: TopicMessagesFrom, limit: number): Promise<MirrorLookup<readonly TopicMessage[]>>;
}

const CONSENSUS_TIMESTAMP = /^\d+\.\d{9}$/;

/** `ms` since the epoch as the mirror's `seconds.nanoseconds`. */
function timestampOfMs(ms: number): string {
  const whole = Math.floor(ms);
  return `${Math.floor(whole / 1000)}.${String((whole % 1000) * 1_000_000).padStart(9, "0")}`;
}

/**
 * One element of a topic's message list, or null when it is not a message (no sequence number,
 * no consensus timestamp, no bytes). The carrying transaction is named only for a first chunk's
 * own transaction (nonce 0, not scheduled).
 */
function listedMessage(m: Record<string, unknown>): TopicMessage | null {
  if (typeof m.topic_id !== "string" || typeof m.sequence_number !== "number" || !Number.isSafeInteger(m.sequence_number)) return null;
  if (typeof m.consensus_timestamp !== "string" || !CONSENSUS_TIMESTAMP.test(m.consensus_timestamp) || typeof m.message !== "string") return null;
  const chunk = m.chunk_info as { initial_transaction_id?: { account_id?: unknown; transaction_valid_start?: unknown; nonce?: unknown; scheduled?: unknown } | null } | null | undefined;
  const i = chunk?.initial_transaction_id;
  const transactionId =
    i != null && typeof i.account_id === "string" && typeof i.transaction_valid_start === "string" && CONSENSUS_TIMESTAMP.test(i.transaction_valid_start) && (i.nonce ?? 0) === 0 && i.scheduled !== true
      ? `${i.account_id}@${i.transaction_valid_start}`
      : null;
  return {
    topicId: m.topic_id,
    sequenceNumber: m.sequence_number,
    consensusAt: m.consensus_timestamp,
    runningHash: typeof m.running_hash === "string" ? new Uint8Array(Buffer.from(m.running_hash, "base64")) : new Uint8Array(0),
    payerAccountId: typeof m.payer_account_id === "string" ? m.payer_account_id : null,
    transactionId,
    message: new Uint8Array(Buffer.from(m.message, "base64")),
  };
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** `mirrorUrl` without a trailing slash; `timeoutMs` per request. */
export function createMirrorClient(options: { readonly mirrorUrl: string; readonly timeoutMs: number }): MirrorClient {
  const { mirrorUrl } = options;
  const mirrorTimeoutMs = options.timeoutMs;

  const mirrorGet = async (path: string): Promise<MirrorLookup<Record<string, unknown>>> => {
    let res: Response;
    try {
      res = await fetch(`${mirrorUrl}${path}`, { signal: AbortSignal.timeout(mirrorTimeoutMs), headers: { accept: "application/json" } });
    } catch (e) {
      return { kind: "unreachable", error: `mirror node: ${message(e)}` };
    }
    if (res.status === 404) {
      await res.body?.cancel();
      return { kind: "not_found" };
    }
    if (!res.ok) {
      await res.body?.cancel();
      return { kind: "unreachable", error: `mirror node answered ${res.status} for ${path}` };
    }
    try {
      return { kind: "found", value: (await res.json()) as Record<string, unknown> };
    } catch (e) {
      return { kind: "unreachable", error: `mirror node: unreadable answer: ${message(e)}` };
    }
  };

  return {
    async lookupTransaction(transactionId: string): Promise<MirrorLookup<MirrorTransaction>> {
      const got = await mirrorGet(`/api/v1/transactions/${mirrorFormTransactionId(transactionId)}`);
      if (got.kind !== "found") return got;
      const list = Array.isArray(got.value.transactions) ? (got.value.transactions as Record<string, unknown>[]) : [];
      // The parent transaction (not a child or scheduled one). The public mirror also lists
      // DUPLICATE_TRANSACTION entries when a transaction reached several nodes: prefer the one that counted.
      const own = list.filter((t) => (t.nonce ?? 0) === 0 && t.scheduled !== true && t.result !== "DUPLICATE_TRANSACTION");
      const pick = own.find((t) => t.result === "SUCCESS") ?? own[0];
      if (pick === undefined) return { kind: "not_found" };
      return {
        kind: "found",
        value: { result: String(pick.result), consensusAt: String(pick.consensus_timestamp), entityId: typeof pick.entity_id === "string" ? pick.entity_id : null },
      };
    },

    async topicMessages(topicId: string, from: TopicMessagesFrom, limit: number): Promise<MirrorLookup<readonly TopicMessage[]>> {
      if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new RangeError("a topic's messages are listed 1 to 100 at a time");
      // `gte:` the next one: the mirror node takes positive sequence numbers only, and 0 is a valid "after".
      const start = "afterSequenceNumber" in from ? `sequencenumber=gte:${from.afterSequenceNumber + 1}` : `timestamp=gte:${timestampOfMs(from.fromConsensusMs)}`;
      const got = await mirrorGet(`/api/v1/topics/${encodeURIComponent(topicId)}/messages?${start}&order=asc&limit=${limit}`);
      if (got.kind !== "found") return got;
      const list = got.value.messages;
      if (!Array.isArray(list)) return { kind: "unreachable", error: "mirror node: a topic's message list without messages" };
      const messages: TopicMessage[] = [];
      for (const item of list as Record<string, unknown>[]) {
        const m = item !== null && typeof item === "object" ? listedMessage(item) : null;
        if (m === null || m.topicId !== topicId) return { kind: "unreachable", error: "mirror node: unreadable message in a topic's message list" };
        messages.push(m);
      }
      return { kind: "found", value: messages };
    },

    async confirmMessage(expected: ExpectedMessage): Promise<ConfirmOutcome> {
      const path =
        expected.sequenceNumber !== undefined
          ? `/api/v1/topics/${encodeURIComponent(expected.topicId)}/messages/${expected.sequenceNumber}`
          : expected.consensusAt !== undefined
            ? `/api/v1/topics/messages/${encodeURIComponent(expected.consensusAt)}`
            : null;
      if (path === null) throw new TypeError("confirmMessage needs a sequence number or a consensus timestamp");
      const got = await mirrorGet(path);
      if (got.kind !== "found") return got;
      const m = got.value;
      const tx = parseTransactionId(expected.transactionId);
      const mismatch = (reason: string): ConfirmOutcome => ({ kind: "mismatch", reason });
      if (m.topic_id !== expected.topicId) return mismatch(`topic ${String(m.topic_id)} instead of ${expected.topicId}`);
      if (typeof m.sequence_number !== "number") return mismatch("no sequence number");
      if (expected.sequenceNumber !== undefined && m.sequence_number !== expected.sequenceNumber) return mismatch(`sequence number ${m.sequence_number} instead of ${expected.sequenceNumber}`);
      if (expected.consensusAt !== undefined && m.consensus_timestamp !== expected.consensusAt) return mismatch(`consensus timestamp ${String(m.consensus_timestamp)} instead of ${expected.consensusAt}`);
      if (m.payer_account_id !== tx.account) return mismatch(`payer ${String(m.payer_account_id)} instead of ${tx.account}`);
      const chunk = m.chunk_info as { initial_transaction_id?: { account_id?: string; transaction_valid_start?: string; nonce?: number } } | null | undefined;
      if (chunk?.initial_transaction_id != null) {
        const i = chunk.initial_transaction_id;
        const start = `${tx.seconds}.${String(tx.nanos).padStart(9, "0")}`;
        if (i.account_id !== tx.account || i.transaction_valid_start !== start || (i.nonce ?? 0) !== 0) {
          return mismatch(`carried by ${String(i.account_id)}@${String(i.transaction_valid_start)}, not ${expected.transactionId}`);
        }
      }
      const bytes = typeof m.message === "string" ? Buffer.from(m.message, "base64") : null;
      if (bytes === null || !Buffer.from(expected.message).equals(bytes)) return { kind: "mismatch", reason: "the message bytes differ", otherBytes: true };
      if (typeof m.consensus_timestamp !== "string" || !/^\d+\.\d{9}$/.test(m.consensus_timestamp)) return mismatch("no consensus timestamp");
      const runningHash = typeof m.running_hash === "string" ? new Uint8Array(Buffer.from(m.running_hash, "base64")) : new Uint8Array(0);
      return { kind: "confirmed", value: { sequenceNumber: m.sequence_number, consensusAt: m.consensus_timestamp, runningHash } };
    },
  };
}
