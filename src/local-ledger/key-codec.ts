/**
 * Keys as the ledger stores them (protobuf bytes) and as its mirror shows them. Apart from
 * keys.ts so that importing keys.ts (the development key, reading an operator key) loads no
 * protobuf classes: serve's thread does, and runs the ledger on another thread. A started ledger
 * imports it on first need too (the mirror's first key shown, the node's first call: open.ts);
 * genesis writes its key with keys.ts `encodeEd25519Key`, the same bytes.
 */
import { proto } from "@hashgraph/proto";
import { hex } from "./ids.ts";
import { primitiveOf } from "./keys.ts";

/** Protobuf bytes of a key, as stored. */
export function encodeKey(key: proto.IKey): Uint8Array {
  return proto.Key.encode(key).finish();
}

export function decodeKey(bytes: Uint8Array): proto.Key {
  return proto.Key.decode(bytes);
}

/** The mirror node's rendering of a key: `{_type, key}` with hex, or null. */
export function mirrorKey(bytes: Uint8Array | null): { _type: string; key: string } | null {
  if (bytes == null) return null;
  const key = decodeKey(bytes);
  // Like the mirror node, a list or 1-of-1 threshold around a single key shows as that key.
  const single = key.keyList?.keys?.length === 1 ? key.keyList.keys[0] : key.thresholdKey?.threshold === 1 && key.thresholdKey.keys?.keys?.length === 1 ? key.thresholdKey.keys.keys[0] : key;
  const p = single ? primitiveOf(single) : null;
  if (p?.kind === "ed25519") return { _type: "ED25519", key: hex(p.bytes) };
  if (p?.kind === "ecdsa") return { _type: "ECDSA_SECP256K1", key: hex(p.bytes) };
  return { _type: "ProtobufEncoded", key: hex(bytes) };
}
