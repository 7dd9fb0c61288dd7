/**
 * Builds dist/docverify-verify.mjs: the receipt verifier (src/verifier/standalone.ts) as one ES
 * module for Node.js 20, @noble/* bundled in, so `node docverify-verify.mjs` runs with nothing
 * installed. Not minified: whoever relies on it can read what it checks. Run by scripts/build.ts
 * beside the executable; alone: `bun scripts/build-verifier.ts [OUTFILE]`.
 */
import { $ } from "bun";
import { chmodSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "..");

export async function buildVerifier(outfile: string): Promise<void> {
  await $`${process.execPath} build ${join(root, "src", "verifier", "standalone.ts")} --target=node --format=esm --banner ${"#!/usr/bin/env node"} --outfile ${outfile}`.cwd(root).quiet();
  chmodSync(outfile, 0o755);
}

if (import.meta.main) {
  const outfile = process.argv[2] ?? join(root, "dist", "docverify-verify.mjs");
  await buildVerifier(outfile);
  console.log(`built ${outfile}`);
}
