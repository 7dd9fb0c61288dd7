/** The master key file: formats, refusals, permissions, creation. */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DomainError } from "../../src/lib/errors.ts";
import { loadOrCreateMasterKey, MasterKeyFileError, MasterKeyMissingError } from "../../src/crypto/index.ts";

const dir = mkdtempSync(join(tmpdir(), "dv-master-key-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const path = () => join(dir, `k${n++}`);
const KEY = Uint8Array.from({ length: 32 }, (_, i) => (i * 37 + 11) & 255); // has non-printable bytes

function write(contents: string | Uint8Array, mode = 0o600): string {
  const file = path();
  writeFileSync(file, contents, { mode });
  chmodSync(file, mode);
  return file;
}

function refusal(file: string): MasterKeyFileError {
  try {
    loadOrCreateMasterKey({ file, create: false });
  } catch (e) {
    expect(e).toBeInstanceOf(MasterKeyFileError);
    return e as MasterKeyFileError;
  }
  throw new Error("expected a MasterKeyFileError");
}

describe("reading an existing master key file", () => {
  const hex = Buffer.from(KEY).toString("hex");
  const cases: [string, string | Uint8Array, string][] = [
    ["raw 32 bytes", KEY, "raw"],
    ["64 lowercase hex digits", hex, "hex"],
    ["hex with trailing newline", `${hex}\n`, "hex"],
    ["uppercase hex with CRLF and spaces", `  ${hex.toUpperCase()}\r\n`, "hex"],
    ["base64", Buffer.from(KEY).toString("base64"), "base64"],
    ["base64 without padding, newline", `${Buffer.from(KEY).toString("base64").replace(/=$/, "")}\n`, "base64"],
    ["base64url", Buffer.from(KEY).toString("base64url"), "base64"],
  ];
  test.each(cases)("%s", (_name, contents, format) => {
    const loaded = loadOrCreateMasterKey({ file: write(contents), create: false });
    expect(Buffer.from(loaded.key)).toEqual(Buffer.from(KEY));
    expect(loaded.format).toBe(format as "raw");
    expect(loaded.created).toBe(false);
    expect(loaded.warnings).toEqual([]);
  });

  test("an existing file is never replaced, even with create: true", () => {
    const file = write(hex);
    const loaded = loadOrCreateMasterKey({ file, create: true });
    expect(loaded.created).toBe(false);
    expect(Buffer.from(loaded.key)).toEqual(Buffer.from(KEY));
    expect(readFileSync(file, "utf8")).toBe(hex);
  });

  test("group- or world-readable: used, with a warning", () => {
    const loaded = loadOrCreateMasterKey({ file: write(hex, 0o644), create: false });
    expect(Buffer.from(loaded.key)).toEqual(Buffer.from(KEY));
    expect(loaded.warnings.length).toBe(1);
    expect(loaded.warnings[0]).toMatch(/mode 0644.*chmod 600/);
  });
});

describe("refusals", () => {
  test.each([
    ["empty", ""],
    ["31 raw bytes", KEY.subarray(1)],
    ["33 raw bytes", new Uint8Array([...KEY, 0])],
    ["62 hex digits", Buffer.from(KEY).toString("hex").slice(2)],
    ["66 hex digits", Buffer.from(KEY).toString("hex") + "00"],
    ["base64 of 31 bytes", Buffer.from(KEY.subarray(1)).toString("base64")],
    ["base64 of 48 bytes", Buffer.from(new Uint8Array(48).fill(200)).toString("base64")],
    ["a passphrase", "correct horse battery staple\n"],
  ] as [string, string | Uint8Array][])("wrong length: %s", (_name, contents) => {
    const file = write(contents);
    const e = refusal(file);
    expect(e.message).toContain(file);
    expect(e.message).toMatch(/32 raw bytes, 64 hex digits, or base64 of 32 bytes/);
  });

  test("32 printable characters (a 128-bit key written as hex) is refused, not taken as raw", () => {
    const e = refusal(write("0123456789abcdef0123456789abcdef"));
    expect(e.message).toMatch(/printable text/);
  });

  test("a directory is refused", () => {
    expect(refusal(dir).message).toMatch(/not a regular file/);
  });

  test("a large file is refused without reading it", () => {
    expect(refusal(write("a".repeat(5000))).message).toMatch(/too long/);
  });
});

describe("a missing file", () => {
  test("create: false → MasterKeyMissingError, a 503 DomainError with Retry-After, and nothing is created", () => {
    const file = path();
    let caught: unknown;
    try {
      loadOrCreateMasterKey({ file, create: false });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(MasterKeyMissingError);
    expect(caught).toBeInstanceOf(DomainError);
    const e = caught as MasterKeyMissingError;
    expect(e.code).toBe("SERVICE_UNAVAILABLE");
    expect(e.retryAfterSeconds).toBeGreaterThan(0);
    expect(e.file).toBe(file);
    expect(e.message).not.toContain(file);
    expect(() => statSync(file)).toThrow();
  });

  test("create: true → created with mode 0600 as hex, reported, and read back identically", () => {
    const sub = join(dir, "fresh", "data");
    const file = join(sub, "master.key");
    const created = loadOrCreateMasterKey({ file, create: true });
    expect(created.created).toBe(true);
    expect(created.format).toBe("hex");
    expect(created.key.length).toBe(32);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, "utf8")).toMatch(/^[0-9a-f]{64}\n$/);
    expect(readdirSync(sub)).toEqual(["master.key"]); // no temporary file left behind
    const again = loadOrCreateMasterKey({ file, create: true });
    expect(again.created).toBe(false);
    expect(Buffer.from(again.key)).toEqual(Buffer.from(created.key));
    expect(again.warnings).toEqual([]);
  });

  test("created with mode 0600 even with umask 000 (the mode asked for is exactly 0600)", () => {
    const old = process.umask(0o000);
    try {
      const file = path();
      loadOrCreateMasterKey({ file, create: true });
      expect(statSync(file).mode & 0o777).toBe(0o600);
    } finally {
      process.umask(old);
    }
  });

  test("two creations of different files give different keys", () => {
    const a = loadOrCreateMasterKey({ file: path(), create: true }).key;
    const b = loadOrCreateMasterKey({ file: path(), create: true }).key;
    expect(Buffer.from(a)).not.toEqual(Buffer.from(b));
  });
});

test("options are checked strictly", () => {
  expect(() => loadOrCreateMasterKey({ file: path(), create: true, mode: 0o600 } as never)).toThrow(/unknown option "mode"/);
  expect(() => loadOrCreateMasterKey({ file: path() } as never)).toThrow(/create must be a boolean/);
  expect(() => loadOrCreateMasterKey({ file: "", create: true })).toThrow(/file/);
});

test("a file that cannot be created is a MasterKeyFileError naming it", () => {
  const blocker = write("not a directory");
  const file = join(blocker, "master.key");
  let caught: unknown;
  try {
    loadOrCreateMasterKey({ file, create: true });
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(MasterKeyFileError);
  expect((caught as Error).message).toContain(file);
  expect((caught as Error).message).toMatch(/cannot be (created|opened)/);
});
