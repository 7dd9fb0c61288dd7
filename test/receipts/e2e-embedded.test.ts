/**
 * Receipts end to end on serve's embedded ledger (two mirror ports, one host): verified and revoked
 * in `docverify verify-receipt`, `node docverify-verify.mjs` and the page, with serve stopped (the
 * ledger brought back alone on serve's data folder, at the same addresses). See e2e-rig.ts. And a
 * receipt of a data folder the previous release left, before trust roots and batches (its record
 * anchored as its own message), served once today's serve has opened and migrated that folder:
 * verified with its mirror nodes named; the records made after it are anchored in batches.
 * On that folder the organisation's key is then rotated (`docverify org rotate-key`, serve
 * running): the old record's receipt and verdict are unchanged, a new record is signed with the new
 * key and anchored after its announcement (which names the key it replaces), and both verify; then
 * the service's seal key (`docverify seal rotate-key`): the next record is sealed with the new one,
 * under its organisation's announcement naming it, and verifies in every shell too.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { DATABASE_FILE } from "../../src/storage/data-folder.ts";
import { cli } from "../ops/support.ts";
import { ROOT, cleanup } from "../support/env.ts";
import { expectKeyWindows, leavesInDataFolder, publicKeyDigest, topicMessages, withLeaves } from "../anchoring/key-lifecycle-rig.ts";
import {
  asPreviousReleaseLeftIt,
  authenticate,
  deploy,
  docHash,
  expectLocalClaim,
  FIRST_MIGRATION_AFTER_PREVIOUS_RELEASE,
  serveStoppedSuite,
  verifyInEveryShell,
  type Deployment,
  type Held,
} from "./e2e-rig.ts";

afterAll(cleanup);

serveStoppedSuite("embedded");

describe("a data folder the previous release left: its record's receipt, served by today's serve, verified in every shell", () => {
  const journal = (JSON.parse(readFileSync(join(ROOT, "migrations", "meta", "_journal.json"), "utf8")) as { entries: { tag: string }[] }).entries;
  const applied = (dataDir: string) => {
    const db = new Database(join(dataDir, DATABASE_FILE), { readonly: true });
    try {
      return (db.query("SELECT COUNT(*) AS n FROM __drizzle_migrations").get() as { n: number }).n;
    } finally {
      db.close();
    }
  };
  let d: Deployment;
  let held: Held;
  let upgraded: { receiptText: string; receiptPath: string; migrationsBefore: number; migrationsAfter: number };
  /** After the rotation on the upgraded folder: the old record's receipt and verdict, a new record and its receipt, the topic. */
  let rotated: {
    oldKey: string;
    newKey: string;
    oldReceiptText: string;
    oldVerdict: unknown;
    fresh: Held;
    freshVerdict: unknown;
    windows: ReturnType<typeof expectKeyWindows>;
  };
  /** After the seal key's rotation on the same folder: the rotation, a record sealed after it, its verdict. */
  let sealRotated: { rotation: { keyFingerprint: string; replaces: string }; fresh: Held; verdict: unknown };
  const rows = <T>(dataDir: string, sql: string): T[] => {
    const db = new Database(join(dataDir, DATABASE_FILE), { readonly: true });
    try {
      return db.query(sql).all() as T[];
    } finally {
      db.close();
    }
  };

  beforeAll(async () => {
    // Records as releases before batches anchored them, each its own message (the setting that
    // still does it): the previous release's folder holds nothing a batch wrote.
    d = await deploy("embedded", { env: { DOCVERIFY_BATCH_WINDOW_MS: "0" } });
    held = await authenticate(d);
    let migrationsBefore = 0;
    // serve stopped, the folder is made the previous release's; serve starts on it again, with
    // today's defaults (batches), and migrates it.
    await d.restartServe(
      () => {
        asPreviousReleaseLeftIt(d.dataDir);
        migrationsBefore = applied(d.dataDir);
      },
      { DOCVERIFY_BATCH_WINDOW_MS: undefined },
    );
    const receiptText = await d.receipt(held.recordId);
    const migrationsAfter = applied(d.dataDir);

    // The organisation's key rotated on the upgraded folder while serve runs, as an operator does.
    const [org] = JSON.parse(cli(["org", "list", "--json", "--data", d.dataDir]).stdout) as { id: string }[];
    const r = cli(["org", "rotate-key", org!.id, "--json", "--data", d.dataDir]);
    if (r.code !== 0) throw new Error(`org rotate-key exited ${r.code}: ${r.stderr}`);
    const { keyFingerprint: newKey, replaces: oldKey } = JSON.parse(r.stdout) as { keyFingerprint: string; replaces: string };
    const fresh = await authenticate(d, "after-rotation.pdf");
    const verdictOf = async (document: Uint8Array) =>
      (await (await fetch(`${d.svc.url}/v1/verifications`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ originalDocHash: docHash(document) }) })).json()) as unknown;
    const keys = new Map(rows<{ fp: string; pk: Uint8Array }>(d.dataDir, "SELECT lower(hex(fingerprint)) AS fp, public_key AS pk FROM signing_keys").map((k) => [publicKeyDigest(k.pk), k.fp]));
    const recordIds = rows<{ id: string }>(d.dataDir, "SELECT id FROM records").map((x) => x.id);
    const topicId = (JSON.parse(fresh.receiptText) as { anchor: { topicId: string } }).anchor.topicId;
    rotated = {
      oldKey,
      newKey,
      oldReceiptText: await d.receipt(held.recordId),
      oldVerdict: await verdictOf(held.document),
      fresh,
      freshVerdict: await verdictOf(fresh.document),
      windows: expectKeyWindows(withLeaves(await topicMessages(d.mirrors[0]!, topicId), leavesInDataFolder(d.dataDir)), (digest) => keys.get(digest) ?? digest, recordIds),
    };
    // Then the service's seal key, as an operator does: the next record is sealed with the new one.
    const s = cli(["seal", "rotate-key", "--json", "--data", d.dataDir]);
    if (s.code !== 0) throw new Error(`seal rotate-key exited ${s.code}: ${s.stderr}`);
    const resealed = await authenticate(d, "after-seal-rotation.pdf");
    sealRotated = { rotation: JSON.parse(s.stdout) as { keyFingerprint: string; replaces: string }, fresh: resealed, verdict: await verdictOf(resealed.document) };
    await d.stopServe();
    const receiptPath = `${held.receiptPath}.upgraded.json`;
    writeFileSync(receiptPath, receiptText);
    upgraded = { receiptText, receiptPath, migrationsBefore, migrationsAfter };
  }, 120_000);

  test("the folder had the previous release's migrations only, and today's serve applied the rest", () => {
    expect(journal.some((e) => e.tag >= FIRST_MIGRATION_AFTER_PREVIOUS_RELEASE)).toBe(true);
    expect(upgraded.migrationsBefore).toBe(journal.filter((e) => e.tag < FIRST_MIGRATION_AFTER_PREVIOUS_RELEASE).length);
    expect(upgraded.migrationsAfter).toBe(journal.length);
  });

  test("the record the previous release anchored as its own message keeps its receipt without an inclusion proof; records made after the upgrade are anchored in batches, with one", () => {
    const anchorOf = (text: string) => (JSON.parse(text) as { anchor: { message: string; inclusion: { leafMessage: string; treeSize: number } | null } }).anchor;
    const before = anchorOf(held.receiptText);
    expect(before.inclusion).toBeNull();
    expect(JSON.parse(Buffer.from(before.message, "base64").toString("utf8"))).toMatchObject({ type: "record", recordId: held.recordId });
    for (const fresh of [rotated.fresh, sealRotated.fresh]) {
      const after = anchorOf(fresh.receiptText);
      expect(JSON.parse(Buffer.from(after.message, "base64").toString("utf8"))).toMatchObject({ type: "batch" });
      expect(JSON.parse(Buffer.from(after.inclusion!.leafMessage, "base64").toString("utf8"))).toMatchObject({ type: "record", recordId: fresh.recordId });
    }
  });

  test("the receipt is the one the folder gave before (but for its issuing time), its key announcement as that release wrote it, suggesting the ledger's two ports", () => {
    const before = JSON.parse(held.receiptText) as Record<string, unknown>;
    const after = JSON.parse(upgraded.receiptText) as Record<string, unknown>;
    expect({ ...after, issuedAt: null }).toEqual({ ...before, issuedAt: null });
    const announcement = JSON.parse(Buffer.from((after.keyAnnouncement as { message: string }).message, "base64").toString("utf8")) as Record<string, unknown>;
    expect(Object.keys(announcement)).toEqual(["v", "type", "orgId", "name", "algorithm", "keyFingerprint", "sealKeyFingerprint"]);
    expect(after.mirrorNodes).toEqual(d.mirrors);
  });

  test(
    "with two witnesses of the ledger named: verified_org in every shell, exit 0, the organisation's name a claim; so are the records signed after the key's and the seal key's rotations",
    async () => {
      const mirrors = await d.witnesses();
      const outcomes = [
        ...(await verifyInEveryShell(upgraded.receiptPath, held.documentPath, { mirrors })),
        ...(await verifyInEveryShell(rotated.fresh.receiptPath, rotated.fresh.documentPath, { mirrors })),
        ...(await verifyInEveryShell(sealRotated.fresh.receiptPath, sealRotated.fresh.documentPath, { mirrors })),
      ];
      for (const o of outcomes) {
        expect([o.shell, o.verdict, o.code, o.failed]).toEqual([o.shell, "verified_org", o.shell === "page" ? null : 0, []]);
        expectLocalClaim(o, d.orgName);
      }
    },
    60_000,
  );

  test("the seal key rotated on the upgraded folder: the next record sealed with the new key, under an announcement naming it, verified_org", () => {
    const receipt = JSON.parse(sealRotated.fresh.receiptText) as { seal: { publicKey: string }; keyAnnouncement: { message: string } };
    const announced = JSON.parse(Buffer.from(receipt.keyAnnouncement.message, "base64").toString("utf8")) as { keyFingerprint: string; sealKeyFingerprint: string };
    expect(sealRotated.rotation.keyFingerprint).not.toBe(sealRotated.rotation.replaces);
    expect(announced).toMatchObject({ keyFingerprint: rotated.newKey, sealKeyFingerprint: sealRotated.rotation.keyFingerprint });
    expect(receipt.seal.publicKey).not.toBe((JSON.parse(rotated.fresh.receiptText) as { seal: { publicKey: string } }).seal.publicKey);
    expect(sealRotated.verdict).toMatchObject({ verdict: "verified_org" });
  });

  test("the key rotated on the upgraded folder: the old record's receipt and verdict unchanged; the new record signed with the new key, anchored after its announcement naming the old key", () => {
    expect(rotated.oldKey).not.toBe(rotated.newKey);
    expect({ ...(JSON.parse(rotated.oldReceiptText) as object), issuedAt: null }).toEqual({ ...(JSON.parse(held.receiptText) as object), issuedAt: null });
    expect(rotated.oldVerdict).toMatchObject({ verdict: "verified_org" });
    expect(rotated.freshVerdict).toMatchObject({ verdict: "verified_org" });
    // Both keys' windows on the topic (each record message inside its key's), the new key announced once with replaces.
    expect(rotated.windows.announcements.map((a) => [a.keyFingerprint, a.replaces])).toEqual([
      [rotated.oldKey, undefined],
      [rotated.newKey, rotated.oldKey],
    ]);
    const fresh = JSON.parse(rotated.fresh.receiptText) as { signer: { publicKey: string }; anchor: { sequenceNumber: number }; keyAnnouncement: { sequenceNumber: number; message: string } };
    const announcement = JSON.parse(Buffer.from(fresh.keyAnnouncement.message, "base64").toString("utf8")) as Record<string, string>;
    expect([announcement.keyFingerprint, announcement.replaces]).toEqual([rotated.newKey, rotated.oldKey]);
    expect(fresh.keyAnnouncement.sequenceNumber).toBeLessThan(fresh.anchor.sequenceNumber);
    expect(rotated.windows.byKey.get(rotated.newKey)).toBe(1);
  });
});
