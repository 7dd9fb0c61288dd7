/**
 * The Hedera API over gRPC, served by a small unary gRPC server on `node:http2`, with the message
 * classes of @hashgraph/proto as the codecs: no .proto files are loaded, so this works the same
 * under Bun and in the compiled binary. Not @grpc/grpc-js's server: that library's evaluation
 * (its client half, load balancers, resolvers, channelz) cost the ledger's thread 2.7 MB of idle
 * memory for the one thing used here (docs/benchmarks.md, "Idle memory"). What a gRPC client may
 * expect of a unary call is small and implemented here:
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
import { proto } from "@hashgraph/proto";
import type { Logger } from "../lib/log.ts";
import type { LedgerNode, Received, RpcKind } from "./node.ts";

/** The services of the Hedera API (services_*_service.proto). */
const SERVICES = [
  "AddressBookService",
  "ConsensusService",
  "CryptoService",
  "FileService",
  "FreezeService",
  "NetworkService",
  "ScheduleService",
  "SmartContractService",
  "TokenService",
  "UtilService",
] as const;

type RpcServiceClass = {
  prototype: object;
  create(rpcImpl: (method: unknown, data: Uint8Array, cb: (err: Error | null, res: Uint8Array) => void) => void): Record<string, unknown>;
};

/**
 * The methods of a service and whether each takes a Transaction or a Query. The generated classes
 * do not expose their request types, but each method decodes its response with its own class, so
 * one dry call through a stub transport tells which it is.
 */
export function methodsOf(service: string): { name: string; kind: RpcKind }[] {
  const ctor = (proto as unknown as Record<string, RpcServiceClass | undefined>)[service];
  if (!ctor) return [];
  const stub = ctor.create((_method, _data, cb) => cb(null, new Uint8Array()));
  const methods: { name: string; kind: RpcKind }[] = [];
  for (const name of Object.getOwnPropertyNames(ctor.prototype)) {
    const fn = stub[name];
    if (name === "constructor" || typeof fn !== "function") continue;
    let kind: RpcKind | null = null;
    (fn as (req: object, cb: (err: Error | null, res: unknown) => void) => void).call(stub, {}, (_err, res) => {
      // By shape, not instanceof: @hashgraph/proto and the SDK's copy of it share one
      // protobufjs root, so the class that decodes may be the other copy's twin. Not by class
      // name either: the compiled executable is minified, which renames classes.
      if (res === null || typeof res !== "object") return;
      if ("nodeTransactionPrecheckCode" in res && "cost" in res) kind = "transaction";
      else if ("cryptogetAccountBalance" in res || "transactionGetReceipt" in res || "consensusGetTopicInfo" in res || "response" in res) kind = "query";
    });
    if (kind) methods.push({ name, kind });
  }
  return methods;
}

function received<T>(decode: (bytes: Uint8Array) => T): (bytes: Uint8Array) => Received<T> {
  return (input) => {
    // A copy: the bytes are stored, and the frame's buffer is not ours to keep.
    const bytes = new Uint8Array(input);
    try {
      return { bytes, message: decode(bytes) };
    } catch {
      // Left for the node to answer as the network does (INVALID_TRANSACTION, ...).
      return { bytes, message: null };
    }
  };
}

/** gRPC status codes used here (grpc/doc/statuscodes.md). */
const STATUS = { OK: 0, RESOURCE_EXHAUSTED: 8, UNIMPLEMENTED: 12, INTERNAL: 13 } as const;
/** The largest request message taken, as grpc-js's server's default receive limit. */
const MAX_REQUEST_BYTES = 4 * 1024 * 1024;

/** A unary method: the request message's bytes in, the response message's bytes out. */
type Unary = (request: Uint8Array) => Promise<Uint8Array>;

/** How one kind of RPC is carried: its codecs, what answers it, and what a failure is logged as. */
interface Rpc<Req, Res> {
  readonly decodeRequest: (bytes: Uint8Array) => Req;
  readonly encodeResponse: (response: Res) => Uint8Array;
  readonly handle: (request: Received<Req>) => Promise<Res>;
}

function unary<Req, Res>(rpc: Rpc<Req, Res>): Unary {
  const decode = received(rpc.decodeRequest);
  return async (bytes) => rpc.encodeResponse(await rpc.handle(decode(bytes)));
}

/** Every Hedera method's path and what answers it. */
function buildMethods(node: LedgerNode): Map<string, { call: Unary; what: RpcKind }> {
  const transaction = unary<proto.Transaction, proto.ITransactionResponse>({
    decodeRequest: (b) => proto.Transaction.decode(b),
    encodeResponse: (r) => proto.TransactionResponse.encode(r).finish(),
    handle: (r) => node.submit(r),
  });
  const query = unary<proto.Query, proto.IResponse>({
    decodeRequest: (b) => proto.Query.decode(b),
    encodeResponse: (r) => proto.Response.encode(r).finish(),
    handle: (r) => node.query(r),
  });
  const methods = new Map<string, { call: Unary; what: RpcKind }>();
  for (const service of SERVICES) {
    for (const { name, kind } of methodsOf(service)) {
      methods.set(`/proto.${service}/${name}`, { call: kind === "transaction" ? transaction : query, what: kind });
    }
  }
  return methods;
}

/** A trailers-only answer: the call failed with `code`. */
function fail(stream: ServerHttp2Stream, code: number, message: string): void {
  if (stream.destroyed || stream.headersSent) return;
  stream.respond({ ":status": 200, "content-type": "application/grpc+proto", "grpc-status": String(code), "grpc-message": encodeURIComponent(message) }, { endStream: true });
}

/** One call on `stream`: reads the request frame, answers with the method's response or a status. */
function serveCall(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, methods: ReadonlyMap<string, { call: Unary; what: RpcKind }>, log: Logger): void {
  // A client that goes away mid-call is not an error of the ledger's.
  stream.on("error", () => undefined);
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

export async function startGrpcEndpoint(options: { host: string; port: number; node: LedgerNode; log: Logger }): Promise<GrpcEndpoint> {
  const methods = buildMethods(options.node);
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
      s.on("stream", (stream, headers) => serveCall(stream as ServerHttp2Stream, headers, methods, options.log));
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
