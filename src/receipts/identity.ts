/**
 * `/.well-known/docverify.json` (docs/receipts.md §5, decisions §9): for every organisation with a
 * ledger topic, its registered name, network, topic and key fingerprints, and the service's seal
 * keys. A verifier who trusts this service's web address (TLS) binds an organisation's name to its
 * topic here; the receipt itself never carries a name.
 *
 * Reads only, per request: a topic or an announcement may appear at any moment.
 */
import type { LedgerNetwork } from "../config/index.ts";
import { compareConsensus } from "../lib/formats.ts";
import type { Db } from "../storage/db.ts";

export const IDENTITY_VERSION = 1;

export interface IdentityKey {
  readonly algorithm: string;
  /** The key's fingerprint (docs/signing.md §2), 64 lowercase hex digits. */
  readonly fingerprint: string;
  /** Consensus time of the key's announcement on the topic (`seconds.nanoseconds`), null until then. */
  readonly announcedAt: string | null;
}

export interface IdentityOrganisation {
  readonly orgId: string;
  readonly name: string;
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
  readonly db: Db;
  readonly network: LedgerNetwork;
  /** Read per request: known only once the listener is bound when the port is 0. */
  readonly publicUrl: () => string;
}

interface OrgRow {
  readonly id: string;
  readonly name: string;
  readonly topic_id: string;
  readonly system_key_fingerprint: Uint8Array;
}
interface KeyRow {
  readonly fingerprint: Uint8Array;
  readonly algorithm: string;
  /** Consensus time of its announcement on the organisation's topic; null when none has reached it. */
  readonly announced_at: string | null;
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");

export function createIdentity(deps: IdentityDeps): { identity(): Identity } {
  const { db, network } = deps;
  const client = db.$client;
  // By name (binary collation: by UTF-8 bytes, the same on every platform), then id.
  const orgs = client.prepare<OrgRow, []>("SELECT id, name, topic_id, system_key_fingerprint FROM organisations WHERE topic_id IS NOT NULL ORDER BY name, id");
  // The organisation's system key and every key announced for it that could still land: each
  // with its announcement's consensus time on the organisation's topic, when there is one.
  const keysOf = client.prepare<KeyRow, [string, string, Uint8Array]>(
    `SELECT k.fingerprint, k.algorithm,
       (SELECT a.consensus_at FROM ledger_transactions a
         WHERE a.org_id = ?1 AND a.key_fingerprint = k.fingerprint AND a.kind = 'key_announcement' AND a.state = 'anchored' AND a.topic_id = ?2) AS announced_at
     FROM signing_keys k
     WHERE k.fingerprint = ?3
        OR k.fingerprint IN (SELECT key_fingerprint FROM ledger_transactions WHERE org_id = ?1 AND kind = 'key_announcement' AND state <> 'abandoned')`,
  );
  const sealKeys = client.prepare<{ fingerprint: Uint8Array; algorithm: string }, []>(
    "SELECT fingerprint, algorithm FROM signing_keys WHERE purpose = 'service-seal' ORDER BY created_at, fingerprint",
  );

  return {
    identity() {
      return {
        v: IDENTITY_VERSION,
        service: deps.publicUrl().replace(/\/+$/, ""),
        organisations: orgs.all().map((o) => ({
          orgId: o.id,
          name: o.name,
          network,
          topicId: o.topic_id,
          keys: keysOf
            .all(o.id, o.topic_id, o.system_key_fingerprint)
            .map((k) => ({ algorithm: k.algorithm, fingerprint: hex(k.fingerprint), announcedAt: k.announced_at }))
            .sort(byAnnouncement),
        })),
        sealKeys: sealKeys.all().map((k) => ({ algorithm: k.algorithm, fingerprint: hex(k.fingerprint) })),
      };
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
