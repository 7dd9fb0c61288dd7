/**
 * A person's key over its life (docs/signing.md "Key lifecycle", docs/persons.md): re-enrolment
 * replaces it (persons/service.ts `enrol`), and an administrator may declare it compromised.
 *
 * What these guarantee:
 * - A re-enrolment is refused (nothing changed) while the person's current key is not yet
 *   announced and anchored with the current seal key on their organisation's topic: the previous
 *   change (an enrolment, a re-enrolment, a seal rotation) is still under way, and a third key's
 *   announcement would overtake the record messages it waits for.
 * - A compromise is one transaction: `compromised_since` and `compromised_at` on the key and the
 *   audit row. The anchor loop queues its one `key_compromise` message (with the person's id);
 *   verification treats the key's records signed at or after `since` as revoked (KEY_COMPROMISE)
 *   from the commit on. The key stays the person's until they re-enrol, but it signs nothing more
 *   (the signing page refuses it). Refused, nothing changed: a time in the future, a person
 *   without a key, a key that is not the person's, a key already declared compromised.
 */
import { and, eq, isNull } from "drizzle-orm";
import type { Clock } from "../lib/clock.ts";
import { DomainError, invalid } from "../lib/errors.ts";
import { rfc3339Ms } from "../lib/formats.ts";
import { hasAnchoredAnnouncement } from "../storage/signing-keys.ts";
import { q, type Op, type Store, type StoreDb, type Tables } from "../storage/store.ts";
import { auditCompromise, keysOf, type KeyInfo } from "../keys/org-keys.ts";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

/**
 * Inside a write: refuses (FORBIDDEN) while person `personId`'s key `key` lacks an anchored
 * announcement with the current seal key on their organisation's topic (see the header). An
 * organisation without a topic announces nothing, so nothing waits.
 */
export function* refuseWhileAnnouncing(tx: StoreDb, t: Tables, person: { id: string; orgId: string }, key: Uint8Array): Op<void> {
  const [org] = yield* q(tx.select({ topicId: t.organisations.topicId }).from(t.organisations).where(eq(t.organisations.id, person.orgId)));
  if (org === undefined || org.topicId === null) return;
  const sk = t.signingKeys;
  const [seal] = yield* q(tx.select({ fingerprint: sk.fingerprint }).from(sk).where(and(eq(sk.purpose, "service-seal"), isNull(sk.retiredAt))));
  if (yield* hasAnchoredAnnouncement(tx, t, { orgId: person.orgId, key, ...(seal === undefined ? {} : { seal: seal.fingerprint }) })) return;
  throw new DomainError(
    "FORBIDDEN",
    `Person ${person.id}'s key ${hex(key)} is not announced on the ledger yet (their previous enrolment or a seal key change is still under way, ` +
      "usually seconds while the service runs). Nothing was changed; try again shortly.",
  );
}

export interface PersonKeyCompromise {
  readonly personId: string;
  readonly orgId: string;
  /** The compromised key, 64 lowercase hex. */
  readonly keyFingerprint: string;
  readonly sinceMs: number;
  /** When it was declared (ms). */
  readonly at: number;
}

export function createPersonKeys(deps: { store: Store; clock: Clock }) {
  const { store, clock } = deps;
  return {
    /** Person `personId`'s keys, newest first (the current one is the one not retired). */
    keys(personId: string): Promise<KeyInfo[]> {
      return store.read((db, t) => keysOf(db, t, `person:${personId}`));
    },

    /**
     * Declares one of person `personId`'s keys (default: their current one) compromised for every
     * record it signed at or after `sinceMs` (see the header). VALIDATION_FAILED for a time in the
     * future; NOT_FOUND; FORBIDDEN for the other refusals.
     */
    declareKeyCompromised(personId: string, input: { readonly sinceMs: number; readonly keyFingerprint?: Uint8Array }, actor: string): Promise<PersonKeyCompromise> {
      const at = clock.now();
      if (!Number.isSafeInteger(input.sinceMs) || input.sinceMs < 0) return Promise.reject(invalid("since", "must be a time"));
      if (input.sinceMs > at) return Promise.reject(invalid("since", `${rfc3339Ms(input.sinceMs)} is in the future: a compromise is declared for what has been signed`));
      return store.write(function* (tx, t) {
        const [person] = yield* q(tx.select({ id: t.persons.id, orgId: t.persons.orgId, key: t.persons.keyFingerprint }).from(t.persons).where(eq(t.persons.id, personId)));
        if (person === undefined) throw new DomainError("NOT_FOUND", `No person ${personId}.`);
        const key = input.keyFingerprint === undefined ? person.key : Buffer.from(input.keyFingerprint);
        if (key === null) throw new DomainError("FORBIDDEN", `Person ${personId} has not enrolled: they have no key. Nothing was changed.`);
        const sk = t.signingKeys;
        const [row] = yield* q(tx.select({ purpose: sk.purpose, compromisedAt: sk.compromisedAt }).from(sk).where(eq(sk.fingerprint, key)));
        if (row === undefined || row.purpose !== `person:${personId}`) throw new DomainError("FORBIDDEN", `Key ${hex(key)} is not one of person ${personId}'s keys. Nothing was changed.`);
        if (row.compromisedAt !== null) throw new DomainError("FORBIDDEN", `Key ${hex(key)} was already declared compromised at ${rfc3339Ms(row.compromisedAt)}. Nothing was changed.`);
        yield* q(tx.update(sk).set({ compromisedSince: input.sinceMs, compromisedAt: at }).where(eq(sk.fingerprint, key)));
        yield* auditCompromise(tx, t, { key, sinceMs: input.sinceMs, at, actor, subjectType: "person", subjectId: personId });
        return { personId, orgId: person.orgId, keyFingerprint: hex(key), sinceMs: input.sinceMs, at };
      });
    },
  };
}

export type PersonKeys = ReturnType<typeof createPersonKeys>;
