/**
 * Verification with its signature checks on the signing workers (VerifierDeps.verifyMany,
 * docs/benchmarks.md "How the figures moved": the memo-off rate): the same verdicts and matches as
 * every check made on the calling thread, for every kind of record and for a hash with more than
 * MAX_MATCHES records; the memos still answer first (nothing goes to a worker that a memo knows);
 * and standing is live when another verification moved the caches on while this one waited for a
 * worker.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createSigner, createVerificationMemo, type Signer, type VerifyCall } from "../../src/crypto/index.ts";
import { createVerifier, MAX_MATCHES, type SqliteVerifier } from "../../src/verification/verify.ts";
import { verificationDrivers } from "../support/drivers.ts";
import { sqliteStore } from "../../src/storage/store.ts";
import { cleanup } from "../support/env.ts";
import { createRecordsFixture, docHashOf, everyKindOfRecord, MASTER_KEY, type FixtureOrg, type PersonKey, type RecordsFixture } from "../support/records-fixture.ts";

const links = { topicMessageUrl: (topicId: string, seq: number) => `http://mirror.test/api/v1/topics/${topicId}/messages/${seq}` };

let fx: RecordsFixture;
let acme: FixtureOrg;
let alice: PersonKey;
/** Every verifyMany on the workers (threshold 0), counting the calls that reached it. */
let pooled: Signer;
let offThreadCalls = 0;
const verifyMany = (calls: readonly VerifyCall[]) => {
  offThreadCalls += calls.length;
  return pooled.verifyMany(calls);
};

beforeAll(async () => {
  fx = createRecordsFixture();
  acme = await fx.createOrg("Acme Certification Ltd");
  alice = fx.createPerson();
  pooled = createSigner({ masterKey: MASTER_KEY, workers: 2, verifyOffThreadAbove: 0 });
});
afterAll(() => {
  pooled.clearCache();
  cleanup();
});

let n = 0;
const freshHash = () => docHashOf(`off thread ${++n} ${Math.random()}`);

/** Every check on this thread, from scratch. */
function onThread(): SqliteVerifier {
  return createVerifier({ ...verificationDrivers(sqliteStore(fx.db)), signer: fx.signer, clock: fx.clock, links, memo: false });
}

describe("signature checks on the workers", () => {
  test("the same answers as on the calling thread, for every kind of record, memo on and off; a promise whenever a check went to a worker", async () => {
    const kinds = everyKindOfRecord(fx, acme, alice, freshHash);
    const hashes = Object.values(kinds);
    const reference = onThread();
    for (const memo of [false, true]) {
      const off = createVerifier({ ...verificationDrivers(sqliteStore(fx.db)), signer: fx.signer, clock: fx.clock, links, verifyMany, ...(memo ? {} : { memo: false as const }) });
      for (const tier of ["public", "organisation"] as const) {
        for (const h of hashes) {
          const expected = reference.verify({ docHash: h, tier });
          const before = offThreadCalls;
          const answer = off.verify({ docHash: h, tier });
          // Only a hash with anchored records to check, and none in a memo, waits for a worker.
          expect(answer instanceof Promise).toBe(offThreadCalls > before);
          expect(await answer).toEqual(expected);
        }
      }
    }
    const invalid = await createVerifier({ ...verificationDrivers(sqliteStore(fx.db)), signer: fx.signer, clock: fx.clock, links, verifyMany, memo: false }).verify({ docHash: kinds.sealChanged, tier: "public" });
    expect(invalid.verdict).toBe("signature_invalid");
    expect(invalid.matches[0]!.checksPerformed).toMatchObject({ hashBinding: "pass", userSignature: "pass", serverSeal: "fail" });
  });

  test(`a hash with more than ${MAX_MATCHES} records: the same matches and verdict`, async () => {
    const hash = freshHash();
    for (let i = 0; i < MAX_MATCHES + 3; i++) fx.addOrgRecord(acme, { docHash: hash, revoked: { reason: "SUPERSEDED" } });
    fx.tamper.seal(fx.addOrgRecord(acme, { docHash: hash }));
    const expected = onThread().verify({ docHash: hash, tier: "organisation" });
    expect(expected.verdict).toBe("signature_invalid");
    const off = createVerifier({ ...verificationDrivers(sqliteStore(fx.db)), signer: fx.signer, clock: fx.clock, links, verifyMany });
    const answer = off.verify({ docHash: hash, tier: "organisation" });
    expect(answer instanceof Promise).toBe(true);
    expect(await answer).toEqual(expected);
  });

  test("the memos answer first: a repeat reaches no worker; after any change the signature memo answers what the record memo forgot", async () => {
    const hash = freshHash();
    fx.addOrgRecord(acme, { docHash: hash });
    const memo = createVerificationMemo({ verify: fx.signer.verify, maxEntries: 1000 });
    const off = createVerifier({ ...verificationDrivers(sqliteStore(fx.db)), signer: fx.signer, clock: fx.clock, links, memo, verifyMany });
    const before = offThreadCalls;
    const first = await off.verify({ docHash: hash, tier: "public" });
    expect(first.verdict).toBe("verified_org");
    expect(offThreadCalls - before).toBe(2);
    const repeat = off.verify({ docHash: hash, tier: "public" });
    expect(repeat instanceof Promise).toBe(false);
    expect(repeat).toEqual(first);
    fx.db.$client.run("UPDATE organisations SET name = name"); // raises the change counter: the record memo starts again
    const hitsBefore = memo.hits;
    const again = off.verify({ docHash: hash, tier: "public" });
    expect(again instanceof Promise).toBe(false);
    expect(again).toEqual(first);
    expect(memo.hits - hitsBefore).toBe(2);
    expect(offThreadCalls - before).toBe(2);
  });

  test("standing is live: an organisation suspended while a verification waits for a worker shows in its answer and in every later one", async () => {
    const hash = freshHash();
    fx.addOrgRecord(acme, { docHash: hash });
    const off = createVerifier({ ...verificationDrivers(sqliteStore(fx.db)), signer: fx.signer, clock: fx.clock, links, verifyMany });
    try {
      const waiting = off.verify({ docHash: hash, tier: "organisation" });
      expect(waiting instanceof Promise).toBe(true);
      await fx.suspend(acme.id, true);
      // A second verification reads under the new counter while the first still waits.
      const second = off.verify({ docHash: hash, tier: "organisation" });
      for (const answer of await Promise.all([waiting, second])) expect(answer.matches[0]!.signerStanding).toBe("suspended");
      expect((await off.verify({ docHash: hash, tier: "organisation" })).matches[0]!.signerStanding).toBe("suspended");
      await fx.suspend(acme.id, false);
      expect((await off.verify({ docHash: hash, tier: "organisation" })).matches[0]!.signerStanding).toBe("good_standing");
    } finally {
      await fx.suspend(acme.id, false);
    }
  });
});
