/**
 * The audit trail: every administrative change is written by the same synchronous
 * transaction that makes it, so a change without its audit row (or the reverse) cannot exist.
 * The table is append-only (triggers refuse UPDATE and DELETE).
 */
import { desc } from "drizzle-orm";
import type { Db } from "../storage/db.ts";
import { auditLog } from "../storage/schema.ts";

export interface AuditEntry {
  readonly actor: string;
  readonly action: string;
  readonly subjectType: "organisation" | "api_key" | "person";
  readonly subjectId: string;
  readonly before: unknown;
  readonly after: unknown;
}

/** Writes one audit row; call inside the transaction that makes the change. */
export function writeAudit(tx: Pick<Db, "insert">, at: number, e: AuditEntry): void {
  tx.insert(auditLog)
    .values({
      at,
      actor: e.actor,
      action: e.action,
      subjectType: e.subjectType,
      subjectId: e.subjectId,
      before: e.before === null ? null : JSON.stringify(e.before),
      after: e.after === null ? null : JSON.stringify(e.after),
    })
    .run();
}

export function listAudit(db: Db, limit = 100) {
  return db.select().from(auditLog).orderBy(desc(auditLog.id)).limit(limit).all();
}
