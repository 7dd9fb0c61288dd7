/**
 * API key expiry (docs/access.md "Expiry") on both engines (test/support/store-engines.ts): an
 * expiry is written as a date or an RFC 3339 time and must be in the future; minting stores it
 * and audits it, or refuses and writes nothing; authentication refuses a key from the millisecond
 * of its expiry, also a key kept in memory, by the clock alone and without a query per request.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { createSigner } from "../../src/crypto/index.ts";
import { createApiKeys, isExpired, parseExpiry, type ApiKeys } from "../../src/keys/api-keys.ts";
import { createCredentials } from "../../src/keys/credentials.ts";
import type { CredentialReads } from "../../src/keys/ports.ts";
import { createOrganisations } from "../../src/keys/organisations.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { DomainError } from "../../src/lib/errors.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import type { Store } from "../../src/storage/store.ts";
import { countRows, sqlRow, sqlRows } from "../support/engine.ts";
import { keysDrivers } from "../support/drivers.ts";
import { useStoreEngines } from "../support/store-engines.ts";

const { engines } = useStoreEngines();

const NOW = Date.UTC(2026, 10, 22, 8, 0, 0, 0);

/** The VALIDATION_FAILED on `expires` that `fn` throws (or rejects with), as its detail. */
async function expiresRefusal(fn: () => unknown): Promise<string> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof DomainError && e.code === "VALIDATION_FAILED" && e.details?.expires !== undefined) return e.details.expires;
    throw e;
  }
  throw new Error("not refused");
}

describe("parseExpiry: how an administrator writes an expiry", () => {
  test("a plain date is that day's 00:00 UTC; an RFC 3339 time is its instant, to the millisecond, in any zone", () => {
    expect(parseExpiry("2027-01-31", NOW)).toBe(Date.UTC(2027, 0, 31));
    expect(parseExpiry("2028-02-29", NOW)).toBe(Date.UTC(2028, 1, 29));
    expect(parseExpiry("2027-01-31T17:00:00Z", NOW)).toBe(Date.UTC(2027, 0, 31, 17));
    expect(parseExpiry("2027-01-31T18:00:00+01:00", NOW)).toBe(Date.UTC(2027, 0, 31, 17));
    expect(parseExpiry("2027-01-31T17:00:00.1239Z", NOW)).toBe(Date.UTC(2027, 0, 31, 17, 0, 0, 123));
    expect(parseExpiry("9999-12-31T23:59:59.999Z", NOW)).toBe(253402300799999);
  });

  test("anything else is refused, naming the forms: no zone, other spellings, impossible dates, words, empty", async () => {
    for (const text of ["", "tomorrow", "2027-01-31T17:00:00", "2027-01-31 17:00:00Z", "2027-1-31", "31/01/2027", "2027-02-29", "2027-13-01", "2027-01-31T24:00:00Z", "10000-01-01", " 2027-01-31", "1798761600000"]) {
      expect({ text, refusal: await expiresRefusal(() => parseExpiry(text, NOW)) }).toEqual({ text, refusal: expect.stringContaining("YYYY-MM-DD") });
    }
  });

  test("it must be in the future: now itself is refused, a millisecond later is not; past 9999 is refused", async () => {
    const iso = (ms: number) => new Date(ms).toISOString();
    expect(await expiresRefusal(() => parseExpiry(iso(NOW), NOW))).toContain("must be in the future (it is now 2026-11-22T08:00:00.000Z)");
    expect(await expiresRefusal(() => parseExpiry("2026-11-22", NOW))).toContain("must be in the future");
    expect(parseExpiry(iso(NOW + 1), NOW)).toBe(NOW + 1);
    expect(await expiresRefusal(() => parseExpiry("9999-12-31T23:59:59-00:01", NOW))).toContain("no later than 9999-12-31");
  });

  test("a key has expired from the very millisecond of its expiry; a key without one never does", () => {
    expect(isExpired({ expiresAt: NOW }, NOW - 1)).toBe(false);
    expect(isExpired({ expiresAt: NOW }, NOW)).toBe(true);
    expect(isExpired({ expiresAt: null }, Number.MAX_SAFE_INTEGER)).toBe(false);
  });
});

/** `reads` with a count of each call, to tell a key answered from memory from one looked up. */
function counting(reads: CredentialReads) {
  const calls = { keyWithOrg: 0, changeCounter: 0 };
  const counted: CredentialReads = {
    version: () => reads.version(),
    changeCounter: () => (calls.changeCounter++, reads.changeCounter()),
    keyWithOrg: (keyId) => (calls.keyWithOrg++, reads.keyWithOrg(keyId)),
    touch: (uses, ms) => reads.touch(uses, ms),
  };
  return { calls, counted };
}

for (const engine of engines) {
  describe(`${engine.name}: expiring keys`, () => {
    let store: Store;
    let apiKeys: ApiKeys;
    let orgId: string;
    const clock = manualClock(NOW);
    beforeAll(async () => {
      store = await engine.open();
      const signer = createSigner({ masterKey: new Uint8Array(32).fill(7), workers: 0 });
      orgId = (await createOrganisations({ store, signer, clock }).create({ name: "Expiring Ltd", apiAccess: true }, "alice")).id;
      apiKeys = createApiKeys({ store, clock });
    });

    test("minting with an expiry stores it, lists it, and the audit trail's mint entry records it", async () => {
      const expiresAt = NOW + 86_400_000;
      const minted = await apiKeys.mint({ orgId, environment: "live", expiresAt }, "alice");
      expect(minted.expiresAt).toBe(expiresAt);
      expect(await sqlRow(store, "SELECT expires_at FROM api_keys WHERE key_id = ?", minted.keyId)).toEqual({ expires_at: expiresAt });
      expect((await apiKeys.list({ orgId })).find((k) => k.keyId === minted.keyId)).toMatchObject({ expiresAt });
      const audit = await sqlRow(store, "SELECT action, after FROM audit_log WHERE subject_id = ?", minted.keyId);
      expect(audit!.action).toBe("api_key.mint");
      expect(JSON.parse(String(audit!.after))).toMatchObject({ keyId: minted.keyId, expiresAt });
      // Without one: null, in the row, the list and the audit trail alike.
      const forever = await apiKeys.mint({ orgId, environment: "test" }, "alice");
      expect(forever.expiresAt).toBeNull();
      expect(JSON.parse(String((await sqlRow(store, "SELECT after FROM audit_log WHERE subject_id = ?", forever.keyId))!.after)).expiresAt).toBeNull();
    });

    test("an expiry now, in the past, past 9999 or not whole milliseconds is refused, and nothing is written", async () => {
      const before = { keys: await countRows(store, "api_keys"), audit: await countRows(store, "audit_log") };
      expect(await expiresRefusal(() => apiKeys.mint({ orgId, environment: "live", expiresAt: NOW }, "alice"))).toContain("must be in the future");
      expect(await expiresRefusal(() => apiKeys.mint({ orgId, environment: "live", expiresAt: NOW - 60_000 }, "alice"))).toContain("must be in the future");
      expect(await expiresRefusal(() => apiKeys.mint({ orgId, environment: "live", expiresAt: 253402300800000 }, "alice"))).toContain("no later than 9999-12-31");
      expect(await expiresRefusal(() => apiKeys.mint({ orgId, environment: "live", expiresAt: NOW + 0.5 }, "alice"))).toContain("whole milliseconds");
      expect({ keys: await countRows(store, "api_keys"), audit: await countRows(store, "audit_log") }).toEqual(before);
    });

    test("a kept key is refused from the millisecond of its expiry, by the clock alone, without a query per request", async () => {
      const expiresAt = clock.now() + 60_000;
      const minted = await apiKeys.mint({ orgId, environment: "live", expiresAt }, "alice");
      const other = await apiKeys.mint({ orgId, environment: "live" }, "alice");
      const { calls, counted } = counting(keysDrivers(store).credentials);
      const credentials = createCredentials({ credentials: counted, clock, log: memoryLogger() });
      try {
        expect(await credentials.authenticateAsync(minted.key)).toMatchObject({ keyId: minted.keyId });
        expect(calls.keyWithOrg).toBe(1);
        const counter = await sqlRows(store, "SELECT value FROM change_counter");
        clock.set(expiresAt - 1);
        for (let i = 0; i < 5; i++) expect(await credentials.authenticateAsync(minted.key)).not.toBeNull();
        expect(calls.keyWithOrg).toBe(1); // answered from memory: the expiry is compared, not read again
        clock.set(expiresAt);
        expect(await credentials.authenticateAsync(minted.key)).toBeNull();
        // Nothing was written for it to be refused: time alone did it.
        expect(await sqlRows(store, "SELECT value FROM change_counter")).toEqual(counter);
        // A refusal costs the full lookup, as every refusal does, and stays a refusal.
        expect(calls.keyWithOrg).toBe(2);
        expect(await credentials.authenticateAsync(minted.key)).toBeNull();
        expect(calls.keyWithOrg).toBe(3);
        // A key without an expiry goes on working.
        expect(await credentials.authenticateAsync(other.key)).toMatchObject({ keyId: other.keyId });
      } finally {
        await credentials.close();
      }
    });

    test("a key that expired before it was ever presented is refused at its first request", async () => {
      const minted = await apiKeys.mint({ orgId, environment: "test", expiresAt: clock.now() + 1 }, "alice");
      clock.advance(1);
      const credentials = createCredentials({ ...keysDrivers(store), clock, log: memoryLogger() });
      try {
        expect(await credentials.authenticateAsync(minted.key)).toBeNull();
        // It is listed as expired, and can still be revoked.
        const listed = (await apiKeys.list({ orgId })).find((k) => k.keyId === minted.keyId)!;
        expect(isExpired(listed, clock.now())).toBe(true);
        expect((await apiKeys.revoke(minted.keyId, "alice")).revokedAt).toBe(clock.now());
      } finally {
        await credentials.close();
      }
    });
  });
}
