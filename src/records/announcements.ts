/**
 * Key announcements (docs/receipts.md §1): the message that binds an organisation's
 * key, and its registered name, to its topic, built here for the anchor loop, which queues it
 * (anchoring/queue.ts) without knowing the message format or the seal key.
 *
 * What an announcement provider guarantees:
 * - The message announces the organisation's current system key (`organisations.system_key_fingerprint`)
 *   with its algorithm from `signing_keys` and, when it replaced a key (a rotation), that key's
 *   fingerprint (`replaces`), its name, its domain when it has one, and the service
 *   seal key's fingerprint; `generation` is the organisation's announcement generation read in the
 *   same statement as the name and domain, so the queue can tell a message built before a change
 *   of either.
 * - The seal key is the one every new record is sealed with: read from `service_meta` at every
 *   call, after the organisation (a seal rotation raises every organisation's generation in the
 *   transaction that names the new seal key, so a message built across a rotation carries the old
 *   generation and is refused by the queue), or created as record creation creates it
 *   (seal-key.ts, race-safe across processes and nodes: one key even when two create it at once)
 *   when the master key is there. Without either it answers null, and the loop asks again at its
 *   next pass.
 * - A person's announcement (`createPersonKeyAnnouncements`) announces the person's current key
 *   with its `replaces` and the current seal key, with the organisation's domain as it is now.
 * - Never called inside another transaction (creating the seal key opens its own).
 * - On the embedded SQLite it answers synchronously; on PostgreSQL with a promise (the
 *   `RecordKeyStore` port's drivers, ports.ts).
 */
import { eq } from "drizzle-orm";
import type { KeyAnnouncement, PersonKeyAnnouncement } from "../anchoring/types.ts";
import type { Signer } from "../crypto/index.ts";
import type { Clock } from "../lib/clock.ts";
import { runMaybe, settled, type Maybe } from "../lib/maybe.ts";
import { q, type Body } from "../storage/store.ts";
import { encodeKeyAnnouncementMessage, encodePersonKeyAnnouncementMessage } from "./messages.ts";
import type { RecordKeyStore, SyncRecordKeyStore } from "./ports.ts";
import { sealKeyOf, SEAL_KEY_META } from "./seal-key.ts";

export interface KeyAnnouncementsDeps {
  /** The database, on either engine (ports.ts: synchronous on the embedded SQLite). */
  readonly keys: RecordKeyStore;
  readonly signer: Signer;
  readonly clock: Clock;
}

/** What an announcement needs of its organisation: a read operation. Undefined: no such organisation. */
function organisationKey(orgId: string): Body<{ name: string; domain: string | null; generation: number; key: Buffer; algorithm: string | null; replaces: Buffer | null } | undefined> {
  return function* (db, t) {
    const [org] = yield* q(
      db
        .select({
          name: t.organisations.name,
          domain: t.organisations.domain,
          generation: t.organisations.announcementGeneration,
          key: t.organisations.systemKeyFingerprint,
          algorithm: t.signingKeys.algorithm,
          replaces: t.signingKeys.replaces,
        })
        .from(t.organisations)
        .leftJoin(t.signingKeys, eq(t.signingKeys.fingerprint, t.organisations.systemKeyFingerprint))
        .where(eq(t.organisations.id, orgId)),
    );
    return org;
  };
}

/** The fingerprint of the seal key `service_meta` names, or null when none is named yet: a read operation. */
const namedSealFingerprint: Body<Uint8Array | null> = function* (db, t) {
  const [meta] = yield* q(db.select({ value: t.serviceMeta.value }).from(t.serviceMeta).where(eq(t.serviceMeta.key, SEAL_KEY_META)));
  return meta === undefined ? null : new Uint8Array(Buffer.from(meta.value, "hex"));
};

/** An organisation's key announcement, or null when it cannot be built yet (see the module comment). */
export function createKeyAnnouncements(deps: KeyAnnouncementsDeps & { readonly keys: SyncRecordKeyStore }): (orgId: string) => KeyAnnouncement | null;
export function createKeyAnnouncements(deps: KeyAnnouncementsDeps): (orgId: string) => Maybe<KeyAnnouncement | null>;
export function createKeyAnnouncements(deps: KeyAnnouncementsDeps): (orgId: string) => Maybe<KeyAnnouncement | null> {
  const sealKeyFingerprint = currentSealFingerprint(deps);

  function* announcement(orgId: string): Generator<unknown, KeyAnnouncement | null, unknown> {
    const org = yield* settled(deps.keys.read(organisationKey(orgId)));
    if (org === undefined) return null;
    if (org.algorithm === null) throw new Error(`organisation ${orgId}'s system key ${Buffer.from(org.key).toString("hex")} is not in signing_keys`);
    const seal = yield* sealKeyFingerprint();
    if (seal === null) return null;
    const keyFingerprint = new Uint8Array(org.key);
    return {
      keyFingerprint,
      generation: Number(org.generation),
      sealFingerprint: seal,
      message: encodeKeyAnnouncementMessage({
        orgId,
        name: org.name,
        domain: org.domain,
        algorithm: org.algorithm,
        keyFingerprint,
        replaces: org.replaces === null ? null : new Uint8Array(org.replaces),
        sealKeyFingerprint: seal,
      }),
    };
  }

  // Written once for both engines: synchronous for as long as nothing it waits on is a promise.
  return (orgId) => runMaybe(announcement(orgId));
}

/**
 * The current seal key's fingerprint, read at every call (a seal rotation changes it; announcements
 * are built rarely): named in `service_meta`, or created when none is and the master key is there;
 * null otherwise.
 */
function currentSealFingerprint(deps: KeyAnnouncementsDeps): () => Generator<unknown, Uint8Array | null, unknown> {
  const { keys, signer, clock } = deps;
  return function* () {
    const named = yield* settled(keys.read(namedSealFingerprint));
    if (named !== null) return named;
    if (!signer.canSign) return null;
    return (yield* settled(sealKeyOf(keys, signer, clock))).fingerprint;
  };
}

/** What a person's announcement needs: a read operation. Undefined: no such person, or no key. */
function personKey(personId: string): Body<{ orgId: string; domain: string | null; key: Buffer; algorithm: string; replaces: Buffer | null } | undefined> {
  return function* (db, t) {
    const [p] = yield* q(
      db
        .select({ orgId: t.persons.orgId, domain: t.organisations.domain, key: t.persons.keyFingerprint, algorithm: t.signingKeys.algorithm, replaces: t.signingKeys.replaces })
        .from(t.persons)
        .innerJoin(t.organisations, eq(t.organisations.id, t.persons.orgId))
        .innerJoin(t.signingKeys, eq(t.signingKeys.fingerprint, t.persons.keyFingerprint))
        .where(eq(t.persons.id, personId)),
    );
    return p === undefined || p.key === null ? undefined : { ...p, key: p.key };
  };
}

/** A person's key announcement with the current seal key, or null when it cannot be built (see the module comment). */
export function createPersonKeyAnnouncements(deps: KeyAnnouncementsDeps): (personId: string) => Maybe<PersonKeyAnnouncement | null> {
  const sealKeyFingerprint = currentSealFingerprint(deps);
  function* announcement(personId: string): Generator<unknown, PersonKeyAnnouncement | null, unknown> {
    const person = yield* settled(deps.keys.read(personKey(personId)));
    if (person === undefined) return null;
    const seal = yield* sealKeyFingerprint();
    if (seal === null) return null;
    const keyFingerprint = new Uint8Array(person.key);
    return {
      orgId: person.orgId,
      keyFingerprint,
      sealFingerprint: seal,
      message: encodePersonKeyAnnouncementMessage({
        orgId: person.orgId,
        personId,
        domain: person.domain,
        algorithm: person.algorithm,
        keyFingerprint,
        replaces: person.replaces === null ? null : new Uint8Array(person.replaces),
        sealKeyFingerprint: seal,
      }),
    };
  }
  return (personId) => runMaybe(announcement(personId));
}
