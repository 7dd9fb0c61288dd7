/**
 * One JSON object per line on stdout, for journald. Fields are the caller's; never pass a
 * key, a secret or a document's filename here — log a key's id prefix instead.
 */
import { writeSync } from "node:fs";
import { rfc3339Ms } from "./formats.ts";
import { jsonString } from "./json.ts";

export type Level = "debug" | "info" | "warn" | "error";
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export type Fields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: Fields): void;
  info(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
  enabled(level: Level): boolean;
}

/**
 * Lines for stdout are collected and written together at most every `FLUSH_MS` (or once
 * `FLUSH_BYTES` are pending): one `write` system call per request was measured as a large share
 * of a small request's cost, and one per turn of the event loop still was a tenth of a public
 * verification's main thread under load, turns being short then (docs/benchmarks.md "How the
 * figures moved"). What is pending is
 * written before the process exits, and at once for `error` lines, so a crash report is never
 * left waiting in memory.
 */
const FLUSH_MS = 5;

/** A millisecond's sleep for `writeAll` (a non-blocking stdout that is full), without the event loop. */
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/**
 * Writes the text to stdout (fd 1) synchronously, all of it: `process.stdout.write` queues what a
 * full pipe does not take at once, and `process.exit` dropped the queue (a test lost the tail of
 * 3,000 lines written just before exit). A non-blocking stdout that is full is retried every
 * millisecond for up to 5 s; a stdout that is gone (EPIPE, EBADF) drops the lines: logging never
 * crashes the service.
 */
function writeAll(text: string): void {
  const bytes = Buffer.from(text, "utf8");
  let written = 0;
  let waits = 0;
  while (written < bytes.length) {
    try {
      written += writeSync(1, bytes, written);
    } catch (e) {
      if ((e as { code?: unknown }).code === "EAGAIN" && waits++ < 5000) {
        Atomics.wait(PAUSE, 0, 0, 1);
        continue;
      }
      return;
    }
  }
}
const FLUSH_BYTES = 64 * 1024;

function stdoutWriter(): { write(line: string): void; flush(): void } {
  let pending = "";
  let timer: ReturnType<typeof setTimeout> | null = null;
  const flush = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    if (pending === "") return;
    const out = pending;
    pending = "";
    writeAll(out);
  };
  process.once("exit", flush);
  return {
    write(line) {
      pending += line + "\n";
      if (pending.length >= FLUSH_BYTES) flush();
      else if (timer === null) {
        timer = setTimeout(flush, FLUSH_MS);
        // Pending lines never keep the process alive; "exit" writes them.
        timer.unref?.();
      }
    },
    flush,
  };
}

/** One buffer for the process's one stdout, whichever loggers write to it, so lines keep their order. */
let sharedStdout: ReturnType<typeof stdoutWriter> | null = null;

/** Date#toISOString, and a fixed text for a time Date cannot write (it would throw). */
function isoTime(ms: number): string {
  try {
    return rfc3339Ms(ms);
  } catch {
    return new Date(ms).toISOString();
  }
}

/** True when JSON.stringify needs no replacer for these fields: every value a plain primitive. */
function plainFields(fields: Fields | undefined): boolean {
  if (fields === undefined) return true;
  for (const key in fields) {
    const v = fields[key];
    const t = typeof v;
    if (v !== null && t !== "string" && t !== "number" && t !== "boolean" && t !== "undefined") return false;
  }
  return true;
}

export function createLogger(options: { level: Level; write?: (line: string) => void; now?: () => number }): Logger {
  const out = options.write === undefined ? (sharedStdout ??= stdoutWriter()) : null;
  const write = options.write ?? ((line: string) => out!.write(line));
  const now = options.now ?? Date.now;
  const min = ORDER[options.level];
  const emit = (level: Level, msg: string, fields?: Fields) => {
    if (ORDER[level] < min) return;
    const time = isoTime(now());
    if (plainFields(fields) && (fields === undefined || !("time" in fields || "level" in fields || "msg" in fields))) {
      // The per-request line's path: the three fixed fields written directly, the caller's after
      // them; the same text as stringifying { time, level, msg, ...fields } (a test compares).
      const rest = fields === undefined ? "{}" : JSON.stringify(fields);
      write(`{"time":"${time}","level":"${level}","msg":${jsonString(msg)}${rest === "{}" ? "}" : "," + rest.slice(1)}`);
    } else {
      // The replacer (Errors and bigints as text) makes stringify about twice as slow; fields of
      // plain primitives cannot need it.
      const entry = { time, level, msg, ...fields };
      write(plainFields(fields) ? JSON.stringify(entry) : JSON.stringify(entry, errorsAsText));
    }
    if (level === "error") out?.flush();
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    enabled: (level) => ORDER[level] >= min,
  };
}

/** A logger that keeps lines in memory, for tests that assert on what was logged. */
export function memoryLogger(level: Level = "debug"): Logger & { lines: Fields[] } {
  const lines: Fields[] = [];
  const log = createLogger({ level, write: (l) => lines.push(JSON.parse(l) as Fields) });
  return Object.assign(log, { lines });
}

function errorsAsText(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  if (typeof value === "bigint") return value.toString();
  return value;
}
