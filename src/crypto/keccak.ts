/**
 * Keccak-256: the original Keccak padding (Ethereum's), not NIST SHA3-256. Hedera's ECDSA
 * secp256k1 signatures are over keccak256(bodyBytes) (secp256k1.ts). Bun's node:crypto
 * (BoringSSL) has no Keccak, hence @noble/hashes.
 */
import { keccak_256 } from "@noble/hashes/sha3.js";
import { assertBytes } from "./bytes.ts";

/** Keccak-256 of `data`: 32 bytes. */
export function keccak256(data: Uint8Array): Uint8Array {
  assertBytes(data, "data");
  return keccak_256(data);
}
