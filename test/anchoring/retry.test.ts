/**
 * How the anchor loop waits and what it logs meanwhile (src/anchoring/retry.ts): the one backoff
 * curve, its jitter, and the ledger's health: failures rate-limited, one line when the ledger is
 * reachable again, and the recovery the loop drains the queue on. (The rate limit itself:
 * "error-log rate limit" in anchorer.test.ts.)
 */
import { describe, expect, test } from "bun:test";
import { backoffDelay, ErrorLog, ErrorLogLimiter, jittered, LedgerHealth, retryBeforeCutoff } from "../../src/anchoring/retry.ts";
import { memoryLogger } from "../../src/lib/log.ts";

describe("backoff", () => {
  test("doubles from the base to the cap; try 0 counts as the first; a huge count does not overflow", () => {
    expect([0, 1, 2, 3, 4, 7, 8, 9, 1_000_000].map((n) => backoffDelay(n, 500, 60_000))).toEqual([500, 500, 1000, 2000, 4000, 32_000, 60_000, 60_000, 60_000]);
    expect(backoffDelay(40, 1, Number.POSITIVE_INFINITY)).toBe(2 ** 30);
  });

  test("jitter draws from the upper half", () => {
    expect(jittered(1000, () => 0)).toBe(500);
    expect(jittered(1000, () => 0.999999)).toBe(1000);
    for (let i = 0; i < 1000; i++) {
      const d = jittered(60_000);
      expect(d).toBeGreaterThanOrEqual(30_000);
      expect(d).toBeLessThanOrEqual(60_000);
    }
  });
});

describe("ledger health", () => {
  function setup() {
    const log = memoryLogger();
    let t = 0;
    const now = () => t;
    let recoveries = 0;
    const health = new LedgerHealth(new ErrorLog(log, new ErrorLogLimiter(60_000), now), () => recoveries++, now);
    return { log, health, advance: (ms: number) => (t += ms), recoveries: () => recoveries };
  }
  const lines = (log: ReturnType<typeof memoryLogger>, msg: string) => log.lines.filter((l) => l.msg === msg);

  test("how long the ledger has not answered: from the first failure of a run, 0 again once it answers", () => {
    const { health, advance } = setup();
    expect(health.unreachableForMs()).toBe(0);
    advance(1000);
    health.down("refused");
    advance(20_000);
    health.down("refused");
    advance(11_000);
    expect(health.unreachableForMs()).toBe(31_000);
    health.ok();
    expect(health.unreachableForMs()).toBe(0);
    health.down("refused");
    advance(5);
    expect(health.unreachableForMs()).toBe(5);
  });

  test("failures: counted, one warn line a minute with the count so far, readiness names the error", () => {
    const { log, health, advance } = setup();
    expect(health.last).toBeNull();
    health.down("connection refused");
    advance(1000);
    health.down("connection refused");
    health.down("timed out");
    expect(health.failures).toBe(3);
    expect(health.fresh(10_000)).toBe("ledger unreachable: timed out");
    expect(lines(log, "ledger unreachable; anchoring waits and retries").map((l) => [l.level, l.failures, l.error])).toEqual([["warn", 1, "connection refused"]]);
    advance(60_000);
    health.down("timed out");
    expect(lines(log, "ledger unreachable; anchoring waits and retries").map((l) => [l.failures, l.suppressed])).toEqual([
      [1, undefined],
      [4, 2],
    ]);
    expect(health.fresh(10_000)).toBe("ledger unreachable: timed out");
    advance(10_000);
    expect(health.fresh(10_000)).toBeNull(); // stale: readiness probes again
  });

  test("the first answer after failures: one line with the count, the loop told once; later answers say nothing", () => {
    const { log, health, recoveries } = setup();
    health.ok();
    expect(health.takeRecovery()).toBe(false);
    expect(lines(log, "ledger reachable again")).toEqual([]);
    for (let i = 0; i < 5; i++) health.down("refused");
    health.ok();
    expect(health.failures).toBe(0);
    expect(health.fresh(10_000)).toBe(true);
    expect(lines(log, "ledger reachable again").map((l) => [l.level, l.failures])).toEqual([["info", 5]]);
    expect(recoveries()).toBe(1);
    expect(health.takeRecovery()).toBe(true);
    expect(health.takeRecovery()).toBe(false);
    health.ok();
    expect(lines(log, "ledger reachable again")).toHaveLength(1);
    expect(recoveries()).toBe(1);
  });

  test("once the loop stops, nothing more is logged", () => {
    const log = memoryLogger();
    const errors = new ErrorLog(log);
    const health = new LedgerHealth(errors, () => undefined);
    errors.silence();
    health.down("refused");
    health.ok();
    expect(log.lines).toEqual([]);
  });

  test("probes share one ping; a ping that throws is a failure", async () => {
    const { health } = setup();
    let pings = 0;
    const ping = async () => {
      pings++;
      await Promise.resolve();
      return true as const;
    };
    await Promise.all([health.probe(ping), health.probe(ping), health.probe(ping)]);
    expect(pings).toBe(1);
    expect(health.last).toBe(true);
    await health.probe(async () => {
      throw new Error("boom");
    });
    expect(health.last).toBe("ledger unreachable: Error: boom");
    await health.probe(async () => "UNAVAILABLE");
    expect(health.failures).toBe(2);
  });
});

test("a transaction that may have been sent is tried again before its window's cutoff, never in a tight loop past it", () => {
  // A long backoff (the ledger failed many times) is cut to just before the cutoff.
  expect(retryBeforeCutoff(60_000, 4_000)).toBe(3_999);
  // A short one stays.
  expect(retryBeforeCutoff(500, 4_000)).toBe(500);
  // At or past the cutoff, the backoff as it is: the window decides; nothing retries at once.
  expect(retryBeforeCutoff(60_000, 1)).toBe(60_000);
  expect(retryBeforeCutoff(60_000, 0)).toBe(60_000);
  expect(retryBeforeCutoff(8_000, -5_000)).toBe(8_000);
});
