/**
 * The record operations end to end, over HTTP against `docverify serve` anchoring through the
 * real SDK to a local ledger started here (so a test can hold its consensus), with real keys
 * minted on its data folder by another process: every status and code of docs/records.md §1 and
 * §2, and what verification reports at each step.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { openCore, type Core } from "../../src/app/core.ts";
import { startLocalLedger, type LocalLedger } from "../../src/local-ledger/index.ts";
import { parseConfig } from "../../src/config/index.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { createRecordOnceTopicExists } from "../support/topic.ts";
import { waitFor } from "../support/wait.ts";
import { createRecordsFixture, docHashOf } from "../support/records-fixture.ts";
import { cleanup, onCleanup, startService, tempDir, type ServiceProcess } from "../support/env.ts";

afterAll(async () => {
  await admin?.close();
  await cleanup();
});

let ledger: LocalLedger;
let svc: ServiceProcess;
let admin: Core;
let key: string; // live, records:write + records:revoke
let writeOnly: string; // live, records:write
let otherOrgKey: string; // another organisation, live, records:revoke
let orgId: string;

type Json = Record<string, any>;
async function call(path: string, body: unknown, bearer?: string): Promise<{ status: number; body: Json; headers: Headers }> {
  const res = await fetch(svc.url + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...(bearer !== undefined ? { authorization: `Bearer ${bearer}` } : {}) },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Json, headers: res.headers };
}
const create = (body: unknown, bearer = key) => call("/v1/records", body, bearer);
const revoke = (id: string, body: unknown = { reason: "SUPERSEDED" }, bearer = key) => call(`/v1/records/${id}/revoke`, body, bearer);
const verdictOf = async (hash: string) => (await call("/v1/verifications", { originalDocHash: hash })).body;


beforeAll(async () => {
  ledger = await startLocalLedger({ dataDir: join(tempDir(), "ledger"), consensusMs: 300 });
  onCleanup(() => ledger.close());
  const keyFile = join(tempDir(), "operator.key");
  writeFileSync(keyFile, ledger.operator.privateKeyDer);
  const data = tempDir();
  svc = await startService({
    env: {
      DOCVERIFY_DATA_DIR: data,
      DOCVERIFY_LOCAL_LEDGER_URL: ledger.mirrorUrl,
      DOCVERIFY_LEDGER_OPERATOR_KEY_FILE: keyFile,
      DOCVERIFY_RATE_LIMIT_ANONYMOUS: "100000",
      DOCVERIFY_RATE_LIMIT_KEY: "100000",
      DOCVERIFY_RATE_LIMIT_ORG: "100000",
    },
  });
  admin = openCore({ config: parseConfig({ DOCVERIFY_DATA_DIR: data }), log: memoryLogger() });
  const org = await admin.organisations.create({ name: "Records Over HTTP Ltd", apiAccess: true, addon: true, validated: true }, "test");
  const other = await admin.organisations.create({ name: "Someone Else Ltd", apiAccess: true, addon: true, validated: true }, "test");
  orgId = org.id;
  key = (await admin.apiKeys.mint({ orgId: org.id, environment: "live", revoke: true }, "test")).key;
  writeOnly = (await admin.apiKeys.mint({ orgId: org.id, environment: "live" }, "test")).key;
  otherOrgKey = (await admin.apiKeys.mint({ orgId: other.id, environment: "live", revoke: true }, "test")).key;
  for (const k of [key, otherOrgKey]) await createRecordOnceTopicExists(() => create({ originalDocHash: docHashOf(`warm-up ${k}`) }, k));
}, 60_000);

describe("records over HTTP against the running service", () => {
  test("create 201, repeat 200 with the same record, then anchored and verified_org", async () => {
    const hash = docHashOf("contract.pdf contents");
    const first = await create({ originalDocHash: hash, filename: "Résumé.pdf", orgId: "someone-else" });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ originalDocHash: hash, anchor: { topicId: expect.stringMatching(/^0\.0\.\d+$/) } });
    expect(["pending", "accepted"]).toContain(first.body.anchorState);
    expect(first.body.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(first.body.verifyUrl).toBe(`${svc.url}/verify/${first.body.recordId}`);
    expect(first.body.authenticatedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const repeat = await create({ originalDocHash: hash, filename: "другое имя.pdf" }, writeOnly);
    expect(repeat.status).toBe(200);
    expect(repeat.body.recordId).toBe(first.body.recordId);

    const verified = await waitFor("anchoring", async () => {
      const v = await verdictOf(hash);
      return v.verdict === "verified_org" ? v : undefined;
    }, 30_000, 100);
    expect(verified.matches).toHaveLength(1);
    expect(verified.matches[0]).toMatchObject({ recordId: first.body.recordId, kind: "record_only", signerType: "org", status: "active" });
    expect(verified.matches[0].checksPerformed).toEqual({ hashBinding: "pass", userSignature: "pass", serverSeal: "pass", anchorStatus: "anchored" });
    // the mirror link resolves on the (local) ledger and carries this record's message
    const mirror = (await (await fetch(verified.matches[0].anchor.mirrorNodeUrl)).json()) as Json;
    expect(mirror.sequence_number).toBe(verified.matches[0].anchor.sequenceNumber);
    const final = await create({ originalDocHash: hash });
    expect(final.status).toBe(200);
    expect(final.body.anchorState).toBe("anchored");
    expect(final.body.retryAfterSeconds).toBeUndefined();
    // the public page shows it
    const page = await fetch(first.body.verifyUrl);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(await page.text()).toContain("Résumé.pdf");
  }, 60_000);

  test("revoke: 409 ANCHOR_NOT_FINAL before consensus, 200 after, 409 ALREADY_REVOKED for ever, verdict revoked", async () => {
    const hash = docHashOf("to be revoked");
    // The ledger holds consensus: the record is accepted, and anchored only once it resumes.
    ledger.faults.pauseConsensus();
    let made: Awaited<ReturnType<typeof create>>;
    try {
      made = await create({ originalDocHash: hash });
      expect(made.status).toBe(201);
      await waitFor("the ledger to accept the record", async () => ((await verdictOf(hash)).verdict === "pending_anchor" ? true : undefined), 30_000, 100);
      const early = await revoke(made.body.recordId);
      expect([early.status, early.body.error.code]).toEqual([409, "ANCHOR_NOT_FINAL"]);
      expect((await verdictOf(hash)).verdict).toBe("pending_anchor");
    } finally {
      ledger.faults.resumeConsensus();
    }
    await waitFor("anchoring", async () => ((await verdictOf(hash)).verdict === "verified_org" ? true : undefined), 30_000, 100);
    const done = await revoke(made.body.recordId, { reason: "ERROR_IN_DOCUMENT" });
    expect(done.status).toBe(200);
    expect(done.body).toEqual({ recordId: made.body.recordId });
    const v = await verdictOf(hash);
    expect(v.verdict).toBe("revoked");
    expect(v.matches[0].revocation).toMatchObject({ reason: "ERROR_IN_DOCUMENT" });
    const again = await revoke(made.body.recordId);
    expect([again.status, again.body.error.code]).toEqual([409, "ALREADY_REVOKED"]);
    // once revoked, the hash can be authenticated anew: a new record, and the active one wins
    const anew = await create({ originalDocHash: hash });
    expect(anew.status).toBe(201);
    expect(anew.body.recordId).not.toBe(made.body.recordId);
  }, 60_000);

  test("revoke refusals: scope, another organisation's record, a person-signed record, unknown and malformed ids, bad reason, 413", async () => {
    const hash = docHashOf("revoke refusals");
    const made = await create({ originalDocHash: hash });
    const id = made.body.recordId as string;
    const noScope = await revoke(id, undefined, writeOnly);
    expect([noScope.status, noScope.body.error.code]).toEqual([403, "SCOPE_REQUIRED"]);
    expect(noScope.body.error.message).toContain("records:revoke");
    const foreign = await revoke(id, undefined, otherOrgKey);
    expect([foreign.status, foreign.body.error.code]).toEqual([403, "NOT_REVOCABLE"]);
    // a person-signed record in the same registry, written as the application would
    const fx = createRecordsFixture({ db: admin.db, signer: admin.signer });
    const personRecord = fx.addPersonRecord(fx.createPerson(), { docHash: docHashOf("signed by a person"), orgId });
    const person = await revoke(personRecord);
    expect([person.status, person.body.error.code, person.body.error.message]).toEqual([403, "NOT_REVOCABLE", foreign.body.error.message]);
    for (const bad of ["0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d", "not-a-record", id.toUpperCase()]) {
      const r = await revoke(bad);
      expect([bad, r.status, r.body.error.code]).toEqual([bad, 404, "NOT_FOUND"]);
    }
    for (const body of [{}, { reason: "BECAUSE" }, { reason: "superseded" }, { reason: 3 }]) {
      const r = await revoke(id, body);
      expect([r.status, r.body.error.code, Object.keys(r.body.error.details)]).toEqual([400, "VALIDATION_FAILED", ["reason"]]);
    }
    const big = await revoke(id, { reason: "SUPERSEDED", pad: "x".repeat(5000) });
    expect([big.status, big.body.error.code]).toEqual([413, "PAYLOAD_TOO_LARGE"]);
  }, 30_000);

  test("create refusals: 400 naming the field, 413 over 8 KiB, nothing created", async () => {
    const count = () => (admin.db.$client.query("SELECT count(*) AS n FROM records").get() as { n: number }).n;
    const before = count();
    const hash = docHashOf("never created");
    for (const [body, field] of [
      [{ originalDocHash: hash.toUpperCase() }, "originalDocHash"],
      [{ originalDocHash: hash.slice(7) }, "originalDocHash"],
      [{ originalDocHash: hash, filename: "invoice\u202Efdp.exe" }, "filename"],
      [{ originalDocHash: hash, filename: "soft\u00ADhyphen.pdf" }, "filename"],
      [{ originalDocHash: hash, filename: "zero\u200Bwidth.pdf" }, "filename"],
      [{ originalDocHash: hash, filename: "\uFEFFbom.pdf" }, "filename"],
      [{ originalDocHash: hash, filename: "é".repeat(501) }, "filename"],
      [{ originalDocHash: hash, filename: "" }, "filename"],
      [[hash], "body"],
    ] as const) {
      const r = await create(body);
      expect([r.status, r.body.error.code, Object.keys(r.body.error.details)]).toEqual([400, "VALIDATION_FAILED", [field]]);
    }
    const big = await create({ originalDocHash: hash, filename: "a".repeat(9000) });
    expect([big.status, big.body.error.code]).toEqual([413, "PAYLOAD_TOO_LARGE"]);
    expect(count()).toBe(before);
    for (const filename of ["👩‍💻 report.pdf", "契約書.pdf", "Résumé.pdf", "x".repeat(500)]) {
      expect((await create({ originalDocHash: docHashOf(filename), filename })).status).toBe(201);
    }
  }, 30_000);
});
