/**
 * The verification log: group commit and durability, monotonic UUIDv7 ids, scoping by
 * organisation and environment, filters, keyset pagination under concurrent writes, cursors
 * (tampered, foreign filters, foreign organisation or environment), and GET by id.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DomainError } from "../../src/lib/errors.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { decodeCursor, encodeCursor, referenceCursorMac } from "../../src/verification/log/cursor.ts";
import { createIdGenerator } from "../../src/verification/log/ids.ts";
import type { ListFilters, VerificationLogRow } from "../../src/verification/log/page.ts";
import { createVerificationLog, type SqliteVerificationLog } from "../../src/verification/log/service.ts";
import { FROM, HASH, logPage, logPageIds, TO, VERDICT } from "../../src/storage/verification-statements.ts";
import { logDrivers } from "../support/drivers.ts";
import type { Verdict } from "../../src/verification/types.ts";
import { cleanup } from "../support/env.ts";
import { createRecordsFixture, docHashOf, type FixtureOrg, type RecordsFixture } from "../support/records-fixture.ts";
import { sqliteStore } from "../../src/storage/store.ts";

const KEY = new Uint8Array(32).fill(9);
const OTHER_KEY = new Uint8Array(32).fill(10);
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let fx: RecordsFixture;
let acme: FixtureOrg;
let globex: FixtureOrg;

beforeAll(async () => {
  fx = createRecordsFixture();
  acme = await fx.createOrg("Acme");
  globex = await fx.createOrg("Globex");
});
afterAll(cleanup);

function expectValidation(fn: () => unknown, field: string): DomainError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(DomainError);
    const err = e as DomainError;
    expect(err.code).toBe("VALIDATION_FAILED");
    expect(Object.keys(err.details ?? {})).toEqual([field]);
    return err;
  }
  throw new Error("expected a VALIDATION_FAILED error");
}

function expectNotFound(fn: () => unknown): void {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(DomainError);
    expect((e as DomainError).code).toBe("NOT_FOUND");
    expect((e as DomainError).message).toBe("No verification with this id.");
    return;
  }
  throw new Error("expected NOT_FOUND");
}

const row = (over: Partial<VerificationLogRow> = {}): VerificationLogRow => ({
  orgId: acme.id,
  environment: "live",
  keyId: "k".repeat(16),
  verdict: "verified_org",
  docHash: docHashOf("a"),
  ...over,
});

describe("ids", () => {
  test("strictly increasing UUIDv7s within one millisecond, and when the clock steps back", () => {
    const clock = manualClock(Date.UTC(2026, 0, 1));
    const next = createIdGenerator(clock);
    const ids: string[] = [];
    for (let i = 0; i < 5000; i++) {
      if (i === 2000) clock.advance(-60_000); // the system clock steps back a minute
      if (i === 4000) clock.advance(120_000);
      ids.push(next().id);
    }
    for (const id of ids) expect(id).toMatch(UUID_V7);
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
    // While the clock is behind, ids keep the last millisecond rather than going back.
    expect(ids[2500]!.slice(0, 13)).toBe(ids[1999]!.slice(0, 13));
  });

  test("the id carries the millisecond reported as verifiedAt", () => {
    const clock = manualClock(Date.UTC(2026, 4, 6, 7, 8, 9, 10));
    const { id, ms } = createIdGenerator(clock)();
    expect(ms).toBe(clock.now());
    expect(parseInt(id.replaceAll("-", "").slice(0, 12), 16)).toBe(ms);
  });

  test("a new log continues above the newest stored id even with an earlier clock", async () => {
    const fx2 = createRecordsFixture();
    const org = await fx2.createOrg("Restarted");
    const clock = manualClock(Date.UTC(2026, 5, 1));
    const first = createVerificationLog({ store: logDrivers(sqliteStore(fx2.db)).log, clock, cursorKey: KEY });
    const a = await first.record(row({ orgId: org.id }));
    const earlier = manualClock(Date.UTC(2025, 0, 1));
    const second = createVerificationLog({ store: logDrivers(sqliteStore(fx2.db)).log, clock: earlier, cursorKey: KEY });
    const b = await second.record(row({ orgId: org.id }));
    expect(b.verificationId > a.verificationId).toBe(true);
  });
});

describe("record: group commit", () => {
  test("many concurrent records are all durable, in few transactions, in call order", async () => {
    const fx2 = createRecordsFixture();
    const org = await fx2.createOrg("Busy");
    const log = createVerificationLog({ store: logDrivers(sqliteStore(fx2.db)).log, clock: fx2.clock, cursorKey: KEY, maxBatch: 256 });
    const N = 600;
    const results = await Promise.all(Array.from({ length: N }, (_, i) => log.record(row({ orgId: org.id, docHash: docHashOf(`doc ${i}`), reference: `ref ${i}` }))));
    expect(log.stats()).toEqual({ batches: 3, rows: N, failedBatches: 0 }); // 256 + 256 + 88
    for (let i = 1; i < N; i++) expect(results[i]!.verificationId > results[i - 1]!.verificationId).toBe(true);
    // Read through a separate connection: the rows are committed, not merely visible to this one.
    const other = new Database(fx2.db.$client.filename, { readonly: true });
    try {
      const count = other.query("SELECT count(*) AS n FROM verifications WHERE org_id = ?").get(org.id) as { n: number };
      expect(count.n).toBe(N);
      const r = other.query("SELECT reference, verified_at_ms FROM verifications WHERE id = ?").get(results[7]!.verificationId) as { reference: string; verified_at_ms: number };
      expect(r.reference).toBe("ref 7");
      expect(new Date(r.verified_at_ms).toISOString()).toBe(results[7]!.verifiedAt);
    } finally {
      other.close();
    }
  });

  test("a promise resolves only after its row is committed", async () => {
    const fx2 = createRecordsFixture();
    const org = await fx2.createOrg("Durable");
    const log = createVerificationLog({ store: logDrivers(sqliteStore(fx2.db)).log, clock: fx2.clock, cursorKey: KEY });
    let resolved = false;
    const p = log.record(row({ orgId: org.id })).then((r) => ((resolved = true), r));
    // Queued, not yet written, not yet acknowledged.
    expect(fx2.db.$client.query("SELECT count(*) AS n FROM verifications").get()).toEqual({ n: 0 });
    expect(resolved).toBe(false);
    const r = await p;
    expect(fx2.db.$client.query("SELECT count(*) AS n FROM verifications WHERE id = ?").get(r.verificationId)).toEqual({ n: 1 });
  });

  test("a failed flush rejects every caller in that batch and writes none of its rows; later batches work", async () => {
    const fx2 = createRecordsFixture();
    const org = await fx2.createOrg("Failing");
    const log = createVerificationLog({ store: logDrivers(sqliteStore(fx2.db)).log, clock: fx2.clock, cursorKey: KEY });
    const good = log.record(row({ orgId: org.id }));
    const bad = log.record(row({ orgId: "no-such-organisation" })); // foreign key violation
    const outcomes = await Promise.allSettled([good, bad]);
    expect(outcomes.map((o) => o.status)).toEqual(["rejected", "rejected"]);
    expect(log.stats()).toEqual({ batches: 0, rows: 0, failedBatches: 1 });
    expect(fx2.db.$client.query("SELECT count(*) AS n FROM verifications").get()).toEqual({ n: 0 });
    await log.record(row({ orgId: org.id }));
    expect(log.stats()).toEqual({ batches: 1, rows: 1, failedBatches: 1 });
  });

  test("a malformed row is refused on its own, without failing the batch", async () => {
    const log = createVerificationLog({ store: logDrivers(sqliteStore(fx.db)).log, clock: fx.clock, cursorKey: KEY });
    const good = log.record(row({ orgId: globex.id, environment: "test" }));
    const bad = log.record(row({ verdict: "maybe" as Verdict }));
    const badHash = log.record(row({ docHash: "sha256:ABC" }));
    const outcomes = await Promise.allSettled([good, bad, badHash]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "rejected"]);
  });

  test("flush writes the queue at once", async () => {
    const fx2 = createRecordsFixture();
    const org = await fx2.createOrg("Flushing");
    const log = createVerificationLog({ store: logDrivers(sqliteStore(fx2.db)).log, clock: fx2.clock, cursorKey: KEY });
    const p = log.record(row({ orgId: org.id }));
    log.flush();
    expect(fx2.db.$client.query("SELECT count(*) AS n FROM verifications").get()).toEqual({ n: 1 });
    await p;
  });

  test("refuses a cursor key that is not 32 bytes", () => {
    expect(() => createVerificationLog({ store: logDrivers(sqliteStore(fx.db)).log, clock: fx.clock, cursorKey: new Uint8Array(16) })).toThrow(/32 bytes/);
  });
});

describe("list and get", () => {
  let fx2: RecordsFixture;
  let org: FixtureOrg;
  let other: FixtureOrg;
  let log: SqliteVerificationLog;
  const clock = manualClock(Date.UTC(2026, 2, 1, 0, 0, 0));
  const written: { id: string; verdict: Verdict; docHash: string; ms: number; reference?: string }[] = [];
  const H1 = docHashOf("one");
  const H2 = docHashOf("two");
  const verdicts: Verdict[] = ["verified_org", "no_record", "verified", "revoked", "signature_invalid", "pending_anchor"];

  beforeAll(async () => {
    fx2 = createRecordsFixture();
    org = await fx2.createOrg("Lister");
    other = await fx2.createOrg("Other");
    log = createVerificationLog({ store: logDrivers(sqliteStore(fx2.db)).log, clock, cursorKey: KEY });
    // 60 live rows for org, one per second, alternating hashes and cycling verdicts.
    for (let i = 0; i < 60; i++) {
      const verdict = verdicts[i % verdicts.length]!;
      const docHash = i % 2 === 0 ? H1 : H2;
      const reference = i % 3 === 0 ? `invoice ${i}` : undefined;
      const r = await log.record({ orgId: org.id, environment: "live", keyId: "key", verdict, docHash, ...(reference !== undefined ? { reference } : {}) });
      written.push({ id: r.verificationId, verdict, docHash, ms: clock.now(), ...(reference !== undefined ? { reference } : {}) });
      clock.advance(1000);
    }
    // Rows that must never show: same org other environment, other org same environment.
    await log.record({ orgId: org.id, environment: "test", keyId: "key", verdict: "verified_org", docHash: H1 });
    await log.record({ orgId: other.id, environment: "live", keyId: "key", verdict: "verified_org", docHash: H1 });
  });

  const all = (filters: ListFilters = {}, environment: "live" | "test" = "live", limit = 100) =>
    log.list({ orgId: org.id, environment, filters, limit });

  test("newest first, scoped to organisation and environment, summary fields", () => {
    const page = all();
    expect(page.data.map((d) => d.verificationId)).toEqual(written.map((w) => w.id).reverse());
    expect(page.pagination).toEqual({ nextCursor: null, hasMore: false });
    const newest = written[written.length - 1]!;
    expect(page.data[0]).toEqual({
      verificationId: newest.id,
      verdict: newest.verdict,
      assuranceLevel: "docverify.registry.v1",
      mode: "partial",
      environment: "live",
      originalDocHash: newest.docHash,
      verifiedAt: new Date(newest.ms).toISOString(),
    });
    const withRef = page.data.find((d) => d.verificationId === written[57]!.id)!;
    expect(withRef.reference).toBe("invoice 57");
    expect(all({}, "test").data).toHaveLength(1);
    expect(all({}, "test").data[0]!.environment).toBe("test");
    expect(log.list({ orgId: other.id, environment: "live", filters: {}, limit: 100 }).data).toHaveLength(1);
    expect(log.list({ orgId: other.id, environment: "test", filters: {}, limit: 100 }).data).toHaveLength(0);
  });

  test("filters: verdict, hash, from and to (inclusive), combined", () => {
    expect(all({ verdict: "revoked" }).data.map((d) => d.verificationId)).toEqual(written.filter((w) => w.verdict === "revoked").map((w) => w.id).reverse());
    expect(all({ originalDocHash: H2 }).data.every((d) => d.originalDocHash === H2)).toBe(true);
    expect(all({ originalDocHash: H2 }).data).toHaveLength(30);
    const from = written[10]!.ms;
    const to = written[20]!.ms;
    expect(all({ from, to }).data.map((d) => d.verificationId)).toEqual(written.slice(10, 21).map((w) => w.id).reverse());
    expect(all({ from: from + 1, to: to - 1 }).data).toHaveLength(9);
    expect(all({ from }).data).toHaveLength(50);
    expect(all({ to }).data).toHaveLength(21);
    const combined = all({ from, to, originalDocHash: H1, verdict: "verified" }).data;
    expect(combined.map((d) => d.verificationId)).toEqual(written.slice(10, 21).filter((w) => w.docHash === H1 && w.verdict === "verified").map((w) => w.id).reverse());
    expect(all({ originalDocHash: docHashOf("nothing") }).data).toEqual([]);
  });

  test("pages: limit + 1 decides hasMore; nextCursor null on the last page; every row once", () => {
    for (const limit of [1, 7, 30, 59, 60, 100]) {
      const seen: string[] = [];
      let after: string | undefined;
      let pages = 0;
      for (;;) {
        const page = log.list({ orgId: org.id, environment: "live", filters: {}, limit, ...(after !== undefined ? { after } : {}) });
        pages++;
        expect(page.data.length).toBeLessThanOrEqual(limit);
        seen.push(...page.data.map((d) => d.verificationId));
        if (!page.pagination.hasMore) {
          expect(page.pagination.nextCursor).toBeNull();
          break;
        }
        expect(page.data).toHaveLength(limit);
        after = page.pagination.nextCursor!;
      }
      expect(seen).toEqual(written.map((w) => w.id).reverse());
      expect(pages).toBe(Math.ceil(60 / limit));
    }
  });

  test("a filtered paging loop keeps its filters; the limit may change between pages", () => {
    const filters = { originalDocHash: H1 };
    const p1 = log.list({ orgId: org.id, environment: "live", filters, limit: 4 });
    const p2 = log.list({ orgId: org.id, environment: "live", filters, limit: 10, after: p1.pagination.nextCursor! });
    expect([...p1.data, ...p2.data].map((d) => d.verificationId)).toEqual(written.filter((w) => w.docHash === H1).map((w) => w.id).reverse().slice(0, 14));
  });

  describe("cursors refused with details.after", () => {
    let cursor: string;
    const filters: ListFilters = { verdict: "verified_org" };
    beforeAll(() => {
      cursor = log.list({ orgId: org.id, environment: "live", filters, limit: 2 }).pagination.nextCursor!;
    });
    const list = (over: { orgId?: string; environment?: "live" | "test"; filters?: ListFilters; after?: string }) =>
      log.list({ orgId: over.orgId ?? org.id, environment: over.environment ?? "live", filters: over.filters ?? filters, limit: 2, after: over.after ?? cursor });

    test("the genuine cursor works", () => {
      expect(list({}).data).toHaveLength(2);
    });
    test("with different filters", () => {
      expectValidation(() => list({ filters: {} }), "after");
      expectValidation(() => list({ filters: { verdict: "verified" } }), "after");
      expectValidation(() => list({ filters: { ...filters, originalDocHash: H1 } }), "after");
      expectValidation(() => list({ filters: { ...filters, from: 0 } }), "after");
      expectValidation(() => list({ filters: { ...filters, to: Date.now() } }), "after");
    });
    test("for another organisation or environment", () => {
      expectValidation(() => list({ orgId: other.id }), "after");
      expectValidation(() => list({ environment: "test" }), "after");
    });
    test("tampered: each character changed, truncated, extended, re-padded", () => {
      for (let i = 0; i < cursor.length; i++) {
        const c = cursor[i] === "A" ? "B" : "A";
        expectValidation(() => list({ after: cursor.slice(0, i) + c + cursor.slice(i + 1) }), "after");
      }
      expectValidation(() => list({ after: cursor.slice(0, -1) }), "after");
      expectValidation(() => list({ after: cursor + "A" }), "after");
      expectValidation(() => list({ after: cursor + "=" }), "after");
    });
    test("not a cursor at all", () => {
      for (const bad of ["", "x", "!!!!", "null", "a".repeat(500), Buffer.alloc(49).toString("base64url")]) expectValidation(() => list({ after: bad }), "after");
    });
    test("issued under another server key", () => {
      const id = written[30]!.id;
      const scope = { orgId: org.id, environment: "live", filters };
      const foreign = encodeCursor(OTHER_KEY, id, scope);
      expectValidation(() => list({ after: foreign }), "after");
      expect(decodeCursor(KEY, encodeCursor(KEY, id, scope), scope)).toBe(id);
    });
    test("another version byte", () => {
      const bytes = Buffer.from(cursor, "base64url");
      bytes[0] = 2;
      expectValidation(() => list({ after: bytes.toString("base64url") }), "after");
    });
  });

  test("limit outside 1..100 is refused, never clamped", () => {
    for (const limit of [0, 101, 2.5, -1]) expectValidation(() => all({}, "live", limit), "limit");
  });

  test("get: the verification as recorded, matches always []", () => {
    const w = written[57]!;
    expect(log.get({ orgId: org.id, environment: "live", verificationId: w.id })).toEqual({
      verificationId: w.id,
      verdict: w.verdict,
      disclosureTier: "organisation",
      assuranceLevel: "docverify.registry.v1",
      mode: "partial",
      environment: "live",
      originalDocHash: w.docHash,
      verifiedAt: new Date(w.ms).toISOString(),
      reference: "invoice 57",
      matches: [],
    });
    expect("reference" in log.get({ orgId: org.id, environment: "live", verificationId: written[58]!.id })).toBe(false);
  });

  test("get: NOT_FOUND alike for missing, other organisation, other environment, malformed", () => {
    const id = written[5]!.id;
    expectNotFound(() => log.get({ orgId: org.id, environment: "live", verificationId: "01900000-0000-7000-8000-000000000000" }));
    expectNotFound(() => log.get({ orgId: other.id, environment: "live", verificationId: id }));
    expectNotFound(() => log.get({ orgId: org.id, environment: "test", verificationId: id }));
    for (const bad of [id.toUpperCase(), `{${id}}`, id.replaceAll("-", ""), "", "not-a-uuid", `${id} `, "' OR 1=1 --"]) {
      expectNotFound(() => log.get({ orgId: org.id, environment: "live", verificationId: bad }));
    }
  });
});

describe("paging while rows are written concurrently", () => {
  test("every row that existed when paging began is visited exactly once; new rows never appear", async () => {
    const fx2 = createRecordsFixture();
    const org = await fx2.createOrg("Paging");
    const clock = manualClock(Date.UTC(2026, 3, 1));
    const log = createVerificationLog({ store: logDrivers(sqliteStore(fx2.db)).log, clock, cursorKey: KEY, maxBatch: 8 });
    const before: string[] = [];
    for (let i = 0; i < 250; i++) {
      if (i % 7 === 0) clock.advance(1);
      before.push((await log.record(row({ orgId: org.id, docHash: docHashOf(`p${i}`) }))).verificationId);
    }

    let writing = true;
    const added: string[] = [];
    const writer = (async () => {
      let i = 0;
      while (writing) {
        // A burst of concurrent writes each turn, some in the same millisecond as the pages' rows.
        const burst = await Promise.all(Array.from({ length: 5 }, () => log.record(row({ orgId: org.id, docHash: docHashOf(`new${i++}`) }))));
        added.push(...burst.map((r) => r.verificationId));
        if (i % 3 === 0) clock.advance(1);
      }
    })();

    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = log.list({ orgId: org.id, environment: "live", filters: {}, limit: 9, ...(after !== undefined ? { after } : {}) });
      seen.push(...page.data.map((d) => d.verificationId));
      if (!page.pagination.hasMore) break;
      after = page.pagination.nextCursor!;
      await Bun.sleep(1); // let the writer commit more rows between pages
    }
    writing = false;
    await writer;

    expect(added.length).toBeGreaterThan(20);
    const firstPageNewest = seen[0]!;
    // The first page may include rows written before it was read; every later page holds only older rows.
    const expected = [...before, ...added.filter((id) => id <= firstPageNewest)].sort().reverse();
    expect(seen).toEqual(expected);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((id) => before.includes(id))).toHaveLength(before.length);
  });
});

test("the cursor's MAC is HMAC-SHA256 as RFC 2104 states it, for keys shorter and longer than a block, every filter combination", () => {
  const scopes = [
    { orgId: acme.id, environment: "live" as const, filters: {} },
    { orgId: acme.id, environment: "test" as const, filters: { verdict: "revoked" as const } },
    { orgId: "ünïcode org", environment: "live" as const, filters: { originalDocHash: docHashOf("x"), from: 1, to: 1795548030181 } },
  ];
  for (const keyLength of [1, 32, 64, 65, 200]) {
    const key = crypto.getRandomValues(new Uint8Array(keyLength));
    for (const scope of scopes) {
      for (let n = 0; n < 5; n++) {
        const id = Bun.randomUUIDv7();
        const bytes = Buffer.from(encodeCursor(key, id, scope), "base64url");
        expect(bytes.subarray(17).equals(referenceCursorMac(key, Buffer.from(id.replaceAll("-", ""), "hex"), scope))).toBe(true);
        expect(decodeCursor(key, encodeCursor(key, id, scope), scope)).toBe(id);
      }
    }
  }
});

test("listJson is list() serialised, character for character, on every page and filter, with references that need escaping", async () => {
  const log = createVerificationLog({ store: logDrivers(sqliteStore(fx.db)).log, clock: manualClock(Date.UTC(2026, 0, 2)), cursorKey: KEY });
  const org = await fx.createOrg("Json Escapes Ltd");
  const refs = ['quote " and backslash \\', "line\u2028separator", "emoji \u{1F642}", "</script>", "plain"];
  for (const [i, reference] of refs.entries()) await log.record(row({ orgId: org.id, reference, verdict: i % 2 === 0 ? "verified_org" : "no_record" }));
  await log.record(row({ orgId: org.id, docHash: docHashOf("b") }));
  let pages = 0;
  for (const filters of [{}, { verdict: "no_record" as const }, { originalDocHash: docHashOf("a") }]) {
    let after: string | undefined;
    for (let page = 0; page < 50; page++) {
      const input = { orgId: org.id, environment: "live" as const, filters, limit: 2, ...(after !== undefined ? { after } : {}) };
      const text = log.listJson(input);
      expect(text).toBe(JSON.stringify(log.list(input)));
      // Again: now from the memo of each row's JSON (the ids read alone), the same text.
      expect(log.listJson(input)).toBe(text);
      pages++;
      const next = (JSON.parse(text) as { pagination: { nextCursor: string | null } }).pagination.nextCursor;
      if (next === null) break;
      after = next;
    }
  }
  expect(pages).toBe(3 + 1 + 3);
});

test("listJson from its memo: rows written or deleted since a page was read are shown as they are now", async () => {
  const clock = manualClock(Date.UTC(2026, 0, 3));
  const log = createVerificationLog({ store: logDrivers(sqliteStore(fx.db)).log, clock, cursorKey: KEY });
  const org = await fx.createOrg("Memo Pages Ltd");
  const first = { orgId: org.id, environment: "live" as const, filters: {}, limit: 3 };
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    ids.push((await log.record(row({ orgId: org.id, reference: `r${i}` }))).verificationId);
    clock.advance(1000);
  }
  const shown = (text: string) => (JSON.parse(text) as { data: { verificationId: string }[] }).data.map((d) => d.verificationId);
  const pick = (...at: number[]) => at.map((i) => ids[i]!);
  expect(shown(log.listJson(first))).toEqual(pick(4, 3, 2));
  expect(shown(log.listJson(first))).toEqual(pick(4, 3, 2)); // every row remembered
  // A new row: the page is read whole again and starts with it.
  ids.push((await log.record(row({ orgId: org.id, reference: "new" }))).verificationId);
  expect(log.listJson(first)).toBe(JSON.stringify(log.list(first)));
  expect(shown(log.listJson(first))).toEqual(pick(5, 4, 3));
  // Rows deleted (as retention deletes them): never shown again, though their JSON is remembered.
  fx.db.$client.prepare("DELETE FROM verifications WHERE id IN (?, ?)").run(ids[5]!, ids[4]!);
  const text = log.listJson(first);
  expect(shown(text)).toEqual(pick(3, 2, 1));
  expect(text).toBe(JSON.stringify(log.list(first)));
  // The last page, from the memo: no cursor, hasMore false.
  const last = { ...first, filters: { verdict: "verified_org" as const }, limit: 10 };
  expect(log.listJson(last)).toBe(JSON.stringify(log.list(last)));
  expect(log.listJson(last)).toBe(JSON.stringify(log.list(last)));
  expect((JSON.parse(log.listJson(last)) as { pagination: unknown }).pagination).toEqual({ nextCursor: null, hasMore: false });
});

test("a page kept while nothing is committed: another connection's delete, and another scope's use of a cursor, are seen at once", async () => {
  const clock = manualClock(Date.UTC(2026, 0, 4));
  const log = createVerificationLog({ store: logDrivers(sqliteStore(fx.db)).log, clock, cursorKey: KEY });
  const org = await fx.createOrg("Kept Pages Ltd");
  const other = await fx.createOrg("Other Scope Ltd");
  const ids: string[] = [];
  for (let i = 0; i < 4; i++) {
    ids.push((await log.record(row({ orgId: org.id, reference: `k${i}` }))).verificationId);
    clock.advance(1000);
  }
  const first = { orgId: org.id, environment: "live" as const, filters: {}, limit: 2 };
  const page = log.listJson(first);
  expect(log.listJson(first)).toBe(page); // the same text again while nothing was committed
  const cursor = (JSON.parse(page) as { pagination: { nextCursor: string } }).pagination.nextCursor;
  const second = { ...first, after: cursor };
  expect(log.listJson(second)).toBe(JSON.stringify(log.list(second)));
  expect(log.listJson(second)).toBe(JSON.stringify(log.list(second)));
  // The same cursor under another organisation, or with a filter added, is refused every time,
  // though it was accepted (and its check kept) for its own scope.
  for (let attempt = 0; attempt < 2; attempt++) {
    expect(() => log.listJson({ ...second, orgId: other.id })).toThrow(DomainError);
    expect(() => log.listJson({ ...second, filters: { verdict: "verified_org" as const } })).toThrow(DomainError);
    const tampered = cursor.slice(0, -2) + (cursor.endsWith("AA") ? "AB" : "AA");
    expect(() => log.listJson({ ...first, after: tampered })).toThrow(DomainError);
  }
  // A row deleted by another connection (an operator's sqlite3, say): the very next page shows it gone.
  const elsewhere = new Database(fx.db.$client.filename);
  try {
    elsewhere.prepare("DELETE FROM verifications WHERE id = ?").run(ids[2]!);
  } finally {
    elsewhere.close();
  }
  const after = log.listJson(first);
  expect(after).not.toBe(page);
  expect((JSON.parse(after) as { data: { verificationId: string }[] }).data.map((d) => d.verificationId)).toEqual([ids[3]!, ids[1]!]);
  expect(after).toBe(JSON.stringify(log.list(first)));
});

test("the memo of each row's JSON rests on the log never being updated: no code updates a verification row", async () => {
  const { Glob } = await import("bun");
  const offenders: string[] = [];
  for await (const file of new Glob("src/**/*.ts").scan({ cwd: `${import.meta.dir}/../..` })) {
    const text = await Bun.file(`${import.meta.dir}/../../${file}`).text();
    if (/UPDATE\s+"?verifications"?\s/i.test(text) || /\.update\(\s*(schema\.)?verifications\b/.test(text)) offenders.push(file);
  }
  expect(offenders).toEqual([]);
});

test("every page's ids are read from an index alone, in id order (time bounds under a hash or verdict filter may read rows for verified_at_ms)", () => {
  for (let mask = 0; mask < 32; mask++) {
    const sql = logPageIds(mask).sqlite;
    expect(sql).toStartWith("SELECT id FROM verifications WHERE ");
    const params = sql.split("?").length - 1;
    const plan = (fx.db.$client.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...Array.from({ length: params }, () => "x")) as { detail: string }[]).map((p) => p.detail);
    expect(plan).toHaveLength(1);
    const timeBound = (mask & (FROM | TO)) !== 0 && (mask & (HASH | VERDICT)) !== 0;
    expect(plan[0]).toMatch(timeBound ? /^SEARCH verifications USING (COVERING )?INDEX verifications_scope(_hash|_verdict)? \(org_id=\? AND environment=\?/ : /^SEARCH verifications USING COVERING INDEX verifications_scope(_hash|_verdict)? \(org_id=\? AND environment=\?/);
  }
});

test("every combination of list filters searches an index in id order, never sorts or scans", () => {
  for (let mask = 0; mask < 32; mask++) {
    const sql = logPage(mask).sqlite;
    const params = sql.split("?").length - 1;
    const plan = (fx.db.$client.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...Array.from({ length: params }, () => "x")) as { detail: string }[]).map((p) => p.detail);
    expect(plan).toHaveLength(1);
    expect(plan[0]).toMatch(/^SEARCH verifications USING (COVERING )?INDEX verifications_scope(_hash|_verdict)? \(org_id=\? AND environment=\?/);
    // Unfiltered, or bounded in time or by a cursor: the covering index alone, no table row read.
    if ((mask & (HASH | VERDICT)) === 0) expect(plan[0]).toMatch(/^SEARCH verifications USING COVERING INDEX verifications_scope \(/);
  }
});
