/**
 * The anchor journal's statements on the embedded SQLite (storage/sqlite/journal.ts): their text,
 * the row as bun:sqlite returns it, and the statements prepared once per journal.
 */
import type { Database } from "bun:sqlite";
import type { LedgerTransactionRow, TransactionKind, TransactionState } from "../../anchoring/journal/ports.ts";
import { ANNOUNCED, NEXT_BATCH_SEQUENCE, TOUCH_COMPROMISED_KEY } from "../journal-sql.ts";
import { preparedOnFirstUse } from "./first-use.ts";

/** `ledger_transactions` as bun:sqlite returns it (snake_case, blobs as Uint8Array). */
export interface RawLedgerRow {
  transaction_id: string;
  kind: TransactionKind;
  org_id: string;
  record_id: string | null;
  topic_id: string | null;
  message: Uint8Array | null;
  key_fingerprint: Uint8Array | null;
  announcement_generation: number;
  seal_fingerprint: Uint8Array | null;
  signed_bytes: Uint8Array | null;
  valid_start_ms: number;
  valid_seconds: number;
  state: TransactionState;
  sequence_number: number | null;
  consensus_at: string | null;
  running_hash: Uint8Array | null;
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
  created_at: number;
  updated_at: number;
  batch_leaf: number;
  batch_transaction_id: string | null;
  leaf_index: number | null;
  inclusion_path: Uint8Array | null;
  batch_sequence: number | null;
  batch_size: number | null;
}

const LEDGER_COLUMNS =
  "transaction_id, kind, org_id, record_id, topic_id, message, key_fingerprint, announcement_generation, seal_fingerprint, signed_bytes, valid_start_ms, valid_seconds, state, " +
  "sequence_number, consensus_at, running_hash, attempts, next_attempt_at, last_error, created_at, updated_at, " +
  "batch_leaf, batch_transaction_id, leaf_index, inclusion_path, batch_sequence, batch_size";

const buffer = (b: Uint8Array | null): Buffer | null => (b === null ? null : Buffer.from(b.buffer, b.byteOffset, b.byteLength));

/**
 * `due`'s statement, run once per unfinished state (state, now, limit): ids and due times only,
 * since most of what it returns are rows in flight that `due` leaves out; the rows it keeps are
 * then checked against `ANNOUNCED_SQL` and read whole by primary key. Exported for the plan test.
 */
export const DUE_SQL = `SELECT transaction_id, next_attempt_at FROM ledger_transactions
  WHERE state = ? AND next_attempt_at <= ? AND batch_leaf = 0
  ORDER BY next_attempt_at LIMIT ?`;

/** `nextDueAt`'s statement, run once per unfinished state: the first entry of the work index. Exported for the plan test. */
export const NEXT_DUE_SQL = `SELECT next_attempt_at AS at FROM ledger_transactions WHERE state = ? AND batch_leaf = 0 ORDER BY next_attempt_at LIMIT 1`;

/** Whether the row with this transaction id may go (`ANNOUNCED`: ok 1 or 0), and its organisation; one row, by primary key. Exported for the plan test. */
export const ANNOUNCED_SQL = `SELECT CASE WHEN ${ANNOUNCED} THEN 1 ELSE 0 END AS ok, org_id FROM ledger_transactions WHERE transaction_id = ?`;

/**
 * `unsentPastCutoff`'s statement: the pending rows through the work index (state first), the
 * rest a filter over them (the backlog, not the history). Parameters: now plus the margin, the limit.
 */
export const UNSENT_PAST_CUTOFF_SQL = `SELECT ${LEDGER_COLUMNS} FROM ledger_transactions
  WHERE state = 'pending' AND batch_leaf = 0 AND attempts = 0 AND valid_start_ms + valid_seconds * 1000 + 1 < ?
  ORDER BY next_attempt_at LIMIT ?`;

/** The open batches (through the work index: their due time is the end of their window). */
export const OPEN_BATCHES_SQL = `SELECT ${LEDGER_COLUMNS} FROM ledger_transactions WHERE state = 'open' AND batch_leaf = 0 ORDER BY next_attempt_at`;

/** An open batch whose validity window closes before the parameter: it can never be submitted. Parameters: cutoff, limit. */
export const OPEN_PAST_CUTOFF_SQL = `SELECT ${LEDGER_COLUMNS} FROM ledger_transactions
  WHERE state = 'open' AND batch_leaf = 0 AND valid_start_ms + valid_seconds * 1000 + 1 < ?
  ORDER BY next_attempt_at LIMIT ?`;

/** The row as drizzle would have mapped it (blobs as Buffers, columns camelCase). */
export function toLedgerRow(r: RawLedgerRow): LedgerTransactionRow {
  return {
    transactionId: r.transaction_id,
    kind: r.kind,
    orgId: r.org_id,
    recordId: r.record_id,
    topicId: r.topic_id,
    message: buffer(r.message),
    keyFingerprint: buffer(r.key_fingerprint),
    announcementGeneration: r.announcement_generation,
    sealFingerprint: buffer(r.seal_fingerprint),
    signedBytes: buffer(r.signed_bytes),
    validStartMs: r.valid_start_ms,
    validSeconds: r.valid_seconds,
    state: r.state,
    sequenceNumber: r.sequence_number,
    consensusAt: r.consensus_at,
    runningHash: buffer(r.running_hash),
    attempts: r.attempts,
    nextAttemptAt: r.next_attempt_at,
    lastError: r.last_error,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    batchLeaf: r.batch_leaf,
    batchTransactionId: r.batch_transaction_id,
    leafIndex: r.leaf_index,
    inclusionPath: buffer(r.inclusion_path),
    batchSequence: r.batch_sequence,
    batchSize: r.batch_size,
  };
}

/**
 * The statements the journal runs on every pass or every message, each prepared once, at its
 * first use (an idle loop runs few of them): the loop asks on every pass and makes three changes
 * per record, and drizzle would build and prepare the statement each time (a fifth of the process's CPU under sustained record creation). The record
 * is found as `recordOf` (journal-changes.ts) finds it: by its primary key and this transaction
 * (or, for a row without a record id, by the transaction alone).
 */
export function journalStatements(client: Database) {
  return preparedOnFirstUse({
    reschedule: () => client.prepare<never, [number, number, string | null, string, string]>(
      "UPDATE ledger_transactions SET next_attempt_at = ?, updated_at = ?, last_error = coalesce(?, last_error) WHERE transaction_id = ? AND state = ?",
    ),
    takeBack: () => client.prepare<never, [number, string, number]>("UPDATE ledger_transactions SET attempts = attempts - 1, updated_at = ? WHERE transaction_id = ? AND state = 'pending' AND attempts = ?"),
    retryNow: () => client.prepare<never, [number, number]>("UPDATE ledger_transactions SET next_attempt_at = ? WHERE state IN ('pending','accepted') AND batch_leaf = 0 AND next_attempt_at > ?"),
    // Per state, in the order of the index `ledger_transactions_work (state, next_attempt_at)`:
    // the first row that passes ANNOUNCED ends the scan. Over both states at once (IN), SQLite
    // read every unfinished row to find the minimum, evaluating ANNOUNCED on each: under a
    // backlog of thousands, on every pass.
    nextDue: () => client.prepare<{ at: number }, [TransactionState]>(NEXT_DUE_SQL),
    // One state at a time, for the same reason as nextDue: in index order each scan stops after
    // its LIMIT; over both states (IN) SQLite sorted every due row in a temporary B-tree,
    // evaluating ANNOUNCED on each, to return a few.
    due: () => client.prepare<{ transaction_id: string; next_attempt_at: number }, [TransactionState, number, number]>(DUE_SQL),
    announced: () => client.prepare<{ ok: number; org_id: string }, [string]>(ANNOUNCED_SQL),
    setAside: () => client.prepare<never, [number, string, number]>("UPDATE ledger_transactions SET next_attempt_at = ? WHERE transaction_id = ? AND state = 'pending' AND next_attempt_at = ?"),
    row: () => client.prepare<RawLedgerRow, [string]>(`SELECT ${LEDGER_COLUMNS} FROM ledger_transactions WHERE transaction_id = ?`),
    stateOf: () => client.prepare<{ state: TransactionState }, [string]>("SELECT state FROM ledger_transactions WHERE transaction_id = ?"),
    attemptOf: () => client.prepare<{ state: TransactionState; signed_bytes: Uint8Array | null; attempts: number }, [string]>(
      "SELECT state, signed_bytes, attempts FROM ledger_transactions WHERE transaction_id = ?",
    ),
    attempt: () => client.prepare<never, [Uint8Array, number, number, string]>("UPDATE ledger_transactions SET signed_bytes = ?, attempts = ?, updated_at = ? WHERE transaction_id = ?"),
    accept: () => client.prepare<never, [number, number, string]>(
      "UPDATE ledger_transactions SET state = 'accepted', next_attempt_at = ?, last_error = NULL, updated_at = ? WHERE transaction_id = ?",
    ),
    recordAcceptedById: () => client.prepare<never, [string, string]>("UPDATE records SET anchor_state = 'accepted' WHERE id = ? AND transaction_id = ? AND anchor_state = 'pending'"),
    recordAcceptedByTransaction: () => client.prepare<never, [string]>("UPDATE records SET anchor_state = 'accepted' WHERE transaction_id = ? AND anchor_state = 'pending'"),
    anchor: () => client.prepare<never, [number, string, Uint8Array, number, string]>(
      "UPDATE ledger_transactions SET state = 'anchored', sequence_number = ?, consensus_at = ?, running_hash = ?, last_error = NULL, updated_at = ? WHERE transaction_id = ?",
    ),
    recordAnchoredById: () => client.prepare<never, [number, string, string, string]>(
      "UPDATE records SET anchor_state = 'anchored', sequence_number = ?, consensus_at = ? WHERE id = ? AND transaction_id = ?",
    ),
    recordAnchoredByTransaction: () => client.prepare<never, [number, string, string]>(
      "UPDATE records SET anchor_state = 'anchored', sequence_number = ?, consensus_at = ? WHERE transaction_id = ?",
    ),
    // An announcement anchored: its organisation's record messages and batches set aside by `due` go now
    // (those waiting for another key are set aside again at their next look).
    wakeWaiting: () => client.prepare<never, [number, string, number]>(
      "UPDATE ledger_transactions SET next_attempt_at = ? WHERE state = 'pending' AND batch_leaf = 0 AND kind IN ('record_message','batch_message') AND org_id = ? AND next_attempt_at > ?",
    ),
    touchCompromisedKey: () => client.prepare<never, [Uint8Array]>(`${TOUCH_COMPROMISED_KEY}?`),
    // The rows the loop submits by state, a batch counting its leaves (an open one as pending).
    unfinishedByState: () => client.prepare<{ state: string; n: number }, []>(
      "SELECT state, sum(CASE WHEN kind = 'batch_message' THEN batch_size ELSE 1 END) AS n FROM ledger_transactions WHERE state IN ('open','pending','accepted') AND batch_leaf = 0 GROUP BY state",
    ),
    oldestPending: () => client.prepare<{ at: number | null }, []>("SELECT min(created_at) AS at FROM ledger_transactions WHERE state IN ('open','pending') AND batch_leaf = 0"),
    openBatches: () => client.prepare<RawLedgerRow, []>(OPEN_BATCHES_SQL),
    openPastCutoff: () => client.prepare<RawLedgerRow, [number, number]>(OPEN_PAST_CUTOFF_SQL),
    nextBatchSequence: () => client.prepare<{ next: number }, [string]>(NEXT_BATCH_SEQUENCE),
    // Closing a batch: its leaves in the order they joined, then each one's place in the tree.
    leavesOf: () => client.prepare<{ transaction_id: string; kind: TransactionKind; record_id: string | null; message: Uint8Array | null }, [string]>(
      "SELECT transaction_id, kind, record_id, message FROM ledger_transactions WHERE batch_transaction_id = ? ORDER BY created_at, transaction_id",
    ),
    placeLeaf: () => client.prepare<never, [number, Uint8Array, number, string]>("UPDATE ledger_transactions SET leaf_index = ?, inclusion_path = ?, updated_at = ? WHERE transaction_id = ?"),
    closeBatch: () => client.prepare<never, [Uint8Array, number, number, number, number, string]>(
      "UPDATE ledger_transactions SET state = 'pending', message = ?, batch_sequence = ?, batch_size = ?, next_attempt_at = ?, updated_at = ? WHERE transaction_id = ? AND state = 'open'",
    ),
    // A batch's state changes, carried to its leaves and their records (by primary key).
    leavesAccepted: () => client.prepare<never, [number, string]>("UPDATE ledger_transactions SET state = 'accepted', updated_at = ? WHERE batch_transaction_id = ? AND state = 'pending'"),
    leafRecordsAccepted: () => client.prepare<never, [string, string]>(
      "UPDATE records SET anchor_state = 'accepted' WHERE id IN (SELECT record_id FROM ledger_transactions WHERE batch_transaction_id = ? AND kind = 'record_message') AND transaction_id = ? AND anchor_state = 'pending'",
    ),
    leavesAnchored: () => client.prepare<never, [number, string, Uint8Array, number, string]>(
      "UPDATE ledger_transactions SET state = 'anchored', sequence_number = ?, consensus_at = ?, running_hash = ?, last_error = NULL, updated_at = ? WHERE batch_transaction_id = ? AND state IN ('pending','accepted')",
    ),
    leafRecordsAnchored: () => client.prepare<never, [number, string, string, string]>(
      "UPDATE records SET anchor_state = 'anchored', sequence_number = ?, consensus_at = ? WHERE id IN (SELECT record_id FROM ledger_transactions WHERE batch_transaction_id = ? AND kind = 'record_message') AND transaction_id = ?",
    ),
    topicsAwaitingConfirmation: () => client.prepare<{ topicId: string; validStartMs: number }, []>(
      `SELECT topic_id AS topicId, min(valid_start_ms) AS validStartMs FROM ledger_transactions
       WHERE state IN ('pending','accepted') AND batch_leaf = 0 AND kind <> 'topic_create' AND topic_id IS NOT NULL AND (state = 'accepted' OR attempts > 0)
       GROUP BY topic_id`,
    ),
    unsentPastCutoff: () => client.prepare<RawLedgerRow, [number, number]>(UNSENT_PAST_CUTOFF_SQL),
  });
}

export type JournalStatements = ReturnType<typeof journalStatements>;
