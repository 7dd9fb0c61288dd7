/**
 * Request parsing: every 400 of GET /v1/verifications' query rules and of the VerificationRequest
 * body (docs/verification.md "Request rules"), table-driven.
 */
import { describe, expect, test } from "bun:test";
import { DomainError } from "../../src/lib/errors.ts";
import { createListQueries, parseListQuery, parseRfc3339, parseVerificationRequest } from "../../src/verification/query.ts";

const HASH = `sha256:${"ab".repeat(32)}`;
const url = (query: string) => new URL(`http://localhost/v1/verifications${query}`);

function details(fn: () => unknown): Record<string, string> {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(DomainError);
    expect((e as DomainError).code).toBe("VALIDATION_FAILED");
    return { ...(e as DomainError).details };
  }
  throw new Error("expected VALIDATION_FAILED");
}

describe("parseListQuery: accepted", () => {
  const cases: [string, ReturnType<typeof parseListQuery>][] = [
    ["", { filters: {}, limit: 25 }],
    ["?limit=1", { filters: {}, limit: 1 }],
    ["?limit=100", { filters: {}, limit: 100 }],
    ["?verdict=verified_org", { filters: { verdict: "verified_org" }, limit: 25 }],
    [`?originalDocHash=${HASH}`, { filters: { originalDocHash: HASH }, limit: 25 }],
    ["?from=2026-01-15T09:30:00Z", { filters: { from: Date.UTC(2026, 0, 15, 9, 30) }, limit: 25 }],
    ["?from=2026-01-15T09:30:00.123Z&to=2026-01-15T09:30:00.123Z", { filters: { from: Date.UTC(2026, 0, 15, 9, 30, 0, 123), to: Date.UTC(2026, 0, 15, 9, 30, 0, 123) }, limit: 25 }],
    ["?to=2026-01-15T10:30:00%2B01:00", { filters: { to: Date.UTC(2026, 0, 15, 9, 30) }, limit: 25 }],
    ["?to=2026-01-15T05:00:00-04:30", { filters: { to: Date.UTC(2026, 0, 15, 9, 30) }, limit: 25 }],
    // Below the millisecond: from rounds up, to rounds down (rows are stored to the millisecond).
    ["?from=2026-01-15T09:30:00.1234Z&to=2026-01-15T09:30:00.1239Z", { filters: { from: Date.UTC(2026, 0, 15, 9, 30, 0, 124), to: Date.UTC(2026, 0, 15, 9, 30, 0, 123) }, limit: 25 }],
    ["?from=2026-01-15T09:30:00.123000000Z", { filters: { from: Date.UTC(2026, 0, 15, 9, 30, 0, 123) }, limit: 25 }],
    ["?after=abc_-9", { filters: {}, limit: 25, after: "abc_-9" }],
    [
      `?verdict=no_record&originalDocHash=${HASH}&from=2026-01-01T00:00:00Z&to=2026-12-31T23:59:59.999Z&limit=50&after=xyz`,
      { filters: { verdict: "no_record", originalDocHash: HASH, from: Date.UTC(2026, 0, 1), to: Date.UTC(2026, 11, 31, 23, 59, 59, 999) }, limit: 50, after: "xyz" },
    ],
  ];
  for (const [query, expected] of cases) test(query || "(none)", () => expect(parseListQuery(url(query))).toEqual(expected));
});

describe("parseListQuery: every refusal names its field", () => {
  const cases: [string, string][] = [
    ["?limit=0", "limit"],
    ["?limit=101", "limit"],
    ["?limit=-1", "limit"],
    ["?limit=", "limit"],
    ["?limit=25.0", "limit"],
    ["?limit=%2B5", "limit"],
    ["?limit=+5", "limit"],
    ["?limit=05", "limit"],
    ["?limit=1e1", "limit"],
    ["?limit=0x10", "limit"],
    ["?limit=%205", "limit"],
    ["?limit=ten", "limit"],
    ["?limit=99999999999999999999", "limit"],
    ["?verdict=VERIFIED", "verdict"],
    ["?verdict=unknown", "verdict"],
    ["?verdict=", "verdict"],
    [`?originalDocHash=${HASH.toUpperCase()}`, "originalDocHash"],
    [`?originalDocHash=sha256:${"AB".repeat(32)}`, "originalDocHash"],
    [`?originalDocHash=${"ab".repeat(32)}`, "originalDocHash"],
    [`?originalDocHash=${HASH}0`, "originalDocHash"],
    ["?originalDocHash=", "originalDocHash"],
    ["?from=2026-01-15", "from"],
    ["?from=2026-01-15T09:30:00", "from"],
    ["?from=2026-01-15t09:30:00z", "from"],
    ["?from=2026-01-15 09:30:00Z", "from"],
    ["?from=2026-01-15T09:30:00+01:00", "from"], // the + arrives as a space: refused, with a hint
    ["?from=2026-01-15T09:30:00-00:00", "from"],
    ["?from=2026-01-15T09:30:60Z", "from"],
    ["?from=2026-02-30T00:00:00Z", "from"],
    ["?from=2025-02-29T00:00:00Z", "from"],
    ["?from=2026-13-01T00:00:00Z", "from"],
    ["?from=2026-01-15T24:00:00Z", "from"],
    ["?from=2026-01-15T09:30:00.1234567891Z", "from"],
    ["?from=2026-01-15T09:30:00.Z", "from"],
    ["?from=1768469400000", "from"],
    ["?from=", "from"],
    ["?to=yesterday", "to"],
    ["?to=2026-01-15T09:30:00%2B24:00", "to"],
    ["?from=2026-01-15T09:30:01Z&to=2026-01-15T09:30:00Z", "from"],
    ["?from=2026-01-15T09:30:00.0000002Z&to=2026-01-15T09:30:00.0000001Z", "from"],
    ["?after=", "after"],
    ["?after=a%2Bb", "after"],
    ["?after=abc=", "after"],
    ["?limit=5&limit=5", "limit"],
    ["?verdict=revoked&verdict=verified", "verdict"],
    ["?after=a&after=b", "after"],
    ["?page=2", "page"],
    ["?Limit=5", "Limit"],
    ["?orgId=x", "orgId"],
    ["?=x", ""],
    // Names an object literal would resolve through its prototype.
    ["?__proto__=1", "__proto__"],
    ["?constructor=1", "constructor"],
    ["?toString=1", "toString"],
    ["?hasOwnProperty=1", "hasOwnProperty"],
    ["?valueOf=1", "valueOf"],
    ["?__defineGetter__=1", "__defineGetter__"],
  ];
  for (const [query, field] of cases) {
    test(`${query} → details.${field}`, () => {
      const d = details(() => parseListQuery(url(query)));
      expect(Object.keys(d)).toEqual([field]);
      expect(typeof d[field]).toBe("string");
    });
  }

  test("every offending field is named at once", () => {
    const d = details(() => parseListQuery(url("?limit=0&verdict=x&originalDocHash=y&from=z&to=w&after=!&extra=1&extra=2")));
    expect(Object.keys(d).sort()).toEqual(["after", "extra", "from", "limit", "originalDocHash", "to", "verdict"]);
  });

  test("a + in a time zone offset that was not percent-encoded gets a hint", () => {
    expect(details(() => parseListQuery(url("?from=2026-01-15T09:30:00+01:00"))).from).toContain("%2B");
  });

  test("the message names the fields", () => {
    try {
      parseListQuery(url("?limit=0&verdict=x"));
    } catch (e) {
      expect((e as DomainError).message).toBe("Invalid query parameters: verdict, limit.");
    }
  });
});

describe("parseRfc3339", () => {
  test("leap years, zones, fractions, years before 100", () => {
    expect(parseRfc3339("2024-02-29T00:00:00Z")).toEqual({ ms: Date.UTC(2024, 1, 29), subMsNanos: 0 });
    expect(parseRfc3339("2000-02-29T00:00:00Z")).not.toBeNull();
    expect(parseRfc3339("1900-02-29T00:00:00Z")).toBeNull();
    expect(parseRfc3339("0050-01-01T00:00:00Z")!.ms).toBe(new Date("0050-01-01T00:00:00Z").getTime());
    expect(parseRfc3339("2026-01-15T09:30:00.5Z")).toEqual({ ms: Date.UTC(2026, 0, 15, 9, 30, 0, 500), subMsNanos: 0 });
    expect(parseRfc3339("2026-01-15T09:30:00.000000001Z")).toEqual({ ms: Date.UTC(2026, 0, 15, 9, 30), subMsNanos: 1 });
    expect(parseRfc3339("2026-01-15T00:30:00+23:59")!.ms).toBe(Date.UTC(2026, 0, 14, 0, 31));
    expect(parseRfc3339("2026-01-15T00:30:00+23:60")).toBeNull();
  });
});

describe("parseVerificationRequest", () => {
  test("accepted: hash alone, with a reference, unknown properties ignored", () => {
    expect(parseVerificationRequest({ originalDocHash: HASH })).toEqual({ docHash: HASH });
    expect(parseVerificationRequest({ originalDocHash: HASH, reference: "invoice 2026-001" })).toEqual({ docHash: HASH, reference: "invoice 2026-001" });
    expect(parseVerificationRequest({ originalDocHash: HASH, orgId: "x", environment: "live", matches: [] })).toEqual({ docHash: HASH });
    expect(parseVerificationRequest({ originalDocHash: HASH, reference: "" })).toEqual({ docHash: HASH, reference: "" });
    // 128 code points, some outside the BMP (256 UTF-16 units), and joiners/bidi marks (Cf, not Cc).
    const long = "😀".repeat(128);
    expect(parseVerificationRequest({ originalDocHash: HASH, reference: long }).reference).toBe(long);
    expect(parseVerificationRequest({ originalDocHash: HASH, reference: "a\u200db\u202ec" }).reference).toBe("a\u200db\u202ec");
    expect(parseVerificationRequest({ originalDocHash: HASH, reference: "Zürich 東京" }).reference).toBe("Zürich 東京");
  });

  const refused: [string, Record<string, unknown>, string[]][] = [
    ["missing hash", {}, ["originalDocHash"]],
    ["null hash", { originalDocHash: null }, ["originalDocHash"]],
    ["numeric hash", { originalDocHash: 5 }, ["originalDocHash"]],
    ["uppercase hash", { originalDocHash: HASH.toUpperCase() }, ["originalDocHash"]],
    ["bare digest", { originalDocHash: "ab".repeat(32) }, ["originalDocHash"]],
    ["hash with whitespace", { originalDocHash: ` ${HASH}` }, ["originalDocHash"]],
    ["hash as array", { originalDocHash: [HASH] }, ["originalDocHash"]],
    ["reference 129 code points", { originalDocHash: HASH, reference: "x".repeat(129) }, ["reference"]],
    ["reference with a newline", { originalDocHash: HASH, reference: "a\nb" }, ["reference"]],
    ["reference with NUL", { originalDocHash: HASH, reference: "a\u0000" }, ["reference"]],
    ["reference with DEL", { originalDocHash: HASH, reference: "a\u007f" }, ["reference"]],
    ["reference with a C1 control", { originalDocHash: HASH, reference: "a\u0085" }, ["reference"]],
    ["reference with a lone surrogate", { originalDocHash: HASH, reference: "a\ud800" }, ["reference"]],
    ["reference null", { originalDocHash: HASH, reference: null }, ["reference"]],
    ["reference number", { originalDocHash: HASH, reference: 12 }, ["reference"]],
    ["reference object", { originalDocHash: HASH, reference: { a: 1 } }, ["reference"]],
    ["both wrong", { originalDocHash: "x", reference: 1 }, ["originalDocHash", "reference"]],
  ];
  for (const [name, body, fields] of refused) {
    test(`refused: ${name}`, () => expect(Object.keys(details(() => parseVerificationRequest(body)))).toEqual(fields));
  }

  test("a body that is not an object", () => {
    for (const body of [null, [], "x", 1] as unknown as Record<string, unknown>[]) {
      expect(details(() => parseVerificationRequest(body))).toEqual({ body: "must be a JSON object" });
    }
  });
});

describe("listQueryOf: parseListQuery kept by the query text", () => {
  const { listQueryOf } = createListQueries();
  test("an accepted query: the same answer as parseListQuery, the same frozen object when the text repeats, another for another text", () => {
    const text = `?verdict=verified_org&limit=5&after=AQGiGttA4HK-uQjV0XlXvKjC&originalDocHash=${HASH}`;
    const first = listQueryOf(url(text).href);
    expect(first).toEqual(parseListQuery(url(text)));
    expect(listQueryOf(url(text).href)).toBe(first);
    expect(Object.isFrozen(first) && Object.isFrozen(first.filters)).toBe(true);
    expect(listQueryOf(url("").href)).toEqual({ filters: {}, limit: parseListQuery(url("")).limit });
    expect(listQueryOf(url("?limit=6").href)).toEqual({ filters: {}, limit: 6 });
  });

  test("a refused query is refused again, in full, every time", () => {
    const href = url("?limit=0&verdict=x").href;
    for (let i = 0; i < 3; i++) expect(Object.keys(details(() => listQueryOf(href))).sort()).toEqual(["limit", "verdict"]);
  });
});
