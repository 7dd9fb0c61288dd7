/**
 * `/.well-known/docverify.json` (docs/receipts.md §5): for every organisation
 * with a ledger topic, its registered name, domain, network, topic and key fingerprints, and the
 * service's seal keys. A verifier who trusts this service's web address (TLS) binds an organisation's name to its
 * topic here; the receipt itself never carries a name.
 *
 * Reads only, per request: a topic or an announcement may appear at any moment.
 */
import type { LedgerNetwork } from "../config/index.ts";
import { compareConsensus } from "../lib/formats.ts";
import { rfc3339Ms } from "../lib/formats.ts";
import { ORG_KEY_WINDOWS } from "../storage/receipt-statements.ts";
import { ORGS_WITH_TOPIC, SEAL_KEYS } from "../storage/statements.ts";
import { q, rows, type Store } from "../storage/store.ts";

export const IDENTITY_VERSION = 1;

export interface IdentityKey {
  readonly algorithm: string;
  /** The key's fingerprint (docs/signing.md §2), 64 lowercase hex digits. */
  readonly fingerprint: string;
  /** Consensus time of the key's first announcement on the topic (`seconds.nanoseconds`), null until then. */
  readonly announcedAt: string | null;
  /** That announcement's sequence number on the topic: where the key's window starts. */
  readonly sequenceNumber: number | null;
  /** Present once a key that replaced it was announced on the topic: that announcement's consensus time, where the window ends. */
  readonly replacedAt?: string;
  readonly replacedBySequenceNumber?: number;
  /** Present once the key was declared compromised: records it signed at or after this time (RFC 3339, milliseconds) are revoked. */
  readonly compromisedSince?: string;
}

export interface IdentityOrganisation {
  readonly orgId: string;
  readonly name: string;
  /** The domain the administrator set (docs/admin.md "The organisation's domain"), or null. */
  readonly domain: string | null;
  readonly network: LedgerNetwork;
  readonly topicId: string;
  readonly keys: readonly IdentityKey[];
}

export interface Identity {
  readonly v: typeof IDENTITY_VERSION;
  /** The service's public URL (DOCVERIFY_PUBLIC_URL), without a trailing slash. */
  readonly service: string;
  readonly organisations: readonly IdentityOrganisation[];
  readonly sealKeys: readonly { readonly algorithm: string; readonly fingerprint: string }[];
}

export interface IdentityDeps {
  /** The database, on either engine (storage/store.ts). */
  readonly store: Store;
  readonly network: LedgerNetwork;
  /** Read per request: known only once the listener is bound when the port is 0. */
  readonly publicUrl: () => string;
}


const hex = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");

export function createIdentity(deps: IdentityDeps): { identity(): Promise<Identity> } {
  const { store, network } = deps;
  return {
    identity() {
      return store.read(function* () {
        const orgs = yield* q(rows(ORGS_WITH_TOPIC));
        const organisations: IdentityOrganisation[] = [];
        for (const o of orgs) {
          const keys = yield* q(rows(ORG_KEY_WINDOWS, o.id, o.topic_id, o.system_key_fingerprint));
          organisations.push({
            orgId: o.id,
            name: o.name,
            domain: o.domain,
            network,
            topicId: o.topic_id,
            keys: keys
              .map((k) => ({
                algorithm: k.algorithm,
                fingerprint: hex(k.fingerprint),
                announcedAt: k.announced_at,
                sequenceNumber: k.sequence_number,
                ...(k.replaced_at === null || k.replaced_by_sequence_number === null ? {} : { replacedAt: k.replaced_at, replacedBySequenceNumber: k.replaced_by_sequence_number }),
                ...(k.compromised_since === null ? {} : { compromisedSince: rfc3339Ms(k.compromised_since) }),
              }))
              .sort(byAnnouncement),
          });
        }
        const seals = yield* q(rows(SEAL_KEYS));
        return {
          v: IDENTITY_VERSION,
          service: deps.publicUrl().replace(/\/+$/, ""),
          organisations,
          sealKeys: seals.map((k) => ({ algorithm: k.algorithm, fingerprint: hex(k.fingerprint) })),
        };
      });
    },
  };
}

/** Announced keys in the order the ledger announced them, then keys not announced yet; ties by fingerprint. */
function byAnnouncement(a: IdentityKey, b: IdentityKey): number {
  if (a.announcedAt !== null && b.announcedAt !== null) {
    const c = compareConsensus(a.announcedAt, b.announcedAt);
    if (c !== 0) return c;
  } else if (a.announcedAt !== b.announcedAt) {
    return a.announcedAt === null ? 1 : -1;
  }
  return a.fingerprint < b.fingerprint ? -1 : a.fingerprint > b.fingerprint ? 1 : 0;
}
