/**
 * The Hedera API over gRPC (@grpc/grpc-js), with the message classes of @hashgraph/proto as the
 * codecs: no .proto files are loaded, so this works the same under Bun and in the compiled binary.
 *
 * Every method of every Hedera service is registered at its real path (`/proto.ConsensusService/
 * submitMessage`, ...), so a call the ledger does not implement gets a Hedera answer
 * (NOT_SUPPORTED) rather than a gRPC UNIMPLEMENTED the SDK would not expect.
 */
import * as grpc from "@grpc/grpc-js";
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

function received<T>(decode: (bytes: Uint8Array) => T): (buf: Buffer) => Received<T> {
  return (buf) => {
    // A copy: the bytes are stored, and gRPC's buffer is not ours to keep.
    const bytes = new Uint8Array(buf);
    try {
      return { bytes, message: decode(bytes) };
    } catch {
      // Left for the node to answer as the network does (INVALID_TRANSACTION, ...).
      return { bytes, message: null };
    }
  };
}

/** How one kind of RPC is carried: its codecs, what answers it, and what a failure is logged as. */
interface Rpc<Req, Res> {
  readonly decodeRequest: (bytes: Uint8Array) => Req;
  readonly encodeResponse: (response: Res) => Uint8Array;
  readonly decodeResponse: (bytes: Uint8Array) => Res;
  readonly handle: (request: Received<Req>) => Promise<Res>;
  readonly what: "transaction" | "query";
}

/**
 * One unary method at `path`: its definition, and a handler that answers with what `rpc.handle`
 * resolves to, or logs the failure and answers INTERNAL (no detail leaves the process).
 */
function unaryMethod<Req, Res>(path: string, rpc: Rpc<Req, Res>, log: Logger): { definition: grpc.MethodDefinition<unknown, unknown>; handler: grpc.handleUnaryCall<Received<Req>, Res> } {
  const definition: grpc.MethodDefinition<Received<Req>, Res> = {
    path,
    requestStream: false,
    responseStream: false,
    requestSerialize: (r) => Buffer.from(r.bytes),
    requestDeserialize: received(rpc.decodeRequest),
    responseSerialize: (r) => Buffer.from(rpc.encodeResponse(r)),
    responseDeserialize: (b) => rpc.decodeResponse(b),
  };
  const handler = (call: grpc.ServerUnaryCall<Received<Req>, Res>, cb: grpc.sendUnaryData<Res>) => {
    rpc.handle(call.request).then(
      (r) => cb(null, r),
      (err: unknown) => {
        log.error(`local ledger: ${rpc.what} handler failed`, { path, err });
        cb({ code: grpc.status.INTERNAL, details: "internal error" });
      },
    );
  };
  return { definition: definition as unknown as grpc.MethodDefinition<unknown, unknown>, handler };
}

function buildService(node: LedgerNode, log: Logger): { definition: grpc.ServiceDefinition; handlers: grpc.UntypedServiceImplementation }[] {
  const transactionRpc: Rpc<proto.Transaction, proto.ITransactionResponse> = {
    decodeRequest: (b) => proto.Transaction.decode(b),
    encodeResponse: (r) => proto.TransactionResponse.encode(r).finish(),
    decodeResponse: (b) => proto.TransactionResponse.decode(b),
    handle: (r) => node.submit(r),
    what: "transaction",
  };
  const queryRpc: Rpc<proto.Query, proto.IResponse> = {
    decodeRequest: (b) => proto.Query.decode(b),
    encodeResponse: (r) => proto.Response.encode(r).finish(),
    decodeResponse: (b) => proto.Response.decode(b),
    handle: (r) => node.query(r),
    what: "query",
  };
  const services: { definition: grpc.ServiceDefinition; handlers: grpc.UntypedServiceImplementation }[] = [];
  for (const service of SERVICES) {
    const definition: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
    const handlers: grpc.UntypedServiceImplementation = {};
    for (const { name, kind } of methodsOf(service)) {
      const path = `/proto.${service}/${name}`;
      const method = kind === "transaction" ? unaryMethod(path, transactionRpc, log) : unaryMethod(path, queryRpc, log);
      definition[name] = method.definition;
      handlers[name] = method.handler;
    }
    if (Object.keys(definition).length > 0) services.push({ definition: definition as grpc.ServiceDefinition, handlers });
  }
  return services;
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
  const services = buildService(options.node, options.log);
  let server: grpc.Server | null = null;

  const listen = (port: number): Promise<number> =>
    new Promise((resolve, reject) => {
      const s = new grpc.Server();
      for (const { definition, handlers } of services) s.addService(definition, handlers);
      s.bindAsync(hostPort(options.host, port), grpc.ServerCredentials.createInsecure(), (err, bound) => {
        if (err) {
          s.forceShutdown();
          reject(err);
          return;
        }
        server = s;
        resolve(bound);
      });
    });

  const port = await listen(options.port);
  return {
    port,
    async stop() {
      const s = server;
      server = null;
      if (!s) return;
      s.forceShutdown();
      // forceShutdown closes the listener asynchronously; let it finish before anyone rebinds.
      await new Promise((r) => setTimeout(r, 20));
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
