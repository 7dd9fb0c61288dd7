/**
 * The service seal key's rotation (`docverify seal rotate-key`, docs/signing.md "Key lifecycle").
 *
 * What a rotation guarantees:
 * - One transaction: the new seal key's row (`replaces` = the old one), the old key's
 *   `retired_at`, `service_meta` naming the new key, every organisation with a topic's
 *   announcement generation raised (its key is announced again, with the new seal key, as after a
 *   domain change), and the audit row. From its commit every new record is sealed with the new key
 *   (record writers check the seal key under the write lock: create.ts); their messages wait for
 *   their signer key's announcement naming the new seal key, which the anchor loop queues only
 *   once the signer's messages sealed with the old key have settled (docs/anchoring.md "Key
 *   announcements"). Persons' keys are announced again likewise (the loop's person scan).
 * - Refused (SealRotationRefused), nothing changed: the key store sealed (no master key: the new
 *   key cannot be made); no seal key yet (made with the first record); while some organisation's
 *   or person's current key is not announced and anchored with the current seal key on its topic
 *   (the previous rotation, of the seal or of that key, still under way: a third announcement
 *   would overtake the messages it waits for); while any key announcement is unfinished (it names
 *   the current seal key, and landing after the new one it would end the new pair's window).
 * - The new key is generated before the transaction (it needs the master key).
 */
import { and, eq, inArray, isNotNull, notExists } from "drizzle-orm";
import type { Signer } from "../crypto/index.ts";
import type { Clock } from "../lib/clock.ts";
import { OpsError } from "../lib/errors.ts";
import { insertSigningKey } from "../storage/signing-keys.ts";
import { q, type Op, type Store, type StoreDb, type Tables } from "../storage/store.ts";
import { SEAL_KEY_META, SEAL_KEY_PURPOSE } from "./seal-key.ts";

/** A seal rotation refused: the message says why and what to do; nothing was changed. */
export class SealRotationRefused extends OpsError {}

export interface SealRotation {
  /** The new seal key, 64 lowercase hex. */
  readonly keyFingerprint: string;
  /** The seal key it replaced, 64 lowercase hex. */
  readonly replaces: string;
  /** When (ms). */
  readonly at: number;
  /** How many organisations' topics get the new seal key announced (those with a topic). */
  readonly organisations: number;
}

/** The audit row a rotation writes, in its transaction (keys/audit.ts, given by the caller). */
export type SealAudit = (tx: StoreDb, t: Tables, at: number, entry: { before: unknown; after: unknown }) => Op<void>;

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

/** Inside a write: refuses while some organisation's or person's current key lacks an anchored announcement with the seal key `seal`. */
function* refuseWhileUnannounced(tx: StoreDb, t: Tables, seal: Buffer): Op<void> {
  const lt = t.ledgerTransactions;
  const o = t.organisations;
  const p = t.persons;
  const announced = (key: typeof o.systemKeyFingerprint | typeof p.keyFingerprint, orgId: typeof o.id | typeof p.orgId) =>
    tx
      .select({ id: lt.transactionId })
      .from(lt)
      .where(and(eq(lt.orgId, orgId), eq(lt.keyFingerprint, key), eq(lt.kind, "key_announcement"), eq(lt.state, "anchored"), eq(lt.sealFingerprint, seal)));
  const [org] = yield* q(tx.select({ id: o.id }).from(o).where(and(isNotNull(o.topicId), notExists(announced(o.systemKeyFingerprint, o.id)))).limit(1));
  const [person] =
    org === undefined
      ? yield* q(
          tx
            .select({ id: p.id })
            .from(p)
            .innerJoin(o, eq(o.id, p.orgId))
            .where(and(isNotNull(o.topicId), isNotNull(p.keyFingerprint), notExists(announced(p.keyFingerprint, p.orgId))))
            .limit(1),
        )
      : [undefined];
  // An announcement still on its way names the current seal key: landing after the new one, it
  // would end the new pair's window.
  const [unfinished] =
    org === undefined && person === undefined
      ? yield* q(tx.select({ orgId: lt.orgId }).from(lt).where(and(eq(lt.kind, "key_announcement"), inArray(lt.state, ["pending", "accepted"]))).limit(1))
      : [undefined];
  const waiting =
    org !== undefined
      ? `organisation ${org.id}'s key is not announced with the current seal key ${hex(seal)} on its topic yet`
      : person !== undefined
        ? `person ${person.id}'s key is not announced with the current seal key ${hex(seal)} on its topic yet`
        : unfinished !== undefined
          ? `a key announcement on organisation ${unfinished.orgId}'s topic is not anchored yet`
          : null;
  if (waiting === null) return;
  throw new SealRotationRefused(
    `${waiting} (a previous rotation, a new organisation or person, or a change of name or domain ` +
      "is still under way: its announcement waits for older record messages to settle, then for consensus; usually seconds while serve runs). " +
      "Nothing was changed; try again once it is anchored (docverify status shows the anchor queue).",
  );
}

export function createSealRotation(deps: { store: Store; signer: Signer; clock: Clock; audit: SealAudit }) {
  const { store, signer, clock, audit } = deps;
  return {
    /** Replaces the service seal key (see the header). SealRotationRefused. */
    async rotate(): Promise<SealRotation> {
      if (!signer.canSign) {
        throw new SealRotationRefused("the key store is sealed: the master key is not available, so no new seal key can be made. Nothing was changed.");
      }
      const next = signer.generateKey(SEAL_KEY_PURPOSE);
      const at = clock.now();
      return store.write(function* (tx, t) {
        const [meta] = yield* q(tx.select({ value: t.serviceMeta.value }).from(t.serviceMeta).where(eq(t.serviceMeta.key, SEAL_KEY_META)));
        if (meta === undefined) throw new SealRotationRefused("this installation has no seal key yet (it is made with the first record): nothing to rotate. Nothing was changed.");
        const old = Buffer.from(meta.value, "hex");
        yield* refuseWhileUnannounced(tx, t, old);
        yield* insertSigningKey(tx, t, next, at, old);
        yield* q(tx.update(t.signingKeys).set({ retiredAt: at }).where(eq(t.signingKeys.fingerprint, old)));
        yield* q(tx.update(t.serviceMeta).set({ value: hex(next.fingerprint) }).where(eq(t.serviceMeta.key, SEAL_KEY_META)));
        const o = t.organisations;
        const withTopic = yield* q(tx.select({ id: o.id, generation: o.announcementGeneration }).from(o).where(isNotNull(o.topicId)));
        for (const org of withTopic) {
          yield* q(tx.update(o).set({ announcementGeneration: Number(org.generation) + 1 }).where(eq(o.id, org.id)));
        }
        const rotation: SealRotation = { keyFingerprint: hex(next.fingerprint), replaces: meta.value, at, organisations: withTopic.length };
        yield* audit(tx, t, at, { before: { keyFingerprint: meta.value }, after: { keyFingerprint: rotation.keyFingerprint, replaces: meta.value } });
        return rotation;
      });
    },
  };
}

export type SealRotations = ReturnType<typeof createSealRotation>;
