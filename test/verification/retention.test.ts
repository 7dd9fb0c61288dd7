/**
 * Verification log retention (docs/verification.md "Retention"): DOCVERIFY_LOG_RETENTION_DAYS
 * (default 400, 0 keeps for ever) deletes rows older than that in small background batches that let
 * requests through between them and never wait for another connection's write lock; cursors over
 * deleted rows still decode. Time is a manual clock throughout: no test waits on a timer.
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { createApp } from "../../src/app/sqlite.ts";
import { parseConfig, ConfigError } from "../../src/config/index.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { createVerificationLog } from "../../src/verification/log/service.ts";
import { logDrivers } from "../support/drivers.ts";
import { createLogRetention, DAY_MS } from "../../src/verification/retention.ts";
import { waitFor } from "../support/wait.ts";
import { cleanup, onCleanup, testConfig } from "../support/env.ts";
import { createRecordsFixture, docHashOf } from "../support/records-fixture.ts";
import { sqliteStore } from "../../src/storage/store.ts";

afterAll(cleanup);

const KEY = new Uint8Array(32).fill(9);
const T0 = Date.UTC(2026, 0, 15, 9, 30);

/** A log on a fresh database, with `old` rows at T0 and `recent` rows 100 days later; the clock then stands at the last row. */
async function logWith(old: number, recent: number) {
  const clock = manualClock(T0);
  const fx = createRecordsFixture({ clock });
  const org = await fx.createOrg("Acme");
  const log = createVerificationLog({ store: logDrivers(sqliteStore(fx.db)).log, clock, cursorKey: KEY });
  const row = (i: number) => log.record({ orgId: org.id, environment: "live", keyId: "k1", verdict: "no_record", docHash: docHashOf(`doc ${i}`) });
  for (let i = 0; i < old; i++) await row(i);
  clock.advance(100 * DAY_MS);
  for (let i = 0; i < recent; i++) await row(old + i);
  const count = () => (fx.db.$client.query("SELECT count(*) AS n FROM verifications").get() as { n: number }).n;
  const list = (limit: number, after?: string) => log.list({ orgId: org.id, environment: "live", filters: {}, limit, ...(after === undefined ? {} : { after }) });
  return { clock, fx, org, log, count, list };
}

describe("DOCVERIFY_LOG_RETENTION_DAYS", () => {
  test("default 400; 0 keeps for ever; a whole number of days up to 36500", () => {
    const parse = (v?: string) => parseConfig({ DOCVERIFY_DATA_DIR: "/tmp/x", ...(v === undefined ? {} : { DOCVERIFY_LOG_RETENTION_DAYS: v }) }).logRetentionDays;
    expect(parse()).toBe(400);
    expect(parse("0")).toBe(0);
    expect(parse("30")).toBe(30);
    expect(parse("36500")).toBe(36500);
    for (const bad of ["-1", "1.5", "forever", "36501"]) expect(() => parse(bad)).toThrow(ConfigError);
  });
});

describe("the retention sweep", () => {
  test("deletes exactly the rows older than the retention, oldest first, in batches", async () => {
    const { clock, fx, count, list } = await logWith(7, 3);
    const logger = memoryLogger();
    const retention = createLogRetention({ store: logDrivers(fx.store).log, clock, log: logger, days: 400, batchRows: 2, batchPauseMs: 0 });
    // Nothing has expired yet: the oldest rows are 100 days old.
    expect(await retention.sweep()).toBe(0);
    expect(count()).toBe(10);
    const newest = list(3).data.map((r) => r.verificationId);
    // One millisecond short of 400 days after the old rows: still kept.
    clock.set(T0 + 400 * DAY_MS);
    expect(await retention.sweep()).toBe(0);
    clock.advance(1);
    expect(await retention.sweep()).toBe(7);
    expect(count()).toBe(3);
    expect(list(10).data.map((r) => r.verificationId)).toEqual(newest);
    expect(logger.lines.some((l) => l.msg === "verification log retention: expired rows deleted" && l.deleted === 7)).toBe(true);
    // 400 days after the recent rows they go too.
    clock.set(T0 + 500 * DAY_MS + 1);
    expect(await retention.sweep()).toBe(3);
    expect(count()).toBe(0);
  });

  test("0 days keeps every row for ever, and starts nothing", async () => {
    const { clock, fx, count } = await logWith(3, 0);
    clock.advance(100_000 * DAY_MS);
    const retention = createLogRetention({ store: logDrivers(fx.store).log, clock, log: memoryLogger(), days: 0, firstSweepMs: 0 });
    retention.start();
    expect(await retention.sweep()).toBe(0);
    await retention.stop();
    expect(count()).toBe(3);
  });

  test("a cursor whose rows were deleted still decodes: the next page holds what remains", async () => {
    const { clock, fx, list } = await logWith(4, 3);
    const first = list(4);
    expect(first.pagination.hasMore).toBe(true);
    const cursor = first.pagination.nextCursor!; // names the newest old row
    clock.set(T0 + 401 * DAY_MS);
    expect(await createLogRetention({ store: logDrivers(fx.store).log, clock, log: memoryLogger(), days: 400 }).sweep()).toBe(4);
    expect(list(4, cursor)).toEqual({ data: [], pagination: { nextCursor: null, hasMore: false } });
    // and a cursor issued before the sweep into rows that survive keeps paging through them
    const fromTop = list(1).pagination.nextCursor!;
    expect(list(5, fromTop).data).toHaveLength(2);
  });

  test("requests get through between batches: a log write queued during a sweep commits before the sweep ends", async () => {
    const { clock, fx, org, log, count } = await logWith(40, 0);
    clock.set(T0 + 401 * DAY_MS);
    const retention = createLogRetention({ store: logDrivers(fx.store).log, clock, log: memoryLogger(), days: 400, batchRows: 4, batchPauseMs: 0 });
    const events: string[] = [];
    const sweeping = retention.sweep().then((n) => events.push(`sweep ${n}`));
    const written = log.record({ orgId: org.id, environment: "live", keyId: "k1", verdict: "no_record", docHash: docHashOf("during") }).then(() => events.push("request"));
    await Promise.all([sweeping, written]);
    expect(events).toEqual(["request", "sweep 40"]);
    expect(count()).toBe(1);
  });

  test("never waits for another connection's write lock: the sweep is postponed, busy_timeout restored", async () => {
    const { clock, fx, count } = await logWith(3, 0);
    clock.set(T0 + 401 * DAY_MS);
    const other = new Database(fx.db.$client.filename);
    onCleanup(() => other.close());
    other.run("PRAGMA busy_timeout = 0");
    other.run("BEGIN IMMEDIATE");
    const logger = memoryLogger();
    const retention = createLogRetention({ store: logDrivers(fx.store).log, clock, log: logger, days: 400 });
    const started = performance.now();
    expect(await retention.sweep()).toBe(0);
    expect(performance.now() - started).toBeLessThan(1000); // the connection's busy_timeout is 5 s
    expect(logger.lines.some((l) => l.msg === "verification log retention: storage busy, sweep postponed")).toBe(true);
    expect((fx.db.$client.query("PRAGMA busy_timeout").get() as { timeout: number }).timeout).toBe(5000);
    expect(count()).toBe(3);
    other.run("ROLLBACK");
    expect(await retention.sweep()).toBe(3);
  });

  test("start() sweeps on its own schedule, by the injected clock; stop() ends it", async () => {
    const { clock, fx, count } = await logWith(5, 2);
    clock.set(T0 + 401 * DAY_MS);
    const logger = memoryLogger();
    const retention = createLogRetention({ store: logDrivers(fx.store).log, clock, log: logger, days: 400, batchRows: 2, batchPauseMs: 0, firstSweepMs: 0, intervalMs: 60_000 });
    retention.start();
    await waitFor("the scheduled sweep", () => logger.lines.find((l) => l.msg === "verification log retention: expired rows deleted"));
    expect(count()).toBe(2);
    await retention.stop();
  });

  test("several nodes: only the node that is active (the anchor loop's leader) sweeps on its schedule", async () => {
    const { clock, fx, count } = await logWith(5, 2);
    clock.set(T0 + 401 * DAY_MS);
    let leading = false;
    const logger = memoryLogger();
    const retention = createLogRetention({ store: logDrivers(fx.store).log, clock, log: logger, days: 400, batchRows: 2, batchPauseMs: 0, firstSweepMs: 0, intervalMs: 20, active: () => leading });
    retention.start();
    await Bun.sleep(120);
    expect(count()).toBe(7);
    leading = true;
    await waitFor("the leader's sweep", () => logger.lines.find((l) => l.msg === "verification log retention: expired rows deleted"));
    expect(count()).toBe(2);
    await retention.stop();
  });

  test("stop() ends a sweep in progress after its current batch", async () => {
    const { clock, fx, count } = await logWith(10, 0);
    clock.set(T0 + 401 * DAY_MS);
    const retention = createLogRetention({ store: logDrivers(fx.store).log, clock, log: memoryLogger(), days: 400, batchRows: 2, batchPauseMs: 0 });
    const sweeping = retention.sweep();
    await retention.stop();
    expect(await sweeping).toBe(2);
    expect(count()).toBe(8);
  });
});

describe("in the app", () => {
  test("the composed app sweeps with its settings and clock; GET /v1/verifications and its cursors keep working", async () => {
    const clock = manualClock(T0);
    const app = await createApp({ config: testConfig({ DOCVERIFY_LOG_RETENTION_DAYS: "30" }), log: memoryLogger(), clock });
    onCleanup(() => app.close());
    await app.anchoringStarted;
    const fx = createRecordsFixture({ db: app.db, signer: app.signer, clock });
    const org = await fx.createOrg("Retained Ltd", { apiAccess: true, validated: true });
    const key = (await app.apiKeys.mint({ orgId: org.id, environment: "live" }, "test")).key;
    const send = async (path: string, init: RequestInit = {}) => {
      const res = await app.http.handle(new Request(`http://localhost${path}`, { ...init, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" } }), "198.51.100.7");
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };
    for (let i = 0; i < 3; i++) expect((await send("/v1/verifications", { method: "POST", body: JSON.stringify({ originalDocHash: docHashOf(`old ${i}`) }) })).status).toBe(200);
    clock.advance(20 * DAY_MS);
    for (let i = 0; i < 2; i++) expect((await send("/v1/verifications", { method: "POST", body: JSON.stringify({ originalDocHash: docHashOf(`new ${i}`) }) })).status).toBe(200);
    const page = await send("/v1/verifications?limit=3");
    const cursor = page.body.pagination.nextCursor as string;
    const oldId = page.body.data[2].verificationId as string;

    clock.advance(15 * DAY_MS); // the first three are 35 days old, the last two 15
    expect(await app.logRetention.sweep()).toBe(3);
    const listed = await send("/v1/verifications");
    expect(listed.body.data).toHaveLength(2);
    expect((await send(`/v1/verifications?limit=3&after=${encodeURIComponent(cursor)}`)).body).toEqual({ data: [], pagination: { nextCursor: null, hasMore: false } });
    expect((await send(`/v1/verifications/${oldId}`)).status).toBe(404);
  }, 30_000);
});
