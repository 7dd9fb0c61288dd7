/**
 * The bulk commands' tests run `docverify authenticate|check|revoke` as a user would: the source
 * entry point as a child process, in a folder of its own, with nothing of the test runner's
 * environment but PATH and HOME. Helpers to make folders of small files and to read what the
 * commands wrote.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createClient } from "../../packages/client/src/index.ts";
import type { Core } from "../../src/app/core.ts";
import type { ServiceWithOrg } from "../support/service-with-org.ts";
import { BUN, ROOT } from "../support/env.ts";

export const MAIN = join(ROOT, "src", "main.ts");

export interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

const childEnv = (env: Record<string, string>) => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", ...env });

/** `docverify ARGS…` in `cwd`; resolves when it exits. */
export function spawnBulk(args: string[], cwd: string, env: Record<string, string> = {}) {
  return Bun.spawn([BUN, MAIN, ...args], { cwd, env: childEnv(env), stdin: "ignore", stdout: "pipe", stderr: "pipe" });
}

export async function runBulk(args: string[], cwd: string, env: Record<string, string> = {}): Promise<Ran> {
  const p = spawnBulk(args, cwd, env);
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}

/** `n` small files of distinct content in `dir` (created), named `<prefix>-0000.txt`…; their paths relative to `dir`'s parent. */
export function makeFiles(dir: string, n: number, prefix = "doc"): void {
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < n; i++) writeFileSync(join(dir, `${prefix}-${String(i).padStart(4, "0")}.txt`), `${prefix} ${i} ${dir}\n`);
}

/** The --json output: one object per file, then the summary. */
export function jsonOutput(stdout: string): { files: Record<string, unknown>[]; summary: Record<string, unknown> } {
  const lines = stdout
    .trim()
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const last = lines.pop();
  if (last === undefined || typeof last.summary !== "object") throw new Error(`no summary line in:\n${stdout.slice(-2000)}`);
  return { files: lines, summary: last.summary as Record<string, unknown> };
}

export interface ManifestEntry {
  path: string;
  hash?: string;
  recordId?: string;
  state: string;
  error?: string;
  receipt?: string;
}

/** The manifest's lines that parse (a torn last line is left out, as the commands do). */
export function readManifestLines(path: string): ManifestEntry[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as ManifestEntry];
      } catch {
        return [];
      }
    });
}

/** The organisation's records as the service holds them: the database, through the administrator's core. */
export function recordCount(admin: Core, orgId: string): { records: number; hashes: number; revoked: number } {
  return admin.db.$client.query("SELECT count(*) AS records, count(DISTINCT doc_hash) AS hashes, count(revoked_at) AS revoked FROM records WHERE org_id = ?").get(orgId) as { records: number; hashes: number; revoked: number };
}

/** The organisation's ledger topic is made at its first record: made before a test, so what it times is its own run. */
export async function firstRecord(s: ServiceWithOrg): Promise<void> {
  const client = createClient({ url: s.svc.url, apiKey: s.key, retry: { attempts: 30 } });
  await client.createRecord({ originalDocHash: `sha256:${"0".repeat(63)}1` });
}
