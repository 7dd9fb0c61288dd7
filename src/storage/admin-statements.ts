/**
 * Statements written for each engine (store.ts, `Statement`) for the administrator's views
 * (admin/ports.ts; run by storage/{sqlite,postgres}/admin-reads.ts). As in statements.ts, both
 * texts of a pair return the same columns with the same JavaScript types: on PostgreSQL a bigint
 * read as a number is cast `::float8`.
 */
import type { AdminRecordRow, AuditLogRow, LedgerTxRow } from "../admin/ports.ts";
import { PG_RECORD_COLUMNS, recordColumns } from "./record-row.ts";
import { statement } from "./store.ts";

const PG_RECORD_R = PG_RECORD_COLUMNS.split(", ")
  .map((c) => `r.${c}`)
  .join(", ");
const selectRecord = (columns: string) => `SELECT ${columns}, o.name AS org_name FROM records r LEFT JOIN organisations o ON o.id = r.org_id`;

export const ADMIN_RECORD_BY_ID = statement<AdminRecordRow, [recordId: string]>({
  name: "admin: record by id",
  sqlite: `${selectRecord(recordColumns({ alias: "r" }))} WHERE r.id = ?`,
  postgres: `${selectRecord(PG_RECORD_R)} WHERE r.id = $1`,
});

/** A hash's records, newest first (several: other organisations, or authenticated again after a revocation). */
export const ADMIN_RECORDS_BY_HASH = statement<AdminRecordRow, [docHash: string]>({
  name: "admin: records by hash",
  sqlite: `${selectRecord(recordColumns({ alias: "r" }))} WHERE r.doc_hash = ? ORDER BY r.created_at DESC, r.id DESC LIMIT 50`,
  postgres: `${selectRecord(PG_RECORD_R)} WHERE r.doc_hash = $1 ORDER BY r.created_at DESC, r.id DESC LIMIT 50`,
});

export const ADMIN_LEDGER_TRANSACTION = statement<LedgerTxRow, [transactionId: string]>({
  name: "admin: ledger transaction",
  sqlite: "SELECT transaction_id, state, sequence_number, consensus_at, attempts, last_error, kind, batch_sequence, batch_size FROM ledger_transactions WHERE transaction_id = ?",
  postgres:
    "SELECT transaction_id, state, sequence_number::float8 AS sequence_number, consensus_at, attempts::float8 AS attempts, last_error, kind, batch_sequence, batch_size FROM ledger_transactions WHERE transaction_id = $1",
});

/** Audit rows below an id, newest first (keyset paging). */
export const ADMIN_AUDIT_PAGE = statement<AuditLogRow, [beforeId: number, limit: number]>({
  name: "admin: audit page",
  sqlite: "SELECT id, at, actor, action, subject_type, subject_id, before, after FROM audit_log WHERE id < ? ORDER BY id DESC LIMIT ?",
  postgres: "SELECT id::float8 AS id, at::float8 AS at, actor, action, subject_type, subject_id, before, after FROM audit_log WHERE id < $1 ORDER BY id DESC LIMIT $2",
});
