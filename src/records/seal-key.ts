/**
 * The service seal key (docs/signing.md §1): one ML-DSA key per installation that countersigns
 * every record together with the organisation's signature. Created on first need, stored in
 * `signing_keys` (purpose `service-seal`, sealed seed) and named by its fingerprint in
 * `service_meta` under SEAL_KEY_META.
 *
 * Race-safe across processes (the admin command line and `serve` share the database): a process
 * that finds no seal key generates one, then, inside one IMMEDIATE transaction, looks again and
 * writes its key only if still none is named. The loser throws its unused key away and uses the
 * winner's, so every process seals with the same key.
 */
import { eq } from "drizzle-orm";
import type { SealedKey, Signer } from "../crypto/index.ts";
import { isAlgorithm } from "../crypto/index.ts";
import type { Clock } from "../lib/clock.ts";
import { runMaybe, settled, type Maybe } from "../lib/maybe.ts";
import type { Db } from "../storage/db.ts";
import { q, sqliteStore, type Body, type Op, type Store, type StoreDb, type Tables } from "../storage/store.ts";
import { insertSigningKey } from "../storage/signing-keys.ts";
import type { RecordKeyStore, SyncRecordKeyStore } from "./ports.ts";

export const SEAL_KEY_META = "seal_key_fingerprint";
export const SEAL_KEY_PURPOSE = "service-seal";

export interface StoredKey extends SealedKey {
  readonly fingerprint: Uint8Array;
}

function* sealedKeyIn(db: StoreDb, t: Tables, fingerprint: Uint8Array): Op<StoredKey | null> {
  const [row] = yield* q(db.select().from(t.signingKeys).where(eq(t.signingKeys.fingerprint, Buffer.from(fingerprint))));
  if (row === undefined || row.sealedSeed === null) return null;
  if (!isAlgorithm(row.algorithm)) throw new Error(`signing key ${Buffer.from(fingerprint).toString("hex")} has unknown algorithm ${row.algorithm}`);
  return {
    algorithm: row.algorithm,
    publicKey: new Uint8Array(row.publicKey),
    purpose: row.purpose,
    sealedSeed: new Uint8Array(row.sealedSeed),
    fingerprint: new Uint8Array(row.fingerprint),
  };
}

/** A stored private key by fingerprint, or null when there is none (or no private half): a read operation. */
export function sealedKey(fingerprint: Uint8Array): Body<StoredKey | null> {
  return (db, t) => sealedKeyIn(db, t, fingerprint);
}

/** The same, synchronously, on the embedded SQLite. */
export function loadSealedKey(db: Db, fingerprint: Uint8Array): StoredKey | null {
  return sqliteStore(db).readSync(sealedKey(fingerprint));
}

function* namedSealKey(db: StoreDb, t: Tables): Op<StoredKey | null> {
  const [meta] = yield* q(db.select().from(t.serviceMeta).where(eq(t.serviceMeta.key, SEAL_KEY_META)));
  if (meta === undefined) return null;
  const key = yield* sealedKeyIn(db, t, Buffer.from(meta.value, "hex"));
  if (key === null) throw new Error(`service_meta names seal key ${meta.value}, which signing_keys does not hold with its private half`);
  return key;
}

/** Stores `fresh` as the seal key unless one is named by now (the winner is returned): a write operation. */
function storeSealKey(fresh: StoredKey, now: number): Body<StoredKey> {
  return function* (tx, t) {
    const winner = yield* namedSealKey(tx, t);
    if (winner !== null) return winner;
    const hex = Buffer.from(fresh.fingerprint).toString("hex");
    yield* insertSigningKey(tx, t, fresh, now);
    yield* q(tx.insert(t.serviceMeta).values({ key: SEAL_KEY_META, value: hex }));
    return { ...fresh };
  };
}

/**
 * The seal key, creating it when the installation has none, on either engine (ports.ts
 * `RecordKeyStore`: synchronously on the embedded SQLite). Needs the master key to create one
 * (MasterKeyMissingError, a 503, otherwise). Callers may cache the result: the key never changes.
 */
export function sealKeyOf(keys: SyncRecordKeyStore, signer: Signer, clock: Clock): StoredKey;
export function sealKeyOf(keys: RecordKeyStore, signer: Signer, clock: Clock): Maybe<StoredKey>;
export function sealKeyOf(keys: RecordKeyStore, signer: Signer, clock: Clock): Maybe<StoredKey> {
  return runMaybe(
    (function* () {
      const existing = yield* settled(keys.read(namedSealKey));
      if (existing !== null) return existing;
      // Generated outside the transaction: no reason to hold the write lock during key generation.
      const fresh = signer.generateKey(SEAL_KEY_PURPOSE);
      return yield* settled(keys.write(storeSealKey(fresh, clock.now())));
    })(),
  );
}

/** `sealKeyOf` over a store (storage/store.ts), answered with a promise. */
export async function ensureSealKeyIn(deps: { store: Store; signer: Signer; clock: Clock }): Promise<StoredKey> {
  return sealKeyOf(deps.store, deps.signer, deps.clock);
}

/** `sealKeyOf`, synchronously, on the embedded SQLite (for the code still synchronous over it). */
export function ensureSealKey(deps: { db: Db; signer: Signer; clock: Clock }): StoredKey {
  const store = sqliteStore(deps.db);
  return sealKeyOf({ read: store.readSync, write: store.writeSync }, deps.signer, deps.clock);
}
