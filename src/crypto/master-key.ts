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
import { closeSync, fstatSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, constants } from "node:fs";
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

function readExisting(file: string): LoadedMasterKey | null {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY);
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
    statSync(file);
    return true;
  } catch {
    return false;
  }
}
