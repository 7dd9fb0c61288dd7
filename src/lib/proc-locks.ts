/**
 * Who holds a lock on a file, from the kernel's lock table (/proc/locks, Linux).
 *
 * The kernel drops a process's POSIX locks the moment it exits, however it exits, so a lock in the
 * table is held by a live process: unlike a pid file, it cannot be stale. `/proc/locks` is readable
 * by every user and lists the locks of every process in the reader's pid namespace.
 */
import { readFileSync, statSync } from "node:fs";

/** The device numbers /proc/locks prints ("fe:01"), as stat's dev splits into them on Linux. */
export function devOf(dev: number): string {
  const d = BigInt(dev);
  const major = ((d >> 8n) & 0xfffn) | ((d >> 32n) & ~0xfffn);
  const minor = (d & 0xffn) | ((d >> 12n) & ~0xffn);
  return `${major.toString(16).padStart(2, "0")}:${minor.toString(16).padStart(2, "0")}`;
}

/**
 * The pids of the other processes holding a lock on any of `files` (0 when the kernel does not
 * say), or null when /proc/locks cannot be read (not Linux): the caller then says it could not
 * tell. Files that do not exist are skipped; this process's own locks are not counted.
 */
export function lockHolders(files: readonly string[]): number[] | null {
  let table: string;
  try {
    table = readFileSync("/proc/locks", "utf8");
  } catch {
    return null;
  }
  const ids = new Set<string>();
  for (const file of files) {
    try {
      const st = statSync(file);
      ids.add(`${devOf(st.dev)}:${st.ino}`);
    } catch {
      /* not there */
    }
  }
  const pids = new Set<number>();
  for (const line of table.split("\n")) {
    // "12: POSIX  ADVISORY  READ 4242 fe:01:131090 128 128"; blocked waiters carry a "->".
    const fields = line.replace(/->\s*/, "").trim().split(/\s+/);
    if (fields.length < 6) continue;
    const pid = Number(fields[4]);
    const id = fields[5]!;
    if (pid === process.pid) continue;
    if (ids.has(id.toLowerCase())) pids.add(pid);
  }
  return [...pids];
}
