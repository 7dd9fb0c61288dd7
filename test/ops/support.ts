/** Helpers shared by the operations tests: the command line as a process. */
import { join } from "node:path";
import { BUN, ROOT } from "../support/env.ts";

export const MAIN = join(ROOT, "src", "main.ts");

export const baseEnv = (): Record<string, string> => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", USER: "tester" });

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `docverify ARGS` synchronously (the source entry point), with only the given settings. */
export function cli(args: string[], env: Record<string, string> = {}): CliResult {
  const p = Bun.spawnSync([BUN, MAIN, ...args], { env: { ...baseEnv(), ...env }, stdin: "ignore" });
  return { code: p.exitCode ?? -1, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
}

/** The same, without blocking this process's event loop (so a load loop keeps running). */
export async function cliAsync(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const p = Bun.spawn([BUN, MAIN, ...args], { env: { ...baseEnv(), ...env }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}

// Waiting lives in test/support/wait.ts. This re-export is for the importers in test/records/
// and test/verification/ only, until their own change moves them to it; import it from there.
