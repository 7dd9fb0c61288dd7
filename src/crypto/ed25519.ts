/**
 * ED25519 signing through node:crypto (native), for the ledger adapter's transaction
 * signatures (src/anchoring/hedera-ledger.ts, through the SDK's `signWith`). These are ledger
 * keys (the operator's, the topics' submit key), not docverify's own signing keys; they live
 * here because node:crypto's signing APIs are used only in crypto/ (test/architecture.test.ts).
 *
 * Why not the SDK's own: it signs with tweetnacl (pure JavaScript), milliseconds per signature
 * and as much again to parse a key, on the thread that serves the API. ED25519 is deterministic,
 * so the bytes are the same.
 */
import { createPrivateKey, createPublicKey, sign } from "node:crypto";

/** PKCS#8 DER of an ED25519 private key, up to its 32-byte seed. */
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

export interface Ed25519RawSigner {
  /** The raw 32-byte public key. */
  readonly publicKey: Uint8Array;
  /** The 64-byte signature of `message`. */
  sign(message: Uint8Array): Uint8Array;
}

/** A signer for a raw 32-byte ED25519 private key (seed). The key is parsed once. */
export function ed25519RawSigner(seed: Uint8Array): Ed25519RawSigner {
  if (seed.length !== 32) throw new TypeError("an ED25519 private key is 32 bytes");
  const key = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: "der", type: "pkcs8" });
  const spki = createPublicKey(key).export({ format: "der", type: "spki" });
  return {
    publicKey: new Uint8Array(spki.subarray(spki.length - 32)),
    sign: (message) => new Uint8Array(sign(null, message, key)),
  };
}
