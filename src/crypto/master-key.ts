/**
 * The master key file: the one secret that unlocks every private key (sealed-seed.ts).
 *
 * Accepted contents (docs/signing.md §5), decided by length so no file is ambiguous:
 * - exactly 32 bytes: the raw key, unless every byte is printable ASCII. A 32-character text
 *   is almost certainly a mistake (a 128-bit key written as hex, a passphrase), and a random
 *   key is all-printable with probability (95/256)^32 ≈ 2^-46, so such a file is refused;
 * - otherwise text, surrounding ASCII whitespace ignored: 64 hexadecimal digits (either case),
 *   or standard/URL-safe base64 (padding optional) that decodes to exactly 32 bytes.
 * Anything else is refused with a message saying what was found and what is accepted.
 *
 * What we create: 64 lowercase hex digits and a newline, mode 0600, written to a temporary file
 * in the same folder, fsynced, then linked into place (link, unlike rename, never replaces a
 * file another process created meanwhile: two processes starting at once must not each create
 * a key and then encrypt with different ones), then the folder is fsynced so the name survives
 * a crash.
 *
 * Creating a key is only safe while no sealed key exists: a new master key cannot open seeds
 * sealed under a lost one. The caller decides `create` (docs/signing.md §5: only for the default
 * file inside the data folder, never for a systemd credential).
 */
import { closeSync, copyFileSync, fstatSync, linkSync, lstatSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, constants } from "node:fs";
import { createHash, randomBytes } from "node:crypto";
import { dirname, basename, join } from "node:path";
import { syncPath, writeNewFileSync } from "../lib/durable.ts";
import { checkOptions, toHex } from "./bytes.ts";
import { MasterKeyFileError, MasterKeyMissingError } from "./errors.ts";
import { MASTER_KEY_LENGTH } from "./sealed-seed.ts";

export type MasterKeyFormat = "raw" | "hex" | "base64";

export interface MasterKeyOptions {
  /** Path of the master key file. */
  readonly file: string;
  /** Whether a missing file may be created. */
  readonly create: boolean;
}

export interface LoadedMasterKey {
  readonly key: Uint8Array;
  readonly file: string;
  /** True when this call created the file; the service says so at startup. */
  readonly created: boolean;
  readonly format: MasterKeyFormat;
  /** Things an operator should fix, for a warn-level log line (for example group/world access). */
  readonly warnings: readonly string[];
}

const HEX_RE = /^[0-9a-fA-F]{64}$/;
const BASE64_RE = /^[A-Za-z0-9+/]{43}=?$|^[A-Za-z0-9_-]{43}=?$/;

/** Parses master key file contents; `{ error }` says why when they are not a key. */
export function parseMasterKey(contents: Uint8Array): { key: Uint8Array; format: MasterKeyFormat } | { error: string } {
  if (contents.length === MASTER_KEY_LENGTH) {
    if (contents.every((b) => b >= 0x20 && b <= 0x7e)) {
      return { error: "32 bytes of printable text; write the key as 64 hex digits, as base64, or as 32 raw bytes" };
    }
    return { key: new Uint8Array(contents), format: "raw" };
  }
  const text = Buffer.from(contents).toString("latin1").replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
  if (HEX_RE.test(text)) return { key: new Uint8Array(Buffer.from(text, "hex")), format: "hex" };
  if (BASE64_RE.test(text)) {
    const key = new Uint8Array(Buffer.from(text, text.includes("-") || text.includes("_") ? "base64url" : "base64"));
    if (key.length === MASTER_KEY_LENGTH) return { key, format: "base64" };
  }
  return {
    error: `${contents.length} bytes that are not a 32-byte key; accepted: 32 raw bytes, 64 hex digits, or base64 of 32 bytes`,
  };
}

/**
 * The check value a database remembers of its master key (`service_meta.master_key_check`):
 * SHA-256 of a domain string and the key, hex. It tells the right key file from a lost or swapped
 * one (app/core.ts seals the key store on a mismatch; restore says whether the configured key opens
 * the backup) without keeping the key, or anything that helps find it, in the database.
 */
export function masterKeyCheckValue(key: Uint8Array): string {
  return createHash("sha256").update("docverify/master-key-check/v1\0").update(key).digest("hex");
}

/**
 * Reads the master key file, or creates it when it is missing and `create` is true.
 * Throws `MasterKeyMissingError` (503 for record operations) when it is missing and may not be
 * created, and `MasterKeyFileError` (stop startup) when it exists but is unusable.
 */
export function loadOrCreateMasterKey(options: MasterKeyOptions): LoadedMasterKey {
  checkOptions(options, "loadOrCreateMasterKey options", ["file", "create"]);
  const { file, create } = options;
  if (typeof file !== "string" || file === "") throw new TypeError("file must be a non-empty path");
  if (typeof create !== "boolean") throw new TypeError("create must be a boolean");

  const existing = readExisting(file);
  if (existing) return existing;
  if (!create) throw new MasterKeyMissingError(file);

  const key = new Uint8Array(randomBytes(MASTER_KEY_LENGTH));
  let made: boolean;
  try {
    made = createExclusive(file, Buffer.from(`${toHex(key)}\n`));
  } catch (e) {
    throw new MasterKeyFileError(file, `cannot be created (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
  }
  if (!made) {
    // Another process created it between our read and our link: use theirs.
    const theirs = readExisting(file);
    if (theirs) return theirs;
    throw new MasterKeyFileError(file, "disappeared while being created");
  }
  return { key, file, created: true, format: "hex", warnings: [] };
}

function readExisting(file: string, flags = 0): LoadedMasterKey | null {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | flags);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return null;
    throw new MasterKeyFileError(file, `cannot be opened (${code ?? String(e)})`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new MasterKeyFileError(file, "is not a regular file");
    // A key file is tiny; refuse to read a large file into memory by mistake.
    if (st.size > 1024) throw new MasterKeyFileError(file, `${st.size} bytes is far too long for a 32-byte key`);
    const parsed = parseMasterKey(new Uint8Array(readFileSync(fd)));
    if ("error" in parsed) throw new MasterKeyFileError(file, parsed.error);
    const warnings: string[] = [];
    if ((st.mode & 0o077) !== 0) {
      warnings.push(`master key file ${file} has mode ${(st.mode & 0o777).toString(8).padStart(4, "0")}; it should be readable by its owner only (chmod 600)`);
    }
    return { key: parsed.key, file, created: false, format: parsed.format, warnings };
  } finally {
    closeSync(fd);
  }
}

/** Writes `contents` to `file` with mode 0600, only if `file` does not exist. False if it does. */
function createExclusive(file: string, contents: Buffer): boolean {
  const dir = dirname(file);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = join(dir, `.${basename(file)}.${toHex(new Uint8Array(randomBytes(6)))}.tmp`);
  // O_EXCL: never reuse a file planted at that name. The umask can only remove bits from 0600.
  writeNewFileSync(tmp, contents, 0o600);
  try {
    try {
      linkSync(tmp, file);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "EEXIST") return false;
      // Filesystems without hard links: fall back to rename after checking the name is free.
      // The check-then-rename gap is the one race left, and only on such filesystems.
      if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "ENOSYS") throw e;
      if (exists(file)) return false;
      renameSync(tmp, file);
    }
    syncPath(dir);
    return true;
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      // already renamed into place
    }
  }
}

function exists(file: string): boolean {
  try {
    lstatSync(file);
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Rotation (docs/operations.md "Rotate the master key"): the files, so a crash at any moment
// leaves a folder that opens.
//
// `docverify master-key rotate` writes the new key to FILE.next (fsynced, its name fsynced),
// switches the database to it in one transaction (every sealed key and the check value), then
// keeps the old key as FILE.previous (a hard link), renames FILE.next over FILE, reads FILE back,
// and only once it holds the key the database remembers removes FILE.previous. The database's
// check value says which key is current, so whoever opens the folder next (`settleRotation`)
// knows whether an interrupted rotation happened (FILE.next matches: finish it) or not (FILE
// matches: a FILE.next is an attempt that never committed, and is removed).

/** Where a rotation writes the new key before the database switches to it. */
export function pendingKeyFile(file: string): string {
  return `${file}.next`;
}

/** Where the replaced key stays until the new one is confirmed in place. */
export function previousKeyFile(file: string): string {
  return `${file}.previous`;
}

/** A new random master key. */
export function generateMasterKey(): Uint8Array {
  return new Uint8Array(randomBytes(MASTER_KEY_LENGTH));
}

/**
 * A short, public name for a master key: the first 16 hex digits of its check value. Printed by
 * rotation and backup so an operator can tell which key file goes with which backup.
 */
export function masterKeyId(check: string): string {
  return check.slice(0, 16);
}

/** The key in `path` (a rotation's side file: never through a link); null when there is none or it is not a key. */
function readKeyQuietly(path: string, flags = constants.O_NOFOLLOW): Uint8Array | null {
  try {
    return readExisting(path, flags)?.key ?? null;
  } catch {
    return null;
  }
}

function removeIfThere(path: string): boolean {
  try {
    unlinkSync(path);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw e;
  }
}

/**
 * Writes `key` to FILE.next (64 hex digits, mode 0600, fsynced, its name fsynced). A FILE.next
 * left by an attempt whose transaction never committed is replaced: the caller has checked that
 * the database does not use it.
 */
export function writePendingMasterKey(file: string, key: Uint8Array): void {
  const next = pendingKeyFile(file);
  removeIfThere(next);
  if (!createExclusive(next, Buffer.from(`${toHex(key)}\n`))) throw new MasterKeyFileError(next, "appeared while being written: is another rotation running?");
}

/**
 * Puts FILE.next in place of FILE, keeping the key FILE held as FILE.previous (a hard link, or a
 * copy where links are not supported). Every step is idempotent, so an interrupted call is
 * finished by calling it again.
 */
export function installPendingMasterKey(file: string, step: (name: "previous-kept") => void = () => {}): void {
  const dir = dirname(file);
  const previous = previousKeyFile(file);
  try {
    linkSync(file, previous);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // EEXIST: an interrupted install kept it already; ENOENT: FILE is gone, nothing to keep.
    if (code === "EPERM" || code === "ENOTSUP" || code === "EOPNOTSUPP" || code === "ENOSYS") copyFileSync(file, previous, constants.COPYFILE_EXCL);
    else if (code !== "EEXIST" && code !== "ENOENT") throw e;
  }
  syncPath(dir);
  step("previous-kept");
  try {
    renameSync(pendingKeyFile(file), file);
  } catch (e) {
    // Another process opening the folder finished it first: `confirmMasterKey` checks the result.
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  syncPath(dir);
}

/**
 * Reads FILE back and, when it holds the key whose check value is `check`, removes FILE.previous.
 * Throws MasterKeyFileError (FILE.previous kept) when it does not.
 */
export function confirmMasterKey(file: string, check: string): void {
  const loaded = readExisting(file);
  if (loaded === null || masterKeyCheckValue(loaded.key) !== check) {
    throw new MasterKeyFileError(file, `does not hold the new master key after the rotation; the previous key is kept at ${previousKeyFile(file)}`);
  }
  if (removeIfThere(previousKeyFile(file))) syncPath(dirname(file));
}

/**
 * What opening a folder does about a rotation a crash interrupted, given the check value the
 * database remembers: `finished` when the database had switched to FILE.next (it is put in place),
 * `discarded` when FILE.next is an attempt that never committed (removed), `confirmed` when only
 * FILE.previous was left (removed, FILE holds the database's key), null when there was nothing
 * to do or nothing this can decide (FILE matches neither: left as it is, for the operator).
 */
export function settleRotation(file: string, remembered: string): "finished" | "discarded" | "confirmed" | null {
  const next = pendingKeyFile(file);
  const pending = readKeyQuietly(next);
  // The configured file itself may be a link (DOCVERIFY_MASTER_KEY_FILE); app/core.ts refuses one inside the data folder.
  const current = readKeyQuietly(file, 0);
  const currentMatches = current !== null && masterKeyCheckValue(current) === remembered;
  if (pending !== null && masterKeyCheckValue(pending) === remembered) {
    installPendingMasterKey(file);
    confirmMasterKey(file, remembered);
    return "finished";
  }
  if (!currentMatches) return null;
  if (exists(next)) {
    removeIfThere(next);
    syncPath(dirname(file));
    return "discarded";
  }
  if (exists(previousKeyFile(file))) {
    confirmMasterKey(file, remembered);
    return "confirmed";
  }
  return null;
}
