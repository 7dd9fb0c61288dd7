/**
 * Document digests that make test/crypto/support/crashing-sign-worker.ts fail: one of 0xee bytes
 * throws an uncaught error in the worker, one of 0xdd bytes ends its thread (process.exit).
 */
export const THROW_DIGEST_BYTE = 0xee;
export const EXIT_DIGEST_BYTE = 0xdd;
export const THROW_DOC_HASH = "sha256:" + "ee".repeat(32);
export const EXIT_DOC_HASH = "sha256:" + "dd".repeat(32);
