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
import { runMaybe, settled, type Maybe } from "../lib/maybe.ts";
import { SUBMIT_KEY_META } from "../storage/meta.ts";
import type { SubmitKeyPair } from "./ledger.ts";
import type { SubmitKeyEntries } from "./loop/ports.ts";

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

/**
 * Opens the submit key, creating it on first use: synchronously where `entries` answers at once
 * (the embedded SQLite). Null when there is no master key (the key store is sealed). Safe when
 * two processes or nodes race: the first entry stored wins and every one opens it. A key is
 * generated only when none is stored yet.
 */
export function loadOrCreateSubmitKey(entries: SubmitKeyEntries, masterKey: Uint8Array | null, generate: () => SubmitKeyPair): Maybe<SubmitKeyPair | null> {
  if (masterKey === null) return null;
  const encryptionKey = deriveSeedEncryptionKey(masterKey);
  return runMaybe(
    (function* () {
      let value = yield* settled(entries.read());
      if (value === null) value = yield* settled(entries.storeFirst(sealedNew(encryptionKey, generate)));
      return openStored(encryptionKey, value);
    })(),
  );
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

/**
 * The stored entry with its private half opened under `from` and sealed again under `to` (both
 * seed-encryption keys derived from a master key), for a master key rotation. Throws
 * KeyDecryptionError when `from` does not open it.
 */
export function resealSubmitKeyEntry(value: string, from: Uint8Array, to: Uint8Array): string {
  const opened = openStored(from, value);
  try {
    const stored: Stored = { ...(JSON.parse(value) as Stored), sealedSeed: Buffer.from(sealSeed(to, opened.privateKey, binding(opened.publicKey))).toString("hex") };
    return JSON.stringify(stored);
  } finally {
    opened.privateKey.fill(0);
  }
}
