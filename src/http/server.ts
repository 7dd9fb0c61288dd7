/**
 * The HTTP surface: the only module tree that imports Elysia. `createHttp` assembles the
 * routes and wraps Elysia's `handle` with what every response needs: a request id header
 * (also in the log line), one JSON log line per request, the error envelope for anything that
 * escapes a route, 404/405 for unknown routes and methods, and 503 while shutting down.
 */
import { Elysia } from "elysia";
import { DomainError } from "../lib/errors.ts";
import type { Logger } from "../lib/log.ts";
import { errorResponse, internalError } from "./errors.ts";
import { faultRetrySeconds, storageFault, type StorageFaults } from "../lib/storage-faults.ts";
import { docsRoutes, type DocsOptions } from "./docs.ts";
import { healthRoutes, type HealthDeps } from "./routes/health.ts";
import { createRequestContexts, type RequestContext, type RequestContextsOwner } from "./request-context.ts";
import { createAddresses, type Addresses } from "./routable.ts";

export interface HttpDeps extends HealthDeps {
  readonly log: Logger;
  readonly version: string;
  /** Where a storage fault a request meets is noted (logged once per change; `/readyz`: lib/storage-faults.ts). Default: not noted. */
  readonly storageFaults?: StorageFaults;
  /** Request counts and durations (/metrics). Default: not recorded. */
  readonly metrics?: HttpMetrics;
  /** Extra route plugins (later capabilities, and tests of the shared machinery). */
  readonly plugins?: readonly AnyElysia[];
  /** Each request's context, shared with the routes that read it (default: a set of its own). */
  readonly requests?: RequestContextsOwner;
  /** How a request's address is made routable (default: one of its own). */
  readonly addresses?: Addresses;
  /** The service's public URL and contact, for the API document (docs.ts). */
  readonly documentation?: Omit<DocsOptions, "version">;
}

// Elysia's generic parameters are not useful across plugin boundaries here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyElysia = Elysia<any, any, any, any, any, any, any>;

export interface Http {
  /** Answers one request. `peer` is the direct peer's IP address, when known. */
  handle(request: Request, peer?: string): Promise<Response>;
  /** Makes every new request answer 503 while in-flight ones finish. */
  beginDrain(): void;
  /** `METHOD path` of every route, for the 405 `Allow` header and tests. */
  readonly routes: readonly { method: string; path: string }[];
}

/**
 * Where the wrapper records each request. `route` is asked once per route at start (and once
 * per method for unmatched requests), so that recording a request costs no string building:
 * the request's route is found by a map lookup, and its recorder comes with it.
 */
export interface HttpMetrics {
  /** `method` is the route's (HEAD requests count under GET); `route` the pattern or "(unmatched)". */
  route(method: string, route: string): RouteRecorder;
}
export interface RouteRecorder {
  record(status: number, durationSeconds: number): void;
}
const NO_RECORDER: RouteRecorder = { record() {} };

/** Methods an unmatched request is counted under by name; any other is counted as "other". */
const COUNTED_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

export function createHttp(deps: HttpDeps): Http {
  const requests = deps.requests ?? createRequestContexts();
  const addresses = deps.addresses ?? createAddresses();
  /**
   * The storage cannot store anything (a full disk, a read-only file system, an I/O error): the
   * service is unable to answer, not broken. 503 with Retry-After, and the fault noted (one log
   * line per change of state); null for any other error.
   */
  function storageUnavailable(error: unknown): Response | null {
    const fault = storageFault(error);
    if (fault === null) return null;
    deps.storageFaults?.fault(fault, error);
    const message = fault === "busy" ? "The service is busy. Retry shortly." : "The service cannot store anything right now. Retry later; nothing was modified.";
    return errorResponse(new DomainError("SERVICE_UNAVAILABLE", message, undefined, faultRetrySeconds(fault)));
  }

  let app: AnyElysia = new Elysia({ normalize: false })
    .onError(({ error, request }) => {
      if (request.signal.aborted) return clientClosed();
      if (error instanceof DomainError) {
        // An internal fault a capability raised as a DomainError (a private key that does not
        // open): the caller sees the generic 500, the operator sees the cause.
        if (error.code === "INTERNAL_ERROR") deps.log.error("internal error", { requestId: requests.of(request).id, error: describeInternal(error) });
        // A 503 a storage fault caused (a busy lock, a database not answering): noted, once.
        if (error.code === "SERVICE_UNAVAILABLE") {
          const fault = storageFault((error as { cause?: unknown }).cause);
          if (fault !== null) deps.storageFaults?.fault(fault, (error as { cause?: unknown }).cause);
        }
        return errorResponse(error);
      }
      const unavailable = storageUnavailable(error);
      if (unavailable !== null) return unavailable;
      const code = (error as { code?: unknown }).code;
      if (code === "NOT_FOUND") return notFoundOrNotAllowed(request);
      // Malformed bodies Elysia itself parses (none of ours: our routes read their own bodies).
      if (code === "PARSE" || code === "VALIDATION") {
        return errorResponse(new DomainError("VALIDATION_FAILED", "The request is malformed.", { body: "malformed request" }));
      }
      deps.log.error("unhandled error", { requestId: requests.of(request).id, error });
      return errorResponse(internalError());
    })
    .use(healthRoutes(deps))
    .use(docsRoutes({ ...deps.documentation, version: deps.version }));
  for (const plugin of deps.plugins ?? []) app = app.use(plugin);
  app.compile();

  const routes = app.routes.map((r: { method: string; path: string }) => ({ method: r.method, path: r.path }));
  const recorderOf = (method: string, path: string): RouteRecorder => deps.metrics?.route(method, path) ?? NO_RECORDER;
  const matchers = routes.map((r) => ({
    method: r.method,
    path: r.path,
    re: new RegExp("^" + r.path.split("/").map((seg) => (seg.startsWith(":") ? "[^/]+" : escapeRe(seg))).join("/") + "$"),
    recorder: recorderOf(r.method, r.path),
  }));
  type RouteEntry = { readonly path: string; readonly recorder: RouteRecorder };
  // For the log line and the metrics, per request: a route without parameters is found by map
  // lookups on method, then path; only the few routes with parameters are tried as regular
  // expressions, in the same order as before (the first route that matches wins, as in
  // Elysia's own routing).
  const staticRoutes = new Map<string, Map<string, RouteEntry>>();
  for (const m of matchers) {
    if (m.path.includes(":") || m.path.includes("*")) continue;
    let byPath = staticRoutes.get(m.method);
    if (byPath === undefined) staticRoutes.set(m.method, (byPath = new Map()));
    if (!byPath.has(m.path)) byPath.set(m.path, m);
  }
  const paramMatchers = matchers.filter((m) => m.path.includes(":") || m.path.includes("*"));
  const unmatched = new Map<string, RouteEntry>();
  for (const method of [...COUNTED_METHODS, "other"]) unmatched.set(method, { path: "(unmatched)", recorder: recorderOf(method, "(unmatched)") });

  function notFoundOrNotAllowed(request: Request): Response {
    const path = pathOf(request.url);
    const allowed = new Set(matchers.filter((m) => m.re.test(path)).map((m) => m.method));
    if (allowed.size === 0) {
      return errorResponse(new DomainError("NOT_FOUND", `No route ${path}.`));
    }
    if (allowed.has("GET")) allowed.add("HEAD");
    const allow = [...allowed].sort().join(", ");
    return errorResponse(new DomainError("METHOD_NOT_ALLOWED", `${request.method} is not allowed on ${path}; allowed: ${allow}.`), { allow });
  }

  /** The route pattern a request matched (never the raw path, which may carry ids), with its recorder. */
  function routeOf(request: Request): RouteEntry {
    const path = pathOf(request.url);
    const method = request.method === "HEAD" ? "GET" : request.method;
    const known = staticRoutes.get(method)?.get(path);
    if (known !== undefined) return known;
    // A path that is also a static route of another method falls through to the parameter
    // routes, exactly as the scan over all routes did.
    return paramMatchers.find((m) => m.method === method && m.re.test(path)) ?? unmatched.get(request.method) ?? unmatched.get("other")!;
  }

  let draining = false;

  /** The wrapper's own answer to a request it could not route (the last resort). */
  function fallback(meta: RequestContext, error: unknown, request: Request): Response {
    if (request.signal.aborted) return clientClosed();
    const unavailable = storageUnavailable(error);
    if (unavailable !== null) return unavailable;
    deps.log.error("unhandled error", { requestId: meta.id, error });
    return errorResponse(internalError());
  }

  return {
    routes,
    beginDrain() {
      draining = true;
    },
    async handle(received, peer) {
      const started = performance.now();
      const meta: RequestContext = { id: Bun.randomUUIDv7(), peer };
      // Everything from here to the log line is inside the try: a request is always answered
      // through the envelope, the log line and X-Request-Id, whatever it carried (docs/architecture.md, "HTTP").
      let request = received;
      let response: Response;
      let route: RouteEntry = unmatched.get("other")!;
      try {
        request = addresses.routable(received);
        requests.begin(request, meta);
        route = routeOf(request);
        const declared = request.headers.get("content-length");
        if (draining) {
          response = errorResponse(new DomainError("SERVICE_UNAVAILABLE", "The service is shutting down; retry shortly.", undefined, 5), {
            connection: "close",
          });
        } else if (declared !== null && declared.length >= 7 && Number(declared) > MAX_REQUEST_BODY) {
          // No operation takes a body near this size; the runtime's own ceiling is set above it
          // (app/serve.ts) so that this refusal, in the envelope, is what a client sees.
          response = errorResponse(new DomainError("PAYLOAD_TOO_LARGE", `The request body is larger than the service's limit of ${MAX_REQUEST_BODY} bytes.`));
        } else {
          response = await app.handle(request);
        }
        if (response.status === 500 && !(response.headers.get("content-type") ?? "").includes("json")) {
          // Elysia's own last-resort 500 is plain text; keep the spec's envelope on every error.
          response = errorResponse(internalError());
        }
      } catch (error) {
        response = fallback(meta, error, request);
      }
      response.headers.set("x-request-id", meta.id);
      const extra = meta.headers;
      if (extra !== undefined) for (const name in extra) response.headers.set(name, extra[name]!);
      // A 413 leaves the unread rest of the body on the connection; closing it keeps those
      // bytes from being parsed as a next request.
      if (response.status === 413) response.headers.set("connection", "close");
      const elapsedMs = performance.now() - started;
      route.recorder.record(response.status, elapsedMs / 1000);
      const line: Record<string, string | number> = {
        requestId: meta.id,
        method: request.method,
        route: route.path,
        status: response.status,
        durationMs: Math.round(elapsedMs * 100) / 100,
      };
      if (meta.peer !== undefined) line.peer = meta.peer;
      if (meta.keyPrefix !== undefined) line.key = meta.keyPrefix;
      // A client that went away mid-request is the client's doing, not a fault of the service.
      if (response.status === CLIENT_CLOSED) deps.log.info("request abandoned by the client", line);
      else deps.log.info("request", line);
      return response;
    },
  };
}

/** The largest body any request may declare; each operation has its own, smaller limit. */
export const MAX_REQUEST_BODY = 1 << 20;

/**
 * The status logged and counted for a request whose client closed the connection before it was
 * answered (nginx's 499). Nobody receives the response.
 */
export const CLIENT_CLOSED = 499;
function clientClosed(): Response {
  return new Response(null, { status: CLIENT_CLOSED });
}

/**
 * The path of an absolute request URL (`http://host:port/path?query`), as `new URL(url).pathname`
 * gives it for the URLs Bun hands a server, without building a URL object per request. Anything
 * unusual (no `//` authority, a backslash, a dot segment, a percent sign or a character URL
 * parsing would rewrite) goes through `new URL`, so the answer is always the same as before.
 */
export function pathOf(url: string): string {
  const scheme = url.indexOf("://");
  const start = scheme < 0 ? -1 : url.indexOf("/", scheme + 3);
  if (start >= 0) {
    let end = url.length;
    for (let i = start; i < url.length; i++) {
      const c = url.charCodeAt(i);
      if (c === 0x3f /* ? */ || c === 0x23 /* # */) {
        end = i;
        break;
      }
    }
    const path = url.slice(start, end);
    if (/^(?:\/[A-Za-z0-9\-._~!$&'()*+,;=:@]*)+$/.test(path) && !/\/\.\.?(?:\/|$)/.test(path)) return path;
  }
  return new URL(url).pathname;
}

/** A DomainError's log fields: its class, message and any reason or key id it carries (never a secret). */
function describeInternal(error: DomainError): Record<string, unknown> {
  const e = error as DomainError & { reason?: unknown; keyId?: unknown };
  return {
    name: error.constructor.name,
    message: error.message,
    ...(e.reason !== undefined ? { reason: e.reason } : {}),
    ...(e.keyId !== undefined ? { keyId: e.keyId } : {}),
  };
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
