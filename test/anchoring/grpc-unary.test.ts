/**
 * The unary gRPC calls under the SDK's channel (src/anchoring/grpc-unary.ts), against an HTTP/2
 * server of the test's own that answers each way a node can: a message, a status in the trailers
 * or alone, an HTTP error, a broken frame, a reset, silence, a closed port. The server frames its
 * answers with the module's own `frame`; the first test checks those bytes as sent. The SDK over these
 * calls against the local ledger is tested by every test of test/anchoring/.
 */
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { GRPC_STATUS, GrpcCallError, MAX_ANSWER_BYTES, frame, grpcConnection, statusOfHttp, unframe, type GrpcConnection } from "../../src/anchoring/grpc-unary.ts";

type Handler = (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, body: Buffer) => void;
let handler: Handler = () => {};
let sessions = 0;
const server = http2.createServer();
server.on("session", () => sessions++);
server.on("stream", (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => {
  stream.on("error", () => {}); // a stream the test resets
  const chunks: Buffer[] = [];
  stream.on("data", (c: Buffer) => chunks.push(c));
  stream.on("end", () => handler(stream, headers, Buffer.concat(chunks)));
});
let address = "";
const open: GrpcConnection[] = [];

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(() => {
  for (const c of open.splice(0)) c.close();
});
afterAll(() => server.close());

function connection(to = address): GrpcConnection {
  const c = grpcConnection(to);
  open.push(c);
  return c;
}

/** Every callback of one call, collected until a little after the first. */
async function call(c: GrpcConnection, request: Uint8Array = new Uint8Array([1, 2, 3]), deadlineMs = 2000): Promise<{ error: GrpcCallError | null; answer?: Buffer }[]> {
  const calls: { error: GrpcCallError | null; answer?: Buffer }[] = [];
  await new Promise<void>((resolve) => {
    c.call("/proto.ConsensusService/submitMessage", request, deadlineMs, (error, answer) => {
      calls.push(answer === undefined ? { error } : { error, answer });
      resolve();
    });
  });
  await Bun.sleep(50);
  return calls;
}

const answerWith = (message: Uint8Array, trailers: http2.OutgoingHttpHeaders = { "grpc-status": "0" }): Handler => (stream) => {
  stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
  stream.on("wantTrailers", () => stream.sendTrailers(trailers));
  stream.end(frame(message));
};

test("a call sends one framed message to the method's path with gRPC's headers, and answers the node's message", async () => {
  let seen: { headers: http2.IncomingHttpHeaders; body: Buffer } | null = null;
  handler = (stream, headers, body) => {
    seen = { headers, body };
    answerWith(new Uint8Array([8, 0, 16, 7]))(stream, headers, body);
  };
  const calls = await call(connection(), new Uint8Array([10, 20, 30]), 1500);
  expect(calls).toEqual([{ error: null, answer: Buffer.from([8, 0, 16, 7]) }]);
  expect(seen!.headers[":method"]).toBe("POST");
  expect(seen!.headers[":path"]).toBe("/proto.ConsensusService/submitMessage");
  expect(seen!.headers["content-type"]).toBe("application/grpc");
  expect(seen!.headers.te).toBe("trailers");
  expect(seen!.headers["grpc-timeout"]).toBe("1500m");
  expect([...seen!.body]).toEqual([0, 0, 0, 0, 3, 10, 20, 30]);
});

test("calls share one connection; an empty answer message is an answer", async () => {
  handler = answerWith(new Uint8Array(0));
  const c = connection();
  const before = sessions;
  const all = await Promise.all([call(c), call(c), call(c)]);
  expect(all.map((calls) => calls.map((x) => [x.error, x.answer?.length]))).toEqual([[[null, 0]], [[null, 0]], [[null, 0]]]);
  expect(sessions - before).toBe(1);
});

test("a status in the trailers is the call's error, its message percent-decoded", async () => {
  handler = answerWith(new Uint8Array(0), { "grpc-status": String(GRPC_STATUS.UNAVAILABLE), "grpc-message": "node%20is%20busy%3A%20try%20later" });
  const calls = await call(connection());
  expect(calls.length).toBe(1);
  expect(calls[0]!.error).toBeInstanceOf(GrpcCallError);
  expect({ code: calls[0]!.error!.code, details: calls[0]!.error!.details }).toEqual({ code: 14, details: "node is busy: try later" });
});

test("a trailers-only answer (status in the headers) is the call's error", async () => {
  handler = (stream) => stream.respond({ ":status": 200, "content-type": "application/grpc", "grpc-status": "12", "grpc-message": "unknown method" }, { endStream: true });
  const calls = await call(connection());
  expect(calls.map((x) => [x.error?.code, x.error?.details, x.answer])).toEqual([[12, "unknown method", undefined]]);
});

test("an HTTP error without a gRPC status maps as gRPC's specification maps it", async () => {
  handler = (stream) => stream.respond({ ":status": 503 }, { endStream: true });
  const calls = await call(connection());
  expect(calls.map((x) => [x.error?.code, x.error?.details])).toEqual([[14, "HTTP status 503"]]);
  expect([400, 401, 403, 404, 429, 502, 503, 504, 500].map(statusOfHttp)).toEqual([13, 16, 7, 12, 14, 14, 14, 14, 2]);
});

test("an answer that is not one uncompressed message is INTERNAL; an answer without a status is UNKNOWN", async () => {
  handler = (stream) => {
    stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
    stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
    const compressed = frame(new Uint8Array([1, 2]));
    compressed[0] = 1; // the compressed flag
    stream.end(compressed);
  };
  expect((await call(connection())).map((x) => [x.error?.code, x.error?.details])).toEqual([[13, "compressed answer, but no compression was offered"]]);
  handler = (stream) => {
    stream.respond({ ":status": 200, "content-type": "application/grpc" });
    stream.end(frame(new Uint8Array([1, 2])));
  };
  expect((await call(connection())).map((x) => [x.error?.code, x.error?.details])).toEqual([[2, "the answer ended without grpc-status"]]);
  expect(unframe(Buffer.from([0, 0, 0, 0, 5, 1, 2])) as GrpcCallError).toMatchObject({ code: 13, details: "answer of 2 bytes announced 5: not one message" });
  expect(unframe(Buffer.from([0, 0, 0])) as GrpcCallError).toMatchObject({ code: 13, details: "answer of 3 bytes is not a gRPC message" });
  expect([...(unframe(frame(new Uint8Array([9]))) as Buffer)]).toEqual([9]);
});

test("a stream the node resets fails once, as the node's failure; the next call is answered", async () => {
  handler = (stream) => stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
  const c = connection();
  const calls = await call(c);
  expect(calls.length).toBe(1);
  // Bun's HTTP/2 client reports this reset without its code (rstCode 0): UNAVAILABLE. With the
  // code it would be INTERNAL naming RST_STREAM; the SDK counts either as the node's failure.
  expect(calls[0]!.error?.details).toMatch(/^(Received RST_STREAM with code 2|connection to 127\.0\.0\.1:\d+ closed before the answer)$/);
  expect([GRPC_STATUS.INTERNAL, GRPC_STATUS.UNAVAILABLE]).toContain(calls[0]!.error!.code as 13 | 14);
  handler = answerWith(new Uint8Array([5]));
  expect((await call(c)).map((x) => [x.error, x.answer && [...x.answer]])).toEqual([[null, [5]]]);
});

test("no answer within the deadline is DEADLINE_EXCEEDED, once; the next call connects afresh and is answered", async () => {
  handler = () => {}; // silence
  const c = connection();
  const before = sessions;
  const started = performance.now();
  const calls = await call(c, new Uint8Array([1]), 150);
  expect(performance.now() - started).toBeLessThan(1500);
  expect(calls.map((x) => [x.error?.code, x.error?.details])).toEqual([[4, "Deadline exceeded"]]);
  handler = answerWith(new Uint8Array([42]));
  expect((await call(c)).map((x) => [x.error, x.answer && [...x.answer]])).toEqual([[null, [42]]]);
  expect(sessions - before).toBe(2);
});

test("a closed port is UNAVAILABLE, once, well within the deadline", async () => {
  const probe = http2.createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const started = performance.now();
  const calls = await call(connection(`127.0.0.1:${port}`), new Uint8Array([1]), 3000);
  expect(performance.now() - started).toBeLessThan(2000);
  expect(calls.length).toBe(1);
  expect(calls[0]!.error?.code).toBe(GRPC_STATUS.UNAVAILABLE);
  expect(calls[0]!.error?.details).toContain(`no answer from 127.0.0.1:${port}: `);
  expect(calls[0]!.error?.details).toContain("ECONNREFUSED");
});

test("a connection the node closes is made again by the next call", async () => {
  handler = answerWith(new Uint8Array([1]));
  const c = connection();
  expect((await call(c))[0]!.error).toBeNull();
  const before = sessions;
  // The node drops every connection it has.
  handler = (stream) => stream.session?.destroy();
  const lost = await call(c);
  expect(lost.map((x) => x.error?.code)).toEqual([GRPC_STATUS.UNAVAILABLE]);
  expect(lost[0]!.error?.details).toMatch(/^(no answer from 127\.0\.0\.1:\d+: |connection to 127\.0\.0\.1:\d+ closed before the answer$)/);
  handler = answerWith(new Uint8Array([2]));
  const after = await call(c);
  expect(after.map((x) => [x.error, x.answer && [...x.answer]])).toEqual([[null, [2]]]);
  expect(sessions - before).toBe(1);
});

test("an answer larger than 4 MiB is RESOURCE_EXHAUSTED, once, without waiting for the rest", async () => {
  handler = (stream) => {
    stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
    stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
    stream.end(frame(new Uint8Array(MAX_ANSWER_BYTES + 1)));
  };
  const calls = await call(connection());
  expect(calls.map((x) => [x.error?.code, x.error?.details])).toEqual([[8, `answer larger than ${MAX_ANSWER_BYTES} bytes`]]);
  handler = answerWith(new Uint8Array(MAX_ANSWER_BYTES));
  const largest = await call(connection());
  expect(largest.map((x) => [x.error, x.answer?.length])).toEqual([[null, MAX_ANSWER_BYTES]]);
});

test("a node going away (GOAWAY) answers the call in flight; the next call connects afresh", async () => {
  handler = (stream, headers, body) => {
    stream.session?.goaway(http2.constants.NGHTTP2_NO_ERROR);
    answerWith(new Uint8Array([7]))(stream, headers, body);
  };
  const c = connection();
  const before = sessions;
  expect((await call(c)).map((x) => [x.error, x.answer && [...x.answer]])).toEqual([[null, [7]]]);
  handler = answerWith(new Uint8Array([8]));
  expect((await call(c)).map((x) => [x.error, x.answer && [...x.answer]])).toEqual([[null, [8]]]);
  expect(sessions - before).toBe(2);
});

test("after close(), a call is UNAVAILABLE and nothing is sent", async () => {
  let requests = 0;
  handler = (stream, headers, body) => {
    requests++;
    answerWith(new Uint8Array([1]))(stream, headers, body);
  };
  const c = connection();
  await call(c);
  c.close();
  const calls = await call(c);
  expect(calls.map((x) => [x.error?.code, x.error?.details])).toEqual([[14, "connection closed"]]);
  expect(requests).toBe(1);
});

test("an open connection does not keep a process alive", async () => {
  const script = `
    import { grpcConnection } from ${JSON.stringify(new URL("../../src/anchoring/grpc-unary.ts", import.meta.url).pathname)};
    const c = grpcConnection(${JSON.stringify(address)});
    c.call("/proto.ConsensusService/submitMessage", new Uint8Array([1]), 2000, (e, a) => console.log(e === null ? "answered " + a.length : "failed " + e.code));
  `;
  handler = answerWith(new Uint8Array([1, 2]));
  const proc = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
  const timeout = setTimeout(() => proc.kill(), 10_000);
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  clearTimeout(timeout);
  expect({ out: out.trim(), code }).toEqual({ out: "answered 2", code: 0 });
});
