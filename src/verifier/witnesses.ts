/**
 * Which mirror nodes a verifier asks, and how many independent witnesses they are
 * (docs/receipts.md, "Trust roots").
 *
 * - The list comes from the verifier, never from the receipt: the user's `--mirror`s, then the
 *   trust file's mirror nodes for the receipt's network, then the built-in ones for that network
 *   (unless the user turned those off). The receipt's own `mirrorNodes` are asked only when the
 *   user names them.
 * - Witnesses are hosts, not URLs: two ports of one server, two names of one address, or a
 *   redirect to another mirror are one witness. The command-line shells resolve each host name
 *   once, compare the addresses, and connect to the address they compared; the page, which
 *   cannot resolve names, compares host names (with `localhost` as the loopback address).
 */
import { normaliseMirrorUrl, type Network } from "./receipt.ts";
import { builtinMirrors, type TrustFile } from "./trust.ts";

export type MirrorSource = "--mirror" | "trust file" | "built-in";

export interface PlannedMirror {
  /** Normalised base URL. */
  readonly url: string;
  readonly source: MirrorSource;
}

/**
 * Where a host name leads: the addresses it resolves to (the first is the one connected to), or
 * a reason it does not resolve. The command-line shells use DNS (and `--connect-to`), the page
 * the name itself.
 */
export type HostResolver = (hostname: string, port: number) => Promise<{ readonly addresses: readonly string[] } | { readonly failed: string }>;

/** The mirror nodes to ask, in order, without duplicates. Throws TypeError for a malformed user URL. */
export function planMirrors(network: Network, user: readonly string[], trust: TrustFile | null, useBuiltin: boolean): PlannedMirror[] {
  const out: PlannedMirror[] = [];
  const add = (url: string, source: MirrorSource) => {
    const n = normaliseMirrorUrl(url);
    if (n === null) throw new TypeError(`not a mirror node URL: ${JSON.stringify(url)}`);
    if (!out.some((m) => m.url === n)) out.push({ url: n, source });
  };
  for (const u of user) add(u, "--mirror");
  for (const u of trust?.networks[network] ?? []) add(u, "trust file");
  if (useBuiltin) for (const u of builtinMirrors(network)) add(u, "built-in");
  return out;
}

/**
 * One spelling per address: lowercase, no brackets, an IPv6 address in the URL parser's compressed
 * form, an IPv4-mapped IPv6 address as IPv4. A URL's host `[::ffff:127.0.0.1]` reaches the parser as
 * `[::ffff:7f00:1]`, so both spellings of a mapped address are read.
 */
export function canonicalAddress(address: string): string {
  let a = address.toLowerCase().replace(/^\[|\]$/g, "");
  if (!a.includes(":")) return a;
  try {
    a = new URL(`http://[${a}]/`).hostname.slice(1, -1);
  } catch {
    return a; // not an IPv6 address (a zone id, or not an address at all): compared as written
  }
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(a);
  if (mapped === null) return a;
  const [hi, lo] = [parseInt(mapped[1]!, 16), parseInt(mapped[2]!, 16)];
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/**
 * The page's resolver: a browser cannot resolve names, so a host is its name, except the names
 * every browser sends to loopback (`localhost`, `*.localhost`: RFC 6761).
 */
export const nameResolver: HostResolver = async (hostname) => {
  // `mirror.example.` is `mirror.example`: the trailing dot only says the name is absolute.
  const h = canonicalAddress(hostname).replace(/(?<=.)\.$/, "");
  return { addresses: h === "localhost" || h.endsWith(".localhost") ? ["127.0.0.1", "::1"] : [h] };
};

export interface ResolvedMirror extends PlannedMirror {
  /** Canonical addresses (or, on the page, the host name); empty when it did not resolve. */
  readonly addresses: readonly string[];
  /** Why it did not resolve; null when it did. */
  readonly failed: string | null;
  /** The index of its host among the distinct hosts (mirrors sharing an address share it). */
  readonly host: number;
}

export function urlPort(url: URL): number {
  return url.port !== "" ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
}

/**
 * Resolves every mirror's host once and groups mirrors that share an address into one host.
 * A mirror that does not resolve is its own host (it fails when asked).
 */
export async function resolveWitnesses(mirrors: readonly PlannedMirror[], resolve: HostResolver): Promise<{ mirrors: ResolvedMirror[]; hosts: number }> {
  const resolved = await Promise.all(
    mirrors.map(async (m) => {
      const url = new URL(m.url);
      try {
        const r = await resolve(url.hostname, urlPort(url));
        if ("failed" in r) return { ...m, addresses: [] as string[], failed: r.failed };
        if (r.addresses.length === 0) return { ...m, addresses: [] as string[], failed: "resolves to no address" };
        return { ...m, addresses: r.addresses.map(canonicalAddress), failed: null };
      } catch (e) {
        return { ...m, addresses: [] as string[], failed: e instanceof Error ? e.message : String(e) };
      }
    }),
  );
  // Union-find over shared addresses.
  const parent = resolved.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
  const owner = new Map<string, number>();
  resolved.forEach((m, i) => {
    for (const a of m.addresses) {
      const j = owner.get(a);
      if (j === undefined) owner.set(a, i);
      else parent[find(i)] = find(j);
    }
  });
  const roots = new Map<number, number>();
  const out = resolved.map((m, i) => {
    const root = find(i);
    if (!roots.has(root)) roots.set(root, roots.size);
    return { ...m, host: roots.get(root)! };
  });
  return { mirrors: out, hosts: roots.size };
}
