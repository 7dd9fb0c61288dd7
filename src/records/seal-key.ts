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
import type { Db } from "../storage/db.ts";
import { serviceMeta, signingKeys } from "../storage/schema.ts";

export const SEAL_KEY_META = "seal_key_fingerprint";
export const SEAL_KEY_PURPOSE = "service-seal";

export interface StoredKey extends SealedKey {
  readonly fingerprint: Uint8Array;
}

/** A stored private key by fingerprint, or null when there is none (or no private half). */
export function loadSealedKey(db: Pick<Db, "select">, fingerprint: Uint8Array): StoredKey | null {
  const row = db.select().from(signingKeys).where(eq(signingKeys.fingerprint, Buffer.from(fingerprint))).get();
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

function namedSealKey(db: Pick<Db, "select">): StoredKey | null {
  const meta = db.select().from(serviceMeta).where(eq(serviceMeta.key, SEAL_KEY_META)).get();
  if (meta === undefined) return null;
  const key = loadSealedKey(db, Buffer.from(meta.value, "hex"));
  if (key === null) throw new Error(`service_meta names seal key ${meta.value}, which signing_keys does not hold with its private half`);
  return key;
}

/**
 * The seal key, creating it when the installation has none. Needs the master key to create one
 * (MasterKeyMissingError, a 503, otherwise). Callers may cache the result: the key never changes.
 */
export function ensureSealKey(deps: { db: Db; signer: Signer; clock: Clock }): StoredKey {
  const { db, signer, clock } = deps;
  const existing = namedSealKey(db);
  if (existing !== null) return existing;
  // Generated outside the transaction: no reason to hold the write lock during key generation.
  const fresh = signer.generateKey(SEAL_KEY_PURPOSE);
  return db.transaction(
    (tx) => {
      const winner = namedSealKey(tx);
      if (winner !== null) return winner;
      const hex = Buffer.from(fresh.fingerprint).toString("hex");
      tx.insert(signingKeys)
        .values({
          fingerprint: Buffer.from(fresh.fingerprint),
          algorithm: fresh.algorithm,
          publicKey: Buffer.from(fresh.publicKey),
          purpose: fresh.purpose,
          sealedSeed: Buffer.from(fresh.sealedSeed),
          createdAt: clock.now(),
        })
        .run();
      tx.insert(serviceMeta).values({ key: SEAL_KEY_META, value: hex }).run();
      return { ...fresh };
    },
    { behavior: "immediate" },
  );
}
