/** The default limit of every test and hook without its own, in milliseconds (set by preload.ts). */
export const DEFAULT_TEST_TIMEOUT_MS = 20_000;
