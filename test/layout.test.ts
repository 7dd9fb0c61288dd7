/**
 * The layout's own rules (docs/architecture.md, "Where things go"), beside the import allowlists
 * of architecture.test.ts:
 * - storage engines live behind ports: capabilities hold no engine branch, no connection, no SQL;
 *   each engine's drivers (storage/sqlite/, storage/postgres/) know a capability only by the
 *   types of its ports, and no capability imports a driver;
 * - no source file grows past what a reader takes in at once;
 * - no state at module level: what changes while the service runs belongs to an instance the
 *   composition root makes, so that two services in one process (the tests do it) share nothing.
 * Each rule is checked on today's src/ and, with a sample, on itself.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ROOT } from "./support/env.ts";

const SRC = join(ROOT, "src");

async function sources(): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for await (const file of new Bun.Glob("**/*.ts").scan({ cwd: SRC })) files.set(file, await Bun.file(join(SRC, file)).text());
  return files;
}

/** The text without its comments (line and block), strings kept: what the rules read. */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
}

/** The areas that are capabilities: they own ports; storage's drivers implement them. */
const CAPABILITIES = ["keys/", "records/", "verification/", "anchoring/", "receipts/", "persons/", "admin/", "http/"];
const isCapability = (file: string) => CAPABILITIES.some((c) => file.startsWith(c));

export function storageLeaks(files: Map<string, string>): string[] {
  const bad: string[] = [];
  for (const [file, text] of files) {
    if (!isCapability(file)) continue;
    const c = code(text);
    if (/\.engine\s*[!=]==|\bengine\s*===\s*["'](sqlite|postgres)["']/.test(c)) bad.push(`${file}: branches on the storage engine`);
    if (/\$client\b/.test(c)) bad.push(`${file}: uses a connection ($client)`);
    if (/\bas\s+(SqliteStore|PostgresStore)\b/.test(c)) bad.push(`${file}: casts to an engine's store`);
    if (/["'`]\s*(SELECT\s[\s\S]*?\sFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|PRAGMA\s|BEGIN\s+IMMEDIATE)/i.test(c)) bad.push(`${file}: SQL text`);
  }
  return bad;
}

export function driverLeaks(files: Map<string, string>): string[] {
  const bad: string[] = [];
  for (const [file, text] of files) {
    const c = code(text);
    for (const m of c.matchAll(/^\s*(import|export)(\s+type)?\s[^;]*?from\s+["']([^"']+)["']/gm)) {
      const spec = m[3]!;
      if (!spec.startsWith(".")) continue;
      const target = join(file, "..", spec);
      const typeOnly = m[2] !== undefined || /^\s*import\s*\{\s*(type\s+\w+\s*(,\s*type\s+\w+\s*)*,?)\}/.test(m[0]);
      if (file.startsWith("storage/sqlite/") || file.startsWith("storage/postgres/")) {
        if (isCapability(target) && !(typeOnly && /(^|\/)ports(-[a-z-]+)?\.ts$/.test(target))) bad.push(`${file} → ${spec}: a driver knows a capability only by its ports' types`);
      } else if (isCapability(file) && (target.startsWith("storage/sqlite/") || target.startsWith("storage/postgres/"))) {
        bad.push(`${file} → ${spec}: a capability never imports a driver`);
      }
    }
  }
  return bad;
}

/** Longest a source file may be; the exceptions are named with their reason. */
const MAX_LINES = 450;
const LONG_FILES: Record<string, string> = {
  "local-ledger/mirror.ts": "one router over the mirror node's REST paths, read as a table",
};

/**
 * Module-level state that is the instance itself, each with its reason (a whole file, or one of
 * its variables as `file:name`): a worker thread's module is that worker; a page's script is that
 * page; stdout, the C library and file locks are the process's.
 */
const MODULE_STATE: Record<string, string> = {
  "crypto/sign-worker.ts": "a signing worker's module is the worker: its key ring and verifier",
  "storage/writer-worker.ts": "the log writer thread's module is the thread: its connection and statements",
  "sign-pages/enrol.ts": "the enrolment page's script: the page's own state",
  "verifier/page/browser.ts": "the receipt page's script: the files the visitor chose",
  "lib/log.ts": "the process's one stdout writer",
  "lib/sd-notify.ts": "the C library, loaded once per process when systemd asks for notifications",
  "persons/webauthn.ts": "the WebAuthn library, imported once per process on first use",
  "storage/data-version.ts:headerFds": "the WAL index's descriptors: a POSIX lock belongs to the process, and closing any descriptor of a file drops every lock the process holds on it, SQLite's own included; so they are the process's, opened once per file and never closed",
  "lib/formats.ts:lastMs": "rfc3339Ms's last answer: a pure function's, so it cannot carry anything from one service to another",
  "lib/formats.ts:lastText": "as above",
  "admin/backup.ts:last": "inside the text of the backup's progress worker: the worker's own module",
};

export function moduleState(files: Map<string, string>): string[] {
  const bad: string[] = [];
  for (const [file, text] of files) {
    if (file in MODULE_STATE || file.startsWith("local-ledger/")) continue;
    const c = code(text);
    const allowed = (name: string) => `${file}:${name}` in MODULE_STATE;
    for (const m of c.matchAll(/^(?:export\s+)?let\s+(\w+)/gm)) if (!allowed(m[1]!)) bad.push(`${file}: let ${m[1]} at module level`);
    for (const m of c.matchAll(/^(?:export\s+)?const\s+(\w+)(?:\s*:[^=\n]+)?\s*=\s*new\s+(Map|Set|WeakMap|WeakSet|Lru)\b(?:<[^()\n]*>)?\(\s*(\{|\))/gm)) {
      if (!allowed(m[1]!)) bad.push(`${file}: ${m[1]} (a ${m[2]} made empty at module level)`);
    }
  }
  return bad;
}

describe("the layout", () => {
  test("capabilities hold no engine branch, no connection, no SQL; drivers know capabilities by their ports' types alone", async () => {
    const files = await sources();
    expect(storageLeaks(files)).toEqual([]);
    expect(driverLeaks(files)).toEqual([]);
    const sample = new Map([
      ["records/x.ts", 'if (store.engine === "sqlite") run((store as SqliteStore).db.$client.query("SELECT id FROM records"));\n// SELECT a FROM b in a comment is prose\nimport { sqliteX } from "../storage/sqlite/x.ts";'],
      ["storage/sqlite/x.ts", 'import type { XReads } from "../../records/ports.ts";\nimport { createRecords } from "../../records/service.ts";\nimport { type Y } from "../../records/ports.ts";'],
      ["storage/other.ts", 'const s = "SELECT 1 FROM t"; if (store.engine === "sqlite") {}'],
    ]);
    expect(storageLeaks(sample)).toEqual(["records/x.ts: branches on the storage engine", "records/x.ts: uses a connection ($client)", "records/x.ts: casts to an engine's store", "records/x.ts: SQL text"]);
    expect(driverLeaks(sample)).toEqual(["records/x.ts → ../storage/sqlite/x.ts: a capability never imports a driver", "storage/sqlite/x.ts → ../../records/service.ts: a driver knows a capability only by its ports' types"]);
  });

  test(`no source file over ${MAX_LINES} lines but those named with a reason`, async () => {
    const long = [...(await sources())].map(([file, text]) => ({ file, lines: text.split("\n").length - (text.endsWith("\n") ? 1 : 0) })).filter((f) => f.lines > MAX_LINES && !(f.file in LONG_FILES));
    expect(long).toEqual([]);
  });

  test("no mutable state at module level but a worker's, a page's and the process's own", async () => {
    const files = await sources();
    expect(moduleState(files)).toEqual([]);
    // Every entry names a file that exists and, for one variable, a variable that file declares.
    for (const entry of Object.keys(MODULE_STATE)) {
      const [file, name] = entry.split(":") as [string, string | undefined];
      const declared = name === undefined || new RegExp(`^(?:export\\s+)?(?:let|const)\\s+${name}\\b`, "m").test(files.get(file) ?? "");
      expect({ entry, exists: files.has(file), declared }).toEqual({ entry, exists: true, declared: true });
    }
    const sample = new Map([
      ["keys/x.ts", "let count = 0;\nconst cache = new Map<string, number>();\nconst KINDS = new Set([\"a\", \"b\"]);\nconst lru = new Lru({ maxBytes: 1 });\nfunction f() {\n  let local = 1;\n}"],
    ]);
    expect(moduleState(sample)).toEqual(["keys/x.ts: let count at module level", "keys/x.ts: cache (a Map made empty at module level)", "keys/x.ts: lru (a Lru made empty at module level)"]);
  });
});
