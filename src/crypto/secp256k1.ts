/**
 * ECDSA secp256k1 verification as Hedera applies it to `ECDSASecp256k1` keys: the signed message
 * is keccak256(bodyBytes), the signature the 64-byte compact r ‖ s, the key the 33-byte compressed
 * point. Hedera's nodes verify with libsecp256k1, which accepts only low-S signatures
 * (s ≤ n/2); so does this, and the SDK only makes low-S ones.
 *
 * Verification only, over public data. Bun's node:crypto (BoringSSL) has no secp256k1 curve,
 * hence @noble/curves.
 */
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { assertBytes } from "./bytes.ts";
import { keccak256 } from "./keccak.ts";

function isCompressedKey(key: Uint8Array): boolean {
  return key.length === 33 && (key[0] === 0x02 || key[0] === 0x03);
}

/** The curve point of a 33-byte compressed public key, or null when it is not one on the curve. */
export function decompressSecp256k1(key: Uint8Array): { x: bigint; y: bigint } | null {
  assertBytes(key, "key");
  if (!isCompressedKey(key)) return null;
  try {
    const point = secp256k1.Point.fromBytes(key);
    return { x: point.x, y: point.y };
  } catch {
    return null;
  }
}

/**
 * Whether `signature` (64 bytes, r ‖ s, low-S) is a valid ECDSA secp256k1 signature by the
 * compressed public key `publicKey` over keccak256(`message`). False, never a throw, for
 * malformed keys and signatures.
 */
export function verifySecp256k1(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  assertBytes(publicKey, "publicKey");
  assertBytes(message, "message");
  assertBytes(signature, "signature");
  // noble also takes 65-byte uncompressed keys; a Hedera key is compressed only.
  if (!isCompressedKey(publicKey) || signature.length !== 64) return false;
  try {
    return secp256k1.verify(signature, keccak256(message), publicKey, { prehash: false, lowS: true, format: "compact" });
  } catch {
    return false;
  }
}
