/**
 * What verification needs of storage (verify.ts), and nothing else: the reads of a hash's records,
 * of a large hash's records in one snapshot, and of the keys and standing checking and shaping
 * them needs. One driver per engine implements it (storage/sqlite/verification-reads.ts,
 * storage/postgres/verification-reads.ts, each engine's drivers.ts), so that the
 * verifier is written once.
 *
 * Sync or async, one way: every method returns `Maybe<T>`. The SQLite driver answers each one
 * synchronously (the benchmarked hot path: a memoised verification is one indexed read), and the
 * verifier then answers synchronously too; the PostgreSQL driver answers with promises.
 *
 * Every read MUST return exactly what the database holds when it runs, as the engine's own types
 * (numbers, strings, Uint8Array blobs, null), the same on both engines; a fault of the database is
 * thrown (SQLite) or rejects the promise (PostgreSQL), never answered as "no row".
 */
import type { NamedCache } from "../lib/lru.ts";
import type { Maybe } from "../lib/maybe.ts";
import type { RawRecordRow } from "../storage/record-row.ts";

/** A `records` row as verification reads it: every column but the filename and the revocation's transaction. */
export type VerifyRow = Omit<RawRecordRow, "filename" | "revocation_transaction_id">;

/**
 * Where a verification keeps a record in memory between requests: its rowid on SQLite (the hot
 * path's key, unchanged), its id on PostgreSQL, which has no rowid.
 */
export type RowKey = number | string;

/** A row of the by-hash reads: the record, its key, and the change counter read with it (null without its row). */
export type HashRow = VerifyRow & { readonly rid: RowKey; readonly gen: number | null };
/** The same without the two signature columns. */
export type HeadRow = Omit<HashRow, "signature" | "seal_signature">;

/** A signing key's row as read. */
export interface KeyRow {
  readonly algorithm: string;
  readonly public_key: Uint8Array;
}

/** A key declared compromised, as read (`signing_keys` and its anchored `key_compromise` message). */
export interface CompromisedKeyRow {
  readonly fingerprint: Uint8Array;
  /** Every record the key signed at or after this time (ms) is revoked. */
  readonly since: number;
  /** When it was declared (ms): the revocation time until its message is anchored. */
  readonly declared_at: number;
  /** Its message's consensus time (`seconds.nanoseconds`), once anchored; null before. */
  readonly consensus_at: string | null;
}

/** An organisation's standing as read (`suspended` 0 or 1). */
export interface OrgStanding {
  readonly name: string;
  readonly suspended: number;
}

/** What a hash with more than `MAX_MATCHES` records rests on, read in one snapshot. */
export interface LargeHashRead {
  /** The change counter (migration 0010) in that snapshot; null without its row. */
  readonly gen: number | null;
  /** The first `MAX_MATCHES` anchored records in consensus order (the matches), read whole. */
  readonly page: readonly VerifyRow[];
  /** The earliest anchored record of each verdict class with none in `page`, in consensus order, read whole. */
  readonly beyond: readonly VerifyRow[];
  /** When `page` is empty: when the newest record awaiting consensus was stored, or null. Otherwise null. */
  readonly newest: number | null;
}

/** What checking and shaping some records needs and memory does not hold. */
export interface ContextWanted {
  /** Signing key fingerprints, lower-case hex, each once. */
  readonly keys: readonly string[];
  /** Organisation ids, each once. */
  readonly orgs: readonly string[];
  /** Signing persons' key fingerprints, lower-case hex, each once. */
  readonly persons: readonly string[];
}

/** What of `ContextWanted` exists; what does not is absent. */
export interface ContextFound {
  /** Key rows by fingerprint (lower-case hex). */
  readonly keys: ReadonlyMap<string, KeyRow>;
  /** Organisations by id. */
  readonly orgs: ReadonlyMap<string, OrgStanding>;
  /** Whether the (first, as the database returns them) person holding the key is suspended, by fingerprint (lower-case hex). */
  readonly persons: ReadonlyMap<string, boolean>;
}

export interface VerificationReads {
  /**
   * True when the driver answers with promises, so that verifications interleave at its reads:
   * the verifier's caches then only move forward with the change counter, never back. False: it
   * answers every method synchronously and nothing runs between a read and its use.
   */
  readonly interleaves: boolean;
  /**
   * Every record of `docHash` in any state, without the two signature columns, at most
   * `MAX_MATCHES` + 1 (a full answer means there may be more), in no particular order, each with
   * its key and the change counter read in the same statement. May answer from memory only while
   * nothing was committed to the database since it read the rows (SQLite: its data version).
   */
  recordHeads(docHash: string): Maybe<readonly HeadRow[]>;
  /** As `recordHeads`, read whole (with the signatures), and always read from the database. */
  recordsByHash(docHash: string): Maybe<readonly HashRow[]>;
  /**
   * A hash with more than `MAX_MATCHES` records, in one snapshot (SQLite: one read transaction;
   * PostgreSQL: one REPEATABLE READ READ ONLY transaction): the counter, each verdict class's
   * first `MAX_MATCHES` anchored records in consensus order (SQLite's BINARY order: NULL first,
   * text by its bytes; `CONSENSUS_ORDER`), merged; the chosen rows read whole. Throws (rejects)
   * when a row the index named is not there within the snapshot. Bounded: nothing read grows
   * with the number of the hash's records but the depth of an index.
   */
  largeHash(docHash: string): Maybe<LargeHashRead>;
  /** The key rows and standing of `want`, in at most one statement (PostgreSQL) or one read each (SQLite). */
  context(want: ContextWanted): Maybe<ContextFound>;
  /**
   * Every key declared compromised, in no particular order. The verifier asks only when the change
   * counter moved since it last asked (verification/caches.ts), never once per verification.
   */
  compromisedKeys(): Maybe<readonly CompromisedKeyRow[]>;
  /** What the driver keeps in memory (/metrics, and emptied when the service goes quiet). */
  caches(): readonly NamedCache[];
}

/** A driver that answers every read synchronously (SQLite): the verifier over it is synchronous. */
export interface SyncVerificationReads extends VerificationReads {
  readonly interleaves: false;
  recordHeads(docHash: string): readonly HeadRow[];
  recordsByHash(docHash: string): readonly HashRow[];
  largeHash(docHash: string): LargeHashRead;
  context(want: ContextWanted): ContextFound;
  compromisedKeys(): readonly CompromisedKeyRow[];
}
