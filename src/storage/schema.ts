/**
 * The product's tables, as drizzle schema. `drizzle-kit generate` turns changes here into SQL
 * migrations under `migrations/`; `npm run db:generate` also refreshes `migrations/index.ts`,
 * the module that embeds them in the binary. A test fails when the two are out of step.
 */
import { sql } from "drizzle-orm";
import { blob, index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/**
 * Facts about this installation that must survive restarts: its instance id and the
 * server-side secrets derived at first start (for example the key that authenticates
 * verification-log cursors). One row per key.
 */
export const serviceMeta = sqliteTable("service_meta", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});

/**
 * Every public key that has signed anything, and the sealed private half of the keys this
 * service holds. Append-only in practice: a record names its signer and seal keys by
 * fingerprint, so a key row must outlive every record it signed. `purpose` is bound into the
 * sealed seed (`org:<orgId>`, `service-seal`, `person:<id>`); `sealed_seed` is null for keys
 * whose private half the service never holds (a person's key).
 *
 * A key's life (docs/signing.md "Key lifecycle"): `replaces` names the key it took over from (a
 * rotation; null for an organisation's, a person's or the seal's first key), `retired_at` is when
 * a newer key replaced it, and `compromised_since` / `compromised_at` say that it was declared
 * compromised (at `compromised_at`) for every record it signed at or after `compromised_since`.
 */
export const signingKeys = sqliteTable("signing_keys", {
  fingerprint: blob("fingerprint", { mode: "buffer" }).primaryKey(),
  algorithm: text("algorithm").notNull(),
  publicKey: blob("public_key", { mode: "buffer" }).notNull(),
  purpose: text("purpose").notNull(),
  sealedSeed: blob("sealed_seed", { mode: "buffer" }),
  createdAt: integer("created_at").notNull(),
  replaces: blob("replaces", { mode: "buffer" }),
  retiredAt: integer("retired_at"),
  compromisedSince: integer("compromised_since"),
  compromisedAt: integer("compromised_at"),
});

/**
 * One row (id 1): a counter that triggers raise whenever something the service keeps in memory
 * between requests changes in the tables it was read from (docs/storage.md "Reads kept while the
 * database is unchanged (SQLite)"): the columns of `records`
 * that verification checks, any `signing_keys` row, `organisations`, an API key's credential
 * columns, a person's suspension or key. Every change, from this process or any other connection
 * (the admin command line, an operator's sqlite3), bumps it in the changing transaction itself;
 * the in-memory caches read it with their data and drop what was read under an older value.
 * The triggers are in migrations/0010 (drizzle schema cannot express triggers).
 */
export const changeCounter = sqliteTable("change_counter", {
  id: integer("id").primaryKey(),
  value: integer("value").notNull(),
});

/**
 * Organisations. Flags are 0/1 integers. `system_key_fingerprint` names the organisation's own
 * ML-DSA key in `signing_keys`. `topic_id` is set once the running service has created the
 * organisation's ledger topic. `domain` is the DNS name the administrator set for it (docs/admin.md
 * "The organisation's domain"; lowercase, validated by keys/organisations.ts), carried by its key
 * announcements.
 * `announcement_generation` rises by one in the transaction that changes what an announcement of
 * its key says (its domain or its name): the anchor loop then announces the key again, once per
 * generation (`ledger_transactions.announcement_generation`). Migration 0011; a rename raises it
 * since 0012.
 *
 * `name_key` is the name's comparison key (lib/name-key.ts: NFKC, then lowercased), unique: one
 * organisation per name on an appliance, whichever process or node creates or renames it. The
 * organisations service writes it with the name, in the same transaction. Nullable only for the
 * rows a release before migration 0012 wrote: storage/org-name-keys.ts fills them at start, after
 * the migrations, and gives a name held twice a key of its own (`KEY#ID`). Migration 0012.
 */
export const organisations = sqliteTable(
  "organisations",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    apiAccess: integer("api_access", { mode: "boolean" }).notNull().default(false),
    addon: integer("addon", { mode: "boolean" }).notNull().default(false),
    validated: integer("validated", { mode: "boolean" }).notNull().default(false),
    suspended: integer("suspended", { mode: "boolean" }).notNull().default(false),
    createdAt: integer("created_at").notNull(),
    // No foreign key: SQLite cannot add one to an existing table without rebuilding it, and a
    // rebuild under api_keys' foreign key cannot be done inside the migration transaction.
    // Organisation creation writes both rows in one transaction.
    systemKeyFingerprint: blob("system_key_fingerprint", { mode: "buffer" }).notNull(),
    topicId: text("topic_id"),
    domain: text("domain"),
    announcementGeneration: integer("announcement_generation").notNull().default(0),
    nameKey: text("name_key"),
  },
  (t) => [uniqueIndex("organisations_name_key").on(t.nameKey)],
);

/**
 * API keys (docs/access.md "Unusable credentials"): the key id in clear for lookup, the secret only
 * as a SHA-256 digest. `scopes` is a space-separated list fixed at minting. `last_used_at` is
 * written at most once a minute per key, so authentication does not turn every request into a
 * write.
 */
export const apiKeys = sqliteTable(
  "api_keys",
  {
    keyId: text("key_id").primaryKey(),
    orgId: text("org_id").notNull().references(() => organisations.id),
    environment: text("environment", { enum: ["live", "test"] }).notNull(),
    scopes: text("scopes").notNull(),
    secretDigest: blob("secret_digest", { mode: "buffer" }).notNull(),
    createdAt: integer("created_at").notNull(),
    lastUsedAt: integer("last_used_at"),
    revokedAt: integer("revoked_at"),
    /** When the key stops working (ms); null: never. */
    expiresAt: integer("expires_at"),
  },
  (t) => [index("api_keys_org").on(t.orgId)],
);

/**
 * Every administrative change, written in the same transaction as the change. Append-only:
 * triggers in the migration refuse UPDATE and DELETE.
 */
export const auditLog = sqliteTable("audit_log", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  at: integer("at").notNull(),
  actor: text("actor").notNull(),
  action: text("action").notNull(),
  subjectType: text("subject_type").notNull(),
  subjectId: text("subject_id").notNull(),
  before: text("before"),
  after: text("after"),
});

/**
 * Every transaction docverify submits to the ledger: topic creations and record / revocation
 * messages. The anchor loop's work queue and its crash journal (docs/anchoring.md): the
 * transaction id is chosen and stored before anything is submitted, `signed_bytes` is stored
 * before the first submission, and a restart re-submits those same bytes or asks for their
 * receipt, never a second transaction for the same purpose.
 *
 * `state`: `pending` (stored, not yet accepted by the ledger) → `accepted` (precheck passed) →
 * `anchored` (consensus; final), or `abandoned` (cannot reach consensus within its validity
 * window); a batch is `open` first. Times are ms since the epoch; `consensus_at` is the ledger's
 * `seconds.nanoseconds` text with nanoseconds zero-padded to 9 digits, so it sorts as text.
 *
 * Batches (docs/anchoring.md "Batches", migration 0015): `batch_leaf` is 1 for a leaf (a record or
 * revocation message, never submitted itself; 0 for every other row and every row written before
 * batches), `batch_transaction_id` its batch, `leaf_index` and `inclusion_path` (the path's node
 * hashes, 32 bytes each, leaf to root) its place once the batch is closed; a `batch_message` has
 * its `batch_sequence` (unique per organisation) and `batch_size` (its leaves).
 */
export const ledgerTransactions = sqliteTable(
  "ledger_transactions",
  {
    transactionId: text("transaction_id").primaryKey(),
    kind: text("kind", { enum: ["topic_create", "record_message", "revocation_message", "key_announcement", "key_compromise", "batch_message"] }).notNull(),
    orgId: text("org_id").notNull().references(() => organisations.id),
    recordId: text("record_id"),
    /** Null for a topic creation until its receipt names the new topic. */
    topicId: text("topic_id"),
    /** The message submitted (record, revocation and key-announcement messages). */
    message: blob("message", { mode: "buffer" }),
    /** A `key_announcement`'s key; a `record_message`'s or `batch_message`'s signer key, whose announcement it waits for (docs/signing.md §2). */
    keyFingerprint: blob("key_fingerprint", { mode: "buffer" }),
    /**
     * A `key_announcement`'s organisation's `announcement_generation` when it was built: a key is
     * announced again, once, for each generation (a changed domain or name). 0 for every other row.
     */
    announcementGeneration: integer("announcement_generation").notNull().default(0),
    /** A `key_announcement`'s seal key (`sealKeyFingerprint`); a `batch_message`'s records' seal key, whose pair's announcement it waits for. */
    sealFingerprint: blob("seal_fingerprint", { mode: "buffer" }),
    /** The signed transaction as submitted; stored before the first submission. */
    signedBytes: blob("signed_bytes", { mode: "buffer" }),
    validStartMs: integer("valid_start_ms").notNull(),
    validSeconds: integer("valid_seconds").notNull(),
    state: text("state", { enum: ["open", "pending", "accepted", "anchored", "abandoned"] }).notNull(),
    sequenceNumber: integer("sequence_number"),
    consensusAt: text("consensus_at"),
    runningHash: blob("running_hash", { mode: "buffer" }),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: integer("next_attempt_at").notNull(),
    lastError: text("last_error"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    batchLeaf: integer("batch_leaf").notNull().default(0),
    batchTransactionId: text("batch_transaction_id"),
    leafIndex: integer("leaf_index"),
    inclusionPath: blob("inclusion_path", { mode: "buffer" }),
    batchSequence: integer("batch_sequence"),
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
    // The anchor loop resumes its transaction-id sequence from the newest valid start at startup.
    index("ledger_transactions_valid_start").on(t.validStartMs),
    // One topic per organisation: a second topic creation can never be queued while one is live.
    uniqueIndex("ledger_transactions_one_topic").on(t.orgId).where(sql`kind = 'topic_create' AND state <> 'abandoned'`),
    // One key announcement per organisation, key and generation while it could land: exactly once (docs/anchoring.md).
    uniqueIndex("ledger_transactions_one_announcement").on(t.orgId, t.keyFingerprint, t.announcementGeneration).where(sql`kind = 'key_announcement' AND state <> 'abandoned'`),
    // One key-compromise message per key while it could still land: exactly once.
    uniqueIndex("ledger_transactions_one_compromise").on(t.keyFingerprint).where(sql`kind = 'key_compromise' AND state <> 'abandoned'`),
  ],
);

/**
 * Authenticated documents. Organisation-signed records (`signer_type` `org`, kind
 * `record_only`) are created by POST /v1/records; person-signed ones (`user`, `pdf_embedded`)
 * come from the application and carry `signer_hint`. The signed bytes are never stored: they are
 * rebuilt from `id`, `doc_hash`, `signed_at_ms` and `signer_fingerprint` on every verification
 * (docs/signing.md §3).
 *
 * The anchor columns mirror the ledger message (`transaction_id`: its batch's, or its own message
 * before batches) in `ledger_transactions`, written in the same transaction as that row's state. At most one active
 * record (neither abandoned nor revoked) per organisation and hash: the unique index is what
 * makes two concurrent first calls create exactly one record. Once revoked, the hash can be
 * authenticated again as a new record (idempotency holds only while the organisation holds an
 * active record for the hash: docs/records.md §1); both stay visible to verification.
 */
export const records = sqliteTable(
  "records",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").references(() => organisations.id),
    signerType: text("signer_type", { enum: ["org", "user"] }).notNull(),
    kind: text("kind").notNull(),
    signerHint: text("signer_hint"),
    docHash: text("doc_hash").notNull(),
    filename: text("filename"),
    signedAtMs: integer("signed_at_ms").notNull(),
    signerFingerprint: blob("signer_fingerprint", { mode: "buffer" })
      .notNull()
      .references(() => signingKeys.fingerprint),
    signature: blob("signature", { mode: "buffer" }).notNull(),
    sealFingerprint: blob("seal_fingerprint", { mode: "buffer" })
      .notNull()
      .references(() => signingKeys.fingerprint),
    sealSignature: blob("seal_signature", { mode: "buffer" }).notNull(),
    anchorState: text("anchor_state", { enum: ["pending", "accepted", "anchored", "abandoned"] }).notNull(),
    topicId: text("topic_id").notNull(),
    transactionId: text("transaction_id").notNull(),
    sequenceNumber: integer("sequence_number"),
    consensusAt: text("consensus_at"),
    revokedAt: integer("revoked_at"),
    revocationReason: text("revocation_reason"),
    revocationTransactionId: text("revocation_transaction_id"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    // Covering for verification's hot read (docs/verification.md "Checks"): every column a
    // verification shows or orders by, after the hash; only the two signatures (6.6 KB, read only
    // when the record memo cannot answer), the filename and the revocation's transaction are left
    // to the table row, whose tail columns would otherwise be read through its overflow pages.
    // Migration 0010.
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
    // /metrics counts records by anchor state at scrape time; without this index that count
    // reads the whole table (kilobytes of signatures per row: 3.4 s on a million records).
    index("records_anchor_state").on(t.anchorState),
    // One active record per organisation and hash among its own records, and one per person and
    // hash among each person's (docs/persons.md "Person-signed records"): a person's key is theirs
    // alone, so the third term is the signer key for person-signed records and the same empty blob
    // for all of the organisation's. Its first two terms serve the create path's lookup.
    uniqueIndex("records_one_active")
      .on(t.orgId, t.docHash, sql`(CASE WHEN signer_type = 'user' THEN signer_fingerprint ELSE x'' END)`)
      .where(sql`anchor_state <> 'abandoned' AND revoked_at IS NULL`),
    // Verification of a hash with more than 100 records (docs/verification.md, "Bounded cost per
    // hash"): per verdict class, its anchored records in consensus order, so the first 100 of each
    // are one index range read whatever the number of records. The expressions must stay exactly
    // those of `VERDICT_CLASS` and `CONSENSUS_ORDER` in verification-statements.ts, which names
    // this index (INDEXED BY: a statement that cannot use it fails to prepare rather than scan).
    // `anchor_state` is a column too, though the WHERE fixes it: SQLite counts an index as covering
    // only if it holds every column the statement names, and the statement must name the WHERE's
    // term to use a partial index; covering, the read never touches a table row.
    // A person's own records, newest first (GET /app/records): one index range, not a scan.
    index("records_person").on(t.signerFingerprint, t.id).where(sql`signer_type = 'user'`),
    index("records_anchored_by_class")
      .on(t.docHash, sql`(CASE WHEN revoked_at IS NOT NULL THEN 2 WHEN signer_type = 'user' THEN 0 ELSE 1 END)`, sql`length(consensus_at)`, t.consensusAt, t.id, t.anchorState)
      .where(sql`anchor_state = 'anchored'`),
  ],
);

/**
 * The verification log (docs/verification.md "The log"): one row per successful credentialed
 * POST /v1/verifications, kept per organisation and environment. `id` is a UUIDv7, so ordering
 * by id is ordering by time; pages are read newest first.
 */
export const verifications = sqliteTable(
  "verifications",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull().references(() => organisations.id),
    environment: text("environment", { enum: ["live", "test"] }).notNull(),
    keyId: text("key_id").notNull(),
    verdict: text("verdict").notNull(),
    docHash: text("doc_hash").notNull(),
    reference: text("reference"),
    verifiedAtMs: integer("verified_at_ms").notNull(),
    /** With verdict `pending_anchor`: the `retryAfterSeconds` the caller was given. */
    retryAfterSeconds: integer("retry_after_seconds"),
  },
  (t) => [
    // Covering: a page of the unfiltered log (and a time-bounded one) is read from this index
    // alone, in id order, with no table row touched (docs/verification.md "The log"; the
    // query-plan test checks it).
    index("verifications_scope").on(t.orgId, t.environment, t.id, t.verdict, t.docHash, t.verifiedAtMs, t.reference),
    index("verifications_scope_verdict").on(t.orgId, t.environment, t.verdict, t.id),
    index("verifications_scope_hash").on(t.orgId, t.environment, t.docHash, t.id),
  ],
);

/**
 * Persons of an organisation who sign PDFs themselves (docs/persons.md), added by an administrator.
 * `identity_evidence` is the administrator's attestation of how identity was verified (document
 * type and reference), never the document. `key_fingerprint` names the person's own key in
 * `signing_keys` once they have enrolled (null before); verification reads `suspended` by it,
 * per request, as it reads an organisation's.
 */
export const persons = sqliteTable(
  "persons",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull().references(() => organisations.id),
    name: text("name").notNull(),
    email: text("email").notNull(),
    identityEvidence: text("identity_evidence").notNull(),
    suspended: integer("suspended", { mode: "boolean" }).notNull().default(false),
    keyFingerprint: blob("key_fingerprint", { mode: "buffer" }).references(() => signingKeys.fingerprint),
    createdAt: integer("created_at").notNull(),
    enrolledAt: integer("enrolled_at"),
  },
  (t) => [
    index("persons_org").on(t.orgId),
    uniqueIndex("persons_key_fingerprint").on(t.keyFingerprint).where(sql`key_fingerprint IS NOT NULL`),
  ],
);

/**
 * Enrolment links: the token is shown once, in the link, and only its SHA-256 is kept. Single
 * use (`used_at`), valid until `expires_at` (created + 24 h).
 */
export const enrolments = sqliteTable(
  "enrolments",
  {
    tokenDigest: blob("token_digest", { mode: "buffer" }).primaryKey(),
    personId: text("person_id").notNull().references(() => persons.id),
    expiresAt: integer("expires_at").notNull(),
    usedAt: integer("used_at"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("enrolments_person").on(t.personId)],
);

/**
 * Passkeys (docs/persons.md "What enrolling creates"): a person's WebAuthn credentials, registered
 * at enrolment. The credential id is the primary key (what an assertion names); `public_key` is the
 * COSE key the authenticator returned; `counter` the last signature counter seen (0 for
 * authenticators that keep none). No private material: the private key never leaves the
 * authenticator.
 */
export const passkeys = sqliteTable(
  "passkeys",
  {
    credentialId: text("credential_id").primaryKey(),
    personId: text("person_id").notNull().references(() => persons.id),
    publicKey: blob("public_key", { mode: "buffer" }).notNull(),
    counter: integer("counter").notNull(),
    transports: text("transports"),
    createdAt: integer("created_at").notNull(),
    lastUsedAt: integer("last_used_at"),
  },
  (t) => [index("passkeys_person").on(t.personId)],
);

/**
 * WebAuthn challenges the application has issued and not yet seen answered (docs/persons.md):
 * each is single-use (deleted in the transaction that accepts its answer) and expires after five
 * minutes. `purpose` says which ceremony; `subject` is the enrolment token's digest (hex) for
 * `enrol`, the person id for `signature`, null for `session`; `payload` holds what a `signature`
 * challenge commits to (JSON: record id, hash, filename, time, key). Kept in the database, not in
 * memory, so that any process of the service can take the answer.
 */
export const appChallenges = sqliteTable(
  "app_challenges",
  {
    challenge: text("challenge").primaryKey(),
    purpose: text("purpose", { enum: ["enrol", "session", "signature"] }).notNull(),
    subject: text("subject"),
    payload: text("payload"),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [
    index("app_challenges_expiry").on(t.expiresAt),
    // A ceremony's live challenges by their subject (a person, an enrolment link), newest last:
    // each keeps only its latest few, so no one fills the table.
    index("app_challenges_subject").on(t.purpose, t.subject, t.expiresAt),
  ],
);

/**
 * Signed-in persons (docs/persons.md "The API behind the pages: /app"): the session cookie's value
 * is shown once, in the cookie, and only its SHA-256 is kept. A session ends 15 minutes after its
 * last use.
 */
export const appSessions = sqliteTable(
  "app_sessions",
  {
    tokenDigest: blob("token_digest", { mode: "buffer" }).primaryKey(),
    personId: text("person_id").notNull().references(() => persons.id),
    createdAt: integer("created_at").notNull(),
    lastSeenAt: integer("last_seen_at").notNull(),
  },
  (t) => [index("app_sessions_person").on(t.personId), index("app_sessions_last_seen").on(t.lastSeenAt)],
);
