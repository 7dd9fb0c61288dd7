/**
 * Verdict derivation (docs/verification.md "Verdicts") over records written by the fixture: every
 * verdict, the precedence between several records for one hash, tamper evidence per check,
 * standing, anchor visibility, disclosure tiers field by field, and memoisation on and off.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { createVerificationMemo } from "../../src/crypto/index.ts";
import { records } from "../../src/storage/schema.ts";
import { compareConsensus, consensusToRfc3339 } from "../../src/lib/formats.ts";
import type { ChecksPerformed } from "../../src/verification/types.ts";
import { createVerifier, type SqliteVerifier } from "../../src/verification/verify.ts";
import { retryAfterFor } from "../../src/verification/verdict.ts";
import { CLASS_HEAD_SQL, NEWEST_ACCEPTED_SQL, RECORD_BY_ROWID_SQL, RECORD_HEADS_BY_HASH_SQL, RECORDS_BY_HASH_SQL } from "../../src/storage/sqlite/verification-reads.ts";
import { verificationDrivers } from "../support/drivers.ts";
import { cleanup } from "../support/env.ts";
import { createRecordsFixture, docHashOf, everyKindOfRecord, TOPIC_ID, type FixtureOrg, type PersonKey, type RecordsFixture } from "../support/records-fixture.ts";
import { sqliteStore } from "../../src/storage/store.ts";

const links = { topicMessageUrl: (topicId: string, seq: number) => `http://mirror.test/api/v1/topics/${topicId}/messages/${seq}` };

let fx: RecordsFixture;
let acme: FixtureOrg;
let globex: FixtureOrg;
let alice: PersonKey;

function verifier(options: { memo?: false } = {}): SqliteVerifier {
  return createVerifier({ ...verificationDrivers(sqliteStore(fx.db)), signer: fx.signer, clock: fx.clock, links, ...options });
}

beforeAll(async () => {
  fx = createRecordsFixture();
  acme = await fx.createOrg("Acme Certification Ltd");
  globex = await fx.createOrg("Globex Registry");
  alice = fx.createPerson();
});
afterAll(cleanup);

let n = 0;
const freshHash = () => docHashOf(`document ${++n} ${Math.random()}`);
const PASS: ChecksPerformed = { hashBinding: "pass", userSignature: "pass", serverSeal: "pass", anchorStatus: "anchored" };

describe("each verdict", () => {
  test("no_record for a hash nobody authenticated", () => {
    expect(verifier().verify({ docHash: freshHash(), tier: "public" })).toEqual({ verdict: "no_record", matches: [] });
  });

  test("verified_org: an anchored organisation-signed record, every field", () => {
    const hash = freshHash();
    const signedAtMs = Date.UTC(2026, 0, 15, 9, 30, 0, 123);
    const id = fx.addOrgRecord(acme, { docHash: hash, signedAtMs, sequenceNumber: 42, consensusAt: "1768469403.000000042" });
    const result = verifier().verify({ docHash: hash, tier: "organisation" });
    expect(result).toEqual({
      verdict: "verified_org",
      matches: [
        {
          recordId: id,
          kind: "record_only",
          status: "active",
          recordIssuedAt: "2026-01-15T09:30:00.123Z",
          signerType: "org",
          signerStanding: "good_standing",
          signerOrg: "Acme Certification Ltd",
          checksPerformed: PASS,
          anchor: {
            topicId: TOPIC_ID,
            transactionId: expect.stringMatching(/^0\.0\.2@\d+\.\d{9}$/) as unknown as string,
            sequenceNumber: 42,
            consensusAt: "2026-01-15T09:30:03.000000042Z",
            mirrorNodeUrl: `http://mirror.test/api/v1/topics/${TOPIC_ID}/messages/42`,
          },
        },
      ],
    });
    expect("retryAfterSeconds" in result).toBe(false);
  });

  test("verified: an anchored person-signed record, with its hint; at the organisation tier signerOrg names the organisation the person signed within", () => {
    const hash = freshHash();
    const id = fx.addPersonRecord(alice, { docHash: hash, hint: "Alice Example (identity verified)", orgId: acme.id });
    const result = verifier().verify({ docHash: hash, tier: "organisation" });
    expect(result.verdict).toBe("verified");
    expect(result.matches).toHaveLength(1);
    const m = result.matches[0]!;
    expect(m).toMatchObject({ recordId: id, kind: "pdf_embedded", signerType: "user", status: "active", signerHint: "Alice Example (identity verified)", signerOrg: "Acme Certification Ltd", checksPerformed: PASS });
    expect("revocation" in m).toBe(false);
    expect("signerOrg" in verifier().verify({ docHash: hash, tier: "public" }).matches[0]!).toBe(false);
    // A record with no organisation (none can be made today) names none.
    const orphan = freshHash();
    fx.addPersonRecord(alice, { docHash: orphan, hint: "Alice Example" });
    expect("signerOrg" in verifier().verify({ docHash: orphan, tier: "organisation" }).matches[0]!).toBe(false);
  });

  test("revoked: the match carries the reason and time", () => {
    const hash = freshHash();
    const revokedAt = Date.UTC(2026, 1, 1, 12, 0, 0, 5);
    fx.addOrgRecord(acme, { docHash: hash, revoked: { reason: "SUPERSEDED", atMs: revokedAt } });
    const result = verifier().verify({ docHash: hash, tier: "public" });
    expect(result.verdict).toBe("revoked");
    expect(result.matches[0]).toMatchObject({ status: "revoked", revocation: { reason: "SUPERSEDED", revokedAt: "2026-02-01T12:00:00.005Z" }, checksPerformed: PASS });
  });

  test("pending_anchor: an accepted record, no matches, retryAfterSeconds", () => {
    const hash = freshHash();
    fx.addOrgRecord(acme, { docHash: hash, anchorState: "accepted", createdAt: fx.clock.now() - 1500 });
    expect(verifier().verify({ docHash: hash, tier: "organisation" })).toEqual({ verdict: "pending_anchor", matches: [], retryAfterSeconds: 4 });
  });

  test("signature_invalid: a tampered signature", () => {
    const hash = freshHash();
    const id = fx.addOrgRecord(acme, { docHash: hash });
    fx.tamper.signature(id);
    const result = verifier().verify({ docHash: hash, tier: "public" });
    expect(result.verdict).toBe("signature_invalid");
    expect(result.matches[0]!.checksPerformed).toEqual({ hashBinding: "fail", userSignature: "fail", serverSeal: "fail", anchorStatus: "anchored" });
  });
});

describe("retryAfterSeconds", () => {
  test("counts down to typical finality, then backs off; always at least 1", () => {
    const t = 1_000_000;
    expect(retryAfterFor(t, t)).toBe(5);
    expect(retryAfterFor(t, t + 999)).toBe(5);
    expect(retryAfterFor(t, t + 1000)).toBe(4);
    expect(retryAfterFor(t, t + 4999)).toBe(1);
    expect(retryAfterFor(t, t + 5000)).toBe(2);
    expect(retryAfterFor(t, t + 59_999)).toBe(2);
    expect(retryAfterFor(t, t + 60_000)).toBe(30);
    expect(retryAfterFor(t, t - 10_000)).toBe(5); // clock behind the row: never more than 5, never below 1
  });

  test("uses the newest accepted record for the hash", () => {
    const hash = freshHash();
    fx.addOrgRecord(acme, { docHash: hash, anchorState: "accepted", createdAt: fx.clock.now() - 120_000 });
    fx.addOrgRecord(globex, { docHash: hash, anchorState: "accepted", createdAt: fx.clock.now() - 3_200 });
    expect(verifier().verify({ docHash: hash, tier: "public" }).retryAfterSeconds).toBe(2);
  });
});

describe("anchor states: only anchored records are matches", () => {
  for (const [state, verdict] of [
    ["pending", "no_record"],
    ["accepted", "pending_anchor"],
    ["abandoned", "no_record"],
  ] as const) {
    test(`${state} alone → ${verdict}`, () => {
      const hash = freshHash();
      fx.addOrgRecord(acme, { docHash: hash, anchorState: state });
      const result = verifier().verify({ docHash: hash, tier: "organisation" });
      expect(result.verdict).toBe(verdict);
      expect(result.matches).toEqual([]);
    });
  }

  test("an anchored match wins over an accepted record; the accepted one is not listed", () => {
    const hash = freshHash();
    const anchored = fx.addOrgRecord(acme, { docHash: hash });
    fx.addPersonRecord(alice, { docHash: hash, anchorState: "accepted" });
    const result = verifier().verify({ docHash: hash, tier: "public" });
    expect(result.verdict).toBe("verified_org");
    expect(result.matches.map((m) => m.recordId)).toEqual([anchored]);
  });

  test("a revoked anchored match wins over an accepted record", () => {
    const hash = freshHash();
    fx.addOrgRecord(acme, { docHash: hash, revoked: { reason: "ERROR_IN_DOCUMENT" } });
    fx.addOrgRecord(globex, { docHash: hash, anchorState: "accepted" });
    expect(verifier().verify({ docHash: hash, tier: "public" }).verdict).toBe("revoked");
  });

  test("a record becomes visible when it is anchored, and invisible when abandoned", () => {
    const hash = freshHash();
    const id = fx.addOrgRecord(acme, { docHash: hash, anchorState: "pending" });
    const v = verifier();
    expect(v.verify({ docHash: hash, tier: "public" }).verdict).toBe("no_record");
    fx.setAnchorState(id, "accepted");
    expect(v.verify({ docHash: hash, tier: "public" }).verdict).toBe("pending_anchor");
    fx.setAnchorState(id, "anchored");
    expect(v.verify({ docHash: hash, tier: "public" }).verdict).toBe("verified_org");
  });
});

describe("precedence with several records for one hash", () => {
  test("revoked + active organisation records → verified_org, both listed", () => {
    const hash = freshHash();
    const revoked = fx.addOrgRecord(acme, { docHash: hash, revoked: { reason: "SUPERSEDED" } });
    const active = fx.addOrgRecord(globex, { docHash: hash });
    const result = verifier().verify({ docHash: hash, tier: "organisation" });
    expect(result.verdict).toBe("verified_org");
    expect(result.matches.map((m) => [m.recordId, m.status])).toEqual([
      [revoked, "revoked"],
      [active, "active"],
    ]);
  });

  test("organisation + person records → verified", () => {
    const hash = freshHash();
    fx.addOrgRecord(acme, { docHash: hash });
    fx.addPersonRecord(alice, { docHash: hash });
    expect(verifier().verify({ docHash: hash, tier: "public" }).verdict).toBe("verified");
  });

  test("revoked person record + active organisation record → verified_org", () => {
    const hash = freshHash();
    fx.addPersonRecord(alice, { docHash: hash, revoked: { reason: "KEY_COMPROMISE" } });
    fx.addOrgRecord(acme, { docHash: hash });
    expect(verifier().verify({ docHash: hash, tier: "public" }).verdict).toBe("verified_org");
  });

  test("only revoked records → revoked", () => {
    const hash = freshHash();
    fx.addPersonRecord(alice, { docHash: hash, revoked: { reason: "OTHER" } });
    fx.addOrgRecord(acme, { docHash: hash, revoked: { reason: "SUPERSEDED" } });
    expect(verifier().verify({ docHash: hash, tier: "public" }).verdict).toBe("revoked");
  });

  test("one tampered + one valid → signature_invalid; the valid match still shows pass", () => {
    const hash = freshHash();
    const good = fx.addPersonRecord(alice, { docHash: hash });
    const bad = fx.addOrgRecord(acme, { docHash: hash });
    fx.tamper.seal(bad);
    const result = verifier().verify({ docHash: hash, tier: "public" });
    expect(result.verdict).toBe("signature_invalid");
    const byId = new Map(result.matches.map((m) => [m.recordId, m.checksPerformed]));
    expect(byId.get(good)).toEqual(PASS);
    expect(byId.get(bad)).toEqual({ ...PASS, serverSeal: "fail" });
  });

  test("a tampered revoked record still makes the verdict signature_invalid", () => {
    const hash = freshHash();
    fx.addOrgRecord(globex, { docHash: hash });
    const bad = fx.addOrgRecord(acme, { docHash: hash, revoked: { reason: "SUPERSEDED" } });
    fx.tamper.signature(bad);
    expect(verifier().verify({ docHash: hash, tier: "public" }).verdict).toBe("signature_invalid");
  });
});

describe("match ordering", () => {
  test("earliest consensus first, whatever the insertion order; ties by record id", () => {
    const hash = freshHash();
    const late = fx.addOrgRecord(acme, { docHash: hash, consensusAt: "1768469500.000000001" });
    const early = fx.addOrgRecord(globex, { docHash: hash, consensusAt: "999999999.999999999" }); // fewer digits, earlier
    const tieA = fx.addPersonRecord(alice, { docHash: hash, consensusAt: "1768469400.500000000", id: "01900000-0000-7000-8000-00000000000b" });
    const tieB = fx.addPersonRecord(alice, { docHash: hash, consensusAt: "1768469400.500000000", id: "01900000-0000-7000-8000-00000000000a" });
    expect(verifier().verify({ docHash: hash, tier: "public" }).matches.map((m) => m.recordId)).toEqual([early, tieB, tieA, late]);
  });

  test("consensus text helpers", () => {
    expect(consensusToRfc3339("1768469403.000000042")).toBe("2026-01-15T09:30:03.000000042Z");
    expect(consensusToRfc3339("0.000000000")).toBe("1970-01-01T00:00:00.000000000Z");
    expect(() => consensusToRfc3339("1768469403.42")).toThrow();
    expect(() => consensusToRfc3339("1768469403")).toThrow();
    expect(compareConsensus("9.000000000", "10.000000000")).toBeLessThan(0);
    expect(compareConsensus("10.000000001", "10.000000000")).toBeGreaterThan(0);
    expect(compareConsensus("10.000000000", "10.000000000")).toBe(0);
  });
});

describe("tampering flips the verdict to signature_invalid with the check that failed", () => {
  type Ctx = { id: string; hash: string; person: PersonKey | null };
  const cases: { name: string; tamper: (c: Ctx) => string; person?: boolean; expected: Record<string, string> }[] = [
    {
      name: "stored document hash",
      tamper: ({ id }) => {
        const other = freshHash();
        fx.tamper.docHash(id, other);
        return other;
      },
      expected: { hashBinding: "fail", userSignature: "fail", serverSeal: "fail" },
    },
    { name: "stored signature", tamper: ({ id, hash }) => (fx.tamper.signature(id), hash), expected: { hashBinding: "fail", userSignature: "fail", serverSeal: "fail" } },
    { name: "stored seal signature", tamper: ({ id, hash }) => (fx.tamper.seal(id), hash), expected: { hashBinding: "pass", userSignature: "pass", serverSeal: "fail" } },
    { name: "stored signed time", tamper: ({ id, hash }) => (fx.tamper.signedAt(id), hash), expected: { hashBinding: "fail", userSignature: "fail", serverSeal: "fail" } },
    {
      name: "signer public key (the row keeps its fingerprint)",
      person: true,
      tamper: ({ person, hash }) => (fx.tamper.publicKey(person!.fingerprint), hash),
      expected: { hashBinding: "fail", userSignature: "fail", serverSeal: "pass" },
    },
    {
      name: "signer key relabelled with an algorithm this build does not know",
      person: true,
      tamper: ({ person, hash }) => (fx.tamper.algorithm(person!.fingerprint, "ML-DSA-87"), hash),
      expected: { hashBinding: "fail", userSignature: "fail", serverSeal: "pass" },
    },
    {
      name: "record pointed at another signer key",
      tamper: ({ id, hash }) => (fx.tamper.signerFingerprint(id, globex.systemKey.fingerprint), hash),
      expected: { hashBinding: "fail", userSignature: "fail", serverSeal: "fail" },
    },
  ];

  for (const c of cases) {
    test(c.name, () => {
      const hash = freshHash();
      const person = c.person ? fx.createPerson() : null;
      const id = person ? fx.addPersonRecord(person, { docHash: hash }) : fx.addOrgRecord(acme, { docHash: hash });
      const v = verifier();
      expect(v.verify({ docHash: hash, tier: "public" }).verdict).toBe(person ? "verified" : "verified_org");
      const queried = c.tamper({ id, hash, person });
      v.clearKeyCache(); // key rows are immutable by design; a test that alters one in place says so
      const result = v.verify({ docHash: queried, tier: "public" });
      expect(result.verdict).toBe("signature_invalid");
      expect(result.matches).toHaveLength(1);
      expect(result.matches[0]!.checksPerformed).toEqual({ ...c.expected, anchorStatus: "anchored" } as never);
    });
  }

  test("a missing seal key row fails the seal check", () => {
    const hash = freshHash();
    const id = fx.addOrgRecord(acme, { docHash: hash });
    const other = fx.signer.generateKey("service-seal");
    // Point the record at a seal fingerprint with no key row (foreign keys off for the edit).
    fx.db.$client.run("PRAGMA foreign_keys = OFF");
    try {
      fx.db.update(records).set({ sealFingerprint: Buffer.from(other.fingerprint) }).where(eq(records.id, id)).run();
    } finally {
      fx.db.$client.run("PRAGMA foreign_keys = ON");
    }
    const result = verifier().verify({ docHash: hash, tier: "public" });
    expect(result.verdict).toBe("signature_invalid");
    expect(result.matches[0]!.checksPerformed).toEqual({ ...PASS, serverSeal: "fail" });
  });

  test("a key cache does not hide a signature tampered after the first verification (memo on)", () => {
    const hash = freshHash();
    const id = fx.addOrgRecord(acme, { docHash: hash });
    const v = verifier();
    expect(v.verify({ docHash: hash, tier: "public" }).verdict).toBe("verified_org");
    fx.tamper.signature(id);
    expect(v.verify({ docHash: hash, tier: "public" }).verdict).toBe("signature_invalid");
  });

  test("an anchored row without its anchor data is refused, never vouched for", () => {
    const hash = freshHash();
    const id = fx.addOrgRecord(acme, { docHash: hash });
    fx.db.update(records).set({ consensusAt: null }).where(eq(records.id, id)).run();
    expect(() => verifier().verify({ docHash: hash, tier: "public" })).toThrow(/anchored without/);
  });
});

describe("signer standing", () => {
  test("a suspended organisation's records say suspended; the verdict is unchanged; it is live", async () => {
    const org = await fx.createOrg("Soon Suspended");
    const hash = freshHash();
    fx.addOrgRecord(org, { docHash: hash });
    const personHash = freshHash();
    fx.addPersonRecord(alice, { docHash: personHash, orgId: org.id });
    const v = verifier();
    expect(v.verify({ docHash: hash, tier: "public" }).matches[0]!.signerStanding).toBe("good_standing");
    await fx.suspend(org.id);
    const after = v.verify({ docHash: hash, tier: "organisation" });
    expect(after.verdict).toBe("verified_org");
    expect(after.matches[0]!.signerStanding).toBe("suspended");
    const person = v.verify({ docHash: personHash, tier: "public" });
    expect(person.verdict).toBe("verified");
    expect(person.matches[0]!.signerStanding).toBe("suspended");
    await fx.suspend(org.id, false);
    expect(v.verify({ docHash: hash, tier: "public" }).matches[0]!.signerStanding).toBe("good_standing");
  });

  test("a person-signed record outside any organisation is in good standing", () => {
    const hash = freshHash();
    fx.addPersonRecord(alice, { docHash: hash, orgId: null });
    expect(verifier().verify({ docHash: hash, tier: "public" }).matches[0]!.signerStanding).toBe("good_standing");
  });
});

describe("disclosure tiers", () => {
  test("field by field: public hides only signerOrg, on organisation-signed and person-signed matches", () => {
    const hash = freshHash();
    const acmeRecord = fx.addOrgRecord(acme, { docHash: hash, revoked: { reason: "SUPERSEDED" } });
    const globexRecord = fx.addOrgRecord(globex, { docHash: hash });
    const aliceRecord = fx.addPersonRecord(alice, { docHash: hash, hint: "Alice Example", orgId: globex.id });
    const v = verifier();
    const pub = v.verify({ docHash: hash, tier: "public" });
    const org = v.verify({ docHash: hash, tier: "organisation" });
    expect(pub.verdict).toBe(org.verdict);
    expect(pub.matches).toHaveLength(3);
    const names = new Map([
      [acmeRecord, "Acme Certification Ltd"],
      [globexRecord, "Globex Registry"],
      [aliceRecord, "Globex Registry"],
    ]);
    for (let i = 0; i < 3; i++) {
      const p = pub.matches[i]!;
      const o = org.matches[i]!;
      expect(o.recordId).toBe(p.recordId);
      expect("signerOrg" in p).toBe(false);
      // Whichever organisation signed it, or the person signed within.
      expect(o.signerOrg).toBe(names.get(o.recordId)!);
      if (o.signerType === "user") {
        expect(p.signerHint).toBe("Alice Example");
        expect(o.signerHint).toBe("Alice Example");
      }
      const { signerOrg: _ignored, ...rest } = o;
      expect(rest).toEqual(p);
      expect(Object.keys(p)).toEqual(Object.keys(o).filter((k) => k !== "signerOrg"));
    }
  });
});

describe("memoisation", () => {
  test("memo on and off give the same answers for every kind of record", () => {
    const hashes = Object.values(everyKindOfRecord(fx, acme, alice, freshHash));
    const memo = createVerificationMemo({ verify: fx.signer.verify, maxEntries: 1000 });
    const on = createVerifier({ ...verificationDrivers(sqliteStore(fx.db)), signer: fx.signer, clock: fx.clock, links, memo });
    const off = verifier({ memo: false });
    for (const tier of ["public", "organisation"] as const) {
      for (const h of hashes) {
        const a = on.verify({ docHash: h, tier });
        expect(on.verify({ docHash: h, tier })).toEqual(a);
        expect(off.verify({ docHash: h, tier })).toEqual(a);
      }
    }
    // Repeats were answered by the record memo, before the signature memo was asked.
    expect(memo.hits).toBe(0);
    expect(memo.misses).toBeGreaterThan(0);
    // Once the change counter moves, records are read whole again and the signature memo answers.
    fx.db.$client.run("UPDATE organisations SET name = name");
    for (const h of hashes) expect(on.verify({ docHash: h, tier: "public" })).toEqual(off.verify({ docHash: h, tier: "public" }));
    expect(memo.hits).toBeGreaterThan(0);
  });

  test("memo off really verifies every time", () => {
    const hash = freshHash();
    fx.addOrgRecord(acme, { docHash: hash });
    let calls = 0;
    const counting = { verify: (...args: Parameters<typeof fx.signer.verify>) => (calls++, fx.signer.verify(...args)) };
    const off = createVerifier({ ...verificationDrivers(sqliteStore(fx.db)), signer: counting, clock: fx.clock, links, memo: false });
    off.verify({ docHash: hash, tier: "public" });
    off.verify({ docHash: hash, tier: "public" });
    expect(calls).toBe(4); // signature and seal, twice
    const on = createVerifier({ ...verificationDrivers(sqliteStore(fx.db)), signer: counting, clock: fx.clock, links });
    calls = 0;
    on.verify({ docHash: hash, tier: "public" });
    on.verify({ docHash: hash, tier: "public" });
    expect(calls).toBe(2);
  });

  test("a verify that throws is a failed check, not a crash", () => {
    const hash = freshHash();
    fx.addOrgRecord(acme, { docHash: hash });
    const throwing = {
      verify: () => {
        throw new Error("boom");
      },
    };
    const v = createVerifier({ ...verificationDrivers(sqliteStore(fx.db)), signer: throwing, clock: fx.clock, links, memo: false });
    const result = v.verify({ docHash: hash, tier: "public" });
    expect(result.verdict).toBe("signature_invalid");
    expect(result.matches[0]!.checksPerformed).toEqual({ hashBinding: "fail", userSignature: "fail", serverSeal: "fail", anchorStatus: "anchored" });
  });
});

describe("query plans", () => {
  const details = (sql: string, ...args: (string | number)[]) => (fx.db.$client.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { detail: string }[]).map((p) => p.detail);
  const plan = (sql: string, ...args: (string | number)[]) => details(sql, ...args).filter((d) => /^(SEARCH|SCAN) records\b/.test(d));

  test("every lookup by hash searches the records_doc_hash index; a large hash's rows are read whole only by rowid", () => {
    expect(plan(RECORDS_BY_HASH_SQL, "x")).toEqual(["SEARCH records USING INDEX records_doc_hash (doc_hash=?)"]);
    expect(plan(RECORD_HEADS_BY_HASH_SQL, "x")).toEqual(["SEARCH records USING COVERING INDEX records_doc_hash (doc_hash=?)"]);
    expect(plan(RECORD_BY_ROWID_SQL, 1)).toEqual(["SEARCH records USING INTEGER PRIMARY KEY (rowid=?)"]);
    expect(plan(NEWEST_ACCEPTED_SQL, "x")).toEqual(["SEARCH records USING COVERING INDEX records_doc_hash (doc_hash=?)"]);
  });

  test("a large hash's class heads are one range read of records_anchored_by_class: covering, in index order, no scan", () => {
    for (const verdictClass of [0, 1, 2]) {
      const all = details(CLASS_HEAD_SQL, "x", verdictClass);
      expect(all).toEqual(["SEARCH records USING COVERING INDEX records_anchored_by_class (doc_hash=? AND <expr>=?)"]);
      expect(all.some((d) => d.includes("TEMP B-TREE") || d.startsWith("SCAN"))).toBe(false);
    }
  });
});
