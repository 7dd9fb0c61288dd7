/**
 * The keys, organisations and persons a verification needs (verify.ts): what the verifier's caches
 * hold is taken at once (another verification may clear them while this one waits for a read),
 * the rest read in one call of the driver (`VerificationReads.context`). What is read is kept only
 * under the change counter it stands for, so a verification whose rows are older than the caches
 * keeps nothing.
 */
import { mapMaybe, type Maybe } from "../lib/maybe.ts";
import type { VerifierCaches } from "./caches.ts";
import { keyFromRow, type ResolvedKey } from "./checks.ts";
import type { ShownRow } from "./match.ts";
import type { KeyRow, OrgStanding, VerificationReads, VerifyRow } from "./ports.ts";

/** Keys, organisations and persons a verification needs, as read (or found in memory) for it. */
export interface Context {
  keyOf(fingerprint: Uint8Array): ResolvedKey | null;
  orgOf(orgId: string | null): OrgStanding | null;
  personSuspended(row: ShownRow): boolean;
}

export function hexOf(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}

/**
 * What checking `toCheck` and shaping `shown` needs. `readGen`: the counter this verification's
 * rows were read with (keys read are kept only while the caches still hold it); `standingGen`:
 * the counter standing kept in memory may be used under (null: read it afresh, keep nothing).
 */
export function contextFor(reads: VerificationReads, caches: VerifierCaches, toCheck: readonly VerifyRow[], shown: readonly ShownRow[], readGen: number | null, standingGen: number | null): Maybe<Context> {
  // Allocated only when something is needed: most verifications are answered from memory whole.
  let heldKeys: Map<string, ResolvedKey> | null = null;
  let wantKeys: Set<string> | null = null;
  const want = (id: string) => (wantKeys ??= new Set()).add(id);
  for (const r of toCheck) {
    const signerId = hexOf(r.signer_fingerprint);
    const signerKey = caches.key(signerId);
    if (signerKey !== undefined) (heldKeys ??= new Map()).set(signerId, signerKey);
    else want(signerId);
    const sealId = hexOf(r.seal_fingerprint);
    const sealKey = caches.key(sealId);
    if (sealKey !== undefined) (heldKeys ??= new Map()).set(sealId, sealKey);
    else want(sealId);
  }
  let orgs: Map<string, OrgStanding> | null = null;
  let wantOrgs: Set<string> | null = null;
  let persons: Map<string, boolean> | null = null;
  let wantPersons: Set<string> | null = null;
  for (const r of shown) {
    if (r.org_id !== null) {
      const o = standingGen !== null ? caches.org(r.org_id) : undefined;
      if (o !== undefined) (orgs ??= new Map()).set(r.org_id, o);
      else (wantOrgs ??= new Set()).add(r.org_id);
    }
    if (r.signer_type === "user") {
      const id = hexOf(r.signer_fingerprint);
      const p = standingGen !== null ? caches.personSuspended(id) : undefined;
      if (p !== undefined) (persons ??= new Map()).set(id, p);
      else (wantPersons ??= new Set()).add(id);
    }
  }
  const build = (keyRows: ReadonlyMap<string, KeyRow> | null): Context => {
    const keepKeys = readGen !== null && caches.gen === readGen;
    const held = heldKeys;
    const standingOrgs = orgs;
    const standingPersons = persons;
    return {
      keyOf(fingerprint) {
        const id = hexOf(fingerprint);
        const k = held?.get(id);
        if (k !== undefined) return k;
        const key = keyFromRow(fingerprint, keyRows?.get(id));
        if (key !== null && keepKeys) caches.keepKey(id, key);
        return key;
      },
      orgOf: (id) => (id === null ? null : (standingOrgs?.get(id) ?? null)),
      personSuspended: (r) => r.signer_type === "user" && standingPersons?.get(hexOf(r.signer_fingerprint)) === true,
    };
  };
  if (wantKeys === null && wantOrgs === null && wantPersons === null) return build(null);
  const found = reads.context({ keys: wantKeys === null ? [] : [...wantKeys], orgs: wantOrgs === null ? [] : [...wantOrgs], persons: wantPersons === null ? [] : [...wantPersons] });
  return mapMaybe(found, (f) => {
    const keep = standingGen !== null && caches.gen === standingGen;
    for (const [id, o] of f.orgs) {
      (orgs ??= new Map()).set(id, o);
      if (keep) caches.keepOrg(id, o);
    }
    for (const [id, suspended] of f.persons) {
      (persons ??= new Map()).set(id, suspended);
      if (keep) caches.keepPerson(id, suspended);
    }
    return build(f.keys);
  });
}
