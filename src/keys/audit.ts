/**
 * The audit trail: every administrative change is written by the same transaction that makes
 * it, so a change without its audit row (or the reverse) cannot exist.
 * The table is append-only (triggers refuse UPDATE and DELETE).
 */
import { desc } from "drizzle-orm";
import { q, type Op, type Store, type StoreDb, type Tables } from "../storage/store.ts";

export interface AuditEntry {
  readonly actor: string;
  readonly action: string;
  /**
   * `master_key`: the service's master key (docverify master-key rotate), subject id its key id.
   * `seal_key`: the service seal key (docverify seal rotate-key), subject id the new key's fingerprint.
   */
  readonly subjectType: "organisation" | "api_key" | "person" | "master_key" | "seal_key";
  readonly subjectId: string;
  readonly before: unknown;
  readonly after: unknown;
}

/** The audit row of one change at `at`. */
function auditRow(at: number, e: AuditEntry) {
  return {
    at,
    actor: e.actor,
    action: e.action,
    subjectType: e.subjectType,
    subjectId: e.subjectId,
    before: e.before === null ? null : JSON.stringify(e.before),
    after: e.after === null ? null : JSON.stringify(e.after),
  };
}

/** Writes one audit row inside a store operation's write transaction (store.ts). */
export function* audit(tx: StoreDb, t: Tables, at: number, e: AuditEntry): Op<void> {
  yield* q(tx.insert(t.auditLog).values(auditRow(at, e)));
}

/** The newest `limit` audit rows, newest first. */
export function listAudit(store: Store, limit = 100) {
  return store.read(function* (db, t) {
    return yield* q(db.select().from(t.auditLog).orderBy(desc(t.auditLog.id)).limit(limit));
  });
}
