/**
 * The one rule that says whether a record is revoked and why (docs/signing.md "Key lifecycle",
 * docs/records.md §2): its own revocation, or its signer key's declared compromise when it was
 * signed at or after `since`. Verification's matches and the public verify page apply it alike.
 * A pure module that imports nothing, so that records/views.ts (the verify page's record) may use it.
 */

/** A key declared compromised, as verification applies it. */
export interface KeyCompromise {
  /** Records the key signed at or after this time (ms) are revoked. */
  readonly sinceMs: number;
  /** Their revocation time (ms): the compromise message's consensus time once anchored, the declaration's before. */
  readonly revokedAtMs: number;
}

/**
 * A compromise from its stored columns: `since` and `declaredAt` in ms, `consensusAt` the anchored
 * key_compromise message's consensus time (`seconds.nanoseconds`) or null before it is anchored.
 */
export function keyCompromise(since: number, declaredAt: number, consensusAt: string | null): KeyCompromise {
  const consensus = consensusAt === null ? null : /^(\d+)\.(\d{9})$/.exec(consensusAt);
  const revokedAtMs = consensus === null ? declaredAt : Number(consensus[1]) * 1000 + Math.floor(Number(consensus[2]) / 1e6);
  return { sinceMs: since, revokedAtMs };
}

/**
 * A record's revocation: its own, or its signer key's compromise when it was signed at or after
 * `since` (reason KEY_COMPROMISE, at the compromise's time), the earlier of the two; on a tie, its
 * own. Null: not revoked.
 */
export function revocationOf(
  row: { readonly revoked_at: number | null; readonly revocation_reason: string | null; readonly signed_at_ms: number },
  compromise: KeyCompromise | undefined | null,
): { reason: string; revokedAtMs: number } | null {
  const own = row.revoked_at === null ? null : { reason: row.revocation_reason ?? "UNSPECIFIED", revokedAtMs: row.revoked_at };
  const byKey = compromise != null && row.signed_at_ms >= compromise.sinceMs ? { reason: "KEY_COMPROMISE", revokedAtMs: compromise.revokedAtMs } : null;
  if (own === null || byKey === null) return own ?? byKey;
  return byKey.revokedAtMs < own.revokedAtMs ? byKey : own;
}
