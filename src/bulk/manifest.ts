/**
 * The manifest: one JSON line per event of a file's record, appended as it happens. Each line is
 * one write() of a whole line, so a process killed at any moment (kill -9) leaves at most a torn
 * last line, which the reader ignores and the next writer closes off with a newline before its
 * first line. fsync every FSYNC_EVERY lines and at the end bounds what a power cut can lose; a
 * record lost that way is found again on the next run (the service answers 200 with it).
 */
import { closeSync, fsyncSync, openSync, readFileSync, writeSync, fstatSync, readSync } from "node:fs";

export type ManifestState = "created" | "existing" | "anchored" | "verified_org" | "failed" | "revoked";

export interface ManifestLine {
  readonly path: string;
  readonly hash?: string;
  readonly recordId?: string;
  readonly state: ManifestState;
  /** When the event was written (ISO 8601). */
  readonly at: string;
  readonly authenticatedAt?: string;
  readonly anchorState?: string;
  readonly verifyUrl?: string;
  readonly receipt?: string;
  readonly reason?: string;
  /** For `failed`: an error code of the service (VALIDATION_FAILED…) or of the file system (ENOENT…). */
  readonly error?: string;
  readonly message?: string;
}

const FSYNC_EVERY = 200;
const STATES: readonly string[] = ["created", "existing", "anchored", "verified_org", "failed", "revoked"];
/** States of a line that names a record the organisation still holds. */
const HELD: readonly string[] = ["created", "existing", "anchored", "verified_org"];

/** The manifest's lines; a missing file is an empty manifest, a line that does not parse (torn) is skipped. */
export function readManifest(path: string): ManifestLine[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw e;
  }
  const lines: ManifestLine[] = [];
  for (const raw of text.split("\n")) {
    if (raw.trim() === "") continue;
    let line: unknown;
    try {
      line = JSON.parse(raw);
    } catch {
      continue;
    }
    if (typeof line !== "object" || line === null) continue;
    const l = line as Record<string, unknown>;
    if (typeof l.path !== "string" || typeof l.state !== "string" || !STATES.includes(l.state)) continue;
    lines.push(line as ManifestLine);
  }
  return lines;
}

const key = (path: string, hash: string) => `${hash}\u0000${path}`;

/** What a manifest says: per path and hash the latest line, per record its latest state. */
export class ManifestIndex {
  private readonly byFile = new Map<string, ManifestLine>();
  private readonly byRecord = new Map<string, ManifestLine>();

  constructor(lines: readonly ManifestLine[]) {
    for (const l of lines) this.add(l);
  }

  add(l: ManifestLine): void {
    if (l.recordId === undefined) return;
    if (l.hash !== undefined) this.byFile.set(key(l.path, l.hash), l);
    this.byRecord.set(l.recordId, l);
  }

  /** The record this file (path and content) already has, unless revoked since. */
  held(path: string, hash: string): ManifestLine | undefined {
    const l = this.byFile.get(key(path, hash));
    if (l === undefined || !HELD.includes(l.state)) return undefined;
    const latest = this.byRecord.get(l.recordId!);
    return latest !== undefined && latest.state === "revoked" ? undefined : latest;
  }

  /** Every record named, in the order first seen, each with its latest line. */
  records(): ManifestLine[] {
    return [...this.byRecord.values()];
  }
}

/** Appends lines to the manifest; the file is created at the first line, never before. */
export class ManifestWriter {
  private fd: number | null = null;
  private unsynced = 0;

  constructor(readonly path: string) {}

  append(line: ManifestLine): void {
    if (this.fd === null) this.fd = this.open();
    // One write of the whole line: never interleaved with another line, at worst torn by a kill.
    const bytes = Buffer.from(JSON.stringify(line) + "\n", "utf8");
    let at = 0;
    while (at < bytes.length) at += writeSync(this.fd, bytes, at, bytes.length - at);
    if (++this.unsynced >= FSYNC_EVERY) this.sync();
  }

  sync(): void {
    if (this.fd === null || this.unsynced === 0) return;
    fsyncSync(this.fd);
    this.unsynced = 0;
  }

  close(): void {
    if (this.fd === null) return;
    this.unsynced = Math.max(this.unsynced, 1);
    this.sync();
    closeSync(this.fd);
    this.fd = null;
  }

  private open(): number {
    const fd = openSync(this.path, "a+", 0o644);
    // A torn last line (the previous run was killed mid-write) is closed off, so it stays one
    // unreadable line instead of spoiling this run's first.
    const size = fstatSync(fd).size;
    if (size > 0) {
      const last = Buffer.alloc(1);
      readSync(fd, last, 0, 1, size - 1);
      if (last[0] !== 0x0a) writeSync(fd, "\n");
    }
    return fd;
  }
}
