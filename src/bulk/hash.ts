/**
 * A file's SHA-256, the way the interface names a document: `sha256:` + 64 lowercase hex. Runs on
 * Node.js 20 and Bun (node:* only), in constant memory whatever the file's size: two buffers of
 * 1 MiB at most, reused, the next read in flight while the current one is hashed (the read is a
 * copy out of the page cache on the thread pool; the hash runs on this thread: the two overlap).
 *
 * Measured on a 512 MiB file, page cache warm, 2 shared cores (Xeon with SHA-NI), median of 5:
 *   sha256sum (coreutils 9.1, no SHA-NI)          ~190–230 MiB/s
 *   this, Node.js 20.20  (1 MiB, double buffer)    ~800–985 MiB/s   (4.0× sha256sum)
 *   this, Bun 1.4.5      (1 MiB, double buffer)    ~1020 MiB/s      (4.5× sha256sum)
 *   one buffer, read then hash (fh.read / fs.read)  ~790–850 MiB/s
 *   createReadStream, highWaterMark 1–4 MiB         ~480–1050 MiB/s (the widest spread)
 *   readSync loop                                   ~900–960 MiB/s   (blocks the event loop)
 * 2 and 4 MiB buffers measured no faster than 1 MiB; the machine's neighbours make ±25 % noise.
 * A small file gets buffers of its size (plus one byte, to see the end in one read; 16 KiB at
 * least), not 1 MiB: on 3,000 files of a line each, 8 at a time, Bun spent 45–99 µs of CPU a
 * file so against 144–177 µs with two fresh 1 MiB buffers each (Node.js 20: 93–106 against
 * 140–181).
 * `npm run bench` (scripts/bench/bulk.ts) measures the ratio to sha256sum again on each run.
 */
import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";

const CHUNK = 1024 * 1024;
const MIN_CHUNK = 16 * 1024;

/**
 * The digest of the file at `path`. Node's fs errors are thrown as they are, `code` included
 * (ENOENT, EACCES, EISDIR: a folder opens, its first read fails).
 */
export async function hashFile(path: string): Promise<string> {
  const file = await fs.open(path, "r");
  try {
    const hash = createHash("sha256");
    // The size only sizes the buffers: a file that grows meanwhile is still read to its end, and
    // one whose size says nothing (0 for a /proc file or a pipe) is read 16 KiB at a time at least.
    const chunk = Math.min(CHUNK, Math.max(MIN_CHUNK, (await file.stat()).size + 1));
    const buffers = [Buffer.allocUnsafe(chunk), Buffer.allocUnsafe(chunk)] as const;
    let current = 0;
    let pending = file.read(buffers[0], 0, chunk, null);
    for (;;) {
      const { bytesRead } = await pending;
      if (bytesRead === 0) break;
      const filled = buffers[current]!;
      current ^= 1;
      // The next read fills the other buffer while this one is hashed.
      pending = file.read(buffers[current]!, 0, chunk, null);
      hash.update(bytesRead === chunk ? filled : filled.subarray(0, bytesRead));
    }
    return `sha256:${hash.digest("hex")}`;
  } finally {
    await file.close();
  }
}
