/**
 * Statements written for each engine (store.ts, `Statement`; one `sql` text when the two differ
 * only in their parameters' spelling): only for paths where building the
 * query with drizzle would cost more than running it. Each pair returns the same columns with the
 * same JavaScript types: on PostgreSQL a bigint read as a number is cast `::float8` (times in ms
 * are exact in a double), a boolean read as SQLite's 0/1 is cast `::int`.
 */
import type { CredentialRow } from "../keys/ports.ts";
import { PG_RECORD_COLUMNS, RECORD_COLUMNS, type RawRecordRow } from "./record-row.ts";
import { statement } from "./store.ts";

/** The change counter (schema.ts `change_counter`): what the in-memory caches are checked against. */
export const CHANGE_COUNTER = statement<{ value: number }, []>({
  name: "change counter",
  sqlite: "SELECT value FROM change_counter WHERE id = 1",
  postgres: "SELECT value::float8 AS value FROM change_counter WHERE id = 1",
});

export const API_KEY_WITH_ORG = statement<CredentialRow, [keyId: string]>({
  name: "API key with its organisation",
  sqlite: `SELECT k.key_id, k.environment, k.scopes, k.secret_digest, k.last_used_at, k.revoked_at, k.expires_at,
                  o.id AS org_id, o.name, o.api_access, o.addon, o.validated, o.suspended, o.domain, o.created_at, o.topic_id
             FROM api_keys k JOIN organisations o ON o.id = k.org_id
            WHERE k.key_id = ?`,
  postgres: `SELECT k.key_id, k.environment, k.scopes, k.secret_digest, k.last_used_at::float8 AS last_used_at, k.revoked_at::float8 AS revoked_at,
                    k.expires_at::float8 AS expires_at,
                    o.id AS org_id, o.name, o.api_access::int AS api_access, o.addon::int AS addon, o.validated::int AS validated,
                    o.suspended::int AS suspended, o.domain, o.created_at::float8 AS created_at, o.topic_id
               FROM api_keys k JOIN organisations o ON o.id = k.org_id
              WHERE k.key_id = $1`,
});

/** Records a key's last use at `at`, unless a use at or after `olderThan` is already recorded. */
export const TOUCH_API_KEY = statement<never, [at: number, keyId: string, olderThan: number]>({
  name: "API key last use",
  sql: "UPDATE api_keys SET last_used_at = ?1 WHERE key_id = ?2 AND (last_used_at IS NULL OR last_used_at < ?3)",
});

// ---- records (records/service.ts) -----------------------------------------------------------

const ACTIVE = "anchor_state <> 'abandoned' AND revoked_at IS NULL";

/** An organisation's active organisation-signed record for a hash (at most one: records_one_active). */
export const ACTIVE_ORG_RECORD = statement<RawRecordRow, [orgId: string, docHash: string]>({
  name: "active organisation record",
  sqlite: `SELECT ${RECORD_COLUMNS} FROM records WHERE org_id = ? AND doc_hash = ? AND signer_type = 'org' AND ${ACTIVE}`,
  postgres: `SELECT ${PG_RECORD_COLUMNS} FROM records WHERE org_id = $1 AND doc_hash = $2 AND signer_type = 'org' AND ${ACTIVE}`,
});

/** A person's active record for a hash. */
export const ACTIVE_PERSON_RECORD = statement<RawRecordRow, [orgId: string, docHash: string, personKey: Uint8Array]>({
  name: "active person record",
  sqlite: `SELECT ${RECORD_COLUMNS} FROM records WHERE org_id = ? AND doc_hash = ? AND signer_type = 'user' AND signer_fingerprint = ? AND ${ACTIVE}`,
  postgres: `SELECT ${PG_RECORD_COLUMNS} FROM records WHERE org_id = $1 AND doc_hash = $2 AND signer_type = 'user' AND signer_fingerprint = $3 AND ${ACTIVE}`,
});

/** A person's records, newest first, through the partial index `records_person`. */
export const PERSON_RECORDS = statement<RawRecordRow, [personKey: Uint8Array, limit: number]>({
  name: "person's records",
  sqlite: `SELECT ${RECORD_COLUMNS} FROM records
  WHERE signer_type = 'user' AND signer_fingerprint = ? AND anchor_state <> 'abandoned'
  ORDER BY id DESC LIMIT ?`,
  postgres: `SELECT ${PG_RECORD_COLUMNS} FROM records
  WHERE signer_type = 'user' AND signer_fingerprint = $1 AND anchor_state <> 'abandoned'
  ORDER BY id DESC LIMIT $2`,
});

/** A record by id. */
export const RECORD_BY_ID = statement<RawRecordRow, [recordId: string]>({
  name: "record by id",
  sqlite: `SELECT ${RECORD_COLUMNS} FROM records WHERE id = ?`,
  postgres: `SELECT ${PG_RECORD_COLUMNS} FROM records WHERE id = $1`,
});

/** What creating a record needs of its organisation. */
export const ORG_FOR_CREATE = statement<{ topic_id: string | null; system_key_fingerprint: Uint8Array; suspended: number }, [orgId: string]>({
  name: "organisation for a new record",
  sqlite: "SELECT topic_id, system_key_fingerprint, suspended FROM organisations WHERE id = ?",
  postgres: "SELECT topic_id, system_key_fingerprint, suspended::int AS suspended FROM organisations WHERE id = $1",
});

/** Whether an organisation is suspended, read again under the write lock before a record is written. */
export const ORG_SUSPENDED = statement<{ suspended: number }, [orgId: string]>({
  name: "organisation suspended",
  sqlite: "SELECT suspended FROM organisations WHERE id = ?",
  postgres: "SELECT suspended::int AS suspended FROM organisations WHERE id = $1",
});

/**
 * An organisation's current system key, read again in the write of an organisation-signed record:
 * a record signed with a key a rotation has replaced meanwhile is signed again with the new one
 * (docs/signing.md "Key lifecycle"). On PostgreSQL the row is locked FOR SHARE, so the rotation's
 * update waits for this write to commit (its message is then seen by the announcement's wait) or
 * this read waits for the rotation and sees the new key; on SQLite the write lock orders the two.
 */
export const ORG_SIGNING_KEY = statement<{ system_key_fingerprint: Uint8Array }, [orgId: string]>({
  name: "organisation signing key",
  sqlite: "SELECT system_key_fingerprint FROM organisations WHERE id = ?",
  postgres: "SELECT system_key_fingerprint FROM organisations WHERE id = $1 FOR SHARE",
});

/**
 * The seal key `service_meta` names (records/seal-key.ts `SEAL_KEY_META`), read again in the write
 * of every record: a record sealed with a key a seal rotation has replaced meanwhile is sealed
 * again with the new one. On PostgreSQL under a share lock, so that the rotation's update of the
 * row waits for the record's commit (or the record reads the new key).
 */
export const CURRENT_SEAL_KEY = statement<{ value: string }, []>({
  name: "current seal key",
  sqlite: "SELECT value FROM service_meta WHERE key = 'seal_key_fingerprint'",
  postgres: "SELECT value FROM service_meta WHERE key = 'seal_key_fingerprint' FOR SHARE",
});

/**
 * Inserts a new record unless an active one for its organisation (or person) and hash exists by
 * now (records_one_active): it then changes no row, and nothing was written.
 */
export const INSERT_RECORD = statement<
  never,
  [
    id: string,
    orgId: string,
    signerType: string,
    kind: string,
    signerHint: string | null,
    docHash: string,
    filename: string | null,
    signedAtMs: number,
    signerFingerprint: Uint8Array,
    signature: Uint8Array,
    sealFingerprint: Uint8Array,
    sealSignature: Uint8Array,
    anchorState: string,
    topicId: string,
    transactionId: string,
    createdAt: number,
  ]
>({
  name: "new record",
  sql: `INSERT INTO records (id, org_id, signer_type, kind, signer_hint, doc_hash, filename, signed_at_ms, signer_fingerprint, signature,
       seal_fingerprint, seal_signature, anchor_state, topic_id, transaction_id, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
});

/**
 * A message's `pending` row (anchoring/queue.ts `pendingValues`), as the drizzle insert wrote it:
 * every column but those that start null (the sequence number, consensus time, running hash and
 * last error). A statement prepared once: building and preparing the insert for each record was a
 * tenth of record creation's main thread (docs/benchmarks.md "Record creation").
 */
export const INSERT_PENDING_MESSAGE = statement<
  never,
  [
    transactionId: string,
    kind: string,
    orgId: string,
    recordId: string | null,
    topicId: string | null,
    message: Uint8Array | null,
    keyFingerprint: Uint8Array | null,
    signedBytes: Uint8Array | null,
    validStartMs: number,
    validSeconds: number,
    state: string,
    attempts: number,
    nextAttemptAt: number,
    createdAt: number,
    updatedAt: number,
    batchLeaf: number,
    batchTransactionId: string | null,
  ]
>({
  name: "new pending ledger message",
  sql: `INSERT INTO ledger_transactions (transaction_id, kind, org_id, record_id, topic_id, message, key_fingerprint, signed_bytes, valid_start_ms,
       valid_seconds, state, attempts, next_attempt_at, created_at, updated_at, batch_leaf, batch_transaction_id)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
});

// ---- batches (anchoring/queue.ts `pendingMessage`, docs/anchoring.md "Batches") ---------------------

/**
 * A record message joins its organisation's open batch for its signer key and seal key, while
 * that batch has room and its window has not ended: the batch's leaf count, raised under its
 * row's lock (a close waits for the join to commit, and a join after the close finds the batch no
 * longer open). The batch's id, or none. On PostgreSQL a batch another write is joining (its row
 * locked) is passed over (SKIP LOCKED): concurrent writes of one organisation then open batches
 * of their own rather than wait for each other's commit. Parameters (numbered): ?1 organisation,
 * ?2 signer key, ?3 seal key, ?4 the most leaves, ?5 now.
 */
const joinOpenBatch = (engine: "sqlite" | "postgres", match: string, max: number, now: number): string => {
  const p = (n: number) => (engine === "sqlite" ? `?${n}` : `$${n}`);
  return `UPDATE ledger_transactions SET batch_size = batch_size + 1
     WHERE transaction_id = (SELECT transaction_id FROM ledger_transactions
                             WHERE state = 'open' AND org_id = ${p(1)} AND ${match} AND batch_size < ${p(max)} AND next_attempt_at > ${p(now)}
                             ORDER BY created_at LIMIT 1${engine === "postgres" ? " FOR UPDATE SKIP LOCKED" : ""})
       AND state = 'open' AND batch_size < ${p(max)}
     RETURNING transaction_id`;
};

export const JOIN_OPEN_BATCH = statement<{ transaction_id: string }, [orgId: string, keyFingerprint: Uint8Array, sealFingerprint: Uint8Array, max: number, now: number]>({
  name: "join an open batch",
  sqlite: joinOpenBatch("sqlite", "key_fingerprint = ?2 AND seal_fingerprint = ?3", 4, 5),
  postgres: joinOpenBatch("postgres", "key_fingerprint = $2 AND seal_fingerprint = $3", 4, 5),
});

/** The same for a revocation: its organisation's open batch of revocations (no key, no seal key). Parameters: ?1 organisation, ?2 the most leaves, ?3 now. */
export const JOIN_OPEN_REVOCATION_BATCH = statement<{ transaction_id: string }, [orgId: string, max: number, now: number]>({
  name: "join an open batch of revocations",
  sqlite: joinOpenBatch("sqlite", "key_fingerprint IS NULL AND seal_fingerprint IS NULL", 2, 3),
  postgres: joinOpenBatch("postgres", "key_fingerprint IS NULL AND seal_fingerprint IS NULL", 2, 3),
});

/** A new open batch with its first leaf counted: its window ends at `next_attempt_at`. */
export const INSERT_OPEN_BATCH = statement<
  never,
  [
    transactionId: string,
    orgId: string,
    topicId: string,
    keyFingerprint: Uint8Array | null,
    sealFingerprint: Uint8Array | null,
    validStartMs: number,
    validSeconds: number,
    closesAt: number,
    createdAt: number,
    updatedAt: number,
  ]
>({
  name: "new open batch",
  sql: `INSERT INTO ledger_transactions (transaction_id, kind, org_id, record_id, topic_id, message, key_fingerprint, seal_fingerprint, signed_bytes,
       valid_start_ms, valid_seconds, state, attempts, next_attempt_at, created_at, updated_at, batch_leaf, batch_size, announcement_generation)
     VALUES (?, 'batch_message', ?, NULL, ?, NULL, ?, ?, NULL, ?, ?, 'open', 0, ?, ?, ?, 0, 1, 0)`,
});

/** The record now carries its batch's transaction (it carried its leaf's). Parameters: batch, record, leaf. */
export const RECORD_TO_BATCH = statement<never, [batchId: string, recordId: string, leafId: string]>({
  name: "record to its batch",
  sql: "UPDATE records SET transaction_id = ? WHERE id = ? AND transaction_id = ?",
});

/** The same for a revocation's transaction. */
export const REVOCATION_TO_BATCH = statement<never, [batchId: string, recordId: string, leafId: string]>({
  name: "revocation to its batch",
  sql: "UPDATE records SET revocation_transaction_id = ? WHERE id = ? AND revocation_transaction_id = ?",
});

// ---- the person application (persons/service.ts) ------------------------------------------------

/** Takes a WebAuthn challenge for good: one row changed means this answer was the first to use it. */
export const TAKE_CHALLENGE = statement<never, [challenge: string]>({
  name: "take a challenge",
  sql: "DELETE FROM app_challenges WHERE challenge = ?",
});

/** A passkey's signature counter and last use, after an accepted assertion. */
export const PASSKEY_USED = statement<never, [counter: number, at: number, credentialId: string]>({
  name: "passkey used",
  sql: "UPDATE passkeys SET counter = ?, last_used_at = ? WHERE credential_id = ?",
});

/** Challenges past their expiry, deleted on the way to issuing a new one. */
export const DELETE_EXPIRED_CHALLENGES = statement<never, [now: number]>({
  name: "expired challenges",
  sql: "DELETE FROM app_challenges WHERE expires_at < ?",
});

/** Of one subject's live challenges, only the newest `keep` stay. */
export const TRIM_SUBJECT_CHALLENGES = statement<never, [purpose: string, subject: string, keep: number]>({
  name: "trim a subject's challenges",
  sql: `DELETE FROM app_challenges WHERE purpose = ?1 AND subject = ?2 AND challenge NOT IN (
       SELECT challenge FROM app_challenges WHERE purpose = ?1 AND subject = ?2 ORDER BY expires_at DESC LIMIT ?3)`,
});

export const INSERT_CHALLENGE = statement<never, [challenge: string, purpose: string, subject: string | null, payload: string | null, expiresAt: number]>({
  name: "new challenge",
  sql: "INSERT INTO app_challenges (challenge, purpose, subject, payload, expires_at) VALUES (?, ?, ?, ?, ?)",
});

export const CHALLENGE_BY_VALUE = statement<{ purpose: string; subject: string | null; payload: string | null; expires_at: number }, [challenge: string]>({
  name: "challenge",
  sqlite: "SELECT purpose, subject, payload, expires_at FROM app_challenges WHERE challenge = ?",
  postgres: "SELECT purpose, subject, payload, expires_at::float8 AS expires_at FROM app_challenges WHERE challenge = $1",
});

export interface PasskeyRow {
  credential_id: string;
  person_id: string;
  public_key: Uint8Array;
  counter: number;
  transports: string | null;
}

export const PASSKEY_BY_ID = statement<PasskeyRow, [credentialId: string]>({
  name: "passkey",
  sqlite: "SELECT credential_id, person_id, public_key, counter, transports FROM passkeys WHERE credential_id = ?",
  postgres: "SELECT credential_id, person_id, public_key, counter::float8 AS counter, transports FROM passkeys WHERE credential_id = $1",
});

export const PASSKEYS_OF_PERSON = statement<PasskeyRow, [personId: string]>({
  name: "a person's passkeys",
  sqlite: "SELECT credential_id, person_id, public_key, counter, transports FROM passkeys WHERE person_id = ? ORDER BY created_at",
  postgres: "SELECT credential_id, person_id, public_key, counter::float8 AS counter, transports FROM passkeys WHERE person_id = $1 ORDER BY created_at",
});

/** `key_compromised`: 1 when the person's key was declared compromised (persons/person-keys.ts). */
export const SIGNED_IN_PERSON = statement<
  { id: string; name: string; org_id: string; suspended: number; key_fingerprint: Uint8Array | null; organisation: string; key_compromised: number },
  [personId: string]
>({
  name: "signed-in person",
  sqlite: `SELECT p.id, p.name, p.org_id, p.suspended, p.key_fingerprint, o.name AS organisation,
              EXISTS (SELECT 1 FROM signing_keys k WHERE k.fingerprint = p.key_fingerprint AND k.compromised_at IS NOT NULL) AS key_compromised
       FROM persons p JOIN organisations o ON o.id = p.org_id WHERE p.id = ?`,
  postgres: `SELECT p.id, p.name, p.org_id, p.suspended::int AS suspended, p.key_fingerprint, o.name AS organisation,
              EXISTS (SELECT 1 FROM signing_keys k WHERE k.fingerprint = p.key_fingerprint AND k.compromised_at IS NOT NULL)::int AS key_compromised
       FROM persons p JOIN organisations o ON o.id = p.org_id WHERE p.id = $1`,
});

export const ORG_SIGNING = statement<{ suspended: number; addon: number; topic_id: string | null; domain: string | null }, [orgId: string]>({
  name: "organisation for signing",
  sqlite: "SELECT suspended, addon, topic_id, domain FROM organisations WHERE id = ?",
  postgres: "SELECT suspended::int AS suspended, addon::int AS addon, topic_id, domain FROM organisations WHERE id = $1",
});

export const SESSION_BY_DIGEST = statement<{ person_id: string; last_seen_at: number }, [digest: Uint8Array, seenAfter: number]>({
  name: "session",
  sqlite: "SELECT person_id, last_seen_at FROM app_sessions WHERE token_digest = ? AND last_seen_at > ?",
  postgres: "SELECT person_id, last_seen_at::float8 AS last_seen_at FROM app_sessions WHERE token_digest = $1 AND last_seen_at > $2",
});

export const TOUCH_SESSION = statement<never, [at: number, digest: Uint8Array]>({
  name: "session used",
  sql: "UPDATE app_sessions SET last_seen_at = ? WHERE token_digest = ?",
});

export const DELETE_IDLE_SESSIONS = statement<never, [seenBefore: number]>({
  name: "idle sessions",
  sql: "DELETE FROM app_sessions WHERE last_seen_at <= ?",
});

export const INSERT_SESSION = statement<never, [digest: Uint8Array, personId: string, at: number]>({
  name: "new session",
  sql: "INSERT INTO app_sessions (token_digest, person_id, created_at, last_seen_at) VALUES (?1, ?2, ?3, ?3)",
});

export const DELETE_SESSION = statement<never, [digest: Uint8Array]>({
  name: "end a session",
  sql: "DELETE FROM app_sessions WHERE token_digest = ?",
});

// ---- the verification log (verification/retention.ts) ---------------------------------------

/**
 * Up to `limit` log rows verified before `floor` (a UUIDv7 id: ids sort by time), oldest first,
 * deleted through the primary key's index.
 */
export const DELETE_EXPIRED_LOG_ROWS = statement<never, [floor: string, limit: number]>({
  name: "expired log rows",
  sqlite: "DELETE FROM verifications WHERE rowid IN (SELECT rowid FROM verifications WHERE id < ?1 ORDER BY id LIMIT ?2)",
  postgres: "DELETE FROM verifications WHERE id IN (SELECT id FROM verifications WHERE id < $1 ORDER BY id LIMIT $2)",
});

// ---- the identity document (receipts/identity.ts) -------------------------------------------

/**
 * Every organisation with a topic, by name in the binary order of its UTF-8 bytes, then id: the
 * same order on both engines (PostgreSQL's `COLLATE "C"`, SQLite's default BINARY).
 */
export const ORGS_WITH_TOPIC = statement<{ id: string; name: string; domain: string | null; topic_id: string; system_key_fingerprint: Uint8Array }, []>({
  name: "organisations with a topic",
  sqlite: "SELECT id, name, domain, topic_id, system_key_fingerprint FROM organisations WHERE topic_id IS NOT NULL ORDER BY name, id",
  postgres: `SELECT id, name, domain, topic_id, system_key_fingerprint FROM organisations WHERE topic_id IS NOT NULL ORDER BY name COLLATE "C", id COLLATE "C"`,
});

export const SEAL_KEYS = statement<{ fingerprint: Uint8Array; algorithm: string }, []>({
  name: "seal keys",
  sql: "SELECT fingerprint, algorithm FROM signing_keys WHERE purpose = 'service-seal' ORDER BY created_at, fingerprint",
});
