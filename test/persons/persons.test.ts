/**
 * The persons capability (docs/admin.md "Persons"): adding, listing and suspending persons, each
 * audited in its transaction; enrolment links shown once, stored as digests, single use, 24 hours,
 * replaced by a newer link; and a suspended person's standing in verification.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { listAudit } from "../../src/keys/audit.ts";
import { createEnrolments, createPersons, ENROLMENT_TTL_MS, EnrolmentTokenError, tokenDigest, type EnrolmentRefusal, type Enrolments, type Persons } from "../../src/persons/persons.ts";
import { DomainError } from "../../src/lib/errors.ts";
import { organisations as organisationsTable, persons as personsTable } from "../../src/storage/schema.ts";
import { createVerifier } from "../../src/verification/verify.ts";
import { verificationDrivers } from "../support/drivers.ts";
import { cleanup } from "../support/env.ts";
import { createRecordsFixture, docHashOf, type FixtureOrg, type RecordsFixture } from "../support/records-fixture.ts";
import { sqliteStore } from "../../src/storage/store.ts";

afterAll(cleanup);

const PUBLIC_URL = "https://verify.example.org";
const LINK_RE = /^https:\/\/verify\.example\.org\/enrol\/([A-Za-z0-9_-]{43})$/;

let fx: RecordsFixture;
let persons: Persons;
let enrolments: Enrolments;
let acme: FixtureOrg;

beforeAll(async () => {
  fx = createRecordsFixture();
  persons = createPersons({ store: fx.store, clock: fx.clock, publicUrl: PUBLIC_URL });
  enrolments = createEnrolments({ store: fx.store, clock: fx.clock });
  acme = await fx.createOrg("Acme Certification Ltd");
});

const valid = () => ({ orgId: acme.id, name: "Alice Example", email: "alice@example.org", identity: "Passport, number ending 4821, seen in person by J. Smith" });
const tokenOf = (url: string) => LINK_RE.exec(url)![1]!;
const allRows = () => fx.db.$client.query("SELECT * FROM persons").all();
const enrolmentRows = () => fx.db.$client.query("SELECT * FROM enrolments").all() as { token_digest: Uint8Array; person_id: string; expires_at: number; used_at: number | null }[];

async function refusal(fn: () => unknown): Promise<EnrolmentRefusal> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof EnrolmentTokenError) return e.reason;
    throw e;
  }
  throw new Error("not refused");
}

async function validationField(fn: () => Promise<unknown>): Promise<string> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof DomainError && e.code === "VALIDATION_FAILED") return Object.keys(e.details ?? {}).join(",");
    throw e;
  }
  throw new Error("not refused");
}

describe("add", () => {
  test("adds the person, issues a 24-hour link, stores only the token's digest, audits both in the change's transaction", async () => {
    const auditBefore = (await listAudit(fx.store)).length;
    const { person, link } = await persons.add(valid(), "alice-admin");
    expect(person).toMatchObject({ orgId: acme.id, name: "Alice Example", email: "alice@example.org", suspended: false, keyFingerprint: null, enrolledAt: null });
    expect(link.personId).toBe(person.id);
    expect(link.expiresAt).toBe(fx.clock.now() + ENROLMENT_TTL_MS);
    const token = tokenOf(link.enrolUrl);
    expect(Buffer.from(token, "base64url").length).toBe(32);

    const rows = enrolmentRows().filter((r) => r.person_id === person.id);
    expect(rows.length).toBe(1);
    expect(Buffer.from(rows[0]!.token_digest).equals(tokenDigest(token))).toBe(true);
    // The token is nowhere in the database file's tables, nor in the audit trail.
    const everything = JSON.stringify([allRows(), enrolmentRows().map((r) => ({ ...r, token_digest: Buffer.from(r.token_digest).toString("hex") })), await listAudit(fx.store)]);
    expect(everything).not.toContain(token);
    expect(everything).not.toContain(Buffer.from(token, "base64url").toString("hex"));

    const audit = (await listAudit(fx.store)).slice(0, (await listAudit(fx.store)).length - auditBefore).reverse();
    expect(audit.map((a) => [a.action, a.subjectType, a.subjectId, a.actor])).toEqual([
      ["person.add", "person", person.id, "alice-admin"],
      ["person.link", "person", person.id, "alice-admin"],
    ]);
    expect(JSON.parse(audit[0]!.after!)).toMatchObject({ name: "Alice Example", email: "alice@example.org", identityEvidence: valid().identity });
    expect(JSON.parse(audit[1]!.after!)).toEqual({ expiresAt: link.expiresAt });
    expect(JSON.stringify(audit)).not.toContain(Buffer.from(tokenDigest(token)).toString("hex"));
  });

  test("two links are never the same", async () => {
    const a = (await persons.add({ ...valid(), name: "Bob" }, "admin")).link.enrolUrl;
    const b = (await persons.add({ ...valid(), name: "Carol" }, "admin")).link.enrolUrl;
    expect(a).not.toBe(b);
  });

  test("an unknown organisation is NOT_FOUND and nothing is written", async () => {
    const [p, a] = [allRows().length, (await listAudit(fx.store, 1000)).length];
    await expect(persons.add({ ...valid(), orgId: "no-such-org" }, "admin")).rejects.toThrow(new DomainError("NOT_FOUND", "No organisation no-such-org."));
    expect([allRows().length, (await listAudit(fx.store, 1000)).length]).toEqual([p, a]);
  });

  const bad: [string, Partial<ReturnType<typeof valid>>, string][] = [
    ["an empty name", { name: "  " }, "name"],
    ["a name with a control character", { name: "Alice\u0007" }, "name"],
    ["a name with a bidirectional override", { name: "Alice\u202e" }, "name"],
    ["a name of 201 characters", { name: "a".repeat(201) }, "name"],
    ["an empty email", { email: "" }, "email"],
    ["an email without @", { email: "alice.example.org" }, "email"],
    ["an email with two @", { email: "alice@bob@example.org" }, "email"],
    ["an email with nothing before @", { email: "@example.org" }, "email"],
    ["an email with nothing after @", { email: "alice@" }, "email"],
    ["an email with a space", { email: "alice @example.org" }, "email"],
    ["an email with a newline", { email: "alice@example.org\nBcc: x@y" }, "email"],
    ["an email of 255 characters", { email: `${"a".repeat(243)}@example.org` }, "email"],
    ["empty identity evidence", { identity: " " }, "identity"],
    ["identity evidence of 501 characters", { identity: "x".repeat(501) }, "identity"],
    ["identity evidence with a newline", { identity: "Passport\nforged line" }, "identity"],
    ["identity evidence with a control character", { identity: "Passport\u001b[31m" }, "identity"],
  ];
  for (const [what, change, field] of bad) {
    test(`${what} is refused on ${field}, nothing written`, async () => {
      const [p, e] = [allRows().length, enrolmentRows().length];
      expect(await validationField(() => persons.add({ ...valid(), ...change }, "admin"))).toBe(field);
      expect([allRows().length, enrolmentRows().length]).toEqual([p, e]);
    });
  }

  test("the bounds themselves are accepted: a 254-character email, 500 characters of evidence", async () => {
    const { person } = await persons.add({ ...valid(), email: `${"a".repeat(242)}@example.org`, identity: "é".repeat(500) }, "admin");
    expect(person.email.length).toBe(254);
    expect([...person.identityEvidence].length).toBe(500);
  });
});

describe("list", () => {
  test("all persons, or one organisation's; an unknown organisation is NOT_FOUND", async () => {
    const globex = await fx.createOrg("Globex Registry");
    const { person: gina } = await persons.add({ ...valid(), orgId: globex.id, name: "Gina" }, "admin");
    expect((await persons.list({ orgId: globex.id })).map((p) => p.id)).toEqual([gina.id]);
    expect((await persons.list({ orgId: acme.id })).every((p) => p.orgId === acme.id)).toBe(true);
    expect((await persons.list()).map((p) => p.id)).toContain(gina.id);
    expect((await persons.list()).length).toBe((await persons.list({ orgId: acme.id })).length + 1);
    await expect(persons.list({ orgId: "nope" })).rejects.toThrow(new DomainError("NOT_FOUND", "No organisation nope."));
  });
});

describe("suspend", () => {
  test("suspends once, audited; again changes nothing and writes no audit row; unknown is NOT_FOUND", async () => {
    const { person } = await persons.add({ ...valid(), name: "Dan" }, "admin");
    const before = (await listAudit(fx.store, 1000)).length;
    expect((await persons.suspend(person.id, "root")).suspended).toBe(true);
    expect((await persons.get(person.id)).suspended).toBe(true);
    const audit = await listAudit(fx.store, 1000);
    expect(audit.length).toBe(before + 1);
    expect(audit[0]).toMatchObject({ action: "person.suspend", subjectType: "person", subjectId: person.id, actor: "root" });
    expect(JSON.parse(audit[0]!.before!).suspended).toBe(false);
    expect(JSON.parse(audit[0]!.after!).suspended).toBe(true);

    expect((await persons.suspend(person.id, "root")).suspended).toBe(true);
    expect((await listAudit(fx.store, 1000)).length).toBe(before + 1);
    await expect(persons.suspend("nope", "root")).rejects.toThrow(new DomainError("NOT_FOUND", "No person nope."));
  });
});

describe("enrolment links and redeemEnrolment", () => {
  test("a link redeems once; the second time it is used", async () => {
    const { person, link } = await persons.add({ ...valid(), name: "Erin" }, "admin");
    const token = tokenOf(link.enrolUrl);
    expect((await enrolments.redeemEnrolment(token, fx.clock.now())).id).toBe(person.id);
    const row = enrolmentRows().find((r) => r.person_id === person.id)!;
    expect(row.used_at).toBe(fx.clock.now());
    expect(await refusal(() => enrolments.redeemEnrolment(token, fx.clock.now()))).toBe("used");
  });

  test("a link is good until 24 hours after issue, then expired and still unused", async () => {
    const { person, link } = await persons.add({ ...valid(), name: "Frank" }, "admin");
    const token = tokenOf(link.enrolUrl);
    expect(await refusal(() => enrolments.redeemEnrolment(token, link.expiresAt))).toBe("expired");
    expect(await refusal(() => enrolments.redeemEnrolment(token, link.expiresAt + 60_000))).toBe("expired");
    expect(enrolmentRows().find((r) => r.person_id === person.id)!.used_at).toBeNull();
    expect((await enrolments.redeemEnrolment(token, link.expiresAt - 1)).id).toBe(person.id);
  });

  test("unknown, malformed and altered tokens are unknown", async () => {
    const { link } = await persons.add({ ...valid(), name: "Gus" }, "admin");
    const token = tokenOf(link.enrolUrl);
    const altered = (token[0] === "A" ? "B" : "A") + token.slice(1);
    for (const t of ["", "short", altered, token + "A", token.slice(0, 42) + "=", "../" + token.slice(3), Buffer.alloc(32).toString("base64url")]) {
      expect(await refusal(() => enrolments.redeemEnrolment(t, fx.clock.now()))).toBe("unknown");
    }
    // still good: the refusals changed nothing
    expect((await enrolments.redeemEnrolment(token, fx.clock.now())).name).toBe("Gus");
  });

  test("a refusal carries a code the transport maps and a message for the person", async () => {
    try {
      await enrolments.redeemEnrolment("nope", fx.clock.now());
      throw new Error("not refused");
    } catch (e) {
      expect(e).toBeInstanceOf(DomainError);
      expect((e as DomainError).code).toBe("NOT_FOUND");
      expect((e as DomainError).message).toContain("Ask your administrator");
    }
  });

  test("a second link replaces the first: the first then refuses as expired, the second works", async () => {
    const { person, link: first } = await persons.add({ ...valid(), name: "Hana" }, "admin");
    fx.clock.advance(1000);
    const second = await persons.issueLink(person.id, "admin");
    expect(second.enrolUrl).not.toBe(first.enrolUrl);
    expect(second.expiresAt).toBe(fx.clock.now() + ENROLMENT_TTL_MS);
    expect(await refusal(() => enrolments.redeemEnrolment(tokenOf(first.enrolUrl), fx.clock.now()))).toBe("expired");
    expect((await enrolments.redeemEnrolment(tokenOf(second.enrolUrl), fx.clock.now())).id).toBe(person.id);
    expect((await listAudit(fx.store, 1000)).filter((a) => a.subjectId === person.id).map((a) => a.action)).toEqual(["person.link", "person.link", "person.add"]);
  });

  test("a suspended person's link refuses as suspended; no new link for a suspended person; an enrolled person's older link is spent, a new one re-enrols; unknown person NOT_FOUND", async () => {
    const { person, link } = await persons.add({ ...valid(), name: "Ivan" }, "admin");
    await persons.suspend(person.id, "admin");
    expect(await refusal(() => enrolments.redeemEnrolment(tokenOf(link.enrolUrl), fx.clock.now()))).toBe("suspended");
    expect(enrolmentRows().find((r) => r.person_id === person.id)!.used_at).toBeNull();
    await expect(persons.issueLink(person.id, "admin")).rejects.toThrow(new DomainError("FORBIDDEN", `Person ${person.id} is suspended.`));

    const { person: enrolled, link: spare } = await persons.add({ ...valid(), name: "Jo" }, "admin");
    fx.db.update(personsTable).set({ enrolledAt: fx.clock.now() }).where(eq(personsTable.id, enrolled.id)).run();
    expect(await refusal(() => enrolments.redeemEnrolment(tokenOf(spare.enrolUrl), fx.clock.now()))).toBe("used");
    fx.clock.advance(1);
    const reenrol = await persons.issueLink(enrolled.id, "admin");
    expect((await enrolments.redeemEnrolment(tokenOf(reenrol.enrolUrl), fx.clock.now())).id).toBe(enrolled.id);
    await expect(persons.issueLink("nope", "admin")).rejects.toThrow(new DomainError("NOT_FOUND", "No person nope."));
  });
});

describe("re-enrolment links", () => {
  test("refused (FORBIDDEN), nothing issued, while the person's key is not yet announced on their organisation's topic; issued once it is", async () => {
    const org = await fx.createOrg("Topical Ltd");
    fx.db.update(organisationsTable).set({ topicId: "0.0.4242" }).where(eq(organisationsTable.id, org.id)).run();
    const { person } = await persons.add({ ...valid(), orgId: org.id, name: "Rex Reenrol" }, "admin");
    const key = fx.createPerson();
    fx.db.$client.query("UPDATE signing_keys SET purpose = ? WHERE fingerprint = ?").run(`person:${person.id}`, key.fingerprint);
    fx.db.update(personsTable).set({ keyFingerprint: Buffer.from(key.fingerprint), enrolledAt: fx.clock.now() }).where(eq(personsTable.id, person.id)).run();
    const links = () => enrolmentRows().filter((r) => r.person_id === person.id).length;
    const before = links();
    await expect(persons.issueLink(person.id, "admin")).rejects.toThrow(/is not announced on the ledger yet/);
    expect(links()).toBe(before);
    const seal = fx.db.$client.query("SELECT fingerprint FROM signing_keys WHERE purpose = 'service-seal' AND retired_at IS NULL").get() as { fingerprint: Uint8Array };
    fx.db.$client
      .query(
        `INSERT INTO ledger_transactions (transaction_id, kind, org_id, topic_id, message, key_fingerprint, seal_fingerprint, valid_start_ms, valid_seconds, state, next_attempt_at, created_at, updated_at)
         VALUES ('0.0.2@1.1', 'key_announcement', ?, '0.0.4242', x'7b7d', ?, ?, 1, 30, 'anchored', 1, 1, 1)`,
      )
      .run(org.id, key.fingerprint, seal.fingerprint);
    fx.clock.advance(1);
    expect((await persons.issueLink(person.id, "admin")).personId).toBe(person.id);
    expect(links()).toBe(before + 1);
  });
});

describe("a suspended person's standing in verification", () => {
  test("their records report signerStanding suspended at both tiers, read per request; others keep good standing", async () => {
    const verifier = createVerifier({ ...verificationDrivers(sqliteStore(fx.db)), signer: fx.signer, clock: fx.clock, links: { topicMessageUrl: (t, n) => `http://mirror.test/${t}/${n}` } });
    const keyA = fx.createPerson();
    const keyB = fx.createPerson();
    const { person: a } = await persons.add({ ...valid(), name: "Kim Signer" }, "admin");
    const { person: b } = await persons.add({ ...valid(), name: "Lee Signer" }, "admin");
    // Enrolment (a later slice) stores the person's key fingerprint; set it as it will.
    fx.db.update(personsTable).set({ keyFingerprint: Buffer.from(keyA.fingerprint), enrolledAt: fx.clock.now() }).where(eq(personsTable.id, a.id)).run();
    fx.db.update(personsTable).set({ keyFingerprint: Buffer.from(keyB.fingerprint), enrolledAt: fx.clock.now() }).where(eq(personsTable.id, b.id)).run();
    const hash = docHashOf("persons: standing");
    const recA = fx.addPersonRecord(keyA, { docHash: hash, hint: "Kim Signer", orgId: acme.id });
    const recB = fx.addPersonRecord(keyB, { docHash: hash, hint: "Lee Signer" });
    const orgHash = docHashOf("persons: org record");
    fx.addOrgRecord(acme, { docHash: orgHash });

    const standings = (tier: "public" | "organisation") => {
      const answer = verifier.verify({ docHash: hash, tier });
      return { verdict: answer.verdict, standings: answer.matches.map((m) => [m.recordId, m.signerStanding, m.signerHint]) };
    };
    for (const tier of ["public", "organisation"] as const) {
      expect(standings(tier)).toEqual({ verdict: "verified", standings: [[recA, "good_standing", "Kim Signer"], [recB, "good_standing", "Lee Signer"]] });
    }
    await persons.suspend(a.id, "admin");
    for (const tier of ["public", "organisation"] as const) {
      // The records stay valid: the verdict and checks do not change, only the standing.
      expect(standings(tier)).toEqual({ verdict: "verified", standings: [[recA, "suspended", "Kim Signer"], [recB, "good_standing", "Lee Signer"]] });
      const m = verifier.verify({ docHash: hash, tier }).matches[0]!;
      expect(m.checksPerformed).toMatchObject({ hashBinding: "pass", userSignature: "pass", serverSeal: "pass" });
      // The organisation's own records are not the person's: still in good standing.
      expect(verifier.verify({ docHash: orgHash, tier }).matches.map((x) => x.signerStanding)).toEqual(["good_standing"]);
    }
  });
});
