/**
 * Statements written for each engine (store.ts, `Statement`) for receipts (the receipt drivers)
 * and the record counts of /metrics (records/counts.ts). As in statements.ts, both texts of a pair
 * return the same columns with the same JavaScript types: on PostgreSQL a bigint read as a number
 * is cast `::float8`.
 */
import type { ReceiptKeyRow, ReceiptRecordRow, ReceiptTransactionRow } from "../receipts/ports.ts";
import { PG_RECORD_COLUMNS, RECORD_COLUMNS } from "./record-row.ts";
import { statement } from "./store.ts";

// ---- receipts (receipts/ports.ts: the rows; storage/{sqlite,postgres}/receipt-reads.ts run these) ----

const TX_COLUMNS = ["transaction_id", "topic_id", "message", "state", "sequence_number", "consensus_at", "running_hash", "created_at"] as const;
const TX_BIGINTS = new Set<string>(["sequence_number", "created_at"]);
/** A transaction's columns, from alias `a`, optionally renamed `${prefix}${column}`, cast for PostgreSQL. */
const txColumns = (engine: "sqlite" | "postgres", a: string, prefix = ""): string =>
  TX_COLUMNS.map((c) => `${a}.${c}${engine === "postgres" && TX_BIGINTS.has(c) ? "::float8" : ""} AS ${prefix}${c}`).join(", ");

export const RECEIPT_RECORD = statement<ReceiptRecordRow, [recordId: string]>({
  name: "receipt: record with the change counter",
  sqlite: `SELECT ${RECORD_COLUMNS}, (SELECT value FROM change_counter WHERE id = 1) AS gen FROM records WHERE id = ?`,
  postgres: `SELECT ${PG_RECORD_COLUMNS}, (SELECT value::float8 FROM change_counter WHERE id = 1) AS gen FROM records WHERE id = $1`,
});

export const RECEIPT_KEY = statement<ReceiptKeyRow, [fingerprint: Uint8Array]>({
  name: "receipt: signing key",
  sql: "SELECT algorithm, public_key FROM signing_keys WHERE fingerprint = ?",
});

export const RECEIPT_TRANSACTION = statement<ReceiptTransactionRow, [transactionId: string]>({
  name: "receipt: ledger transaction",
  sqlite: `SELECT ${txColumns("sqlite", "t")} FROM ledger_transactions t WHERE t.transaction_id = ?`,
  postgres: `SELECT ${txColumns("postgres", "t")} FROM ledger_transactions t WHERE t.transaction_id = $1`,
});

/**
 * Which of a key's live announcements a receipt carries (a key is announced again when its
 * organisation's domain or name changes: docs/anchoring.md "Key announcements"): the latest
 * anchored, by sequence number on the topic; while none is anchored, an unfinished one (its age
 * sets the retry time). The terms after org_id and key_fingerprint are the partial index's own
 * (ledger_transactions_one_announcement): one row per announcement generation, a handful at most,
 * found by it.
 */
const ANNOUNCEMENT_ORDER = "ORDER BY CASE WHEN x.state = 'anchored' THEN 0 ELSE 1 END, x.sequence_number DESC NULLS LAST, x.created_at LIMIT 1";
const announcementOf = (org: string, key: string): string =>
  `SELECT x.transaction_id FROM ledger_transactions x
    WHERE x.org_id = ${org} AND x.key_fingerprint = ${key} AND x.kind = 'key_announcement' AND x.state <> 'abandoned'
    ${ANNOUNCEMENT_ORDER}`;

/** The announcement of an organisation's key a receipt carries (ANNOUNCEMENT_ORDER). */
export const RECEIPT_ANNOUNCEMENT = statement<ReceiptTransactionRow, [orgId: string, keyFingerprint: Uint8Array]>({
  name: "receipt: key announcement",
  sqlite: `SELECT ${txColumns("sqlite", "t")} FROM ledger_transactions t WHERE t.transaction_id = (${announcementOf("?1", "?2")})`,
  postgres: `SELECT ${txColumns("postgres", "t")} FROM ledger_transactions t WHERE t.transaction_id = (${announcementOf("$1", "$2")})`,
});

type Prefixed<P extends string, T> = { readonly [K in keyof T & string as `${P}${K}`]: T[K] | null };

/**
 * Everything one receipt is built from, in one row: the record with the change counter; its
 * creation message (`c_`), its key's announcement (`a_`) and its revocation message (`v_`), each
 * all null when there is none; the signer's and the seal key (`sk_`, `lk_`). One statement reads
 * one snapshot on PostgreSQL, so the receipt is as consistent as one read transaction makes it,
 * in one round trip.
 */
export type ReceiptSnapshotRow = ReceiptRecordRow &
  Prefixed<"c_", ReceiptTransactionRow> &
  Prefixed<"a_", ReceiptTransactionRow> &
  Prefixed<"v_", ReceiptTransactionRow> &
  Prefixed<"sk_", ReceiptKeyRow> &
  Prefixed<"lk_", ReceiptKeyRow>;

const snapshot = (engine: "sqlite" | "postgres", p: (n: number) => string): string => `SELECT ${engine === "sqlite" ? recordAlias("r", RECORD_COLUMNS) : recordAlias("r", PG_RECORD_COLUMNS)},
       (SELECT ${engine === "sqlite" ? "value" : "value::float8"} FROM change_counter WHERE id = 1) AS gen,
       ${txColumns(engine, "c", "c_")},
       ${txColumns(engine, "a", "a_")},
       ${txColumns(engine, "v", "v_")},
       sk.algorithm AS sk_algorithm, sk.public_key AS sk_public_key,
       lk.algorithm AS lk_algorithm, lk.public_key AS lk_public_key
  FROM records r
  LEFT JOIN ledger_transactions c ON c.transaction_id = r.transaction_id
  LEFT JOIN ledger_transactions a ON a.transaction_id = (${announcementOf("r.org_id", "r.signer_fingerprint")})
  LEFT JOIN ledger_transactions v ON v.transaction_id = r.revocation_transaction_id
  LEFT JOIN signing_keys sk ON sk.fingerprint = r.signer_fingerprint
  LEFT JOIN signing_keys lk ON lk.fingerprint = r.seal_fingerprint
 WHERE r.id = ${p(1)}`;

/** A record select list (`name` or `name::float8 AS name`) with every column taken from alias `a`. */
function recordAlias(a: string, columns: string): string {
  return columns
    .split(", ")
    .map((c) => `${a}.${c}`)
    .join(", ");
}

export const RECEIPT_SNAPSHOT = statement<ReceiptSnapshotRow, [recordId: string]>({
  name: "receipt: snapshot",
  sqlite: snapshot("sqlite", () => "?"),
  postgres: snapshot("postgres", (n) => `$${n}`),
});

// ---- record counts (records/counts.ts) ------------------------------------------------------

/**
 * Records by anchor state, each one count over the `records_anchor_state` index, never the table
 * (a row holds kilobytes of signatures). SQLite is told the index (`INDEXED BY`); PostgreSQL's
 * planner takes it by itself (an index-only scan).
 */
export const RECORD_COUNTS = statement<{ pending: number; accepted: number; anchored: number; abandoned: number }, []>({
  name: "records by anchor state",
  sqlite: `SELECT ${["pending", "accepted", "anchored", "abandoned"]
    .map((s) => `(SELECT count(*) FROM records INDEXED BY records_anchor_state WHERE anchor_state = '${s}') AS ${s}`)
    .join(", ")}`,
  postgres: `SELECT ${["pending", "accepted", "anchored", "abandoned"].map((s) => `(SELECT count(*) FROM records WHERE anchor_state = '${s}')::float8 AS ${s}`).join(", ")}`,
});
