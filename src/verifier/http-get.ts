/**
 * The command-line shells' `fetch` for mirror nodes: a GET over node:http / node:https.
 *
 * Why not the global fetch: in Node.js 20 the first call to `fetch` loads and compiles undici,
 * some 60 ms on one core, which was a third of the standalone verifier's whole run for one receipt
 * (docs/benchmarks.md, "The receipt verifier"). The verifier needs only a GET, a status and the
 * body's text, so this is all there is. Bun runs the same code (`docverify verify-receipt`), so
 * both command-line shells read mirror nodes the same way; the page uses the browser's fetch.
 *
 * Behaviour a mirror reader relies on, the same as fetch's: redirects followed (at most 5, GET
 * again, http and https only), the abort signal ends the request and the body alike, and a
 * connection error rejects. Beyond fetch: a body larger than MAX_BODY_BYTES rejects (a mirror
 * page of 100 messages is well under 1 MiB), so a hostile "mirror" cannot exhaust memory.
 */
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import type { FetchFn } from "./mirror.ts";

export const MAX_BODY_BYTES = 16 * 1024 * 1024;
const MAX_REDIRECTS = 5;

export const httpGet: FetchFn = async (url, init) => {
  let target = new URL(url);
  for (let hop = 0; ; hop++) {
    const res = await once(target, init);
    const location = res.headers.location;
    if (res.statusCode !== undefined && [301, 302, 303, 307, 308].includes(res.statusCode) && typeof location === "string") {
      res.resume();
      if (hop >= MAX_REDIRECTS) throw new Error(`more than ${MAX_REDIRECTS} redirects from ${url}`);
      target = new URL(location, target);
      continue;
    }
    const status = res.statusCode ?? 0;
    const body = await readBody(res, init?.signal ?? undefined);
    return { status, text: async () => body };
  }
};

function once(url: URL, init: Parameters<FetchFn>[1]): Promise<IncomingMessage> {
  if (url.protocol !== "http:" && url.protocol !== "https:") return Promise.reject(new Error(`unsupported protocol ${url.protocol}`));
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(url, { method: "GET", headers: init?.headers, signal: init?.signal ?? undefined }, resolve);
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
