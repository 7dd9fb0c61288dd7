/**
 * Durable file operations: the one place docverify calls fsync.
 *
 * A file's bytes survive a power cut only once the file is fsynced, and a name given by rename(2)
 * or link(2) only once its folder is. Whoever writes a file that must survive (the master key, a
 * backup, a restored database) writes it under a temporary name with these, puts it in place, and
 * then calls `syncPath` on the folder.
 */
import { closeSync, constants, fsyncSync, openSync, readSync, unlinkSync, writeSync } from "node:fs";

/** fsyncs a file or a folder by path: for a folder, makes the renames and links made in it durable. */
export function syncPath(path: string): void {
  const fd = openSync(path, constants.O_RDONLY);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Creates `path` with `mode` (O_EXCL: never a file planted at that name; the umask can only remove
 * bits), lets `fill` write to it, fsyncs and closes it. If `fill` fails the file is removed (it was
 * this call's own) and the error thrown. Throws EEXIST when `path` exists.
 */
function createDurably(path: string, mode: number, fill: (fd: number) => void): void {
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode);
  let ok = false;
  try {
    fill(fd);
    fsyncSync(fd);
    ok = true;
  } finally {
    closeSync(fd);
    if (!ok) {
      try {
        unlinkSync(path);
      } catch {
        /* already gone */
      }
    }
  }
}

function writeAll(fd: number, bytes: Uint8Array, length = bytes.length): void {
  let off = 0;
  while (off < length) off += writeSync(fd, bytes, off, length - off);
}

/** Writes `contents` to a new file `path` (mode `mode`), fsynced. Throws EEXIST when it exists. */
export function writeNewFileSync(path: string, contents: Uint8Array, mode: number): void {
  createDurably(path, mode, (fd) => writeAll(fd, contents));
}

/** Copies `from` into a new file `to` (mode `mode`), fsynced; returns the bytes copied. Throws EEXIST when `to` exists. */
export function copyToNewFileSync(from: string, to: string, mode: number): number {
  const src = openSync(from, constants.O_RDONLY);
  let total = 0;
  try {
    createDurably(to, mode, (fd) => {
      const buf = Buffer.allocUnsafe(1 << 20);
      for (;;) {
        const n = readSync(src, buf, 0, buf.length, null);
        if (n === 0) break;
        writeAll(fd, buf, n);
        total += n;
      }
    });
  } finally {
    closeSync(src);
  }
  return total;
}
