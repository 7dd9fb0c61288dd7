/**
 * HTTP/1.1 over a raw socket, for requests `fetch` will not send: any `Host` (absent, empty,
 * malformed), any method, any framing. One request per connection; the reply is everything
 * the server wrote until it closed the connection or `timeoutMs` passed.
 */
import net from "node:net";

export interface RawReply {
  /** Every byte the server wrote, as latin1 text. */
  readonly raw: string;
  /** The first response's status, or null when the server wrote nothing parseable. */
  readonly status: number | null;
  /** The first response's headers, names lower-cased. */
  readonly headers: ReadonlyMap<string, string>;
  /** The first response's body (content-length or chunked framing decoded). */
  readonly body: string;
}

export function rawRequest(port: number, request: string | Uint8Array, options: { host?: string; timeoutMs?: number } = {}): Promise<RawReply> {
  const timeoutMs = options.timeoutMs ?? 5000;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(parseReply(Buffer.concat(chunks).toString("latin1")));
    };
    const socket = net.connect(port, options.host ?? "127.0.0.1", () => socket.write(request));
    socket.on("data", (d: Buffer) => chunks.push(d));
    socket.on("end", finish);
    socket.on("close", finish);
    socket.on("error", finish);
    const timer = setTimeout(finish, timeoutMs);
  });
}

export function parseReply(all: string): RawReply {
  // Interim 1xx responses (100 Continue to `Expect: 100-continue`) precede the real one.
  let raw = all;
  while (/^HTTP\/1\.[01] 1\d\d /.test(raw) && raw.includes("\r\n\r\n")) raw = raw.slice(raw.indexOf("\r\n\r\n") + 4);
  const headers = new Map<string, string>();
  const headEnd = raw.indexOf("\r\n\r\n");
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(raw);
  if (m === null || headEnd < 0) return { raw: all, status: null, headers, body: "" };
  for (const line of raw.slice(0, headEnd).split("\r\n").slice(1)) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  let rest = raw.slice(headEnd + 4);
  let body = rest;
  const length = headers.get("content-length");
  if (length !== undefined) body = rest.slice(0, Number(length));
  else if (headers.get("transfer-encoding")?.toLowerCase() === "chunked") {
    body = "";
    for (;;) {
      const eol = rest.indexOf("\r\n");
      if (eol < 0) break;
      const size = parseInt(rest.slice(0, eol), 16);
      if (!(size > 0)) break;
      body += rest.slice(eol + 2, eol + 2 + size);
      rest = rest.slice(eol + 2 + size + 2);
    }
  }
  return { raw: all, status: Number(m[1]), headers, body: Buffer.from(body, "latin1").toString("utf8") };
}

/** A request's bytes: `headers` in order, `null` host meaning no Host header at all. */
export function requestText(method: string, target: string, options: { host?: string | null; headers?: [string, string][]; body?: string; version?: string } = {}): string {
  const lines = [`${method} ${target} ${options.version ?? "HTTP/1.1"}`];
  if (options.host !== null) lines.push(`Host: ${options.host ?? "localhost"}`);
  for (const [k, v] of options.headers ?? []) lines.push(`${k}: ${v}`);
  if (options.body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(options.body)}`);
  lines.push("Connection: close");
  return lines.join("\r\n") + "\r\n\r\n" + (options.body ?? "");
}
