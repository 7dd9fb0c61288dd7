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
import type { OrgStanding, VerificationReads, VerifyRow } from "./ports.ts";

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
  const heldKeys = new Map<string, ResolvedKey>();
  const wantKeys = new Set<string>();
  for (const r of toCheck) {
    for (const fp of [r.signer_fingerprint, r.seal_fingerprint]) {
      const id = hexOf(fp);
      const k = caches.key(id);
      if (k !== undefined) heldKeys.set(id, k);
      else wantKeys.add(id);
    }
  }
  const orgs = new Map<string, OrgStanding>();
  const wantOrgs = new Set<string>();
  const persons = new Map<string, boolean>();
  const wantPersons = new Set<string>();
  for (const r of shown) {
    if (r.org_id !== null) {
      const o = standingGen !== null ? caches.org(r.org_id) : undefined;
      if (o !== undefined) orgs.set(r.org_id, o);
      else wantOrgs.add(r.org_id);
    }
    if (r.signer_type === "user") {
      const id = hexOf(r.signer_fingerprint);
      const p = standingGen !== null ? caches.personSuspended(id) : undefined;
      if (p !== undefined) persons.set(id, p);
      else wantPersons.add(id);
    }
  }
  const build = (keyRows: ReadonlyMap<string, { algorithm: string; public_key: Uint8Array }>): Context => {
    const keepKeys = readGen !== null && caches.gen === readGen;
    return {
      keyOf(fingerprint) {
        const id = hexOf(fingerprint);
        const held = heldKeys.get(id);
        if (held !== undefined) return held;
        const key = keyFromRow(fingerprint, keyRows.get(id));
        if (key !== null && keepKeys) caches.keepKey(id, key);
        return key;
      },
      orgOf: (id) => (id === null ? null : (orgs.get(id) ?? null)),
      personSuspended: (r) => r.signer_type === "user" && persons.get(hexOf(r.signer_fingerprint)) === true,
    };
  };
  if (wantKeys.size + wantOrgs.size + wantPersons.size === 0) return build(new Map());
  const found = reads.context({ keys: [...wantKeys], orgs: [...wantOrgs], persons: [...wantPersons] });
  return mapMaybe(found, (f) => {
    const keep = standingGen !== null && caches.gen === standingGen;
    for (const [id, o] of f.orgs) {
      orgs.set(id, o);
      if (keep) caches.keepOrg(id, o);
    }
    for (const [id, suspended] of f.persons) {
      persons.set(id, suspended);
      if (keep) caches.keepPerson(id, suspended);
    }
    return build(f.keys);
  });
}
