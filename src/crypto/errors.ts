/**
 * Errors of the crypto module. Two of them are DomainErrors because they reach HTTP callers:
 * the service keeps running without a usable key store and answers record operations with them,
 * while verification (which needs only public keys) goes on working.
 */
import { DomainError } from "../lib/errors.ts";

/** Seconds a caller is asked to wait when signing is unavailable; an operator has to act first. */
const KEY_STORE_RETRY_SECONDS = 60;

/**
 * No master key is configured (or the configured file does not exist and we may not create it),
 * so private keys can be neither created nor used. Maps to 503 SERVICE_UNAVAILABLE: the key store
 * is sealed. `file` is for the log only: the message shown to callers omits it.
 */
export class MasterKeyMissingError extends DomainError {
  constructor(readonly file: string | null) {
    super("SERVICE_UNAVAILABLE", "Signing is unavailable: the key store is sealed.", undefined, KEY_STORE_RETRY_SECONDS);
  }
}

export type KeyDecryptionFailure =
  /** Too short, or does not start with the envelope magic. */
  | "malformed"
  /** A well-formed envelope of a version this build cannot open. */
  | "unsupported_version"
  /** AES-GCM refused it: wrong master key, ciphertext moved to another key's row, or tampering. */
  | "authentication_failed"
  /** The seed decrypted but does not derive the stored public key, or the stored fingerprint is not the key's. */
  | "key_mismatch";

/**
 * A stored private key could not be opened. Not retryable by the caller: the master key is not
 * the one the key was sealed under, or the key store was altered. 500 INTERNAL_ERROR; `reason`
 * and `keyId` (the fingerprint in hex) are for the log.
 */
export class KeyDecryptionError extends DomainError {
  constructor(
    readonly reason: KeyDecryptionFailure,
    readonly keyId: string | null,
  ) {
    super("INTERNAL_ERROR", "Internal error.");
  }
}

/**
 * The master key file exists but cannot be used (wrong length, unreadable, not a file).
 * A configuration fault: startup stops with this message, which names the file.
 */
export class MasterKeyFileError extends Error {
  override readonly name = "MasterKeyFileError";
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(`master key file ${file}: ${message}`);
  }
}

/** An algorithm name this build does not implement. A programming or data fault, never a verdict. */
export class UnsupportedAlgorithmError extends Error {
  override readonly name = "UnsupportedAlgorithmError";
  constructor(readonly algorithm: string) {
    super(`unsupported signature algorithm: ${JSON.stringify(algorithm)}`);
  }
}
