/**
 * `docverify authenticate` over folders of 2,000 files against a live service: under rate limits
 * tight enough that the service answers 429, every file is authenticated exactly once and the
 * manifest lists each; killed with SIGKILL halfway and run again, no record is made twice, the
 * manifest is complete and every receipt is saved, each a receipt of its own record.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseReceipt } from "../../src/verifier/receipt.ts";
import { verifyReceipt } from "../../src/verifier/verify.ts";
import { cleanup, tempDir } from "../support/env.ts";
import { startServiceWithOrg, type ServiceWithOrg } from "../support/service-with-org.ts";
import { waitFor } from "../support/wait.ts";
import { firstRecord, jsonOutput, makeFiles, readManifestLines, recordCount, runBulk, spawnBulk } from "./run.ts";

afterAll(cleanup);

const FILES = 2000;
const LEDGER = { DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: "200" };
let tight: ServiceWithOrg;
let roomy: ServiceWithOrg;

beforeAll(async () => {
  [tight, roomy] = await Promise.all([
    // 1,400 a minute for the key, a bucket of 1,400: well short of the 2,000 records asked, so the
    // service says 429 unless it makes fewer than about 75 records a second.
    startServiceWithOrg({ orgName: "Tight Ltd", env: { ...LEDGER, DOCVERIFY_RATE_LIMIT_KEY: "1400", DOCVERIFY_RATE_LIMIT_ORG: "1000000" } }),
    startServiceWithOrg({ orgName: "Roomy Ltd", env: { ...LEDGER, DOCVERIFY_RATE_LIMIT_KEY: "1000000", DOCVERIFY_RATE_LIMIT_ORG: "1000000" } }),
  ]);
  await Promise.all([firstRecord(tight), firstRecord(roomy)]);
}, 60_000);

function folder(s: ServiceWithOrg): { cwd: string; env: Record<string, string> } {
  const cwd = tempDir("docverify-bulk-");
  writeFileSync(join(cwd, "key"), `${s.key}\n`);
  makeFiles(join(cwd, "docs"), FILES);
  return { cwd, env: { DOCVERIFY_URL: s.svc.url } };
}

describe("docverify authenticate, 2,000 files", () => {
  test("under tight rate limits: every file authenticated once, the pool paused on the 429s, the manifest complete; a second run sends no record", async () => {
    const { cwd, env } = folder(tight);
    const before = recordCount(tight.admin, tight.org.id).records;
    const first = await runBulk(["authenticate", "docs", "--key-file", "key", "--json"], cwd, env);
    expect({ code: first.code, stderr: first.stderr }).toEqual({ code: 0, stderr: "" });
    const { files, summary } = jsonOutput(first.stdout);
    expect(summary).toMatchObject({ files: FILES, hashed: FILES, created: FILES, existing: 0, skipped: 0, failed: 0, manifest: "docverify-manifest.jsonl" });
    // The service said 429, and the run went on: nothing failed for it.
    expect(summary.rateLimited as number).toBeGreaterThan(0);
    expect(files.length).toBe(FILES);
    expect(new Set(files.map((f) => f.path)).size).toBe(FILES);
    expect(files.every((f) => f.state === "created" && typeof f.recordId === "string")).toBe(true);
    // The service holds exactly one record per file.
    expect(recordCount(tight.admin, tight.org.id)).toEqual({ records: before + FILES, hashes: before + FILES, revoked: 0 });

    const manifest = join(cwd, "docverify-manifest.jsonl");
    const lines = readManifestLines(manifest);
    expect(lines.length).toBe(FILES);
    const byPath = new Map(lines.map((l) => [l.path, l]));
    expect(byPath.size).toBe(FILES);
    for (const f of files) expect(byPath.get(f.path as string)).toMatchObject({ hash: f.hash, recordId: f.recordId, state: "created" });

    // Again: every file is already in the manifest (same path, same content), so nothing is sent.
    const again = await runBulk(["authenticate", "docs", "--key-file", "key"], cwd, env);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`${FILES} files: ${FILES} authenticated (0 new, 0 already held by the service, ${FILES} already in the manifest), 0 failed`);
    expect(readManifestLines(manifest).length).toBe(FILES);
    // One file changed: authenticated anew, the rest skipped.
    writeFileSync(join(cwd, "docs", "doc-0007.txt"), "a new version\n");
    const changed = jsonOutput((await runBulk(["authenticate", "docs", "--key-file", "key", "--json"], cwd, env)).stdout);
    expect(changed.summary).toMatchObject({ created: 1, skipped: FILES - 1, failed: 0 });
    expect(changed.files.filter((f) => f.skipped !== true)).toEqual([expect.objectContaining({ path: "docs/doc-0007.txt", state: "created" })]);
    expect(recordCount(tight.admin, tight.org.id).records).toBe(before + FILES + 1);
  }, 90_000);

  test("killed with SIGKILL halfway, then run again with --receipts: no record twice, the manifest complete, every receipt saved and its record's", async () => {
    const { cwd, env } = folder(roomy);
    const manifest = join(cwd, "docverify-manifest.jsonl");
    const before = recordCount(roomy.admin, roomy.org.id).records;
    const args = ["authenticate", "docs", "--key-file", "key", "--receipts", "receipts"];
    const child = spawnBulk(args, cwd, env);
    await waitFor("1,000 lines in the manifest", () => (readManifestLines(manifest).length >= 1000 ? true : undefined), 60_000, 10);
    child.kill("SIGKILL");
    expect(await child.exited).not.toBe(0);
    const killed = readManifestLines(manifest);
    expect(killed.length).toBeLessThan(FILES);
    const held = recordCount(roomy.admin, roomy.org.id).records - before;
    expect(held).toBeGreaterThanOrEqual(killed.length);
    // Whatever the kill left, a torn line at the end is one a resume must read past.
    appendFileSync(manifest, '{"path":"docs/doc-19');

    const resumed = await runBulk([...args, "--json"], cwd, env);
    expect({ code: resumed.code, stderr: resumed.stderr }).toEqual({ code: 0, stderr: "" });
    const { summary } = jsonOutput(resumed.stdout);
    expect(summary).toMatchObject({ files: FILES, failed: 0, notFinal: 0, receipts: FILES });
    expect(summary.skipped).toBe(killed.filter((l) => l.state === "created").length);
    // Made by the killed run but never written down (at least those the service had finished when
    // it was counted): the service answered 200 with the same record.
    expect(summary.existing as number).toBeGreaterThanOrEqual(held - (summary.skipped as number));
    expect((summary.created as number) + (summary.existing as number) + (summary.skipped as number)).toBe(FILES);
    expect(recordCount(roomy.admin, roomy.org.id)).toEqual({ records: before + FILES, hashes: before + FILES, revoked: 0 });

    const lines = readManifestLines(manifest);
    const recordOf = new Map<string, { recordId: string; hash: string }>();
    for (const l of lines) if (l.recordId !== undefined) recordOf.set(l.path, { recordId: l.recordId, hash: l.hash! });
    expect(recordOf.size).toBe(FILES);
    expect(new Set([...recordOf.values()].map((r) => r.recordId)).size).toBe(FILES);
    const anchored = lines.filter((l) => l.state === "anchored");
    expect(anchored.length).toBe(FILES);
    expect(anchored.filter((l) => l.receipt !== join("receipts", `${l.recordId}.json`))).toEqual([]);

    const saved = readdirSync(join(cwd, "receipts")).sort();
    expect(saved).toEqual([...recordOf.values()].map((r) => `${r.recordId}.json`).sort());
    const receipts = [...recordOf.values()].map((r) => ({ ...r, text: readFileSync(join(cwd, "receipts", `${r.recordId}.json`), "utf8") }));
    for (const r of receipts) expect(parseReceipt(r.text)).toMatchObject({ recordId: r.recordId, originalDocHash: r.hash });
    // A few checked in full by the standalone verifier's local checks (signatures, inclusion proof).
    for (const r of receipts.slice(0, 3)) {
      const report = await verifyReceipt(parseReceipt(r.text), { docHash: r.hash, offline: true, mirrors: [], fetch: () => Promise.reject(new Error("offline")) });
      expect(report.checks.filter((c) => c.status === "fail")).toEqual([]);
      expect(report.checks.find((c) => c.name === "inclusion")?.status).toBe("pass");
    }
  }, 90_000);
});
