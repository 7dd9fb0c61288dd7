/**
 * `npm run build` (scripts/build.ts) once per `bun test` run (per worker process under `--parallel`), for every test of the product as
 * shipped: the executable, docverify-verify.mjs, docverify-client.mjs and verify-receipt.html in a folder that holds
 * nothing else. The build takes seconds, and the files that test the executable (binary.test.ts,
 * receipts/e2e-binary.test.ts, admin/tui.test.ts, ops/notify.test.ts) each made their own of the
 * same checkout. Test files share this module in one run (as e2e-rig.ts's standalone verifier
 * does); the folder is not any file's to clean up, so the run's end removes it (run-end.ts).
 *
 * A failed build is kept too: every test that needs the executable reports the build's own error.
 * Nothing may write into the folder; a test that needs the executable elsewhere copies it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUN, ROOT } from "./env.ts";
import { atRunEnd } from "./run-end.ts";

export interface ProductBuild {
  /** The folder `npm run build` wrote into: `docverify`, `docverify-verify.mjs`, `docverify-client.mjs`, `verify-receipt.html`. */
  readonly dist: string;
  /** The executable, `dist/docverify`. */
  readonly binary: string;
  /** scripts/build.ts's exit code and what it printed on stderr. */
  readonly exitCode: number;
  readonly stderr: string;
}

let built: ProductBuild | null = null;

/** The run's build of the product, made at the first call. Synchronous, as a spawnSync build was. */
export function productBuild(): ProductBuild {
  if (built !== null) return built;
  const dist = mkdtempSync(join(tmpdir(), "docverify-dist-"));
  atRunEnd(() => {
    rmSync(dist, { recursive: true, force: true });
    built = null;
  });
  const binary = join(dist, "docverify");
  const out = Bun.spawnSync([BUN, join(ROOT, "scripts", "build.ts"), binary], { cwd: ROOT });
  built = { dist, binary, exitCode: out.exitCode, stderr: out.stderr.toString() };
  return built;
}

/** The executable of a build that succeeded; throws with the build's error otherwise. */
export function builtBinary(): string {
  const b = productBuild();
  if (b.exitCode !== 0) throw new Error(`npm run build failed (exit ${b.exitCode}):\n${b.stderr}`);
  return b.binary;
}
