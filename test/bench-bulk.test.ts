/**
 * The bulk bench's verdicts (scripts/bench/bulk.ts): hashing against sha256sum in each runtime,
 * authenticate against the server alone; a ratio below its target, or one that is not a number
 * (nothing measured), is a MISS.
 */
import { expect, test } from "bun:test";
import { BULK_TARGETS, bulkChecks, median, verdict } from "../scripts/bench/bulk.ts";

test("each target's verdict from its ratio", () => {
  expect(BULK_TARGETS).toEqual({ hashToSha256sum: 0.9, authenticateToCreate: 0.8 });
  expect(verdict(0.9, 0.9)).toBe("PASS");
  expect(verdict(0.89, 0.9)).toBe("MISS");
  expect(verdict(Number.NaN, 0.8)).toBe("MISS");
  expect(verdict(Infinity, 0.8)).toBe("MISS");
  expect(median([3, 1, 2])).toBe(2);
  expect(median([4, 1, 3, 2])).toBe(2.5);
});

test("the checks: one per runtime for hashing, one for authenticate, with the figures in words", () => {
  const MiB = 1024 * 1024;
  const hashing = { bytes: 256 * MiB, sha256sum: 200e6, bun: 900e6, node: 170e6, rounds: 3 };
  const auth = { files: 10_000, concurrency: 8, seconds: 12.5, filesPerSecond: 800, createPerSecond: 1000, createWindowS: 3 };
  const checks = bulkChecks(hashing, auth);
  expect(checks.map((c) => c.verdict)).toEqual(["PASS", "MISS", "PASS"]);
  expect(checks[0]!.what).toBe("hashFile in Bun 900 MB/s vs sha256sum 200 MB/s on 256 MiB (median of 3): 4.50 ×; target ≥ 0.90");
  expect(checks[1]!.what).toContain("hashFile in Node.js 170 MB/s");
  expect(checks[2]!.what).toBe("authenticate 10,000 files in 12.5 s = 800 files/s vs the server alone 1,000 records/s (8 at once both): 0.80 ×; target ≥ 0.80");
  expect(bulkChecks(null, { ...auth, filesPerSecond: 799 }).map((c) => c.verdict)).toEqual(["MISS"]);
  expect(bulkChecks(null, null)).toEqual([]);
});
