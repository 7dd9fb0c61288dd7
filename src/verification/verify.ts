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
 *   the memo, keyed on every input byte (src/crypto/memo.ts), which decisions §4 counts as
 *   recomputing. Public keys are cached by fingerprint (key rows are append-only and immutable),
 *   together with the result of recomputing their fingerprint.
 * - Organisation name and suspension are read with the records, per request: standing is live.
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
import { compareConsensus, consensusToRfc3339, rfc3339Ms, type CheckResult, type DisclosureTier, type Match, type Verdict } from "./types.ts";

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

/** Every record for a hash, through the records_doc_hash index (a test checks the plan). */
export const RECORDS_BY_HASH_SQL = `SELECT id, org_id, signer_type, kind, signer_hint, doc_hash, signed_at_ms, signer_fingerprint, signature,
       seal_fingerprint, seal_signature, anchor_state, topic_id, transaction_id, sequence_number, consensus_at,
       revoked_at, revocation_reason, created_at
  FROM records WHERE doc_hash = ?`;

/** A `records` row as the hot-path statement returns it (columns as in src/storage/schema.ts). */
interface RecordRow {
  readonly id: string;
  readonly org_id: string | null;
  readonly signer_type: "org" | "user";
  readonly kind: string;
  readonly signer_hint: string | null;
  readonly doc_hash: string;
  readonly signed_at_ms: number;
  readonly signer_fingerprint: Uint8Array;
  readonly signature: Uint8Array;
  readonly seal_fingerprint: Uint8Array;
  readonly seal_signature: Uint8Array;
  readonly anchor_state: string;
  readonly topic_id: string;
  readonly transaction_id: string;
  readonly sequence_number: number | null;
  readonly consensus_at: string | null;
  readonly revoked_at: number | null;
  readonly revocation_reason: string | null;
  readonly created_at: number;
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

export function createVerifier(deps: VerifierDeps): Verifier {
  const { db, signer, clock, links } = deps;
  const verifySignature: VerifyFn =
    deps.memo === false
      ? (a, pk, m, s) => signer.verify(a, pk, m, s)
      : (deps.memo ?? createVerificationMemo({ verify: (a, pk, m, s) => signer.verify(a, pk, m, s), maxEntries: DEFAULT_MEMO_ENTRIES })).verify;
  const keys = new Lru<string, ResolvedKey>(deps.keyCacheSize ?? 1024);

  // The hot path uses bun:sqlite prepared statements directly: measured, drizzle's row mapping
  // and a LEFT JOIN each cost more than the rest of a memoised verification. One indexed lookup
  // (records_doc_hash) per request, then each signing organisation's name and suspension, read
  // per request so that standing is live.
  const client = db.$client;
  const recordsByHash = client.prepare<RecordRow, [string]>(RECORDS_BY_HASH_SQL);
  const orgById = client.prepare<{ name: string; suspended: number }, [string]>("SELECT name, suspended FROM organisations WHERE id = ?");
  const keyByFingerprint = client.prepare<{ algorithm: string; public_key: Uint8Array }, [Uint8Array]>(
    "SELECT algorithm, public_key FROM signing_keys WHERE fingerprint = ?",
  );

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

  /** Runs `fn`; anything it throws is a failed check, never a crash and never a pass. */
  function attempt<T>(fn: () => T): T | null {
    try {
      return fn();
    } catch {
      return null;
    }
  }

  function checks(row: RecordRow, requested: string): { hashBinding: CheckResult; userSignature: CheckResult; serverSeal: CheckResult } {
    const signerKey = attempt(() => resolveKey(row.signer_fingerprint));
    const payload = attempt(() =>
      encodeRecordPayload({ recordId: row.id, docHash: row.doc_hash, signedAtMs: row.signed_at_ms, signerKeyFingerprint: row.signer_fingerprint }),
    );
    const signature = row.signature;
    const signatureOk =
      signerKey !== null && payload !== null && attempt(() => verifySignature(signerKey.algorithm, signerKey.publicKey, payload, signature)) === true;
    const hashBinding = row.doc_hash === requested && signerKey !== null && payload !== null && signatureOk;

    const sealKey = attempt(() => resolveKey(row.seal_fingerprint));
    const sealOk =
      sealKey !== null &&
      payload !== null &&
      attempt(() => {
        const sealPayload = encodeSealPayload(payload, signature, row.seal_fingerprint);
        return verifySignature(sealKey.algorithm, sealKey.publicKey, sealPayload, row.seal_signature);
      }) === true;
    return { hashBinding: hashBinding ? "pass" : "fail", userSignature: signatureOk ? "pass" : "fail", serverSeal: sealOk ? "pass" : "fail" };
  }

  function shapeMatch(row: RecordRow, tier: DisclosureTier, requested: string, org: { name: string; suspended: number } | null): Match {
    if (row.sequence_number === null || row.consensus_at === null) {
      // The anchor columns are written with the state in one transaction; an anchored row without
      // them is corruption. Refuse to answer (500) rather than vouch for or hide the record.
      throw new Error(`record ${row.id} is anchored without sequence number or consensus time`);
    }
    const signerType = row.signer_type;
    const match: Match = {
      recordId: row.id,
      kind: row.kind,
      status: row.revoked_at === null ? "active" : "revoked",
      recordIssuedAt: rfc3339Ms(row.signed_at_ms),
      signerType,
      signerStanding: org !== null && org.suspended !== 0 ? "suspended" : "good_standing",
      ...(signerType === "user" && row.signer_hint !== null ? { signerHint: row.signer_hint } : {}),
      ...(signerType === "org" && tier === "organisation" && org !== null ? { signerOrg: org.name } : {}),
      ...(row.revoked_at !== null ? { revocation: { reason: row.revocation_reason ?? "UNSPECIFIED", revokedAt: rfc3339Ms(row.revoked_at) } } : {}),
      checksPerformed: { ...checks(row, requested), anchorStatus: row.anchor_state },
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

  return {
    verify(input) {
      const { docHash, tier } = input;
      if (tier !== "public" && tier !== "organisation") throw new TypeError(`unknown disclosure tier ${String(tier)}`);
      const rows = recordsByHash.all(docHash);
      const anchored = rows
        .filter((r) => r.anchor_state === "anchored")
        .sort((a, b) => compareConsensus(a.consensus_at ?? "", b.consensus_at ?? "") || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      const orgs = new Map<string, { name: string; suspended: number } | null>();
      const orgOf = (id: string | null) => {
        if (id === null) return null;
        if (!orgs.has(id)) orgs.set(id, orgById.get(id));
        return orgs.get(id)!;
      };
      const matches = anchored.map((r) => shapeMatch(r, tier, docHash, orgOf(r.org_id)));

      const failed = matches.some((m) => m.checksPerformed.hashBinding === "fail" || m.checksPerformed.userSignature === "fail" || m.checksPerformed.serverSeal === "fail");
      if (failed) return { verdict: "signature_invalid", matches };
      if (matches.some((m) => m.status === "active" && m.signerType === "user")) return { verdict: "verified", matches };
      if (matches.some((m) => m.status === "active" && m.signerType === "org")) return { verdict: "verified_org", matches };
      if (matches.some((m) => m.status === "revoked")) return { verdict: "revoked", matches };

      const accepted = rows.filter((r) => r.anchor_state === "accepted");
      if (accepted.length > 0) {
        const newest = Math.max(...accepted.map((r) => r.created_at));
        return { verdict: "pending_anchor", matches: [], retryAfterSeconds: retryAfterFor(newest, clock.now()) };
      }
      return { verdict: "no_record", matches: [] };
    },
    clearKeyCache() {
      keys.clear();
    },
  };
}
