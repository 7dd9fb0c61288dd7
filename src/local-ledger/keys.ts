/**
 * Hedera keys and signature maps: which keys a transaction's signatures satisfy.
 *
 * Supported key kinds: ED25519, ECDSA secp256k1 (compressed), KeyList (every member must sign)
 * and ThresholdKey (at least `threshold` members). Contract ids, delegatable contract ids, RSA and
 * ECDSA P-384 keys are refused when a topic is created (BAD_ENCODING) and never satisfied: no
 * contract can run on this ledger.
 *
 * Matching follows the nodes: a signature pair applies to a primitive key when its
 * `pubKeyPrefix` is a prefix of the key's bytes and its kind matches (the SDK sends full keys as
 * prefixes). A key is satisfied when one applicable pair verifies over the body bytes.
 *
 * The signature checks themselves are src/crypto/'s (ED25519 natively, ECDSA secp256k1 over
 * keccak256 with @noble/curves), and synchronous: the consensus step decides inside one
 * synchronous SQLite transaction.
 */
import type { proto } from "@hashgraph/proto";
import { ed25519PublicKeyFromPkcs8, type Ed25519Verifier } from "../crypto/ed25519.ts";
import { verifySecp256k1 } from "../crypto/secp256k1.ts";
import { hex } from "./ids.ts";


export const ED25519_SPKI_PREFIX = Uint8Array.of(0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00);

/**
 * The local ledger's development key for its genesis account 0.0.2 (and the system accounts that
 * share it), unless the ledger is given another when it is created (docs/local-ledger.md "The
 * operator key: a public development key"). It is the key of Hedera's own local node
 * (hiero-local-node, "network variables"), so a `serve` pointed at either with
 * DOCVERIFY_LOCAL_LEDGER_URL needs nothing more. It is PUBLIC: anyone who can reach
 * the ledger's gRPC port can pay with it. It is for a development ledger on loopback, never for
 * anything of value; docs/local-ledger.md says so where it prints it.
 */
export const DEVELOPMENT_OPERATOR_KEY = Object.freeze({
  /** Hex DER, PKCS#8, ED25519. */
  privateKeyDer: "302e020100300506032b65700422042091132178e72057a1d7528025956fe39b0b847f200ab59b2fdd367017f3087137",
  /** Hex DER, SPKI. */
  publicKeyDer: "302a300506032b65700321000aa8e21064c61eab86e2a9c164565b4e7a9a4146106e0a6cd03a8c395a110e92",
});

/**
 * The protobuf bytes of `Key { ed25519: publicKey }` (field 2, length-delimited), exactly as
 * `proto.Key.encode` writes them (test/local-ledger/lazy-implementation.test.ts compares): the
 * genesis accounts' key, written at a ledger's creation without evaluating @hashgraph/proto.
 */
export function encodeEd25519Key(publicKey: Uint8Array): Uint8Array {
  const length: number[] = [];
  for (let n = publicKey.length; ; n >>>= 7) {
    if (n < 0x80) {
      length.push(n);
      break;
    }
    length.push((n & 0x7f) | 0x80);
  }
  const out = new Uint8Array(1 + length.length + publicKey.length);
  out[0] = (2 << 3) | 2;
  out.set(length, 1);
  out.set(publicKey, 1 + length.length);
  return out;
}

/** An ED25519 key pair as the ledger keeps it: hex DER (PKCS#8 / SPKI) and the raw public key. */
export interface Ed25519KeyPair {
  readonly privateKeyDer: string;
  readonly publicKeyDer: string;
  readonly publicKey: Uint8Array;
}

/**
 * Reads an ED25519 private key written as hex DER PKCS#8 (as `operator.key` and the Hedera portal
 * write it; `0x` allowed) and derives its public key. Throws a TypeError saying what is wrong.
 */
export function ed25519KeyPairFromDer(text: string): Ed25519KeyPair {
  const t = text.trim().replace(/^0x/i, "").toLowerCase();
  if (!/^(?:[0-9a-f]{2})+$/.test(t) || !t.startsWith("30")) throw new TypeError("the operator key must be hex DER (PKCS#8, starting 30...)");
  let publicKey: Uint8Array;
  try {
    publicKey = ed25519PublicKeyFromPkcs8(Buffer.from(t, "hex"));
  } catch {
    throw new TypeError("the operator key is not an ED25519 private key in DER (PKCS#8)");
  }
  return { privateKeyDer: t, publicKeyDer: hex(ED25519_SPKI_PREFIX) + hex(publicKey), publicKey };
}

/** A bound on key nesting, so a hostile key cannot exhaust the stack. */
const MAX_KEY_DEPTH = 15;

type Primitive = { kind: "ed25519" | "ecdsa"; bytes: Uint8Array };

export function primitiveOf(key: proto.IKey): Primitive | null {
  if (key.ed25519 != null && key.ed25519.length > 0) return { kind: "ed25519", bytes: key.ed25519 };
  if (key.ECDSASecp256k1 != null && key.ECDSASecp256k1.length > 0) return { kind: "ecdsa", bytes: key.ECDSASecp256k1 };
  return null;
}

/** The empty KeyList: an "immutable" admin key, meaning no admin key at all. */
export function isEmptyKeyList(key: proto.IKey): boolean {
  return key.keyList != null && (key.keyList.keys ?? []).length === 0 && primitiveOf(key) === null && key.thresholdKey == null;
}

/**
 * Whether `key` is well formed and of a supported kind: ED25519 keys of 32 bytes, ECDSA keys of
 * 33 bytes (compressed), non-empty key lists, thresholds between 1 and the list's size.
 */
export function isValidKey(key: proto.IKey | null | undefined, depth = 0): boolean {
  if (key == null || depth > MAX_KEY_DEPTH) return false;
  if (key.ed25519 != null && key.ed25519.length > 0) return key.ed25519.length === 32;
  if (key.ECDSASecp256k1 != null && key.ECDSASecp256k1.length > 0) {
    const k = key.ECDSASecp256k1;
    return k.length === 33 && (k[0] === 0x02 || k[0] === 0x03);
  }
  if (key.keyList != null) {
    const keys = key.keyList.keys ?? [];
    return keys.length > 0 && keys.every((k) => isValidKey(k, depth + 1));
  }
  if (key.thresholdKey != null) {
    const keys = key.thresholdKey.keys?.keys ?? [];
    const threshold = key.thresholdKey.threshold ?? 0;
    return threshold >= 1 && threshold <= keys.length && keys.every((k) => isValidKey(k, depth + 1));
  }
  return false;
}

function isPrefix(prefix: Uint8Array, bytes: Uint8Array): boolean {
  if (prefix.length > bytes.length) return false;
  for (let i = 0; i < prefix.length; i++) if (prefix[i] !== bytes[i]) return false;
  return true;
}

/**
 * What a transaction's signatures satisfy. Each primitive key's signatures are verified the first
 * time it is asked about, then remembered for this transaction.
 */
export interface SignatureCheck {
  satisfies(key: proto.IKey | null | undefined): boolean;
}

export function createSignatureCheck(bodyBytes: Uint8Array, sigMap: proto.ISignatureMap | null | undefined, verifyEd25519: Ed25519Verifier): SignatureCheck {
  const pairs = sigMap?.sigPair ?? [];
  const verified = new Map<string, boolean>();

  function verifyPrimitive(p: Primitive): boolean {
    for (const pair of pairs) {
      if (!isPrefix(pair.pubKeyPrefix ?? new Uint8Array(), p.bytes)) continue;
      if (p.kind === "ed25519" && pair.ed25519 != null && pair.ed25519.length > 0) {
        if (verifyEd25519(p.bytes, bodyBytes, pair.ed25519)) return true;
      } else if (p.kind === "ecdsa" && pair.ECDSASecp256k1 != null && pair.ECDSASecp256k1.length > 0) {
        if (verifySecp256k1(p.bytes, bodyBytes, pair.ECDSASecp256k1)) return true;
      }
    }
    return false;
  }

  function satisfiedPrimitive(p: Primitive): boolean {
    const id = `${p.kind}:${hex(p.bytes)}`;
    let ok = verified.get(id);
    if (ok === undefined) {
      ok = verifyPrimitive(p);
      verified.set(id, ok);
    }
    return ok;
  }

  function satisfiesAt(key: proto.IKey | null | undefined, depth: number): boolean {
    if (key == null || depth > MAX_KEY_DEPTH) return false;
    const p = primitiveOf(key);
    if (p) return satisfiedPrimitive(p);
    if (key.keyList != null) {
      const keys = key.keyList.keys ?? [];
      return keys.length > 0 && keys.every((k) => satisfiesAt(k, depth + 1));
    }
    if (key.thresholdKey != null) {
      const keys = key.thresholdKey.keys?.keys ?? [];
      const threshold = key.thresholdKey.threshold ?? 0;
      return threshold >= 1 && keys.filter((k) => satisfiesAt(k, depth + 1)).length >= threshold;
    }
    return false;
  }

  return { satisfies: (key) => satisfiesAt(key, 0) };
}

