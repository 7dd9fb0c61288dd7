/**
 * What the administrator's views (admin/tui/queries.ts, admin/status.ts) read that no service
 * offers. The drivers are storage/sqlite/admin-reads.ts and storage/postgres/admin-reads.ts,
 * given by each engine's drivers.ts (wired in app/core.ts). Every read runs on its own, never in a
 * read transaction held open while a person looks at the screen (on SQLite a long-lived reader
 * would keep `serve`'s WAL from being checkpointed).
 */
import type { Maybe } from "../lib/maybe.ts";
import type { ClusterStatus } from "../storage/pg-cluster.ts";
import type { RawRecordRow } from "../storage/record-row.ts";

/** What the person asked for: a record by id, or the records of a document hash. */
export type RecordQuery = { readonly by: "id"; readonly id: string } | { readonly by: "hash"; readonly docHash: string };

/** A record's row (storage/record-row.ts) with its organisation's name (null without one). */
export type AdminRecordRow = RawRecordRow & { readonly org_name: string | null };

/** A ledger queue row as the admin UI shows it. */
export interface LedgerTxRow {
  readonly transaction_id: string;
  readonly state: string;
  readonly sequence_number: number | null;
  readonly consensus_at: string | null;
  readonly attempts: number;
  readonly last_error: string | null;
  /** `batch_message` for a batch (docs/anchoring.md "Batches"), with its sequence (once closed) and its records so far. */
  readonly kind: string;
  readonly batch_sequence: number | null;
  readonly batch_size: number | null;
}

/** An audit_log row as stored: `before` and `after` JSON text, or null. */
export interface AuditLogRow {
  readonly id: number;
  readonly at: number;
  readonly actor: string;
  readonly action: string;
  readonly subject_type: string;
  readonly subject_id: string;
  readonly before: string | null;
  readonly after: string | null;
}

export interface AdminReads {
  /**
   * The records `query` names: the one record of an id (or none), or a hash's records newest
   * first (created_at, then id, descending), at most 50. Synchronous on the embedded SQLite; a
   * database fault throws (or rejects) with the database's error.
   */
  records(query: RecordQuery): Maybe<AdminRecordRow[]>;
  /** The ledger queue row of `transactionId`, or null. Synchronous on SQLite. */
  ledgerTransaction(transactionId: string): Maybe<LedgerTxRow | null>;
  /**
   * At most `limit` audit rows with an id below `beforeId` (all when null), newest (highest id)
   * first: keyset paging, so rows written meanwhile do not shift the pages. Synchronous on SQLite.
   */
  auditRows(beforeId: number | null, limit: number): Maybe<AuditLogRow[]>;
  /**
   * The nodes with a heartbeat and the anchor loop's leader (several nodes share one PostgreSQL
   * database), or null where there is only ever one node (the embedded SQLite).
   */
  cluster(): Promise<ClusterStatus | null>;
}
