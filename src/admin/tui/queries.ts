/**
 * Read-only queries the admin UI needs and no service offers: a record with its anchor and
 * revocation, and the audit trail in pages, over the reads of admin/ports.ts (`AdminReads`), a
 * record read as the one row src/storage/record-row.ts defines. Each read runs on its own, so no
 * read transaction is held open while the person looks at the screen. Synchronous on the embedded
 * SQLite (the only engine the terminal UI opens), a promise elsewhere.
 */
import { UUID_RE } from "../../lib/formats.ts";
import { runMaybe, settled, type Maybe } from "../../lib/maybe.ts";
import { toRecordRow, type RecordRow } from "../../storage/record-row.ts";
import type { AdminReads, AuditLogRow, LedgerTxRow, RecordQuery } from "../ports.ts";

export interface LedgerTx {
  readonly transactionId: string;
  readonly state: string;
  readonly sequenceNumber: number | null;
  readonly consensusAt: string | null;
  readonly attempts: number;
  readonly lastError: string | null;
  /** A batch's (docs/anchoring.md "Batches"): its sequence once closed, and its records and revocations so far; null for a message of its own. */
  readonly batch: { readonly sequence: number | null; readonly size: number } | null;
}

/**
 * A record as the admin UI shows it: the row (src/storage/record-row.ts) without its key
 * fingerprints and signatures, with its organisation's name, its ledger queue rows and its
 * revocation gathered in one place.
 */
export interface RecordView extends Readonly<Omit<RecordRow, "signerFingerprint" | "signature" | "sealFingerprint" | "sealSignature" | "revokedAt" | "revocationReason" | "revocationTransactionId">> {
  readonly orgName: string | null;
  /** The creation message's row in the ledger queue (attempts, last error), when there is one. */
  readonly anchorTx: LedgerTx | null;
  readonly revocation: { readonly revokedAt: number; readonly reason: string | null; readonly transactionId: string | null; readonly tx: LedgerTx | null } | null;
}

// What people paste: either case, and a hash with or without its `sha256:`.
const UUID = new RegExp(UUID_RE.source, "i");
const HASH = /^(?:sha256:)?([0-9a-f]{64})$/i;

/** What the person typed, as a query; a message naming the accepted forms when it is neither. */
export function parseRecordQuery(input: string): RecordQuery | string {
  const s = input.trim();
  if (s === "") return "Type a record id or a document hash.";
  if (UUID.test(s)) return { by: "id", id: s.toLowerCase() };
  const h = HASH.exec(s);
  if (h !== null) return { by: "hash", docHash: `sha256:${h[1]!.toLowerCase()}` };
  return "Not a record id (a UUID such as 0190…-…) nor a document hash (sha256: and 64 hex digits, or the 64 hex digits alone).";
}

function ledgerTx(row: LedgerTxRow | null): LedgerTx | null {
  if (row === null) return null;
  return {
    transactionId: row.transaction_id,
    state: row.state,
    sequenceNumber: row.sequence_number,
    consensusAt: row.consensus_at,
    attempts: row.attempts,
    lastError: row.last_error,
    batch: row.kind === "batch_message" ? { sequence: row.batch_sequence, size: row.batch_size ?? 0 } : null,
  };
}

/** Records matching the query, newest first (a hash can have several: other organisations, or re-authenticated after a revocation). */
export function findRecords(reads: AdminReads, q: RecordQuery): Maybe<RecordView[]> {
  const txOf = (id: string | null) => (id === null ? null : reads.ledgerTransaction(id));
  return runMaybe(
    (function* () {
      const found: RecordView[] = [];
      for (const raw of yield* settled(reads.records(q))) {
        const { signerFingerprint, signature, sealFingerprint, sealSignature, revokedAt, revocationReason, revocationTransactionId, ...shown } = toRecordRow(raw);
        const anchorTx = ledgerTx(yield* settled(txOf(shown.transactionId)));
        const revocationTx = revokedAt === null ? null : ledgerTx(yield* settled(txOf(revocationTransactionId)));
        found.push({
          ...shown,
          orgName: raw.org_name,
          anchorTx,
          revocation: revokedAt === null ? null : { revokedAt, reason: revocationReason, transactionId: revocationTransactionId, tx: revocationTx },
        });
      }
      return found;
    })(),
  );
}

export interface AuditRow {
  readonly id: number;
  readonly at: number;
  readonly actor: string;
  readonly action: string;
  readonly subjectType: string;
  readonly subjectId: string;
  readonly before: unknown;
  readonly after: unknown;
}

function parseJson(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * One page of the audit trail, newest first: entries with an id below `beforeId` (all when
 * null). Keyset paging, so entries written while the person pages do not shift the pages.
 * `more` says whether older entries exist.
 */
export function auditPage(reads: AdminReads, beforeId: number | null, limit: number): Maybe<{ entries: AuditRow[]; more: boolean }> {
  return runMaybe(
    (function* () {
      return page(yield* settled(reads.auditRows(beforeId, limit + 1)), limit);
    })(),
  );
}

function page(rows: readonly AuditLogRow[], limit: number): { entries: AuditRow[]; more: boolean } {
  return {
    more: rows.length > limit,
    entries: rows.slice(0, limit).map((r) => ({
      id: r.id,
      at: r.at,
      actor: r.actor,
      action: r.action,
      subjectType: r.subject_type,
      subjectId: r.subject_id,
      before: parseJson(r.before),
      after: parseJson(r.after),
    })),
  };
}

/** The fields an audit entry changed, `field: before → after`; every field of `after` when there was no before. */
export function auditChanges(before: unknown, after: unknown): string[] {
  const b = (before ?? {}) as Record<string, unknown>;
  const a = (after ?? {}) as Record<string, unknown>;
  const out: string[] = [];
  // Times are stored as ms since the epoch; shown as UTC text.
  const show = (k: string, v: unknown) => (/At$/.test(k) && typeof v === "number" ? new Date(v).toISOString() : JSON.stringify(v));
  for (const k of new Set([...Object.keys(b), ...Object.keys(a)])) {
    const bv = show(k, b[k]);
    const av = show(k, a[k]);
    if (before === null) out.push(`${k}: ${av}`);
    else if (bv !== av) out.push(`${k}: ${bv ?? "-"} → ${av ?? "-"}`);
  }
  return out;
}
