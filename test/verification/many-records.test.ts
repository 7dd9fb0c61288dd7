/**
 * A hash with more than 100 records (docs/verification.md "Bounded cost per hash"): at most 100
 * matches, earliest consensus first; the verdict still decided over every record; tamper evidence
 * on every record the verdict rests on; and the signature work bounded whatever the number of
 * records. Records are written straight through storage by the fixture (the API would need an
 * anchoring cycle each).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createVerifier, MAX_MATCHES, type SqliteVerifier } from "../../src/verification/verify.ts";
import { verificationDrivers } from "../support/drivers.ts";
import { cleanup } from "../support/env.ts";
import { createRecordsFixture, docHashOf, type FixtureOrg, type PersonKey, type RecordsFixture } from "../support/records-fixture.ts";
import { sqliteStore } from "../../src/storage/store.ts";

const links = { topicMessageUrl: (topicId: string, seq: number) => `http://mirror.test/api/v1/topics/${topicId}/messages/${seq}` };

let fx: RecordsFixture;
let acme: FixtureOrg;
let globex: FixtureOrg;
let alice: PersonKey;

beforeAll(async () => {
  fx = createRecordsFixture();
  acme = await fx.createOrg("Acme Certification Ltd");
  globex = await fx.createOrg("Globex Registry");
  alice = fx.createPerson();
});
afterAll(cleanup);

let n = 0;
const freshHash = () => docHashOf(`many records ${++n} ${Math.random()}`);

function verifier(signer: Pick<RecordsFixture["signer"], "verify"> = fx.signer): SqliteVerifier {
  return createVerifier({ ...verificationDrivers(sqliteStore(fx.db)), signer, clock: fx.clock, links, memo: false });
}

/** `count` revoked records of Acme's for `hash`, each anchored after the one before; their ids. */
function revokedRecords(hash: string, count: number): string[] {
  return Array.from({ length: count }, () => fx.addOrgRecord(acme, { docHash: hash, revoked: { reason: "SUPERSEDED" } }));
}

/** Counts signature verifications. */
function countingSigner() {
  const counter = { calls: 0, verify: (...args: Parameters<RecordsFixture["signer"]["verify"]>) => (counter.calls++, fx.signer.verify(...args)) };
  return counter;
}

describe("more than 100 records for one hash", () => {
  test("at most 100 matches, the earliest by consensus; an active record beyond them still makes it verified_org", () => {
    const hash = freshHash();
    const revoked = revokedRecords(hash, MAX_MATCHES + 5);
    const active = fx.addOrgRecord(globex, { docHash: hash });
    const result = verifier().verify({ docHash: hash, tier: "organisation" });
    expect(result.verdict).toBe("verified_org");
    expect(result.matches).toHaveLength(MAX_MATCHES);
    expect(result.matches.map((m) => m.recordId)).toEqual(revoked.slice(0, MAX_MATCHES));
    expect(result.matches.some((m) => m.recordId === active)).toBe(false);
    expect(result.matches.every((m) => m.status === "revoked" && m.checksPerformed.userSignature === "pass")).toBe(true);
  });

  test("consensus order by instant, not text: a record with a shorter seconds field written last comes first", () => {
    const hash = freshHash();
    const revoked = revokedRecords(hash, MAX_MATCHES + 1);
    const earliest = fx.addOrgRecord(globex, { docHash: hash, consensusAt: "999999999.000000001", revoked: { reason: "OTHER" } });
    const result = verifier().verify({ docHash: hash, tier: "public" });
    expect(result.verdict).toBe("revoked");
    expect(result.matches.map((m) => m.recordId)).toEqual([earliest, ...revoked.slice(0, MAX_MATCHES - 1)]);
  });

  test("rule 2 over every record: an active person-signed record beyond the matches → verified", () => {
    const hash = freshHash();
    revokedRecords(hash, 60);
    const org = fx.addOrgRecord(globex, { docHash: hash });
    revokedRecords(hash, 50);
    const person = fx.addPersonRecord(alice, { docHash: hash });
    const result = verifier().verify({ docHash: hash, tier: "public" });
    expect(result.verdict).toBe("verified");
    expect(result.matches.map((m) => m.recordId)).toContain(org);
    expect(result.matches.map((m) => m.recordId)).not.toContain(person);
  });

  test("tamper evidence: a tampered record beyond the matches that the verdict rests on → signature_invalid", () => {
    const hash = freshHash();
    revokedRecords(hash, MAX_MATCHES + 2);
    const forged = fx.addOrgRecord(globex, { docHash: hash });
    expect(verifier().verify({ docHash: hash, tier: "public" }).verdict).toBe("verified_org");
    fx.tamper.signature(forged);
    const result = verifier().verify({ docHash: hash, tier: "public" });
    expect(result.verdict).toBe("signature_invalid");
    // The matches themselves are sound; the failing record is the one the verdict would rest on.
    expect(result.matches).toHaveLength(MAX_MATCHES);
    expect(result.matches.every((m) => m.checksPerformed.hashBinding === "pass")).toBe(true);
  });

  test("a record moved onto the hash (its stored hash rewritten) beyond the matches cannot make it verified", () => {
    const hash = freshHash();
    revokedRecords(hash, MAX_MATCHES + 1);
    const elsewhere = fx.addOrgRecord(globex, { docHash: freshHash() });
    fx.tamper.docHash(elsewhere, hash);
    expect(verifier().verify({ docHash: hash, tier: "public" }).verdict).toBe("signature_invalid");
  });

  test("a tampered match among the first 100 → signature_invalid, shown on that match", () => {
    const hash = freshHash();
    const ids = revokedRecords(hash, MAX_MATCHES + 3);
    fx.tamper.seal(ids[42]!);
    const result = verifier().verify({ docHash: hash, tier: "public" });
    expect(result.verdict).toBe("signature_invalid");
    expect(result.matches[42]!.checksPerformed.serverSeal).toBe("fail");
  });

  test("rule 5 over more than 100 records: abandoned ones do not count, an accepted one → pending_anchor", () => {
    const hash = freshHash();
    for (let i = 0; i <= MAX_MATCHES; i++) fx.addOrgRecord(acme, { docHash: hash, anchorState: "abandoned" });
    expect(verifier().verify({ docHash: hash, tier: "public" })).toEqual({ verdict: "no_record", matches: [] });
    fx.addOrgRecord(globex, { docHash: hash, anchorState: "accepted", createdAt: fx.clock.now() });
    const result = verifier().verify({ docHash: hash, tier: "public" });
    expect(result.verdict).toBe("pending_anchor");
    expect(result.matches).toEqual([]);
    expect(result.retryAfterSeconds).toBe(5);
  });

  test("bounded: 250 records cost the signature checks 101 do, at most 2 × (100 + 3)", () => {
    const small = freshHash();
    revokedRecords(small, MAX_MATCHES);
    fx.addOrgRecord(globex, { docHash: small });
    const large = freshHash();
    revokedRecords(large, 250);
    fx.addOrgRecord(globex, { docHash: large });
    fx.addPersonRecord(alice, { docHash: large, revoked: { reason: "OTHER" } });

    const a = countingSigner();
    expect(verifier(a).verify({ docHash: small, tier: "public" }).verdict).toBe("verified_org");
    const b = countingSigner();
    const result = verifier(b).verify({ docHash: large, tier: "public" });
    expect(result.verdict).toBe("verified_org");
    expect(result.matches).toHaveLength(MAX_MATCHES);
    // Two signatures (record and seal) per match, and per record a verdict class rests on beyond them.
    expect(a.calls).toBe(2 * (MAX_MATCHES + 1));
    expect(b.calls).toBe(a.calls);
    expect(b.calls).toBeLessThanOrEqual(2 * (MAX_MATCHES + 3));
  });
});
