/**
 * Minting, listing and revoking API keys (decisions §2, spec §5). Scopes are fixed at minting
 * from the organisation's state at that moment and never change afterwards:
 * - `verifications:read` on every key;
 * - `records:write` on a `live` key whose organisation holds the add-on;
 * - `records:revoke` only when asked for, only on `live`, and it needs `records:write`
 *   (so the add-on): asking for what cannot be granted is refused, never silently reduced.
 */
import { asc, eq } from "drizzle-orm";
import type { Clock } from "../lib/clock.ts";
import { DomainError, invalid } from "../lib/errors.ts";
import type { Db } from "../storage/db.ts";
import { apiKeys, organisations } from "../storage/schema.ts";
import { generateKey, keyPrefix, secretDigest, type Environment } from "./api-key.ts";
import { writeAudit } from "./audit.ts";

export type Scope = "verifications:read" | "records:write" | "records:revoke";

export interface ApiKeyInfo {
  readonly keyId: string;
  readonly prefix: string;
  readonly orgId: string;
  readonly environment: Environment;
  readonly scopes: readonly Scope[];
  readonly createdAt: number;
  readonly lastUsedAt: number | null;
  readonly revokedAt: number | null;
}

function view(row: typeof apiKeys.$inferSelect): ApiKeyInfo {
  return {
    keyId: row.keyId,
    prefix: keyPrefix(row),
    orgId: row.orgId,
    environment: row.environment,
    scopes: row.scopes.split(" ") as Scope[],
    createdAt: row.createdAt,
    lastUsedAt: row.lastUsedAt,
    revokedAt: row.revokedAt,
  };
}

/** The scopes a new key gets, or a refusal naming why. */
export function scopesAtMinting(environment: Environment, addon: boolean, revoke: boolean): Scope[] {
  if (revoke && environment === "test") {
    throw invalid("revoke", "records:revoke is never granted on a test key: there is no test ledger");
  }
  if (revoke && !addon) {
    throw invalid("revoke", "records:revoke needs records:write, which needs the organisation-issued authentication add-on; grant the add-on first");
  }
  const scopes: Scope[] = ["verifications:read"];
  if (environment === "live" && addon) scopes.push("records:write");
  if (revoke) scopes.push("records:revoke");
  return scopes;
}

export function createApiKeys(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;
  return {
    /** Mints a key. The returned `key` is the only time the full key exists outside the caller. */
    mint(input: { orgId: string; environment: Environment; revoke?: boolean }, actor: string): ApiKeyInfo & { key: string } {
      if (input.environment !== "live" && input.environment !== "test") throw invalid("env", "must be live or test");
      const minted = generateKey(input.environment);
      return db.transaction(
        (tx) => {
          const org = tx.select().from(organisations).where(eq(organisations.id, input.orgId)).get();
          if (org === undefined) throw new DomainError("NOT_FOUND", `No organisation ${input.orgId}.`);
          const scopes = scopesAtMinting(input.environment, org.addon, input.revoke ?? false);
          const row = {
            keyId: minted.keyId,
            orgId: org.id,
            environment: input.environment,
            scopes: scopes.join(" "),
            secretDigest: secretDigest(minted.secret),
            createdAt: clock.now(),
            lastUsedAt: null,
            revokedAt: null,
          };
          tx.insert(apiKeys).values(row).run();
          const info = view(row);
          writeAudit(tx, row.createdAt, { actor, action: "api_key.mint", subjectType: "api_key", subjectId: row.keyId, before: null, after: info });
          return { ...info, key: minted.key };
        },
        { behavior: "immediate" },
      );
    },

    list(filter: { orgId?: string } = {}): ApiKeyInfo[] {
      const q = db.select().from(apiKeys);
      const rows = filter.orgId === undefined ? q.orderBy(asc(apiKeys.createdAt)).all() : q.where(eq(apiKeys.orgId, filter.orgId)).orderBy(asc(apiKeys.createdAt)).all();
      return rows.map(view);
    },

    revoke(keyId: string, actor: string): ApiKeyInfo {
      return db.transaction(
        (tx) => {
          const row = tx.select().from(apiKeys).where(eq(apiKeys.keyId, keyId)).get();
          if (row === undefined) throw new DomainError("NOT_FOUND", `No API key ${keyId}.`);
          if (row.revokedAt !== null) throw new DomainError("VALIDATION_FAILED", `API key ${keyId} is already revoked.`, { keyId: "already revoked" });
          const revokedAt = clock.now();
          tx.update(apiKeys).set({ revokedAt }).where(eq(apiKeys.keyId, keyId)).run();
          const after = view({ ...row, revokedAt });
          writeAudit(tx, revokedAt, { actor, action: "api_key.revoke", subjectType: "api_key", subjectId: keyId, before: view(row), after });
          return after;
        },
        { behavior: "immediate" },
      );
    },
  };
}

export type ApiKeys = ReturnType<typeof createApiKeys>;
