/**
 * The credential check (src/keys/credentials.ts): every cause of an unusable key gives the same
 * answer; a bad checksum never reaches storage; last use is recorded without a write per request.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { openCore, type Core } from "../../src/app/core.ts";
import { crcBase62, generateKey } from "../../src/keys/api-key.ts";
import { keysDrivers } from "../support/drivers.ts";
import { createCredentials } from "../../src/keys/credentials.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { cleanup, onCleanup, testConfig } from "../support/env.ts";

afterAll(cleanup);

async function setup() {
  const clock = manualClock(Date.UTC(2026, 10, 22, 8));
  const core: Core = openCore({ config: testConfig(), log: memoryLogger(), clock });
  onCleanup(() => core.close());
  const org = await core.organisations.create({ name: "Keys Ltd", apiAccess: true }, "test");
  const minted = await core.apiKeys.mint({ orgId: org.id, environment: "live" }, "test");
  const credentials = createCredentials({ ...keysDrivers(core.store), clock, log: memoryLogger() });
  onCleanup(() => credentials.close());
  return { core, clock, org, minted, credentials };
}

describe("credentials", () => {
  test("a working key gives its id, environment, scopes and organisation", async () => {
    const { minted, credentials, org } = await setup();
    expect(credentials.authenticate(minted.key)).toMatchObject({ keyId: minted.keyId, environment: "live", scopes: ["verifications:read"], org: { id: org.id, name: "Keys Ltd", apiAccess: true } });
  });

  test("every unusable key is null: malformed, bad CRC, unknown id, wrong secret, environment swapped, revoked", async () => {
    const { core, minted, credentials } = await setup();
    const k = minted.key;
    const forged = generateKey("live");
    // the same key id and secret presented as a test key, with a correct checksum
    const swappedBody = `dv_test_${k.slice(8, 56)}`;
    const swapped = swappedBody + crcBase62(swappedBody);
    expect(credentials.authenticate("")).toBeNull();
    expect(credentials.authenticate(k.slice(0, 61))).toBeNull();
    expect(credentials.authenticate(k.slice(0, 61) + (k.endsWith("0") ? "1" : "0"))).toBeNull();
    expect(credentials.authenticate(forged.key)).toBeNull();
    expect(credentials.authenticate(swapped)).toBeNull();
    await core.apiKeys.revoke(minted.keyId, "test");
    expect(credentials.authenticate(k)).toBeNull();
  });

  test("a bad checksum is refused before storage is touched", async () => {
    const { core, minted, credentials } = await setup();
    const badCrc = minted.key.slice(0, 61) + (minted.key.endsWith("0") ? "1" : "0");
    core.db.$client.close();
    // storage is gone: only a refusal that never reads it can answer
    expect(credentials.authenticate(badCrc)).toBeNull();
    expect(() => credentials.authenticate(generateKey("live").key)).toThrow();
  });

  test("last use is recorded at most once a minute per key, in batches, not per request", async () => {
    const { core, clock, minted, credentials } = await setup();
    const lastUsed = async () => (await core.apiKeys.list()).find((k) => k.keyId === minted.keyId)!.lastUsedAt;
    const changes = () => (core.db.$client.query("SELECT total_changes() AS n").get() as { n: number }).n;
    expect(await lastUsed()).toBeNull();
    const before = changes();
    for (let i = 0; i < 500; i++) credentials.authenticate(minted.key);
    expect(changes()).toBe(before); // nothing written per request
    credentials.flush();
    expect(await lastUsed()).toBe(clock.now());
    expect(changes()).toBe(before + 1);
    // within the minute: nothing more to write
    clock.advance(30_000);
    for (let i = 0; i < 100; i++) credentials.authenticate(minted.key);
    credentials.flush();
    expect(changes()).toBe(before + 1);
    // a minute later, one more write
    clock.advance(31_000);
    credentials.authenticate(minted.key);
    credentials.close();
    expect(await lastUsed()).toBe(clock.now());
  });

  describe("kept in memory while the change counter stands", () => {
    /** Another connection to the same database file, as the admin command line or an operator's sqlite3 has. */
    function otherConnection(core: Core): Database {
      const file = (core.db.$client.query("PRAGMA database_list").get() as { file: string }).file;
      const other = new Database(file);
      other.run("PRAGMA busy_timeout = 5000");
      onCleanup(() => other.close());
      return other;
    }

    test("a kept key answers without the key and organisation join; a wrong secret for it still costs the lookup and fails", async () => {
      const { core, minted, credentials } = await setup();
      expect(credentials.authenticate(minted.key)).not.toBeNull();
      // Without the counter's trigger, a change to the key row is invisible to a kept key: which
      // shows the kept key is what answers, and that the trigger is what keeps it true.
      const other = otherConnection(core);
      other.run("DROP TRIGGER api_keys_credential_changed");
      other.query("UPDATE api_keys SET revoked_at = 1 WHERE key_id = ?").run(minted.keyId);
      expect(credentials.authenticate(minted.key)).not.toBeNull();
      const wrong = generateKey("live");
      const sameIdWrongSecret = `dv_live_${minted.keyId}${wrong.key.slice(24, 56)}`;
      expect(credentials.authenticate(sameIdWrongSecret + crcBase62(sameIdWrongSecret))).toBeNull();
      // That refusal read the row again and keeps the revoked row: the key is refused from now on.
      expect(credentials.authenticate(minted.key)).toBeNull();
    });

    test("revoking a key on another connection is seen by the very next request", async () => {
      const { core, minted, credentials } = await setup();
      for (let i = 0; i < 3; i++) expect(credentials.authenticate(minted.key)).not.toBeNull();
      otherConnection(core).query("UPDATE api_keys SET revoked_at = 1 WHERE key_id = ?").run(minted.keyId);
      expect(credentials.authenticate(minted.key)).toBeNull();
    });

    test("an organisation changed on another connection is seen by the very next request", async () => {
      const { core, org, minted, credentials } = await setup();
      expect(credentials.authenticate(minted.key)!.org.suspended).toBe(false);
      const other = otherConnection(core);
      other.query("UPDATE organisations SET suspended = 1, name = 'Keys Renamed Ltd' WHERE id = ?").run(org.id);
      expect(credentials.authenticate(minted.key)!.org).toMatchObject({ suspended: true, name: "Keys Renamed Ltd" });
      await core.organisations.set(org.id, { suspended: false }, "test");
      expect(credentials.authenticate(minted.key)!.org.suspended).toBe(false);
    });

    test("last-used writes do not clear what is kept; the kept key is not mutable by its callers", async () => {
      const { core, minted, credentials } = await setup();
      const counter = () => (core.db.$client.query("SELECT value FROM change_counter").get() as { value: number }).value;
      const key = credentials.authenticate(minted.key)!;
      const before = counter();
      credentials.flush(); // writes last_used_at
      expect(counter()).toBe(before);
      expect(Object.isFrozen(key) && Object.isFrozen(key.org) && Object.isFrozen(key.scopes)).toBe(true);
    });
  });
});
