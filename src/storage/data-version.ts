/**
 * Whether anything was committed to the embedded database, by any connection of any process,
 * without a query: read from the WAL index's header, which every commit rewrites.
 *
 * A read through bun:sqlite costs a few microseconds before it reads anything: it opens a read
 * transaction, four `fcntl` system calls on the database and WAL-index files (in profiles the
 * lock traffic was half of a hash's record read: docs/storage.md "Reads kept while the database
 * is unchanged (SQLite)"). Reads on the hot paths (the API
 * key's change counter and a hash's records under `others()`, a log page's JSON under
 * `current()`) are answered again from memory while the version has not moved, and read again
 * whenever it has.
 *
 * How it knows. In WAL mode every connection to the file shares the WAL index (`<file>-shm`,
 * https://www.sqlite.org/walformat.html §2.1). Its first 96 bytes are two copies of a 48-byte
 * header that a writer rewrites at every commit (the last frame, a change counter, the salts
 * and a checksum over them), the second copy first; a new read transaction begins at the state
 * that header names, read without a lock, and SQLite itself accepts it only when both copies
 * agree. So does this: both copies are read with one `pread` of 96 bytes each time (the page
 * cache's copy of the file, which every process's writer updates in place, so a commit is seen
 * the moment it is published), compared with each other and with the header last seen, and while
 * they equal it the committed state is the one it named. Any difference, a writer midway
 * included, is a new version: never a false "unchanged", at worst one read more.
 *
 * The descriptor is opened once per WAL-index file and process and never closed (`openHeader`):
 * closing any descriptor of a file releases every POSIX lock the process holds on it, SQLite's
 * own lock on the WAL index included (see `openHeader`). `release()` is called before the
 * connection the version was made for closes; after it, and whenever the header cannot be read
 * (an in-memory database, no WAL index, a failed read, an unknown header version), the version is
 * UNKNOWN and nothing may be answered from memory.
 */
import type { Database } from "bun:sqlite";
import { existsSync, openSync, readSync } from "node:fs";

/** No version can be told: read the database, and keep nothing read under it. */
export const UNKNOWN = -1;

/** A value read while the version was `version`. */
export interface KeptRead<V> {
  readonly version: number;
  readonly value: V;
}

/**
 * What `read()` gives for `key`, answered from `kept` when it was read under this very `version`
 * (`current()` or `others()`), and kept under it otherwise; UNKNOWN reads every time and keeps
 * nothing. Take the version before calling (an argument is evaluated before the read): a commit
 * between the two then only costs a read more, never a stale answer. The hot paths' one way of
 * keeping a read: a hash's record heads, a log page's JSON, a receipt's record.
 */
export function readKept<K, V>(kept: { get(key: K): KeptRead<V> | undefined; set(key: K, entry: KeptRead<V>): unknown }, version: number, key: K, read: () => V): V {
  if (version !== UNKNOWN) {
    const k = kept.get(key);
    if (k !== undefined && k.version === version) return k.value;
  }
  const value = read();
  if (version !== UNKNOWN) kept.set(key, { version, value });
  return value;
}

export interface DataVersion {
  /**
   * A number that stays the same exactly while no connection has committed to the database since
   * it was returned (a commit gives a new number), or UNKNOWN. Read it before the reads whose
   * results are kept under it, never after: a commit between the two then only costs a read.
   */
  current(): number;
  /**
   * As `current()`, except that commits claimed in `claims` (the verification log's writer thread,
   * which only ever inserts log rows) leave it unchanged: what reads of every other table are kept
   * under. UNKNOWN while a claimed commit is still settling. See "Claimed commits" below.
   */
  others(): number;
  /** Where a writer of this database claims its commits (`commitClaimer`); null when no version can be told. */
  readonly claims: SharedArrayBuffer | null;
  /** Called before the connection closes; `current()` is UNKNOWN from then on. */
  release(): void;
}

/** The WAL-index header's version field in both copies (walformat.html: 3007000). */
const WALINDEX_VERSION = 3007000;
/** Two copies of the 48-byte header, as 32-bit words. */
const HEADER_WORDS = 12;
/** How often a missing WAL index is looked for again (it appears with the first read in WAL mode). */
const RETRY_MS = 1_000;

/**
 * A version of the database `client` is open on, for the one store over that connection
 * (storage/store.ts `sqliteStore` makes it on first use and owns it): each call makes a new one,
 * released when `client` closes.
 */
export function connectionDataVersion(client: Database): DataVersion {
  // A read first: in WAL mode a connection keeps its shared lock on the database file from its
  // first read until it closes, and that lock is what keeps any other process from deleting
  // the WAL index this reads.
  const made = walDataVersion(client.filename, () => client.query("SELECT count(*) FROM sqlite_master").get());
  if (made === NO_DATA_VERSION) return made;
  // Released by whoever closes this connection, before it closes (see the header comment).
  const close = client.close.bind(client);
  client.close = ((...args: Parameters<Database["close"]>) => {
    made.release();
    return close(...args);
  }) as Database["close"];
  return made;
}

/** A version that is always UNKNOWN (PostgreSQL, tests that want every read made). */
export const NO_DATA_VERSION: DataVersion = { current: () => UNKNOWN, others: () => UNKNOWN, claims: null, release() {} };

// ---------------------------------------------------------------------------------------------
// Claimed commits
//
// The organisation tier writes a log row for every verification, on the log's writer thread: a
// commit every millisecond or so under load, each a new version, after which every hash's record
// heads and the API key counter were read again although no record, key or organisation had
// changed. The writer thread therefore claims its commits, and `others()` does not move for them.
//
// The header's fields used (walformat.html §2.1, the WalIndexHdr struct, 32-bit words): iChange
// (word 2), raised by one at every commit; mxFrame (word 4), the last valid frame, which every
// commit raises (a commit writes at least one frame) and nothing else lowers within one WAL
// generation; the salts (words 8, 9), new at every WAL restart. A state of the database is told
// apart by (salts, iChange, mxFrame); mxFrame also stays apart across a rebuilt WAL index, which
// sets iChange back to 0 but recovers every frame.
//
// The claimer (the writer thread) reads the header after BEGIN IMMEDIATE, while it holds the
// write lock: no other connection can commit until it does, so that header is the newest state
// and its commit is the next one. It claims "the commit from (salts, iChange b, mxFrame m) is
// mine", commits, then reads the header again: if it shows (salts, b + 1), nobody has committed
// after it yet and its mxFrame is where this commit ended; otherwise the end stays unknown.
// `others()` accepts a change of header from S to C as claimed only when every commit between is:
// the same salts, and for each step a settled claim starting exactly where the previous ended
// (from S's iChange and mxFrame) and the last ending at C's mxFrame. Anything else (a restart, a
// commit of any other connection or process, a torn read, a claim being rewritten) counts as a
// change, so a claim can only ever cost a read, never hide one.
// ---------------------------------------------------------------------------------------------

/** How long a claim may stay unsettled before the change it would explain counts as a change. */
const SETTLE_MS = 100;
/** Claims kept (a ring): commits of the writer thread not yet seen by `others()` beyond this are treated as changes. */
const CLAIM_SLOTS = 16;
/** Per slot, 32-bit words: a sequence number (odd while the slot is written), then the claim. */
const CLAIM_WORDS = 9;
const enum Claim {
  Seq = 0,
  State = 1,
  Salt1 = 2,
  Salt2 = 3,
  FromChange = 4,
  FromFrame = 5,
  ToFrame = 6,
  ToSalt1 = 7,
  ToSalt2 = 8,
}
const PENDING = 1;
const SETTLED = 2;
/** Header words: iChange, mxFrame, the salts. */
const I_CHANGE = 2;
const MX_FRAME = 4;
const SALT1 = 8;
const SALT2 = 9;

function claimSlot(claims: Int32Array, fromChange: number): number {
  return ((fromChange >>> 0) % CLAIM_SLOTS) * CLAIM_WORDS;
}

/** A copy of the header's first copy when both copies agree and it is of the known format, else null. */
function readHeader(w: Uint32Array, into: Uint32Array): Uint32Array | null {
  for (let i = 0; i < HEADER_WORDS; i++) {
    const a = w[i]!;
    if (a !== w[i + HEADER_WORDS]) return null;
    into[i] = a;
  }
  return into[0] === WALINDEX_VERSION ? into : null;
}

/**
 * The writer thread's side: claims each of its commits (see "Claimed commits"). `begin()` right
 * after BEGIN IMMEDIATE (the write lock held), then `committed()` or `failed()`.
 */
export interface CommitClaimer {
  begin(): void;
  /** Settles the claim; the WAL's last frame as the header now says (null: not readable), for the caller's checkpoint. */
  committed(): number | null;
  failed(): void;
}

/** A claimer over the WAL index of `filename`, writing into `claims` (the main connection's `DataVersion.claims`). */
export function commitClaimer(filename: string, claims: SharedArrayBuffer): CommitClaimer {
  const ring = new Int32Array(claims);
  let headerNow: (() => Uint32Array) | null = null;
  const header = new Uint32Array(HEADER_WORDS);
  let slot = -1;
  const write = (at: number, update: () => void) => {
    Atomics.add(ring, at + Claim.Seq, 1); // odd: being written
    update();
    Atomics.add(ring, at + Claim.Seq, 1);
  };
  return {
    begin() {
      slot = -1;
      try {
        headerNow ??= openHeader(filename);
      } catch {
        return;
      }
      const h = readHeader(headerNow(), header);
      if (h === null) return;
      const at = claimSlot(ring, h[I_CHANGE]!);
      write(at, () => {
        Atomics.store(ring, at + Claim.State, PENDING);
        Atomics.store(ring, at + Claim.Salt1, h[SALT1]!);
        Atomics.store(ring, at + Claim.Salt2, h[SALT2]!);
        Atomics.store(ring, at + Claim.FromChange, h[I_CHANGE]!);
        Atomics.store(ring, at + Claim.FromFrame, h[MX_FRAME]!);
        Atomics.store(ring, at + Claim.ToFrame, 0);
        Atomics.store(ring, at + Claim.ToSalt1, 0);
        Atomics.store(ring, at + Claim.ToSalt2, 0);
      });
      slot = at;
    },
    committed() {
      const at = slot;
      slot = -1;
      if (at < 0 || headerNow === null) return null;
      const fromChange = Atomics.load(ring, at + Claim.FromChange) >>> 0;
      const h = readHeader(headerNow(), header);
      // Our commit's end is known only if nobody has committed after it yet: iChange one past
      // where it started. The salts may be new: this commit restarted the WAL (a restart alone,
      // by a writer that then rolled back, changes no data and no iChange: the same data either way).
      const known = h !== null && h[I_CHANGE] === ((fromChange + 1) >>> 0);
      write(at, () => {
        if (known) {
          Atomics.store(ring, at + Claim.ToFrame, h[MX_FRAME]!);
          Atomics.store(ring, at + Claim.ToSalt1, h[SALT1]!);
          Atomics.store(ring, at + Claim.ToSalt2, h[SALT2]!);
          Atomics.store(ring, at + Claim.State, SETTLED);
        } else Atomics.store(ring, at + Claim.State, 0);
      });
      return h === null ? null : h[MX_FRAME]!;
    },
    failed() {
      const at = slot;
      slot = -1;
      if (at >= 0) write(at, () => Atomics.store(ring, at + Claim.State, 0));
    },
  };
}

/**
 * A reader of the WAL index's two header copies, as they are at each call: `pread` on a
 * descriptor opened once per file and process. Never mapped with `Bun.mmap` and never closed: on
 * Linux, closing any descriptor of a file releases every POSIX lock the process holds on it,
 * SQLite's shared lock on the WAL index included, after which another process opening the
 * database takes itself for the first, truncates the WAL index and rebuilds it under the
 * running service (found as intermittent crashes under a backup or a second connection; a test
 * checks the lock is kept). Throws when the file is missing or too short.
 */
function openHeader(filename: string): () => Uint32Array {
  const path = `${filename}-shm`;
  let fd = headerFds.get(path);
  if (fd === undefined) headerFds.set(path, (fd = openSync(path, "r")));
  const file = fd;
  const bytes = new Uint8Array(4 * 2 * HEADER_WORDS);
  const words = new Uint32Array(bytes.buffer);
  if (readSync(file, bytes, 0, bytes.length, 0) < bytes.length) throw new Error("WAL index too short");
  // The header as it is now, in the same array each time; all zeros when it cannot be read (no
  // header of the known format: UNKNOWN, nothing kept).
  return () => {
    try {
      if (readSync(file, bytes, 0, bytes.length, 0) < bytes.length) words.fill(0);
    } catch {
      words.fill(0);
    }
    return words;
  };
}
/**
 * One descriptor per WAL index and process, kept open for the process's life (see openHeader): the
 * one module-level table storage keeps, because what it guards is the process's. POSIX locks
 * belong to the process, not to a connection or a store, so no owner narrower than the process
 * may close a descriptor here while any connection of the process (another store's, the log's
 * writer thread's, a second service's in the same process) has the database open; and one opened
 * per store and never closed would leak a descriptor for every store made.
 */
const headerFds = new Map<string, number>();

/**
 * Whether the header went from `from` to `to` through claimed commits only: "claimed";
 * "restarted" (claimed commits, none at all included, then a WAL restart without a commit: the
 * state they reached is written to `end`); "settling" (a claim on the way is still being
 * committed or written: decide later); or "changed".
 *
 * A WAL restart alone (new salts, no frame, the same iChange) changes no data: a writer restarts
 * the WAL only once every frame is in the database file, and SQLite writes the restart when a
 * write transaction begins, before (and whether or not) it commits.
 */
function throughClaims(ring: Int32Array, from: Uint32Array, to: Uint32Array, end: Uint32Array): "claimed" | "restarted" | "settling" | "changed" {
  if (from[0] !== WALINDEX_VERSION) return "changed";
  const steps = (to[I_CHANGE]! - from[I_CHANGE]!) >>> 0;
  if (steps > CLAIM_SLOTS) return "changed";
  // The state the chain has reached: each step must start exactly there.
  let frame = from[MX_FRAME]!;
  let s1 = from[SALT1]!;
  let s2 = from[SALT2]!;
  for (let j = 0; j < steps; j++) {
    const change = (from[I_CHANGE]! + j) >>> 0;
    const at = claimSlot(ring, change);
    const seq = Atomics.load(ring, at + Claim.Seq);
    if ((seq & 1) === 1) return "settling"; // being written: read it once written
    const state = Atomics.load(ring, at + Claim.State);
    const salt1 = Atomics.load(ring, at + Claim.Salt1) >>> 0;
    const salt2 = Atomics.load(ring, at + Claim.Salt2) >>> 0;
    const fromChange = Atomics.load(ring, at + Claim.FromChange) >>> 0;
    const fromFrame = Atomics.load(ring, at + Claim.FromFrame) >>> 0;
    const toFrame = Atomics.load(ring, at + Claim.ToFrame) >>> 0;
    const toSalt1 = Atomics.load(ring, at + Claim.ToSalt1) >>> 0;
    const toSalt2 = Atomics.load(ring, at + Claim.ToSalt2) >>> 0;
    if (Atomics.load(ring, at + Claim.Seq) !== seq) return "settling";
    if (fromChange !== change || salt1 !== s1 || salt2 !== s2 || fromFrame !== frame) return "changed";
    if (state === PENDING) return "settling"; // this very commit, its claim not yet settled
    if (state !== SETTLED) return "changed";
    // Within one WAL generation a commit only adds frames; across a restart (new salts) it starts over.
    if (toSalt1 === s1 && toSalt2 === s2 && toFrame <= frame) return "changed";
    frame = toFrame;
    s1 = toSalt1;
    s2 = toSalt2;
  }
  if (frame === to[MX_FRAME] && s1 === to[SALT1] && s2 === to[SALT2]) return steps === 0 ? "changed" : "claimed";
  if (to[MX_FRAME] === 0 && (s1 !== to[SALT1] || s2 !== to[SALT2])) {
    end.fill(0);
    end[0] = WALINDEX_VERSION;
    end[I_CHANGE] = to[I_CHANGE]!;
    end[MX_FRAME] = frame;
    end[SALT1] = s1;
    end[SALT2] = s2;
    return "restarted";
  }
  return "changed";
}

/** The version read from `<filename>-shm` (exported for tests, which craft that file; use connectionDataVersion). */
export function walDataVersion(filename: string, beforeOpening: () => void = () => {}): DataVersion {
  if (filename === "" || filename === ":memory:" || filename.startsWith("file::memory:")) return NO_DATA_VERSION;
  let headerNow: (() => Uint32Array) | null = null;
  let nextTry = 0;
  let released = false;
  const seen = new Uint32Array(HEADER_WORDS);
  let version = 0;
  const claims = new SharedArrayBuffer(4 * CLAIM_SLOTS * CLAIM_WORDS);
  const ring = new Int32Array(claims);
  /** The header `others()` last accepted (all zeros: none yet), and its number. */
  const seenByOthers = new Uint32Array(HEADER_WORDS);
  /** Where `others()` reads the header into. */
  const latest = new Uint32Array(HEADER_WORDS);
  let othersVersion = 0;
  let settlingSince = 0;
  const chainEnd = new Uint32Array(HEADER_WORDS);

  /** The header's reader, once the WAL index exists (looked for again at most every RETRY_MS). */
  function opened(): (() => Uint32Array) | null {
    const now = Date.now();
    if (now < nextTry) return null;
    nextTry = now + RETRY_MS;
    const path = `${filename}-shm`;
    try {
      beforeOpening();
      if (!existsSync(path)) return null;
      return openHeader(filename);
    } catch {
      return null;
    }
  }

  return {
    current() {
      if (released) return UNKNOWN;
      const now = (headerNow ??= opened());
      if (now === null) return UNKNOWN;
      const w = now();
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
    others() {
      if (released) return UNKNOWN;
      const now = (headerNow ??= opened());
      if (now === null) return UNKNOWN;
      const w = now();
      const h = readHeader(w, latest);
      if (h === null) return UNKNOWN;
      let same = true;
      for (let i = 0; i < HEADER_WORDS; i++) {
        if (h[i] !== seenByOthers[i]) {
          same = false;
          break;
        }
      }
      if (!same) {
        let through = throughClaims(ring, seenByOthers, h, chainEnd);
        if (through === "settling") {
          // A claim settles within its commit's sync; one that does not (a writer thread ended
          // mid-commit) stops counting after SETTLE_MS.
          const t = Date.now();
          if (settlingSince === 0) settlingSince = t;
          if (t - settlingSince <= SETTLE_MS) return UNKNOWN;
          through = "changed";
        }
        settlingSince = 0;
        if (through === "changed") othersVersion++;
        // After a restart the reference stays where the claims reached (the state the restart
        // left the data in): the commit that follows started there, and is judged from there.
        seenByOthers.set(through === "restarted" ? chainEnd : h);
      }
      return othersVersion;
    },
    claims,
    release() {
      released = true;
      headerNow = null;
    },
  };
}
