/**
 * A document's DocHash (`sha256:<64 hex>`), from bytes in memory or from a stream of chunks, so
 * a large file is hashed as it is read rather than held whole.
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "./encoding.ts";

export function sha256OfBytes(bytes: Uint8Array): string {
  return "sha256:" + bytesToHex(sha256(bytes));
}

/** Hashes every chunk of `chunks` (a Node read stream, a web ReadableStream, any async iterable). */
export async function sha256OfStream(chunks: AsyncIterable<Uint8Array>): Promise<string> {
  const h = sha256.create();
  for await (const chunk of chunks) h.update(chunk);
  return "sha256:" + bytesToHex(h.digest());
}
