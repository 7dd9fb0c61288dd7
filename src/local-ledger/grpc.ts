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

function buildService(node: LedgerNode, log: Logger): { definition: grpc.ServiceDefinition; handlers: grpc.UntypedServiceImplementation }[] {
  const services: { definition: grpc.ServiceDefinition; handlers: grpc.UntypedServiceImplementation }[] = [];
  for (const service of SERVICES) {
    const definition: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
    const handlers: grpc.UntypedServiceImplementation = {};
    for (const { name, kind } of methodsOf(service)) {
      const path = `/proto.${service}/${name}`;
      if (kind === "transaction") {
        const method: grpc.MethodDefinition<Received<proto.Transaction>, proto.ITransactionResponse> = {
          path,
          requestStream: false,
          responseStream: false,
          requestSerialize: (r) => Buffer.from(r.bytes),
          requestDeserialize: received((b) => proto.Transaction.decode(b)),
          responseSerialize: (r) => Buffer.from(proto.TransactionResponse.encode(r).finish()),
          responseDeserialize: (b) => proto.TransactionResponse.decode(b),
        };
        definition[name] = method as unknown as grpc.MethodDefinition<unknown, unknown>;
        handlers[name] = (call: grpc.ServerUnaryCall<Received<proto.Transaction>, proto.ITransactionResponse>, cb: grpc.sendUnaryData<proto.ITransactionResponse>) => {
          node.submit(call.request).then(
            (r) => cb(null, r),
            (err: unknown) => {
              log.error("local ledger: transaction handler failed", { path, err });
              cb({ code: grpc.status.INTERNAL, details: "internal error" });
            },
          );
        };
      } else {
        const method: grpc.MethodDefinition<Received<proto.Query>, proto.IResponse> = {
          path,
          requestStream: false,
          responseStream: false,
          requestSerialize: (r) => Buffer.from(r.bytes),
          requestDeserialize: received((b) => proto.Query.decode(b)),
          responseSerialize: (r) => Buffer.from(proto.Response.encode(r).finish()),
          responseDeserialize: (b) => proto.Response.decode(b),
        };
        definition[name] = method as unknown as grpc.MethodDefinition<unknown, unknown>;
        handlers[name] = (call: grpc.ServerUnaryCall<Received<proto.Query>, proto.IResponse>, cb: grpc.sendUnaryData<proto.IResponse>) => {
          node.query(call.request).then(
            (r) => cb(null, r),
            (err: unknown) => {
              log.error("local ledger: query handler failed", { path, err });
              cb({ code: grpc.status.INTERNAL, details: "internal error" });
            },
          );
        };
      }
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
