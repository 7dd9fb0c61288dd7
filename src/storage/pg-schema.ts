/**
 * The same tables for PostgreSQL (docs/storage.md "One schema, kept in step"), in drizzle's
 * `pg-core`. This file follows schema.ts table for table, column for column and index for index,
 * under the same names, so that code written over one runs over the other;
 * test/storage/schema-lockstep.test.ts fails on any difference. Comments on what each table is for
 * live in schema.ts; only what differs is said here.
 *
 * Types, one rule each:
 * - SQLite `integer` (times in ms since the epoch, counters, sequence numbers) is `bigint` read
 *   as a JavaScript number: a time in ms does not fit PostgreSQL's 32-bit `integer`. The batch
 *   columns (a leaf's flag and index, a batch's sequence and size) are small: `integer`.
 * - SQLite `integer` in boolean mode is `boolean`.
 * - SQLite `blob` is `bytea`, read as a Buffer, as bun:sqlite reads a blob.
 * - The audit log's autoincrementing id is a `bigserial`.
 *
 * `drizzle-kit generate --config drizzle.pg.config.ts` writes migrations/pg/ from this file.
 */
import { sql } from "drizzle-orm";
import { bigint, bigserial, boolean, customType, index, integer, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";

/** `bytea`, as a Buffer both ways (drizzle 0.45's pg-core has no bytea column of its own). */
const bytes = customType<{ data: Buffer; driverData: Buffer }>({
  dataType() {
    return "bytea";
  },
  fromDriver(value) {
    return Buffer.isBuffer(value) ? value : Buffer.from(value as Uint8Array);
  },
});

export const serviceMeta = pgTable("service_meta", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});

export const signingKeys = pgTable("signing_keys", {
  fingerprint: bytes("fingerprint").primaryKey(),
  algorithm: text("algorithm").notNull(),
  publicKey: bytes("public_key").notNull(),
  purpose: text("purpose").notNull(),
  sealedSeed: bytes("sealed_seed"),
  createdAt: bigint("created_at", { mode: "number" }).notNull(),
  replaces: bytes("replaces"),
  retiredAt: bigint("retired_at", { mode: "number" }),
  compromisedSince: bigint("compromised_since", { mode: "number" }),
  compromisedAt: bigint("compromised_at", { mode: "number" }),
});

export const changeCounter = pgTable("change_counter", {
  id: bigint("id", { mode: "number" }).primaryKey(),
  value: bigint("value", { mode: "number" }).notNull(),
});

export const organisations = pgTable(
  "organisations",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    apiAccess: boolean("api_access").notNull().default(false),
    addon: boolean("addon").notNull().default(false),
    validated: boolean("validated").notNull().default(false),
    suspended: boolean("suspended").notNull().default(false),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    systemKeyFingerprint: bytes("system_key_fingerprint").notNull(),
    topicId: text("topic_id"),
    domain: text("domain"),
    announcementGeneration: bigint("announcement_generation", { mode: "number" }).notNull().default(0),
    nameKey: text("name_key"),
  },
  (t) => [uniqueIndex("organisations_name_key").on(t.nameKey)],
);

export const apiKeys = pgTable(
  "api_keys",
  {
    keyId: text("key_id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organisations.id),
    environment: text("environment", { enum: ["live", "test"] }).notNull(),
    scopes: text("scopes").notNull(),
    secretDigest: bytes("secret_digest").notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    lastUsedAt: bigint("last_used_at", { mode: "number" }),
    revokedAt: bigint("revoked_at", { mode: "number" }),
    expiresAt: bigint("expires_at", { mode: "number" }),
  },
  (t) => [index("api_keys_org").on(t.orgId)],
);

export const auditLog = pgTable("audit_log", {
  id: bigserial("id", { mode: "number" }).primaryKey(),
  at: bigint("at", { mode: "number" }).notNull(),
  actor: text("actor").notNull(),
  action: text("action").notNull(),
  subjectType: text("subject_type").notNull(),
  subjectId: text("subject_id").notNull(),
  before: text("before"),
  after: text("after"),
});

export const ledgerTransactions = pgTable(
  "ledger_transactions",
  {
    transactionId: text("transaction_id").primaryKey(),
    kind: text("kind", { enum: ["topic_create", "record_message", "revocation_message", "key_announcement", "key_compromise", "batch_message"] }).notNull(),
    orgId: text("org_id")
      .notNull()
      .references(() => organisations.id),
    recordId: text("record_id"),
    topicId: text("topic_id"),
    message: bytes("message"),
    keyFingerprint: bytes("key_fingerprint"),
    announcementGeneration: bigint("announcement_generation", { mode: "number" }).notNull().default(0),
    /** As schema.ts: a `key_announcement`'s seal key. */
    sealFingerprint: bytes("seal_fingerprint"),
    signedBytes: bytes("signed_bytes"),
    validStartMs: bigint("valid_start_ms", { mode: "number" }).notNull(),
    validSeconds: bigint("valid_seconds", { mode: "number" }).notNull(),
    state: text("state", { enum: ["open", "pending", "accepted", "anchored", "abandoned"] }).notNull(),
    sequenceNumber: bigint("sequence_number", { mode: "number" }),
    consensusAt: text("consensus_at"),
    runningHash: bytes("running_hash"),
    attempts: bigint("attempts", { mode: "number" }).notNull().default(0),
    nextAttemptAt: bigint("next_attempt_at", { mode: "number" }).notNull(),
    lastError: text("last_error"),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
    /**
     * Batched anchoring (docs/anchoring.md "Batches"): 1 for a leaf, a record or revocation
     * message anchored as a leaf of a batch and never submitted itself; 0 for every other row,
     * and for every row written before batches (each sent as its own message).
     */
    batchLeaf: integer("batch_leaf").notNull().default(0),
    /** A leaf's batch: the `batch_message` row's transaction id; null while the leaf waits for one. */
    batchTransactionId: text("batch_transaction_id"),
    /** A leaf's index in its batch (RFC 9162 leaf order). */
    leafIndex: integer("leaf_index"),
    /** A leaf's inclusion proof in its batch: the path's node hashes, 32 bytes each, leaf to root. */
    inclusionPath: bytes("inclusion_path"),
    /** A `batch_message`'s batch sequence (its message's `batch`): unique per organisation. */
    batchSequence: integer("batch_sequence"),
    /** A `batch_message`'s number of leaves (its message's `size`). */
    batchSize: integer("batch_size"),
  },
  (t) => [
    // The loop's queue of rows it submits: every row but a batch's leaves.
    index("ledger_transactions_work").on(t.state, t.nextAttemptAt).where(sql`batch_leaf = 0`),
    // The open batches a record or revocation joins, by organisation, key and seal key.
    index("ledger_transactions_open").on(t.orgId, t.keyFingerprint, t.sealFingerprint).where(sql`state = 'open'`),
    // A batch's leaves.
    index("ledger_transactions_leaves").on(t.batchTransactionId, t.recordId).where(sql`batch_transaction_id IS NOT NULL`),
    // One batch per organisation and batch sequence.
    uniqueIndex("ledger_transactions_one_batch").on(t.orgId, t.batchSequence).where(sql`kind = 'batch_message'`),
    index("ledger_transactions_record").on(t.recordId),
    index("ledger_transactions_valid_start").on(t.validStartMs),
    uniqueIndex("ledger_transactions_one_topic").on(t.orgId).where(sql`kind = 'topic_create' AND state <> 'abandoned'`),
    uniqueIndex("ledger_transactions_one_announcement")
      .on(t.orgId, t.keyFingerprint, t.announcementGeneration)
      .where(sql`kind = 'key_announcement' AND state <> 'abandoned'`),
    uniqueIndex("ledger_transactions_one_compromise").on(t.keyFingerprint).where(sql`kind = 'key_compromise' AND state <> 'abandoned'`),
  ],
);

export const records = pgTable(
  "records",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").references(() => organisations.id),
    signerType: text("signer_type", { enum: ["org", "user"] }).notNull(),
    kind: text("kind").notNull(),
    signerHint: text("signer_hint"),
    docHash: text("doc_hash").notNull(),
    filename: text("filename"),
    signedAtMs: bigint("signed_at_ms", { mode: "number" }).notNull(),
    signerFingerprint: bytes("signer_fingerprint")
      .notNull()
      .references(() => signingKeys.fingerprint),
    signature: bytes("signature").notNull(),
    sealFingerprint: bytes("seal_fingerprint")
      .notNull()
      .references(() => signingKeys.fingerprint),
    sealSignature: bytes("seal_signature").notNull(),
    anchorState: text("anchor_state", { enum: ["pending", "accepted", "anchored", "abandoned"] }).notNull(),
    topicId: text("topic_id").notNull(),
    transactionId: text("transaction_id").notNull(),
    sequenceNumber: bigint("sequence_number", { mode: "number" }),
    consensusAt: text("consensus_at"),
    revokedAt: bigint("revoked_at", { mode: "number" }),
    revocationReason: text("revocation_reason"),
    revocationTransactionId: text("revocation_transaction_id"),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [
    // Covering, as in schema.ts: in PostgreSQL an index-only scan also needs the visibility map,
    // which autovacuum keeps current.
    index("records_doc_hash").on(
      t.docHash,
      t.id,
      t.orgId,
      t.signerType,
      t.kind,
      t.signerHint,
      t.signedAtMs,
      t.signerFingerprint,
      t.sealFingerprint,
      t.anchorState,
      t.topicId,
      t.transactionId,
      t.sequenceNumber,
      t.consensusAt,
      t.revokedAt,
      t.revocationReason,
      t.createdAt,
    ),
    index("records_anchor_state").on(t.anchorState),
    uniqueIndex("records_one_active")
      .on(t.orgId, t.docHash, sql`(CASE WHEN signer_type = 'user' THEN signer_fingerprint ELSE ''::bytea END)`)
      .where(sql`anchor_state <> 'abandoned' AND revoked_at IS NULL`),
    index("records_person").on(t.signerFingerprint, t.id).where(sql`signer_type = 'user'`),
    index("records_anchored_by_class")
      .on(t.docHash, sql`(CASE WHEN revoked_at IS NOT NULL THEN 2 WHEN signer_type = 'user' THEN 0 ELSE 1 END)`, sql`length(consensus_at)`, t.consensusAt, t.id, t.anchorState)
      .where(sql`anchor_state = 'anchored'`),
  ],
);

export const verifications = pgTable(
  "verifications",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organisations.id),
    environment: text("environment", { enum: ["live", "test"] }).notNull(),
    keyId: text("key_id").notNull(),
    verdict: text("verdict").notNull(),
    docHash: text("doc_hash").notNull(),
    reference: text("reference"),
    verifiedAtMs: bigint("verified_at_ms", { mode: "number" }).notNull(),
        retryAfterSeconds: bigint("retry_after_seconds", { mode: "number" }),
  },
  (t) => [
    index("verifications_scope").on(t.orgId, t.environment, t.id, t.verdict, t.docHash, t.verifiedAtMs, t.reference),
    index("verifications_scope_verdict").on(t.orgId, t.environment, t.verdict, t.id),
    index("verifications_scope_hash").on(t.orgId, t.environment, t.docHash, t.id),
  ],
);

export const persons = pgTable(
  "persons",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organisations.id),
    name: text("name").notNull(),
    email: text("email").notNull(),
    identityEvidence: text("identity_evidence").notNull(),
    suspended: boolean("suspended").notNull().default(false),
    keyFingerprint: bytes("key_fingerprint").references(() => signingKeys.fingerprint),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    enrolledAt: bigint("enrolled_at", { mode: "number" }),
  },
  (t) => [
    index("persons_org").on(t.orgId),
    uniqueIndex("persons_key_fingerprint").on(t.keyFingerprint).where(sql`key_fingerprint IS NOT NULL`),
  ],
);

export const enrolments = pgTable(
  "enrolments",
  {
    tokenDigest: bytes("token_digest").primaryKey(),
    personId: text("person_id")
      .notNull()
      .references(() => persons.id),
    expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
    usedAt: bigint("used_at", { mode: "number" }),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [index("enrolments_person").on(t.personId)],
);

export const passkeys = pgTable(
  "passkeys",
  {
    credentialId: text("credential_id").primaryKey(),
    personId: text("person_id")
      .notNull()
      .references(() => persons.id),
    publicKey: bytes("public_key").notNull(),
    counter: bigint("counter", { mode: "number" }).notNull(),
    transports: text("transports"),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    lastUsedAt: bigint("last_used_at", { mode: "number" }),
  },
  (t) => [index("passkeys_person").on(t.personId)],
);

export const appChallenges = pgTable(
  "app_challenges",
  {
    challenge: text("challenge").primaryKey(),
    purpose: text("purpose", { enum: ["enrol", "session", "signature"] }).notNull(),
    subject: text("subject"),
    payload: text("payload"),
    expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
  },
  (t) => [
    index("app_challenges_expiry").on(t.expiresAt),
    index("app_challenges_subject").on(t.purpose, t.subject, t.expiresAt),
  ],
);

export const appSessions = pgTable(
  "app_sessions",
  {
    tokenDigest: bytes("token_digest").primaryKey(),
    personId: text("person_id")
      .notNull()
      .references(() => persons.id),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    lastSeenAt: bigint("last_seen_at", { mode: "number" }).notNull(),
  },
  (t) => [index("app_sessions_person").on(t.personId), index("app_sessions_last_seen").on(t.lastSeenAt)],
);
