/**
 * Receipts end to end on serve's embedded ledger (two mirror ports, one host): verified and revoked
 * in `docverify verify-receipt`, `node docverify-verify.mjs` and the page, with serve stopped (the
 * ledger brought back alone on serve's data folder, at the same addresses). See e2e-rig.ts. And a
 * receipt of a data folder the previous release left, before trust roots, served
 * once today's serve has opened and migrated that folder: verified with its mirror nodes named.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { DATABASE_FILE } from "../../src/storage/data-folder.ts";
import { ROOT, cleanup } from "../support/env.ts";
import {
  asPreviousReleaseLeftIt,
  authenticate,
  deploy,
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

  beforeAll(async () => {
    d = await deploy("embedded");
    held = await authenticate(d);
    let migrationsBefore = 0;
    // serve stopped, the folder is made the previous release's; serve starts on it again and migrates it.
    await d.restartServe(() => {
      asPreviousReleaseLeftIt(d.dataDir);
      migrationsBefore = applied(d.dataDir);
    });
    const receiptText = await d.receipt(held.recordId);
    const migrationsAfter = applied(d.dataDir);
    await d.stopServe();
    const receiptPath = `${held.receiptPath}.upgraded.json`;
    writeFileSync(receiptPath, receiptText);
    upgraded = { receiptText, receiptPath, migrationsBefore, migrationsAfter };
  }, 90_000);

  test("the folder had the previous release's migrations only, and today's serve applied the rest", () => {
    expect(journal.some((e) => e.tag >= FIRST_MIGRATION_AFTER_PREVIOUS_RELEASE)).toBe(true);
    expect(upgraded.migrationsBefore).toBe(journal.filter((e) => e.tag < FIRST_MIGRATION_AFTER_PREVIOUS_RELEASE).length);
    expect(upgraded.migrationsAfter).toBe(journal.length);
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
    "with two witnesses of the ledger named: verified_org in every shell, exit 0, the organisation's name a claim",
    async () => {
      const outcomes = await verifyInEveryShell(upgraded.receiptPath, held.documentPath, { mirrors: await d.witnesses() });
      for (const o of outcomes) {
        expect([o.shell, o.verdict, o.code, o.failed]).toEqual([o.shell, "verified_org", o.shell === "page" ? null : 0, []]);
        expectLocalClaim(o, d.orgName);
      }
    },
    60_000,
  );
});
