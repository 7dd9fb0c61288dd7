/**
 * What the anchor loop needs of storage besides its journal (queue.ts): where transaction ids
 * resume (transaction-ids.ts) and where the sealed ledger submit key is kept (submit-key.ts).
 * Types only. Implemented per engine by storage/sqlite/loop-storage.ts and
 * storage/postgres/loop-storage.ts; each engine's drivers.ts gives one.
 */
import type { Maybe } from "../../lib/maybe.ts";

/** The journal as a source of transaction ids reads it (`ledger_transactions`). */
export interface TransactionIdJournal {
  /**
   * The transaction ids of the rows whose valid start (`valid_start_ms`) is the greatest in the
   * journal: every one of them, in any order; none when the journal is empty. MUST read through
   * the index on `valid_start_ms`, never a scan of the journal (a test checks the plan on SQLite).
   * Read once, when a source of ids is made.
   */
  newestIds(): Maybe<string[]>;
  /**
   * Whether the journal holds a row with this transaction id. MUST answer synchronously: ids are
   * handed out between a record's signatures and its write transaction. Null on an engine that
   * cannot answer at once (PostgreSQL): the journal's primary key alone refuses a repeat there.
   */
  readonly exists: ((transactionId: string) => boolean) | null;
}

/** The embedded SQLite's: it answers at once, so ids resume from the journal when the loop is made. */
export interface TransactionIdJournalNow extends TransactionIdJournal {
  /** As `TransactionIdJournal.newestIds`, synchronously. */
  newestIds(): string[];
  readonly exists: (transactionId: string) => boolean;
}

/** Where the ledger submit key's sealed entry is kept (`service_meta`, under storage/meta.ts `SUBMIT_KEY_META`). */
export interface SubmitKeyEntries {
  /** The stored entry (JSON text, as `storeFirst` was given it), or null before one is stored. MUST answer synchronously on SQLite. */
  read(): Maybe<string | null>;
  /**
   * Stores `entry` unless an entry is stored already, and returns the one stored: when processes
   * or nodes race, the first insert wins and every caller gets the winner's entry; an entry is
   * never replaced. Atomic. MUST answer synchronously on SQLite. Throws on a storage fault.
   */
  storeFirst(entry: string): Maybe<string>;
}

/** The anchor loop's storage besides its journal, on either engine. */
export interface LoopStorage {
  readonly transactionIds: TransactionIdJournal;
  readonly submitKey: SubmitKeyEntries;
}

/** On the embedded SQLite: transaction ids read at once. */
export interface LoopStorageNow extends LoopStorage {
  readonly transactionIds: TransactionIdJournalNow;
}
