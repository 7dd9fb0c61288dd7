/**
 * What the keys capability needs of storage beyond its store operations: the reads and the
 * write of authentication (credentials.ts), a hot path. The drivers are
 * storage/sqlite/credential-reads.ts and storage/postgres/credential-reads.ts, given by
 * each engine's drivers.ts.
 */
import type { Maybe } from "../lib/maybe.ts";

/** An API key's row and its organisation, as authentication reads it (booleans as 0/1 on both engines). */
export interface CredentialRow {
  key_id: string;
  environment: "live" | "test";
  scopes: string;
  secret_digest: Uint8Array;
  /** Updated in the kept copy by credentials.ts when a use is queued. */
  last_used_at: number | null;
  revoked_at: number | null;
  /** When the key stops working (ms), null: never. */
  expires_at: number | null;
  org_id: string;
  name: string;
  api_access: number;
  addon: number;
  validated: number;
  suspended: number;
  domain: string | null;
  created_at: number;
  topic_id: string | null;
}

export interface CredentialReads {
  /**
   * A number that stays the same exactly while no other connection has committed to the database
   * since (storage/data-version.ts, `others()`), or UNKNOWN (-1) when the engine cannot tell: the
   * change counter read under a version is true while the version stands. MUST answer
   * synchronously, without a query that can fail; take it before the read it vouches for.
   */
  version(): number;
  /**
   * The change counter (migration 0010), null when its row is missing. MUST answer synchronously
   * on the embedded SQLite (authentication there is synchronous); a promise elsewhere. A database
   * fault throws (or rejects) with the database's error.
   */
  changeCounter(): Maybe<number | null>;
  /**
   * The API key `keyId` with its organisation, as committed when it runs, or null for an unknown
   * id (MUST cost one indexed read either way). Synchronous on SQLite, as `changeCounter`.
   */
  keyWithOrg(keyId: string): Maybe<CredentialRow | null>;
  /**
   * Records the last use of each key of `uses` at its time `at`, all in one write transaction,
   * each only where no use at or after `at - resolutionMs + 1` is recorded. Resolves once
   * committed; rejects on a fault, having written none of them.
   */
  touch(uses: readonly (readonly [keyId: string, at: number])[], resolutionMs: number): Promise<void>;
}
