/**
 * The default limit of every test and hook without its own, in milliseconds: `npm test` runs
 * `bun test --timeout 20000` (package.json). Bun 1.4.5 ignores `[test] timeout` in bunfig.toml,
 * and setDefaultTimeout in a preload did not hold across test files, so the flag is the setting.
 * test/test-timeout.test.ts checks the limit in effect.
 */
export const DEFAULT_TEST_TIMEOUT_MS = 20_000;
