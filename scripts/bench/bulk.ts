/**
 * The bulk path (`docverify authenticate`, src/bulk/), two ratios measured in the same run:
 *
 * 1. Hashing: src/bulk/hash.ts's hashFile on one large file (1 GiB, 256 MiB with --quick; made
 *    once in .bench-cache/) against `sha256sum` on the same file, page cache warm for both (one
 *    unmeasured read first), in Bun (this process) and in Node.js 20 (the module bundled for Node,
 *    as dist/docverify-client.mjs bundles it). ROUNDS rounds in turn, the median of each. Target:
 *    each runtime at least 0.9 × sha256sum's rate.
 * 2. Authentication: `bun src/main.ts authenticate` on FILES small files (each its own hash) at
 *    its default concurrency against a local service, files per second from spawn to exit,
 *    against the record-creation rate of the same service alone just before and just after it
 *    (their mean): the anchoring bench's client loops (scripts/bench/anchor-load.ts runLoad: POST
 *    /v1/records with fresh hashes through fetch), as many loops as the command's concurrency,
 *    every one a 201 (a refusal or an error breaks the measurement). The service is the app
 *    `serve` builds with record creation not paced to the ledger (scripts/bench/app-server.ts
 *    --unpaced) and rate limits out of reach: both sides measure the creation path, not the
 *    anchoring rate or the limits. Its organisation (validated, API access) and live key are made
 *    with the admin commands. Target: at least 0.8 × the server-alone rate.
 *
 * Alone: `bun scripts/bench/bulk.ts [--quick]`; `npm run bench` runs it after batched anchoring.
 */
import { randomFillSync } from "node:crypto";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { hashFile } from "../../src/bulk/hash.ts";
import { benchOrganisation, MAIN, poster, firstRecord, runLoad } from "./anchor-load.ts";
import { CACHE_ROOT } from "./dataset.ts";
import { baseEnv, killAll, startAppServer } from "./processes.ts";

const ROOT = resolve(import.meta.dir, "..", "..");
export const BULK_TARGETS = { hashToSha256sum: 0.9, authenticateToCreate: 0.8 } as const;
export const FILES = 10_000;
/** Requests at once: `docverify authenticate`'s default --concurrency, for both sides. */
export const CONCURRENCY = 8;
const ROUNDS = 3;
const MiB = 1024 * 1024;
/** Rate limits far above any load the machine can generate (as scripts/bench.ts's UNLIMITED). */
const UNLIMITED = { DOCVERIFY_RATE_LIMIT_ANONYMOUS: "1000000000", DOCVERIFY_RATE_LIMIT_KEY: "1000000000", DOCVERIFY_RATE_LIMIT_ORG: "1000000000" };

export type Verdict = "PASS" | "MISS";
export interface Check {
  readonly what: string;
  readonly verdict: Verdict;
}

export interface HashingReport {
  readonly bytes: number;
  /** Bytes per second, median of the rounds. */
  readonly sha256sum: number;
  readonly bun: number;
  readonly node: number;
  readonly rounds: number;
}

export interface AuthenticateReport {
  readonly files: number;
  readonly concurrency: number;
  readonly seconds: number;
  readonly filesPerSecond: number;
  /** The server alone: records created per second by the client loops, the mean of a window before the command and one after. */
  readonly createPerSecond: number;
  readonly createWindowS: number;
}

export interface BulkReport {
  readonly hashing: HashingReport | null;
  readonly authenticate: AuthenticateReport | null;
  readonly checks: readonly Check[];
  readonly broken: readonly string[];
}

export const verdict = (ratio: number, target: number): Verdict => (Number.isFinite(ratio) && ratio >= target ? "PASS" : "MISS");

const mbps = (bytesPerSecond: number) => `${(bytesPerSecond / 1e6).toFixed(0)} MB/s`;
const rate = (n: number) => Math.round(n).toLocaleString("en-US");

/** The targets of a report, each with its ratio and verdict: what the harness prints and stores. */
export function bulkChecks(hashing: HashingReport | null, auth: AuthenticateReport | null): Check[] {
  const checks: Check[] = [];
  if (hashing !== null) {
    for (const runtime of ["bun", "node"] as const) {
      const r = hashing[runtime] / hashing.sha256sum;
      checks.push({
        what: `hashFile in ${runtime === "bun" ? "Bun" : "Node.js"} ${mbps(hashing[runtime])} vs sha256sum ${mbps(hashing.sha256sum)} on ${hashing.bytes / MiB} MiB (median of ${hashing.rounds}): ${r.toFixed(2)} ×; target ≥ ${BULK_TARGETS.hashToSha256sum.toFixed(2)}`,
        verdict: verdict(r, BULK_TARGETS.hashToSha256sum),
      });
    }
  }
  if (auth !== null) {
    const r = auth.filesPerSecond / auth.createPerSecond;
    checks.push({
      what:
        `authenticate ${rate(auth.files)} files in ${auth.seconds.toFixed(1)} s = ${rate(auth.filesPerSecond)} files/s vs the server alone ${rate(auth.createPerSecond)} records/s ` +
        `(${auth.concurrency} at once both): ${r.toFixed(2)} ×; target ≥ ${BULK_TARGETS.authenticateToCreate.toFixed(2)}`,
      verdict: verdict(r, BULK_TARGETS.authenticateToCreate),
    });
  }
  return checks;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The large file, made once (random bytes) in the bench cache and found there after. */
function ensureLargeFile(bytes: number, say: (line: string) => void): string {
  const file = join(CACHE_ROOT, `bulk-hash-${bytes / MiB}MiB.bin`);
  if (existsSync(file) && statSync(file).size === bytes) return file;
  mkdirSync(CACHE_ROOT, { recursive: true });
  say(`making ${file} (${bytes / MiB} MiB of random bytes, once)`);
  const partial = `${file}.partial`;
  const fd = openSync(partial, "w");
  try {
    const chunk = Buffer.allocUnsafe(16 * MiB);
    for (let written = 0; written < bytes; written += chunk.length) writeSync(fd, randomFillSync(chunk), 0, Math.min(chunk.length, bytes - written));
  } finally {
    closeSync(fd);
  }
  renameSync(partial, file);
  return file;
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; seconds: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, seconds: (performance.now() - started) / 1000 };
}

async function sha256sum(file: string): Promise<string> {
  const proc = Bun.spawn(["sha256sum", file], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`sha256sum failed (exit ${code}): ${err} (Debian package coreutils)`);
  return `sha256:${out.split(" ")[0]}`;
}

/** hashFile bundled for Node.js 20; running it prints the digest and the seconds the hash took, inside Node. */
async function nodeHasher(workDir: string): Promise<(file: string) => Promise<{ value: string; seconds: number }>> {
  const built = await Bun.build({ entrypoints: [join(ROOT, "src", "bulk", "hash.ts")], target: "node", format: "esm", outdir: workDir, naming: "bulk-hash.mjs" });
  if (!built.success) throw new Error(`bundling hash.ts for Node.js failed: ${built.logs.join("\n")}`);
  const script = join(workDir, "bulk-hash-timed.mjs");
  writeFileSync(script, `import { hashFile } from "./bulk-hash.mjs";\nconst t = performance.now();\nconst d = await hashFile(process.argv[2]);\nconsole.log(JSON.stringify({ value: d, seconds: (performance.now() - t) / 1000 }));\n`);
  return async (file) => {
    const proc = Bun.spawn(["node", script, file], { stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    if (code !== 0) throw new Error(`node failed (exit ${code}): ${err}`);
    return JSON.parse(out) as { value: string; seconds: number };
  };
}

export async function measureHashing(options: { bytes: number; workDir: string; say: (line: string) => void }): Promise<HashingReport> {
  const file = ensureLargeFile(options.bytes, options.say);
  const node = await nodeHasher(options.workDir);
  const expected = await hashFile(file); // also what puts the file in the page cache
  const seconds = { sha256sum: [] as number[], bun: [] as number[], node: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    // The order turns each round, so no tool always runs right after another's cache-warming.
    const runs = [
      ["sha256sum", () => timed(() => sha256sum(file))],
      ["bun", () => timed(() => hashFile(file))],
      ["node", () => node(file)],
    ] as const;
    for (let i = 0; i < runs.length; i++) {
      const [name, run] = runs[(i + round) % runs.length]!;
      const { value, seconds: s } = await run();
      if (value !== expected) throw new Error(`${name} gave ${value}, hashFile ${expected}`);
      seconds[name].push(s);
    }
  }
  const perSecond = (s: number[]) => options.bytes / median(s);
  return { bytes: options.bytes, sha256sum: perSecond(seconds.sha256sum), bun: perSecond(seconds.bun), node: perSecond(seconds.node), rounds: ROUNDS };
}

export async function measureAuthenticate(options: { workDir: string; quick: boolean; say: (line: string) => void }): Promise<AuthenticateReport> {
  const dir = join(options.workDir, "bulk");
  const dataDir = join(dir, "data");
  const docs = join(dir, "documents");
  for (let i = 0; i < FILES; i++) {
    const sub = join(docs, String(Math.floor(i / 1000)).padStart(2, "0"));
    if (i % 1000 === 0) mkdirSync(sub, { recursive: true });
    writeFileSync(join(sub, `doc-${String(i).padStart(5, "0")}.pdf`), `bulk bench document ${i} ${dir}\n`);
  }
  const { key } = await benchOrganisation(dataDir, "Bulk Bench");
  const server = await startAppServer(join(dir, "server"), { dataDir, env: UNLIMITED, flag: "--unpaced" });
  try {
    const p = poster(server.url, key);
    await firstRecord(p); // the organisation's topic exists: neither side waits for it
    // The server alone before and after the command, their mean its yardstick: the machine's
    // speed drifts over a minute, and the database grows by the command's records in between.
    const alone = async (when: string) => {
      const seconds = options.quick ? 5 : 10;
      const cpu = process.cpuUsage();
      const load = await runLoad({ poster: p, sample: () => ({ at: performance.now(), backlog: 0, anchored: 0, abandoned: 0 }), connections: CONCURRENCY, warmupS: 1, seconds, say: () => {} });
      if (load.errors > 0) throw new Error(`the server alone: ${load.errors} POST /v1/records failed; first: ${load.firstError}`);
      if (load.refused503 > 0) throw new Error(`the server alone refused ${load.refused503} records with 503: paced, not measured`);
      const used = process.cpuUsage(cpu);
      const clientMs = (used.user + used.system) / 1000 / load.acknowledged.length;
      options.say(`the server alone, ${when}: ${rate(load.createdInWindow)} records in ${load.windowS.toFixed(1)} s from ${CONCURRENCY} client loops = ${rate(load.createdInWindow / load.windowS)}/s (the loops' CPU ${clientMs.toFixed(2)} ms a record)`);
      return { perSecond: load.createdInWindow / load.windowS, windowS: load.windowS };
    };
    const before = await alone("before");

    const cmd = [process.execPath, MAIN, "authenticate", docs, "--url", server.url, "--concurrency", String(CONCURRENCY), "--manifest", join(dir, "manifest.jsonl"), "--no-progress"];
    const started = performance.now();
    const proc = Bun.spawn(cmd, { cwd: dir, env: { ...baseEnv(), DOCVERIFY_API_KEY: key }, stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    const elapsed = (performance.now() - started) / 1000;
    const usage = proc.resourceUsage();
    const commandMs = usage === undefined ? NaN : Number(usage.cpuTime.user + usage.cpuTime.system) / 1000 / FILES;
    if (code !== 0) throw new Error(`docverify authenticate exited ${code}: ${(err + out).slice(-2000)}`);
    options.say(`authenticate: ${rate(FILES)} files in ${elapsed.toFixed(1)} s (spawn to exit) = ${rate(FILES / elapsed)}/s (its CPU ${commandMs.toFixed(2)} ms a file); it said: ${out.trim().split("\n")[0]?.slice(0, 200)}`);
    const after = await alone("after");
    const createPerSecond = (before.perSecond + after.perSecond) / 2;
    return { files: FILES, concurrency: CONCURRENCY, seconds: elapsed, filesPerSecond: FILES / elapsed, createPerSecond, createWindowS: before.windowS + after.windowS };
  } finally {
    const code = await server.stop();
    if (code !== 0) options.say(`the bulk bench's server exited with ${code} on SIGTERM`);
  }
}

/** Both measurements; a failing one is reported BROKEN and the other still runs. */
export async function runBulkBench(options: { quick: boolean; workDir: string; say?: (line: string) => void }): Promise<BulkReport> {
  const say = options.say ?? ((line: string) => console.log(line));
  const bytes = (options.quick ? 256 : 1024) * MiB;
  say(`\n== bulk authentication (scripts/bench/bulk.ts): hashing ${bytes / MiB} MiB, then authenticate on ${rate(FILES)} files ==`);
  const broken: string[] = [];
  let hashing: HashingReport | null = null;
  let auth: AuthenticateReport | null = null;
  try {
    hashing = await measureHashing({ bytes, workDir: options.workDir, say });
  } catch (e) {
    broken.push(`bulk hashing: ${(e as Error).message}`);
    say(`bulk hashing: BROKEN: ${(e as Error).message}`);
  }
  try {
    auth = await measureAuthenticate({ workDir: options.workDir, quick: options.quick, say });
  } catch (e) {
    broken.push(`bulk authenticate: ${(e as Error).message}`);
    say(`bulk authenticate: BROKEN: ${(e as Error).message}`);
  }
  const checks = bulkChecks(hashing, auth);
  for (const c of checks) say(`  ${c.what}  ${c.verdict}`);
  return { hashing, authenticate: auth, checks, broken };
}

if (import.meta.main) {
  const quick = process.argv.includes("--quick");
  const work = mkdtempSync(join(tmpdir(), "docverify-bench-bulk-"));
  try {
    const report = await runBulkBench({ quick, workDir: work });
    if (report.broken.length > 0) process.exitCode = 1;
  } finally {
    killAll();
    rmSync(work, { recursive: true, force: true });
  }
}
