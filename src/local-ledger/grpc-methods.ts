/**
 * The Hedera API's methods for the gRPC server (grpc.ts): every method's path, whether it takes a
 * Transaction or a Query, and the message classes of @hashgraph/proto as its codecs (no .proto
 * files are loaded, so this works the same under Bun and in the compiled binary).
 *
 * Evaluates @hashgraph/proto, as the node does: open.ts imports both on the first call a client
 * makes, never at the ledger's start (docs/local-ledger.md, "Idle memory"). What it builds
 * answers exactly as if it had been built at the start.
 */
import { proto } from "@hashgraph/proto";
import type { GrpcMethods, Unary } from "./grpc.ts";
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
export function buildMethods(node: Pick<LedgerNode, "submit" | "query">): GrpcMethods {
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
