/**
 * The local ledger's own unary gRPC server (src/local-ledger/grpc.ts) at the wire, below what the
 * SDK sends: raw HTTP/2 requests with hand-made frames, and the status each one gets. The SDK's
 * calls through it are the rest of the ledger's tests (test/anchoring/local-ledger*.test.ts).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect, type ClientHttp2Session, type IncomingHttpHeaders } from "node:http2";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { proto } from "@hashgraph/proto";
import { startLedger, type RunningLedger } from "../../src/local-ledger/index.ts";

let dir: string;
let ledger: RunningLedger;
let session: ClientHttp2Session;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "docverify-grpc-"));
  ledger = await startLedger({ dataDir: dir });
  session = connect(`http://${ledger.grpcAddress}`);
  session.on("error", () => undefined);
}, 20_000);

afterAll(async () => {
  session?.close();
  await ledger?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  readonly status: number | undefined;
  /** `grpc-status`, from the trailers or, for a trailers-only answer, the headers. */
  readonly grpcStatus: string | undefined;
  readonly grpcMessage: string | undefined;
  readonly body: Buffer;
}

/** One request on its own stream; resolves once the stream closes, with what came back. */
function call(path: string, body: Uint8Array, contentType = "application/grpc"): Promise<Answer> {
  return new Promise((resolve) => {
    const req = session.request({ ":method": "POST", ":path": path, "content-type": contentType, te: "trailers" });
    let headers: IncomingHttpHeaders = {};
    let trailers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    req.on("response", (h) => (headers = h));
    req.on("trailers", (t) => (trailers = t));
    req.on("data", (c: Buffer) => chunks.push(c));
    // A request the server stops reading (too large) may end in a reset: what arrived is the answer.
    req.on("error", () => undefined);
    req.on("close", () => {
      const grpc = (name: string) => (trailers[name] ?? headers[name]) as string | undefined;
      const status = headers[":status"];
      resolve({ status: status === undefined ? undefined : Number(status), grpcStatus: grpc("grpc-status"), grpcMessage: grpc("grpc-message"), body: Buffer.concat(chunks) });
    });
    req.end(body);
  });
}

/** A gRPC length-prefixed message: compressed flag, 4-byte big-endian length, the bytes. */
function frame(message: Uint8Array, options: { compressed?: boolean; length?: number } = {}): Uint8Array {
  const out = new Uint8Array(5 + message.length);
  out[0] = options.compressed === true ? 1 : 0;
  new DataView(out.buffer).setUint32(1, options.length ?? message.length);
  out.set(message, 5);
  return out;
}

const SUBMIT = "/proto.ConsensusService/submitMessage";

test("a well-framed request gets HTTP 200, one framed TransactionResponse and grpc-status 0 in the trailers", async () => {
  // Not a transaction: the node answers it as the network does, at precheck.
  const answer = await call(SUBMIT, frame(Uint8Array.of(0x0a, 0xff, 0xff)));
  expect({ status: answer.status, grpcStatus: answer.grpcStatus }).toEqual({ status: 200, grpcStatus: "0" });
  expect(answer.body[0]).toBe(0);
  expect(answer.body.readUInt32BE(1)).toBe(answer.body.length - 5);
  const response = proto.TransactionResponse.decode(answer.body.subarray(5));
  expect(proto.ResponseCodeEnum[response.nodeTransactionPrecheckCode]).toBe("INVALID_TRANSACTION");
}, 20_000);

test.each([
  { name: "a path that is no Hedera method", path: "/proto.NoSuchService/nothing", body: frame(new Uint8Array()), grpcStatus: "12" },
  { name: "a compressed message (none is offered)", path: SUBMIT, body: frame(Uint8Array.of(1, 2, 3), { compressed: true }), grpcStatus: "12" },
  { name: "a frame shorter than its length", path: SUBMIT, body: frame(Uint8Array.of(1, 2, 3), { length: 10 }), grpcStatus: "13" },
  { name: "bytes after the one message", path: SUBMIT, body: Uint8Array.of(...frame(Uint8Array.of(1)), 0), grpcStatus: "13" },
  { name: "no frame at all", path: SUBMIT, body: new Uint8Array(), grpcStatus: "13" },
  { name: "a message over 4 MiB", path: SUBMIT, body: frame(new Uint8Array(4 * 1024 * 1024 + 1)), grpcStatus: "8" },
])("$name: a trailers-only answer with grpc-status $grpcStatus", async ({ path, body, grpcStatus }) => {
  const answer = await call(path, body);
  expect({ status: answer.status, grpcStatus: answer.grpcStatus, body: answer.body.length }).toEqual({ status: 200, grpcStatus, body: 0 });
  expect(answer.grpcMessage ?? "").not.toBe("");
}, 20_000);

test("a request that is not gRPC (another content type) gets HTTP 415", async () => {
  const answer = await call(SUBMIT, frame(new Uint8Array()), "application/json");
  expect(answer.status).toBe(415);
  expect(answer.grpcStatus).toBeUndefined();
}, 20_000);
