/**
 * hashFile: the digest sha256sum gives, for the sizes where a chunked reader goes wrong (empty,
 * one byte short of, at and past the 1 MiB read, several MiB), the same under Node.js 20 as under
 * Bun; Node's fs errors thrown with their code.
 */
import { afterAll, expect, test } from "bun:test";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { hashFile } from "../../src/bulk/hash.ts";
import { cleanup, tempDir } from "../support/env.ts";
import { requireProgram } from "../support/programs.ts";
import { bulkForNode, runNode } from "./node-bundle.ts";

afterAll(cleanup);

const MiB = 1024 * 1024;
const SIZES = [0, 1, 6, MiB - 1, MiB, MiB + 1, 2 * MiB, 5 * MiB + 123];

function sha256sum(files: string[]): string[] {
  const run = Bun.spawnSync({ cmd: [requireProgram("sha256sum"), ...files], stdout: "pipe" });
  expect(run.exitCode).toBe(0);
  return run.stdout.toString().trim().split("\n").map((line) => `sha256:${line.split(" ")[0]}`);
}

test("the digest is sha256sum's, for every size around the read boundary, in Bun and in Node.js 20", async () => {
  const dir = tempDir();
  chmodSync(dir, 0o755);
  const files = SIZES.map((size) => {
    const file = join(dir, `f-${size}.bin`);
    writeFileSync(file, size === 6 ? "hello\n" : randomBytes(size));
    return file;
  });
  const expected = sha256sum(files);
  expect(expected[2]).toBe("sha256:5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03");
  expect(expected[0]).toBe("sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");

  const bun = await Promise.all(files.map(hashFile));
  expect(bun).toEqual(expected);
  for (const digest of bun) expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);

  const node = runNode(await bulkForNode(), `console.log(JSON.stringify(await Promise.all(${JSON.stringify(files)}.map(bulk.hashFile))));`);
  expect(node).toEqual(expected);
});

test("Node's fs errors come through with their code: ENOENT, EISDIR (Bun and Node.js 20), EACCES (Node.js 20, as nobody)", async () => {
  const dir = tempDir();
  chmodSync(dir, 0o755);
  mkdirSync(join(dir, "folder"));
  const locked = join(dir, "locked.pdf");
  writeFileSync(locked, "secret");
  chmodSync(locked, 0o000);

  await expect(hashFile(join(dir, "missing.pdf"))).rejects.toMatchObject({ code: "ENOENT" });
  await expect(hashFile(join(dir, "folder"))).rejects.toMatchObject({ code: "EISDIR" });

  const script = (path: string) => `try { await bulk.hashFile(${JSON.stringify(path)}); console.log("null"); } catch (e) { console.log(JSON.stringify(e.code)); }`;
  const nodeDir = await bulkForNode();
  expect(runNode(nodeDir, script(join(dir, "missing.pdf")))).toBe("ENOENT");
  expect(runNode(nodeDir, script(join(dir, "folder")))).toBe("EISDIR");
  // The tests run as root, whom no permission stops: the unreadable file is read as nobody.
  expect(runNode(nodeDir, script(locked), "nobody")).toBe("EACCES");
});
