/**
 * A file's SHA-256, the way the interface names a document: `sha256:` + 64 lowercase hex. Runs on
 * Node.js 20 and Bun (node:* only), in constant memory whatever the file's size: two reused
 * 1 MiB buffers, the next read in flight while the current one is hashed (the read is a copy out
 * of the page cache on the thread pool; the hash runs on this thread, so the two overlap).
 *
 * Measured on a 512 MiB file, page cache warm, 2 shared cores (Xeon with SHA-NI), median of 5:
 *   sha256sum (coreutils 9.1, no SHA-NI)          ~190–230 MiB/s
 *   this, Node.js 20.20  (1 MiB, double buffer)    ~800–985 MiB/s   (4.0× sha256sum)
 *   this, Bun 1.4.5      (1 MiB, double buffer)    ~1020 MiB/s      (4.5× sha256sum)
 *   one buffer, read then hash (fh.read / fs.read)  ~790–850 MiB/s
 *   createReadStream, highWaterMark 1–4 MiB         ~480–1050 MiB/s (the widest spread)
 *   readSync loop                                   ~900–960 MiB/s   (blocks the event loop)
 * 2 and 4 MiB buffers measured no faster than 1 MiB; the machine's neighbours make ±25 % noise.
 * `npm run bench` (scripts/bench/bulk.ts) measures the ratio to sha256sum again on each run.
 */
import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";

const CHUNK = 1024 * 1024;

/**
 * The digest of the file at `path`. Node's fs errors are thrown as they are, `code` included
 * (ENOENT, EACCES, EISDIR: a folder opens, its first read fails).
 */
export async function hashFile(path: string): Promise<string> {
  const file = await fs.open(path, "r");
  try {
    const hash = createHash("sha256");
    const buffers = [Buffer.allocUnsafe(CHUNK), Buffer.allocUnsafe(CHUNK)] as const;
    let current = 0;
    let pending = file.read(buffers[0], 0, CHUNK, null);
    for (;;) {
      const { bytesRead } = await pending;
      if (bytesRead === 0) break;
      const filled = buffers[current]!;
      current ^= 1;
      // The next read fills the other buffer while this one is hashed.
      pending = file.read(buffers[current]!, 0, CHUNK, null);
      hash.update(bytesRead === CHUNK ? filled : filled.subarray(0, bytesRead));
    }
    return `sha256:${hash.digest("hex")}`;
  } finally {
    await file.close();
  }
}
