/**
 * The product's tables, as drizzle schema. `drizzle-kit generate` turns changes here into SQL
 * migrations under `migrations/`; `npm run db:generate` also refreshes `migrations/index.ts`,
 * the module that embeds them in the binary. A test fails when the two are out of step.
 */
import { blob, index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

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
 * Organisations. Flags are 0/1 integers; `system_key_*` hold the organisation's own ML-DSA key
 * (public key in clear, seed sealed under the master key, see src/crypto/sealed-seed.ts).
 * `topic_id` is set once the running service has created the organisation's ledger topic.
 */
export const organisations = sqliteTable("organisations", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  apiAccess: integer("api_access", { mode: "boolean" }).notNull().default(false),
  addon: integer("addon", { mode: "boolean" }).notNull().default(false),
  validated: integer("validated", { mode: "boolean" }).notNull().default(false),
  suspended: integer("suspended", { mode: "boolean" }).notNull().default(false),
  createdAt: integer("created_at").notNull(),
  systemKeyAlgorithm: text("system_key_algorithm").notNull(),
  systemPublicKey: blob("system_public_key", { mode: "buffer" }).notNull(),
  systemKeyFingerprint: blob("system_key_fingerprint", { mode: "buffer" }).notNull(),
  systemKeySealed: blob("system_key_sealed", { mode: "buffer" }).notNull(),
  topicId: text("topic_id"),
});

/**
 * API keys (decisions §2): the key id in clear for lookup, the secret only as a SHA-256 digest.
 * `scopes` is a space-separated list fixed at minting. `last_used_at` is written at most once
 * a minute per key, so authentication does not turn every request into a write.
 */
export const apiKeys = sqliteTable(
  "api_keys",
  {
    keyId: text("key_id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => organisations.id),
    environment: text("environment", { enum: ["live", "test"] }).notNull(),
    scopes: text("scopes").notNull(),
    secretDigest: blob("secret_digest", { mode: "buffer" }).notNull(),
    createdAt: integer("created_at").notNull(),
    lastUsedAt: integer("last_used_at"),
    revokedAt: integer("revoked_at"),
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
