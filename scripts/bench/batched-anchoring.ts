/**
 * Batched anchoring under a ledger with a cost per message (docs/benchmarks.md "Batched
 * anchoring"): what batches (docs/anchoring.md "Batches") change, measured against the same load
 * with each record sent as its own message (the product's DOCVERIFY_BATCH_WINDOW_MS=0).
 *
 * The ledger: `docverify local-ledger` in a process of its own, 3 s consensus, and a throughput
 * cost per message: `--consensus-interval-ms` CONSENSUS_INTERVAL_MS (10), at most one transaction
 * reaching consensus per 10 ms, 100 a second (docs/local-ledger.md "Consensus"). A real network
 * bounds what one appliance gets through it: Hedera's throttles hold the whole network to about
 * 10,000 consensus transactions a second, shared by every user and enforced by each node for its
 * share (some 30 nodes: about 330 a second a node for everyone). 100 a second for one appliance is
 * generous; the unbatched figure is that cap, whatever the machine.
 *
 * The service: scripts/bench/app-server.ts `--unpaced` (creation not paced to the anchor loop:
 * the service takes records as fast as it signs and stores them) on a fresh data folder, pointed at
 * that ledger with DOCVERIFY_LOCAL_LEDGER_URL. Twice, each time with a fresh data folder and a
 * fresh ledger: batched (the default window, 250 ms), then unbatched (window 0). Each run:
 * once the organisation's first record is anchored (its key announcement with it), CONNECTIONS
 * client loops POST /v1/records back to back, WARMUP_S, then the measured window;
 * records created and anchored (their messages or leaves `anchored`) per second in the window,
 * and the backlog sampled every second (anchor-load.ts). After the batched run the backlog drains
 * and the topic is read back through the mirror (exactly-once.ts): every message the loop sent on
 * the organisation's topic, per 10,000 records created, and the mean leaves a batch. The unbatched
 * run is not drained: its backlog would take minutes at 100 messages a second, and its rate in the
 * window is what is compared.
 *
 * Targets: anchoring keeps pace with creation (anchored ≥ 0.95 × created in the window, the
 * backlog flat); batched anchoring ≥ 5 × the unbatched rate; at most 100 ledger messages per
 * 10,000 records (a hundredth of the unbatched count).
 *
 *   bun scripts/bench/batched-anchoring.ts [--seconds N] [--json FILE]
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { benchOrganisation, drain, firstAnchored, firstRecord, KEEPS_PACE_SHARE, keepsPace, MAIN, poster, runLoad, sampler, tail, type LoadResult } from "./anchor-load.ts";
import { checkExactlyOnce, describeCheck, type ExactlyOnceCheck } from "./exactly-once.ts";
import { spawnLogged, startAppServer, stopProcess, type Server } from "./processes.ts";

const CONSENSUS_MS = 3000;
export const CONSENSUS_INTERVAL_MS = 10;
const CONNECTIONS = 16;
const WARMUP_S = 5;
const DRAIN_TIMEOUT_S = 240;
/** The longest measured window: the unbatched run's backlog grows by the whole creation rate. */
const MAX_SECONDS = 30;
export const TARGETS = {
  /** Ledger messages per 10,000 records created: a hundredth of one message per record. */
  messagesPer10k: 100,
  /** Batched records anchored per second against the unbatched rate. */
  speedup: 5,
};
const UNLIMITED = {
  DOCVERIFY_RATE_LIMIT_ANONYMOUS: "1000000000",
  DOCVERIFY_RATE_LIMIT_KEY: "1000000000",
  DOCVERIFY_RATE_LIMIT_ORG: "1000000000",
};

export interface AnchoringRun {
  readonly batchWindowMs: number;
  readonly windowS: number;
  readonly recordsCreated: number;
  readonly recordsPerSecond: number;
  readonly recordsAnchored: number;
  readonly anchoredPerSecond: number;
  readonly refused503: number;
  readonly otherErrors: number;
  readonly backlog: LoadResult["backlog"];
  readonly keepsPace: { readonly share: number; readonly verdict: "PASS" | "MISS" };
  /** Null for the unbatched run (not drained). */
  readonly drainS: number | null;
  readonly check: ExactlyOnceCheck | null;
}

export interface BatchedAnchoringReport {
  readonly consensusMs: number;
  readonly consensusIntervalMs: number;
  /** The most messages a second the ledger brings to consensus: 1,000 / the interval. */
  readonly ledgerMessagesPerSecond: number;
  readonly connections: number;
  readonly warmupS: number;
  readonly batched: AnchoringRun;
  readonly unbatched: AnchoringRun;
  /** Every message on the batched run's topic per 10,000 records created in it. */
  readonly messagesPer10k: { readonly messages: number; readonly records: number; readonly per10k: number; readonly meanLeavesPerBatch: number | null; readonly target: number; readonly verdict: "PASS" | "MISS" };
  /** Batched records anchored a second / unbatched. */
  readonly speedup: { readonly ratio: number; readonly target: number; readonly verdict: "PASS" | "MISS"; readonly ratioToLedgerCap: number };
  readonly broken: string[];
}

/** `--quick`: 10 s windows; otherwise `seconds` (the anchoring bench's), at most MAX_SECONDS. */
export function batchedSeconds(options: { seconds: number; quick: boolean }): number {
  return options.quick ? 10 : Math.min(options.seconds, MAX_SECONDS);
}

interface Ledger {
  readonly env: Record<string, string>;
  readonly mirrorUrl: string;
  stop(): Promise<void>;
}

/** `docverify local-ledger` from source, in `dir`, with the cost per message; resolves once it printed its addresses. */
async function startLedger(dir: string): Promise<Ledger> {
  const spawned = spawnLogged(
    [process.execPath, MAIN, "local-ledger", "--json", "--data", join(dir, "data"), "--consensus-ms", String(CONSENSUS_MS), "--consensus-interval-ms", String(CONSENSUS_INTERVAL_MS)],
    {},
    dir,
  );
  const deadline = performance.now() + 30_000;
  for (;;) {
    const line = readFileSync(spawned.stdoutFile, "utf8").split("\n").find((l) => l.startsWith("{"));
    if (line !== undefined) {
      const info = JSON.parse(line) as { mirrorUrl: string; operatorAccountId: string; operatorKeyFile: string };
      return {
        env: { DOCVERIFY_LOCAL_LEDGER_URL: info.mirrorUrl, DOCVERIFY_LEDGER_OPERATOR_ID: info.operatorAccountId, DOCVERIFY_LEDGER_OPERATOR_KEY_FILE: info.operatorKeyFile },
        mirrorUrl: info.mirrorUrl,
        stop: async () => void (await stopProcess(spawned.proc, 15_000)),
      };
    }
    if (spawned.proc.exitCode !== null || performance.now() > deadline) {
      spawned.proc.kill("SIGKILL");
      throw new Error(`the local ledger did not start:\n${tail(spawned.stderrFile)}`);
    }
    await Bun.sleep(20);
  }
}

/** One run: a fresh ledger and data folder, the service unpaced with `batchWindowMs`, the load. */
async function run(work: string, batchWindowMs: number, seconds: number, say: (line: string) => void, broken: string[]): Promise<AnchoringRun> {
  const label = batchWindowMs === 0 ? "unbatched" : "batched";
  const dir = join(work, label);
  const dataDir = join(dir, "data");
  const ledger = await startLedger(join(dir, "ledger"));
  let server: Server | null = null;
  let db: Database | null = null;
  try {
    const { key } = await benchOrganisation(dataDir, `Batched Anchoring Bench (${label})`);
    server = await startAppServer(join(dir, "app"), {
      dataDir,
      env: { ...ledger.env, ...UNLIMITED, DOCVERIFY_BATCH_WINDOW_MS: String(batchWindowMs) },
      flag: "--unpaced",
    });
    const records = poster(server.url, key);
    const first = await firstRecord(records);
    say(`  ${label} (DOCVERIFY_BATCH_WINDOW_MS=${batchWindowMs}), topic ${first.topicId}:`);
    db = new Database(join(dataDir, "docverify.db"), { readonly: true });
    const sample = sampler(db);
    await firstAnchored(sample, 60);
    const load = await runLoad({ poster: records, sample, connections: CONNECTIONS, warmupS: WARMUP_S, seconds, say });
    if (load.errors > 0) broken.push(`${label}: ${load.errors} POST /v1/records failed other than with 503; first: ${load.firstError}`);
    if (load.refused503 > 0) broken.push(`${label}: ${load.refused503} answers 503 from a service not paced to the ledger`);
    let drainS: number | null = null;
    let check: ExactlyOnceCheck | null = null;
    if (batchWindowMs > 0) {
      drainS = await drain(sample, DRAIN_TIMEOUT_S);
      if (drainS === null) broken.push(`${label}: the backlog did not drain within ${DRAIN_TIMEOUT_S} s of the load stopping`);
      check = await checkExactlyOnce(db, ledger.mirrorUrl, first.topicId, [first.recordId, ...load.acknowledged]);
      if (!check.exactlyOnce) broken.push(`${label}: not exactly once: ${describeCheck(check)}`);
    }
    return {
      batchWindowMs,
      windowS: load.windowS,
      recordsCreated: load.createdInWindow,
      recordsPerSecond: load.createdInWindow / load.windowS,
      recordsAnchored: load.anchoredInWindow,
      anchoredPerSecond: load.anchoredInWindow / load.windowS,
      refused503: load.refused503,
      otherErrors: load.errors,
      backlog: load.backlog,
      keepsPace: keepsPace(load.createdInWindow, load.anchoredInWindow, load.backlog.flat, load.refused503InWindow),
      drainS,
      check,
    };
  } catch (e) {
    throw new Error(`batched anchoring (${label}): ${(e as Error).message}\n${tail(join(dir, "app", "stderr.log"))}${tail(join(dir, "app", "stdout.log"))}`);
  } finally {
    db?.close();
    if (server !== null) {
      try {
        const code = await server.stop();
        if (code !== 0) broken.push(`${label}: the app server exited with ${code} on SIGTERM`);
      } catch (e) {
        broken.push(`${label}: ${(e as Error).message}`);
      }
    }
    await ledger.stop().catch((e: unknown) => void broken.push(`${label}: the local ledger: ${(e as Error).message}`));
  }
}

export async function runBatchedAnchoringBench(options: { seconds: number; workDir?: string; log?: (line: string) => void }): Promise<BatchedAnchoringReport> {
  const say = options.log ?? ((line: string) => console.log(line));
  const ownWork = options.workDir === undefined;
  const work = options.workDir !== undefined ? join(options.workDir, "batched-anchoring") : mkdtempSync(join(tmpdir(), "docverify-bench-batched-"));
  const broken: string[] = [];
  try {
    say(
      `\nbatched anchoring: docverify local-ledger, ${CONSENSUS_MS} ms consensus and at most one message per ${CONSENSUS_INTERVAL_MS} ms (${1000 / CONSENSUS_INTERVAL_MS} a second); ` +
        `app-server --unpaced; POST /v1/records from ${CONNECTIONS} client loops, ${WARMUP_S} s warm-up, then ${options.seconds} s measured; batched, then each record its own message`,
    );
    const batched = await run(work, 250, options.seconds, say, broken);
    const unbatched = await run(work, 0, options.seconds, say, broken);
    const c = batched.check;
    const per10k = c === null || c.records === 0 ? Number.NaN : (c.ledgerMessages * 10_000) / c.records;
    const ratio = unbatched.anchoredPerSecond === 0 ? Number.POSITIVE_INFINITY : batched.anchoredPerSecond / unbatched.anchoredPerSecond;
    return {
      consensusMs: CONSENSUS_MS,
      consensusIntervalMs: CONSENSUS_INTERVAL_MS,
      ledgerMessagesPerSecond: 1000 / CONSENSUS_INTERVAL_MS,
      connections: CONNECTIONS,
      warmupS: WARMUP_S,
      batched,
      unbatched,
      messagesPer10k: {
        messages: c?.ledgerMessages ?? 0,
        records: c?.records ?? 0,
        per10k,
        meanLeavesPerBatch: c?.meanLeavesPerBatch ?? null,
        target: TARGETS.messagesPer10k,
        verdict: per10k <= TARGETS.messagesPer10k ? "PASS" : "MISS",
      },
      // Beside it, against the most one message per record could anchor on this ledger: the
      // unbatched run may anchor less than that (its loop shares the thread with creation).
      speedup: { ratio, target: TARGETS.speedup, verdict: ratio >= TARGETS.speedup ? "PASS" : "MISS", ratioToLedgerCap: batched.anchoredPerSecond / (1000 / CONSENSUS_INTERVAL_MS) },
      broken,
    };
  } finally {
    if (ownWork) rmSync(work, { recursive: true, force: true });
  }
}

export function printBatchedAnchoring(r: BatchedAnchoringReport, say: (line: string) => void = (l) => console.log(l)): void {
  const f = (x: number) => x.toFixed(1);
  for (const [label, x] of [["batched", r.batched], ["unbatched", r.unbatched]] as const) {
    const b = x.backlog;
    say(
      `  ${label.padEnd(9)} created ${f(x.recordsPerSecond).padStart(7)} /s, anchored ${f(x.anchoredPerSecond).padStart(7)} /s (${x.recordsAnchored} of ${x.recordsCreated} in ${f(x.windowS)} s); ` +
        `backlog start ${b.start}, end ${b.end}, max ${b.max}, ${b.flat ? "flat" : "growing"}${x.drainS === null ? "" : `; drained in ${f(x.drainS)} s`}`,
    );
  }
  const m = r.messagesPer10k;
  say(
    `  ledger messages per 10,000 records: ${Number.isNaN(m.per10k) ? "—" : f(m.per10k)} (${m.messages} messages on the topic for ${m.records} records, ` +
      `mean ${m.meanLeavesPerBatch === null ? "—" : f(m.meanLeavesPerBatch)} leaves a batch; unbatched: 10,000); target ≤ ${m.target}  ${m.verdict}`,
  );
  const k = r.batched.keepsPace;
  say(
    `  batched anchoring keeps pace with unpaced creation: anchored ${k.share.toFixed(2)} × created in the window, backlog ${r.batched.backlog.flat ? "flat" : "growing"}; ` +
      `target ≥ ${KEEPS_PACE_SHARE.toFixed(2)} ×, flat  ${k.verdict}`,
  );
  say(
    `  batched vs unbatched records anchored a second, ledger at ${r.ledgerMessagesPerSecond} messages a second: ${f(r.batched.anchoredPerSecond)} vs ${f(r.unbatched.anchoredPerSecond)} = ` +
      `${r.speedup.ratio.toFixed(1)} × (${r.speedup.ratioToLedgerCap.toFixed(1)} × the ${r.ledgerMessagesPerSecond} a second one message per record could reach at best); target ≥ ${r.speedup.target} ×  ${r.speedup.verdict}`,
  );
  if (r.batched.check !== null) say(`  batched run ${describeCheck(r.batched.check)}`);
}

if (import.meta.main) {
  const { values } = parseArgs({ args: process.argv.slice(2), options: { seconds: { type: "string" }, json: { type: "string" } }, strict: true });
  const seconds = Number(values.seconds ?? "10");
  if (!Number.isInteger(seconds) || seconds < 10) {
    process.stderr.write(`--seconds must be a whole number ≥ 10, got ${values.seconds}\n`);
    process.exit(2);
  }
  const report = await runBatchedAnchoringBench({ seconds });
  printBatchedAnchoring(report);
  if (values.json !== undefined) await Bun.write(values.json, JSON.stringify(report, null, 2) + "\n");
  if (report.broken.length > 0) {
    process.stderr.write(`\nBROKEN:\n${report.broken.map((b) => `  - ${b}`).join("\n")}\n`);
    process.exit(1);
  }
  process.exit(0);
}
