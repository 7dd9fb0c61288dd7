/** The one `signing_keys` row: a key's public half and its sealed seed, on either engine. */
import { requireMasterKeyCheck } from "./master-key-rotation.ts";
import { and, eq } from "drizzle-orm";
import { q, type Op, type StoreDb, type Tables } from "./store.ts";

/** What a signing key row holds (crypto's `GeneratedKey`, or a stored key read back). */
export interface SigningKeyRow {
  readonly fingerprint: Uint8Array;
  readonly algorithm: string;
  readonly publicKey: Uint8Array;
  readonly purpose: string;
  readonly sealedSeed: Uint8Array;
  /**
   * The check value of the master key the seed is sealed under (crypto's GeneratedKey has it):
   * when given, the insert is refused (MasterKeyChangedError) if the database has moved to
   * another master key since the caller opened its own, so no seed is ever stored under a key
   * the database no longer uses.
   */
  readonly sealedUnder?: string;
}

/** Inserts `key`'s row, made at `createdAt` (replacing the key `replaces`, if given), as a step of a write operation. */
export function* insertSigningKey(tx: StoreDb, t: Tables, key: SigningKeyRow, createdAt: number, replaces: Uint8Array | null = null): Op<void> {
  if (key.sealedUnder !== undefined) yield* requireMasterKeyCheck(tx, t, key.sealedUnder);
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

/**
 * Whether `key` has an anchored announcement on organisation `orgId`'s topic, naming the seal key
 * `seal` when given (after a seal key rotation, an announcement naming the older seal key no
 * longer counts): a step of an operation.
 */
export function* hasAnchoredAnnouncement(tx: StoreDb, t: Tables, of: { readonly orgId: string; readonly key: Uint8Array; readonly seal?: Uint8Array }): Op<boolean> {
  const lt = t.ledgerTransactions;
  const [row] = yield* q(
    tx
      .select({ id: lt.transactionId })
      .from(lt)
      .where(
        and(
          eq(lt.orgId, of.orgId),
          eq(lt.keyFingerprint, Buffer.from(of.key)),
          eq(lt.kind, "key_announcement"),
          eq(lt.state, "anchored"),
          ...(of.seal === undefined ? [] : [eq(lt.sealFingerprint, Buffer.from(of.seal))]),
        ),
      )
      .limit(1),
  );
  return row !== undefined;
}
