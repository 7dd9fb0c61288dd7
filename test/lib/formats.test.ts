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
