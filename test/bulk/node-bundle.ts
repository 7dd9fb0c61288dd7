/**
 * src/bulk/hash.ts and walk.ts bundled for Node.js 20 (as dist/docverify-client.mjs bundles them),
 * so a test runs the same code under `node` and compares with what Bun gave.
 */
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, tempDir } from "../support/env.ts";

/** A folder (mode 755, for a test that runs as another user) holding bulk.mjs: hashFile and walk. */
export async function bulkForNode(): Promise<string> {
  const dir = tempDir("docverify-bulk-node-");
  chmodSync(dir, 0o755);
  const entry = join(dir, "entry.ts");
  writeFileSync(entry, `export { hashFile } from ${JSON.stringify(join(ROOT, "src/bulk/hash.ts"))};\nexport { walk } from ${JSON.stringify(join(ROOT, "src/bulk/walk.ts"))};\n`);
  const built = await Bun.build({ entrypoints: [entry], target: "node", format: "esm", outdir: dir, naming: "bulk.mjs" });
  if (!built.success) throw new Error(built.logs.join("\n"));
  const bundle = join(dir, "bulk.mjs");
  if (/\bBun\.|["']bun:/.test(await Bun.file(bundle).text())) throw new Error("the bulk bundle uses a Bun API");
  chmodSync(bundle, 0o644);
  return dir;
}

/** Runs `script` (an ES module body; `bulk` is the bundle's namespace) under node, as `user` if given; its stdout parsed as JSON. */
export function runNode(dir: string, script: string, user?: string): unknown {
  const file = join(dir, `script-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(file, `import * as bulk from "./bulk.mjs";\n${script}\n`);
  chmodSync(file, 0o644);
  // setpriv needs root; a test run as someone else already meets the permissions it is checking.
  const cmd = user === undefined || process.getuid?.() !== 0 ? ["node", file] : ["setpriv", `--reuid=${user}`, `--regid=${user === "nobody" ? "nogroup" : user}`, "--clear-groups", "--", "node", file];
  const run = Bun.spawnSync({ cmd, stdout: "pipe", stderr: "pipe" });
  if (run.exitCode !== 0) throw new Error(`node exited ${run.exitCode}: ${run.stderr.toString()}`);
  return JSON.parse(run.stdout.toString());
}
