/**
 * Loaded before every test file (bunfig.toml `[test] preload`): the default limit of a test and
 * of a hook. Bun 1.4.5 ignores `[test] timeout` in bunfig.toml and would give each 5 s, which a
 * busy machine overruns now and then; setDefaultTimeout is the setting it honours, for tests and
 * hooks alike. A test that needs longer says so itself. test/test-timeout.test.ts checks that this
 * is the limit in effect.
 */
import { setDefaultTimeout } from "bun:test";
import { DEFAULT_TEST_TIMEOUT_MS } from "./timeouts.ts";

setDefaultTimeout(DEFAULT_TEST_TIMEOUT_MS);
