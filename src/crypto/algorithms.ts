/**
 * The signature-algorithm registry, and the native (Bun `node:crypto`) implementation of each
 * algorithm. Every stored public key, sealed seed and signature is tagged with an algorithm name
 * from `ALGORITHMS`; code looks the name up here instead of assuming ML-DSA-65, so adding
 * ML-DSA-87 or a hybrid is a new entry and stored records keep verifying under their own name.
 *
 * An entry MUST guarantee:
 * - `name` never changes meaning once records exist under it (it is hashed into fingerprints);
 * - `importSeed` is deterministic: the same seed always gives the same public key, and that key
 *   is the FIPS 204 `ML-DSA.KeyGen_internal(seed)` public key (checked by known-answer tests);
 * - `verify` returns false, never throws, for a signature or public key of the wrong length or
 *   content: a damaged record is tamper evidence, not a crash.
 */
import { createPrivateKey, createPublicKey, sign as nativeSign, verify as nativeVerify, type KeyObject } from "node:crypto";
import { bytesEqual, concatBytes } from "./bytes.ts";
import { UnsupportedAlgorithmError } from "./errors.ts";

export const ALGORITHMS = ["ML-DSA-65"] as const;
export type Algorithm = (typeof ALGORITHMS)[number];

/** What new keys use. Changing it affects only keys generated afterwards. */
export const DEFAULT_ALGORITHM: Algorithm = "ML-DSA-65";

export interface AlgorithmSpec {
  readonly name: Algorithm;
  readonly seedLength: number;
  readonly publicKeyLength: number;
  readonly signatureLength: number;
  /** The native private key for a seed, and the raw public key derived from it. */
  importSeed(seed: Uint8Array): { privateKey: KeyObject; publicKey: Uint8Array };
  /** The native public key for raw public-key bytes of the right length. */
  importPublicKey(publicKey: Uint8Array): KeyObject;
  sign(privateKey: KeyObject, message: Uint8Array): Uint8Array;
  verify(publicKey: KeyObject, message: Uint8Array, signature: Uint8Array): boolean;
}

export function isAlgorithm(name: unknown): name is Algorithm {
  return typeof name === "string" && (ALGORITHMS as readonly string[]).includes(name);
}

/** The registry entry for `name`; throws `UnsupportedAlgorithmError` for any other string. */
export function algorithmSpec(name: string): AlgorithmSpec {
  if (!isAlgorithm(name)) throw new UnsupportedAlgorithmError(name);
  return REGISTRY[name];
}

// ---------------------------------------------------------------------------------------------
// ML-DSA through node:crypto.
//
// Bun 1.4.5 signs and verifies ML-DSA natively (`sign(null, msg, key)`), randomised ("hedged")
// as FIPS 204 recommends, with an empty context string; there is no option for a context, so
// domain separation lives in the signed bytes themselves (payload.ts).
//
// Importing from a 32-byte seed: a JWK `{kty:"AKP", alg, priv}` is refused without `pub`, which
// we do not have before derivation. What works is PKCS#8 in the seed-only form of RFC 9881
// (ML-DSA in X.509): PrivateKeyInfo { version 0, AlgorithmIdentifier { id-ml-dsa-* },
// OCTET STRING { [0] IMPLICIT OCTET STRING (32 bytes) } }. The public key is then read back
// from the SPKI export, whose DER header for a given parameter set is fixed, so the raw key is
// everything after it (22 bytes for ML-DSA-65).
// ---------------------------------------------------------------------------------------------

function derLength(n: number): number[] {
  if (n < 0x80) return [n];
  if (n < 0x100) return [0x81, n];
  if (n < 0x10000) return [0x82, n >> 8, n & 0xff];
  throw new RangeError("DER length too large");
}

function mlDsa(params: { name: Algorithm; oidLastArc: number; publicKeyLength: number; signatureLength: number }): AlgorithmSpec {
  const { name, publicKeyLength, signatureLength } = params;
  const seedLength = 32;
  // AlgorithmIdentifier { 2.16.840.1.101.3.4.3.<arc> } with parameters absent.
  const algId = [0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, params.oidLastArc];
  const bitString = [0x03, ...derLength(publicKeyLength + 1), 0x00];
  const spkiPrefix = Uint8Array.from([0x30, ...derLength(algId.length + bitString.length + publicKeyLength), ...algId, ...bitString]);
  const pkcs8Body = [0x02, 0x01, 0x00, ...algId, 0x04, seedLength + 2, 0x80, seedLength];
  const pkcs8SeedPrefix = Uint8Array.from([0x30, ...derLength(pkcs8Body.length + seedLength), ...pkcs8Body]);

  function publicKeyBytes(privateKey: KeyObject): Uint8Array {
    const spki = new Uint8Array(createPublicKey(privateKey).export({ format: "der", type: "spki" }));
    const head = spki.subarray(0, spkiPrefix.length);
    if (spki.length !== spkiPrefix.length + publicKeyLength || !bytesEqual(head, spkiPrefix)) {
      throw new Error(`${name}: unexpected SPKI encoding from the native implementation`);
    }
    return spki.slice(spkiPrefix.length);
  }

  return Object.freeze({
    name,
    seedLength,
    publicKeyLength,
    signatureLength,
    importSeed(seed: Uint8Array) {
      if (seed.length !== seedLength) throw new RangeError(`${name} seed must be ${seedLength} bytes`);
      const der = concatBytes(pkcs8SeedPrefix, seed);
      try {
        const privateKey = createPrivateKey({ key: Buffer.from(der.buffer, der.byteOffset, der.byteLength), format: "der", type: "pkcs8" });
        return { privateKey, publicKey: publicKeyBytes(privateKey) };
      } finally {
        der.fill(0); // the DER copy holds the seed
      }
    },
    importPublicKey(publicKey: Uint8Array) {
      if (publicKey.length !== publicKeyLength) throw new RangeError(`${name} public key must be ${publicKeyLength} bytes`);
      return createPublicKey({ key: Buffer.from(concatBytes(spkiPrefix, publicKey)), format: "der", type: "spki" });
    },
    sign(privateKey: KeyObject, message: Uint8Array) {
      return new Uint8Array(nativeSign(null, message, privateKey));
    },
    verify(publicKey: KeyObject, message: Uint8Array, signature: Uint8Array) {
      if (signature.length !== signatureLength) return false;
      try {
        return nativeVerify(null, message, publicKey, signature);
      } catch {
        return false;
      }
    },
  });
}

const REGISTRY: Readonly<Record<Algorithm, AlgorithmSpec>> = Object.freeze({
  // FIPS 204 Table 2: pk 1952 bytes, signature 3309 bytes; OID id-ml-dsa-65 = 2.16.840.1.101.3.4.3.18.
  // ML-DSA-87 would be { oidLastArc: 19, publicKeyLength: 2592, signatureLength: 4627 }.
  "ML-DSA-65": mlDsa({ name: "ML-DSA-65", oidLastArc: 18, publicKeyLength: 1952, signatureLength: 3309 }),
});
