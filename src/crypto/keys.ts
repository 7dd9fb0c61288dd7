/**
 * Algorithm-tagged public keys and their fingerprints.
 *
 * A public key never travels as bare bytes: it is `{ algorithm, publicKey }`, so a record stored
 * today under ML-DSA-65 still says so after other algorithms are added. The fingerprint hashes
 * the tag together with the key, so two algorithms can never share a fingerprint, and a
 * signature's payload that names the fingerprint (payload.ts) also pins the algorithm.
 *
 * Fingerprint (docs/signing.md §2), exactly:
 *   SHA-256( "docverify/public-key/v1" || 0x00
 *            || u32be(len(algorithm)) || algorithm as ASCII
 *            || u32be(len(publicKey)) || publicKey )
 */
import { createHash } from "node:crypto";
import { algorithmSpec, type Algorithm } from "./algorithms.ts";
import { ascii, assertBytes, checkOptions, concatBytes, domainTag, lengthPrefixed } from "./bytes.ts";

export interface TaggedPublicKey {
  readonly algorithm: Algorithm;
  /** Raw public key as FIPS 204 encodes it (pkEncode); 1952 bytes for ML-DSA-65. */
  readonly publicKey: Uint8Array;
}

export const PUBLIC_KEY_DOMAIN = "docverify/public-key/v1";
export const FINGERPRINT_LENGTH = 32;

/** The bytes the fingerprint hashes. Checks the key length against the algorithm. */
export function encodeTaggedPublicKey(key: TaggedPublicKey): Uint8Array {
  checkOptions(key, "public key", ["algorithm", "publicKey"]);
  const spec = algorithmSpec(key.algorithm);
  assertBytes(key.publicKey, "publicKey", spec.publicKeyLength);
  return concatBytes(domainTag(PUBLIC_KEY_DOMAIN), lengthPrefixed(ascii(spec.name)), lengthPrefixed(key.publicKey));
}

/** SHA-256 of the tagged public key: 32 bytes. Stored and logged as lowercase hex. */
export function keyFingerprint(key: TaggedPublicKey): Uint8Array {
  return new Uint8Array(createHash("sha256").update(encodeTaggedPublicKey(key)).digest());
}
