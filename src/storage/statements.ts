/**
 * Statements written for each engine (store.ts, `Statement`): only for paths where building the
 * query with drizzle would cost more than running it. Each pair returns the same columns with the
 * same JavaScript types: on PostgreSQL a bigint read as a number is cast `::float8` (times in ms
 * are exact in a double), a boolean read as SQLite's 0/1 is cast `::int`.
 */
import { statement } from "./store.ts";

/** The change counter (schema.ts `change_counter`): what the in-memory caches are checked against. */
export const CHANGE_COUNTER = statement<{ value: number }, []>({
  name: "change counter",
  sqlite: "SELECT value FROM change_counter WHERE id = 1",
  postgres: "SELECT value::float8 AS value FROM change_counter WHERE id = 1",
});

/** An API key's row and its organisation, for authentication (keys/credentials.ts). */
export interface ApiKeyWithOrgRow {
  key_id: string;
  environment: "live" | "test";
  scopes: string;
  secret_digest: Uint8Array;
  last_used_at: number | null;
  revoked_at: number | null;
  org_id: string;
  name: string;
  api_access: number;
  addon: number;
  validated: number;
  suspended: number;
  created_at: number;
  topic_id: string | null;
}

export const API_KEY_WITH_ORG = statement<ApiKeyWithOrgRow, [keyId: string]>({
  name: "API key with its organisation",
  sqlite: `SELECT k.key_id, k.environment, k.scopes, k.secret_digest, k.last_used_at, k.revoked_at,
                  o.id AS org_id, o.name, o.api_access, o.addon, o.validated, o.suspended, o.created_at, o.topic_id
             FROM api_keys k JOIN organisations o ON o.id = k.org_id
            WHERE k.key_id = ?`,
  postgres: `SELECT k.key_id, k.environment, k.scopes, k.secret_digest, k.last_used_at::float8 AS last_used_at, k.revoked_at::float8 AS revoked_at,
                    o.id AS org_id, o.name, o.api_access::int AS api_access, o.addon::int AS addon, o.validated::int AS validated,
                    o.suspended::int AS suspended, o.created_at::float8 AS created_at, o.topic_id
               FROM api_keys k JOIN organisations o ON o.id = k.org_id
              WHERE k.key_id = $1`,
});

/** Records a key's last use at `at`, unless a use at or after `olderThan` is already recorded. */
export const TOUCH_API_KEY = statement<never, [at: number, keyId: string, olderThan: number]>({
  name: "API key last use",
  sqlite: "UPDATE api_keys SET last_used_at = ?1 WHERE key_id = ?2 AND (last_used_at IS NULL OR last_used_at < ?3)",
  postgres: "UPDATE api_keys SET last_used_at = $1 WHERE key_id = $2 AND (last_used_at IS NULL OR last_used_at < $3)",
});
