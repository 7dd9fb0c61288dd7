/**
 * The ledger, as the anchor loop needs it: build and sign a transaction under an id the caller
 * chose (and stored), submit those exact bytes, ask for their receipt, and confirm a message
 * through the mirror node. Owned by its consumer (anchorer.ts); implemented by
 * hedera-ledger.ts for every network, the embedded local ledger included, and by fakes in tests.
 *
 * What every implementation MUST guarantee:
 * - `prepare*` is deterministic in what it commits to: the transaction id, valid start and valid
 *   duration are exactly the ones given, so the bytes can be stored before anything is sent and
 *   re-submitted after a crash. Preparing never contacts the ledger.
 * - `submit` sends the given bytes unchanged (no re-signing, no new transaction id) and never
 *   throws for a ledger answer: every outcome is a `SubmitOutcome`. It throws only for bytes
 *   that are not a transaction (a bug).
 * - `receipt` and the mirror calls never throw for a ledger answer either; an unreachable ledger
 *   or mirror is `{ kind: "unreachable" }`.
 * - No method logs or returns a private key.
 *
 * What a caller may assume after a crash:
 * - Re-submitting stored bytes is always safe: a transaction id reaches consensus at most once.
 *   `DUPLICATE_TRANSACTION` (outcome `accepted` with `duplicate: true`) means an earlier
 *   submission was accepted.
 * - Receipts expire (180 s after consensus on Hedera); after that `receipt` answers `not_found`
 *   and only the mirror node (`lookupTransaction`, `confirmMessage`) knows the outcome.
 *
 * How failures are classified (`SubmitOutcome.kind`):
 * - `accepted`: precheck OK, or DUPLICATE_TRANSACTION.
 * - `retryable`: the ledger refused for now (BUSY, PLATFORM_NOT_ACTIVE, PLATFORM_TRANSACTION_NOT_CREATED,
 *   INVALID_TRANSACTION_START when our clock runs ahead, ...). Nothing was accepted; the same
 *   bytes may be sent again after a backoff.
 * - `expired`: TRANSACTION_EXPIRED at precheck: the validity window has closed. The transaction
 *   may still have been accepted by an earlier submission; only the receipt or mirror can tell.
 * - `permanent`: any other precheck refusal (INVALID_SIGNATURE, INSUFFICIENT_PAYER_BALANCE,
 *   INVALID_TOPIC_ID, ...). These bytes will never be accepted; do not retry them.
 * - `unknown`: sent, or possibly sent, but no answer (timeout, connection lost, UNAVAILABLE). The
 *   transaction may or may not have been accepted: re-submit the same bytes, or ask for the
 *   receipt.
 * - `unsent`: nothing left this process. The bytes were never handed to a connection because no
 *   node accepted one (connection refused, no route, no connection within the deadline). An
 *   implementation MUST answer `unsent` only when it knows that no byte of this submission can
 *   reach a node, now or later; when in any doubt (a request that was started, a deadline that
 *   raced the connection) it answers `unknown`.
 *
 * What the anchor loop builds on `unsent` (docs/anchoring.md "When is a submission provably
 * unsent?"): a transaction whose every submission
 * was `unsent` was never seen by any node, so it cannot reach consensus; once its validity window
 * has closed (also while the ledger stays down) it is abandoned, and the record it carried stops
 * counting. A single `unknown` submission is enough to keep it until the receipt or the mirror
 * node can say what became of it: never a second transaction while the first could still land.
 */
import type { LedgerNetwork } from "../config/index.ts";

export type { LedgerNetwork };

/** A transaction id as the SDK writes it: `0.0.2@1768469400.123456789`. */
export type TransactionIdText = string;

export interface TopicCreateRequest {
  readonly transactionId: TransactionIdText;
  readonly validSeconds: number;
  /** Raw 32-byte ED25519 public key that every message to the topic must be signed with. */
  readonly submitPublicKey: Uint8Array;
  /** Public memo on the topic, at most 100 bytes. */
  readonly memo: string;
}

export interface MessageRequest {
  readonly transactionId: TransactionIdText;
  readonly validSeconds: number;
  readonly topicId: string;
  /** The message, at most 1,024 bytes: one chunk. */
  readonly message: Uint8Array;
  /** The topic's submit key: raw 32-byte ED25519 private key (seed). Used to sign, never kept. */
  readonly submitPrivateKey: Uint8Array;
}

export type SubmitOutcome =
  | { readonly kind: "accepted"; readonly duplicate: boolean }
  | { readonly kind: "retryable"; readonly status: string }
  | { readonly kind: "expired"; readonly status: string }
  | { readonly kind: "permanent"; readonly status: string }
  | { readonly kind: "unknown"; readonly error: string }
  /** Provably never sent: no node accepted a connection (see the header). */
  | { readonly kind: "unsent"; readonly error: string };

export type ReceiptOutcome =
  /** Consensus reached with SUCCESS. `topicId` for a topic creation; the rest for a message. */
  | {
      readonly kind: "success";
      readonly topicId: string | null;
      readonly sequenceNumber: number | null;
      readonly runningHash: Uint8Array | null;
    }
  /** Consensus reached and the transaction failed (`status`, e.g. INVALID_SIGNATURE): final. */
  | { readonly kind: "failed"; readonly status: string }
  /** Accepted, consensus not reached yet (receipt status UNKNOWN). */
  | { readonly kind: "pending" }
  /** The ledger knows no receipt: never accepted, dropped, or the receipt expired. */
  | { readonly kind: "not_found" }
  | { readonly kind: "unreachable"; readonly error: string };

/** A transaction as the mirror node reports it. */
export interface MirrorTransaction {
  /** `SUCCESS` or the failure status. */
  readonly result: string;
  /** `seconds.nanoseconds`, nanoseconds zero-padded to 9 digits. */
  readonly consensusAt: string;
  /** The topic the transaction created or posted to. */
  readonly entityId: string | null;
}

export type MirrorLookup<T> = { readonly kind: "found"; readonly value: T } | { readonly kind: "not_found" } | { readonly kind: "unreachable"; readonly error: string };

/** What a message on the ledger must be for `confirmMessage` to confirm it. */
export interface ExpectedMessage {
  readonly topicId: string;
  /** Look the message up by sequence number (from the receipt) ... */
  readonly sequenceNumber?: number;
  /** ... or by consensus timestamp (from the mirror's transaction). */
  readonly consensusAt?: string;
  /** The transaction that carried it; its payer must have paid for the message. */
  readonly transactionId: TransactionIdText;
  readonly message: Uint8Array;
}

export interface ConfirmedMessage {
  readonly sequenceNumber: number;
  readonly consensusAt: string;
  readonly runningHash: Uint8Array;
}

export type ConfirmOutcome =
  | { readonly kind: "confirmed"; readonly value: ConfirmedMessage }
  | { readonly kind: "not_found" }
  /**
   * The mirror holds a different message there: never treat the record as anchored. `otherBytes`:
   * our transaction, on our topic, reached consensus carrying other bytes than ours (a batch
   * closed again from a restored backup, after the first was sent: docs/anchoring.md "Batches").
   */
  | { readonly kind: "mismatch"; readonly reason: string; readonly otherBytes?: true }
  | { readonly kind: "unreachable"; readonly error: string };

/** A message as the mirror node lists a topic's messages (`/api/v1/topics/{id}/messages`). */
export interface TopicMessage {
  readonly topicId: string;
  readonly sequenceNumber: number;
  /** `seconds.nanoseconds`, nanoseconds zero-padded to 9 digits. */
  readonly consensusAt: string;
  readonly runningHash: Uint8Array;
  readonly payerAccountId: string | null;
  /** The transaction that carried it (its chunk's initial transaction, nonce 0), SDK form; null when the mirror names none. */
  readonly transactionId: TransactionIdText | null;
  readonly message: Uint8Array;
}

/** Where a listing starts: after a sequence number, or at a consensus time (ms since the epoch, inclusive). */
export type TopicMessagesFrom = { readonly afterSequenceNumber: number } | { readonly fromConsensusMs: number };

export interface SubmitKeyPair {
  /** Raw 32-byte ED25519 seed. */
  readonly privateKey: Uint8Array;
  /** Raw 32-byte ED25519 public key. */
  readonly publicKey: Uint8Array;
}

export interface Ledger {
  readonly network: LedgerNetwork;
  /** The account that pays for every transaction, e.g. `0.0.2`. */
  readonly operatorAccountId: string;
  /** Mirror REST base URL, without a trailing slash. */
  readonly mirrorUrl: string;

  /** A new ED25519 key pair for topic submit keys. */
  generateSubmitKey(): SubmitKeyPair;
  /** Signed bytes of a topic creation (signed by the operator). */
  prepareTopicCreate(request: TopicCreateRequest): Promise<Uint8Array>;
  /** Signed bytes of a one-chunk message (signed by the submit key and the operator). */
  prepareMessage(request: MessageRequest): Promise<Uint8Array>;
  submit(signedBytes: Uint8Array): Promise<SubmitOutcome>;
  receipt(transactionId: TransactionIdText): Promise<ReceiptOutcome>;
  lookupTransaction(transactionId: TransactionIdText): Promise<MirrorLookup<MirrorTransaction>>;
  /** Checks topic id, sequence number (when given), payer account, chunk transaction id and the bytes. */
  confirmMessage(expected: ExpectedMessage): Promise<ConfirmOutcome>;
  /**
   * Up to `limit` (1–100) messages of a topic from the mirror node, in consensus order, starting
   * at `from` (a topic the mirror does not know lists nothing, as on Hedera's; a 404 is
   * `not_found`). Optional: without it the loop confirms every message alone (receipt, then
   * `confirmMessage`). A listing that is not one (a message without sequence number or consensus
   * timestamp, or of another topic) is `unreachable`. Throws only for a `limit` out of range.
   */
  topicMessages?(topicId: string, from: TopicMessagesFrom, limit: number): Promise<MirrorLookup<readonly TopicMessage[]>>;
  /** A cheap, free round trip to a consensus node: true, or why not. */
  ping(): Promise<true | string>;
  close(): Promise<void>;
}

/** `0.0.2@1768469400.000000123` → `0.0.2-1768469400-000000123`, the mirror node's form. */
export function mirrorFormTransactionId(transactionId: TransactionIdText): string {
  const m = /^(\d+\.\d+\.\d+)@(\d+)\.(\d+)$/.exec(transactionId);
  if (m === null) throw new TypeError(`not a transaction id: ${transactionId}`);
  return `${m[1]}-${m[2]}-${m[3]!.padStart(9, "0")}`;
}

/** Splits an SDK-form transaction id. */
export function parseTransactionId(transactionId: TransactionIdText): { account: string; seconds: number; nanos: number } {
  const m = /^(\d+\.\d+\.\d+)@(\d+)\.(\d{1,9})$/.exec(transactionId);
  if (m === null) throw new TypeError(`not a transaction id: ${transactionId}`);
  return { account: m[1]!, seconds: Number(m[2]), nanos: Number(m[3]) };
}
