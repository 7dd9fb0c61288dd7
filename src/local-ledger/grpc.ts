/**
 * The Hedera API over gRPC, served by a small unary gRPC server on `node:http2`: this file is the
 * transport; the methods and their codecs (the message classes of @hashgraph/proto) are
 * grpc-methods.ts's, loaded by the first call rather than at the start, so a ledger no client has
 * called holds no protobuf classes (docs/local-ledger.md, "Idle memory"). Not @grpc/grpc-js's
 * server: that library's evaluation (its client half, load balancers, resolvers, channelz) cost
 * the ledger's thread 2.7 MB of idle memory for the one thing used here (docs/benchmarks.md,
 * "Idle memory"). What a gRPC client may expect of a unary call is small and implemented here:
 *
 * - a request is one length-prefixed message (1-byte compressed flag, 4-byte big-endian length);
 *   a compressed one (no compression is offered) is refused with UNIMPLEMENTED, a frame that is
 *   cut short or longer than its length with INTERNAL, more than 4 MiB (grpc-js's default
 *   receive limit) with RESOURCE_EXHAUSTED;
 * - the answer is HTTP 200, `content-type: application/grpc+proto`, one length-prefixed message
 *   and the trailer `grpc-status: 0`; a failure is a trailers-only answer with `grpc-status` and
 *   `grpc-message` (percent-encoded), as the gRPC over HTTP/2 protocol says;
 * - every method of every Hedera service answers at its real path (`/proto.ConsensusService/
 *   submitMessage`, ...), so a call the ledger does not implement gets a Hedera answer
 *   (NOT_SUPPORTED) rather than a gRPC UNIMPLEMENTED the SDK would not expect; any other path
 *   gets UNIMPLEMENTED.
 */
import { createServer, type Http2Server, type IncomingHttpHeaders, type ServerHttp2Session, type ServerHttp2Stream } from "node:http2";
import type { Logger } from "../lib/log.ts";
import type { RpcKind } from "./node.ts";

/** gRPC status codes used here (grpc/doc/statuscodes.md). */
const STATUS = { OK: 0, RESOURCE_EXHAUSTED: 8, UNIMPLEMENTED: 12, INTERNAL: 13 } as const;
/** The largest request message taken, as grpc-js's server's default receive limit. */
const MAX_REQUEST_BYTES = 4 * 1024 * 1024;

/** A unary method: the request message's bytes in, the response message's bytes out. */
export type Unary = (request: Uint8Array) => Promise<Uint8Array>;

/** Every Hedera method's path and what answers it (grpc-methods.ts builds it). */
export type GrpcMethods = ReadonlyMap<string, { readonly call: Unary; readonly what: RpcKind }>;

/** A trailers-only answer: the call failed with `code`. */
function fail(stream: ServerHttp2Stream, code: number, message: string): void {
  if (stream.destroyed || stream.headersSent) return;
  stream.respond({ ":status": 200, "content-type": "application/grpc+proto", "grpc-status": String(code), "grpc-message": encodeURIComponent(message) }, { endStream: true });
}

/** One call on `stream`: reads the request frame, answers with the method's response or a status. */
function serveCall(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, methods: GrpcMethods, log: Logger): void {
  const path = headers[":path"];
  const method = typeof path === "string" ? methods.get(path) : undefined;
  const contentType = headers["content-type"];
  if (headers[":method"] !== "POST" || typeof contentType !== "string" || !contentType.startsWith("application/grpc")) {
    if (!stream.destroyed && !stream.headersSent) stream.respond({ ":status": 415 }, { endStream: true });
    return;
  }
  if (method === undefined) {
    stream.resume();
    fail(stream, STATUS.UNIMPLEMENTED, `unknown method ${String(path)}`);
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  stream.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_REQUEST_BYTES + 5) {
      fail(stream, STATUS.RESOURCE_EXHAUSTED, `request larger than ${MAX_REQUEST_BYTES} bytes`);
      stream.close();
      return;
    }
    chunks.push(chunk);
  });
  stream.on("end", () => {
    if (stream.destroyed || stream.headersSent) return;
    const frame = Buffer.concat(chunks);
    if (frame.length < 5 || frame.readUInt32BE(1) !== frame.length - 5) {
      fail(stream, STATUS.INTERNAL, "malformed request: one length-prefixed message expected");
      return;
    }
    if (frame[0] !== 0) {
      fail(stream, STATUS.UNIMPLEMENTED, "compressed requests are not supported");
      return;
    }
    method.call(frame.subarray(5)).then(
      (response) => {
        if (stream.destroyed) return;
        const out = Buffer.allocUnsafe(5 + response.length);
        out[0] = 0;
        out.writeUInt32BE(response.length, 1);
        out.set(response, 5);
        stream.respond({ ":status": 200, "content-type": "application/grpc+proto" }, { waitForTrailers: true });
        stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": String(STATUS.OK) }));
        stream.end(out);
      },
      (err: unknown) => {
        log.error(`local ledger: ${method.what} handler failed`, { path, err });
        // No detail leaves the process.
        fail(stream, STATUS.INTERNAL, "internal error");
      },
    );
  });
}

/** `host:port`, with brackets around an IPv6 literal. */
export function hostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

/** A gRPC listener that can be closed and reopened on the same port (the `unreachable` fault). */
export interface GrpcEndpoint {
  readonly port: number;
  /** Closes the listening socket and drops open connections. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  restart(): Promise<void>;
}

/**
 * Listens on `host:port`. `methods` is asked at each call's start and its promise awaited: the
 * owner loads the codecs and the node there, on the first call (open.ts), so a ledger no client
 * has called has not evaluated @hashgraph/proto. Until it resolves, the request's bytes wait
 * in the stream, unread; a stream closed meanwhile is left alone.
 */
export async function startGrpcEndpoint(options: { host: string; port: number; methods: () => Promise<GrpcMethods>; log: Logger }): Promise<GrpcEndpoint> {
  let loaded: GrpcMethods | null = null;
  const onStream = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void => {
    // A client that goes away mid-call is not an error of the ledger's.
    stream.on("error", () => undefined);
    if (loaded !== null) {
      serveCall(stream, headers, loaded, options.log);
      return;
    }
    options.methods().then(
      (methods) => {
        loaded = methods;
        if (!stream.destroyed) serveCall(stream, headers, methods, options.log);
      },
      (err: unknown) => {
        options.log.error("local ledger: gRPC methods failed to load", { err });
        stream.resume();
        fail(stream, STATUS.INTERNAL, "internal error");
      },
    );
  };
  let server: Http2Server | null = null;
  const sessions = new Set<ServerHttp2Session>();

  const listen = (port: number): Promise<number> =>
    new Promise((resolve, reject) => {
      const s = createServer();
      s.on("session", (session) => {
        sessions.add(session);
        session.on("close", () => sessions.delete(session));
        session.on("error", () => undefined);
      });
      s.on("stream", (stream, headers) => onStream(stream as ServerHttp2Stream, headers));
      s.once("error", reject);
      s.listen(port, options.host, () => {
        s.off("error", reject);
        s.on("error", (err) => options.log.error("local ledger: gRPC listener failed", { err }));
        server = s;
        resolve((s.address() as { port: number }).port);
      });
    });

  const port = await listen(options.port);
  return {
    port,
    async stop() {
      const s = server;
      server = null;
      if (!s) return;
      const closed = new Promise<void>((resolve) => s.close(() => resolve()));
      // Open connections are dropped, not drained: a fault, or a ledger that is closing.
      for (const session of sessions) session.destroy();
      sessions.clear();
      await Promise.race([closed, new Promise((r) => setTimeout(r, 1000))]);
    },
    async restart() {
      if (server) return;
      // The port may linger for a moment after a close; retry briefly rather than fail.
      for (let attempt = 0; ; attempt++) {
        try {
          await listen(port);
          return;
        } catch (err) {
          if (attempt >= 50) throw err;
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    },
  };
}
