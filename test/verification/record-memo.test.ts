/**
 * The record memo and the standing kept between requests (src/verification/verify.ts;
 * docs/verification.md "Checks"): a record's signature checks are answered from memory only while
 * the change counter read with the record is the one they were computed under, and only for the
 * inputs the row holds now; any change, from any connection, is seen by the next verification.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { createVerificationMemo } from "../../src/crypto/index.ts";
import { createVerifier } from "../../src/verification/verify.ts";
import { RECORD_MEMO_TTL_MS } from "../../src/verification/caches.ts";
import { RECORD_HEADS_BY_HASH_SQL } from "../../src/storage/sqlite/verification-reads.ts";
import { verificationDrivers } from "../support/drivers.ts";
import { cleanup, onCleanup } from "../support/env.ts";
import { createRecordsFixture, docHashOf, type FixtureOrg, type RecordsFixture } from "../support/records-fixture.ts";
import { sqliteStore } from "../../src/storage/store.ts";

const links = { topicMessageUrl: (topicId: string, seq: number) => `http://mirror.test/api/v1/topics/${topicId}/messages/${seq}` };
let fx: RecordsFixture;
let acme: FixtureOrg;
beforeAll(async () => {
  fx = createRecordsFixture();
  acme = await fx.createOrg("Acme Certification Ltd");
});
afterAll(cleanup);

let n = 0;
const freshHash = () => docHashOf(`record memo ${++n} ${Math.random()}`);

/** A verifier whose signature memo and real verifications are counted. */
function counted() {
  let verifications = 0;
  const signer = { verify: (...args: Parameters<typeof fx.signer.verify>) => (verifications++, fx.signer.verify(...args)) };
  const memo = createVerificationMemo({ verify: signer.verify, maxEntries: 1000 });
  const verifier = createVerifier({ ...verificationDrivers(sqliteStore(fx.db)), signer, clock: fx.clock, links, memo });
  return { verifier, memo, verifications: () => verifications };
}

/** Another connection to the fixture's database file, as an operator's sqlite3 would have. */
function otherConnection(): Database {
  const file = (fx.db.$client.query("PRAGMA database_list").get() as { file: string }).file;
  const other = new Database(file);
  other.run("PRAGMA busy_timeout = 5000");
  onCleanup(() => other.close());
  return other;
}

describe("the record memo", () => {
  test("a second verification of a record neither verifies nor hashes its signatures again", () => {
    const hash = freshHash();
    fx.addOrgRecord(acme, { docHash: hash });
    const { verifier, memo, verifications } = counted();
    const first = verifier.verify({ docHash: hash, tier: "public" });
    expect(first.verdict).toBe("verified_org");
    expect(verifications()).toBe(2);
    const lookups = memo.hits + memo.misses;
    expect(verifier.verify({ docHash: hash, tier: "public" })).toEqual(first);
    expect(verifications()).toBe(2);
    expect(memo.hits + memo.misses).toBe(lookups); // answered before the signature memo
  });

  test("its hot read skips the signature columns and stays on the hash index", () => {
    expect(RECORD_HEADS_BY_HASH_SQL).not.toMatch(/\bsignature\b|\bseal_signature\b/);
    // Finalized at once: an EXPLAIN statement left prepared keeps bun:sqlite's connection in its
    // read snapshot after later statements, and the tests below write from another connection.
    const explain = fx.db.$client.prepare(`EXPLAIN QUERY PLAN ${RECORD_HEADS_BY_HASH_SQL}`);
    const plan = (explain.all("x") as { detail: string }[]).map((p) => p.detail);
    explain.finalize();
    // Read from the covering index alone: no table row, so no overflow page of its signatures.
    expect(plan).toContain("SEARCH records USING COVERING INDEX records_doc_hash (doc_hash=?)");
    expect(plan.some((d) => d.startsWith("SCAN records"))).toBe(false);
  });

  for (const [what, tamper] of [
    ["its signature", (id: string) => fx.tamper.signature(id)],
    ["its seal", (id: string) => fx.tamper.seal(id)],
    ["its signed time", (id: string) => fx.tamper.signedAt(id)],
  ] as const) {
    test(`${what} changed after a verification is seen by the next one`, () => {
      const hash = freshHash();
      const id = fx.addOrgRecord(acme, { docHash: hash });
      const { verifier } = counted();
      expect(verifier.verify({ docHash: hash, tier: "public" }).verdict).toBe("verified_org");
      tamper(id);
      expect(verifier.verify({ docHash: hash, tier: "public" }).verdict).toBe("signature_invalid");
    });
  }

  test("a signature changed on another connection is seen by the next verification", () => {
    const hash = freshHash();
    const id = fx.addOrgRecord(acme, { docHash: hash });
    const { verifier } = counted();
    expect(verifier.verify({ docHash: hash, tier: "public" }).verdict).toBe("verified_org");
    otherConnection().query("UPDATE records SET seal_signature = zeroblob(length(seal_signature)) WHERE id = ?").run(id);
    const after = verifier.verify({ docHash: hash, tier: "public" });
    expect(after.verdict).toBe("signature_invalid");
    expect(after.matches[0]!.checksPerformed.serverSeal).toBe("fail");
  });

  test("a public key changed in place is seen by the next verification", () => {
    const hash = freshHash();
    fx.addOrgRecord(acme, { docHash: hash });
    const { verifier } = counted();
    expect(verifier.verify({ docHash: hash, tier: "public" }).verdict).toBe("verified_org");
    fx.tamper.publicKey(acme.systemKey.fingerprint);
    expect(verifier.verify({ docHash: hash, tier: "public" }).verdict).toBe("signature_invalid");
    fx.tamper.publicKey(acme.systemKey.fingerprint); // flipped back
    expect(verifier.verify({ docHash: hash, tier: "public" }).verdict).toBe("verified_org");
  });

  test("a writer that bypasses the triggers is seen once the entry expires, after RECORD_MEMO_TTL_MS", () => {
    const hash = freshHash();
    const id = fx.addOrgRecord(acme, { docHash: hash });
    const { verifier } = counted();
    expect(verifier.verify({ docHash: hash, tier: "public" }).verdict).toBe("verified_org");
    const other = otherConnection();
    const trigger = (other.query("SELECT sql FROM sqlite_master WHERE name = 'records_checked_columns_changed'").get() as { sql: string }).sql;
    other.run("DROP TRIGGER records_checked_columns_changed");
    try {
      other.query("UPDATE records SET signature = zeroblob(length(signature)) WHERE id = ?").run(id);
      // Within the entry's life the memo still answers (this is the bound the TTL sets) ...
      expect(verifier.verify({ docHash: hash, tier: "public" }).verdict).toBe("verified_org");
      fx.clock.advance(RECORD_MEMO_TTL_MS);
      // ... and once it expires the signatures are verified again.
      expect(verifier.verify({ docHash: hash, tier: "public" }).verdict).toBe("signature_invalid");
    } finally {
      other.run(trigger);
    }
  });

  test("revocation and anchoring are read afresh on every verification, without re-verifying", () => {
    const hash = freshHash();
    const id = fx.addOrgRecord(acme, { docHash: hash });
    const { verifier, verifications } = counted();
    expect(verifier.verify({ docHash: hash, tier: "public" }).verdict).toBe("verified_org");
    fx.db.$client.query("UPDATE records SET revoked_at = ?, revocation_reason = 'SUPERSEDED' WHERE id = ?").run(fx.clock.now(), id);
    const revoked = verifier.verify({ docHash: hash, tier: "public" });
    expect(revoked.verdict).toBe("revoked");
    expect(revoked.matches[0]!.revocation?.reason).toBe("SUPERSEDED");
    expect(verifications()).toBe(2);
  });

  test("a record revoked by another process, as an operator's sqlite3 would, is seen by the next verification", () => {
    const hash = freshHash();
    const id = fx.addOrgRecord(acme, { docHash: hash });
    const { verifier } = counted();
    // Twice: the second is answered from the heads kept while nothing was committed.
    expect(verifier.verify({ docHash: hash, tier: "public" }).verdict).toBe("verified_org");
    expect(verifier.verify({ docHash: hash, tier: "public" }).verdict).toBe("verified_org");
    const file = (fx.db.$client.query("PRAGMA database_list").get() as { file: string }).file;
    const sql = `UPDATE records SET revoked_at = ${fx.clock.now()}, revocation_reason = 'SUPERSEDED' WHERE id = '${id}'`;
    const p = Bun.spawnSync([process.execPath, "-e", `const { Database } = require("bun:sqlite"); const db = new Database(${JSON.stringify(file)}); db.run("PRAGMA busy_timeout = 5000"); db.run(${JSON.stringify(sql)}); db.close();`], { stderr: "pipe" });
    expect(p.exitCode, p.stderr.toString()).toBe(0);
    expect(verifier.verify({ docHash: hash, tier: "public" }).verdict).toBe("revoked");
  });

  test("memo off: every verification verifies both signatures again", () => {
    const hash = freshHash();
    fx.addOrgRecord(acme, { docHash: hash });
    let calls = 0;
    const signer = { verify: (...args: Parameters<typeof fx.signer.verify>) => (calls++, fx.signer.verify(...args)) };
    const off = createVerifier({ ...verificationDrivers(sqliteStore(fx.db)), signer, clock: fx.clock, links, memo: false });
    for (let i = 0; i < 3; i++) off.verify({ docHash: hash, tier: "public" });
    expect(calls).toBe(6);
  });
});

describe("standing kept between verifications", () => {
  test("an organisation suspended or renamed on another connection is seen by the next verification", async () => {
    const org = await fx.createOrg("Initech Registry");
    const hash = freshHash();
    fx.addOrgRecord(org, { docHash: hash });
    const { verifier } = counted();
    expect(verifier.verify({ docHash: hash, tier: "organisation" }).matches[0]).toMatchObject({ signerStanding: "good_standing", signerOrg: "Initech Registry" });
    otherConnection().query("UPDATE organisations SET suspended = 1, name = 'Initech Holdings' WHERE id = ?").run(org.id);
    expect(verifier.verify({ docHash: hash, tier: "organisation" }).matches[0]).toMatchObject({ signerStanding: "suspended", signerOrg: "Initech Holdings" });
  });

  test("a person suspended is seen by the next verification of what they signed", () => {
    const person = fx.createPerson();
    fx.db.$client
      .query("INSERT INTO persons (id, org_id, name, email, identity_evidence, key_fingerprint, created_at) VALUES (?, ?, 'Alice Example', 'alice@example.org', 'passport', ?, 1)")
      .run(person.personId, acme.id, person.fingerprint);
    const hash = freshHash();
    fx.addPersonRecord(person, { docHash: hash, orgId: acme.id });
    const { verifier } = counted();
    expect(verifier.verify({ docHash: hash, tier: "public" }).matches[0]!.signerStanding).toBe("good_standing");
    fx.db.$client.query("UPDATE persons SET suspended = 1 WHERE key_fingerprint = ?").run(person.fingerprint);
    expect(verifier.verify({ docHash: hash, tier: "public" }).matches[0]!.signerStanding).toBe("suspended");
  });
});
