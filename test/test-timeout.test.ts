/**
 * The limit a test or hook runs under when it sets none, in `npm test`, is the one the project
 * states (package.json's `--timeout`, README's Development section), not Bun's own 5 s: a hook and
 * a test that each take longer than 5 s, and well under the project's limit, both finish. Run
 * alone without the flag (`bun test test/test-timeout.test.ts`), it fails, as it should.
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
