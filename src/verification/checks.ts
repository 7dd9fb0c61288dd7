/**
 * The signature checks of records read whole (verify.ts's header, "The checks"): hashBinding's and
 * userSignature's verification of the stored signature over the record payload rebuilt from the
 * row, and serverSeal's of the seal. Fail closed: a key that does not resolve, bytes that do not
 * encode, a verification that throws, each makes its check fail, never pass and never crash.
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
import { namedCache, type NamedCache } from "../lib/lru.ts";
import { mapMaybe, type Maybe } from "../lib/maybe.ts";
import type { KeyRow, VerifyRow } from "./ports.ts";

/**
 * Signature memo results at most; its bytes are bounded first, by `MEMO_BYTES` (crypto/memo.ts:
 * 8 MiB, about 290 bytes a result, some 29,000 results).
 */
export const DEFAULT_MEMO_ENTRIES = 100_000;

export interface ResolvedKey {
  readonly algorithm: Algorithm;
  readonly publicKey: Uint8Array;
}

/** The outcome of the signature checks of one record (hashBinding adds the hash comparison). */
export interface SignatureChecks {
  readonly signatureOk: boolean;
  readonly sealOk: boolean;
}

/** Runs `fn`; anything it throws is a failed check, never a crash and never a pass. */
function attempt<T>(fn: () => T): T | null {
  try {
    return fn();
  } catch {
    return null;
  }
}

/**
 * The key a fingerprint names, from its row: only if the row exists, its algorithm is known and
 * the fingerprint really is that algorithm-tagged public key's. Null otherwise.
 */
export function keyFromRow(fingerprint: Uint8Array, row: KeyRow | null | undefined): ResolvedKey | null {
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
function callsOf(row: VerifyRow, keyOf: (fingerprint: Uint8Array) => ResolvedKey | null): { signature: VerifyCall | null; seal: VerifyCall | null } {
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

export interface SignatureChecker {
  /** False: every signature is verified from scratch (no signature memo, no record memo). */
  readonly memoOn: boolean;
  /**
   * Both signature checks of each row read whole, recomputed (or answered by the signature memo):
   * at once, or a promise of them when the verifications went to the signing workers
   * (`verifyMany`). A verification that throws is a failed check.
   */
  signatureChecks(rows: readonly VerifyRow[], keyOf: (fingerprint: Uint8Array) => ResolvedKey | null): Maybe<SignatureChecks[]>;
  /** The signature memo, when there is one. */
  caches(): NamedCache[];
}

export function createSignatureChecker(deps: { readonly signer: Pick<Signer, "verify">; readonly memo?: VerificationMemo | false; readonly verifyMany?: Signer["verifyMany"] }): SignatureChecker {
  const { signer, verifyMany } = deps;
  /** The signature memo; null when the memo is off. */
  const memo = deps.memo === false ? null : (deps.memo ?? createVerificationMemo({ verify: (a, pk, m, s) => signer.verify(a, pk, m, s), maxEntries: DEFAULT_MEMO_ENTRIES }));
  const verifySignature: VerifyFn = memo === null ? (a, pk, m, s) => signer.verify(a, pk, m, s) : memo.verify;

  /** Each call's result (null: it threw), the signature memo first, the rest by `verifyMany` or here. */
  function verifyCalls(calls: readonly VerifyCall[]): Maybe<(boolean | null)[]> {
    if (verifyMany === undefined) return calls.map((c) => attempt(() => verifySignature(c.algorithm, c.publicKey, c.message, c.signature)));
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
    return mapMaybe(verifyMany(missing), (results: readonly (boolean | null)[]) => {
      results.forEach((r, j) => {
        out[at[j]!] = r;
        const key = keys[j]!;
        if (memo !== null && key !== null && r !== null) memo.keep(key, r);
      });
      return out;
    });
  }

  return {
    memoOn: memo !== null,
    signatureChecks(rows, keyOf) {
      const planned = rows.map((r) => callsOf(r, keyOf));
      const calls: VerifyCall[] = [];
      for (const p of planned) {
        if (p.signature !== null) calls.push(p.signature);
        if (p.seal !== null) calls.push(p.seal);
      }
      return mapMaybe(verifyCalls(calls), (results) => {
        const ok = new Map<VerifyCall, boolean>();
        calls.forEach((c, i) => ok.set(c, results[i] === true));
        return planned.map((p) => ({ signatureOk: p.signature !== null && ok.get(p.signature) === true, sealOk: p.seal !== null && ok.get(p.seal) === true }));
      });
    },
    caches: () => (memo === null ? [] : [namedCache("verification_signature_memo", memo)]),
  };
}
