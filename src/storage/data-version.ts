/**
 * Whether anything was committed to the embedded database, by any connection of any process,
 * without a query: read from the WAL index's header, which every commit rewrites.
 *
 * A read through bun:sqlite costs a few microseconds before it reads anything: it opens a read
 * transaction, four `fcntl` system calls on the database and WAL-index files (issue 17's
 * profiles: the lock traffic was half of a hash's record read). Reads on the hot paths (the API
 * key's change counter, a hash's records, a log page's ids) are answered again from memory while
 * this version has not moved, and read again whenever it has.
 *
 * How it knows. In WAL mode every connection to the file shares the WAL index (`<file>-shm`,
 * https://www.sqlite.org/walformat.html §2.1). Its first 96 bytes are two copies of a 48-byte
 * header that a writer rewrites at every commit (the last frame, a change counter, the salts
 * and a checksum over them), the second copy first; a new read transaction begins at the state
 * that header names, read without a lock, and SQLite itself accepts it only when both copies
 * agree. So does this: the file is mapped shared (every process sees a commit the moment its
 * writer publishes it), both copies are compared, and while they equal the header last seen the
 * committed state is the one it named. Any difference, a writer midway included, is a new
 * version: never a false "unchanged", at worst one read more.
 *
 * Safety of the mapping: SQLite truncates or deletes the WAL index only while no connection has
 * the database open (the first to open takes an exclusive lock on it, which this process's own
 * open connection prevents), so the mapping stays valid while the connection it was made for
 * is open. `release()` is called before that connection closes; after it, and whenever the
 * header cannot be read (an in-memory database, no WAL index, an unknown header version), the
 * version is UNKNOWN and nothing may be answered from memory.
 */
import type { Database } from "bun:sqlite";
import { existsSync } from "node:fs";

/** No version can be told: read the database, and keep nothing read under it. */
export const UNKNOWN = -1;

export interface DataVersion {
  /**
   * A number that stays the same exactly while no connection has committed to the database since
   * it was returned (a commit gives a new number), or UNKNOWN. Read it before the reads whose
   * results are kept under it, never after: a commit between the two then only costs a read.
   */
  current(): number;
  /** Called before the connection closes; `current()` is UNKNOWN from then on. */
  release(): void;
}

/** The WAL-index header's version field in both copies (walformat.html: 3007000). */
const WALINDEX_VERSION = 3007000;
/** Two copies of the 48-byte header, as 32-bit words. */
const HEADER_WORDS = 12;
/** How often a missing WAL index is looked for again (it appears with the first read in WAL mode). */
const RETRY_MS = 1_000;

const versions = new WeakMap<Database, DataVersion>();

/** The version of the database `client` is open on (one per connection object). */
export function dataVersionOf(client: Database): DataVersion {
  let v = versions.get(client);
  if (v === undefined) {
    // A read first: in WAL mode a connection keeps its shared lock on the database file from its
    // first read until it closes, and that lock is what keeps any other process from deleting
    // the WAL index this maps.
    const made = walDataVersion(client.filename, () => client.query("SELECT count(*) FROM sqlite_master").get());
    versions.set(client, (v = made));
    // Released by whoever closes this connection, before it closes (see the mapping's safety).
    const close = client.close.bind(client);
    client.close = ((...args: Parameters<Database["close"]>) => {
      made.release();
      return close(...args);
    }) as Database["close"];
  }
  return v;
}

/** A version that is always UNKNOWN (PostgreSQL, tests that want every read made). */
export const NO_DATA_VERSION: DataVersion = { current: () => UNKNOWN, release() {} };

/** The version read from `<filename>-shm` (exported for tests, which craft that file; use dataVersionOf). */
export function walDataVersion(filename: string, beforeMapping: () => void = () => {}): DataVersion {
  if (filename === "" || filename === ":memory:" || filename.startsWith("file::memory:")) return NO_DATA_VERSION;
  let words: Uint32Array | null = null;
  let nextTry = 0;
  let released = false;
  const seen = new Uint32Array(HEADER_WORDS);
  let version = 0;

  function map(): Uint32Array | null {
    const now = Date.now();
    if (now < nextTry) return null;
    nextTry = now + RETRY_MS;
    const path = `${filename}-shm`;
    try {
      beforeMapping();
      if (!existsSync(path)) return null;
      const bytes = Bun.mmap(path, { shared: true, size: 4 * 2 * HEADER_WORDS });
      if (bytes.byteLength < 4 * 2 * HEADER_WORDS) return null;
      return new Uint32Array(bytes.buffer, bytes.byteOffset, 2 * HEADER_WORDS);
    } catch {
      return null;
    }
  }

  return {
    current() {
      if (released) return UNKNOWN;
      const w = words ?? (words = map());
      if (w === null) return UNKNOWN;
      // The header copies, in the order SQLite's readers read them (walIndexTryHdr).
      let same = true;
      for (let i = 0; i < HEADER_WORDS; i++) {
        const a = w[i]!;
        // A writer is midway: nothing is kept now, and whatever it publishes is a new version.
        if (a !== w[i + HEADER_WORDS]) {
          version++;
          return UNKNOWN;
        }
        if (a !== seen[i]) same = false;
      }
      if (w[0] !== WALINDEX_VERSION) return UNKNOWN;
      if (!same) {
        for (let i = 0; i < HEADER_WORDS; i++) seen[i] = w[i]!;
        version++;
      }
      return version;
    },
    release() {
      released = true;
      words = null;
    },
  };
}
