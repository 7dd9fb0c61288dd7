/**
 * Unary gRPC calls over one HTTP/2 connection (cleartext, prior knowledge), for the SDK's
 * channel to a consensus node (hedera-ledger.ts). The SDK builds, signs and decodes every request
 * and answer itself; this is only the wire under it, in place of `@grpc/grpc-js`, whose layers
 * (resolving, retrying and load-balancing calls, filters, metadata objects) over `node:http2`
 * made a submission through the SDK cost close to twice the CPU on the API's thread it costs over
 * this, the SDK's own work included. Measurements, and the bare call's cost: docs/benchmarks.md
 * "Record creation".
 *
 * What a call answers, as grpc-js would (the SDK maps it with `GrpcServiceError._fromResponse`,
 * which reads `code` and `details`):
 * - the answer's message bytes, when the node ends the call with `grpc-status: 0`;
 * - `{ code, details }` for any other status, in the trailers or a trailers-only answer
 *   (`grpc-message` percent-decoded), for an HTTP status other than 200 (mapped as the gRPC
 *   specification maps it), for an answer that is not one uncompressed message;
 * - UNAVAILABLE (14) when the connection cannot be made or is lost (or the node refuses or
 *   cancels the stream), INTERNAL (13) for a stream the node resets otherwise (the message names
 *   RST_STREAM, as grpc-js's does). The SDK counts both as the node's failure, never an answer;
 *   which of the two a reset gives depends on how Bun's HTTP/2 client reports it;
 * - RESOURCE_EXHAUSTED (8) for an answer larger than grpc-js's default limit (4 MiB), cancelled
 *   as soon as it passes it;
 * - DEADLINE_EXCEEDED (4) when no answer comes within the deadline (also sent to the node as
 *   `grpc-timeout`); the stream is cancelled and the connection dropped, so a node that stopped
 *   answering is connected to afresh by the next call.
 *
 * A node that sends GOAWAY gets no new call on that connection (the next call connects afresh);
 * the calls in flight on it still end as the node answers them.
 *
 * Each callback is called exactly once. The connection does not keep the process alive; a call in
 * flight does (its deadline timer), until it is answered.
 */
import http2 from "node:http2";

export const GRPC_STATUS = {
  OK: 0,
  UNKNOWN: 2,
  DEADLINE_EXCEEDED: 4,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

/** The largest answer message taken: grpc-js's default receive limit (4 MiB). */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/** An error as grpc-js reports one: the SDK reads `code` and `details`. */
export class GrpcCallError extends Error {
  override readonly name = "GrpcCallError";
  constructor(
    readonly code: number,
    readonly details: string,
  ) {
    super(`${code} ${details}`);
  }
}

export type UnaryCallback = (error: GrpcCallError | null, answer?: Buffer) => void;

/**
 * What a call tells its caller about whether its request can have left this machine: `sent()` is
 * called once the connection that carries it is established (at once if it already is). A call
 * that ends without it being called never reached the node: its connection was never made
 * (refused, no route, no answer to the handshake), and HTTP/2 writes nothing before it is.
 */
export interface CallWatch {
  sent(): void;
}

export interface GrpcConnection {
  /** Calls `path` (`/proto.Service/method`) with `request`; `callback` gets the answer's message. */
  call(path: string, request: Uint8Array, deadlineMs: number, callback: UnaryCallback, watch?: CallWatch): void;
  /** Closes the connection; calls in flight end UNAVAILABLE. */
  close(): void;
}

/** The gRPC status for an HTTP status other than 200 (gRPC's "HTTP to gRPC status code mapping"). */
export function statusOfHttp(status: number): number {
  if (status === 400) return GRPC_STATUS.INTERNAL;
  if (status === 401) return GRPC_STATUS.UNAUTHENTICATED;
  if (status === 403) return GRPC_STATUS.PERMISSION_DENIED;
  if (status === 404) return GRPC_STATUS.UNIMPLEMENTED;
  if (status === 429 || status === 502 || status === 503 || status === 504) return GRPC_STATUS.UNAVAILABLE;
  return GRPC_STATUS.UNKNOWN;
}

function decodeMessage(raw: unknown): string {
  if (typeof raw !== "string") return "";
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** A message as gRPC frames it: 5-byte prefix (flag 0 for uncompressed, length), then the bytes. */
export function frame(message: Uint8Array): Buffer {
  const framed = Buffer.allocUnsafe(5 + message.length);
  framed[0] = 0;
  framed.writeUInt32BE(message.length, 1);
  framed.set(message, 5);
  return framed;
}

/** The one message of a unary answer's body: 5-byte prefix (flag 0, length), then the bytes. */
export function unframe(body: Buffer): Buffer | GrpcCallError {
  if (body.length < 5) return new GrpcCallError(GRPC_STATUS.INTERNAL, `answer of ${body.length} bytes is not a gRPC message`);
  if (body[0] !== 0) return new GrpcCallError(GRPC_STATUS.INTERNAL, "compressed answer, but no compression was offered");
  const length = body.readUInt32BE(1);
  if (body.length !== 5 + length) return new GrpcCallError(GRPC_STATUS.INTERNAL, `answer of ${body.length - 5} bytes announced ${length}: not one message`);
  return body.subarray(5);
}

/** A connection to `address` (`host:port`), made at the first call and again after it is lost. */
export function grpcConnection(address: string): GrpcConnection {
  let session: http2.ClientHttp2Session | null = null;
  let closed = false;

  /** Sessions whose connection was established, and the calls on the others waiting to know. */
  const connected = new WeakSet<http2.ClientHttp2Session>();
  const waiting = new WeakMap<http2.ClientHttp2Session, CallWatch[]>();

  const drop = (s: http2.ClientHttp2Session): void => {
    if (session === s) session = null;
    if (!s.destroyed) s.destroy();
  };

  const open = (): http2.ClientHttp2Session => {
    if (session !== null && !session.closed && !session.destroyed) return session;
    const s = http2.connect(`http://${address}`);
    // Errors reach each call through its stream; the session's own only ends it.
    s.on("error", () => drop(s));
    // The node is going away: no new call on this connection; those in flight may still end.
    s.on("goaway", () => {
      if (session === s) session = null;
    });
    s.on("close", () => {
      if (session === s) session = null;
    });
    s.once("connect", () => {
      connected.add(s);
      const watches = waiting.get(s) ?? [];
      waiting.delete(s);
      for (const w of watches) w.sent();
    });
    s.unref();
    session = s;
    return s;
  };

  return {
    call(path, request, deadlineMs, callback, watch) {
      let done = false;
      const finish = (error: GrpcCallError | null, answer?: Buffer): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        callback(error, answer);
      };
      const timer = setTimeout(() => {
        finish(new GrpcCallError(GRPC_STATUS.DEADLINE_EXCEEDED, "Deadline exceeded"));
        if (stream !== null && !stream.destroyed) stream.close(http2.constants.NGHTTP2_CANCEL);
        if (s !== null) drop(s);
      }, deadlineMs);
      if (closed) return finish(new GrpcCallError(GRPC_STATUS.UNAVAILABLE, "connection closed"));
      let s: http2.ClientHttp2Session | null = null;
      let stream: http2.ClientHttp2Stream | null = null;
      try {
        s = open();
        stream = s.request({
          ":method": "POST",
          ":path": path,
          "content-type": "application/grpc",
          te: "trailers",
          "grpc-timeout": `${Math.max(1, Math.ceil(deadlineMs))}m`,
        });
      } catch (e) {
        if (s !== null) drop(s);
        return finish(new GrpcCallError(GRPC_STATUS.UNAVAILABLE, `no connection to ${address}: ${e instanceof Error ? e.message : String(e)}`));
      }
      if (watch !== undefined) {
        if (connected.has(s)) watch.sent();
        else {
          const watches = waiting.get(s);
          if (watches === undefined) waiting.set(s, [watch]);
          else watches.push(watch);
        }
      }
      let httpStatus = 0;
      let grpcStatus: number | null = null;
      let grpcMessage = "";
      const chunks: Buffer[] = [];
      const readStatus = (headers: http2.IncomingHttpHeaders): void => {
        const raw = headers["grpc-status"];
        if (raw !== undefined) {
          const n = Number(raw);
          grpcStatus = Number.isInteger(n) && n >= 0 ? n : GRPC_STATUS.UNKNOWN;
          grpcMessage = decodeMessage(headers["grpc-message"]);
        }
      };
      stream.on("response", (headers) => {
        httpStatus = Number(headers[":status"]);
        readStatus(headers);
      });
      stream.on("trailers", readStatus);
      let received = 0;
      stream.on("data", (chunk: Buffer) => {
        received += chunk.length;
        if (received <= MAX_ANSWER_BYTES + 5) return void chunks.push(chunk);
        finish(new GrpcCallError(GRPC_STATUS.RESOURCE_EXHAUSTED, `answer larger than ${MAX_ANSWER_BYTES} bytes`));
        stream!.close(http2.constants.NGHTTP2_CANCEL);
      });
      // Without an answer: reset by the node (RST_STREAM, reported by Bun as an end or a close
      // without response headers), or the connection lost or never made (an error).
      const unanswered = (): void => {
        const code = stream!.rstCode;
        if (code === undefined || code === http2.constants.NGHTTP2_NO_ERROR || code === http2.constants.NGHTTP2_REFUSED_STREAM || code === http2.constants.NGHTTP2_CANCEL) {
          finish(new GrpcCallError(GRPC_STATUS.UNAVAILABLE, `connection to ${address} closed before the answer`));
        } else {
          finish(new GrpcCallError(GRPC_STATUS.INTERNAL, `Received RST_STREAM with code ${code}`));
        }
      };
      stream.on("end", () => {
        if (httpStatus === 0) return unanswered();
        if (httpStatus !== 200 && grpcStatus === null) return finish(new GrpcCallError(statusOfHttp(httpStatus), `HTTP status ${httpStatus}`));
        if (grpcStatus === null) return finish(new GrpcCallError(GRPC_STATUS.UNKNOWN, "the answer ended without grpc-status"));
        if (grpcStatus !== GRPC_STATUS.OK) return finish(new GrpcCallError(grpcStatus, grpcMessage));
        const answer = unframe(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
        if (answer instanceof GrpcCallError) finish(answer);
        else finish(null, answer);
      });
      stream.on("close", unanswered);
      stream.on("error", (e: Error) => {
        finish(new GrpcCallError(GRPC_STATUS.UNAVAILABLE, `no answer from ${address}: ${e.message}`));
        drop(s!);
      });
      stream.end(frame(request));
    },
    close() {
      closed = true;
      if (session !== null) drop(session);
    },
  };
}
