/**
 * The places a receipt verifier confirms an organisation's identity from, on loopback for tests:
 * an HTTPS server for `https://DOMAIN/.well-known/docverify.json` (a certificate from test-ca.ts,
 * `Access-Control-Allow-Origin: *` as the appliance's own route sends it, so the verifier's page can
 * read it from a file), the DNS server of dns-server.ts for `_docverify.DOMAIN` TXT records, and a
 * CORS front for the fake mirror nodes of test/verifier/fixtures.ts, which the page can then read
 * too. Each stops at cleanup.
 */
import { onCleanup } from "./env.ts";
import { nextLoopback } from "./loopback.ts";
import type { ServerCertificate } from "./test-ca.ts";

export { startDnsServer, type DnsServer } from "./dns-server.ts";

export const WELL_KNOWN = "/.well-known/docverify.json";

const CORS = { "access-control-allow-origin": "*" } as const;

export interface IdentityServer {
  /** The loopback address it listens on. */
  readonly address: string;
  readonly port: number;
  /** What GET /.well-known/docverify.json answers (JSON); a test replaces it as it goes. */
  document: unknown;
  /** Paths requested, in order: a TLS handshake that failed never gets here. */
  readonly requests: string[];
  stop(): void;
}

/** An HTTPS server presenting `certificate`, answering the well-known document with CORS, 404 for anything else. */
export function startIdentityServer(certificate: ServerCertificate, document: unknown = { v: 1, organisations: [] }): IdentityServer {
  const address = "127.0.0.1";
  const state = { document, requests: [] as string[] };
  const server = Bun.serve({
    hostname: address,
    port: 0,
    tls: { key: certificate.key, cert: certificate.cert },
    fetch: (req) => {
      const url = new URL(req.url);
      state.requests.push(url.pathname);
      if (req.method === "OPTIONS") return new Response(null, { status: 204, headers: { ...CORS, "access-control-allow-methods": "GET", "access-control-allow-headers": "*" } });
      if (req.method === "GET" && url.pathname === WELL_KNOWN) return Response.json(state.document, { headers: CORS });
      return new Response("not found", { status: 404, headers: CORS });
    },
  });
  const stop = () => server.stop(true);
  onCleanup(stop);
  return {
    address,
    port: server.port!,
    get document() {
      return state.document;
    },
    set document(d: unknown) {
      state.document = d;
    },
    requests: state.requests,
    stop,
  };
}

export interface ListedOrganisation {
  readonly orgId: string;
  readonly name: string;
  readonly domain: string | null;
  readonly network: string;
  readonly topicId: string;
  readonly fingerprints: readonly string[];
}

/** A /.well-known/docverify.json as the appliance writes it, listing `organisations`. */
export function identityDocument(organisations: readonly ListedOrganisation[]): unknown {
  return {
    v: 1,
    service: "https://acme.test",
    organisations: organisations.map((o) => ({
      orgId: o.orgId,
      name: o.name,
      domain: o.domain,
      network: o.network,
      topicId: o.topicId,
      keys: o.fingerprints.map((fingerprint) => ({ algorithm: "ML-DSA-65", fingerprint, announcedAt: "1768469400.000000008" })),
    })),
    sealKeys: [],
  };
}

/** The TXT record that names a topic: `v=docverify1; network=NAME; topic=0.0.N`. */
export const docverifyTxt = (network: string, topicId: string): string[] => [`v=docverify1; network=${network}; topic=${topicId}`];

/** A loopback port where nothing listens (one just released): a server that is down. */
export function deadPort(): number {
  const s = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  const port = s.port!;
  s.stop(true);
  return port;
}

/**
 * `target` (an http base URL) behind a front of its own loopback address that adds
 * `Access-Control-Allow-Origin: *` to every answer, so a page from a file can read it. Two fronts
 * are two hosts, like the mirrors behind them. Returns the front's base URL.
 */
export function withCors(target: string): string {
  const hostname = nextLoopback();
  const server = Bun.serve({
    hostname,
    port: 0,
    fetch: async (req) => {
      const url = new URL(req.url);
      if (req.method === "OPTIONS") return new Response(null, { status: 204, headers: { ...CORS, "access-control-allow-methods": "GET", "access-control-allow-headers": "*" } });
      const res = await fetch(`${target}${url.pathname}${url.search}`, { headers: { accept: req.headers.get("accept") ?? "*/*" }, redirect: "manual" });
      const headers = new Headers(CORS);
      for (const h of ["content-type", "location"]) {
        const v = res.headers.get(h);
        if (v !== null) headers.set(h, v);
      }
      return new Response(await res.arrayBuffer(), { status: res.status, headers });
    },
  });
  onCleanup(() => server.stop(true));
  return `http://${hostname}:${server.port}`;
}
