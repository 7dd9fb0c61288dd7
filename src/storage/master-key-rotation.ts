/**
 * Re-encrypting every private key the database holds under a new master key, in one write
 * transaction on either engine (docs/operations.md "Rotate the master key"): each sealed seed in
 * `signing_keys` (organisation keys, the seal key, any other key whose private half the service
 * holds), the ledger submit key in `service_meta`, and the master key's check value. All of it
 * commits together or none of it does; the database is never left with keys under two masters.
 *
 * The cryptography is the caller's (`Reseal`): storage only finds what is sealed and writes back
 * what it is given. A body may run more than once on PostgreSQL (a serialization retry): resealing
 * draws fresh nonces each time, which changes nothing of what a run means.
 */
import { and, eq, isNotNull } from "drizzle-orm";
import { OpsError } from "../lib/errors.ts";
import { MASTER_KEY_CHECK, SUBMIT_KEY_META } from "./meta.ts";
import { q, type Body, type Op, type StoreDb, type Tables } from "./store.ts";

/** A sealed `signing_keys` row, as resealing needs it (its binding: algorithm, fingerprint, purpose). */
export interface SealedRow {
  readonly fingerprint: Uint8Array;
  readonly algorithm: string;
  readonly purpose: string;
  readonly sealedSeed: Uint8Array;
}

/** What the caller does to each sealed thing: open it under the old key, seal it under the new. Throws to abort. */
export interface Reseal {
  seed(row: SealedRow): Uint8Array;
  /** The `ledger_submit_key` entry (anchoring/submit-key.ts's JSON), resealed. */
  submitKey(entry: string): string;
}

export interface ResealCounts {
  /** `signing_keys` rows resealed. */
  readonly signingKeys: number;
  /** Whether the ledger submit key existed and was resealed. */
  readonly submitKey: boolean;
}

/**
 * The database's master key changed under a process that opened the old one (a rotation ran
 * meanwhile): what it sealed could not be opened with the key now in use, so it is refused.
 */
export class MasterKeyChangedError extends OpsError {
  constructor() {
    super("the master key was rotated while this ran (docverify master-key rotate): nothing was changed; run it again with the new key");
  }
}

/** Throws MasterKeyChangedError unless the database's check value is `check` (inside a write transaction). */
export function* requireMasterKeyCheck(tx: StoreDb, t: Tables, check: string): Op<void> {
  const [row] = yield* q(tx.select({ value: t.serviceMeta.value }).from(t.serviceMeta).where(eq(t.serviceMeta.key, MASTER_KEY_CHECK)));
  if (row !== undefined && row.value !== check) throw new MasterKeyChangedError();
}

/**
 * The write operation: refuses (MasterKeyChangedError) unless the database still remembers
 * `from`, reseals every sealed key with `reseal`, sets the check value to `to`, and runs `also`
 * (the audit row) in the same transaction.
 */
export function resealUnderNewMasterKey(from: string, to: string, reseal: Reseal, also: (tx: StoreDb, t: Tables, counts: ResealCounts) => Op<void>): Body<ResealCounts> {
  return function* (tx, t) {
    yield* requireMasterKeyCheck(tx, t, from);
    const rows = yield* q(
      tx
        .select({ fingerprint: t.signingKeys.fingerprint, algorithm: t.signingKeys.algorithm, purpose: t.signingKeys.purpose, sealedSeed: t.signingKeys.sealedSeed })
        .from(t.signingKeys)
        .where(isNotNull(t.signingKeys.sealedSeed))
        .orderBy(t.signingKeys.fingerprint),
    );
    for (const row of rows) {
      const sealedSeed = reseal.seed({ fingerprint: new Uint8Array(row.fingerprint), algorithm: row.algorithm, purpose: row.purpose, sealedSeed: new Uint8Array(row.sealedSeed!) });
      yield* q(
        tx
          .update(t.signingKeys)
          .set({ sealedSeed: Buffer.from(sealedSeed) })
          .where(and(eq(t.signingKeys.fingerprint, row.fingerprint), eq(t.signingKeys.sealedSeed, row.sealedSeed!))),
      );
    }
    const [submit] = yield* q(tx.select({ value: t.serviceMeta.value }).from(t.serviceMeta).where(eq(t.serviceMeta.key, SUBMIT_KEY_META)));
    if (submit !== undefined) {
      yield* q(tx.update(t.serviceMeta).set({ value: reseal.submitKey(submit.value) }).where(eq(t.serviceMeta.key, SUBMIT_KEY_META)));
    }
    yield* q(
      tx
        .insert(t.serviceMeta)
        .values({ key: MASTER_KEY_CHECK, value: to })
        .onConflictDoUpdate({ target: t.serviceMeta.key, set: { value: to } }),
    );
    const counts = { signingKeys: rows.length, submitKey: submit !== undefined };
    yield* also(tx, t, counts);
    return counts;
  };
}
