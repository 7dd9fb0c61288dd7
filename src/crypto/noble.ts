/**
 * The independent second implementation: @noble/post-quantum, pure TypeScript. The product signs
 * and verifies natively (algorithms.ts); noble exists to cross-check that — tests verify every
 * kind of signature the product makes with both, and known-answer tests pin both to the same
 * public key for a fixed seed — and for verification where no native code runs (the browser).
 *
 * @noble/post-quantum 0.7.1 argument order (it changed between releases, which is why the
 * known-answer tests hard-code digests rather than only round-tripping):
 *   keygen(seed32) → { publicKey, secretKey }
 *   sign(message, secretKey, { extraEntropy?: Uint8Array | false, context? })
 *   verify(signature, message, publicKey, { context? })
 * `extraEntropy: false` selects FIPS 204's deterministic variant; the default is hedged.
 */
import { ml_dsa65 } from "@noble/post-quantum/ml-dsa.js";
import { algorithmSpec, type Algorithm } from "./algorithms.ts";
import { assertBytes, checkOptions } from "./bytes.ts";

const NOBLE = {
  "ML-DSA-65": ml_dsa65,
} as const satisfies Record<Algorithm, unknown>;

function impl(algorithm: Algorithm) {
  algorithmSpec(algorithm); // throws UnsupportedAlgorithmError for unknown names
  return NOBLE[algorithm];
}

/** The raw public key noble derives from a seed. */
export function publicKeyFromSeedWithNoble(algorithm: Algorithm, seed: Uint8Array): Uint8Array {
  assertBytes(seed, "seed", algorithmSpec(algorithm).seedLength);
  return impl(algorithm).keygen(seed).publicKey;
}

export interface NobleSignOptions {
  /** True for FIPS 204 deterministic signing (same inputs, same signature): known answers. */
  readonly deterministic: boolean;
}

/** Signs with noble from a seed. For tests and benchmarks; the product signs natively. */
export function signWithNoble(algorithm: Algorithm, seed: Uint8Array, message: Uint8Array, options: NobleSignOptions): Uint8Array {
  checkOptions(options, "signWithNoble options", ["deterministic"]);
  if (typeof options.deterministic !== "boolean") throw new TypeError("deterministic must be a boolean");
  assertBytes(seed, "seed", algorithmSpec(algorithm).seedLength);
  assertBytes(message, "message");
  const { secretKey } = impl(algorithm).keygen(seed);
  try {
    return impl(algorithm).sign(message, secretKey, options.deterministic ? { extraEntropy: false } : {});
  } finally {
    secretKey.fill(0);
  }
}

/** Verifies with noble. False, never a throw, for malformed bytes, like the native verify. */
export function verifyWithNoble(algorithm: Algorithm, publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  const spec = algorithmSpec(algorithm);
  assertBytes(publicKey, "publicKey");
  assertBytes(message, "message");
  assertBytes(signature, "signature");
  if (publicKey.length !== spec.publicKeyLength || signature.length !== spec.signatureLength) return false;
  try {
    return impl(algorithm).verify(signature, message, publicKey);
  } catch {
    return false;
  }
}
