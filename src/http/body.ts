/**
 * Reading a JSON object body under a byte limit. The limit is enforced while the body
 * streams in: a declared `Content-Length` over it is refused before a byte is read, one within
 * it is read whole, and a chunked body is cancelled as soon as it passes the limit, so an
 * oversized request costs at most `limit` bytes of memory.
 */
import { DomainError } from "../lib/errors.ts";

/** Strict UTF-8; one decoder for every request (decoding without `stream` keeps no state between calls). */
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

export async function readJsonObject(request: Request, limit: number): Promise<Record<string, unknown>> {
  const tooLarge = () => new DomainError("PAYLOAD_TOO_LARGE", `The request body is larger than this operation's limit of ${limit} bytes.`);
  // The rest of an oversized body is never read, so the connection cannot carry another
  // request: the 413 closes it (see http/server.ts).
  const declared = request.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > limit) throw tooLarge();

  const type = request.headers.get("content-type");
  if (type !== null && type !== "application/json" && !/^application\/(?:[\w.+-]+\+)?json\s*(?:;.*)?$/i.test(type.trim())) {
    throw new DomainError("VALIDATION_FAILED", "The request body must be JSON, sent with Content-Type: application/json.", {
      body: `Content-Type ${JSON.stringify(type.slice(0, 100))} is not application/json`,
    });
  }

  let bytes: Uint8Array;
  if (declared !== null && /^\d+$/.test(declared)) {
    // A declared length within the limit (checked above): HTTP/1.1 framing delivers exactly that
    // many bytes, so the body is read whole, without the stream machinery (a tenth of a
    // verification's CPU in its profile, docs/benchmarks.md). Checked again all the same.
    bytes = new Uint8Array(await request.arrayBuffer());
    if (bytes.length > limit) throw tooLarge();
  } else bytes = await readStreamed(request, limit, tooLarge);
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw new DomainError("VALIDATION_FAILED", "The request body is not valid UTF-8.", { body: "not valid UTF-8" });
  }
  if (text.trim() === "") {
    throw new DomainError("VALIDATION_FAILED", "The request body is empty; send a JSON object.", { body: "required: a JSON object" });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new DomainError("VALIDATION_FAILED", "The request body is not valid JSON.", { body: "not valid JSON" });
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    const kind = value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`;
    throw new DomainError("VALIDATION_FAILED", `The request body must be a JSON object, not ${kind}.`, { body: `must be a JSON object, not ${kind}` });
  }
  return value as Record<string, unknown>;
}

/** A body without a declared length (chunked): read as it streams in, cancelled past `limit`. */
async function readStreamed(request: Request, limit: number, tooLarge: () => DomainError): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body !== null) {
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => {});
        throw tooLarge();
      }
      chunks.push(value);
    }
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return bytes;
}
