/**
 * Reading a JSON object body under a byte limit. The limit is enforced while the body
 * streams in: a declared `Content-Length` over it is refused before a byte is read, and a
 * chunked body is cancelled as soon as it passes the limit, so an oversized request costs
 * at most `limit` bytes of memory.
 */
import { DomainError } from "../lib/errors.ts";

export async function readJsonObject(request: Request, limit: number): Promise<Record<string, unknown>> {
  const tooLarge = () => new DomainError("PAYLOAD_TOO_LARGE", `The request body is larger than this operation's limit of ${limit} bytes.`);
  // The rest of an oversized body is never read, so the connection cannot carry another
  // request: the 413 closes it (see http/server.ts).
  const declared = request.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > limit) throw tooLarge();

  const type = request.headers.get("content-type");
  if (type !== null && !/^application\/(?:[\w.+-]+\+)?json\s*(?:;.*)?$/i.test(type.trim())) {
    throw new DomainError("VALIDATION_FAILED", "The request body must be JSON, sent with Content-Type: application/json.", {
      body: `Content-Type ${JSON.stringify(type.slice(0, 100))} is not application/json`,
    });
  }

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
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
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
