/**
 * The command-line shells' `fetch` for mirror nodes: a GET over node:http / node:https.
 *
 * Why not the global fetch: in Node.js 20 the first call to `fetch` loads and compiles undici,
 * some 60 ms on one core, which was a third of the standalone verifier's whole run for one receipt
 * (docs/benchmarks.md, "The receipt verifier"). The verifier needs only a GET, a status and the
 * body's text, so this is all there is. Bun runs the same code (`docverify verify-receipt`), so
 * both command-line shells read mirror nodes the same way; the page uses the browser's fetch.
 *
 * Behaviour a mirror reader relies on: redirects followed (at most 5, GET again) within the first
 * URL's origin only, or for the identity document to https URLs only (`init.redirects`); the abort
 * signal ends the request and the body alike; a connection error rejects. Beyond fetch: a body larger than MAX_BODY_BYTES rejects (a mirror
 * page of 100 messages is well under 1 MiB), so a hostile "mirror" cannot exhaust memory.
 */
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP } from "node:net";
import type { FetchFn } from "./mirror.ts";

export const MAX_BODY_BYTES = 16 * 1024 * 1024;
const MAX_REDIRECTS = 5;

/** Where to connect instead of a `HOST:PORT` (the shells' `--connect-to`, curl's option of that name). */
export type ConnectTo = ReadonlyMap<string, { readonly address: string; readonly port: number }>;

const bare = (hostname: string) => hostname.replace(/^\[|\]$/g, "");
const portOf = (url: URL) => (url.port !== "" ? Number(url.port) : url.protocol === "https:" ? 443 : 80);

/**
 * A FetchFn over node:http and node:https. `connectTo` sends a `HOST:PORT` to another address
 * while the request, and the TLS certificate check, stay for HOST; `init.addresses` pins the URL's
 * host to the addresses resolved when the witnesses were counted, tried in turn until one
 * connects (a name may resolve to an IPv6 address its server does not listen on).
 */
export function createHttpGet(connectTo: ConnectTo = new Map()): FetchFn {
  return async (url, init) => {
    const first = new URL(url);
    let target = first;
    for (let hop = 0; ; hop++) {
      const mapped = connectTo.get(`${bare(target.hostname)}:${portOf(target)}`);
      // The pinned addresses hold for the first URL's origin only (a redirect within it included).
      const pinned = init?.addresses !== undefined && init.addresses.length > 0 && target.origin === first.origin ? init.addresses : undefined;
      const vias = mapped !== undefined ? [mapped] : pinned !== undefined ? pinned.map((address) => ({ address, port: portOf(target) })) : [undefined];
      const res = await firstConnecting(vias, (via) => once(target, init, via), init?.signal);
      const location = res.headers.location;
      if (res.statusCode !== undefined && [301, 302, 303, 307, 308].includes(res.statusCode) && typeof location === "string") {
        res.resume();
        if (hop >= MAX_REDIRECTS) throw new Error(`more than ${MAX_REDIRECTS} redirects from ${url}`);
        const next = new URL(location, target);
        if (init?.redirects === "https") {
          if (next.protocol !== "https:") throw new Error(`redirected to ${next.origin}, which is not https`);
        } else if (next.origin !== first.origin) {
          // A mirror node that sends its reader elsewhere would make one witness speak for another.
          throw new Error(`redirected to ${next.origin}: another host (name it with --mirror if you trust it)`);
        }
        target = next;
        continue;
      }
      const status = res.statusCode ?? 0;
      const body = await readBody(res, init?.signal ?? undefined);
      return { status, text: async () => body };
    }
  };
}

/** Requests follow redirects within the first URL's origin only; see createHttpGet. */
export const httpGet: FetchFn = createHttpGet();

/** The first of `vias` that answers; the last one's error when none connects. An abort ends the tries. */
async function firstConnecting<V>(vias: readonly V[], attempt: (via: V) => Promise<IncomingMessage>, signal: AbortSignal | undefined): Promise<IncomingMessage> {
  let last: unknown;
  for (const via of vias) {
    try {
      return await attempt(via);
    } catch (e) {
      if (signal?.aborted) throw e;
      last = e;
    }
  }
  throw last;
}

function once(url: URL, init: Parameters<FetchFn>[1], via: { address: string; port: number } | undefined): Promise<IncomingMessage> {
  if (url.protocol !== "http:" && url.protocol !== "https:") return Promise.reject(new Error(`unsupported protocol ${url.protocol}`));
  const https = url.protocol === "https:";
  const send = https ? httpsRequest : httpRequest;
  const hostname = bare(url.hostname);
  const headers = { ...init?.headers, host: url.host };
  // Connected to `via`, the request and the certificate check are still for the URL's host.
  const options = {
    method: "GET",
    host: via?.address ?? hostname,
    port: via?.port ?? portOf(url),
    path: url.pathname + url.search,
    headers,
    signal: init?.signal ?? undefined,
    ...(https && isIP(hostname) === 0 ? { servername: hostname } : {}),
  };
  return new Promise((resolve, reject) => {
    const req = send(options, resolve);
    req.on("error", reject);
    req.end();
  });
}

function readBody(res: IncomingMessage, signal: AbortSignal | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const abort = () => {
      res.destroy();
      reject(signal?.reason ?? new Error("aborted"));
    };
    if (signal?.aborted) return abort();
    signal?.addEventListener("abort", abort, { once: true });
    res.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        res.destroy();
        reject(new Error(`an answer larger than ${MAX_BODY_BYTES / 1024 / 1024} MiB`));
        return;
      }
      chunks.push(chunk);
    });
    res.on("end", () => {
      signal?.removeEventListener("abort", abort);
      resolve(Buffer.concat(chunks).toString("utf8"));
    });
    res.on("error", (e) => {
      signal?.removeEventListener("abort", abort);
      reject(e);
    });
  });
}
