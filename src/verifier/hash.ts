/**
 * A document's DocHash (`sha256:<64 hex>`), from bytes in memory or from a stream of chunks, so
 * a large file is hashed as it is read rather than held whole.
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "./encoding.ts";

export function sha256OfBytes(bytes: Uint8Array): string {
  return "sha256:" + bytesToHex(sha256(bytes));
}

/**
 * Hashes every chunk of `chunks`: a web ReadableStream (a browser File's `stream()`), read through
 * its reader since not every browser makes it async-iterable, or any async iterable (a Node.js
 * read stream).
 */
export async function sha256OfStream(chunks: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>): Promise<string> {
  const h = sha256.create();
  if (typeof (chunks as ReadableStream<Uint8Array>).getReader === "function") {
    const reader = (chunks as ReadableStream<Uint8Array>).getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        h.update(value);
      }
    } finally {
      reader.releaseLock();
    }
  } else {
    for await (const chunk of chunks as AsyncIterable<Uint8Array>) h.update(chunk);
  }
  return "sha256:" + bytesToHex(h.digest());
}
