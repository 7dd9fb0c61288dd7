/**
 * Builds dist/docverify-client.mjs: the bulk commands (authenticate, check, revoke;
 * src/bulk/standalone.ts) with the client package as one ES module for Node.js 20, so
 * `node docverify-client.mjs authenticate FOLDER` runs on a machine with nothing installed but
 * Node.js. Not minified: whoever runs it against their documents can read what it sends. Run by
 * scripts/build.ts beside the executable; alone: `bun scripts/build-client.ts [OUTFILE]`.
 */
import { $ } from "bun";
import { chmodSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "..");

export async function buildClient(outfile: string): Promise<void> {
  await $`${process.execPath} build ${join(root, "src", "bulk", "standalone.ts")} --target=node --format=esm --banner ${"#!/usr/bin/env node"} --outfile ${outfile}`.cwd(root).quiet();
  chmodSync(outfile, 0o755);
}

if (import.meta.main) {
  const outfile = process.argv[2] ?? join(root, "dist", "docverify-client.mjs");
  await buildClient(outfile);
  console.log(`built ${outfile}`);
}
