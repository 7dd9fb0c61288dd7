/** The one `signing_keys` row: a key's public half and its sealed seed, on either engine. */
import { q, type Op, type StoreDb, type Tables } from "./store.ts";

/** What a signing key row holds (crypto's `GeneratedKey`, or a stored key read back). */
export interface SigningKeyRow {
  readonly fingerprint: Uint8Array;
  readonly algorithm: string;
  readonly publicKey: Uint8Array;
  readonly purpose: string;
  readonly sealedSeed: Uint8Array;
}

/** Inserts `key`'s row, made at `createdAt` (replacing the key `replaces`, if given), as a step of a write operation. */
export function* insertSigningKey(tx: StoreDb, t: Tables, key: SigningKeyRow, createdAt: number, replaces: Uint8Array | null = null): Op<void> {
  yield* q(
    tx.insert(t.signingKeys).values({
      fingerprint: Buffer.from(key.fingerprint),
      algorithm: key.algorithm as Tables["signingKeys"]["$inferInsert"]["algorithm"],
      publicKey: Buffer.from(key.publicKey),
      purpose: key.purpose,
      sealedSeed: Buffer.from(key.sealedSeed),
      createdAt,
      replaces: replaces === null ? null : Buffer.from(replaces),
    }),
  );
}
