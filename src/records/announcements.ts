/**
 * Key announcements (decisions §9, docs/receipts.md §1): the message that binds an organisation's
 * key, and its registered name, to its topic, built here for the anchor loop, which queues it
 * (anchoring/queue.ts) without knowing the message format or the seal key.
 *
 * What `announcementFor` guarantees:
 * - The message announces the organisation's current system key (`organisations.system_key_fingerprint`)
 *   with its algorithm from `signing_keys`, and the service seal key's fingerprint.
 * - The seal key is the one every record is sealed with: read from `service_meta`, or created as
 *   record creation creates it (`ensureSealKey`, race-safe across processes) when the master key
 *   is there. Without either it returns null, and the loop asks again at its next pass.
 * - Synchronous, and never called inside another transaction (ensureSealKey opens its own).
 */
import { eq } from "drizzle-orm";
import type { KeyAnnouncement } from "../anchoring/types.ts";
import type { Signer } from "../crypto/index.ts";
import type { Clock } from "../lib/clock.ts";
import type { Db } from "../storage/db.ts";
import { organisations, serviceMeta, signingKeys } from "../storage/schema.ts";
import { encodeKeyAnnouncementMessage } from "./messages.ts";
import { ensureSealKey, SEAL_KEY_META } from "./seal-key.ts";

export function createKeyAnnouncements(deps: { readonly db: Db; readonly signer: Signer; readonly clock: Clock }): (orgId: string) => KeyAnnouncement | null {
  const { db, signer, clock } = deps;
  // The seal key never changes once named: read (or created) once.
  let sealFingerprint: Uint8Array | null = null;

  const sealKeyFingerprint = (): Uint8Array | null => {
    if (sealFingerprint !== null) return sealFingerprint;
    const meta = db.select().from(serviceMeta).where(eq(serviceMeta.key, SEAL_KEY_META)).get();
    if (meta !== undefined) return (sealFingerprint = new Uint8Array(Buffer.from(meta.value, "hex")));
    if (!signer.canSign) return null;
    return (sealFingerprint = ensureSealKey({ db, signer, clock }).fingerprint);
  };

  return (orgId) => {
    const org = db
      .select({ name: organisations.name, key: organisations.systemKeyFingerprint, algorithm: signingKeys.algorithm })
      .from(organisations)
      .leftJoin(signingKeys, eq(signingKeys.fingerprint, organisations.systemKeyFingerprint))
      .where(eq(organisations.id, orgId))
      .get();
    if (org === undefined) return null;
    if (org.algorithm === null) throw new Error(`organisation ${orgId}'s system key ${Buffer.from(org.key).toString("hex")} is not in signing_keys`);
    const seal = sealKeyFingerprint();
    if (seal === null) return null;
    const keyFingerprint = new Uint8Array(org.key);
    return {
      keyFingerprint,
      message: encodeKeyAnnouncementMessage({ orgId, name: org.name, algorithm: org.algorithm, keyFingerprint, sealKeyFingerprint: seal }),
    };
  };
}
