/**
 * The administrator's reads on PostgreSQL (admin/ports.ts, `AdminReads`): the statements'
 * PostgreSQL texts (storage/admin-statements.ts), each one read operation of its own; the nodes
 * and the anchor loop's leader from pg-cluster.ts.
 */
import type { AdminReads } from "../../admin/ports.ts";
import { ADMIN_AUDIT_PAGE, ADMIN_LEDGER_TRANSACTION, ADMIN_RECORD_BY_ID, ADMIN_RECORDS_BY_HASH } from "../admin-statements.ts";
import { clusterStatus } from "../pg-cluster.ts";
import type { PostgresStore } from "../pg-store.ts";
import { firstRow, q, rows } from "../store.ts";

export function postgresAdminReads(store: PostgresStore): AdminReads {
  return {
    // Plain arrays (the client's result carries its command and count besides).
    records: async (query) => [...(await store.read(() => q(query.by === "id" ? rows(ADMIN_RECORD_BY_ID, query.id) : rows(ADMIN_RECORDS_BY_HASH, query.docHash))))],
    ledgerTransaction: async (transactionId) => (await store.read(() => q(firstRow(ADMIN_LEDGER_TRANSACTION, transactionId)))) ?? null,
    auditRows: async (beforeId, limit) => [...(await store.read(() => q(rows(ADMIN_AUDIT_PAGE, beforeId ?? Number.MAX_SAFE_INTEGER, limit))))],
    cluster: () => clusterStatus(store),
  };
}
