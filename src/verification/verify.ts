/**
 * Verdict derivation (decisions §4), recomputed on every request from the stored bytes.
 *
 * What this MUST guarantee (and callers may assume):
 * - Fail closed. A check is `pass` only when its recomputation completed and succeeded; a missing
 *   key row, an algorithm this build does not know, a fingerprint that is not the stored key's
 *   own, bytes that do not encode, or any exception inside a check make that check `fail`, and a
 *   failed check on any match makes the verdict `signature_invalid` (tamper evidence is never
 *   masked by another, valid record).
 * - Nothing about a verdict is cached. Only pure signature verifications may be answered from
 *   memory, which decisions §4 counts as recomputing when it is keyed on the exact bytes verified:
 *   - the record memo (issue 17): per record (rowid), the outcome of its two signature checks
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
 * - Bounded work per hash (decisions §11), whatever the number of records for it: at most
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
 */
import {
  createVerificationMemo,
  encodeRecordPayload,
  encodeSealPayload,
  isAlgorithm,
  keyFingerprint,
  type Algorithm,
  type Signer,
  type VerificationMemo,
  type VerifyFn,
} from "../crypto/index.ts";
import { Lru } from "../crypto/lru.ts";
import type { Clock } from "../lib/clock.ts";
import type { Db } from "../storage/db.ts";
import { recordColumns, type RawRecordRow } from "../storage/record-row.ts";
import { compareConsensus, consensusToRfc3339, rfc3339Ms } from "../lib/formats.ts";
import type { CheckResult, DisclosureTier, Match, Verdict } from "./types.ts";

export interface VerificationLinks {
  /** The public mirror node's topic-message URL (decisions §5). */
  topicMessageUrl(topicId: string, sequenceNumber: number): string;
}

export interface VerifierDeps {
  readonly db: Db;
  readonly signer: Pick<Signer, "verify">;
  readonly clock: Clock;
  readonly links: VerificationLinks;
  /**
   * Signature memo. Omitted: the verifier makes its own (`DEFAULT_MEMO_ENTRIES`). `false`: every
   * signature is verified from scratch (the benchmark's memo-off run). A memo passed in is used
   * as is (so a caller can read its hit counts); it must wrap the same `signer.verify`.
   */
  readonly memo?: VerificationMemo | false;
  /** Public keys kept in memory, by fingerprint; default 1024. */
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
  verify(input: VerifyInput): VerifyResult;
  /** Forgets cached public keys (tests that alter a key row in place). */
  clearKeyCache(): void;
}

/** About 200 bytes each (a 64-character key and a boolean in a Map): some 20 MB when full. */
export const DEFAULT_MEMO_ENTRIES = 100_000;

/** Records whose check outcomes the record memo keeps (about 500 bytes each: some 25 MB when full). */
export const RECORD_MEMO_ENTRIES = 50_000;
/** A record memo entry is used for at most this long after its signatures were verified. */
export const RECORD_MEMO_TTL_MS = 60_000;

/** Most matches a verification returns (decisions §11); the earliest by consensus. */
export const MAX_MATCHES = 100;

/**
 * What verification never reads of a record: the filename (the verify page's, never part of a
 * verification answer) and the revocation's ledger transaction. Not read, not allocated per row.
 */
const NOT_READ = ["filename", "revocation_transaction_id"] as const;
/** A `records` row as verification reads it. */
type VerifyRow = Omit<RawRecordRow, (typeof NOT_READ)[number]>;
const RECORD_COLUMNS = recordColumns({ omit: NOT_READ });
/** A row of the by-hash reads: the record, its rowid, and the change counter read with it (null without its row). */
type HashRow = VerifyRow & { readonly rid: number; readonly gen: number | null };
type HeadRow = Omit<HashRow, "signature" | "seal_signature">;

/** The change counter (migration 0010), as a scalar subquery. */
const CHANGE_COUNTER = "(SELECT value FROM change_counter WHERE id = 1)";

/**
 * Every record of a hash, in any state, but never more than `MAX_MATCHES` + 1: for all but the
 * largest hashes this one indexed read is the whole answer (a test checks the plan). A full
 * result means there may be more, and the hash is read as `readLargeHash` reads it instead.
 */
export const RECORDS_BY_HASH_SQL = `SELECT rowid AS rid, ${RECORD_COLUMNS}, ${CHANGE_COUNTER} AS gen FROM records WHERE doc_hash = ? LIMIT ${MAX_MATCHES + 1}`;

/**
 * The same read without the two signature columns: what a verification needs when the record
 * memo holds every anchored record's checks. `gen` is read in the same statement as the rows.
 */
export const RECORD_HEADS_BY_HASH_SQL = `SELECT rowid AS rid, ${recordColumns({ omit: [...NOT_READ, "signature", "seal_signature"] })}, ${CHANGE_COUNTER} AS gen FROM records WHERE doc_hash = ? LIMIT ${MAX_MATCHES + 1}`;

/**
 * Consensus order: `consensus_at` is `seconds.nanoseconds` with exactly nine nanosecond digits and
 * seconds without leading zeros, so a shorter text is an earlier instant and equal lengths compare
 * as text (the order of `compareConsensus`); ties by record id. A corrupt anchored row without
 * consensus time sorts first (NULL), so it is always met and refused. `compareHeads` is the same
 * order in JavaScript.
 */
export const CONSENSUS_ORDER = "length(consensus_at), consensus_at, id";

/**
 * Verdict classes of rules 2–4: 0 active person-signed, 1 active organisation-signed, 2 revoked.
 * The index records_anchored_by_class (src/storage/schema.ts) holds this very expression, and
 * SQLite matches an indexed expression only when it is written the same way.
 */
export const VERDICT_CLASS = "CASE WHEN revoked_at IS NOT NULL THEN 2 WHEN signer_type = 'user' THEN 0 ELSE 1 END";
const VERDICT_CLASSES = [0, 1, 2] as const;

/**
 * A hash with more than `MAX_MATCHES` records, one verdict class (?2): the first `MAX_MATCHES` of
 * its anchored records in consensus order, as their rowid and order keys. One range read of the
 * covering partial index records_anchored_by_class, already in order: no table row, no sort, at
 * most `MAX_MATCHES` index entries whatever the number of records (a test checks the plan).
 * INDEXED BY: should the index ever not match the statement, preparing it fails, at startup,
 * rather than the read quietly becoming a scan.
 */
export const CLASS_HEAD_SQL = `SELECT rowid AS rid, length(consensus_at) AS len, consensus_at, id
    FROM records INDEXED BY records_anchored_by_class
   WHERE doc_hash = ?1 AND ${VERDICT_CLASS} = ?2 AND anchor_state = 'anchored'
   ORDER BY ${CONSENSUS_ORDER}
   LIMIT ${MAX_MATCHES}`;

/** One record read whole, by the rowid its class head gave. */
export const RECORD_BY_ROWID_SQL = `SELECT ${RECORD_COLUMNS} FROM records WHERE rowid = ?`;

/** When the newest record of a hash awaiting consensus was stored (rule 5), or null. */
export const NEWEST_ACCEPTED_SQL = "SELECT max(created_at) AS newest FROM records INDEXED BY records_doc_hash WHERE doc_hash = ? AND anchor_state = 'accepted'";

/** A value as bun:sqlite returns it. */
type SqlValue = null | number | bigint | string | Uint8Array;

/** A `CLASS_HEAD_SQL` row: where a record stands in consensus order, and its rowid. */
export interface ClassHead {
  readonly rid: number;
  readonly len: SqlValue;
  readonly consensus_at: SqlValue;
  readonly id: SqlValue;
}

/** SQLite's storage classes in its sort order: NULL, numbers, text, blobs. */
function storageClass(v: SqlValue): number {
  return v === null ? 0 : typeof v === "number" || typeof v === "bigint" ? 1 : typeof v === "string" ? 2 : 3;
}

/**
 * Two values in SQLite's ORDER BY order (BINARY collation: text by its UTF-8 bytes). Well-formed
 * rows hold ASCII text only, but a corrupt row must sort here exactly where SQLite put it for
 * the same records to be read; UTF-16 code units order as UTF-8 bytes do except a surrogate
 * (a code point above U+FFFF) against U+E000–U+FFFF.
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

/** Typical finality is 3–5 s after acceptance (spec §8). */
const EXPECTED_FINALITY_MS = 5_000;

/**
 * Seconds a client should wait before polling a `pending_anchor` hash again: until the typical
 * finality of the newest accepted record has passed (at least 1), then 2 s for the first minute,
 * then 30 s (consensus that late is not reconciled by polling; spec §3.3).
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

/** The outcome of the signature checks of one record (hashBinding adds the hash comparison). */
interface SignatureChecks {
  readonly signatureOk: boolean;
  readonly sealOk: boolean;
}

export function createVerifier(deps: VerifierDeps): Verifier {
  const { db, signer, clock, links } = deps;
  const memoOn = deps.memo !== false;
  const verifySignature: VerifyFn =
    deps.memo === false
      ? (a, pk, m, s) => signer.verify(a, pk, m, s)
      : (deps.memo ?? createVerificationMemo({ verify: (a, pk, m, s) => signer.verify(a, pk, m, s), maxEntries: DEFAULT_MEMO_ENTRIES })).verify;
  const keys = new Lru<string, ResolvedKey>(deps.keyCacheSize ?? 1024);
  // The record memo (see the header): by rowid, oldest inserted forgotten first.
  const recordMemo = new Map<number, RecordMemoEntry>();
  // Standing kept while the change counter stays `cachedGen` (every change to it raises the counter).
  const orgCache = new Map<string, { name: string; suspended: number }>();
  const personCache = new Map<string, boolean>();
  let cachedGen: number | null = null;

  // The hot path uses bun:sqlite prepared statements directly, rows as src/storage/record-row.ts
  // names them: measured, drizzle's row mapping and a LEFT JOIN each cost too much here (a drizzle
  // prepared statement reads a hash's one record in 12 µs, this one in 4.4 µs, of a whole memoised
  // verification's 20 µs). One indexed lookup (records_doc_hash) per request when the record memo
  // answers, two when it does not.
  const client = db.$client;
  const recordHeadsByHash = client.prepare<HeadRow, [string]>(RECORD_HEADS_BY_HASH_SQL);
  const recordsByHash = client.prepare<HashRow, [string]>(RECORDS_BY_HASH_SQL);
  const classHead = client.prepare<ClassHead, [string, number]>(CLASS_HEAD_SQL);
  const recordByRowid = client.prepare<VerifyRow, [number]>(RECORD_BY_ROWID_SQL);
  const newestAcceptedOf = client.prepare<{ newest: number | null }, [string]>(NEWEST_ACCEPTED_SQL);
  const changeCounter = client.prepare<{ value: number }, []>(`SELECT ${CHANGE_COUNTER} AS value`);
  const orgById = client.prepare<{ name: string; suspended: number }, [string]>("SELECT name, suspended FROM organisations WHERE id = ?");
  // A person-signed record's standing is its signer's (decisions §10), by the key it was signed with.
  const personSuspendedByKey = client.prepare<{ suspended: number }, [Uint8Array]>("SELECT suspended FROM persons WHERE key_fingerprint = ?");
  const keyByFingerprint = client.prepare<{ algorithm: string; public_key: Uint8Array }, [Uint8Array]>(
    "SELECT algorithm, public_key FROM signing_keys WHERE fingerprint = ?",
  );

  /** Drops what was kept under another value of the change counter. */
  function syncCaches(gen: number | null): void {
    if (gen === cachedGen) return;
    cachedGen = gen;
    keys.clear();
    recordMemo.clear();
    orgCache.clear();
    personCache.clear();
  }

  /**
   * The key a fingerprint names, only if its row exists, its algorithm is known and the
   * fingerprint really is that algorithm-tagged public key's. Null otherwise (never cached, so a
   * key row inserted later is found).
   */
  function resolveKey(fingerprint: Uint8Array): ResolvedKey | null {
    const id = Buffer.from(fingerprint.buffer, fingerprint.byteOffset, fingerprint.byteLength).toString("hex");
    const cached = keys.get(id);
    if (cached !== undefined) return cached;
    const row = keyByFingerprint.get(fingerprint);
    if (row === null || !isAlgorithm(row.algorithm)) return null;
    const publicKey = new Uint8Array(row.public_key);
    const recomputed = keyFingerprint({ algorithm: row.algorithm, publicKey }); // throws on a wrong-length key
    if (!Buffer.from(recomputed).equals(Buffer.from(fingerprint))) return null;
    const key = { algorithm: row.algorithm, publicKey };
    keys.set(id, key);
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
      const row = recordByRowid.get(head.rid);
      if (row === null) throw new Error(`record at rowid ${head.rid} vanished inside a read transaction`);
      return row;
    };
    return { page: page.map(whole), beyond: beyond.map(whole) };
  });

  /** Runs `fn`; anything it throws is a failed check, never a crash and never a pass. */
  function attempt<T>(fn: () => T): T | null {
    try {
      return fn();
    } catch {
      return null;
    }
  }

  /** Both signature checks of a row read whole, recomputed (or answered by the signature memo). */
  function signatureChecks(row: VerifyRow): SignatureChecks {
    const signerKey = attempt(() => resolveKey(row.signer_fingerprint));
    const payload = attempt(() =>
      encodeRecordPayload({ recordId: row.id, docHash: row.doc_hash, signedAtMs: row.signed_at_ms, signerKeyFingerprint: row.signer_fingerprint }),
    );
    const signature = row.signature;
    const signatureOk =
      signerKey !== null && payload !== null && attempt(() => verifySignature(signerKey.algorithm, signerKey.publicKey, payload, signature)) === true;
    const sealKey = attempt(() => resolveKey(row.seal_fingerprint));
    const sealOk =
      sealKey !== null &&
      payload !== null &&
      attempt(() => {
        const sealPayload = encodeSealPayload(payload, signature, row.seal_fingerprint);
        return verifySignature(sealKey.algorithm, sealKey.publicKey, sealPayload, row.seal_signature);
      }) === true;
    return { signatureOk, sealOk };
  }

  /** The record memo's entry for a row, if it was computed on the inputs the row holds now. */
  function remembered(row: HeadRow, now: number): RecordMemoEntry | null {
    const e = recordMemo.get(row.rid);
    if (e === undefined || row.gen === null || e.gen !== row.gen || now - e.verifiedAtMs >= RECORD_MEMO_TTL_MS || now < e.verifiedAtMs) return null;
    if (e.id !== row.id || e.docHash !== row.doc_hash || e.signedAtMs !== row.signed_at_ms) return null;
    if (!sameBytes(e.signerFingerprint, row.signer_fingerprint) || !sameBytes(e.sealFingerprint, row.seal_fingerprint)) return null;
    return e;
  }

  function remember(row: HashRow, checks: SignatureChecks, now: number): void {
    if (row.gen === null) return;
    if (recordMemo.size >= RECORD_MEMO_ENTRIES && !recordMemo.has(row.rid)) {
      const oldest = recordMemo.keys().next();
      if (!oldest.done) recordMemo.delete(oldest.value);
    }
    recordMemo.set(row.rid, {
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

  function shapeMatch(
    row: HeadRow | VerifyRow,
    tier: DisclosureTier,
    requested: string,
    sig: SignatureChecks,
    org: { name: string; suspended: number } | null,
    personSuspended: boolean,
  ): Match {
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
      // The signing organisation, or the organisation a person signed within (decisions §10).
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
        mirrorNodeUrl: links.topicMessageUrl(row.topic_id, row.sequence_number),
      },
    };
    return match;
  }

  const byConsensus = (a: HeadRow, b: HeadRow) => compareConsensus(a.consensus_at ?? "", b.consensus_at ?? "") || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

  return {
    verify(input) {
      const { docHash, tier } = input;
      if (tier !== "public" && tier !== "organisation") throw new TypeError(`unknown disclosure tier ${String(tier)}`);
      const now = clock.now();
      // The matches, and the records beyond them that a verdict class rests on (checked like a
      // match, never returned), each with its signature checks, and when the newest record
      // awaiting consensus was stored.
      let page: (HeadRow | VerifyRow)[];
      let beyond: VerifyRow[] = [];
      let sigOf: (row: HeadRow | VerifyRow) => SignatureChecks;
      let newestAccepted: () => number | null;
      let gen: number | null = null;

      let rows: readonly HeadRow[] | null = null;
      let large = false;
      if (memoOn) {
        // The record memo first: without the signature columns, if it holds every anchored record.
        const heads = recordHeadsByHash.all(docHash);
        const known = new Map<HeadRow, RecordMemoEntry>();
        large = heads.length > MAX_MATCHES;
        if (heads.length <= MAX_MATCHES && heads.length > 0 && heads[0]!.gen !== null) {
          syncCaches(heads[0]!.gen);
          let all = true;
          for (const h of heads) {
            if (h.anchor_state !== "anchored") continue;
            const e = remembered(h, now);
            if (e === null) {
              all = false;
              break;
            }
            known.set(h, e);
          }
          if (all) {
            rows = heads;
            gen = heads[0]!.gen;
            sigOf = (r) => known.get(r as HeadRow)!;
          }
        } else if (heads.length === 0) {
          rows = heads;
          sigOf = () => {
            throw new Error("no record to check");
          };
        }
      }
      if (rows === null && !large) {
        const whole = recordsByHash.all(docHash);
        if (whole.length <= MAX_MATCHES) {
          gen = whole[0]?.gen ?? null;
          syncCaches(gen);
          const computed = new Map<VerifyRow, SignatureChecks>();
          for (const r of whole) {
            if (r.anchor_state !== "anchored") continue;
            const checks = signatureChecks(r);
            computed.set(r, checks);
            if (memoOn) remember(r, checks, now);
          }
          rows = whole;
          sigOf = (r) => computed.get(r as VerifyRow)!;
        }
      }
      if (rows !== null) {
        // Every record of the hash is here.
        const all = rows;
        page = all.filter((r) => r.anchor_state === "anchored").sort(byConsensus);
        newestAccepted = () => {
          const accepted = all.filter((r) => r.anchor_state === "accepted");
          return accepted.length === 0 ? null : Math.max(...accepted.map((r) => r.created_at));
        };
      } else {
        // Keys kept under an older counter are dropped first; the rows are read in their own
        // transaction, so standing is read afresh for them (gen stays null).
        syncCaches(changeCounter.get()?.value ?? null);
        ({ page, beyond } = readLargeHash(docHash));
        const computed = new Map<VerifyRow, SignatureChecks>();
        sigOf = (r) => {
          let c = computed.get(r as VerifyRow);
          if (c === undefined) computed.set(r as VerifyRow, (c = signatureChecks(r as VerifyRow)));
          return c;
        };
        newestAccepted = () => newestAcceptedOf.get(docHash)?.newest ?? null;
      }

      const orgs = new Map<string, { name: string; suspended: number } | null>();
      const orgOf = (id: string | null) => {
        if (id === null) return null;
        let org = orgs.get(id);
        if (org === undefined) {
          org = (gen !== null ? orgCache.get(id) : undefined) ?? orgById.get(id);
          if (gen !== null && org !== null && orgCache.size < 4096) orgCache.set(id, org);
          orgs.set(id, org);
        }
        return org;
      };
      const personSuspended = (r: HeadRow | VerifyRow) => {
        if (r.signer_type !== "user") return false;
        const id = Buffer.from(r.signer_fingerprint.buffer, r.signer_fingerprint.byteOffset, r.signer_fingerprint.byteLength).toString("hex");
        let suspended = gen !== null ? personCache.get(id) : undefined;
        if (suspended === undefined) {
          const found = personSuspendedByKey.get(r.signer_fingerprint);
          suspended = (found?.suspended ?? 0) !== 0;
          if (gen !== null && found !== null && personCache.size < 65_536) personCache.set(id, suspended);
        }
        return suspended;
      };
      const shape = (r: HeadRow | VerifyRow) => shapeMatch(r, tier, docHash, sigOf(r), orgOf(r.org_id), personSuspended(r));
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
    },
    clearKeyCache() {
      keys.clear();
      recordMemo.clear();
    },
  };
}
