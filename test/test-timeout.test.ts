/**
 * The limit a test or hook runs under when it sets none is the one the project states
 * (test/support/preload.ts, README's Development section), not Bun's own 5 s: a hook and a test
 * that each take longer than 5 s, and well under the project's limit, both finish.
 */
import { beforeAll, expect, test } from "bun:test";
import { DEFAULT_TEST_TIMEOUT_MS } from "./support/timeouts.ts";

/** Past Bun's built-in default of 5,000 ms. */
const PAST_BUNS_DEFAULT_MS = 5_300;

let hookFinished = false;
beforeAll(async () => {
  await Bun.sleep(PAST_BUNS_DEFAULT_MS);
  hookFinished = true;
});

test("a hook and a test with no limit of their own run under the project's default, not Bun's 5 s", async () => {
  expect(DEFAULT_TEST_TIMEOUT_MS).toBe(20_000);
  expect(hookFinished).toBe(true);
  const started = performance.now();
  await Bun.sleep(PAST_BUNS_DEFAULT_MS);
  expect(performance.now() - started).toBeGreaterThanOrEqual(PAST_BUNS_DEFAULT_MS - 50);
});
