/**
 * The administrator's reads on the embedded SQLite (admin/ports.ts, `AdminReads`): the
 * statements' SQLite texts (storage/admin-statements.ts) through bun:sqlite's statement cache,
 * each run on its own, synchronously.
 */
import type { AdminReads, AdminRecordRow, AuditLogRow, LedgerTxRow } from "../../admin/ports.ts";
import { ADMIN_AUDIT_PAGE, ADMIN_LEDGER_TRANSACTION, ADMIN_RECORD_BY_ID, ADMIN_RECORDS_BY_HASH } from "../admin-statements.ts";
import type { SqliteStore } from "../store.ts";

export function sqliteAdminReads(store: SqliteStore): AdminReads {
  const client = store.db.$client;
  return {
    records: (q) =>
      q.by === "id" ? client.query<AdminRecordRow, [string]>(ADMIN_RECORD_BY_ID.sqlite).all(q.id) : client.query<AdminRecordRow, [string]>(ADMIN_RECORDS_BY_HASH.sqlite).all(q.docHash),
    ledgerTransaction: (transactionId) => client.query<LedgerTxRow, [string]>(ADMIN_LEDGER_TRANSACTION.sqlite).get(transactionId),
    auditRows: (beforeId, limit) => client.query<AuditLogRow, [number, number]>(ADMIN_AUDIT_PAGE.sqlite).all(beforeId ?? Number.MAX_SAFE_INTEGER, limit),
    cluster: async () => null,
  };
}
