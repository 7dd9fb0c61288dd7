/**
 * A person-signed record's receipt, end to end (docs/receipts.md, docs/persons.md): a person
 * enrolled with a passkey signs a real PDF through /app, the browser's step is done as the signing
 * page does it (signPdf: the original plus one incremental update), the receipt is fetched, serve
 * is stopped, and every shell of the verifier, given the signed PDF and two witnesses of the ledger
 * on two hosts (e2e-rig.ts), recovers the original inside it and says `verified`: the person's key
 * is bound to the organisation's topic by its `person_key` announcement, which names no person, so
 * the organisation is claimed by its id alone.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { openCore } from "../../src/app/core.ts";
import { parseConfig } from "../../src/config/index.ts";
import { createPersons } from "../../src/persons/persons.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { signPdf } from "../../src/pdf/stamp.ts";
import { cleanup, onCleanup, tempDir } from "../support/env.ts";
import { makeTestPdf } from "../support/pdf.ts";
import { SoftAuthenticator } from "../support/soft-authenticator.ts";
import { docHash, deploy, verifyInEveryShell, type Deployment } from "./e2e-rig.ts";

afterAll(cleanup);

describe("a person-signed record's receipt, verified from the signed PDF in every shell after serve has stopped", () => {
  let d: Deployment;
  let receipt: { signerType: string; kind: string; keyAnnouncement: { message: string } };
  let receiptPath: string;
  let signedPath: string;
  let personId: string;
  let orgId: string;

  beforeAll(async () => {
    d = await deploy("embedded", { orgName: "Notaries & Co" });
    const admin = openCore({ config: parseConfig({ DOCVERIFY_DATA_DIR: d.dataDir }), log: memoryLogger() });
    onCleanup(() => admin.close());
    const org = admin.db.$client.query("SELECT id FROM organisations LIMIT 1").get() as { id: string };
    orgId = org.id;
    const origin = new URL(d.svc.url).origin;
    const added = await createPersons({ store: admin.store, clock: admin.clock, publicUrl: d.svc.url }).add({ orgId: org.id, name: "Petra Person", email: "petra@example.test", identity: "passport P-1" }, "test");
    personId = added.person.id;
    const token = added.link.enrolUrl.split("/enrol/")[1]!;
    const post = async (path: string, body: unknown, session?: string) => {
      const res = await fetch(`${d.svc.url}${path}`, {
        method: "POST",
        headers: { origin, "content-type": "application/json", ...(session === undefined ? {} : { cookie: `docverify_session=${session}` }) },
        body: JSON.stringify(body),
      });
      if (res.status !== 200 && res.status !== 201) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
      return res;
    };
    const auth = new SoftAuthenticator(origin);
    const enrolled = await post(`/app/enrol/${token}`, auth.register((await (await post(`/app/enrol/${token}/options`, {})).json()) as never));
    const session = /docverify_session=([^;]*)/.exec(enrolled.headers.get("set-cookie")!)![1]!;

    const original = makeTestPdf({ title: "Lease agreement" });
    const prepared = await (await post("/app/signatures/options", { originalDocHash: docHash(original), filename: "lease.pdf" }, session)).json();
    const record = (await (await post("/app/signatures", auth.assert(prepared as never), session)).json()) as { recordId: string; verifyUrl: string; authenticatedAt: string };
    const signed = await signPdf(original, { recordId: record.recordId, verifyUrl: record.verifyUrl, signerName: "Petra Person", organisation: "Notaries & Co", signedAt: record.authenticatedAt });
    const dir = tempDir("docverify-held-");
    signedPath = join(dir, "lease-signed.pdf");
    writeFileSync(signedPath, signed);
    const text = await d.receipt(record.recordId);
    receipt = JSON.parse(text);
    receiptPath = join(dir, `docverify-receipt-${record.recordId}.json`);
    writeFileSync(receiptPath, text);
    await d.stopServe();
  }, 120_000);

  test("the receipt is a person's: signerType user, kind pdf_embedded, and the announcement names ids only", () => {
    expect(receipt.signerType).toBe("user");
    expect(receipt.kind).toBe("pdf_embedded");
    const announcement = JSON.parse(Buffer.from(receipt.keyAnnouncement.message, "base64").toString("utf8"));
    expect(announcement).toMatchObject({ v: 1, type: "person_key", personId });
    expect(JSON.stringify(announcement)).not.toContain("Petra");
  });

  test("every shell says verified (exit 0) for the signed PDF, every check passing, the organisation an unconfirmed claim by id", async () => {
    const outcomes = await verifyInEveryShell(receiptPath, signedPath, { mirrors: await d.witnesses() });
    for (const o of outcomes) {
      expect([o.shell, o.verdict, o.failed, o.identity, o.public]).toEqual([o.shell, "verified", [], "unconfirmed", false]);
      if (o.shell !== "page") expect([o.shell, o.code]).toEqual([o.shell, 0]);
    }
    // No name is on the ledger for a person's key: the command line reports none, the page names the organisation by id, as a claim.
    for (const o of outcomes.filter((o) => o.shell !== "page")) expect([o.shell, o.organisation]).toEqual([o.shell, null]);
    expect(outcomes.find((o) => o.shell === "page")!.organisation).toBe(`organisation ${orgId}`);
  }, 120_000);
});
