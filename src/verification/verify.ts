/**
 * Verdict derivation (docs/verification.md, "Verdicts"), recomputed on every request from the stored bytes.
 *
 * What this MUST guarantee (and callers may assume):
 * - Fail closed. A check is `pass` only when its recomputation completed and succeeded; a missing
 *   key row, an algorithm this build does not know, a fingerprint that is not the stored key's
 *   own, bytes that do not encode, or any exception inside a check make that check `fail`, and a
 *   failed check on any match makes the verdict `signature_invalid` (tamper evidence is never
 *   masked by another, valid record).
 * - Nothing about a verdict is cached. Only pure signature verifications may be answered from
 *   memory, which counts as recomputing when it is keyed on the exact bytes verified (docs/verification.md, "Checks"):
 *   - the record memo (docs/benchmarks.md, "How the figures moved"): per record (its rowid on SQLite, its id on PostgreSQL), the outcome of its two signature checks
 *     together with the exact inputs they were computed from other than the two signatures (id,
 *     hash, signed time, both fingerprints: compared on every use) and the value of the change
 *     counter (migration 0010) read in the same statement as the signatures. Triggers raise the
 *     counter in the very transaction that changes any checked column of a record, deletes one,
 *     or changes a key row, whichever connection writes; so an entry whose counter is still the
 *     one read with the record's current row was computed on the bytes the row holds now. The
 *     hot read then skips the two signature columns (6.6 KB of a 7 KB row). Entries also expire
 *     after `RECORD_MEMO_TTL_MS`, bounding what a writer that bypasses triggers could hide.
 *   - the signature memo, keyed on SHA-256 of every input byte (src/crypto/memo.ts), answers
 *     when the record memo cannot (a record read whole).
 *   Public keys are cached by fingerprint with the result of recomputing their fingerprint.
 * - Organisation name and suspension, and a signing person's suspension, are live: read per
 *   request, or kept while the change counter read with the records is unchanged (every change
 *   to them raises it).
 * - Bounded work per hash (docs/verification.md, "Bounded cost per hash"), whatever the number of records for it: at most
 *   `MAX_MATCHES` matches are returned (the earliest by consensus), and at most `MAX_MATCHES` + 3
 *   records are read whole and checked (the matches, and beyond them the earliest record of each
 *   verdict class they lack), so at most 2 × (`MAX_MATCHES` + 3) signature verifications. The
 *   verdict is still decided over all records: rules 2–4 only ask whether a class (active
 *   person-signed, active organisation-signed, revoked) has a record, and a class the matches
 *   lack is looked up beyond them. Rule 1 covers every record the verdict rests on, so a verdict
 *   is never vouched for by a record whose checks were not recomputed. Finding those records is
 *   bounded too: a hash with more than `MAX_MATCHES` records is read through the partial index
 *   records_anchored_by_class, at most `MAX_MATCHES` index entries per verdict class (three range
 *   reads, no table row touched), merged here into consensus order, then at most
 *   `MAX_MATCHES` + 3 rows read whole by rowid, all in one read transaction. Nothing in it grows
 *   with the number of records but the depth of the index's B-tree. docs/verification.md explains
 *   the choice and gives the figures.
 *
 * The checks, per anchored record:
 * - hashBinding: the record's stored hash is the requested one; the signer key row exists, its
 *   algorithm is known and the stored fingerprint is the fingerprint of that algorithm and public
 *   key; and the record payload rebuilt from the stored id, hash, signed time and fingerprint is
 *   what the stored signature signs. The signature is what binds the hash: a signature that does
 *   not verify cannot tell a changed hash from a changed signature, so both checks fail then.
 * - userSignature: the stored signature verifies over that rebuilt payload under the signer key.
 * - serverSeal: the seal payload rebuilt from the record payload, the stored signature and the seal
 *   key's fingerprint verifies under the seal key (whose fingerprint is checked the same way).
 *
 * Two engines (docs/storage.md), one verdict. The rules above, the checks, the merge of a large
 * hash and the shape of a match are written once (`VerifierCore`); only the reads differ:
 * - SQLite: statements prepared on the connection and run synchronously, as before the store
 *   existed (the benchmarked hot path: a memoised public verification is about 20 µs, one indexed
 *   read). `verify` returns its answer, not a promise.
 * - PostgreSQL: the same statements in PostgreSQL's dialect (storage/verification-statements.ts),
 *   awaited; the keys, organisations and persons a verification needs that are not in memory in
 *   one more read; a large hash in one REPEATABLE READ snapshot. `verify` returns a promise.
 *   Verifications interleave at their awaits, so what is kept in memory is kept only under the
 *   change counter it was read under: the caches move forward with the counter, never back.
 */
import {
  createVerificationMemo,
  encodeRecordPayload,
  encodeSealPayload,
  isAlgorithm,
  keyFingerprint,
  verificationMemoKey,
  type Algorithm,
  type Signer,
  type VerificationMemo,
  type VerifyCall,
  type VerifyFn,
} from "../crypto/index.ts";
import { approxBytes, Lru, namedCache, stringBytes, type NamedCache } from "../lib/lru.ts";
import type { Clock } from "../lib/clock.ts";
import { compareConsensus, consensusToRfc3339, rfc3339Ms } from "../lib/formats.ts";
import { readKept, type KeptRead } from "../storage/data-version.ts";
import { firstRow, q, rows, type Op, type SqliteStore, type Store } from "../storage/store.ts";
import {
  CLASS_HEAD,
  COUNTER_VALUE,
  KEY_BY_FINGERPRINT,
  MAX_MATCHES,
  NEWEST_ACCEPTED,
  ORG_STANDING,
  PERSON_SUSPENDED,
  readSnapshot,
  RECORD_HEADS_BY_HASH,
  RECORDS_BY_HASH,
  RECORDS_BY_IDS,
  SQLITE_RECORD_BY_ROWID,
  VERIFY_CONTEXT,
  type ClassHeadRow,
  type HashRow,
  type HeadRow,
  type VerifyRow,
} from "../storage/verification-statements.ts";
import type { DisclosureTier, Match, Verdict } from "./types.ts";

export { CONSENSUS_ORDER, MAX_MATCHES, VERDICT_CLASS } from "../storage/verification-statements.ts";

export interface VerificationLinks {
  /** The public mirror node's topic-message URL (docs/records.md, "3. Ledger messages"). */
  topicMessageUrl(topicId: string, sequenceNumber: number): string;
}

export interface VerifierDeps {
  /** The database: a SqliteStore (answers synchronously) or a PostgresStore (answers with a promise). */
  readonly store: Store;
  readonly signer: Pick<Signer, "verify">;
  readonly clock: Clock;
  readonly links: VerificationLinks;
  /**
   * Signature memo. Omitted: the verifier makes its own (`DEFAULT_MEMO_ENTRIES`). `false`: every
   * signature is verified from scratch (the benchmark's memo-off run). A memo passed in is used
   * as is (so a caller can read its hit counts); it must wrap the same `signer.verify`.
   */
  readonly memo?: VerificationMemo | false;
  /**
   * The verifications neither memo answers, a request's together: `signer.verifyMany`, which
   * runs them on the signing workers while verification is busy and then answers with a promise
   * (so does `verify`, on either engine). Omitted: each one here with `signer.verify`, and the
   * SQLite verifier answers synchronously. It must answer as `signer.verify` does.
   */
  readonly verifyMany?: Signer["verifyMany"];
  /** Public keys kept in memory, by fingerprint; default 1024 (and at most `KEY_CACHE_BYTES`). */
  readonly keyCacheSize?: number;
}

export interface VerifyInput {
  /** A DocHash; the caller has validated it (query.ts `parseVerificationRequest`). */
  readonly docHash: string;
  readonly tier: DisclosureTier;
}

export interface VerifyResult {
  readonly verdict: Verdict;
  readonly matches: Match[];
  /** Present exactly when `verdict` is `pending_anchor`. */
  readonly retryAfterSeconds?: number;
}

export interface Verifier {
  /** The answer itself on SQLite; a promise of it on PostgreSQL. */
  verify(input: VerifyInput): VerifyResult | Promise<VerifyResult>;
  /** Forgets cached public keys (tests that alter a key row in place). */
  clearKeyCache(): void;
  /** What it keeps in memory, each with its size and budget (/metrics), and emptied when the service goes quiet. */
  caches(): readonly NamedCache[];
}

/** The verifier over SQLite: synchronous. */
export interface SqliteVerifier extends Verifier {
  verify(input: VerifyInput): VerifyResult;
}

/**
 * Signature memo results at most; its bytes are bounded first, by `MEMO_BYTES` (crypto/memo.ts:
 * 8 MiB, about 290 bytes a result, some 29,000 results).
 */
export const DEFAULT_MEMO_ENTRIES = 100_000;

/** Records whose check outcomes the record memo keeps at most (about 950 bytes each). */
export const RECORD_MEMO_ENTRIES = 50_000;
/** The record memo's byte budget: some 13,000 records. */
export const RECORD_MEMO_BYTES = 12 * 1024 * 1024;
/** Hashes whose record heads the SQLite verifier keeps while the database is unchanged, at most (about 1 KB each). */
export const HEADS_KEPT = 4096;
/** The record heads' byte budget. */
export const HEADS_BYTES = 4 * 1024 * 1024;
/** Public keys kept by fingerprint: a 1,952-byte ML-DSA-65 key and its 64-character id, about 2.5 KB each (some 830 keys). */
export const KEY_CACHE_BYTES = 2 * 1024 * 1024;
/** Organisations' standing (name and suspension) kept under the change counter, at most 4,096 of them (about 350 bytes each). */
export const ORG_STANDING_BYTES = 2 * 1024 * 1024;
/** Signing persons' suspension kept under the change counter, by key fingerprint (about 290 bytes each: some 7,300 persons). */
export const PERSON_STANDING_BYTES = 2 * 1024 * 1024;
/** A record memo entry is used for at most this long after its signatures were verified. */
export const RECORD_MEMO_TTL_MS = 60_000;

/** The SQLite texts, as the tests of their query plans read them. */
export const RECORDS_BY_HASH_SQL = RECORDS_BY_HASH.sqlite;
export const RECORD_HEADS_BY_HASH_SQL = RECORD_HEADS_BY_HASH.sqlite;
export const CLASS_HEAD_SQL = CLASS_HEAD.sqlite;
export const RECORD_BY_ROWID_SQL = SQLITE_RECORD_BY_ROWID;
export const NEWEST_ACCEPTED_SQL = NEWEST_ACCEPTED.sqlite;

const VERDICT_CLASSES = [0, 1, 2] as const;

/** A value as bun:sqlite (or, for these columns, Bun.SQL) returns it. */
type SqlValue = null | number | bigint | string | Uint8Array;

/** A `CLASS_HEAD` row: where a record stands in consensus order, and its rowid (SQLite) or id (PostgreSQL). */
export type ClassHead = ClassHeadRow;

/** SQLite's storage classes in its sort order: NULL, numbers, text, blobs. */
function storageClass(v: SqlValue): number {
  return v === null ? 0 : typeof v === "number" || typeof v === "bigint" ? 1 : typeof v === "string" ? 2 : 3;
}

/**
 * Two values in SQLite's ORDER BY order (BINARY collation: text by its UTF-8 bytes, which is also
 * PostgreSQL's `COLLATE "C"` in a UTF-8 database, NULL first). Well-formed rows hold ASCII text
 * only, but a corrupt row must sort here exactly where the database put it for the same records
 * to be read; UTF-16 code units order as UTF-8 bytes do except a surrogate (a code point above
 * U+FFFF) against U+E000–U+FFFF.
 */
export function compareSqlValues(a: SqlValue, b: SqlValue): number {
  const ca = storageClass(a);
  const cb = storageClass(b);
  if (ca !== cb) return ca - cb;
  if (ca === 0) return 0;
  if (ca === 1) return a! < b! ? -1 : a! > b! ? 1 : 0;
  if (ca === 3) return Buffer.compare(a as Uint8Array, b as Uint8Array);
  const x = a as string;
  const y = b as string;
  if (x === y) return 0;
  for (let i = 0; i < x.length && i < y.length; i++) {
    const p = x.charCodeAt(i);
    const q = y.charCodeAt(i);
    if (p === q) continue;
    const ps = p >= 0xd800 && p <= 0xdfff;
    const qs = q >= 0xd800 && q <= 0xdfff;
    return ps === qs ? p - q : ps ? 1 : -1;
  }
  return x.length - y.length;
}

/** `CONSENSUS_ORDER` over class heads. */
export function compareHeads(a: ClassHead, b: ClassHead): number {
  return compareSqlValues(a.len, b.len) || compareSqlValues(a.consensus_at, b.consensus_at) || compareSqlValues(a.id, b.id);
}

/**
 * From each verdict class's first `MAX_MATCHES` anchored records in consensus order, the records
 * a large hash's verification reads whole: `page`, the first `MAX_MATCHES` of them all (the
 * matches: each lies among its own class's first `MAX_MATCHES`), and `beyond`, the earliest
 * record of each class with none among the matches (at most three), both in consensus order.
 */
export function selectLargeHash(heads: readonly (readonly ClassHead[])[]): { page: ClassHead[]; beyond: ClassHead[] } {
  const taken = heads.map(() => 0);
  const page: ClassHead[] = [];
  while (page.length < MAX_MATCHES) {
    let next = -1;
    for (let c = 0; c < heads.length; c++) {
      const head = heads[c]![taken[c]!];
      if (head !== undefined && (next < 0 || compareHeads(head, heads[next]![taken[next]!]!) < 0)) next = c;
    }
    if (next < 0) break;
    page.push(heads[next]![taken[next]!++]!);
  }
  const beyond = heads.flatMap((h, c) => (taken[c] === 0 && h.length > 0 ? [h[0]!] : [])).sort(compareHeads);
  return { page, beyond };
}

interface ResolvedKey {
  readonly algorithm: Algorithm;
  readonly publicKey: Uint8Array;
}

/** A signing key's row as read. */
type KeyRow = { readonly algorithm: string; readonly public_key: Uint8Array };

/** An organisation's standing as read. */
type OrgStanding = { readonly name: string; readonly suspended: number };

/** Typical finality is 3–5 s after acceptance. */
const EXPECTED_FINALITY_MS = 5_000;

/**
 * Seconds a client should wait before polling a `pending_anchor` hash again: until the typical
 * finality of the newest accepted record has passed (at least 1), then 2 s for the first minute,
 * then 30 s (consensus that late is not reconciled by polling: docs/records.md, "1. Creating a record").
 */
export function retryAfterFor(acceptedAtMs: number, nowMs: number): number {
  const elapsed = Math.max(0, nowMs - acceptedAtMs);
  if (elapsed < EXPECTED_FINALITY_MS) return Math.max(1, Math.ceil((EXPECTED_FINALITY_MS - elapsed) / 1000));
  if (elapsed < 60_000) return 2;
  return 30;
}

/** The outcome of a record's two signature checks, and the inputs it was computed on. */
interface RecordMemoEntry {
  /** The change counter read in the statement that read the signatures. */
  readonly gen: number;
  readonly verifiedAtMs: number;
  readonly id: string;
  readonly docHash: string;
  readonly signedAtMs: number;
  readonly signerFingerprint: Uint8Array;
  readonly sealFingerprint: Uint8Array;
  readonly signatureOk: boolean;
  readonly sealOk: boolean;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function hexOf(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}

/** The outcome of the signature checks of one record (hashBinding adds the hash comparison). */
interface SignatureChecks {
  readonly signatureOk: boolean;
  readonly sealOk: boolean;
}

/** A record as a match is shaped from: read whole, or without its signatures (the record memo answered). */
type ShownRow = HeadRow | VerifyRow;

/** Runs `fn`; anything it throws is a failed check, never a crash and never a pass. */
function attempt<T>(fn: () => T): T | null {
  try {
    return fn();
  } catch {
    return null;
  }
}

const byConsensus = (a: ShownRow, b: ShownRow) => compareConsensus(a.consensus_at ?? "", b.consensus_at ?? "") || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** When the newest of these records awaiting consensus was stored, or null. */
function newestAcceptedIn(all: readonly ShownRow[]): number | null {
  const accepted = all.filter((r) => r.anchor_state === "accepted");
  return accepted.length === 0 ? null : Math.max(...accepted.map((r) => r.created_at));
}

/**
 * What both engines share: the memos and caches, the checks, the shape of a match and the verdict
 * rules. Reads are the engines' own; they hand this what they read.
 */
class VerifierCore {
  readonly memoOn: boolean;
  readonly verifySignature: VerifyFn;
  /** The signature memo; null when the memo is off. */
  private readonly memo: VerificationMemo | null;
  private readonly verifyMany: Signer["verifyMany"] | undefined;
  readonly keys: Lru<string, ResolvedKey>;
  /** The record memo (see the header): by rowid or id, oldest inserted forgotten first (a hit is one lookup). */
  readonly recordMemo = new Lru<number | string, RecordMemoEntry>({
    maxEntries: RECORD_MEMO_ENTRIES,
    maxBytes: RECORD_MEMO_BYTES,
    bytesOf: (rid, e) => approxBytes(rid) + approxBytes(e),
    refreshOnHit: false,
  });
  /** Standing kept while the change counter stays `cachedGen` (every change to it raises the counter); the first kept stay. */
  readonly orgCache = new Lru<string, OrgStanding>({ maxEntries: 4096, maxBytes: ORG_STANDING_BYTES, bytesOf: (id, o) => stringBytes(id) + approxBytes(o), refreshOnHit: false });
  readonly personCache = new Lru<string, boolean>({ maxEntries: 65_536, maxBytes: PERSON_STANDING_BYTES, bytesOf: stringBytes, refreshOnHit: false });
  cachedGen: number | null = null;
  /**
   * The match last shaped from each row object, with the inputs it was shaped from. Shaping is a
   * pure function of the row, the tier, the hash asked about, the signature checks, the standing
   * and the person's suspension; rows, checks (the record memo's entries) and standing (kept under
   * the change counter) are the same objects while nothing they were read from has changed, so an
   * identical set of inputs gives the identical match, kept rather than built again. Any input
   * that differs, by identity, shapes it afresh. The verdict is still decided over the matches on
   * every request.
   */
  private readonly shaped = new WeakMap<ShownRow, { tier: DisclosureTier; requested: string; sig: SignatureChecks; org: OrgStanding | null; personSuspended: boolean; match: Match }>();

  constructor(
    deps: VerifierDeps,
    private readonly links: VerificationLinks,
  ) {
    const { signer } = deps;
    this.memoOn = deps.memo !== false;
    this.memo = deps.memo === false ? null : (deps.memo ?? createVerificationMemo({ verify: (a, pk, m, s) => signer.verify(a, pk, m, s), maxEntries: DEFAULT_MEMO_ENTRIES }));
    this.verifySignature = this.memo === null ? (a, pk, m, s) => signer.verify(a, pk, m, s) : this.memo.verify;
    this.verifyMany = deps.verifyMany;
    this.keys = new Lru<string, ResolvedKey>({ maxEntries: deps.keyCacheSize ?? 1024, maxBytes: KEY_CACHE_BYTES, bytesOf: (id, k) => stringBytes(id) + approxBytes(k) });
  }

  /** The caches every engine's verifier keeps, and `more` of its own. */
  caches(more: readonly NamedCache[]): NamedCache[] {
    const out = [
      namedCache("verification_record_memo", this.recordMemo),
      namedCache("verification_keys", this.keys),
      namedCache("verification_org_standing", this.orgCache),
      namedCache("verification_person_standing", this.personCache),
      ...more,
    ];
    if (this.memo !== null) out.push(namedCache("verification_signature_memo", this.memo));
    return out;
  }

  /** Drops what was kept under another value of the change counter. */
  syncCaches(gen: number | null): void {
    if (gen === this.cachedGen) return;
    this.cachedGen = gen;
    this.keys.clear();
    this.recordMemo.clear();
    this.orgCache.clear();
    this.personCache.clear();
  }

  /**
   * The key a fingerprint names, from its row: only if the row exists, its algorithm is known and
   * the fingerprint really is that algorithm-tagged public key's. Null otherwise.
   */
  keyFromRow(fingerprint: Uint8Array, row: KeyRow | null | undefined): ResolvedKey | null {
    if (row == null || !isAlgorithm(row.algorithm)) return null;
    const publicKey = new Uint8Array(row.public_key);
    const recomputed = keyFingerprint({ algorithm: row.algorithm, publicKey }); // throws on a wrong-length key
    if (!Buffer.from(recomputed).equals(Buffer.from(fingerprint))) return null;
    return { algorithm: row.algorithm, publicKey };
  }

  /**
   * The two verifications a row read whole needs: the signer's over the record payload rebuilt
   * from the row, the seal's over the seal payload binding it. Null for one that cannot be made
   * (a key that does not resolve, bytes that do not encode): that check fails.
   */
  private callsOf(row: VerifyRow, keyOf: (fingerprint: Uint8Array) => ResolvedKey | null): { signature: VerifyCall | null; seal: VerifyCall | null } {
    const signerKey = attempt(() => keyOf(row.signer_fingerprint));
    const payload = attempt(() =>
      encodeRecordPayload({ recordId: row.id, docHash: row.doc_hash, signedAtMs: row.signed_at_ms, signerKeyFingerprint: row.signer_fingerprint }),
    );
    const signature = signerKey !== null && payload !== null ? { algorithm: signerKey.algorithm, publicKey: signerKey.publicKey, message: payload, signature: row.signature } : null;
    const sealKey = attempt(() => keyOf(row.seal_fingerprint));
    const seal =
      sealKey !== null && payload !== null
        ? attempt(() => ({ algorithm: sealKey.algorithm, publicKey: sealKey.publicKey, message: encodeSealPayload(payload, row.signature, row.seal_fingerprint), signature: row.seal_signature }))
        : null;
    return { signature, seal };
  }

  /**
   * Both signature checks of each row read whole, recomputed (or answered by the signature memo):
   * at once, or a promise of them when the verifications went to the signing workers
   * (`verifyMany`). A verification that throws is a failed check.
   */
  signatureChecks(rows: readonly VerifyRow[], keyOf: (fingerprint: Uint8Array) => ResolvedKey | null): SignatureChecks[] | Promise<SignatureChecks[]> {
    const planned = rows.map((r) => this.callsOf(r, keyOf));
    const calls: VerifyCall[] = [];
    for (const p of planned) {
      if (p.signature !== null) calls.push(p.signature);
      if (p.seal !== null) calls.push(p.seal);
    }
    const checks = (results: readonly (boolean | null)[]) => {
      const ok = new Map<VerifyCall, boolean>();
      calls.forEach((c, i) => ok.set(c, results[i] === true));
      return planned.map((p) => ({ signatureOk: p.signature !== null && ok.get(p.signature) === true, sealOk: p.seal !== null && ok.get(p.seal) === true }));
    };
    const results = this.verifyCalls(calls);
    return results instanceof Promise ? results.then(checks) : checks(results);
  }

  /** Each call's result (null: it threw), the signature memo first, the rest by `verifyMany` or here. */
  private verifyCalls(calls: readonly VerifyCall[]): (boolean | null)[] | Promise<(boolean | null)[]> {
    const verifyMany = this.verifyMany;
    if (verifyMany === undefined) return calls.map((c) => attempt(() => this.verifySignature(c.algorithm, c.publicKey, c.message, c.signature)));
    const memo = this.memo;
    const out: (boolean | null)[] = new Array<boolean | null>(calls.length).fill(null);
    const missing: VerifyCall[] = [];
    const at: number[] = [];
    const keys: (string | null)[] = [];
    calls.forEach((c, i) => {
      const key = memo === null ? null : attempt(() => verificationMemoKey(c.algorithm, c.publicKey, c.message, c.signature));
      const known = key === null ? undefined : memo!.lookup(key);
      if (known !== undefined) out[i] = known;
      else {
        missing.push(c);
        at.push(i);
        keys.push(key);
      }
    });
    if (missing.length === 0) return out;
    const fill = (results: readonly (boolean | null)[]) => {
      results.forEach((r, j) => {
        out[at[j]!] = r;
        const key = keys[j]!;
        if (memo !== null && key !== null && r !== null) memo.keep(key, r);
      });
      return out;
    };
    const results = verifyMany(missing);
    return results instanceof Promise ? results.then(fill) : fill(results);
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
      ...checks,
    });
  }

  /** `shapeMatch`, or the match it gave for identical inputs (`shaped`). */
  matchOf(row: ShownRow, tier: DisclosureTier, requested: string, sig: SignatureChecks, org: OrgStanding | null, personSuspended: boolean): Match {
    const prev = this.shaped.get(row);
    if (prev !== undefined && prev.sig === sig && prev.org === org && prev.tier === tier && prev.requested === requested && prev.personSuspended === personSuspended) return prev.match;
    const match = this.shapeMatch(row, tier, requested, sig, org, personSuspended);
    this.shaped.set(row, { tier, requested, sig, org, personSuspended, match });
    return match;
  }

  shapeMatch(row: ShownRow, tier: DisclosureTier, requested: string, sig: SignatureChecks, org: OrgStanding | null, personSuspended: boolean): Match {
    if (row.sequence_number === null || row.consensus_at === null) {
      // The anchor columns are written with the state in one transaction; an anchored row without
      // them is corruption. Refuse to answer (500) rather than vouch for or hide the record.
      throw new Error(`record ${row.id} is anchored without sequence number or consensus time`);
    }
    const signerType = row.signer_type;
    // hashBinding: the stored hash is the one asked about, and the signature over the payload
    // rebuilt from it verifies (which implies the key row resolved and the payload encoded).
    const hashBinding = row.doc_hash === requested && sig.signatureOk;
    const match: Match = {
      recordId: row.id,
      kind: row.kind,
      status: row.revoked_at === null ? "active" : "revoked",
      recordIssuedAt: rfc3339Ms(row.signed_at_ms),
      signerType,
      signerStanding: (org !== null && org.suspended !== 0) || personSuspended ? "suspended" : "good_standing",
      ...(signerType === "user" && row.signer_hint !== null ? { signerHint: row.signer_hint } : {}),
      // The signing organisation, or the organisation a person signed within (docs/persons.md, "Person-signed records").
      ...(tier === "organisation" && org !== null ? { signerOrg: org.name } : {}),
      ...(row.revoked_at !== null ? { revocation: { reason: row.revocation_reason ?? "UNSPECIFIED", revokedAt: rfc3339Ms(row.revoked_at) } } : {}),
      checksPerformed: {
        hashBinding: hashBinding ? "pass" : "fail",
        userSignature: sig.signatureOk ? "pass" : "fail",
        serverSeal: sig.sealOk ? "pass" : "fail",
        anchorStatus: row.anchor_state,
      },
      anchor: {
        topicId: row.topic_id,
        transactionId: row.transaction_id,
        sequenceNumber: row.sequence_number,
        consensusAt: consensusToRfc3339(row.consensus_at),
        mirrorNodeUrl: this.links.topicMessageUrl(row.topic_id, row.sequence_number),
      },
    };
    return match;
  }

  /**
   * The verdict (docs/verification.md, "Verdicts"; the header) over what the reads found: `page`, the anchored records
   * returned as matches, in consensus order; `beyond`, the records past them a verdict class rests
   * on (checked like a match, never returned); each one's signature checks and standing; and when
   * the newest record awaiting consensus was stored, asked only when no anchored record decides.
   */
  decide(
    page: readonly ShownRow[],
    beyond: readonly VerifyRow[],
    sigOf: (row: ShownRow) => SignatureChecks,
    orgOf: (orgId: string | null) => OrgStanding | null,
    personSuspended: (row: ShownRow) => boolean,
    newestAccepted: () => number | null,
    tier: DisclosureTier,
    docHash: string,
    now: number,
  ): VerifyResult {
    const shape = (r: ShownRow) => this.matchOf(r, tier, docHash, sigOf(r), orgOf(r.org_id), personSuspended(r));
    const matches = page.map(shape);
    // Over `deciding`, "is there a record of this class" has the answer it has over every record.
    const deciding = beyond.length === 0 ? matches : [...matches, ...beyond.map(shape)];

    const failed = deciding.some((m) => m.checksPerformed.hashBinding === "fail" || m.checksPerformed.userSignature === "fail" || m.checksPerformed.serverSeal === "fail");
    if (failed) return { verdict: "signature_invalid", matches };
    if (deciding.some((m) => m.status === "active" && m.signerType === "user")) return { verdict: "verified", matches };
    if (deciding.some((m) => m.status === "active" && m.signerType === "org")) return { verdict: "verified_org", matches };
    if (deciding.some((m) => m.status === "revoked")) return { verdict: "revoked", matches };

    // No anchored record at all (every anchored record is active or revoked).
    const newest = newestAccepted();
    if (newest !== null) return { verdict: "pending_anchor", matches: [], retryAfterSeconds: retryAfterFor(newest, now) };
    return { verdict: "no_record", matches: [] };
  }
}

function checkTier(tier: DisclosureTier): void {
  if (tier !== "public" && tier !== "organisation") throw new TypeError(`unknown disclosure tier ${String(tier)}`);
}

export function createVerifier(deps: VerifierDeps & { readonly store: SqliteStore; readonly verifyMany?: undefined }): SqliteVerifier;
export function createVerifier(deps: VerifierDeps): Verifier;
export function createVerifier(deps: VerifierDeps): Verifier {
  const core = new VerifierCore(deps, deps.links);
  return deps.store.engine === "sqlite" ? sqliteVerifier(core, deps.store as SqliteStore, deps.clock) : postgresVerifier(core, deps.store, deps.clock);
}

// ---- SQLite: synchronous, over statements prepared on the connection ---------------------------

/** Synchronous (a `SqliteVerifier`) unless the core has `verifyMany`. */
function sqliteVerifier(core: VerifierCore, store: SqliteStore, clock: Clock): Verifier {
  const memoOn = core.memoOn;
  // The hot path uses bun:sqlite prepared statements directly, rows as src/storage/record-row.ts
  // names them: measured, drizzle's row mapping and a LEFT JOIN each cost too much here (a drizzle
  // prepared statement reads a hash's one record in 12 µs, this one in 4.4 µs, of a whole memoised
  // verification's 20 µs). One indexed lookup (records_doc_hash) per request when the record memo
  // answers, two when it does not.
  const client = store.db.$client;
  const recordHeadsByHash = client.prepare<HeadRow, [string]>(RECORD_HEADS_BY_HASH.sqlite);
  const recordsByHash = client.prepare<HashRow, [string]>(RECORDS_BY_HASH.sqlite);
  const classHead = client.prepare<ClassHead, [string, number]>(CLASS_HEAD.sqlite);
  const recordByRowid = client.prepare<VerifyRow, [number]>(SQLITE_RECORD_BY_ROWID);
  const newestAcceptedOf = client.prepare<{ newest: number | null }, [string]>(NEWEST_ACCEPTED.sqlite);
  const changeCounter = client.prepare<{ value: number | null }, []>(COUNTER_VALUE.sqlite);
  const orgById = client.prepare<OrgStanding, [string]>(ORG_STANDING.sqlite);
  const personSuspendedByKey = client.prepare<{ suspended: number }, [Uint8Array]>(PERSON_SUSPENDED.sqlite);
  const keyByFingerprint = client.prepare<KeyRow, [Uint8Array]>(KEY_BY_FINGERPRINT.sqlite);
  const { keys, orgCache, personCache } = core;
  // A hash's record heads as last read, under the data version they were read at
  // (storage/data-version.ts): answered again only while nothing was committed since, by any
  // connection of any process. The rows are only read from: every check and the verdict are
  // still made from them on every request.
  const headsKept = new Lru<string, KeptRead<readonly HeadRow[]>>({ maxEntries: HEADS_KEPT, maxBytes: HEADS_BYTES, bytesOf: (hash, kept) => stringBytes(hash) + approxBytes(kept) });
  function headsOf(docHash: string): readonly HeadRow[] {
    // The log's writer thread's commits (log rows only) leave `others()` unchanged.
    return readKept(headsKept, store.version.others(), docHash, () => recordHeadsByHash.all(docHash));
  }

  /** The key a fingerprint names (`keyFromRow`), kept in memory; a missing one is never kept, so a key row inserted later is found. */
  function resolveKey(fingerprint: Uint8Array): ResolvedKey | null {
    const id = hexOf(fingerprint);
    const cached = keys.get(id);
    if (cached !== undefined) return cached;
    const key = core.keyFromRow(fingerprint, keyByFingerprint.get(fingerprint));
    if (key !== null) keys.set(id, key);
    return key;
  }

  /**
   * A hash with more than `MAX_MATCHES` records: its matches, and the records beyond them a verdict
   * class rests on. One read transaction, so the rows read whole are those the index placed
   * (another connection, the admin command line, may revoke a record meanwhile).
   */
  const readLargeHash = client.transaction((docHash: string): { page: VerifyRow[]; beyond: VerifyRow[] } => {
    const { page, beyond } = selectLargeHash(VERDICT_CLASSES.map((c) => classHead.all(docHash, c)));
    const whole = (head: ClassHead) => {
      const row = recordByRowid.get(head.rid as number);
      if (row === null) throw new Error(`record at rowid ${head.rid} vanished inside a read transaction`);
      return row;
    };
    return { page: page.map(whole), beyond: beyond.map(whole) };
  });

  return {
    verify(input) {
      const { docHash, tier } = input;
      checkTier(tier);
      const now = clock.now();
      // The matches, and the records beyond them that a verdict class rests on (checked like a
      // match, never returned), and when the newest record awaiting consensus was stored.
      let page: ShownRow[];
      let beyond: VerifyRow[] = [];
      let newestAccepted: () => number | null;
      /** The change counter the rows were read with (null: read in their own transaction). */
      let gen: number | null = null;
      /** Checks the record memo answered; the rows read whole to check now; whether to remember them. */
      let known: Map<ShownRow, SignatureChecks> | null = null;
      let toCheck: readonly VerifyRow[] = [];
      let remember: readonly HashRow[] = [];

      let rows: readonly ShownRow[] | null = null;
      let large = false;
      if (memoOn) {
        // The record memo first: without the signature columns, if it holds every anchored record.
        const heads = headsOf(docHash);
        large = heads.length > MAX_MATCHES;
        if (!large && heads.length > 0 && heads[0]!.gen !== null) {
          core.syncCaches(heads[0]!.gen);
          const found = new Map<ShownRow, SignatureChecks>();
          let all = true;
          for (const h of heads) {
            if (h.anchor_state !== "anchored") continue;
            const e = core.remembered(h, now);
            if (e === null) {
              all = false;
              break;
            }
            found.set(h, e);
          }
          if (all) {
            rows = heads;
            gen = heads[0]!.gen;
            known = found;
          }
        } else if (heads.length === 0) {
          rows = heads;
        }
      }
      if (rows === null && !large) {
        const whole = recordsByHash.all(docHash);
        if (whole.length <= MAX_MATCHES) {
          gen = whole[0]?.gen ?? null;
          core.syncCaches(gen);
          rows = whole;
          const anchored = whole.filter((r) => r.anchor_state === "anchored");
          toCheck = anchored;
          if (memoOn) remember = anchored;
        }
      }
      if (rows !== null) {
        // Every record of the hash is here.
        const all = rows;
        page = all.filter((r) => r.anchor_state === "anchored").sort(byConsensus);
        newestAccepted = () => newestAcceptedIn(all);
      } else {
        // Keys kept under an older counter are dropped first; the rows are read in their own
        // transaction, so standing is read afresh for them (gen stays null).
        core.syncCaches(changeCounter.get()?.value ?? null);
        const read = readLargeHash(docHash);
        ({ page, beyond } = read);
        toCheck = [...read.page, ...read.beyond];
        newestAccepted = () => newestAcceptedOf.get(docHash)?.newest ?? null;
      }

      const finish = (checked: readonly SignatureChecks[]): VerifyResult => {
        // Standing and the record memo are kept under the counter the caches hold; after a wait
        // for the workers another verification may have moved them on (then: read afresh, keep nothing).
        const standingGen = core.cachedGen === gen ? gen : null;
        const sig = known ?? new Map<ShownRow, SignatureChecks>();
        toCheck.forEach((r, i) => sig.set(r, checked[i]!));
        if (standingGen !== null) remember.forEach((r) => core.remember(r, sig.get(r)!, now));
        const orgs = new Map<string, OrgStanding | null>();
        const orgOf = (id: string | null) => {
          if (id === null) return null;
          let org = orgs.get(id);
          if (org === undefined) {
            org = standingGen !== null ? orgCache.get(id) : undefined;
            if (org === undefined) {
              org = orgById.get(id);
              if (standingGen !== null && org !== null) orgCache.set(id, org);
            }
            orgs.set(id, org);
          }
          return org;
        };
        const personSuspended = (r: ShownRow) => {
          if (r.signer_type !== "user") return false;
          const id = hexOf(r.signer_fingerprint);
          let suspended = standingGen !== null ? personCache.get(id) : undefined;
          if (suspended === undefined) {
            const found = personSuspendedByKey.get(r.signer_fingerprint);
            suspended = (found?.suspended ?? 0) !== 0;
            if (standingGen !== null && found !== null) personCache.set(id, suspended);
          }
          return suspended;
        };
        const sigOf = (r: ShownRow) => {
          const c = sig.get(r);
          if (c === undefined) throw new Error("no record to check");
          return c;
        };
        return core.decide(page, beyond, sigOf, orgOf, personSuspended, newestAccepted, tier, docHash, now);
      };
      const checked = toCheck.length === 0 ? [] : core.signatureChecks(toCheck, resolveKey);
      return checked instanceof Promise ? checked.then(finish) : finish(checked);
    },
    clearKeyCache() {
      core.keys.clear();
      core.recordMemo.clear();
    },
    caches: () => core.caches([namedCache("verification_record_heads", headsKept)]),
  };
}

// ---- PostgreSQL: the same reads, awaited -------------------------------------------------------

/** Keys, organisations and persons a verification needs, as read (or found in memory) for it. */
interface Context {
  keyOf(fingerprint: Uint8Array): ResolvedKey | null;
  orgOf(orgId: string | null): OrgStanding | null;
  personSuspended(row: ShownRow): boolean;
}

/**
 * A hash with more than `MAX_MATCHES` records, in one snapshot: the counter, the three class
 * heads, the rows the merge chose read whole (one statement), and when no anchored record decides,
 * the newest awaiting consensus.
 */
function* readLargeHash(docHash: string): Op<{ gen: number | null; page: VerifyRow[]; beyond: VerifyRow[]; newest: number | null }> {
  const gen = (yield* q(firstRow(COUNTER_VALUE)))?.value ?? null;
  const heads: ClassHead[][] = [];
  for (const c of VERDICT_CLASSES) heads.push(yield* q(rows(CLASS_HEAD, docHash, c)));
  const { page, beyond } = selectLargeHash(heads);
  const chosen = [...page, ...beyond];
  const found = chosen.length === 0 ? [] : yield* q(rows(RECORDS_BY_IDS, JSON.stringify(chosen.map((h) => h.rid))));
  const byId = new Map(found.map((r) => [r.id, r]));
  const whole = (head: ClassHead) => {
    const row = byId.get(head.rid as string);
    if (row === undefined) throw new Error(`record ${String(head.rid)} vanished inside a read transaction`);
    return row;
  };
  const newest = page.length === 0 ? ((yield* q(firstRow(NEWEST_ACCEPTED, docHash)))?.newest ?? null) : null;
  return { gen, page: page.map(whole), beyond: beyond.map(whole), newest };
}

function postgresVerifier(core: VerifierCore, store: Store, clock: Clock): Verifier {
  const { keys, orgCache, personCache } = core;

  /** Moves the caches forward to `gen`; a verification that read an older counter leaves them be. */
  function syncForward(gen: number | null): void {
    if (gen !== null && core.cachedGen !== null && gen < core.cachedGen) return;
    core.syncCaches(gen);
  }

  /**
   * What checking `toCheck` and shaping `shown` needs: what memory holds is taken now (another
   * verification may clear it while this one awaits), the rest read in one statement. What is read
   * is kept in memory only if the counter is still `gen`, the one this verification's rows were
   * read with: the read then saw the state that counter stands for, or a later one.
   */
  async function context(toCheck: readonly VerifyRow[], shown: readonly ShownRow[], gen: number | null, standingGen: number | null): Promise<Context> {
    const heldKeys = new Map<string, ResolvedKey>();
    const wantKeys = new Set<string>();
    for (const r of toCheck) {
      for (const fp of [r.signer_fingerprint, r.seal_fingerprint]) {
        const id = hexOf(fp);
        const k = keys.get(id);
        if (k !== undefined) heldKeys.set(id, k);
        else wantKeys.add(id);
      }
    }
    const heldOrgs = new Map<string, OrgStanding>();
    const wantOrgs = new Set<string>();
    const heldPersons = new Map<string, boolean>();
    const wantPersons = new Set<string>();
    for (const r of shown) {
      if (r.org_id !== null) {
        const o = standingGen !== null ? orgCache.get(r.org_id) : undefined;
        if (o !== undefined) heldOrgs.set(r.org_id, o);
        else wantOrgs.add(r.org_id);
      }
      if (r.signer_type === "user") {
        const id = hexOf(r.signer_fingerprint);
        const p = standingGen !== null ? personCache.get(id) : undefined;
        if (p !== undefined) heldPersons.set(id, p);
        else wantPersons.add(id);
      }
    }
    const keyRows = new Map<string, KeyRow>();
    const orgs = new Map<string, OrgStanding>(heldOrgs);
    const persons = new Map<string, boolean>(heldPersons);
    if (wantKeys.size + wantOrgs.size + wantPersons.size > 0) {
      const found = await store.read(() => q(rows(VERIFY_CONTEXT, JSON.stringify([...wantKeys]), JSON.stringify([...wantOrgs]), JSON.stringify([...wantPersons]))));
      const keep = standingGen !== null && core.cachedGen === standingGen;
      for (const row of found) {
        if (row.kind === "k") keyRows.set(row.ref, { algorithm: row.text!, public_key: row.bytes! });
        else if (row.kind === "o") {
          const o = { name: row.text!, suspended: row.suspended! };
          orgs.set(row.ref, o);
          if (keep) orgCache.set(row.ref, o);
        } else if (!persons.has(row.ref)) {
          // The first of a key's persons, as SQLite's `.get()` takes.
          const suspended = row.suspended !== 0;
          persons.set(row.ref, suspended);
          if (keep) personCache.set(row.ref, suspended);
        }
      }
    }
    const keepKeys = gen !== null && core.cachedGen === gen;
    return {
      keyOf(fingerprint) {
        const id = hexOf(fingerprint);
        const held = heldKeys.get(id);
        if (held !== undefined) return held;
        const key = core.keyFromRow(fingerprint, keyRows.get(id));
        if (key !== null && keepKeys) keys.set(id, key);
        return key;
      },
      orgOf: (id) => (id === null ? null : (orgs.get(id) ?? null)),
      personSuspended: (r) => r.signer_type === "user" && persons.get(hexOf(r.signer_fingerprint)) === true,
    };
  }

  async function verify(input: VerifyInput): Promise<VerifyResult> {
    const { docHash, tier } = input;
    checkTier(tier);
    const now = clock.now();
    // As on SQLite: the record memo first (the rows without their signatures), then the rows read
    // whole, then, for a hash with more than MAX_MATCHES records, its class heads in one snapshot.
    let all: readonly ShownRow[] | null = null;
    let known: Map<ShownRow, RecordMemoEntry> | null = null;
    let large = false;
    /** The counter read with the rows: what standing kept in memory is valid under (null: read afresh). */
    let gen: number | null = null;
    /** The counter this verification's reads saw, for keeping keys. */
    let readGen: number | null = null;
    let toCheck: VerifyRow[] = [];
    let fromWhole = false;
    if (core.memoOn) {
      const heads = await store.read(() => q(rows(RECORD_HEADS_BY_HASH, docHash)));
      large = heads.length > MAX_MATCHES;
      if (!large && heads.length > 0 && heads[0]!.gen !== null) {
        syncForward(heads[0]!.gen);
        const found = new Map<ShownRow, RecordMemoEntry>();
        let every = true;
        for (const h of heads) {
          if (h.anchor_state !== "anchored") continue;
          const e = core.remembered(h, now);
          if (e === null) {
            every = false;
            break;
          }
          found.set(h, e);
        }
        if (every) {
          all = heads;
          known = found;
          gen = readGen = heads[0]!.gen;
        }
      } else if (heads.length === 0) {
        all = heads;
      }
    }
    if (all === null && !large) {
      const whole = await store.read(() => q(rows(RECORDS_BY_HASH, docHash)));
      if (whole.length <= MAX_MATCHES) {
        gen = readGen = whole[0]?.gen ?? null;
        syncForward(gen);
        all = whole;
        toCheck = whole.filter((r) => r.anchor_state === "anchored");
        fromWhole = true;
      }
    }
    let page: ShownRow[];
    let beyond: VerifyRow[] = [];
    let newest: number | null;
    if (all !== null) {
      page = all.filter((r) => r.anchor_state === "anchored").sort(byConsensus);
      newest = newestAcceptedIn(all);
    } else {
      const found = await readSnapshot(store, () => readLargeHash(docHash));
      readGen = found.gen;
      syncForward(found.gen);
      ({ page, beyond, newest } = found);
      toCheck = [...found.page, ...found.beyond];
    }

    const ctx = await context(toCheck, beyond.length === 0 ? page : [...page, ...beyond], readGen, gen);
    const computed = new Map<ShownRow, SignatureChecks>();
    const checked = toCheck.length === 0 ? [] : core.signatureChecks(toCheck, ctx.keyOf);
    const checks = checked instanceof Promise ? await checked : checked;
    const keepMemo = core.memoOn && fromWhole && readGen !== null && core.cachedGen === readGen;
    toCheck.forEach((r, i) => {
      computed.set(r, checks[i]!);
      if (keepMemo) core.remember(r as HashRow, checks[i]!, now);
    });
    const sigOf = (r: ShownRow) => {
      const c = known?.get(r) ?? computed.get(r);
      if (c === undefined) throw new Error("no record to check");
      return c;
    };
    return core.decide(page, beyond, sigOf, ctx.orgOf, ctx.personSuspended, () => newest, tier, docHash, now);
  }

  return {
    verify,
    clearKeyCache() {
      keys.clear();
      core.recordMemo.clear();
    },
    caches: () => core.caches([]),
  };
}
