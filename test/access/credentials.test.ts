/**
 * The credential check (src/keys/credentials.ts): every cause of an unusable key gives the same
 * answer; a bad checksum never reaches storage; last use is recorded without a write per request.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { openCore, type Core } from "../../src/app.ts";
import { crcBase62, generateKey } from "../../src/keys/api-key.ts";
import { createCredentials } from "../../src/keys/credentials.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { cleanup, onCleanup, testConfig } from "../support/env.ts";

afterAll(cleanup);

function setup() {
  const clock = manualClock(Date.UTC(2026, 10, 22, 8));
  const core: Core = openCore({ config: testConfig(), log: memoryLogger(), clock });
  onCleanup(() => core.close());
  const org = core.organisations.create({ name: "Keys Ltd", apiAccess: true }, "test");
  const minted = core.apiKeys.mint({ orgId: org.id, environment: "live" }, "test");
  const credentials = createCredentials({ db: core.db, clock, log: memoryLogger() });
  onCleanup(() => credentials.close());
  return { core, clock, org, minted, credentials };
}

describe("credentials", () => {
  test("a working key gives its id, environment, scopes and organisation", () => {
    const { minted, credentials, org } = setup();
    expect(credentials.authenticate(minted.key)).toMatchObject({ keyId: minted.keyId, environment: "live", scopes: ["verifications:read"], org: { id: org.id, name: "Keys Ltd", apiAccess: true } });
  });

  test("every unusable key is null: malformed, bad CRC, unknown id, wrong secret, environment swapped, revoked", () => {
    const { core, minted, credentials } = setup();
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
    core.apiKeys.revoke(minted.keyId, "test");
    expect(credentials.authenticate(k)).toBeNull();
  });

  test("a bad checksum is refused before storage is touched", () => {
    const { core, minted, credentials } = setup();
    const badCrc = minted.key.slice(0, 61) + (minted.key.endsWith("0") ? "1" : "0");
    core.db.$client.close();
    // storage is gone: only a refusal that never reads it can answer
    expect(credentials.authenticate(badCrc)).toBeNull();
    expect(() => credentials.authenticate(generateKey("live").key)).toThrow();
  });

  test("last use is recorded at most once a minute per key, in batches, not per request", () => {
    const { core, clock, minted, credentials } = setup();
    const lastUsed = () => core.apiKeys.list().find((k) => k.keyId === minted.keyId)!.lastUsedAt;
    const changes = () => (core.db.$client.query("SELECT total_changes() AS n").get() as { n: number }).n;
    expect(lastUsed()).toBeNull();
    const before = changes();
    for (let i = 0; i < 500; i++) credentials.authenticate(minted.key);
    expect(changes()).toBe(before); // nothing written per request
    credentials.flush();
    expect(lastUsed()).toBe(clock.now());
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
    expect(lastUsed()).toBe(clock.now());
  });
});
