/**
 * One `records` row, as drizzle maps it and as raw bun:sqlite statements return it. The hot paths
 * (verification, record creation) and the admin UI read records through statements prepared on
 * `db.$client`: measured per statement, a drizzle prepared statement costs about three times as
 * much (the figures: docs/benchmarks.md, "Single operations"), since drizzle maps every row
 * through its field list and copies every blob. So the raw form is named here once, derived from src/storage/schema.ts: a column added
 * there is read by every `SELECT ${RECORD_COLUMNS}` and `toRecordRow` fails to compile until it
 * maps it.
 */
import { getTableColumns } from "drizzle-orm";
import { records } from "./schema.ts";

/** A `records` row as drizzle maps it: property names, blobs as Buffers. */
export type RecordRow = typeof records.$inferSelect;

type Columns = typeof records._.columns;
/** bun:sqlite returns a blob as a Uint8Array (drizzle makes it a Buffer). */
type RawValue<T> = T extends Buffer ? Uint8Array : T;

/**
 * A `records` row as a raw statement selecting `RECORD_COLUMNS` returns it: SQL column names,
 * blobs as Uint8Array, the same nullability and enums as `RecordRow`.
 */
export type RawRecordRow = { readonly [K in keyof Columns as Columns[K]["_"]["name"]]: RawValue<RecordRow[K]> };

/** A column of `records` by its SQL name. */
export type RecordColumn = keyof RawRecordRow;

const COLUMN_NAMES = Object.values(getTableColumns(records)).map((c) => c.name as RecordColumn);

/**
 * The columns of `records` in the schema's order, as a select list: all of them, or all but
 * `omit` (a statement that never needs them; its rows are `Omit<RawRecordRow, …>`), optionally
 * qualified by a table alias (for a join).
 */
export function recordColumns(options: { readonly alias?: string; readonly omit?: readonly RecordColumn[] } = {}): string {
  const { alias, omit = [] } = options;
  return COLUMN_NAMES.filter((name) => !omit.includes(name))
    .map((name) => (alias === undefined ? name : `${alias}.${name}`))
    .join(", ");
}

/** `SELECT ${RECORD_COLUMNS} FROM records …` returns `RawRecordRow`s. */
export const RECORD_COLUMNS = recordColumns();

/** SQLite `integer` columns, which PostgreSQL keeps as bigint and returns as text unless cast. */
const INTEGER_COLUMNS = new Set(Object.values(getTableColumns(records)).filter((c) => c.getSQLType() === "integer").map((c) => c.name));

/** `RECORD_COLUMNS` for PostgreSQL: the same names and JavaScript types (bigints cast to float8). */
export const PG_RECORD_COLUMNS = COLUMN_NAMES.map((name) => (INTEGER_COLUMNS.has(name) ? `${name}::float8 AS ${name}` : name)).join(", ");

/** A raw row as drizzle would have mapped it (blobs copied into Buffers, as `mode: "buffer"` gives them). */
export function toRecordRow(r: RawRecordRow): RecordRow {
  return {
    id: r.id,
    orgId: r.org_id,
    signerType: r.signer_type,
    kind: r.kind,
    signerHint: r.signer_hint,
    docHash: r.doc_hash,
    filename: r.filename,
    signedAtMs: r.signed_at_ms,
    signerFingerprint: Buffer.from(r.signer_fingerprint),
    signature: Buffer.from(r.signature),
    sealFingerprint: Buffer.from(r.seal_fingerprint),
    sealSignature: Buffer.from(r.seal_signature),
    anchorState: r.anchor_state,
    topicId: r.topic_id,
    transactionId: r.transaction_id,
    sequenceNumber: r.sequence_number,
    consensusAt: r.consensus_at,
    revokedAt: r.revoked_at,
    revocationReason: r.revocation_reason,
    revocationTransactionId: r.revocation_transaction_id,
    createdAt: r.created_at,
  };
}
