/**
 * What the verifier believes (docs/receipts.md, "Trust roots"): its built-in mirror nodes per
 * public network (trust-roots.json, one documented data file), and the trust file a user may give
 * (`--trust FILE`: mirror nodes per network, organisations pinned by topic and key).
 *
 * Nothing in a receipt is a trust root: its `mirrorNodes` are a hint, its network only chooses
 * which built-in list applies, and the names in its key announcement are claims (identity.ts).
 */
import roots from "./trust-roots.json" with { type: "json" };
import { ENTITY_RE, FieldFormatError, Fields, NETWORKS, normaliseMirrorUrl, UUID_RE, type Network } from "./receipt.ts";

/** The networks with a public operator: only these have built-in mirror nodes. */
export const PUBLIC_NETWORKS = ["mainnet", "testnet", "previewnet"] as const satisfies readonly Network[];

export const isPublicNetwork = (network: Network): boolean => (PUBLIC_NETWORKS as readonly string[]).includes(network);

/** The built-in mirror nodes of `network` (normalised); none for `local`, which has no public operator. */
export function builtinMirrors(network: Network): readonly string[] {
  const entry = (roots.networks as Record<string, { mirrors: string[] } | undefined>)[network];
  return entry === undefined ? [] : entry.mirrors.map((u) => normaliseMirrorUrl(u)!);
}

export class TrustFileError extends FieldFormatError {
  override readonly name = "TrustFileError";
}

/**
 * A pinned key and its window on the organisation's topic (docs/receipts.md §7). The window's
 * fields are optional: a trust file exported before keys had windows lists `algorithm` and
 * `fingerprint` alone, and pins the key for every place on the topic.
 */
export interface PinnedKey {
  readonly algorithm: "ML-DSA-65";
  /** docs/signing.md §2, 64 lowercase hex digits. */
  readonly fingerprint: string;
  /** Consensus time (`seconds.nanoseconds`) of the key's first announcement on the topic; null: not anchored, or not given. */
  readonly announcedAt: string | null;
  /** That announcement's sequence number. */
  readonly sequenceNumber: number | null;
  /** Consensus time of the announcement of the key that replaced it; null while it is in force. */
  readonly replacedAt: string | null;
  readonly replacedBySequenceNumber: number | null;
  /** RFC 3339 with milliseconds: declared compromised for records signed at or after it; null: not declared. */
  readonly compromisedSince: string | null;
}

export interface PinnedOrganisation {
  readonly orgId: string;
  readonly name: string;
  readonly domain: string | null;
  readonly network: Network;
  readonly topicId: string;
  readonly keys: readonly PinnedKey[];
}

export interface TrustFile {
  readonly v: 1;
  /** Where it came from (informational: the appliance's public URL). */
  readonly service: string | null;
  readonly exportedAt: string | null;
  /** Mirror nodes per network (normalised), asked like `--mirror`. */
  readonly networks: Readonly<Partial<Record<Network, readonly string[]>>>;
  readonly organisations: readonly PinnedOrganisation[];
}

const FINGERPRINT_RE = /^[0-9a-f]{64}$/;
const CONSENSUS_RE = /^\d{1,12}\.\d{9}$/;

/**
 * Whether a record at `sequenceNumber` on its topic lies outside the window `keys` (one
 * organisation's pinned or listed keys) give the key `fingerprint`: after the announcement of the
 * key that replaced it, or before its own announcement when it replaced another listed key (a key
 * that replaced none has no lower bound: on a topic older than announcements, records before the
 * first one are the first key's). The reason, or null when the record is inside it (or no window
 * is given).
 */
export function outsideWindow(keys: readonly Pick<PinnedKey, "fingerprint" | "sequenceNumber" | "replacedBySequenceNumber">[], fingerprint: string, sequenceNumber: number): string | null {
  const key = keys.find((k) => k.fingerprint === fingerprint);
  if (key === undefined) return null;
  if (key.replacedBySequenceNumber !== null && sequenceNumber > key.replacedBySequenceNumber) {
    return `this key was replaced by message #${key.replacedBySequenceNumber}, before the record's message #${sequenceNumber}`;
  }
  const start = key.sequenceNumber;
  if (start !== null && sequenceNumber < start && keys.some((k) => k !== key && k.replacedBySequenceNumber === start)) {
    return `this key was first announced by message #${start}, after the record's message #${sequenceNumber}, replacing another key in force there`;
  }
  return null;
}

/** A DNS host name as `docverify org set --domain` accepts it: lowercase LDH labels, at least two. */
export const DOMAIN_RE = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Parses a trust file's text strictly: a field it does not know is refused, as in a receipt. */
export function parseTrustFile(text: string): TrustFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new TrustFileError("", "not JSON");
  }
  const top = Fields.of(value, "", TrustFileError);
  const v = top.raw("v");
  if (v !== 1) throw new TrustFileError("v", `unsupported trust file version ${JSON.stringify(v) ?? "undefined"} (this verifier reads version 1)`);
  const service = top.has("service") ? top.nullable("service", (f, k) => f.string(k, /^https?:\/\/\S+$/, "an http(s) URL")) : null;
  const exportedAt = top.has("exportedAt") ? top.nullable("exportedAt", (f, k) => f.time(k)) : null;

  const networks: Partial<Record<Network, string[]>> = {};
  const nets = top.object("networks");
  for (const name of nets.keys()) {
    if (!(NETWORKS as readonly string[]).includes(name)) throw new TrustFileError(nets.name(name), `unknown network (one of ${NETWORKS.join(", ")})`);
    const entry = nets.object(name);
    networks[name as Network] = entry.array("mirrors", (u, path) => {
      const n = typeof u === "string" ? normaliseMirrorUrl(u) : null;
      if (n === null) throw new TrustFileError(path, "expected an http(s) URL without query, fragment or credentials");
      return n;
    });
    entry.done();
  }
  nets.done();

  const organisations = top.array("organisations", (item, path) => {
    const o = Fields.of(item, path, TrustFileError);
    const org: PinnedOrganisation = {
      orgId: o.string("orgId", UUID_RE, "a lowercase canonical UUID"),
      name: o.string("name", /^[^]{1,1000}$/, "a name"),
      domain: o.nullable("domain", (f, k) => f.string(k, DOMAIN_RE, "a lowercase DNS host name")),
      network: o.oneOf("network", NETWORKS),
      topicId: o.string("topicId", ENTITY_RE, "an entity id 0.0.N"),
      keys: o.array("keys", (k, kpath) => {
        const f = Fields.of(k, kpath, TrustFileError);
        const optional = <T>(name: string, read: (g: Fields, k: string) => T): T | null => (f.has(name) ? f.nullable(name, read) : null);
        const consensus = (g: Fields, k: string) => g.string(k, CONSENSUS_RE, "a consensus time seconds.nanoseconds (nine digits)");
        const key: PinnedKey = {
          algorithm: f.oneOf("algorithm", ["ML-DSA-65"] as const),
          fingerprint: f.string("fingerprint", FINGERPRINT_RE, "64 lowercase hex digits"),
          announcedAt: optional("announcedAt", consensus),
          sequenceNumber: optional("sequenceNumber", (g, k) => g.integer(k)),
          replacedAt: optional("replacedAt", consensus),
          replacedBySequenceNumber: optional("replacedBySequenceNumber", (g, k) => g.integer(k)),
          compromisedSince: optional("compromisedSince", (g, k) => g.time(k)),
        };
        f.done();
        if (key.sequenceNumber !== null && key.replacedBySequenceNumber !== null && key.replacedBySequenceNumber <= key.sequenceNumber) {
          throw new TrustFileError(`${kpath}.replacedBySequenceNumber`, "expected a sequence number after the key's own announcement");
        }
        return key;
      }),
    };
    if (org.keys.length === 0) throw new TrustFileError(`${path}.keys`, "expected at least one key");
    o.done();
    return org;
  });
  top.done();
  return { v: 1, service, exportedAt, networks, organisations };
}
