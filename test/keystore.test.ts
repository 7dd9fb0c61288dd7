/**
 * The master key at startup (docs/signing.md §5): created once in the data folder when none is
 * configured, never silently replaced, and a missing or wrong key seals the key store
 * (signing answers 503) instead of crashing or creating a new key over existing data.
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createApp } from "../src/app/sqlite.ts";
import { parseConfig } from "../src/config/index.ts";
import { MasterKeyFileError } from "../src/crypto/index.ts";
import { memoryLogger } from "../src/lib/log.ts";
import { BUN, ROOT, cleanup, tempDir } from "./support/env.ts";

afterAll(cleanup);

async function boot(env: Record<string, string>) {
  const log = memoryLogger();
  const app = await createApp({ config: parseConfig({ DOCVERIFY_PORT: "0", ...env }), log });
  await app.anchoringStarted;
  await app.close();
  return { app, log, said: (msg: string) => log.lines.some((l) => String(l.msg).startsWith(msg)) };
}

test("no master key configured: one is created in the data folder, mode 0600, and the startup says so", async () => {
  const data = tempDir();
  const first = await boot({ DOCVERIFY_DATA_DIR: data });
  const file = join(data, "master.key");
  expect(existsSync(file)).toBe(true);
  expect(statSync(file).mode & 0o777).toBe(0o600);
  expect(readFileSync(file, "utf8")).toMatch(/^[0-9a-f]{64}\n$/);
  expect(first.app.signer.canSign).toBe(true);
  expect(first.said("master key created")).toBe(true);
  const key = readFileSync(file, "utf8");
  expect(JSON.stringify(first.log.lines)).not.toContain(key.trim());

  const second = await boot({ DOCVERIFY_DATA_DIR: data });
  expect(second.app.signer.canSign).toBe(true);
  expect(second.said("master key created")).toBe(false);
  expect(readFileSync(file, "utf8")).toBe(key);
});

test("a lost master key is not replaced: the key store stays sealed", async () => {
  const data = tempDir();
  await boot({ DOCVERIFY_DATA_DIR: data });
  rmSync(join(data, "master.key"));
  const again = await boot({ DOCVERIFY_DATA_DIR: data });
  expect(again.app.signer.canSign).toBe(false);
  expect(existsSync(join(data, "master.key"))).toBe(false);
  expect(again.said("master key missing")).toBe(true);
});

test("a different master key for the same data folder seals the key store", async () => {
  const data = tempDir();
  await boot({ DOCVERIFY_DATA_DIR: data });
  writeFileSync(join(data, "master.key"), "ab".repeat(32) + "\n", { mode: 0o600 });
  const again = await boot({ DOCVERIFY_DATA_DIR: data });
  expect(again.app.signer.canSign).toBe(false);
  expect(again.said("master key does not match")).toBe(true);
});

test("a configured master key file that is missing is never created", async () => {
  const data = tempDir();
  const file = join(tempDir(), "master-key");
  const app = await boot({ DOCVERIFY_DATA_DIR: data, DOCVERIFY_MASTER_KEY_FILE: file });
  expect(app.app.signer.canSign).toBe(false);
  expect(existsSync(file)).toBe(false);
  expect(existsSync(join(data, "master.key"))).toBe(false);
});

test("a configured master key file is used", async () => {
  const file = join(tempDir(), "master-key");
  writeFileSync(file, "cd".repeat(32), { mode: 0o600 });
  const app = await boot({ DOCVERIFY_DATA_DIR: tempDir(), DOCVERIFY_MASTER_KEY_FILE: file });
  expect(app.app.signer.canSign).toBe(true);
});

test("a master key file with bad content refuses to start, naming the file", async () => {
  const file = join(tempDir(), "master-key");
  writeFileSync(file, "too short\n", { mode: 0o600 });
  await expect(boot({ DOCVERIFY_DATA_DIR: tempDir(), DOCVERIFY_MASTER_KEY_FILE: file })).rejects.toBeInstanceOf(MasterKeyFileError);
  const proc = Bun.spawnSync([BUN, join(ROOT, "src", "main.ts"), "serve"], {
    env: { PATH: process.env.PATH, DOCVERIFY_PORT: "0", DOCVERIFY_DATA_DIR: tempDir(), DOCVERIFY_MASTER_KEY_FILE: file },
  });
  expect(proc.exitCode).toBe(1);
  expect(proc.stderr.toString()).toStartWith(`docverify: master key file ${file}: `);
});
