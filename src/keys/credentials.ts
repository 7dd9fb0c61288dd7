/**
 * Authenticating a presented API key (docs/access.md, "Unusable credentials").
 *
 * Guarantees:
 * - A key that is malformed or whose CRC does not match is refused before storage is touched.
 * - Every other cause of an unusable key (unknown key id, wrong secret, revoked key, expired key,
 *   key of an environment other than the one its id was minted for) does the same work: the counter's
 *   read, one indexed read and one constant-time comparison of SHA-256 digests (against a fixed
 *   dummy digest when the id is unknown), and gives the same answer, `null`. Callers turn `null`
 *   into one 401.
 * - Revocation is seen by the next request, also when another process (the admin command line)
 *   revoked the key. A key that authenticated is kept in memory with the value of the change
 *   counter (migration 0010) it was read under; triggers raise that counter in the very
 *   transaction that changes any API key's credential columns or any organisation, whichever
 *   connection writes, and every authentication reads the counter first (one indexed read of a
 *   one-row table instead of the key and organisation join), so a kept key is used only while
 *   nothing it was read from has changed. On SQLite the counter itself is read again only when
 *   something was committed since its last read (storage/data-version.ts, the WAL index's
 *   header, which every commit of every process rewrites). Only keys presented with their right secret are kept
 *   (a flood of wrong or unknown keys cannot fill the memory), only while usable (not revoked,
 *   presented for its environment), and any refusal costs the full lookup, kept or not.
 * - Expiry is seen by the first request at or after it. A key expires by the clock, not by a
 *   change: nothing is committed and the counter stands, so the kept row's `expires_at` is
 *   compared with the clock on every request (no query), and an expired kept key is refused with
 *   the full lookup like any other unusable key.
 * - Last-used times are kept without a write per request: the row read for authentication
 *   tells whether the stored time is older than `LAST_USED_RESOLUTION_MS`; only then is the key
 *   queued, and queued keys are written together, in one transaction, every few seconds and at
 *   `close()`. So each key costs at most one write a minute, however busy it is.
 */
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/log.ts";
import { approxBytes, Lru, namedCache, stringBytes, type NamedCache } from "../lib/lru.ts";
import { runMaybe, settled, settledNow, type Maybe } from "../lib/maybe.ts";
import { UNKNOWN } from "../storage/data-version.ts";
import type { CredentialReads, CredentialRow as Row } from "./ports.ts";
import { parseKey, secretDigest, secretMatches, type Environment } from "./api-key.ts";
import type { Scope } from "./api-keys.ts";
import type { Organisation } from "./organisations.ts";

export const LAST_USED_RESOLUTION_MS = 60_000;
const FLUSH_EVERY_MS = 5_000;

export interface AuthenticatedKey {
  readonly keyId: string;
  readonly environment: Environment;
  readonly scopes: readonly Scope[];
  readonly org: Organisation;
}

function toKey(row: Row): AuthenticatedKey {
  return Object.freeze({
    keyId: row.key_id,
    environment: row.environment,
    scopes: Object.freeze(row.scopes.split(" ") as Scope[]),
    org: Object.freeze({
      id: row.org_id,
      name: row.name,
      apiAccess: row.api_access === 1,
      addon: row.addon === 1,
      validated: row.validated === 1,
      suspended: row.suspended === 1,
      domain: row.domain,
      createdAt: row.created_at,
      topicId: row.topic_id,
    }),
  });
}

// Compared against when the key id is unknown, so that case costs what a wrong secret costs.
const DUMMY_DIGEST = secretDigest("docverify/unknown-key");

/** Authenticated keys kept in memory at most (about 1 KB each: the key's row and what is made of it). */
export const KEY_CACHE_ENTRIES = 10_000;
/** Their byte budget: some 2,000 keys. */
export const KEY_CACHE_BYTES = 2 * 1024 * 1024;

export function createCredentials(deps: { credentials: CredentialReads; clock: Clock; log: Logger }) {
  const { credentials: reads, clock, log } = deps;
  const kept = new Lru<string, { row: Row; key: AuthenticatedKey }>({ maxEntries: KEY_CACHE_ENTRIES, maxBytes: KEY_CACHE_BYTES, bytesOf: (keyId, entry) => stringBytes(keyId) + approxBytes(entry) });
  let keptGen: number | null = null;
  /** Where each presented secret's digest is written (api-key.ts, `secretMatches`). */
  const scratch = new Uint8Array(32);
  /** The data version the change counter was last read under (UNKNOWN: read it). */
  let counterVersion = UNKNOWN;
  const pending = new Map<string, number>();
  let timer: ReturnType<typeof setInterval> | null = null;

  /** The check itself, over the port's reads (runMaybe): synchronous on SQLite, awaited on PostgreSQL. */
  function* check(presented: string): Generator<unknown, AuthenticatedKey | null, unknown> {
    const parsed = parseKey(presented);
    if (parsed === null) return null;
    // The change counter (migration 0010); null when its row is missing, and nothing is kept then.
    // On SQLite it is read again only when something was committed since it was last read
    // (storage/data-version.ts): the version is taken before the read it vouches for.
    const version = reads.version();
    let gen: number | null;
    if (version !== UNKNOWN && version === counterVersion) gen = keptGen;
    else {
      gen = yield* settled(reads.changeCounter());
      counterVersion = version;
    }
    if (gen !== keptGen) {
      kept.clear();
      keptGen = gen;
    }
    // Only a kept key that is usable as presented answers from memory; every refusal does the
    // full work below (the lookup and the comparison), whatever was kept.
    const now = clock.now();
    const usable = (r: Row) => r.revoked_at === null && (r.expires_at === null || now < r.expires_at) && r.environment === parsed.environment;
    let entry = gen === null ? undefined : kept.get(parsed.keyId);
    if (entry === undefined || !usable(entry.row) || !secretMatches(parsed.secret, entry.row.secret_digest, scratch)) {
      const row = yield* settled(reads.keyWithOrg(parsed.keyId));
      const matches = secretMatches(parsed.secret, row?.secret_digest ?? DUMMY_DIGEST, scratch);
      if (row === null || !matches || !usable(row)) {
        // What was kept for this id goes (only a usable key, presented with its secret, is kept).
        if (entry !== undefined) kept.delete(parsed.keyId);
        return null;
      }
      entry = { row, key: toKey(row) };
      if (gen !== null) kept.set(parsed.keyId, entry);
    }
    const { row, key } = entry;
    if ((row.last_used_at === null || now - row.last_used_at >= LAST_USED_RESOLUTION_MS) && !pending.has(row.key_id)) {
      pending.set(row.key_id, now);
      row.last_used_at = now; // the kept copy: queued once a minute, not on every request after a flush
      timer ??= setInterval(() => void flush(), FLUSH_EVERY_MS);
      timer.unref?.();
    }
    return key;
  }

  async function flush(): Promise<void> {
    if (pending.size === 0) return;
    const batch = [...pending];
    pending.clear();
    try {
      await reads.touch(batch, LAST_USED_RESOLUTION_MS);
    } catch (error) {
      // Last-used is informational: losing one minute's update is better than failing requests.
      log.warn("could not record API keys' last use", { keys: batch.length, error });
    }
  }

  return {
    /**
     * The key and its organisation, or null for any unusable key. `presented` is the token
     * after `Bearer `. Synchronous, on the embedded SQLite; `authenticateAsync` on either engine.
     */
    authenticate(presented: string): AuthenticatedKey | null {
      return settledNow(runMaybe(check(presented)), "credentials: authenticate (use authenticateAsync)");
    },
    /** `authenticate` on either engine: synchronous on the embedded SQLite, a promise on PostgreSQL. */
    authenticateAny(presented: string): Maybe<AuthenticatedKey | null> {
      return runMaybe(check(presented));
    },
    /** `authenticate` on either engine. */
    async authenticateAsync(presented: string): Promise<AuthenticatedKey | null> {
      return runMaybe(check(presented));
    },
    /** Writes queued last-used times now. */
    flush,
    /** The authenticated keys kept, with their size and budget (/metrics), emptied when the service goes quiet. */
    caches: (): readonly NamedCache[] => [namedCache("api_keys", kept)],
    /** Writes what is queued and stops the timer. */
    async close(): Promise<void> {
      if (timer !== null) clearInterval(timer);
      timer = null;
      await flush();
    },
  };
}

export type Credentials = ReturnType<typeof createCredentials>;
