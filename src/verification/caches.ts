/**
 * What a verifier keeps in memory between requests (verify.ts's header says what each may answer
 * and why that still counts as recomputing): the record memo, public keys by fingerprint, and
 * organisations' and signing persons' standing, all kept under one value of the change counter
 * (migration 0010) and dropped together when it moves. One instance per verifier, owned by it:
 * every change goes through these methods (the idle release empties them through `named()`).
 */
import { approxBytes, Lru, namedCache, stringBytes, type NamedCache } from "../lib/lru.ts";
import type { ResolvedKey, SignatureChecks } from "./checks.ts";
import type { CompromisedKeyRow, HashRow, HeadRow, OrgStanding, RowKey } from "./ports.ts";
import { keyCompromise, type KeyCompromise } from "./revocation.ts";

export type { KeyCompromise };

/** The compromised keys by fingerprint (lower-case hex), from their rows. */
export function compromisesOf(rows: readonly CompromisedKeyRow[]): ReadonlyMap<string, KeyCompromise> {
  const m = new Map<string, KeyCompromise>();
  for (const r of rows) m.set(Buffer.from(r.fingerprint).toString("hex"), keyCompromise(r.since, r.declared_at, r.consensus_at));
  return m;
}

/** Records whose check outcomes the record memo keeps at most (about 950 bytes each). */
export const RECORD_MEMO_ENTRIES = 50_000;
/** The record memo's byte budget: some 13,000 records. */
export const RECORD_MEMO_BYTES = 12 * 1024 * 1024;
/** Public keys kept by fingerprint: a 1,952-byte ML-DSA-65 key and its 64-character id, about 2.5 KB each (some 830 keys). */
export const KEY_CACHE_BYTES = 2 * 1024 * 1024;
/** Organisations' standing (name and suspension) kept under the change counter, at most 4,096 of them (about 350 bytes each). */
export const ORG_STANDING_BYTES = 2 * 1024 * 1024;
/** Signing persons' suspension kept under the change counter, by key fingerprint (about 290 bytes each: some 7,300 persons). */
export const PERSON_STANDING_BYTES = 2 * 1024 * 1024;
/** A record memo entry is used for at most this long after its signatures were verified. */
export const RECORD_MEMO_TTL_MS = 60_000;

/** The outcome of a record's two signature checks, and the inputs it was computed on. */
export interface RecordMemoEntry extends SignatureChecks {
  /** The change counter read in the statement that read the signatures. */
  readonly gen: number;
  readonly verifiedAtMs: number;
  readonly id: string;
  readonly docHash: string;
  readonly signedAtMs: number;
  readonly signerFingerprint: Uint8Array;
  readonly sealFingerprint: Uint8Array;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export class VerifierCaches {
  private readonly keys: Lru<string, ResolvedKey>;
  /** The record memo (see verify.ts's header): by rowid or id, oldest inserted forgotten first (a hit is one lookup). */
  private readonly recordMemo = new Lru<RowKey, RecordMemoEntry>({
    maxEntries: RECORD_MEMO_ENTRIES,
    maxBytes: RECORD_MEMO_BYTES,
    bytesOf: (rid, e) => approxBytes(rid) + approxBytes(e),
    refreshOnHit: false,
  });
  /** Standing kept while the change counter stays `gen` (every change to it raises the counter); the first kept stay. */
  private readonly orgs = new Lru<string, OrgStanding>({ maxEntries: 4096, maxBytes: ORG_STANDING_BYTES, bytesOf: (id, o) => stringBytes(id) + approxBytes(o), refreshOnHit: false });
  private readonly persons = new Lru<string, boolean>({ maxEntries: 65_536, maxBytes: PERSON_STANDING_BYTES, bytesOf: stringBytes, refreshOnHit: false });
  private cachedGen: number | null = null;
  /** The compromised keys, read under `cachedGen` (null: not read since it moved): a few, so no budget. */
  private compromised: ReadonlyMap<string, KeyCompromise> | null = null;

  /** `keyCacheSize`: public keys kept at most (and at most `KEY_CACHE_BYTES`). */
  constructor(keyCacheSize: number) {
    this.keys = new Lru<string, ResolvedKey>({ maxEntries: keyCacheSize, maxBytes: KEY_CACHE_BYTES, bytesOf: (id, k) => stringBytes(id) + approxBytes(k) });
  }

  /** The change counter what is kept was read under. */
  get gen(): number | null {
    return this.cachedGen;
  }

  /** Drops what was kept under another value of the change counter. */
  sync(gen: number | null): void {
    if (gen === this.cachedGen) return;
    this.cachedGen = gen;
    this.compromised = null;
    this.clearKeys();
    this.orgs.clear();
    this.persons.clear();
  }

  /** `sync`, except that a counter older than the one kept leaves everything be (reads that interleave). */
  syncForward(gen: number | null): void {
    if (gen !== null && this.cachedGen !== null && gen < this.cachedGen) return;
    this.sync(gen);
  }

  /** Forgets the public keys and the record memo. */
  clearKeys(): void {
    this.keys.clear();
    this.recordMemo.clear();
  }

  key(id: string): ResolvedKey | undefined {
    return this.keys.get(id);
  }
  keepKey(id: string, key: ResolvedKey): void {
    this.keys.set(id, key);
  }
  /** The compromised keys read under the counter kept, or null when they have not been read since it moved. */
  compromises(): ReadonlyMap<string, KeyCompromise> | null {
    return this.compromised;
  }
  keepCompromises(compromises: ReadonlyMap<string, KeyCompromise>): void {
    this.compromised = compromises;
  }
  org(id: string): OrgStanding | undefined {
    return this.orgs.get(id);
  }
  keepOrg(id: string, org: OrgStanding): void {
    this.orgs.set(id, org);
  }
  personSuspended(id: string): boolean | undefined {
    return this.persons.get(id);
  }
  keepPerson(id: string, suspended: boolean): void {
    this.persons.set(id, suspended);
  }

  /** The record memo's entry for a row, if it was computed on the inputs the row holds now. */
  remembered(row: HeadRow, now: number): RecordMemoEntry | null {
    const e = this.recordMemo.get(row.rid);
    if (e === undefined || row.gen === null || e.gen !== row.gen || now - e.verifiedAtMs >= RECORD_MEMO_TTL_MS || now < e.verifiedAtMs) return null;
    if (e.id !== row.id || e.docHash !== row.doc_hash || e.signedAtMs !== row.signed_at_ms) return null;
    if (!sameBytes(e.signerFingerprint, row.signer_fingerprint) || !sameBytes(e.sealFingerprint, row.seal_fingerprint)) return null;
    return e;
  }

  remember(row: HashRow, checks: SignatureChecks, now: number): void {
    if (row.gen === null) return;
    this.recordMemo.set(row.rid, {
      gen: row.gen,
      verifiedAtMs: now,
      id: row.id,
      docHash: row.doc_hash,
      signedAtMs: row.signed_at_ms,
      signerFingerprint: row.signer_fingerprint,
      sealFingerprint: row.seal_fingerprint,
      signatureOk: checks.signatureOk,
      sealOk: checks.sealOk,
    });
  }

  /** Each cache with its size and budget (/metrics). */
  named(): NamedCache[] {
    return [
      namedCache("verification_record_memo", this.recordMemo),
      namedCache("verification_keys", this.keys),
      namedCache("verification_org_standing", this.orgs),
      namedCache("verification_person_standing", this.persons),
    ];
  }
}
