/**
 * The verifier's three command-line shells, run as a person runs each: in-process
 * (`runVerifyReceipt` with the real files and network), `bun src/main.ts verify-receipt`, and the
 * standalone `node docverify-verify.mjs` built into a folder of its own (no node_modules near it).
 * The shell tests (forgery, batches, key lifecycle) give every shell the same arguments and
 * compare what each says.
 */
import { join } from "node:path";
import { buildVerifier } from "../../scripts/build-verifier.ts";
import { nodeIo, runVerifyReceipt } from "../../src/verifier/cli.ts";
import { BUN, ROOT, tempDir } from "../support/env.ts";

const MAIN = join(ROOT, "src", "main.ts");
export const SHELLS = ["in-process", "bun", "node"] as const;
export type Shell = (typeof SHELLS)[number];

export interface ShellRun<Report> {
  shell: Shell;
  code: number | null;
  stdout: string;
  stderr: string;
  /** The parsed `--json` report; null when the arguments did not ask for one. */
  report: Report | null;
}

/** The standalone verifier as `npm run build` makes it, alone in a fresh folder: its path. */
export async function standaloneVerifier(): Promise<string> {
  const path = join(tempDir("docverify-standalone-"), "docverify-verify.mjs");
  await buildVerifier(path);
  return path;
}

async function spawned(cmd: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp" };
  const p = Bun.spawn(cmd, { cwd: tempDir("docverify-cwd-"), env, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}

/** `verify-receipt ARGS` in one shell; with `--json` among the arguments, its report parsed (a shell that printed none fails). */
export async function runInShell<Report>(shell: Shell, args: readonly string[], standalone: string): Promise<ShellRun<Report>> {
  let r: { code: number | null; stdout: string; stderr: string };
  if (shell === "in-process") {
    let stdout = "";
    let stderr = "";
    const code = await runVerifyReceipt(args, { ...nodeIo(), stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
    r = { code, stdout, stderr };
  } else if (shell === "bun") r = await spawned([BUN, MAIN, "verify-receipt", ...args]);
  else r = await spawned(["node", standalone, ...args]);
  let report: Report | null = null;
  if (args.includes("--json")) {
    try {
      report = JSON.parse(r.stdout) as Report;
    } catch {
      throw new Error(`${shell}: no JSON report (exit ${r.code}): ${r.stderr}`);
    }
  }
  return { shell, ...r, report };
}
