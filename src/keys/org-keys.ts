/**
 * An organisation's system key over its life (docs/signing.md "Key lifecycle"): rotation, and a
 * declared compromise. Administrators' operations on the local machine, part of `Organisations`
 * (organisations.ts).
 *
 * What these guarantee:
 * - A rotation is one transaction: the new key's row (`replaces` = the old key), the old key's
 *   `retired_at`, the organisation's `system_key_fingerprint` switched, and the audit row. From its
 *   commit every new record is signed with the new key; its record messages wait in the anchor
 *   journal for the new key's announcement, which the anchor loop queues (with `replaces`) only
 *   once every record message of an older key has settled (docs/anchoring.md "Key announcements"),
 *   so no message lands outside its key's window.
 * - A rotation while the organisation's current key has not had its own announcement anchored
 *   yet is refused (KeyLifecycleRefused), nothing changed, when that key replaced another (the
 *   previous rotation is still under way: the older messages it waits for would otherwise be
 *   overtaken by a third key's announcement), after a seal key rotation while its key's
 *   announcement naming the new seal key is not anchored, while an announcement of its current
 *   key is unfinished (a change of name or domain), or when record messages signed with it are
 *   waiting (only the current key is ever announced: once replaced, those messages would wait
 *   for an announcement that never comes, and be abandoned). A first key that signed nothing yet
 *   may be replaced before it is announced.
 * - A compromise is one transaction too: `compromised_since` and `compromised_at` on the key, the
 *   rotation above when the key is the organisation's current one, and the audit row. The anchor
 *   loop queues the one `key_compromise` message per key (the unique index
 *   `ledger_transactions_one_compromise`); verification treats the key's records signed at or after
 *   `since` as revoked (KEY_COMPROMISE) from the commit on. Refused, nothing changed: a time in the
 *   future, a key that is not the organisation's, a key already declared compromised.
 * - The new key is generated before the transaction (it needs the master key; without it 503
 *   before anything is written).
 */
import { and, eq, inArray, isNull, or } from "drizzle-orm";
import type { Signer } from "../crypto/index.ts";
import type { Clock } from "../lib/clock.ts";
import { DomainError, OpsError, invalid } from "../lib/errors.ts";
import { rfc3339Ms } from "../lib/formats.ts";
import { hasAnchoredAnnouncement, insertSigningKey } from "../storage/signing-keys.ts";
import { q, type Op, type Store, type StoreDb, type Tables } from "../storage/store.ts";
import { audit } from "./audit.ts";

/** A key operation refused: the message says why and what to do; nothing was changed. */
export class KeyLifecycleRefused extends OpsError {}

export interface KeyRotation {
  readonly orgId: string;
  /** The key that replaced it, 64 lowercase hex. */
  readonly keyFingerprint: string;
  /** The key it replaced, 64 lowercase hex. */
  readonly replaces: string;
  /** When (ms). */
  readonly at: number;
}

export interface KeyCompromise {
  readonly orgId: string;
  /** The compromised key, 64 lowercase hex. */
  readonly keyFingerprint: string;
  readonly sinceMs: number;
  /** When it was declared (ms). */
  readonly at: number;
  /** The rotation it made, when the key was the organisation's current one; else null. */
  readonly rotation: KeyRotation | null;
}

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

/** One of an organisation's or a person's keys, as the administrator's screens show it. */
export interface KeyInfo {
  /** 64 lowercase hex. */
  readonly fingerprint: string;
  /** The key it replaced, or null. */
  readonly replaces: string | null;
  readonly createdAt: number;
  /** When a newer key replaced it, or null: the current one. */
  readonly retiredAt: number | null;
  /** Declared compromised: for what it signed at or after `since`, at `at`; or null. */
  readonly compromise: { readonly sinceMs: number; readonly at: number } | null;
}

/** The keys stored with `purpose` (`org:<id>`, `person:<id>`), newest first: a read operation. */
export function* keysOf(db: StoreDb, t: Tables, purpose: string): Op<KeyInfo[]> {
  const sk = t.signingKeys;
  const rows = yield* q(
    db
      .select({ fingerprint: sk.fingerprint, replaces: sk.replaces, createdAt: sk.createdAt, retiredAt: sk.retiredAt, since: sk.compromisedSince, at: sk.compromisedAt })
      .from(sk)
      .where(eq(sk.purpose, purpose)),
  );
  return rows
    .map((r) => ({
      fingerprint: hex(r.fingerprint),
      replaces: r.replaces === null ? null : hex(r.replaces),
      createdAt: Number(r.createdAt),
      retiredAt: r.retiredAt === null ? null : Number(r.retiredAt),
      compromise: r.since === null || r.at === null ? null : { sinceMs: Number(r.since), at: Number(r.at) },
    }))
    .sort((a, b) => b.createdAt - a.createdAt || (a.retiredAt === null ? -1 : b.retiredAt === null ? 1 : b.retiredAt - a.retiredAt));
}

/** Inside a write: the audit row of `key` declared compromised (an organisation's or a person's). */
export function* auditCompromise(
  tx: StoreDb,
  t: Tables,
  c: { readonly key: Uint8Array; readonly sinceMs: number; readonly at: number; readonly actor: string; readonly subjectType: "organisation" | "person"; readonly subjectId: string },
): Op<void> {
  yield* audit(tx, t, c.at, {
    actor: c.actor,
    action: `${c.subjectType}.key.compromised`,
    subjectType: c.subjectType,
    subjectId: c.subjectId,
    before: { keyFingerprint: hex(c.key), compromisedSince: null },
    after: { keyFingerprint: hex(c.key), compromisedSince: rfc3339Ms(c.sinceMs), compromisedAt: rfc3339Ms(c.at) },
  });
}

/** Inside a write: the organisation, or NOT_FOUND. */
function* organisationIn(tx: StoreDb, t: Tables, orgId: string) {
  const [org] = yield* q(
    tx.select({ id: t.organisations.id, topicId: t.organisations.topicId, key: t.organisations.systemKeyFingerprint }).from(t.organisations).where(eq(t.organisations.id, orgId)),
  );
  if (org === undefined) throw new DomainError("NOT_FOUND", `No organisation ${orgId}.`);
  return org;
}

/**
 * Inside a write: refuses while the organisation's current key replaced another and its own
 * announcement is not anchored on the organisation's topic yet (see the header).
 */
function* refuseWhileRotating(tx: StoreDb, t: Tables, org: { id: string; topicId: string | null; key: Buffer }): Op<void> {
  if (org.topicId === null) return; // nothing is announced, nothing waits
  const [current] = yield* q(tx.select({ replaces: t.signingKeys.replaces }).from(t.signingKeys).where(eq(t.signingKeys.fingerprint, org.key)));
  // After a seal rotation the key's announcement naming the new seal key is awaited likewise.
  const sk = t.signingKeys;
  const [seal] = yield* q(tx.select({ fingerprint: sk.fingerprint, replaces: sk.replaces }).from(sk).where(and(eq(sk.purpose, "service-seal"), isNull(sk.retiredAt))));
  const sealRotated = seal !== undefined && seal.replaces !== null;
  const lt = t.ledgerTransactions;
  // An announcement of the organisation still on its way (a change of name or domain, say) names
  // the current key: landing after the new key's, it would end the new key's window.
  const [unfinished] = yield* q(
    tx
      .select({ id: lt.transactionId })
      .from(lt)
      .where(and(eq(lt.orgId, org.id), eq(lt.kind, "key_announcement"), inArray(lt.state, ["pending", "accepted"]), eq(lt.keyFingerprint, org.key)))
      .limit(1),
  );
  const firstKey = unfinished === undefined && (current === undefined || current.replaces === null) && !sealRotated;
  const anchored = yield* hasAnchoredAnnouncement(tx, t, { orgId: org.id, key: org.key, ...(sealRotated ? { seal: seal.fingerprint } : {}) });
  if (anchored && unfinished === undefined) return;
  if (firstKey) {
    // Record messages signed with it (rows from before messages named their key count as its own).
    const [waiting] = yield* q(
      tx
        .select({ id: lt.transactionId })
        .from(lt)
        .where(and(eq(lt.orgId, org.id), eq(lt.kind, "record_message"), inArray(lt.state, ["pending", "accepted"]), or(eq(lt.keyFingerprint, org.key), isNull(lt.keyFingerprint))))
        .limit(1),
    );
    if (waiting === undefined) return;
    throw new KeyLifecycleRefused(
      `organisation ${org.id}'s key ${hex(org.key)} is not announced on the ledger yet, and record messages signed with it are waiting for that announcement ` +
        "(serve queues it as soon as it runs: usually seconds). Nothing was changed; try again once it is anchored (docverify status shows the anchor queue).",
    );
  }
  throw new KeyLifecycleRefused(
    unfinished !== undefined && anchored
      ? `organisation ${org.id}'s key ${hex(org.key)} has an announcement on its way to the ledger (a change of name or domain), which must land first. ` +
        "Nothing was changed; try again once it is anchored (usually seconds while serve runs; docverify status shows the anchor queue)."
      : `organisation ${org.id}'s previous key rotation is still under way: its key ${hex(org.key)} is not announced on the ledger yet ` +
        "(the announcement waits for the older key's record messages to settle, then for consensus: usually seconds while serve runs). " +
        "Nothing was changed; try again once it is anchored (docverify status shows the anchor queue).",
  );
}

/** Inside a write: the rotation of `org`'s key to `next` at `at`, with its audit row. */
function* rotateIn(tx: StoreDb, t: Tables, org: { id: string; key: Buffer }, next: Parameters<typeof insertSigningKey>[2], at: number, actor: string, action: string): Op<KeyRotation> {
  const rotation: KeyRotation = { orgId: org.id, keyFingerprint: hex(next.fingerprint), replaces: hex(org.key), at };
  yield* insertSigningKey(tx, t, next, at, org.key);
  yield* q(tx.update(t.signingKeys).set({ retiredAt: at }).where(eq(t.signingKeys.fingerprint, org.key)));
  yield* q(tx.update(t.organisations).set({ systemKeyFingerprint: Buffer.from(next.fingerprint) }).where(eq(t.organisations.id, org.id)));
  yield* audit(tx, t, at, {
    actor,
    action,
    subjectType: "organisation",
    subjectId: org.id,
    before: { keyFingerprint: rotation.replaces },
    after: { keyFingerprint: rotation.keyFingerprint, replaces: rotation.replaces },
  });
  return rotation;
}

export function createOrgKeys(deps: { store: Store; signer: Signer; clock: Clock }) {
  const { store, signer, clock } = deps;

  return {
    /** Organisation `orgId`'s system keys, newest first (the current one is the one not retired). */
    keys(orgId: string): Promise<KeyInfo[]> {
      return store.read((db, t) => keysOf(db, t, `org:${orgId}`));
    },

    /** Gives organisation `orgId` a new system key (see the header). NOT_FOUND, or KeyLifecycleRefused. */
    async rotateKey(orgId: string, actor: string): Promise<KeyRotation> {
      const next = signer.generateKey(`org:${orgId}`);
      const at = clock.now();
      return store.write(function* (tx, t) {
        const org = yield* organisationIn(tx, t, orgId);
        yield* refuseWhileRotating(tx, t, org);
        return yield* rotateIn(tx, t, org, next, at, actor, "organisation.key.rotate");
      });
    },

    /**
     * Declares one of organisation `orgId`'s keys (default: its current one) compromised for every
     * record it signed at or after `sinceMs` (see the header). VALIDATION_FAILED for a time in the
     * future; NOT_FOUND; KeyLifecycleRefused.
     */
    async declareKeyCompromised(orgId: string, input: { readonly sinceMs: number; readonly keyFingerprint?: Uint8Array }, actor: string): Promise<KeyCompromise> {
      const at = clock.now();
      if (!Number.isSafeInteger(input.sinceMs) || input.sinceMs < 0) throw invalid("since", "must be a time");
      if (input.sinceMs > at) throw invalid("since", `${rfc3339Ms(input.sinceMs)} is in the future: a compromise is declared for what has been signed`);
      const asked = input.keyFingerprint;
      // Generated only if the key is the current one (read first; checked again in the write).
      const current = await store.read(function* (db, t) {
        const [org] = yield* q(db.select({ key: t.organisations.systemKeyFingerprint }).from(t.organisations).where(eq(t.organisations.id, orgId)));
        return org === undefined ? undefined : Buffer.from(org.key);
      });
      const rotates = current !== undefined && (asked === undefined || Buffer.from(asked).equals(current));
      const next = rotates ? signer.generateKey(`org:${orgId}`) : null;
      return store.write(function* (tx, t) {
        const org = yield* organisationIn(tx, t, orgId);
        const key = asked === undefined ? org.key : Buffer.from(asked);
        const [row] = yield* q(
          tx.select({ purpose: t.signingKeys.purpose, compromisedAt: t.signingKeys.compromisedAt }).from(t.signingKeys).where(eq(t.signingKeys.fingerprint, key)),
        );
        if (row === undefined || row.purpose !== `org:${orgId}`) throw new KeyLifecycleRefused(`key ${hex(key)} is not one of organisation ${orgId}'s keys; nothing was changed`);
        if (row.compromisedAt !== null) {
          throw new KeyLifecycleRefused(`key ${hex(key)} was already declared compromised at ${rfc3339Ms(row.compromisedAt)}; nothing was changed`);
        }
        const isCurrent = key.equals(org.key);
        if (isCurrent && next === null) throw new KeyLifecycleRefused(`organisation ${orgId}'s key changed meanwhile; nothing was changed: try again`);
        if (isCurrent) yield* refuseWhileRotating(tx, t, org);
        yield* q(tx.update(t.signingKeys).set({ compromisedSince: input.sinceMs, compromisedAt: at }).where(eq(t.signingKeys.fingerprint, key)));
        const rotation = isCurrent ? yield* rotateIn(tx, t, org, next!, at, actor, "organisation.key.rotate") : null;
        yield* auditCompromise(tx, t, { key, sinceMs: input.sinceMs, at, actor, subjectType: "organisation", subjectId: orgId });
        return { orgId, keyFingerprint: hex(key), sinceMs: input.sinceMs, at, rotation };
      });
    },
  };
}

export type OrgKeys = ReturnType<typeof createOrgKeys>;
