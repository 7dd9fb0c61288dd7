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
 *   reads, no table row touched), merged into consensus order, then at most `MAX_MATCHES` + 3
 *   rows read whole by rowid, all in one read transaction: the driver's `largeHash` (ports.ts,
 *   storage/verification-large-hash.ts). Nothing in it grows
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
 * Two engines (docs/storage.md), one verdict, written once here over the port `VerificationReads`
 * (ports.ts); only the drivers' reads differ (storage/sqlite/ and storage/postgres/
 * verification-reads.ts, one per engine):
 * - SQLite: statements prepared on the connection and run synchronously (the benchmarked hot
 *   path: a memoised public verification is one indexed read). Every read answers at once, so
 *   `verify` returns its answer, not a promise (lib/maybe.ts `mapMaybe`).
 * - PostgreSQL: the same statements in PostgreSQL's dialect, awaited; the keys, organisations and
 *   persons a verification needs that are not in memory in one more read; a large hash in one
 *   REPEATABLE READ snapshot. `verify` returns a promise. Verifications interleave at their
 *   awaits, so what is kept in memory is kept only under the change counter it was read under:
 *   the caches move forward with the counter, never back.
 *
 * The parts, one file each: the checks (checks.ts), the keys and standing a verification needs
 * (context.ts), the caches (caches.ts), the shape of a match (match.ts) and the verdict, a pure
 * function of the matches (verdict.ts). The list queries (query.ts) and the answer's JSON text
 * (answer-json.ts) keep what they keep in this verifier's instance too.
 */
import type { Signer, VerificationMemo } from "../crypto/index.ts";
import type { Clock } from "../lib/clock.ts";
import { compareConsensus, createConsensusTexts } from "../lib/formats.ts";
import type { NamedCache } from "../lib/lru.ts";
import { mapMaybe, type Maybe } from "../lib/maybe.ts";
import { MAX_MATCHES } from "../storage/verification-statements.ts";
import { createAnswerWriter, type AnswerFields } from "./answer-json.ts";
import { compromisesOf, VerifierCaches, type KeyCompromise } from "./caches.ts";
import { createSignatureChecker, type SignatureChecks } from "./checks.ts";
import { contextFor, hexOf, type Context } from "./context.ts";
import { createMatchShaper, type ShownRow, type VerificationLinks } from "./match.ts";
import type { HashRow, SyncVerificationReads, VerificationReads, VerifyRow } from "./ports.ts";
import { createListQueries, type ListQuery } from "./query.ts";
import type { DisclosureTier } from "./types.ts";
import { verdictOf, type VerifyResult } from "./verdict.ts";

/** The most matches an answer holds (the storage statements read to it): http/ documents it. */
export { MAX_MATCHES };

export interface VerifierDeps {
  /** The database's reads (each engine's storage/<engine>/drivers.ts): synchronous on SQLite, promises on PostgreSQL. */
  readonly reads: VerificationReads;
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

export interface Verifier {
  /** The answer itself on SQLite; a promise of it on PostgreSQL. */
  verify(input: VerifyInput): VerifyResult | Promise<VerifyResult>;
  /** Forgets cached public keys (tests that alter a key row in place). */
  clearKeyCache(): void;
  /** What it keeps in memory, each with its size and budget (/metrics), and emptied when the service goes quiet. */
  caches(): readonly NamedCache[];
  /** The list query of a GET /v1/verifications request's URL (query.ts `parseListQuery`), kept by its query text. */
  listQueryOf(requestUrl: string): ListQuery;
  /** A verification's answer as JSON text (answer-json.ts), each match's text kept by match. */
  answerJson(fields: AnswerFields): string;
}

/** The verifier over a synchronous driver (SQLite) without `verifyMany`: synchronous. */
export interface SqliteVerifier extends Verifier {
  verify(input: VerifyInput): VerifyResult;
}

const byConsensus = (a: ShownRow, b: ShownRow) => compareConsensus(a.consensus_at ?? "", b.consensus_at ?? "") || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const anchored = (r: ShownRow) => r.anchor_state === "anchored";

/** When the newest of these records awaiting consensus was stored, or null. */
function newestAcceptedIn(all: readonly ShownRow[]): number | null {
  const accepted = all.filter((r) => r.anchor_state === "accepted");
  return accepted.length === 0 ? null : Math.max(...accepted.map((r) => r.created_at));
}

function checkTier(tier: DisclosureTier): void {
  if (tier !== "public" && tier !== "organisation") throw new TypeError(`unknown disclosure tier ${String(tier)}`);
}

export function createVerifier(deps: VerifierDeps & { readonly reads: SyncVerificationReads; readonly verifyMany?: undefined }): SqliteVerifier;
export function createVerifier(deps: VerifierDeps): Verifier;
export function createVerifier(deps: VerifierDeps): Verifier {
  const { reads, clock } = deps;
  const checker = createSignatureChecker(deps);
  const memoOn = checker.memoOn;
  const caches = new VerifierCaches(deps.keyCacheSize ?? 1024);
  const consensusTexts = createConsensusTexts();
  const matchOf = createMatchShaper(deps.links, consensusTexts);
  const listQueries = createListQueries();
  const answers = createAnswerWriter();
  /** Moves the caches to the counter `gen`; over a driver whose reads interleave, only forward. */
  const sync = (gen: number | null) => (reads.interleaves ? caches.syncForward(gen) : caches.sync(gen));

  /** What a verification read: the rows it shows and checks, and the counters they were read under. */
  interface RowsRead {
    /** The matches to be: the anchored records, in consensus order, at most `MAX_MATCHES`. */
    readonly page: readonly ShownRow[];
    /** The records beyond them that a verdict class rests on (checked like a match, never returned). */
    readonly beyond: readonly VerifyRow[];
    /** The rows read whole, to check now. */
    readonly toCheck: readonly VerifyRow[];
    /** Checks the record memo answered. */
    readonly known: ReadonlyMap<ShownRow, SignatureChecks> | null;
    /** The counter read with the rows: what standing kept in memory is valid under (null: read afresh). */
    readonly gen: number | null;
    /** The counter this verification's reads saw, for keeping keys. */
    readonly readGen: number | null;
    /** Whether the checks of `toCheck` go to the record memo (rows read whole by hash). */
    readonly fromWhole: boolean;
    /** When the newest record awaiting consensus was stored, or null; asked only when no anchored record decides. */
    newestAccepted(): number | null;
  }

  /** Every record of a hash, read under the counter `gen`. */
  function everyRecord(rows: readonly ShownRow[], known: ReadonlyMap<ShownRow, SignatureChecks> | null, gen: number | null, toCheck: readonly VerifyRow[], fromWhole: boolean): RowsRead {
    return { page: rows.filter(anchored).sort(byConsensus), beyond: [], toCheck, known, gen, readGen: gen, fromWhole, newestAccepted: () => newestAcceptedIn(rows) };
  }

  /**
   * The record memo first: the rows without their signatures, if it holds every anchored record's
   * checks; then the rows read whole; then, for a hash with more than MAX_MATCHES records, its
   * class heads in one snapshot.
   */
  function rowsOf(docHash: string, now: number): Maybe<RowsRead> {
    if (!memoOn) return wholeRows(docHash);
    return mapMaybe(reads.recordHeads(docHash), (heads) => {
      if (heads.length > MAX_MATCHES) return largeRows(docHash);
      if (heads.length === 0) return everyRecord(heads, null, null, [], false);
      const gen = heads[0]!.gen;
      if (gen === null) return wholeRows(docHash);
      sync(gen);
      const known = new Map<ShownRow, SignatureChecks>();
      for (const h of heads) {
        if (h.anchor_state !== "anchored") continue;
        const e = caches.remembered(h, now);
        if (e === null) return wholeRows(docHash);
        known.set(h, e);
      }
      return everyRecord(heads, known, gen, [], false);
    });
  }

  function wholeRows(docHash: string): Maybe<RowsRead> {
    return mapMaybe(reads.recordsByHash(docHash), (whole) => {
      if (whole.length > MAX_MATCHES) return largeRows(docHash);
      const gen = whole[0]?.gen ?? null;
      sync(gen);
      return everyRecord(whole, null, gen, whole.filter(anchored), true);
    });
  }

  /** Read in their own snapshot, so standing is read afresh for them (gen null). */
  function largeRows(docHash: string): Maybe<RowsRead> {
    return mapMaybe(reads.largeHash(docHash), (found) => {
      sync(found.gen);
      const toCheck = [...found.page, ...found.beyond];
      return { page: found.page, beyond: found.beyond, toCheck, known: null, gen: null, readGen: found.gen, fromWhole: false, newestAccepted: () => found.newest };
    });
  }

  /**
   * The keys the checks need, and the standing of the records shown: over a driver whose reads
   * are round trips (interleaves), in one read before the checks; over a synchronous one, the
   * standing after them, so that a wait for the signing workers does not leave it stale.
   */
  function answer(read: RowsRead, docHash: string, tier: DisclosureTier, now: number): Maybe<VerifyResult> {
    const shown = read.beyond.length === 0 ? read.page : [...read.page, ...read.beyond];
    const together = reads.interleaves;
    return mapMaybe(contextFor(reads, caches, read.toCheck, together ? shown : [], read.readGen, read.gen), (ctx) =>
      mapMaybe(read.toCheck.length === 0 ? [] : checker.signatureChecks(read.toCheck, ctx.keyOf), (checks) => {
        remember(read, checks, now);
        // Standing is kept under the counter the caches hold; after a wait for the workers another
        // verification may have moved them on (then: read afresh, keep nothing).
        const standing = together ? ctx : contextFor(reads, caches, [], shown, read.readGen, caches.gen === read.gen ? read.gen : null);
        return mapMaybe(standing, (standing) => mapMaybe(compromisesFor(read, shown), (compromised) => decide(read, checks, standing, compromised, docHash, tier, now)));
      }),
    );
  }

  /**
   * The record memo is kept under the counter the caches hold; after a wait for a read or the
   * workers another verification may have moved them on (then: keep nothing).
   */
  function remember(read: RowsRead, checks: readonly SignatureChecks[], now: number): void {
    if (!memoOn || !read.fromWhole || read.readGen === null || caches.gen !== read.readGen) return;
    read.toCheck.forEach((r, i) => caches.remember(r as HashRow, checks[i]!, now));
  }

  /**
   * The compromised keys (docs/signing.md "Key lifecycle"): kept under the change counter with the
   * other caches, so read once each time it moves (a declaration and its message's anchoring both
   * raise it), never once per verification; nothing when no record is shown.
   */
  function compromisesFor(read: RowsRead, shown: readonly ShownRow[]): Maybe<ReadonlyMap<string, KeyCompromise> | null> {
    if (shown.length === 0) return null;
    const kept = caches.compromises();
    if (kept !== null && read.readGen !== null && caches.gen === read.readGen) return kept;
    return mapMaybe(reads.compromisedKeys(), (rows) => {
      const found = compromisesOf(rows);
      if (read.readGen !== null && caches.gen === read.readGen) caches.keepCompromises(found);
      return found;
    });
  }

  function decide(read: RowsRead, checks: readonly SignatureChecks[], standing: Context, compromised: ReadonlyMap<string, KeyCompromise> | null, docHash: string, tier: DisclosureTier, now: number): VerifyResult {
    const computed = new Map<ShownRow, SignatureChecks>();
    read.toCheck.forEach((r, i) => computed.set(r, checks[i]!));
    const sigOf = (r: ShownRow) => {
      const c = read.known?.get(r) ?? computed.get(r);
      if (c === undefined) throw new Error("no record to check");
      return c;
    };
    const keyOf = (r: ShownRow) => (compromised === null || compromised.size === 0 ? undefined : compromised.get(hexOf(r.signer_fingerprint)));
    const shape = (r: ShownRow) => matchOf(r, tier, docHash, sigOf(r), standing.orgOf(r.org_id), standing.personSuspended(r), keyOf(r));
    const matches = read.page.map(shape);
    // Over `deciding`, "is there a record of this class" has the answer it has over every record.
    const deciding = read.beyond.length === 0 ? matches : [...matches, ...read.beyond.map(shape)];
    return verdictOf(matches, deciding, () => read.newestAccepted(), now);
  }

  return {
    verify(input) {
      const { docHash, tier } = input;
      try {
        checkTier(tier);
        const now = clock.now();
        return mapMaybe(rowsOf(docHash, now), (read) => answer(read, docHash, tier, now));
      } catch (e) {
        // A driver that answers with promises answers a fault with one too.
        if (reads.interleaves) return Promise.reject(e);
        throw e;
      }
    },
    clearKeyCache: () => caches.clearKeys(),
    caches: () => [...caches.named(), ...reads.caches(), ...checker.caches(), listQueries.cache, consensusTexts.cache],
    listQueryOf: (requestUrl) => listQueries.listQueryOf(requestUrl),
    answerJson: (fields) => answers.answerJson(fields),
  };
}
