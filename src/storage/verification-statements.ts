/**
 * The SQL of verification and of the verification log (src/verification/), written for each engine
 * (store.ts, `Statement`): the one place their dialect-specific text lives. Each pair returns the
 * same columns with the same JavaScript types; on PostgreSQL a bigint read as a number is cast
 * `::float8`, a boolean read as SQLite's 0/1 `::int`.
 *
 * Order. SQLite compares text by its bytes (BINARY). PostgreSQL compares it by the column's
 * collation, which is the database's default, often a linguistic one (the test databases use ICU
 * en-US): so wherever text order decides what is read (consensus order, the log's keyset pages),
 * the PostgreSQL text says `COLLATE "C"` (byte order in a UTF-8 database) and `NULLS FIRST` (SQLite
 * puts NULL first in ascending order), so that both engines, and every node, read the same rows.
 *
 * Sets of values (the keys, organisations and persons a verification needs) are passed as one JSON
 * array text, which both engines take as a plain text parameter: `json_each` on SQLite,
 * `jsonb_array_elements_text` on PostgreSQL; blobs as lower-case hex.
 *
 * The SQLite driver (sqlite/verification-reads.ts) prepares the `.sqlite` texts on the connection
 * itself, the hot path; the PostgreSQL driver (postgres/verification-reads.ts) runs the `.postgres`
 * texts through the store. The rows' types are verification's (verification/ports.ts).
 */
import type { LogRow, LogSummaryRow } from "../verification/log/ports.ts";
import type { PostgresStore } from "./pg-store.ts";
import { PG_RECORD_COLUMNS, recordColumns, type RecordColumn } from "./record-row.ts";
import { statement, type Op, type SqliteStore, type Statement, type Store } from "./store.ts";
import type { HashRow, HeadRow, RowKey, VerifyRow } from "../verification/ports.ts";

// ---- records, as verification reads them ------------------------------------------------------

/** Most matches a verification returns (docs/verification.md "Bounded cost per hash"); the earliest by consensus. */
export const MAX_MATCHES = 100;

/**
 * What verification never reads of a record: the filename (the verify page's, never part of a
 * verification answer) and the revocation's ledger transaction. Not read, not allocated per row
 * (verification/ports.ts `VerifyRow` is a row without them).
 */
const NOT_READ = ["filename", "revocation_transaction_id"] as const satisfies readonly RecordColumn[];
const NOT_READ_IN_HEADS = [...NOT_READ, "signature", "seal_signature"] as const satisfies readonly RecordColumn[];

/** `PG_RECORD_COLUMNS` without some: each PostgreSQL select item, by the column it reads. */
const PG_ITEMS = new Map(PG_RECORD_COLUMNS.split(", ").map((item) => [item.includes(" AS ") ? item.slice(item.lastIndexOf(" ") + 1) : item, item]));
function pgRecordColumns(omit: readonly RecordColumn[]): string {
  return recordColumns({ omit })
    .split(", ")
    .map((name) => PG_ITEMS.get(name)!)
    .join(", ");
}

const SQLITE_COLUMNS = recordColumns({ omit: NOT_READ });
const PG_COLUMNS = pgRecordColumns(NOT_READ);

/** The change counter (migration 0010) as a scalar subquery: read in the same statement as the rows. */
const SQLITE_COUNTER = "(SELECT value FROM change_counter WHERE id = 1)";
const PG_COUNTER = "(SELECT value::float8 FROM change_counter WHERE id = 1)";

/**
 * Every record of a hash, in any state, but never more than `MAX_MATCHES` + 1: for all but the
 * largest hashes this one indexed read is the whole answer (a test checks the plan). A full
 * result means there may be more, and the hash is read class by class (`CLASS_HEAD`) instead.
 */
export const RECORDS_BY_HASH = statement<HashRow, [docHash: string]>({
  name: "records of a hash",
  sqlite: `SELECT rowid AS rid, ${SQLITE_COLUMNS}, ${SQLITE_COUNTER} AS gen FROM records WHERE doc_hash = ? LIMIT ${MAX_MATCHES + 1}`,
  postgres: `SELECT id AS rid, ${PG_COLUMNS}, ${PG_COUNTER} AS gen FROM records WHERE doc_hash = $1 LIMIT ${MAX_MATCHES + 1}`,
});

/**
 * The same read without the two signature columns (6.6 KB of a 7 KB row): what a verification
 * needs when the record memo holds every anchored record's checks.
 */
export const RECORD_HEADS_BY_HASH = statement<HeadRow, [docHash: string]>({
  name: "record heads of a hash",
  sqlite: `SELECT rowid AS rid, ${recordColumns({ omit: NOT_READ_IN_HEADS })}, ${SQLITE_COUNTER} AS gen FROM records WHERE doc_hash = ? LIMIT ${MAX_MATCHES + 1}`,
  postgres: `SELECT id AS rid, ${pgRecordColumns(NOT_READ_IN_HEADS)}, ${PG_COUNTER} AS gen FROM records WHERE doc_hash = $1 LIMIT ${MAX_MATCHES + 1}`,
});

/**
 * Consensus order: `consensus_at` is `seconds.nanoseconds` with exactly nine nanosecond digits and
 * seconds without leading zeros, so a shorter text is an earlier instant and equal lengths compare
 * as text (the order of `compareConsensus`); ties by record id. A corrupt anchored row without
 * consensus time sorts first (NULL), so it is always met and refused. verification-large-hash.ts
 * `compareHeads` is the same order in JavaScript.
 */
export const CONSENSUS_ORDER = "length(consensus_at), consensus_at, id";
/** `CONSENSUS_ORDER` on PostgreSQL: bytes order and NULL first, whatever the database's collation. */
const PG_CONSENSUS_ORDER = `length(consensus_at) NULLS FIRST, consensus_at COLLATE "C" NULLS FIRST, id COLLATE "C"`;

/**
 * Verdict classes of rules 2–4: 0 active person-signed, 1 active organisation-signed, 2 revoked.
 * The index records_anchored_by_class (schema.ts) holds this very expression, and SQLite matches
 * an indexed expression only when it is written the same way.
 */
export const VERDICT_CLASS = "CASE WHEN revoked_at IS NOT NULL THEN 2 WHEN signer_type = 'user' THEN 0 ELSE 1 END";

/** A `CLASS_HEAD` row: where a record stands in consensus order, and its key. */
export interface ClassHeadRow {
  readonly rid: RowKey;
  readonly len: null | number | bigint | string | Uint8Array;
  readonly consensus_at: null | number | bigint | string | Uint8Array;
  readonly id: null | number | bigint | string | Uint8Array;
}

/**
 * A hash with more than `MAX_MATCHES` records, one verdict class (?2): the first `MAX_MATCHES` of
 * its anchored records in consensus order, as their key and order keys. On SQLite one range read
 * of the covering partial index records_anchored_by_class, already in order: no table row, no
 * sort (a test checks the plan); INDEXED BY, so that should the index ever not match the
 * statement, preparing it fails at startup rather than the read quietly becoming a scan.
 */
export const CLASS_HEAD = statement<ClassHeadRow, [docHash: string, verdictClass: number]>({
  name: "first records of a verdict class",
  sqlite: `SELECT rowid AS rid, length(consensus_at) AS len, consensus_at, id
    FROM records INDEXED BY records_anchored_by_class
   WHERE doc_hash = ?1 AND ${VERDICT_CLASS} = ?2 AND anchor_state = 'anchored'
   ORDER BY ${CONSENSUS_ORDER}
   LIMIT ${MAX_MATCHES}`,
  // Two index range reads, each already in order when the columns compare as bytes: the corrupt
  // rows without consensus time (first in SQLite's order), then the rest; at most 200 rows then put
  // in the one order. (`NULLS FIRST` on the index's own terms would make PostgreSQL sort every
  // entry of the class: its index keeps NULL last.)
  postgres: `SELECT rid, len, consensus_at, id FROM (
      (SELECT id AS rid, length(consensus_at) AS len, consensus_at, id FROM records
        WHERE doc_hash = $1 AND (${VERDICT_CLASS}) = $2 AND anchor_state = 'anchored' AND length(consensus_at) IS NULL
        ORDER BY id COLLATE "C" LIMIT ${MAX_MATCHES})
      UNION ALL
      (SELECT id AS rid, length(consensus_at) AS len, consensus_at, id FROM records
        WHERE doc_hash = $1 AND (${VERDICT_CLASS}) = $2 AND anchor_state = 'anchored' AND length(consensus_at) IS NOT NULL
        ORDER BY length(consensus_at), consensus_at COLLATE "C", id COLLATE "C" LIMIT ${MAX_MATCHES})
    ) heads
   ORDER BY ${PG_CONSENSUS_ORDER}
   LIMIT ${MAX_MATCHES}`,
});

/** SQLite only (PostgreSQL has no rowid): one record read whole, by the rowid its class head gave. */
export const SQLITE_RECORD_BY_ROWID = `SELECT ${SQLITE_COLUMNS} FROM records WHERE rowid = ?`;

/** Records read whole by id (a JSON array of ids), in no particular order. */
export const RECORDS_BY_IDS = statement<VerifyRow, [idsJson: string]>({
  name: "records by id",
  sqlite: `SELECT ${SQLITE_COLUMNS} FROM records WHERE id IN (SELECT value FROM json_each(?1))`,
  postgres: `SELECT ${PG_COLUMNS} FROM records WHERE id = ANY(ARRAY(SELECT jsonb_array_elements_text($1::text::jsonb)))`,
});

/** When the newest record of a hash awaiting consensus was stored (rule 5), or null. */
export const NEWEST_ACCEPTED = statement<{ newest: number | null }, [docHash: string]>({
  name: "newest accepted record of a hash",
  sqlite: "SELECT max(created_at) AS newest FROM records INDEXED BY records_doc_hash WHERE doc_hash = ? AND anchor_state = 'accepted'",
  postgres: "SELECT max(created_at)::float8 AS newest FROM records WHERE doc_hash = $1 AND anchor_state = 'accepted'",
});

/** The change counter alone, as a row even when its row is missing (value null). */
export const COUNTER_VALUE = statement<{ value: number | null }, []>({
  name: "change counter",
  sqlite: `SELECT ${SQLITE_COUNTER} AS value`,
  postgres: `SELECT ${PG_COUNTER} AS value`,
});

// ---- what checking and shaping a verification's records needs ---------------------------------

export const ORG_STANDING = statement<{ name: string; suspended: number }, [orgId: string]>({
  name: "organisation standing",
  sqlite: "SELECT name, suspended FROM organisations WHERE id = ?",
  postgres: "SELECT name, suspended::int AS suspended FROM organisations WHERE id = $1",
});

/**
 * A person-signed record's standing is its signer's (docs/verification.md "Disclosure tiers"), by
 * the key it was signed with: the person who holds it now, or whose key it was (purpose
 * `person:<id>`) before they re-enrolled with another.
 */
export const PERSON_SUSPENDED = statement<{ suspended: number }, [keyFingerprint: Uint8Array]>({
  name: "person standing",
  sqlite: `SELECT suspended FROM persons WHERE key_fingerprint = ?1
    UNION ALL SELECT p.suspended FROM signing_keys k JOIN persons p ON k.purpose = 'person:' || p.id WHERE k.fingerprint = ?1 LIMIT 1`,
  postgres: `SELECT suspended::int AS suspended FROM persons WHERE key_fingerprint = $1
    UNION ALL SELECT p.suspended::int FROM signing_keys k JOIN persons p ON k.purpose = 'person:' || p.id WHERE k.fingerprint = $1 LIMIT 1`,
});

/**
 * Every key declared compromised (docs/signing.md "Key lifecycle"): since when, when declared, and
 * the consensus time of its `key_compromise` message once anchored (null before). A scan of the
 * signing keys, read only when the change counter moved (verification/caches.ts); both a
 * declaration and the message's anchoring raise it.
 */
export const COMPROMISED_KEYS = statement<{ fingerprint: Uint8Array; since: number; declared_at: number; consensus_at: string | null }, []>({
  name: "compromised keys",
  sql: `SELECT k.fingerprint AS fingerprint, k.compromised_since AS since, k.compromised_at AS declared_at,
    (SELECT c.consensus_at FROM ledger_transactions c WHERE c.key_fingerprint = k.fingerprint AND c.kind = 'key_compromise' AND c.state = 'anchored' LIMIT 1) AS consensus_at
    FROM signing_keys k WHERE k.compromised_at IS NOT NULL AND k.compromised_since IS NOT NULL`,
});

export const KEY_BY_FINGERPRINT = statement<{ algorithm: string; public_key: Uint8Array }, [fingerprint: Uint8Array]>({
  name: "signing key",
  sql: "SELECT algorithm, public_key FROM signing_keys WHERE fingerprint = ?",
});

/**
 * In one read, what checking and shaping some records needs that is not in memory: signing keys
 * by fingerprint (`k`: `text` the algorithm, `bytes` the public key), organisations by id (`o`:
 * `text` the name), persons by any of their keys' fingerprints (`p`); `ref` is the fingerprint in lower-case hex
 * or the organisation's id. Each parameter is a JSON array: fingerprints in hex, ids as text.
 */
export interface ContextRow {
  readonly kind: "k" | "o" | "p";
  readonly ref: string;
  readonly text: string | null;
  readonly bytes: Uint8Array | null;
  readonly suspended: number | null;
}
export const VERIFY_CONTEXT = statement<ContextRow, [keysJson: string, orgsJson: string, personsJson: string]>({
  name: "keys and standing for a verification",
  sqlite: `SELECT 'k' AS kind, lower(hex(fingerprint)) AS ref, algorithm AS text, public_key AS bytes, NULL AS suspended
      FROM signing_keys WHERE fingerprint IN (SELECT unhex(value) FROM json_each(?1))
    UNION ALL
    SELECT 'o', id, name, NULL, suspended FROM organisations WHERE id IN (SELECT value FROM json_each(?2))
    UNION ALL
    SELECT 'p', lower(hex(key_fingerprint)), NULL, NULL, suspended FROM persons WHERE key_fingerprint IN (SELECT unhex(value) FROM json_each(?3))
    UNION
    SELECT 'p', lower(hex(k.fingerprint)), NULL, NULL, p.suspended FROM signing_keys k JOIN persons p ON k.purpose = 'person:' || p.id
     WHERE k.fingerprint IN (SELECT unhex(value) FROM json_each(?3))`,
  postgres: `SELECT 'k' AS kind, encode(fingerprint, 'hex') AS ref, algorithm AS text, public_key AS bytes, NULL::int AS suspended
      FROM signing_keys WHERE fingerprint = ANY(ARRAY(SELECT decode(jsonb_array_elements_text($1::text::jsonb), 'hex')))
    UNION ALL
    SELECT 'o', id, name, NULL::bytea, suspended::int FROM organisations WHERE id = ANY(ARRAY(SELECT jsonb_array_elements_text($2::text::jsonb)))
    UNION ALL
    SELECT 'p', encode(key_fingerprint, 'hex'), NULL, NULL::bytea, suspended::int FROM persons
     WHERE key_fingerprint = ANY(ARRAY(SELECT decode(jsonb_array_elements_text($3::text::jsonb), 'hex')))
    UNION
    SELECT 'p', encode(k.fingerprint, 'hex'), NULL, NULL::bytea, p.suspended::int FROM signing_keys k JOIN persons p ON k.purpose = 'person:' || p.id
     WHERE k.fingerprint = ANY(ARRAY(SELECT decode(jsonb_array_elements_text($3::text::jsonb), 'hex')))`,
});

// ---- the verification log ----------------------------------------------------------------------

/** The newest row's id (ids are UUIDv7: they sort by time, as bytes). */
export const NEWEST_LOG_ID = statement<{ id: string }, []>({
  name: "newest verification log id",
  sqlite: "SELECT id FROM verifications ORDER BY id DESC LIMIT 1",
  postgres: `SELECT id FROM verifications ORDER BY id COLLATE "C" DESC LIMIT 1`,
});

const LOG_COLUMNS = "id, org_id, environment, key_id, verdict, doc_hash, reference, verified_at_ms, retry_after_seconds";
const PG_LOG_COLUMNS = "id, org_id, environment, key_id, verdict, doc_hash, reference, verified_at_ms::float8 AS verified_at_ms, retry_after_seconds::float8 AS retry_after_seconds";

/** The single-row insert the SQLite log runs in its transaction (and its writer thread prepares). */
export const SQLITE_INSERT_LOG_ROW = `INSERT INTO verifications (${LOG_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`;
/** Values of a log row per insert, in `LOG_COLUMNS` order. */
export const LOG_ROW_VALUES = 9;

type LogValues = (string | number | null)[];
/**
 * One INSERT of `n` rows (`n` × `LOG_ROW_VALUES` values, row after row): a batch in one statement.
 * Built anew at each call: the driver that runs it keeps the ones it uses
 * (storage/postgres/log-store.ts).
 */
export function insertLogRows(n: number): Statement<never, LogValues> {
  const tuples = (p: (i: number) => string) =>
    Array.from({ length: n }, (_, r) => `(${Array.from({ length: LOG_ROW_VALUES }, (_, c) => p(r * LOG_ROW_VALUES + c + 1)).join(", ")})`).join(", ");
  return statement<never, LogValues>({
    name: `${n} verification log rows`,
    sqlite: `INSERT INTO verifications (${LOG_COLUMNS}) VALUES ${tuples((i) => `?${i}`)}`,
    postgres: `INSERT INTO verifications (${LOG_COLUMNS}) VALUES ${tuples((i) => `$${i}`)}`,
  });
}

// The filters a page query uses, as bits: one statement per combination. Measured, building the
// query with drizzle on every request cost several times the query itself.
export const HASH = 1, VERDICT = 2, FROM = 4, TO = 8, AFTER = 16;

/** Every combination of the filters: one more than the largest mask. */
const MASKS = (HASH | VERDICT | FROM | TO | AFTER) + 1;

/**
 * A page of the log for a combination of filters (bits above), newest first. Parameters in this
 * order: org, environment, [hash], [verdict], [id floor, from], [id ceiling, to], [after], limit.
 */
export function logPage(mask: number): Statement<LogSummaryRow, (string | number)[]> {
  return LOG_PAGES[mask]!;
}

/**
 * The ids alone of the page `logPage(mask)` reads, with the same parameters: each filter's index
 * holds them (`verifications_scope`, and `_hash`, `_verdict` for those filters), so no row is
 * read. The SQLite log answers from its memo of each row's JSON when it holds every id
 * (src/verification/log/kept-pages.ts).
 */
export function logPageIds(mask: number): Statement<{ id: string }, (string | number)[]> {
  return LOG_PAGE_IDS[mask]!;
}

function pageStatement<R>(mask: number, columns: "SUMMARY" | "IDS"): Statement<R, (string | number)[]> {
  const build = (param: (i: number) => string, idCmp: (op: string, p: string) => string, order: string, verifiedAt: string) => {
    let n = 0;
    const next = () => param(++n);
    const where = [`org_id = ${next()}`, `environment = ${next()}`];
    if (mask & HASH) where.push(`doc_hash = ${next()}`);
    if (mask & VERDICT) where.push(`verdict = ${next()}`);
    // A row's id carries its verifiedAt millisecond, so time bounds are also id bounds: the query
    // stays on the (org, environment[, hash], id) index.
    if (mask & FROM) where.push(idCmp(">=", next()), `verified_at_ms >= ${next()}`);
    if (mask & TO) where.push(idCmp("<=", next()), `verified_at_ms <= ${next()}`);
    if (mask & AFTER) where.push(idCmp("<", next()));
    // Only the columns a summary shows: without HASH or VERDICT the page is read from the covering
    // index verifications_scope alone (the query-plan test checks it on SQLite).
    const selected = columns === "IDS" ? "id" : `id, org_id, environment, verdict, doc_hash, reference, ${verifiedAt}`;
    return `SELECT ${selected} FROM verifications WHERE ${where.join(" AND ")} ORDER BY ${order} DESC LIMIT ${next()}`;
  };
  return statement<R, (string | number)[]>({
    name: `verification log page ${columns === "IDS" ? "ids " : ""}${mask}`,
    sqlite: build(
      () => "?",
      (op, p) => `id ${op} ${p}`,
      "id",
      "verified_at_ms",
    ),
    postgres: build(
      (i) => `$${i}`,
      (op, p) => `id COLLATE "C" ${op} ${p}`,
      `id COLLATE "C"`,
      "verified_at_ms::float8 AS verified_at_ms",
    ),
  });
}

/** Each combination's page and ids statements, built once when the module loads. */
const LOG_PAGES: readonly Statement<LogSummaryRow, (string | number)[]>[] = Array.from({ length: MASKS }, (_, mask) => pageStatement<LogSummaryRow>(mask, "SUMMARY"));
const LOG_PAGE_IDS: readonly Statement<{ id: string }, (string | number)[]>[] = Array.from({ length: MASKS }, (_, mask) => pageStatement<{ id: string }>(mask, "IDS"));

export const LOG_ROW_BY_ID = statement<LogRow, [id: string, orgId: string, environment: string]>({
  name: "verification log row",
  sqlite: `SELECT ${LOG_COLUMNS} FROM verifications WHERE id = ? AND org_id = ? AND environment = ?`,
  postgres: `SELECT ${PG_LOG_COLUMNS} FROM verifications WHERE id = $1 AND org_id = $2 AND environment = $3`,
});

// ---- one snapshot ------------------------------------------------------------------------------

/**
 * Runs a read-only operation made of statement steps as one snapshot: every statement sees the
 * same committed state. SQLite: one read transaction. PostgreSQL: one `REPEATABLE READ READ ONLY`
 * transaction, which neither fails on a concurrent write nor makes a writer fail (a SERIALIZABLE
 * one, `store.write`, could do both, and anyone may ask for a verification).
 */
export function readSnapshot<T>(store: Store, body: () => Op<T>): Promise<T> {
  if (store.engine === "sqlite") {
    const s = store as SqliteStore;
    try {
      return Promise.resolve(s.db.$client.transaction(() => s.readSync(body))());
    } catch (e) {
      return Promise.reject(e);
    }
  }
  return (store as PostgresStore).snapshot(body);
}
