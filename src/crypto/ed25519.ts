/**
 * ED25519 through node:crypto (native), for ledger keys (the operator's, the topics' submit
 * keys), not docverify's own signing keys; they live here because node:crypto's signing APIs are
 * used only in crypto/ (test/architecture.test.ts).
 *
 * - `generateEd25519KeyPair`: a new topic submit key, without loading the ledger SDK.
 * - `ed25519RawSigner`: the ledger adapter's transaction signatures
 *   (src/anchoring/hedera-ledger.ts, through the SDK's `signWith`). Why not the SDK's own: it
 *   signs with tweetnacl (pure JavaScript), milliseconds per signature and as much again to parse
 *   a key, on the thread that serves the API. ED25519 is deterministic, so the bytes are the same.
 * - `createEd25519Verifier`, `ed25519PublicKeyFromPkcs8`: the local ledger's signature checks and
 *   its operator key (src/local-ledger/keys.ts). Synchronous, so the ledger decides a
 *   transaction inside one synchronous SQLite transaction.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from "node:crypto";

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

/** A new ED25519 key pair, raw: the 32-byte private key (seed) and the 32-byte public key. For the topics' submit keys. */
export function generateEd25519KeyPair(): { readonly privateKey: Uint8Array; readonly publicKey: Uint8Array } {
  const pkcs8 = generateKeyPairSync("ed25519").privateKey.export({ format: "der", type: "pkcs8" });
  const seed = new Uint8Array(pkcs8.subarray(pkcs8.length - 32));
  return { privateKey: seed, publicKey: ed25519RawSigner(seed).publicKey };
}

/** SPKI DER of an ED25519 public key, up to its 32 raw bytes. */
const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

/** Whether `signature` is `publicKey`'s ED25519 signature of `message`; false, never a throw. */
export type Ed25519Verifier = (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array) => boolean;

/**
 * An ED25519 verifier for raw 32-byte public keys that keeps parsed keys in a bounded cache: the
 * same few keys (a ledger's operator, each topic's submit key) sign nearly everything.
 */
export function createEd25519Verifier(maxCachedKeys = 1024): Ed25519Verifier {
  const cache = new Map<string, KeyObject>();
  return (publicKey, message, signature) => {
    if (publicKey.length !== 32 || signature.length !== 64) return false;
    const id = Buffer.from(publicKey).toString("hex");
    try {
      let key = cache.get(id);
      if (!key) {
        if (cache.size >= maxCachedKeys) cache.clear();
        key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKey]), format: "der", type: "spki" });
        cache.set(id, key);
      }
      return verify(null, message, key, signature);
    } catch {
      // A key the native code refuses to parse is not a key that signed anything.
      return false;
    }
  };
}

/**
 * The raw 32-byte public key of an ED25519 private key in DER PKCS#8. Throws a TypeError when the
 * bytes are not that.
 */
export function ed25519PublicKeyFromPkcs8(der: Uint8Array): Uint8Array {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: Buffer.from(der), format: "der", type: "pkcs8" });
  } catch {
    throw new TypeError("not a private key in DER (PKCS#8)");
  }
  if (key.asymmetricKeyType !== "ed25519") throw new TypeError("not an ED25519 private key");
  const spki = createPublicKey(key).export({ format: "der", type: "spki" });
  return new Uint8Array(spki.subarray(spki.length - 32));
}
