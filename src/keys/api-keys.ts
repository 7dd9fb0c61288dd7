/**
 * Minting, listing and revoking API keys (docs/admin.md "Keys", docs/access.md). Scopes are fixed
 * at minting from the organisation's state at that moment and never change afterwards:
 * - `verifications:read` on every key;
 * - `records:write` on a `live` key whose organisation holds the add-on;
 * - `records:revoke` only when asked for, only on `live`, and it needs `records:write`
 *   (so the add-on): asking for what cannot be granted is refused, never silently reduced.
 */
import { asc, eq } from "drizzle-orm";
import type { Clock } from "../lib/clock.ts";
import { DomainError, invalid } from "../lib/errors.ts";
import { q, type Store, type Tables } from "../storage/store.ts";
import { generateKey, keyPrefix, secretDigest, type Environment } from "./api-key.ts";
import { audit } from "./audit.ts";

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

function view(row: Tables["apiKeys"]["$inferSelect"]): ApiKeyInfo {
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

export function createApiKeys(deps: { store: Store; clock: Clock }) {
  const { store, clock } = deps;
  return {
    /** Mints a key. The returned `key` is the only time the full key exists outside the caller. */
    mint(input: { orgId: string; environment: Environment; revoke?: boolean }, actor: string): Promise<ApiKeyInfo & { key: string }> {
      if (input.environment !== "live" && input.environment !== "test") return Promise.reject(invalid("env", "must be live or test"));
      const minted = generateKey(input.environment);
      const createdAt = clock.now();
      return store.write(function* (tx, t) {
        const [org] = yield* q(tx.select().from(t.organisations).where(eq(t.organisations.id, input.orgId)));
        if (org === undefined) throw new DomainError("NOT_FOUND", `No organisation ${input.orgId}.`);
        const scopes = scopesAtMinting(input.environment, org.addon, input.revoke ?? false);
        const row = {
          keyId: minted.keyId,
          orgId: org.id,
          environment: input.environment,
          scopes: scopes.join(" "),
          secretDigest: secretDigest(minted.secret),
          createdAt,
          lastUsedAt: null,
          revokedAt: null,
        };
        yield* q(tx.insert(t.apiKeys).values(row));
        const info = view(row);
        yield* audit(tx, t, row.createdAt, { actor, action: "api_key.mint", subjectType: "api_key", subjectId: row.keyId, before: null, after: info });
        return { ...info, key: minted.key };
      });
    },

    list(filter: { orgId?: string } = {}): Promise<ApiKeyInfo[]> {
      return store.read(function* (db, t) {
        const q0 = db.select().from(t.apiKeys);
        const rows = yield* q(filter.orgId === undefined ? q0.orderBy(asc(t.apiKeys.createdAt)) : q0.where(eq(t.apiKeys.orgId, filter.orgId)).orderBy(asc(t.apiKeys.createdAt)));
        return rows.map(view);
      });
    },

    revoke(keyId: string, actor: string): Promise<ApiKeyInfo> {
      const revokedAt = clock.now();
      return store.write(function* (tx, t) {
        const [row] = yield* q(tx.select().from(t.apiKeys).where(eq(t.apiKeys.keyId, keyId)));
        if (row === undefined) throw new DomainError("NOT_FOUND", `No API key ${keyId}.`);
        if (row.revokedAt !== null) throw new DomainError("VALIDATION_FAILED", `API key ${keyId} is already revoked.`, { keyId: "already revoked" });
        yield* q(tx.update(t.apiKeys).set({ revokedAt }).where(eq(t.apiKeys.keyId, keyId)));
        const after = view({ ...row, revokedAt });
        yield* audit(tx, t, revokedAt, { actor, action: "api_key.revoke", subjectType: "api_key", subjectId: keyId, before: view(row), after });
        return after;
      });
    },
  };
}

export type ApiKeys = ReturnType<typeof createApiKeys>;
