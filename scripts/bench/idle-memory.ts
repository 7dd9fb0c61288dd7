/**
 * Idle memory of the compiled binary, taken apart (docs/benchmarks.md "Idle memory"). Each run
 * measures as `npm run bench` does (scripts/bench.ts `idleMemory`): `serve` on a fresh data folder
 * with the embedded local ledger, "ledger ready", 20 requests to /healthz, 2 s idle, VmRSS from
 * /proc/<pid>/status. It then also reads /proc/<pid>/smaps and splits the resident set into:
 *
 * - text: the executable's code pages (Bun and JavaScriptCore) that something touched;
 * - bundle: the executable's writable segment, which holds the embedded bundle (`.bun`: sources
 *   and bytecode of every entry point) besides Bun's own data;
 * - rodata: the executable's read-only data (ICU tables, Bun's built-in modules);
 * - anonymous: heaps of both JavaScript threads, malloc, stacks, JIT code;
 * - other: shared libraries and the rest.
 *
 * File-backed pages (text, bundle, rodata) are clean and shared with the page cache, but VmRSS
 * counts them, and how many are mapped depends on the page cache (the kernel maps neighbouring
 * pages that are already cached): they vary by a few MB between runs, the anonymous part by less
 * than 1 MB. Hence medians over several runs.
 *
 *   bun scripts/bench/idle-memory.ts [--binary dist/docverify] [--runs 5] [--env NAME=VALUE]...
 *
 * --env passes a setting to serve, e.g. DOCVERIFY_LOCAL_LEDGER_URL=<mirror> to measure serve
 * without its ledger thread (start `docverify local-ledger` first). It never runs the load tests.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { envPairs, killAll, memoryOf, startDocverify } from "./processes.ts";

/** The idle measurement, as `npm run bench` makes it (scripts/bench.ts calls measureIdle). */
export const IDLE_REQUESTS = 20;
export const IDLE_WAIT_MS = 2_000;

export interface IdleBreakdown {
  readonly rss: number;
  readonly anonymous: number;
  readonly text: number;
  readonly bundle: number;
  readonly rodata: number;
  readonly other: number;
  readonly threads: number;
}

/** The resident set of `pid` by kind of mapping (see the file's comment), in bytes. */
export function breakdownOf(pid: number, executable: string): Omit<IdleBreakdown, "rss" | "threads"> {
  const sums = { anonymous: 0, text: 0, bundle: 0, rodata: 0, other: 0 };
  let kind: keyof typeof sums = "other";
  for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    const mapping = /^[0-9a-f]+-[0-9a-f]+ (\S{4}) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (mapping !== null) {
      const [, perms, path] = mapping as unknown as [string, string, string];
      const ours = path === executable || (path.startsWith(executable) && path.endsWith(" (deleted)"));
      kind = ours ? (perms.includes("x") ? "text" : perms.includes("w") ? "bundle" : "rodata") : "other";
      continue;
    }
    const field = /^(Rss|Anonymous):\s+(\d+) kB/.exec(line);
    if (field === null) continue;
    const bytes = Number(field[2]) * 1024;
    // Anonymous pages inside a file mapping (written-to data) count as anonymous, as RssAnon does.
    if (field[1] === "Anonymous") {
      sums.anonymous += bytes;
      sums[kind] -= bytes;
    } else {
      sums[kind] += bytes;
    }
  }
  return sums;
}

/** The idle state both memory figures start from: IDLE_REQUESTS health checks, then IDLE_WAIT_MS of quiet. */
export async function settleIdle(url: string): Promise<void> {
  for (let i = 0; i < IDLE_REQUESTS; i++) {
    const response = await fetch(`${url}/healthz`);
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`GET /healthz answered ${response.status}`);
  }
  await Bun.sleep(IDLE_WAIT_MS);
}

export async function measureIdle(binary: string, env: Record<string, string> = {}): Promise<IdleBreakdown> {
  const dir = mkdtempSync(join(tmpdir(), "docverify-idle-"));
  try {
    const server = await startDocverify(binary, dir, { env });
    try {
      await settleIdle(server.url);
      const { rss } = memoryOf(server.pid);
      const status = readFileSync(`/proc/${server.pid}/status`, "utf8");
      const threads = Number(/^Threads:\s+(\d+)/m.exec(status)?.[1] ?? NaN);
      return { rss, threads, ...breakdownOf(server.pid, readFileSync(`/proc/${server.pid}/cmdline`, "utf8").split("\0")[0]!) };
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { binary: { type: "string" }, runs: { type: "string" }, env: { type: "string", multiple: true } },
    strict: true,
    allowPositionals: false,
  });
  const binary = values.binary ?? join(import.meta.dir, "..", "..", "dist", "docverify");
  const runs = Number(values.runs ?? 5);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer, got ${values.runs}`);
  const env = envPairs(values.env ?? []);
  // The path as the kernel shows it in smaps: absolute.
  const absolute = binary.startsWith("/") ? binary : join(process.cwd(), binary);
  const results: IdleBreakdown[] = [];
  for (let i = 0; i < runs; i++) {
    const r = await measureIdle(absolute, env);
    results.push(r);
    console.log(
      `run ${i + 1}: VmRSS ${mb(r.rss)} = anonymous ${mb(r.anonymous)} + text ${mb(r.text)} + bundle ${mb(r.bundle)} + rodata ${mb(r.rodata)} + other ${mb(r.other)}; ${r.threads} threads`,
    );
  }
  const m = (k: keyof IdleBreakdown) => median(results.map((r) => r[k]));
  console.log(
    `median of ${runs}: VmRSS ${mb(m("rss"))}  anonymous ${mb(m("anonymous"))}  text ${mb(m("text"))}  bundle ${mb(m("bundle"))}  rodata ${mb(m("rodata"))}  other ${mb(m("other"))}  (target ≤ 80.0 MB)`,
  );
  return 0;
}

if (import.meta.main) {
  try {
    process.exitCode = await main(process.argv.slice(2));
  } catch (e) {
    killAll();
    process.stderr.write(`idle-memory: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  }
}
