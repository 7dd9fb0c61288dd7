/**
 * The scale dataset's arithmetic (scripts/bench/scale-dataset.ts): what it
 * promises about its size, its deep page and its real records, checked without building it.
 */
import { describe, expect, test } from "bun:test";
import { bulkDocHash, isRealRow, mineCount, scaleCacheName, scaleSpec } from "../scripts/bench/scale-dataset.ts";
import { DOC_HASH_RE } from "../src/verification/types.ts";

describe("bench: the scale dataset's specification", () => {
  test("by default the full figures: 10,000,000 records and log rows, a page 1,000,000 deep with at least 1,000,100 rows in the log it pages", () => {
    const spec = scaleSpec({});
    expect(spec).toEqual({ records: 10_000_000, logRows: 10_000_000, depth: 1_000_000, full: true });
    expect(mineCount(spec.logRows)).toBe(1_500_000);
    expect(mineCount(spec.logRows)).toBeGreaterThanOrEqual(1_000_100);
    expect(scaleCacheName(spec, "abc")).toBe("scale-10m-g1-schema-abc");
  });

  test("a development size is named apart, pages two thirds into its log, and is never taken for the full one", () => {
    const spec = scaleSpec({ BENCH_SCALE_RECORDS: "200_000" });
    expect(spec).toEqual({ records: 200_000, logRows: 200_000, depth: 20_000, full: false });
    expect(scaleCacheName(spec, "abc")).toBe("scale-200000r-200000l-g1-schema-abc");
    expect(scaleSpec({ BENCH_SCALE_RECORDS: "10000000", BENCH_SCALE_LOG_ROWS: "400000" }).full).toBe(false);
  });

  test("sizes that cannot hold the dataset's layout are refused with the reason", () => {
    expect(() => scaleSpec({ BENCH_SCALE_RECORDS: "250000" })).toThrow("multiple of 200,000");
    expect(() => scaleSpec({ BENCH_SCALE_RECORDS: "-1" })).toThrow("positive integer");
    expect(() => scaleSpec({ BENCH_SCALE_RECORDS: "200000", BENCH_SCALE_LOG_ROWS: "100" })).toThrow("too few rows for a deep page");
  });

  test("mineCount counts the rows i with i % 20 < 3, as the generator assigns them", () => {
    for (const n of [0, 1, 2, 3, 4, 19, 20, 21, 23, 24, 1_003, 12_345]) {
      let brute = 0;
      for (let i = 0; i < n; i++) if (i % 20 < 3) brute++;
      expect(mineCount(n)).toBe(brute);
    }
  });

  test("10,000 real records, one per 1,000 rows, 500 for each of the 20 organisations", () => {
    const step = 1_000;
    const perOrg = new Array<number>(20).fill(0);
    let real = 0;
    let last = -1;
    for (let i = 0; i < 10_000_000; i++) {
      if (!isRealRow(i, step)) continue;
      real++;
      perOrg[i % 20]!++;
      if (last >= 0) expect(i - last).toBeLessThanOrEqual(step + 19);
      last = i;
    }
    expect(real).toBe(10_000);
    expect(perOrg).toEqual(new Array<number>(20).fill(500));
  });

  test("bulk document hashes are well-formed DocHashes, distinct per row, with uniform leading hex digits", () => {
    const seen = new Set<string>();
    const leading = new Array<number>(16).fill(0);
    for (let i = 0; i < 100_000; i++) {
      const h = bulkDocHash(i);
      expect(DOC_HASH_RE.test(h)).toBe(true);
      seen.add(h);
      leading[parseInt(h[7]!, 16)]!++;
    }
    expect(seen.size).toBe(100_000);
    // 6,250 expected per digit; a uniform mix stays well within ±10 %.
    for (const n of leading) expect(Math.abs(n - 6_250)).toBeLessThan(625);
  });
});
