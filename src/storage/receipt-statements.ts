/**
 * Statements written for each engine (store.ts, `Statement`) for receipts (the receipt drivers)
 * and the record counts of /metrics (records/counts.ts). As in statements.ts, both texts of a pair
 * return the same columns with the same JavaScript types: on PostgreSQL a bigint read as a number
 * is cast `::float8`.
 */
import type { ReceiptKeyRow, ReceiptLeafRow, ReceiptRecordRow, ReceiptTransactionRow } from "../receipts/ports.ts";
import { PG_RECORD_COLUMNS, RECORD_COLUMNS } from "./record-row.ts";
import { statement } from "./store.ts";

// ---- receipts (receipts/ports.ts: the rows; storage/{sqlite,postgres}/receipt-reads.ts run these) ----

const TX_COLUMNS = ["transaction_id", "topic_id", "message", "state", "sequence_number", "consensus_at", "running_hash", "created_at", "kind", "batch_size"] as const;
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

/** A record's leaf in its batch (through the index `ledger_transactions_leaves`). */
export const RECEIPT_LEAF = statement<ReceiptLeafRow, [batchTransactionId: string, recordId: string, kind: string]>({
  name: "receipt: a record's leaf in its batch",
  sql: "SELECT message, leaf_index, inclusion_path FROM ledger_transactions WHERE batch_transaction_id = ? AND record_id = ? AND kind = ?",
});

/**
 * Which of a key's live announcements a receipt carries (docs/receipts.md §1, "Which announcement
 * a receipt carries"): the announcement of the exact pair that signed and sealed the record (the
 * organisation's or person's key `key`, its message naming the seal key `seal`, 64 lowercase hex
 * digits), the latest anchored one before the record's message (sequence number `before`); on a
 * topic older than announcements, where none precedes it, the earliest anchored one after it;
 * while none is anchored, an unfinished one (its age sets the retry time). A key is announced
 * again when its organisation's domain or name changes, or when the seal key is rotated
 * (docs/anchoring.md "Key announcements"). The terms after org_id and key_fingerprint are the
 * partial index's own (ledger_transactions_one_announcement): one row per announcement
 * generation, a handful at most, found by it; the seal key is matched in the message's bytes,
 * which are compact JSON written by one encoder.
 */
const announcementOf = (engine: "sqlite" | "postgres", org: string, key: string, seal: string, before: string): string => {
  const sealPattern = `'"sealKeyFingerprint":"' || ${seal} || '"'`;
  const namesSeal = engine === "sqlite" ? `instr(x.message, CAST(${sealPattern} AS BLOB)) > 0` : `position(convert_to(${sealPattern}, 'UTF8') in x.message) > 0`;
  const preceding = `x.state = 'anchored' AND x.sequence_number < ${before}`;
  return `SELECT x.transaction_id FROM ledger_transactions x
    WHERE x.org_id = ${org} AND x.key_fingerprint = ${key} AND x.kind = 'key_announcement' AND x.state <> 'abandoned'
      AND ${namesSeal}
    ORDER BY CASE WHEN ${preceding} THEN 0 WHEN x.state = 'anchored' THEN 1 ELSE 2 END,
             CASE WHEN ${preceding} THEN -x.sequence_number ELSE x.sequence_number END NULLS LAST, x.created_at LIMIT 1`;
};

/** The announcement of a signer key with a seal key a receipt carries (announcementOf). */
export const RECEIPT_ANNOUNCEMENT = statement<ReceiptTransactionRow, [orgId: string, keyFingerprint: Uint8Array, sealHex: string, beforeSequence: number | null]>({
  name: "receipt: key announcement",
  sqlite: `SELECT ${txColumns("sqlite", "t")} FROM ledger_transactions t WHERE t.transaction_id = (${announcementOf("sqlite", "?1", "?2", "?3", "?4")})`,
  postgres: `SELECT ${txColumns("postgres", "t")} FROM ledger_transactions t WHERE t.transaction_id = (${announcementOf("postgres", "$1", "$2", "$3::text", "$4::bigint")})`,
});

/**
 * A key's live compromise message (kind `key_compromise`; the partial unique index
 * ledger_transactions_one_compromise keeps one per key) with the key's declared `since`.
 */
const liveCompromise = (a: string) => `${a}.kind = 'key_compromise' AND ${a}.state <> 'abandoned'`;
export const RECEIPT_COMPROMISE = statement<ReceiptTransactionRow & { readonly since: number }, [keyFingerprint: Uint8Array]>({
  name: "receipt: key compromise",
  sqlite: `SELECT ${txColumns("sqlite", "t")}, sk.compromised_since AS since FROM ledger_transactions t JOIN signing_keys sk ON sk.fingerprint = t.key_fingerprint
            WHERE t.key_fingerprint = ? AND ${liveCompromise("t")} AND sk.compromised_since IS NOT NULL`,
  postgres: `SELECT ${txColumns("postgres", "t")}, sk.compromised_since::float8 AS since FROM ledger_transactions t JOIN signing_keys sk ON sk.fingerprint = t.key_fingerprint
            WHERE t.key_fingerprint = $1 AND ${liveCompromise("t")} AND sk.compromised_since IS NOT NULL`,
});

/**
 * An organisation's keys with their windows on its topic (`/.well-known/docverify.json` and
 * `docverify trust export`, docs/receipts.md §5): the system key and every key announced for the
 * organisation that could still land (persons' keys included), each with its first anchored
 * announcement on the topic (consensus time and sequence number), the first anchored announcement
 * of the key that replaced it (`signing_keys.replaces`), and its declared compromise's `since`.
 */
const keyWindows = (engine: "sqlite" | "postgres"): string => {
  const [org, topic, system] = engine === "sqlite" ? ["?1", "?2", "?3"] : ["$1", "$2", "$3"];
  const n = (column: string) => (engine === "postgres" ? `${column}::float8` : column);
  const first = (column: string, whose: string) =>
    `(SELECT ${column} FROM ledger_transactions a${whose === "k.fingerprint" ? "" : " JOIN signing_keys n ON n.fingerprint = a.key_fingerprint"}
       WHERE a.org_id = ${org} AND a.key_fingerprint = ${whose === "k.fingerprint" ? "k.fingerprint" : "n.fingerprint AND n.replaces = k.fingerprint"}
         AND a.kind = 'key_announcement' AND a.state = 'anchored' AND a.topic_id = ${topic}
       ORDER BY a.sequence_number LIMIT 1)`;
  return `SELECT k.fingerprint, k.algorithm, ${n("k.compromised_since")} AS compromised_since,
       ${first("a.consensus_at", "k.fingerprint")} AS announced_at,
       ${first(n("a.sequence_number"), "k.fingerprint")} AS sequence_number,
       ${first("a.consensus_at", "successor")} AS replaced_at,
       ${first(n("a.sequence_number"), "successor")} AS replaced_by_sequence_number
     FROM signing_keys k
     WHERE k.fingerprint = ${system}
        OR k.fingerprint IN (SELECT key_fingerprint FROM ledger_transactions WHERE org_id = ${org} AND kind = 'key_announcement' AND state <> 'abandoned')`;
};

export interface KeyWindowRow {
  readonly fingerprint: Uint8Array;
  readonly algorithm: string;
  readonly compromised_since: number | null;
  readonly announced_at: string | null;
  readonly sequence_number: number | null;
  readonly replaced_at: string | null;
  readonly replaced_by_sequence_number: number | null;
}

export const ORG_KEY_WINDOWS = statement<KeyWindowRow, [orgId: string, topicId: string, systemKey: Uint8Array]>({
  name: "an organisation's keys with their windows",
  sqlite: keyWindows("sqlite"),
  postgres: keyWindows("postgres"),
});

type Prefixed<P extends string, T> = { readonly [K in keyof T & string as `${P}${K}`]: T[K] | null };

/**
 * Everything one receipt is built from, in one row: the record with the change counter; its
 * creation message (`c_`), its key's announcement (`a_`), its revocation message (`v_`) and its
 * signer key's compromise message (`k_`), each all null when there is none; the record's leaves
 * in the creation's and the revocation's batches (`cl_`, `vl_`), null when not batched; the signer's and the seal key (`sk_`, `lk_`). One statement reads
 * one snapshot on PostgreSQL, so the receipt is as consistent as one read transaction makes it,
 * in one round trip.
 */
export type ReceiptSnapshotRow = ReceiptRecordRow &
  Prefixed<"c_", ReceiptTransactionRow> &
  Prefixed<"a_", ReceiptTransactionRow> &
  Prefixed<"v_", ReceiptTransactionRow> &
  Prefixed<"k_", ReceiptTransactionRow> & { readonly sk_compromised_since: number | null } &
  Prefixed<"cl_", ReceiptLeafRow> &
  Prefixed<"vl_", ReceiptLeafRow> &
  Prefixed<"sk_", ReceiptKeyRow> &
  Prefixed<"lk_", ReceiptKeyRow>;

const snapshot = (engine: "sqlite" | "postgres", p: (n: number) => string): string => `SELECT ${engine === "sqlite" ? recordAlias("r", RECORD_COLUMNS) : recordAlias("r", PG_RECORD_COLUMNS)},
       (SELECT ${engine === "sqlite" ? "value" : "value::float8"} FROM change_counter WHERE id = 1) AS gen,
       ${txColumns(engine, "c", "c_")},
       ${txColumns(engine, "a", "a_")},
       ${txColumns(engine, "v", "v_")},
       ${txColumns(engine, "k", "k_")},
       sk.algorithm AS sk_algorithm, sk.public_key AS sk_public_key, sk.compromised_since${engine === "postgres" ? "::float8" : ""} AS sk_compromised_since,
       lk.algorithm AS lk_algorithm, lk.public_key AS lk_public_key,
       cl.message AS cl_message, cl.leaf_index AS cl_leaf_index, cl.inclusion_path AS cl_inclusion_path,
       vl.message AS vl_message, vl.leaf_index AS vl_leaf_index, vl.inclusion_path AS vl_inclusion_path
  FROM records r
  LEFT JOIN ledger_transactions c ON c.transaction_id = r.transaction_id
  LEFT JOIN ledger_transactions a ON a.transaction_id = (${announcementOf(engine, "r.org_id", "r.signer_fingerprint", engine === "sqlite" ? "lower(hex(r.seal_fingerprint))" : "encode(r.seal_fingerprint, 'hex')", "c.sequence_number")})
  LEFT JOIN ledger_transactions v ON v.transaction_id = r.revocation_transaction_id
  LEFT JOIN ledger_transactions k ON k.key_fingerprint = r.signer_fingerprint AND ${liveCompromise("k")}
  LEFT JOIN signing_keys sk ON sk.fingerprint = r.signer_fingerprint
  LEFT JOIN signing_keys lk ON lk.fingerprint = r.seal_fingerprint
  LEFT JOIN ledger_transactions cl ON cl.batch_transaction_id = r.transaction_id AND cl.record_id = r.id AND cl.kind = 'record_message'
  LEFT JOIN ledger_transactions vl ON vl.batch_transaction_id = r.revocation_transaction_id AND vl.record_id = r.id AND vl.kind = 'revocation_message'
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
