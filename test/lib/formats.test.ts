/**
 * The timestamp spellings (src/lib/formats.ts), the only ones the API, the verify page and the
 * ledger messages use: what each writes, and that on input it cannot spell it throws, never pads,
 * guesses or echoes.
 */
import { describe, expect, test } from "bun:test";
import { compareConsensus, consensusToRfc3339, rfc3339Ms } from "../../src/lib/formats.ts";

describe("rfc3339Ms", () => {
  test("three fractional digits, UTC, and read back as the same millisecond, over RFC 3339's years", () => {
    const year0 = new Date(0); // not Date.UTC: it reads year 0 as 1900
    year0.setUTCFullYear(0, 0, 1);
    for (const ms of [year0.getTime(), -1, 0, 1, Date.UTC(2026, 0, 15, 9, 30, 0, 123), 253402300799999]) {
      const s = rfc3339Ms(ms);
      expect(s).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(Date.parse(s)).toBe(ms);
    }
    expect(rfc3339Ms(-1)).toBe("1969-12-31T23:59:59.999Z");
    expect(rfc3339Ms(year0.getTime())).toBe("0000-01-01T00:00:00.000Z");
  });

  test("exactly what Date#toISOString writes, over the whole range: every day boundary around leap years and centuries, and 200,000 random instants", () => {
    const year0 = new Date(0);
    year0.setUTCFullYear(0, 0, 1);
    const min = year0.getTime();
    const max = 253402300799999;
    const iso = (ms: number) => new Date(ms).toISOString();
    const day = 86_400_000;
    const edges = [min, min + 1, max, max - 1, -1, 0, 1, day - 1, day, -day, -day - 1];
    for (const y of [0, 1, 4, 99, 100, 400, 1582, 1600, 1699, 1700, 1900, 1969, 1970, 1971, 2000, 2024, 2100, 2400, 9999]) {
      for (const [mo, d] of [[0, 1], [1, 28], [1, 29], [2, 1], [11, 31]] as const) {
        const t = new Date(0);
        t.setUTCFullYear(y, mo, d);
        edges.push(t.getTime(), t.getTime() - 1, t.getTime() + day - 1);
      }
    }
    for (const ms of edges) if (ms >= min && ms <= max) expect(rfc3339Ms(ms)).toBe(iso(ms));
    let seed = 42;
    const next = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let i = 0; i < 200_000; i++) {
      const ms = min + Math.floor(next() * (max - min)) + (i % 1000);
      if (ms > max) continue;
      if (rfc3339Ms(ms) !== iso(ms)) expect(rfc3339Ms(ms)).toBe(iso(ms));
    }
  });

  test("throws a RangeError for what RFC 3339 cannot write: other years, fractions of a millisecond, non-numbers", () => {
    const year0 = new Date(0);
    year0.setUTCFullYear(0, 0, 1);
    for (const ms of [253402300800000, year0.getTime() - 1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
      expect(() => rfc3339Ms(ms)).toThrow(RangeError);
    }
  });
});

describe("consensusToRfc3339", () => {
  test("the stored seconds.nanoseconds with all nine digits", () => {
    expect(consensusToRfc3339("1768469403.000000042")).toBe("2026-01-15T09:30:03.000000042Z");
    expect(consensusToRfc3339("1768469403.123456789")).toBe("2026-01-15T09:30:03.123456789Z");
    expect(consensusToRfc3339("0.000000000")).toBe("1970-01-01T00:00:00.000000000Z");
    expect(consensusToRfc3339("253402300799.999999999")).toBe("9999-12-31T23:59:59.999999999Z");
  });

  test("throws on any other text: short or long nanoseconds are not padded or cut, nothing is echoed", () => {
    for (const text of ["1768469403.42", "1768469403.0000000420", "1768469403", "1768469403.", ".000000042", "-1.000000000", " 1768469403.000000042", "1768469403.000000042 ", "1768469403,000000042", "garbage", "", "253402300800.000000000", "1234567890123.000000000"]) {
      expect(() => consensusToRfc3339(text)).toThrow();
    }
  });
});

test("compareConsensus orders by instant, not as text", () => {
  expect(compareConsensus("9.000000000", "10.000000000")).toBeLessThan(0);
  expect(compareConsensus("10.000000001", "10.000000000")).toBeGreaterThan(0);
  expect(compareConsensus("10.000000000", "10.000000000")).toBe(0);
});

describe("jsonString", () => {
  test("is JSON.stringify of the text, for plain ASCII and for everything that needs escaping", async () => {
    const { jsonString } = await import("../../src/lib/json.ts");
    const samples = ["", "plain", "sha256:" + "ab".repeat(32), 'a "quote"', "back\\slash", "tab\tand\nnewline", "\u0000\u001f\u007f", "é", "\u2028\u2029", "\ud83d\ude42", "\ud800 lone", "lone \udfff", "</script>"];
    for (let c = 0; c < 0x80; c++) samples.push(`x${String.fromCharCode(c)}y`);
    for (const s of samples) expect(jsonString(s)).toBe(JSON.stringify(s));
  });
});
