/**
 * A person's key over its life (docs/persons.md "Re-enrolment", docs/signing.md "Key lifecycle"),
 * in-process against the embedded local ledger with a software authenticator: re-enrolment
 * replaces the key (announced with `replaces` after the old key's records; the person's standing
 * still follows what they signed with the old key), and a key declared
 * compromised revokes what it signed from `since` on (KEY_COMPROMISE) and signs nothing more.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { eq } from "drizzle-orm";
import { createPersonKeys } from "../../src/persons/person-keys.ts";
import { createPersons, type Persons } from "../../src/persons/persons.ts";
import { decodeLedgerMessage } from "../../src/records/messages.ts";
import { ledgerTransactions, records, signingKeys } from "../../src/storage/schema.ts";
import { audit, listAudit } from "../../src/keys/audit.ts";
import { createSealRotation, SealRotationRefused } from "../../src/records/seal-rotation.ts";
import { cleanup, testApp } from "../support/env.ts";
import { SoftAuthenticator } from "../support/soft-authenticator.ts";
import { waitFor } from "../support/wait.ts";

const PUBLIC = "http://localhost:8443";
const ORIGIN = PUBLIC;
const hashOf = (s: string) => "sha256:" + createHash("sha256").update(s).digest("hex");

let t: Awaited<ReturnType<typeof testApp>>;
let persons: Persons;
let orgId: string;

beforeAll(async () => {
  t = await testApp({ env: { DOCVERIFY_PUBLIC_URL: PUBLIC, DOCVERIFY_RATE_LIMIT_ANONYMOUS: "1000", DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: "300" } });
  persons = createPersons({ store: t.app.store, clock: t.app.clock, publicUrl: PUBLIC });
  orgId = (await t.app.organisations.create({ name: "Acme Notaries", apiAccess: true, addon: true, validated: true }, "test")).id;
  await waitFor("the organisation's topic", async () => (await t.app.organisations.get(orgId)).topicId, 30_000);
}, 60_000);
afterAll(cleanup);

function call(method: string, path: string, options: { body?: unknown; cookie?: string | null } = {}) {
  const headers: Record<string, string> = { origin: ORIGIN };
  if (options.cookie) headers.cookie = `docverify_session=${options.cookie}`;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  return t.request(path, { method, headers, ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }) });
}

const tokenOf = (enrolUrl: string) => enrolUrl.split("/enrol/")[1]!;
const cookieOf = (res: Response) => /docverify_session=([^;]*)/.exec(res.headers.get("set-cookie") ?? "")?.[1] ?? null;
const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string; message: string } }).error;

/** Enrols (or re-enrols) with `link` and a new software authenticator: the session and authenticator. */
async function enrolWith(enrolUrl: string) {
  const auth = new SoftAuthenticator(ORIGIN);
  const token = tokenOf(enrolUrl);
  const options = await (await call("POST", `/app/enrol/${token}/options`, { body: {} })).json();
  const res = await call("POST", `/app/enrol/${token}`, { body: auth.register(options as never) });
  expect(res.status).toBe(201);
  return { auth, session: cookieOf(res)!, keyFingerprint: ((await res.json()) as { keyFingerprint: string }).keyFingerprint };
}

async function sign(session: string, auth: SoftAuthenticator, docHash: string): Promise<{ recordId: string; authenticatedAt: string }> {
  const prepared = await call("POST", "/app/signatures/options", { cookie: session, body: { originalDocHash: docHash } });
  expect(prepared.status).toBe(200);
  const res = await call("POST", "/app/signatures", { cookie: session, body: auth.assert((await prepared.json()) as never) });
  expect(res.status).toBe(201);
  return (await res.json()) as { recordId: string; authenticatedAt: string };
}

const row = (recordId: string) => t.app.db.select().from(records).where(eq(records.id, recordId)).get()!;
const anchored = (recordId: string) => waitFor(`record ${recordId} anchored`, () => (row(recordId).anchorState === "anchored" ? true : null), 30_000);
const announcementsOf = (key: string) =>
  t.app.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.keyFingerprint, Buffer.from(key, "hex"))).all().filter((r) => r.kind === "key_announcement");
const announced = (key: string) => waitFor(`key ${key} announced`, () => announcementsOf(key).find((r) => r.state === "anchored"), 30_000);
const keyRow = (key: string) => t.app.db.select().from(signingKeys).where(eq(signingKeys.fingerprint, Buffer.from(key, "hex"))).get()!;
async function verdictOf(docHash: string) {
  const res = await t.request("/v1/verifications", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ originalDocHash: docHash }) });
  return (await res.json()) as { verdict: string; matches: { recordId: string; signerStanding: string }[] };
}

describe("re-enrolment", () => {
  test("a new link for an enrolled person; enrolling with it gives a new key replacing the old (retired), ends the old passkey and session, is audited; its announcement names the old key and lands after the old key's records", async () => {
    const { person, link } = await persons.add({ orgId, name: "Rita Rotate", email: "rita@example.test", identity: "passport R1 seen in person" }, "admin:test");
    const first = await enrolWith(link.enrolUrl);
    const oldRecord = await sign(first.session, first.auth, hashOf("before re-enrolment"));
    await announced(first.keyFingerprint);

    const again = await persons.issueLink(person.id, "admin:test");
    const second = await enrolWith(again.enrolUrl);
    expect(second.keyFingerprint).not.toBe(first.keyFingerprint);
    expect((await persons.get(person.id)).keyFingerprint).toBe(second.keyFingerprint);
    expect(Buffer.from(keyRow(second.keyFingerprint).replaces!).toString("hex")).toBe(first.keyFingerprint);
    expect(keyRow(first.keyFingerprint).retiredAt).not.toBeNull();
    expect((await listAudit(t.app.store)).filter((a) => a.subjectId === person.id).map((a) => a.action)).toContain("person.reenrol");
    // The old session and passkey end.
    expect((await call("GET", "/app/records", { cookie: first.session })).status).toBe(401);
    // The link is spent.
    expect((await call("POST", `/app/enrol/${tokenOf(again.enrolUrl)}/options`, { body: {} })).status).toBe(403);

    const newRecord = await sign(second.session, second.auth, hashOf("after re-enrolment"));
    await anchored(newRecord.recordId);
    await anchored(oldRecord.recordId);
    const announcement = await announced(second.keyFingerprint);
    expect(decodeLedgerMessage(announcement.message!)).toMatchObject({ type: "person_key", personId: person.id, keyFingerprint: second.keyFingerprint, replaces: first.keyFingerprint });
    expect(announcement.sequenceNumber!).toBeGreaterThan(row(oldRecord.recordId).sequenceNumber!);
    expect(announcement.sequenceNumber!).toBeLessThan(row(newRecord.recordId).sequenceNumber!);
    expect((await verdictOf(hashOf("before re-enrolment"))).verdict).toBe("verified");
    expect((await verdictOf(hashOf("after re-enrolment"))).verdict).toBe("verified");
    // Suspended: what they signed with either key reports it.
    await persons.suspend(person.id, "admin:test");
    expect((await verdictOf(hashOf("before re-enrolment"))).matches[0]!.signerStanding).toBe("suspended");
    expect((await verdictOf(hashOf("after re-enrolment"))).matches[0]!.signerStanding).toBe("suspended");
  }, 90_000);
});

describe("re-enrolment refused", () => {
  test("while the person's key is not announced with the current seal key: 403 when the link is used, nothing changed, the link still good once it is", async () => {
    const { person, link } = await persons.add({ orgId, name: "Una Unannounced", email: "una@example.test", identity: "passport U1 seen in person" }, "admin:test");
    const first = await enrolWith(link.enrolUrl);
    await announced(first.keyFingerprint);
    const again = await persons.issueLink(person.id, "admin:test");
    // The announcement no longer names the current seal key (as right after a seal key rotation).
    const seal = (t.app.db.$client.query("SELECT seal_fingerprint AS s FROM ledger_transactions WHERE kind = 'key_announcement' AND key_fingerprint = ?").get(Buffer.from(first.keyFingerprint, "hex")) as { s: Uint8Array }).s;
    const setSeal = (value: Uint8Array) =>
      t.app.db.$client.query("UPDATE ledger_transactions SET seal_fingerprint = ? WHERE kind = 'key_announcement' AND key_fingerprint = ?").run(value, Buffer.from(first.keyFingerprint, "hex"));
    setSeal(new Uint8Array(32));
    const token = tokenOf(again.enrolUrl);
    const auth = new SoftAuthenticator(ORIGIN);
    const options = await (await call("POST", `/app/enrol/${token}/options`, { body: {} })).json();
    const refused = await call("POST", `/app/enrol/${token}`, { body: auth.register(options as never) });
    expect(refused.status).toBe(403);
    expect((await errorOf(refused)).message).toContain("is not announced on the ledger yet");
    expect((await persons.get(person.id)).keyFingerprint).toBe(first.keyFingerprint);
    expect((await call("GET", "/app/records", { cookie: first.session })).status).toBe(200);
    setSeal(seal);
    const second = await enrolWith(again.enrolUrl);
    expect(Buffer.from(keyRow(second.keyFingerprint).replaces!).toString("hex")).toBe(first.keyFingerprint);
  }, 60_000);
});

describe("a person's key declared compromised", () => {
  test("records it signed from since on verify revoked (KEY_COMPROMISE), earlier ones verified; one key_compromise message names the person; the key signs nothing more", async () => {
    const { person, link } = await persons.add({ orgId, name: "Carl Compromised", email: "carl@example.test", identity: "passport C1 seen in person" }, "admin:test");
    const { session, auth, keyFingerprint } = await enrolWith(link.enrolUrl);
    const early = await sign(session, auth, hashOf("carl early"));
    await anchored(early.recordId);
    const late = await sign(session, auth, hashOf("carl late"));
    await anchored(late.recordId);
    const sinceMs = Date.parse(late.authenticatedAt);
    expect(Date.parse(early.authenticatedAt)).toBeLessThan(sinceMs);

    // A signature prepared before the declaration, answered after it.
    const prepared = await (await call("POST", "/app/signatures/options", { cookie: session, body: { originalDocHash: hashOf("carl prepared") } })).json();
    const keys = createPersonKeys({ store: t.app.store, clock: t.app.clock });
    const declared = await keys.declareKeyCompromised(person.id, { sinceMs }, "admin:test");
    expect(declared).toMatchObject({ personId: person.id, orgId, keyFingerprint, sinceMs });
    expect(keyRow(keyFingerprint)).toMatchObject({ compromisedSince: sinceMs, compromisedAt: declared.at });

    const late1 = await verdictOf(hashOf("carl late"));
    expect(late1.verdict).toBe("revoked");
    expect((await verdictOf(hashOf("carl early"))).verdict).toBe("verified");

    const compromise = await waitFor(
      "the key_compromise message anchored",
      () => t.app.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.kind, "key_compromise")).all().find((r) => r.state === "anchored" && Buffer.from(r.keyFingerprint!).toString("hex") === keyFingerprint),
      30_000,
    );
    expect(decodeLedgerMessage(compromise.message!)).toEqual({ v: 1, type: "key_compromise", orgId, personId: person.id, keyFingerprint, since: new Date(sinceMs).toISOString() });

    // The signing page refuses the key until the person re-enrols.
    const refused = await call("POST", "/app/signatures/options", { cookie: session, body: { originalDocHash: hashOf("carl after") } });
    expect(refused.status).toBe(403);
    expect((await errorOf(refused)).message).toContain("declared compromised");
    const answered = await call("POST", "/app/signatures", { cookie: session, body: auth.assert(prepared as never) });
    expect(answered.status).toBe(403);
    expect((await errorOf(answered)).message).toContain("declared compromised");
    expect(t.app.db.select().from(records).all().filter((r) => r.docHash === hashOf("carl prepared"))).toEqual([]);

    // Refusals change nothing: declared twice, a time in the future, a person without a key.
    await expect(keys.declareKeyCompromised(person.id, { sinceMs }, "admin:test")).rejects.toThrow("already declared compromised");
    await expect(keys.declareKeyCompromised(person.id, { sinceMs: Date.now() + 3_600_000 }, "admin:test")).rejects.toThrow("is in the future");
    const { person: fresh } = await persons.add({ orgId, name: "Nora Nokey", email: "nora@example.test", identity: "passport N1 seen in person" }, "admin:test");
    await expect(keys.declareKeyCompromised(fresh.id, { sinceMs }, "admin:test")).rejects.toThrow("has not enrolled");
    await expect(keys.declareKeyCompromised(fresh.id, { sinceMs, keyFingerprint: Buffer.from(keyFingerprint, "hex") }, "admin:test")).rejects.toThrow("is not one of person");
    expect(keyRow(keyFingerprint)).toMatchObject({ compromisedSince: sinceMs, compromisedAt: declared.at });
  }, 90_000);
});

describe("a seal key rotation while the service runs", () => {
  test("the person's next record is sealed with the new key and anchored after their key is announced again with it; both records verify", async () => {
    const { link } = await persons.add({ orgId, name: "Sam Seal", email: "sam@example.test", identity: "passport S1 seen in person" }, "admin:test");
    const { session, auth, keyFingerprint } = await enrolWith(link.enrolUrl);
    const before = await sign(session, auth, hashOf("sam before"));
    await anchored(before.recordId);
    const rotation = createSealRotation({
      store: t.app.store,
      signer: t.app.signer,
      clock: t.app.clock,
      audit: (tx, tb, at, e) => audit(tx, tb, at, { actor: "test", action: "seal.key.rotate", subjectType: "seal_key", subjectId: "test", ...e }),
    });
    // Refused while an earlier test's announcement is still on its way: asked again until it is anchored.
    const r = await waitFor(
      "a seal key rotation the service accepts",
      () =>
        rotation.rotate().catch((e) => {
          if (e instanceof SealRotationRefused) return undefined;
          throw e;
        }),
      30_000,
      200,
    );
    const after = await sign(session, auth, hashOf("sam after"));
    expect(Buffer.from(row(after.recordId).sealFingerprint).toString("hex")).toBe(r.keyFingerprint);
    expect(Buffer.from(row(before.recordId).sealFingerprint).toString("hex")).toBe(r.replaces);
    await anchored(after.recordId);
    const announcement = announcementsOf(keyFingerprint).find((a) => a.state === "anchored" && decodeLedgerMessage(a.message!).type === "person_key" && Buffer.from(a.sealFingerprint!).toString("hex") === r.keyFingerprint);
    expect(announcement).toBeDefined();
    expect(decodeLedgerMessage(announcement!.message!)).toMatchObject({ keyFingerprint, sealKeyFingerprint: r.keyFingerprint });
    expect(announcement!.sequenceNumber!).toBeLessThan(row(after.recordId).sequenceNumber!);
    expect((await verdictOf(hashOf("sam before"))).verdict).toBe("verified");
    expect((await verdictOf(hashOf("sam after"))).verdict).toBe("verified");
  }, 90_000);
});
