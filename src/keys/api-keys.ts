/**
 * Minting, listing and revoking API keys (docs/admin.md "Keys", docs/access.md). Scopes are fixed
 * at minting from the organisation's state at that moment and never change afterwards:
 * - `verifications:read` on every key;
 * - `records:write` on a `live` key whose organisation holds the add-on;
 * - `records:revoke` only when asked for, only on `live`, and it needs `records:write`
 *   (so the add-on): asking for what cannot be granted is refused, never silently reduced.
 * A key may be minted with an expiry (`expires_at`, fixed at minting like its scopes): from that
 * instant on it is unusable, as a revoked key is (credentials.ts compares it with the clock).
 */
import { asc, eq } from "drizzle-orm";
import type { Clock } from "../lib/clock.ts";
import { DomainError, invalid } from "../lib/errors.ts";
import { MAX_RFC3339_MS, parseRfc3339 } from "../lib/formats.ts";
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
  /** When the key stops working (ms); null: never. */
  readonly expiresAt: number | null;
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
    expiresAt: row.expiresAt,
  };
}

/** Has the key expired at `now`? It stops working at the very millisecond of its expiry. */
export function isExpired(k: { readonly expiresAt: number | null }, now: number): boolean {
  return k.expiresAt !== null && now >= k.expiresAt;
}

/** The forms an expiry may be written in, for messages. */
export const EXPIRY_FORMS = "a date YYYY-MM-DD (that day's 00:00 UTC) or an RFC 3339 time such as 2027-01-31T17:00:00Z";

/**
 * An expiry as an administrator writes it (`key mint --expires`, the terminal UI): a plain date
 * `YYYY-MM-DD` is that day's 00:00 UTC; otherwise an RFC 3339 time with its zone (lib/formats.ts
 * `parseRfc3339`, to the millisecond). It must be after `now`. VALIDATION_FAILED on `expires`
 * otherwise.
 */
export function parseExpiry(text: string, now: number): number {
  const date = /^\d{4}-\d{2}-\d{2}$/.test(text) ? parseRfc3339(`${text}T00:00:00Z`) : parseRfc3339(text);
  if (date === null) throw invalid("expires", `must be ${EXPIRY_FORMS}`);
  checkExpiry(date.ms, now);
  return date.ms;
}

/** Refuses an expiry that is not a time after `now` that can be written (years to 9999). */
function checkExpiry(expiresAt: number | null, now: number): void {
  if (expiresAt === null) return;
  if (!Number.isSafeInteger(expiresAt)) throw invalid("expires", "must be whole milliseconds since 1970");
  if (expiresAt <= now) throw invalid("expires", `must be in the future (it is now ${new Date(now).toISOString()})`);
  if (expiresAt > MAX_RFC3339_MS) throw invalid("expires", "must be no later than 9999-12-31T23:59:59.999Z");
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
    /**
     * Mints a key. The returned `key` is the only time the full key exists outside the caller.
     * `expiresAt` (ms; absent or null: never) must be after now; the audit row records it.
     */
    mint(input: { orgId: string; environment: Environment; revoke?: boolean; expiresAt?: number | null }, actor: string): Promise<ApiKeyInfo & { key: string }> {
      if (input.environment !== "live" && input.environment !== "test") return Promise.reject(invalid("env", "must be live or test"));
      const createdAt = clock.now();
      const expiresAt = input.expiresAt ?? null;
      try {
        checkExpiry(expiresAt, createdAt);
      } catch (e) {
        return Promise.reject(e);
      }
      const minted = generateKey(input.environment);
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
          expiresAt,
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
