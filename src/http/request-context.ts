/**
 * What the HTTP wrapper knows of each request and the routes add to it: its id, the direct peer,
 * headers for whatever response it ends with (the rate-limit headers, a CORS header that must be
 * on a refusal too), and the authenticated key's prefix for the log line. One set per `createHttp`,
 * made by the composition root and handed to the wrapper and to the routes that read or add to it,
 * so what a route may learn of its request is in its dependencies, not in a module's state.
 * Elysia's context is left as it is: its types stay those of the routes.
 */

export interface RequestContext {
  readonly id: string;
  readonly peer: string | undefined;
  /** Headers for whatever response this request ends with. */
  headers?: Record<string, string>;
  /** The authenticated key's prefix, for the log line (never the key). */
  keyPrefix?: string;
}

/** What routes see: the context of the request they answer. */
export interface RequestContexts {
  /** The request's context; one with id "unknown" for a request the wrapper did not begin. */
  of(request: Request): RequestContext;
  /** Adds headers to the response this request ends with, whether a success or an error. */
  addHeaders(request: Request, headers: Record<string, string>): void;
}

/** What the wrapper also does: begin a request's context. */
export interface RequestContextsOwner extends RequestContexts {
  begin(request: Request, context: RequestContext): void;
}

export function createRequestContexts(): RequestContextsOwner {
  // Keyed by the request object: an entry goes with its request.
  const byRequest = new WeakMap<Request, RequestContext>();
  return {
    begin(request, context) {
      byRequest.set(request, context);
    },
    of(request) {
      return byRequest.get(request) ?? { id: "unknown", peer: undefined };
    },
    addHeaders(request, headers) {
      const context = byRequest.get(request);
      if (context === undefined) return;
      const kept = (context.headers ??= {});
      for (const name in headers) kept[name] = headers[name]!;
    },
  };
}
