/**
 * Whether a schema file and its migrations folder are in step: drizzle-kit generate, run on a copy
 * of the folder, finds nothing to write. Used for each engine (docs/storage.md).
 */
import { expect } from "bun:test";
import { cpSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { ROOT, tempDir } from "./env.ts";

export function expectMigrationsInStep(dialect: "sqlite" | "postgresql", schema: string, migrationsDir: string): void {
  const dir = tempDir();
  const out = join(dir, "migrations");
  cpSync(join(ROOT, migrationsDir), out, { recursive: true });
  const before = readdirSync(out).sort();
  mkdirSync(join(dir, "cfg"));
  const configFile = join(dir, "cfg", "drizzle.config.json");
  // drizzle-kit resolves these relative to its working directory, the repository root.
  writeFileSync(configFile, JSON.stringify({ dialect, schema, out: relative(ROOT, out) }));
  const kit = Bun.spawnSync([join(ROOT, "node_modules", ".bin", "drizzle-kit"), "generate", `--config=${configFile}`], {
    cwd: ROOT,
    env: { ...process.env, PATH: `${join(ROOT, "node_modules", ".bin")}:${process.env.PATH}` },
  });
  const said = kit.stdout.toString() + kit.stderr.toString();
  expect(kit.exitCode, said).toBe(0);
  expect(readdirSync(out).sort(), `drizzle-kit generated a migration: run npm run db:generate\n${said}`).toEqual(before);
  expect(said).toContain("No schema changes");
}
