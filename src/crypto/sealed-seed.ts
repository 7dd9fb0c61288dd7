/**
 * Private-key seeds encrypted at rest. Contract: docs/signing.md §4 documents the envelope.
 *
 * Envelope v1 (65 bytes for a 32-byte seed):
 *   "DVSS"      4 bytes   magic: docverify sealed seed
 *   0x01        1 byte    envelope version
 *   nonce      12 bytes   random, fresh for every sealing
 *   ciphertext  n bytes   AES-256-GCM of the seed
 *   tag        16 bytes   GCM authentication tag
 *
 * Key: HKDF-SHA256(ikm = master key, salt = empty, info = "docverify/seed-encryption/v1", 32).
 * The master key itself is never used directly, so it could key other purposes later without
 * two uses ever sharing a key.
 *
 * Associated data binds the ciphertext to the key it belongs to:
 *   "docverify/sealed-seed/v1" 0x00
 *   || u32be(len) || algorithm (ASCII)
 *   || u32be(32)  || key fingerprint
 *   || u32be(len) || purpose (ASCII)
 *   || the 5 header bytes ("DVSS" 0x01)
 * so a ciphertext copied onto another key's row, relabelled with another purpose or algorithm,
 * or given another version byte fails authentication instead of decrypting.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import type { Algorithm } from "./algorithms.ts";
import { ascii, assertBytes, concatBytes, domainTag, lengthPrefixed, toHex } from "./bytes.ts";
import { KeyDecryptionError } from "./errors.ts";
import { FINGERPRINT_LENGTH } from "./keys.ts";

export const ENVELOPE_MAGIC = "DVSS";
export const ENVELOPE_VERSION = 1;
export const SEED_ENCRYPTION_INFO = "docverify/seed-encryption/v1";
export const SEALED_SEED_AD_DOMAIN = "docverify/sealed-seed/v1";
export const MASTER_KEY_LENGTH = 32;

const HEADER_LENGTH = 5;
const NONCE_LENGTH = 12;
const TAG_LENGTH = 16;
const PURPOSE_RE = /^[\x21-\x7e]{1,200}$/;

/** What a sealed seed is bound to. All three must be presented again to open it. */
export interface SeedBinding {
  readonly algorithm: Algorithm;
  readonly fingerprint: Uint8Array;
  /** Printable ASCII without spaces, 1–200 characters, e.g. `org:<orgId>` or `service-seal`. */
  readonly purpose: string;
}

export function assertPurpose(purpose: unknown): asserts purpose is string {
  if (typeof purpose !== "string" || !PURPOSE_RE.test(purpose)) {
    throw new TypeError("purpose must be 1 to 200 printable ASCII characters without spaces");
  }
}

/** The AES-256-GCM key for seeds, derived from the master key. */
export function deriveSeedEncryptionKey(masterKey: Uint8Array): Uint8Array {
  assertBytes(masterKey, "masterKey", MASTER_KEY_LENGTH);
  return new Uint8Array(hkdfSync("sha256", masterKey, new Uint8Array(0), SEED_ENCRYPTION_INFO, 32));
}

function header(): Uint8Array {
  return concatBytes(ascii(ENVELOPE_MAGIC), new Uint8Array([ENVELOPE_VERSION]));
}

function associatedData(binding: SeedBinding): Uint8Array {
  assertBytes(binding.fingerprint, "fingerprint", FINGERPRINT_LENGTH);
  assertPurpose(binding.purpose);
  return concatBytes(
    domainTag(SEALED_SEED_AD_DOMAIN),
    lengthPrefixed(ascii(binding.algorithm)),
    lengthPrefixed(binding.fingerprint),
    lengthPrefixed(ascii(binding.purpose)),
    header(),
  );
}

/** Encrypts a seed under the derived key, bound to `binding`. */
export function sealSeed(encryptionKey: Uint8Array, seed: Uint8Array, binding: SeedBinding): Uint8Array {
  assertBytes(encryptionKey, "encryptionKey", 32);
  assertBytes(seed, "seed");
  const nonce = randomBytes(NONCE_LENGTH);
  const cipher = createCipheriv("aes-256-gcm", encryptionKey, nonce, { authTagLength: TAG_LENGTH });
  cipher.setAAD(associatedData(binding));
  const ciphertext = concatBytes(cipher.update(seed), cipher.final());
  return concatBytes(header(), nonce, ciphertext, cipher.getAuthTag());
}

/**
 * Decrypts a sealed seed. Throws `KeyDecryptionError` with reason `malformed`,
 * `unsupported_version` or `authentication_failed`; never returns unauthenticated bytes.
 */
export function openSeed(encryptionKey: Uint8Array, envelope: Uint8Array, binding: SeedBinding): Uint8Array {
  assertBytes(encryptionKey, "encryptionKey", 32);
  assertBytes(envelope, "sealedSeed");
  const keyId = binding.fingerprint instanceof Uint8Array ? toHex(binding.fingerprint) : null;
  const magic = ascii(ENVELOPE_MAGIC);
  if (envelope.length < HEADER_LENGTH || magic.some((b, i) => envelope[i] !== b)) throw new KeyDecryptionError("malformed", keyId);
  if (envelope[4] !== ENVELOPE_VERSION) throw new KeyDecryptionError("unsupported_version", keyId);
  if (envelope.length < HEADER_LENGTH + NONCE_LENGTH + TAG_LENGTH + 1) throw new KeyDecryptionError("malformed", keyId);
  const nonce = envelope.subarray(HEADER_LENGTH, HEADER_LENGTH + NONCE_LENGTH);
  const ciphertext = envelope.subarray(HEADER_LENGTH + NONCE_LENGTH, envelope.length - TAG_LENGTH);
  const tag = envelope.subarray(envelope.length - TAG_LENGTH);
  const decipher = createDecipheriv("aes-256-gcm", encryptionKey, nonce, { authTagLength: TAG_LENGTH });
  decipher.setAAD(associatedData(binding));
  decipher.setAuthTag(tag);
  const plain = decipher.update(ciphertext);
  try {
    return concatBytes(plain, decipher.final());
  } catch {
    throw new KeyDecryptionError("authentication_failed", keyId);
  } finally {
    plain.fill(0);
  }
}

/**
 * A sealed seed opened under `from` and sealed again under `to` (both derived keys), with the same
 * binding and a fresh nonce: a master key rotation. Throws what `openSeed` throws; the seed is
 * wiped from memory either way.
 */
export function resealSeed(from: Uint8Array, to: Uint8Array, envelope: Uint8Array, binding: SeedBinding): Uint8Array {
  const seed = openSeed(from, envelope, binding);
  try {
    return sealSeed(to, seed, binding);
  } finally {
    seed.fill(0);
  }
}
