/**
 * What anchoring offers the rest of the service and takes from it: the queue the records
 * capability writes to, the ledger links, the monitoring sink, the loop's options and its handle.
 * Types only, so that consumers (http/routes/metrics.ts, links.ts, setup.ts) load nothing.
 * The loop that implements them is anchorer.ts.
 */
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/log.ts";
import type { BackPressureCause } from "./back-pressure.ts";
import type { Ledger, SubmitKeyPair } from "./ledger.ts";
import type { LoopStorageNow } from "./loop/ports.ts";
import type { BatchPolicy, JournalRules } from "./journal/ports.ts";
import type { Journal, Maybe, TransactionKind } from "./queue.ts";
import type { NewTransaction, TransactionIdOptions } from "./transaction-ids.ts";

export type { BackPressureCause, BatchPolicy, NewTransaction, TransactionKind };

export interface AnchorQueue {
  /** A fresh, unique transaction id for the operator account, valid starting now (clock); validStartMs and validSeconds are what the row must store. Synchronous. Never the same id twice (transaction-ids.ts). */
  newTransactionId(): NewTransaction;
  /** Ask the loop to look at the queue now (after a caller inserted a pending row in its own transaction). */
  wake(): void;
}

export interface LedgerLinks {
  /** hashscanUrl of a transaction: local → the local ledger's own page; public networks → https://hashscan.io/<network>/transaction/<id>. */
  transactionUrl(transactionId: string): string;
  /** mirrorNodeUrl: `<mirror base>/api/v1/topics/<topicId>/messages/<sequenceNumber>`. */
  topicMessageUrl(topicId: string, sequenceNumber: number): string;
}

/** The loop's classes of ledger failure, as `ledgerError` reports them (docs/anchoring.md, "Failure classes"). */
export type LedgerErrorKind = "retryable" | "expired" | "permanent" | "unknown";

/**
 * What the loop reports for monitoring (the composition root turns it into /metrics). Owned
 * here so the loop never imports http/. Implementations MUST be cheap and synchronous; the loop
 * calls them after the state change is committed, and whatever they throw is ignored.
 */
export interface AnchorMetrics {
  /** A row reached `anchored`; `latencyMs` is from its `created_at` (queued) to that moment, on the loop's clock. */
  anchored(kind: TransactionKind, latencyMs: number): void;
  /**
   * A ledger call failed, classified: a precheck refusal (`retryable`, `expired`, `permanent`),
   * a failure at consensus (`permanent`), or no usable answer from a node or the mirror (`unknown`).
   */
  ledgerError(kind: LedgerErrorKind): void;
  /** Record creation was refused with 503 by back-pressure, for `cause` (back-pressure.ts). Optional: absent, not reported. */
  backPressure?(cause: BackPressureCause): void;
  /** A batch's message reached consensus, carrying `leaves` records and revocations. Optional: absent, not reported. */
  batchAnchored?(leaves: number): void;
}


/**
 * A key announcement ready to queue (docs/receipts.md §1): the announced key and
 * the exact message bytes (1 to 1,024).
 */
export interface KeyAnnouncement {
  /** The organisation's system key fingerprint the message announces. */
  readonly keyFingerprint: Uint8Array;
  /**
   * The organisation's announcement generation the message was built at (`organisations.
   * announcement_generation`, raised by a change of what it says, its domain): queued only while
   * it is still the organisation's, once per key and generation.
   */
  readonly generation: number;
  /**
   * The seal key the message names (`sealKeyFingerprint`): a record message waits for an anchored
   * announcement of its signer key with the seal key that sealed it.
   */
  readonly sealFingerprint: Uint8Array;
  readonly message: Uint8Array;
}

/**
 * Builds the announcement of organisation `orgId`'s current system key. Owned here, implemented
 * by records/ (the message format and the seal key are theirs) and wired by the composition root.
 * Implementations are called outside any transaction (they may create the seal key in one of
 * their own): synchronous on the embedded SQLite, a promise on PostgreSQL. Null when it cannot be
 * built yet (no seal key and no master key to create one, or no such organisation): the loop asks
 * again at its next pass.
 */
export type AnnouncementFor = (orgId: string) => Maybe<KeyAnnouncement | null>;

/** A person's key announcement (`person_key`, docs/receipts.md §1) as the loop queues it. */
export interface PersonKeyAnnouncement {
  readonly orgId: string;
  /** The person's current key. */
  readonly keyFingerprint: Uint8Array;
  /** The seal key the message names. */
  readonly sealFingerprint: Uint8Array;
  readonly message: Uint8Array;
}

/**
 * Builds the announcement of person `personId`'s current key with the current seal key, or null
 * when it cannot be built yet (no such person or key, the key store sealed). Implemented by
 * records/ (announcements.ts), wired by the composition root.
 */
export type PersonAnnouncementFor = (personId: string) => Maybe<PersonKeyAnnouncement | null>;

/** A key declared compromised whose `key_compromise` message is not queued yet (docs/signing.md "Key lifecycle"). */
export interface CompromisedKey {
  readonly orgId: string;
  /** The person whose key it is, or null: one of the organisation's own keys. */
  readonly personId: string | null;
  readonly keyFingerprint: Uint8Array;
  /** Every record the key signed at or after this time (ms) is revoked. */
  readonly sinceMs: number;
}

/** What a batch's message says (docs/anchoring.md "Batches"): its organisation, its batch sequence, its number of leaves, the Merkle root over them, and the record ids its revocation leaves revoke. */
export interface BatchFields {
  readonly orgId: string;
  readonly batch: number;
  readonly size: number;
  readonly root: Uint8Array;
  readonly revoked: readonly string[];
}

/** A batch's message (1 to 1,024 bytes), built by records/ (the message format is theirs), wired by the composition. */
export type BatchMessageFor = (fields: BatchFields) => Uint8Array;

/** The `key_compromise` message of a key, built by records/ (the message format is theirs), wired by the composition. */
export type CompromiseMessageFor = (key: CompromisedKey) => Uint8Array;

/**
 * Where the loop keeps its journal, on either engine: `sqliteAnchorStorage` (anchorer.ts) over the
 * data folder's database, or `postgresAnchorStorage` (app/postgres.ts), whose journal
 * fences every change with the leader's epoch.
 */
export interface AnchorStorage {
  /** The journal the loop reads and writes through; `newTransactionId` names the rows it queues itself; `batches` is how a revocation queued again joins a batch. */
  journal(clock: Clock, newTransactionId: () => NewTransaction, batches: BatchPolicy): Journal;
  /** This node's transaction ids (never one another node hands out). */
  transactionIds(options: Pick<TransactionIdOptions, "clock" | "operator" | "validSeconds" | "backdateMs">): () => NewTransaction;
  /** The ledger submit key, opened; created on first use. Null while the key store is sealed. */
  submitKey(masterKey: Uint8Array | null, generate: () => SubmitKeyPair): Maybe<SubmitKeyPair | null>;
  /**
   * Whether this node runs the loop now. Absent: always (one node). With several nodes only the
   * leader does; the others only count the queue for back-pressure.
   */
  active?(): boolean;
}

export interface AnchoringOptions {
  /** The journal's driver on the embedded SQLite (one node: storage/sqlite/drivers.ts), unless `storage` is given. */
  readonly journal?: (rules: JournalRules) => Journal;
  /** With `journal`: the loop's storage besides the journal, on the same database (storage/engine-drivers.ts). */
  readonly loop?: LoopStorageNow;
  /** Where the journal is, on either engine (default: `journal`'s). */
  readonly storage?: AnchorStorage;
  readonly clock: Clock;
  readonly log: Logger;
  readonly ledger: Ledger;
  readonly links: LedgerLinks;
  /** The announcement of an organisation's key, queued before its first record message (see AnnouncementFor). */
  readonly announcementFor: AnnouncementFor;
  /** A batch's message (records/messages.ts). */
  readonly batchMessageFor: BatchMessageFor;
  /** How long a batch takes records and revocations, from its first, ms (DOCVERIFY_BATCH_WINDOW_MS; 0: none, each its own message). Default 250. */
  readonly batchWindowMs?: number;
  /** At most this many leaves in one batch (DOCVERIFY_BATCH_MAX). Default 1,024. */
  readonly batchMax?: number;
  /** The message declaring a key compromised; absent: no compromise message is queued (tests of other things). */
  readonly compromiseMessageFor?: CompromiseMessageFor;
  /** Builds a person's key announcement (records/announcements.ts). Absent: persons' keys are announced only when they enrol. */
  readonly personAnnouncementFor?: PersonAnnouncementFor;
  /** The master key, to open (or create) the sealed ledger submit key; null when the key store is sealed. */
  readonly masterKey: Uint8Array | null;
  /** Validity window of every transaction, seconds (DOCVERIFY_ANCHOR_VALID_SECONDS, 15–180). */
  readonly validSeconds: number;
  /** Valid start is set this far before now, for clock skew with public nodes. Default 0. */
  readonly validStartBackdateMs?: number;
  /** Rows worked on at once. Default 64. */
  readonly concurrency?: number;
  /** Real-time interval of the loop when nothing wakes it. Default 1000. */
  readonly idlePollMs?: number;
  /** Receipt and mirror polling while awaiting consensus. Default 1000. */
  readonly receiptPollMs?: number;
  /**
   * With a ledger that lists a topic's messages (`Ledger.topicMessages`), accepted messages are
   * confirmed in batches: each topic with messages awaiting consensus is read from the mirror node
   * every `confirmPollMs` (default 500), one listing for up to 100 messages. A message the
   * listings have not confirmed `confirmFallbackMs` after its acceptance (default 15 s) is
   * confirmed alone, as without listings: its receipt, then the mirror.
   */
  readonly confirmPollMs?: number;
  readonly confirmFallbackMs?: number;
  /** Retry backoff: first delay and cap. Default 500 ms and 60 s. */
  readonly backoffBaseMs?: number;
  readonly backoffMaxMs?: number;
  /** After the window closes, how long the mirror may lag before "not found" means "never". Default 20 s. */
  readonly settleGraceMs?: number;
  /** Unfinished rows past which record creation is refused with 503. Default 5000. */
  readonly backlogLimit?: number;
  /**
   * Age of the oldest transaction not yet accepted past which record creation is refused with
   * 503. Default 30 s: nothing waits unsubmitted long enough to risk its validity window
   * (DOCVERIFY_ANCHOR_VALID_SECONDS: 180 s by default), for instance while the ledger is
   * unreachable.
   */
  readonly maxQueueAgeMs?: number;
  /**
   * Record creation is also refused while the unfinished rows outnumber what the loop anchored
   * in the last `backlogWindowMs` (at least `backlogFloor` rows are always allowed). This keeps
   * the backlog flat under sustained load: records are taken as fast as they are anchored, not
   * faster. A few rows stuck awaiting reconciliation never block creation. Defaults 10 s, 200.
   */
  readonly backlogWindowMs?: number;
  readonly backlogFloor?: number;
  /** How long a ledger health observation stays fresh for readiness. Default 10 s. */
  readonly healthTtlMs?: number;
  /** Topic memo. Default "docverify". */
  readonly topicMemo?: string;
  /** Monitoring sink. Default: reports nothing. */
  readonly metrics?: AnchorMetrics;
}

export interface Anchoring {
  readonly queue: AnchorQueue;
  readonly links: LedgerLinks;
  readonly ledger: Ledger;
  /** Starts the background loop. Idempotent. */
  start(): void;
  /** Stops the loop quietly, letting calls in flight finish and store their answers. Idempotent. */
  stop(): Promise<void>;
  /** One pass: provisioning and every due row, awaiting them. For tests that drive a manual clock. */
  runOnce(): Promise<number>;
  /** Readiness of the ledger: cached, never waits longer than ~1 s. */
  readiness(): Promise<true | string>;
  /** Unfinished rows (a batch counted as its leaves) as of the last pass, and the oldest not yet accepted. */
  backlog(): { readonly pending: number; readonly accepted: number; readonly oldestPendingAt: number | null };
  /** The open batches as of the loop's last look (docs/anchoring.md "Batches"): how many, and the leaves in them. */
  openBatches(): { readonly batches: number; readonly leaves: number };
  /** Messages this loop anchored in its back-pressure window (several nodes: the leader reports it). */
  anchoredRecently(): number;
  /**
   * How long the ledger has not answered this node, in ms (0 while it answers). Several nodes: a
   * leader cut off from the ledger steps down, so that a node that reaches it can lead.
   */
  ledgerUnreachableForMs(): number;
  /** Throws 503 SERVICE_UNAVAILABLE with Retry-After and `details.cause` when the backlog is past its bound (back-pressure.ts). */
  assertCapacity(): void;
}
