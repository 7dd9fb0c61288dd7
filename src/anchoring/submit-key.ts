/**
 * The ledger submit key: one ED25519 key, service-wide, that is the submit key of every
 * organisation's topic, so only this service can post to them. Its private half is kept only
 * sealed under the master key (src/crypto's sealed-seed envelope, AES-256-GCM), in
 * `service_meta` under `ledger_submit_key`; it is opened in memory when a message is signed.
 *
 * Why one key and not one per organisation: the topics' job is to stop anyone else posting to
 * them; every organisation's messages are posted by this same service anyway, and one key means
 * one thing to back up and nothing to create while a record waits. (`signing_keys` is for the
 * ML-DSA keys that sign records; an ED25519 ledger key has no fingerprint there.)
 *
 * The envelope is bound to algorithm `ED25519`, purpose `ledger-submit` and a SHA-256
 * fingerprint of the public key, so it cannot be swapped for another key's envelope.
 */
import { createHash } from "node:crypto";
import { deriveSeedEncryptionKey, openSeed, sealSeed, type Algorithm, type SeedBinding } from "../crypto/index.ts";
import type { Db } from "../storage/db.ts";
import { metaRead, metaValue } from "../storage/meta.ts";
import type { Store } from "../storage/store.ts";
import type { SubmitKeyPair } from "./ledger.ts";

export const SUBMIT_KEY_META = "ledger_submit_key";
const PURPOSE = "ledger-submit";
const FINGERPRINT_DOMAIN = "docverify/ledger-submit-key/v1\0";

interface Stored {
  readonly version: 1;
  readonly algorithm: "ED25519";
  /** Raw public key, hex. */
  readonly publicKey: string;
  /** Sealed seed envelope, hex. */
  readonly sealedSeed: string;
}

function binding(publicKey: Uint8Array): SeedBinding {
  const fingerprint = new Uint8Array(createHash("sha256").update(FINGERPRINT_DOMAIN).update(publicKey).digest());
  // The envelope's algorithm label is bound into its associated data as text; src/crypto's
  // `Algorithm` names the record-signing algorithms, so the ledger key's label is cast.
  return { algorithm: "ED25519" as unknown as Algorithm, fingerprint, purpose: PURPOSE };
}

/** The stored public key (hex), or null before the first topic is created. Needs no master key. */
export function storedSubmitPublicKey(db: Db): string | null {
  const row = db.$client.query("SELECT value FROM service_meta WHERE key = ?").get(SUBMIT_KEY_META) as { value: string } | null;
  return row === null ? null : (JSON.parse(row.value) as Stored).publicKey;
}

/**
 * Opens the submit key, creating it on first use. Null when there is no master key (the key
 * store is sealed). Safe when two processes race: the first insert wins and both use it.
 */
export function loadOrCreateSubmitKey(db: Db, masterKey: Uint8Array | null, generate: () => SubmitKeyPair): SubmitKeyPair | null {
  if (masterKey === null) return null;
  const encryptionKey = deriveSeedEncryptionKey(masterKey);
  const read = () => db.$client.query("SELECT value FROM service_meta WHERE key = ?").get(SUBMIT_KEY_META) as { value: string } | null;
  let row = read();
  if (row === null) {
    db.$client.query("INSERT INTO service_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING").run(SUBMIT_KEY_META, sealedNew(encryptionKey, generate));
    row = read();
    if (row === null) throw new Error(`service_meta ${SUBMIT_KEY_META} vanished`);
  }
  return openStored(encryptionKey, row.value);
}

/**
 * `loadOrCreateSubmitKey` over a store, on either engine (several nodes share one key: the first
 * node's insert wins and every node opens the stored one). A key is generated only when none is
 * stored yet.
 */
export async function loadOrCreateSubmitKeyIn(store: Store, masterKey: Uint8Array | null, generate: () => SubmitKeyPair): Promise<SubmitKeyPair | null> {
  if (masterKey === null) return null;
  const encryptionKey = deriveSeedEncryptionKey(masterKey);
  let value = await store.read(metaRead(SUBMIT_KEY_META));
  if (value === null) {
    const sealed = sealedNew(encryptionKey, generate);
    value = await store.write(metaValue(SUBMIT_KEY_META, () => sealed));
  }
  return openStored(encryptionKey, value);
}

/** A new key, its private half sealed under `encryptionKey` and wiped from memory: the stored entry, as JSON. */
function sealedNew(encryptionKey: Uint8Array, generate: () => SubmitKeyPair): string {
  const fresh = generate();
  const stored: Stored = {
    version: 1,
    algorithm: "ED25519",
    publicKey: Buffer.from(fresh.publicKey).toString("hex"),
    sealedSeed: Buffer.from(sealSeed(encryptionKey, fresh.privateKey, binding(fresh.publicKey))).toString("hex"),
  };
  fresh.privateKey.fill(0);
  return JSON.stringify(stored);
}

function openStored(encryptionKey: Uint8Array, value: string): SubmitKeyPair {
  const stored = JSON.parse(value) as Stored;
  if (stored.version !== 1 || stored.algorithm !== "ED25519") throw new Error(`unsupported ${SUBMIT_KEY_META} entry`);
  const publicKey = new Uint8Array(Buffer.from(stored.publicKey, "hex"));
  const privateKey = openSeed(encryptionKey, new Uint8Array(Buffer.from(stored.sealedSeed, "hex")), binding(publicKey));
  return { privateKey, publicKey };
}
