/**
 * Where a request is routed from its path alone (docs/architecture.md, "HTTP"). Bun builds `request.url` from
 * the `Host` header: a malformed one (`a b`, `a/b`, empty, or none under HTTP/1.0) gives a bare
 * path, some give an absolute URL that `new URL` refuses (`a:b`, `999.1.1.1`), and Elysia finds
 * the path at the first `/` from index 11, which a host under four characters (`http://dv/`)
 * puts inside the path. Such requests are re-addressed to a fixed host with the same path,
 * query, method, headers, body and signal; nothing in the service reads the host from the URL.
 * Requests to an ordinary host pass through untouched, at the cost of one Map lookup.
 */
import type { NamedCache } from "../lib/lru.ts";

export interface Addresses {
  /** The request itself when its address is ordinary; otherwise the same request re-addressed to a fixed host. */
  routable(request: Request): Request;
  /** The authorities kept, for /metrics and the idle release. */
  readonly cache: NamedCache;
}

const REBASED_ORIGIN = "http://unknown-host.invalid";
/**
 * Authorities seen and whether URL parsing accepts them, bounded: a real service sees few. At most
 * AUTHORITIES_KEPT of at most MAX_KEPT_AUTHORITY characters (a DNS name and a port fit), so at most
 * about 100 KB; a longer one is checked every time.
 */
const AUTHORITIES_KEPT = 256;
const MAX_KEPT_AUTHORITY = 300;
/** An entry's bytes besides its characters (lib/lru.ts counts the same way: the map's share and the string's fixed part). */
const AUTHORITY_ENTRY_BYTES = 192 + 32;

export function createAddresses(): Addresses {
  const authorityOk = new Map<string, boolean>();
  let authorityBytes = 0;

  function plainAuthority(authority: string): boolean {
    let ok = authorityOk.get(authority);
    if (ok === undefined) {
      ok = /^[A-Za-z0-9.\-[\]:]+$/.test(authority) && URL.canParse(`http://${authority}/`);
      if (authorityOk.size < AUTHORITIES_KEPT && authority.length <= MAX_KEPT_AUTHORITY) {
        authorityOk.set(authority, ok);
        authorityBytes += AUTHORITY_ENTRY_BYTES + 2 * authority.length;
      }
    }
    return ok;
  }

  return {
    routable(request) {
      const url = request.url;
      const scheme = url.startsWith("http://") ? 7 : url.startsWith("https://") ? 8 : -1;
      let target: string;
      if (scheme < 0) {
        target = url.startsWith("/") ? url : "/";
      } else {
        const slash = url.indexOf("/", scheme);
        if (slash >= 11 && plainAuthority(url.slice(scheme, slash))) return request;
        target = slash < 0 ? "/" : url.slice(slash);
      }
      return new Request(REBASED_ORIGIN + target, request);
    },
    cache: {
      name: "http_authorities",
      stats: () => ({ entries: authorityOk.size, bytes: authorityBytes, maxBytes: AUTHORITIES_KEPT * (AUTHORITY_ENTRY_BYTES + 2 * MAX_KEPT_AUTHORITY) }),
      clear() {
        authorityOk.clear();
        authorityBytes = 0;
      },
    },
  };
}
