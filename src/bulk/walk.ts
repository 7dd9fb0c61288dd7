/**
 * The files a bulk command works on, from the paths given on its command line. Runs on Node.js 20
 * and Bun (node:* only).
 *
 * - A file argument is always yielded, whatever --include/--exclude say: it was named.
 * - A folder argument is walked recursively; each of its files is yielded when its path relative
 *   to the folder matches some include pattern (all do when there is none) and no exclude pattern
 *   (src/bulk/glob.ts). A folder an exclude pattern's `DIR/**` covers is not entered at all.
 * - The order is deterministic: arguments in the order given; inside a folder, names sorted by
 *   UTF-16 code unit (not by locale), depth first. The same path is yielded once.
 * - Symbolic links are followed, to files and to folders; a link back to a folder being walked
 *   (a loop) is yielded with an error, not followed.
 * - Whatever cannot be read is yielded with `error` (a sentence, no path in it), never thrown: a
 *   missing argument, a dangling link, a folder or file without permission, a FIFO, a socket or a
 *   device (not a regular file). The caller reports it and goes on with the rest.
 * Yielded paths are the argument joined with the relative path (`docs` + `a/b.pdf` → `docs/a/b.pdf`).
 */
import { constants, promises as fs, type Dirent, type Stats } from "node:fs";
import { join, normalize } from "node:path";
import { compileGlob, type Glob } from "./glob.ts";

export interface WalkEntry {
  path: string;
  error?: string;
}

export interface WalkOptions {
  include?: string[];
  exclude?: string[];
}

export async function* walk(paths: string[], options: WalkOptions = {}): AsyncIterable<WalkEntry> {
  const include = (options.include ?? []).map(compileGlob);
  const exclude = (options.exclude ?? []).map(compileGlob);
  // `DIR/**` (and `**/DIR/**`): every file under DIR is excluded, so DIR is not even listed.
  const prune = (options.exclude ?? []).filter((p) => p.endsWith("/**") && p.length > 3).map((p) => compileGlob(p.slice(0, -3)));
  const seen = new Set<string>();
  const wanted = (rel: string) => (include.length === 0 || include.some((g) => g.matches(rel))) && !exclude.some((g) => g.matches(rel));

  for (const arg of paths) {
    const { stats, error } = await statOf(arg);
    if (stats?.isDirectory()) {
      for await (const entry of walkFolder(arg, "", [identity(stats)], { wanted, prune })) {
        if (seen.has(normalize(entry.path))) continue;
        seen.add(normalize(entry.path));
        yield entry;
      }
      continue;
    }
    if (seen.has(normalize(arg))) continue;
    seen.add(normalize(arg));
    yield stats === undefined ? { path: arg, error: error! } : await fileEntry(arg, stats);
  }
}

interface Filters {
  wanted: (rel: string) => boolean;
  prune: Glob[];
}

async function* walkFolder(root: string, rel: string, ancestors: string[], filters: Filters): AsyncGenerator<WalkEntry> {
  const folder = rel === "" ? root : join(root, rel);
  let entries: Dirent[];
  try {
    entries = await fs.readdir(folder, { withFileTypes: true });
  } catch (e) {
    yield { path: folder, error: `cannot list this folder: ${reason(e)}` };
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const childRel = rel === "" ? entry.name : `${rel}/${entry.name}`;
    const path = join(root, childRel);
    // A regular file (not a link) needs no stat: the listing said what it is. A file not wanted
    // costs nothing more.
    if (entry.isFile()) {
      if (filters.wanted(childRel)) yield await readable(path);
      continue;
    }
    const { stats, error } = await statOf(path);
    if (stats?.isDirectory()) {
      if (filters.prune.some((g) => g.matches(childRel))) continue;
      const id = identity(stats);
      if (ancestors.includes(id)) {
        if (filters.wanted(childRel)) yield { path, error: "symbolic link loop: it leads back to a folder being walked, not followed" };
        continue;
      }
      yield* walkFolder(root, childRel, [...ancestors, id], filters);
      continue;
    }
    if (!filters.wanted(childRel)) continue;
    yield stats === undefined ? { path, error: error! } : await fileEntry(path, stats);
  }
}

/** stat, links followed; on failure the reason, a link whose target is missing said so. */
async function statOf(path: string): Promise<{ stats?: Stats; error?: string }> {
  try {
    return { stats: await fs.stat(path) };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") {
      try {
        const target = await fs.readlink(path);
        return { error: `dangling symbolic link: its target ${JSON.stringify(target)} does not exist` };
      } catch {
        /* not a link: the path itself is missing */
      }
    }
    return { error: reason(e) };
  }
}

/** A folder's identity, device and inode: the same folder reached by two paths has one. */
function identity(stats: Stats): string {
  return `${stats.dev}:${stats.ino}`;
}

async function fileEntry(path: string, stats: Stats): Promise<WalkEntry> {
  return stats.isFile() ? await readable(path) : { path, error: `not a regular file (${kindOf(stats)})` };
}

/** A regular file, with an error when this process may not read it. */
async function readable(path: string): Promise<WalkEntry> {
  try {
    await fs.access(path, constants.R_OK);
  } catch (e) {
    return { path, error: reason(e) };
  }
  return { path };
}

function kindOf(stats: Stats): string {
  if (stats.isFIFO()) return "a FIFO";
  if (stats.isSocket()) return "a socket";
  if (stats.isCharacterDevice()) return "a character device";
  if (stats.isBlockDevice()) return "a block device";
  return "not a file";
}

const REASONS: Record<string, string> = {
  ENOENT: "no such file or folder",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  ELOOP: "symbolic link loop (too many levels of links)",
  ENOTDIR: "a path component is not a folder",
  ENAMETOOLONG: "name too long",
  EIO: "input/output error",
};

/** A sentence for an fs error: the code's meaning, and the code for whoever searches it. */
export function reason(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  if (code !== undefined && code in REASONS) return `${REASONS[code]} (${code})`;
  return code !== undefined ? `${(e as Error).message.split(",")[0]} (${code})` : String((e as Error).message ?? e);
}
