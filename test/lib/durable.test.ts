/** lib/durable.ts: the one fsync helper and the new-file writers built on it. */
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { copyToNewFileSync, syncPath, writeNewFileSync } from "../../src/lib/durable.ts";
import { cleanup, tempDir } from "../support/env.ts";

afterAll(cleanup);

const code = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (e) {
    return (e as NodeJS.ErrnoException).code;
  }
  return undefined;
};

test("writeNewFileSync writes the bytes with the mode asked for, and never over an existing file", () => {
  const dir = tempDir();
  const file = join(dir, "key");
  writeNewFileSync(file, Buffer.from("secret\n"), 0o600);
  expect(readFileSync(file, "utf8")).toBe("secret\n");
  expect(statSync(file).mode & 0o777).toBe(0o600);
  expect(code(() => writeNewFileSync(file, Buffer.from("other"), 0o600))).toBe("EEXIST");
  expect(readFileSync(file, "utf8")).toBe("secret\n");
});

test("copyToNewFileSync copies every byte across its 1 MiB chunks and returns the count", () => {
  const dir = tempDir();
  const from = join(dir, "from");
  const bytes = Buffer.alloc(2.5 * 1024 * 1024);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + 7) & 255;
  writeFileSync(from, bytes);
  const to = join(dir, "to");
  expect(copyToNewFileSync(from, to, 0o600)).toBe(bytes.length);
  expect(readFileSync(to).equals(bytes)).toBe(true);
  expect(statSync(to).mode & 0o777).toBe(0o600);
  expect(code(() => copyToNewFileSync(from, to, 0o600))).toBe("EEXIST");
});

test("a copy that fails while writing leaves no file behind", () => {
  const dir = tempDir();
  const folder = join(dir, "a-folder");
  mkdirSync(folder);
  const to = join(dir, "to");
  expect(code(() => copyToNewFileSync(folder, to, 0o600))).toBe("EISDIR");
  expect(existsSync(to)).toBe(false);
});

test("syncPath fsyncs a file and a folder, and says when the path is missing", () => {
  const dir = tempDir();
  const file = join(dir, "f");
  writeFileSync(file, "x");
  syncPath(file);
  syncPath(dir);
  expect(code(() => syncPath(join(dir, "missing")))).toBe("ENOENT");
});
