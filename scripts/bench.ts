/**
 * `npm run bench`: throughput and latency of docverify against a floor (a bare Bun.serve in
 * its own process), on an empty data folder and on a 1,000,000-record one (verification,
 * the verification log, record creation), plus the compiled binary's cold start and idle
 * memory against their targets, its memory after a load and a minute idle (scripts/bench/
 * memory-after-load.ts), anchoring while records are created (scripts/bench/anchoring.ts) and what
 * batches change under a ledger with a cost per message (scripts/bench/batched-anchoring.ts), the
 * bulk path (scripts/bench/bulk.ts: hashing against sha256sum, authenticate against the server
 * alone), and at scale: 10,000,000 records and log rows. See docs/benchmarks.md ("What it measures").
 *
 * A benchmark reports: a missed target is printed as MISS and the exit code stays 0. The exit
 * code is 1 only when the measurement itself broke (a server did not start, wrk failed, or
 * the load saw error responses or socket errors), since those figures mean nothing.
 *
 * `--postgres` runs the PostgreSQL comparison instead: one node on PostgreSQL against the embedded
 * SQLite, and failover of three nodes under load (scripts/bench/postgres-run.ts).
 *
 *   bun scripts/bench.ts [--quick] [--scale-only | --postgres] [--json FILE]
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, release, tmpdir } from "node:os";
import { join } from "node:path";
import { copyDataset, ensureDataset } from "./bench/dataset.ts";
import { preflight } from "./bench/preflight.ts";
import { tableDepths } from "./bench/btree.ts";
import { BULK_SIGNATURE_BYTES, ensureScaleDataset, scaleSpec, type ScaleDataset } from "./bench/scale-dataset.ts";
import { runScale, type PagePair, type ScaleServing } from "./bench/scale.ts";
import { coldStart, killAll, memoryOf, startAppServer, startDocverify, startFloor, type Server } from "./bench/processes.ts";
import { EMPTY_SCENARIOS, hotSet, LOG_DEPTH, millionScenarios, type Scenario, type Target } from "./bench/scenarios.ts";
import { checkBatchedReceipt, type BatchedReceipt } from "./bench/batched-receipt.ts";
import { ensureWrk, runWrk, wrkProblem, wrkVersion, type WrkResult } from "./bench/wrk.ts";
import { anchoringSeconds, printAnchoring, runAnchoringBench } from "./bench/anchoring.ts";
import { batchedSeconds, printBatchedAnchoring, runBatchedAnchoringBench, type BatchedAnchoringReport } from "./bench/batched-anchoring.ts";
import { runVerifierBench, VERIFIER_TARGET_MS } from "./bench/receipt-verifier.ts";
import { runBulkBench, type BulkReport } from "./bench/bulk.ts";
import { runPersonSigningBench, type PersonSigningResult } from "./bench/person-signing.ts";
import { IDLE_REQUESTS, IDLE_WAIT_MS, measureIdle } from "./bench/idle-memory.ts";
import { describeMemoryAfterLoad, LOAD_S, measureMemoryAfterLoad, type MemoryAfterLoad } from "./bench/memory-after-load.ts";
import { parseBenchArgs, type BenchArgs } from "./bench/args.ts";
import type { PostgresReport } from "./bench/postgres-run.ts";

/**
 * Rounds of the deep-page alternation, and each measurement's seconds. The rounds are even in
 * number: each page runs first in half of them (one of two pages measured back to back reads
 * faster for its place alone).
 */
const ALTERNATION_ROUNDS = 4;
const ALTERNATION_SECONDS = 5;

const TARGETS = {
  coldStartMs: 100,
  idleRssBytes: 80e6,
  /** A page 10,000 rows deep at least this share of the first page's requests/s: a deep page costs what the first does. */
  deepPageRatio: 0.95,
  /** Records per second at least this share of the single-core sign + seal rate. */
  recordsToSignRate: 0.6,
  /** Public receipts per second at least this share of public verifications per second. */
  receiptToVerifyRate: 0.5,
  /** Person signatures per second (JSON endpoints, passkey included) at least this share of organisation records per second. */
  personToRecordRate: 0.5,
  /** Public verification's p99 at 10,000,000 records at most this multiple of its p99 at 1,000,000. */
  scaleP99Ratio: 1.2,
  /** A log page 1,000,000 rows deep at least this share of the first page's requests/s. */
  scaleDeepPageRatio: 0.95,
};
/** Rate limits far above any load the machine can generate: the bench measures work, not refusals. */
const UNLIMITED = {
  DOCVERIFY_RATE_LIMIT_ANONYMOUS: "1000000000",
  DOCVERIFY_RATE_LIMIT_KEY: "1000000000",
  DOCVERIFY_RATE_LIMIT_ORG: "1000000000",
};
const SIGN_RATE_SECONDS = 3;
/**
 * Persons signing at once in the person-signing measurement (closed loop, one signature at a time
 * each): as many as records-create's connections, so the two rates compared meet the same
 * concurrency.
 */
const PERSON_SIGNERS = 50;
/** One wrk thread per core of the reference machine (2 cores). */
const WRK_THREADS = 2;
/** Above this share of busy CPU before the run, the figures are not comparable with a quiet run's. */
const BUSY_WARNING = 0.2;

interface Mode {
  readonly name: "full" | "quick";
  readonly warmupS: number;
  /** Caps each scenario's duration. */
  readonly maxDurationS: number;
  readonly coldStartRuns: number;
}
const FULL: Mode = { name: "full", warmupS: 2, maxDurationS: Infinity, coldStartRuns: 10 };
const QUICK: Mode = { name: "quick", warmupS: 1, maxDurationS: 3, coldStartRuns: 5 };

type Verdict = "PASS" | "MISS";

interface TargetCheck {
  readonly what: string;
  readonly verdict: Verdict;
}

interface ScenarioReport {
  readonly name: string;
  readonly target: Target;
  readonly method: string;
  readonly path: string;
  readonly connections: number;
  readonly threads: number;
  readonly durationS: number;
  readonly floor: WrkResult;
  readonly docverify: WrkResult;
  readonly ratio: number;
  readonly floorRatioTarget: number | null;
  readonly verdict: Verdict | null;
  /** Every target of the scenario (floor ratio, p99, absolute rate), each with its verdict. */
  readonly checks: readonly TargetCheck[];
}

/** The scale part's report: the dataset, and how it was served. */
interface ScaleReport extends ScaleServing {
  readonly dataset: {
    readonly records: number;
    readonly logRows: number;
    readonly logRowsOfLogOrg: number;
    readonly deepPageDepth: number;
    /** False for a development dataset (BENCH_SCALE_RECORDS): its verdicts are not the 10,000,000-record targets'. */
    readonly full: boolean;
    readonly realRecords: number;
    readonly bulkSignatureBytes: number;
    readonly bytes: number;
    readonly buildSeconds: number;
    readonly depths: Readonly<Record<string, number>>;
    readonly depthsAtOneMillion: Readonly<Record<string, number>> | null;
  };
}

const USAGE = `Usage: bun scripts/bench.ts [--quick] [--scale-only | --postgres] [--json FILE]
  --quick       short smoke run (${QUICK.maxDurationS} s per measurement, ${QUICK.coldStartRuns} cold starts), without the 10,000,000-record scale part
  --scale-only  only the 10,000,000-record scale part and the 1,000,000-record public verification it is compared with;
                with --quick, ${QUICK.maxDurationS} s per measurement
  --postgres    instead of the default run: public verification, organisation tier and record creation on one node on
                PostgreSQL and on the embedded SQLite (the same 100,000-record dataset), as ratios, and the failover time of
                three nodes on PostgreSQL under load (with --quick, ${QUICK.maxDurationS} s per measurement)
  --json FILE   also write the results as JSON to FILE
`;
const QUICK_SKIPS_SCALE =
  "scale (10,000,000 records and log rows): not measured in a --quick run; a full run measures it, `npm run bench -- --scale-only` measures only it";

async function main(argv: string[]): Promise<number> {
  let args: BenchArgs;
  try {
    args = parseBenchArgs(argv);
  } catch (e) {
    process.stderr.write(`bench: ${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const options = { json: args.json ?? undefined };
  const mode = args.quick ? QUICK : FULL;
  if (args.postgres) return await postgresMain(mode, options.json);
  const scaleOnly = args.scaleOnly;
  const withScale = scaleOnly || mode.name === "full";
  const wrk = await ensureWrk();
  const { machine, date } = await describeMachine(wrk, `${mode.name} run${scaleOnly ? ", scale part only" : ""}`);

  const work = workFolder();
  const broken: string[] = [];
  try {
    const binary = await build(work);
    const dataset = await ensureDataset((line) => console.log(line));
    // Built before any measurement, so that the build's CPU and disk work never overlaps one.
    let scaleData: ScaleDataset | null = null;
    if (withScale) {
      try {
        scaleData = await ensureScaleDataset(scaleSpec(), (line) => console.log(line));
      } catch (e) {
        // The rest of the run still means something; the run as a whole is BROKEN (a target unchecked).
        broken.push(`scale dataset: ${e instanceof Error ? e.message : String(e)}`);
        console.log(`scale dataset: ${e instanceof Error ? e.message : String(e)}`);
      }
    } else {
      console.log(QUICK_SKIPS_SCALE);
    }

    const signRate = scaleOnly ? null : await measureSignRate();
    if (signRate !== null) {
      console.log(`\nsign + seal of one record on one core (scripts/bench/sign-rate.ts, ${SIGN_RATE_SECONDS} s): ${Math.round(signRate).toLocaleString("en-US")} records/s`);
    }

    console.log(`\nload: wrk ${WRK_THREADS} threads, ${mode.warmupS} s warm-up, then the measurement; same settings for floor and docverify`);
    const scenarios: ScenarioReport[] = [];
    let peakRss: number | null = null;
    let personSigning: PersonSigningResult | null = null;
    let memoryAfterLoad: MemoryAfterLoad | null = null;
    let scale: ScaleReport | null = null;
    let pagePair: PagePair | null = null;
    let batchedReceipt: BatchedReceipt | null = null;
    const floor = await startFloor(join(work, "floor"));
    try {
      const run = async (list: readonly Scenario[], service: Server) => {
        for (const scenario of list) {
          const report = await measureScenario(scenario, { wrk, mode, floor, service, workDir: work });
          scenarios.push(report);
          printScenario(report);
          for (const [who, result] of [["floor", report.floor], ["docverify", report.docverify]] as const) {
            const problem = wrkProblem(result);
            if (problem !== null) broken.push(`${scenario.name} (${who}): ${problem}`);
          }
        }
      };
      // The deep page against the first: measured in turn, ALTERNATION_ROUNDS rounds, after both
      // scenarios ran, and judged by the median round. One measurement of each, minutes apart in
      // a process that has taken other load since, moved by ±10 % on this machine.
      // The order alternates from round to round (first, deep; deep, first; …): of two pages
      // measured one after the other, one reads faster for its place alone (the first one in
      // earlier runs, the second in a later one).
      const alternate = async (first: Scenario, deep: Scenario, service: Server): Promise<PagePair> => {
        const rounds = mode.name === "quick" ? 1 : ALTERNATION_ROUNDS;
        const durationS = Math.min(ALTERNATION_SECONDS, mode.maxDurationS);
        const once = async (scenario: Scenario) => {
          const result = await runWrk({ wrk, url: service.url, scenario, threads: WRK_THREADS, durationS, workDir: work });
          const problem = wrkProblem(result);
          if (problem !== null) broken.push(`${scenario.name} (alternation): ${problem}`);
          return result.requestsPerSecond;
        };
        const firstPerSecond: number[] = [];
        const deepPerSecond: number[] = [];
        for (let round = 0; round < rounds; round++) {
          if (round % 2 === 0) {
            firstPerSecond.push(await once(first));
            deepPerSecond.push(await once(deep));
          } else {
            deepPerSecond.push(await once(deep));
            firstPerSecond.push(await once(first));
          }
        }
        const ratio = median(deepPerSecond.map((d, i) => d / firstPerSecond[i]!));
        console.log(
          `${deep.name} vs ${first.name}, ${rounds} alternating rounds of ${durationS} s: ` +
            firstPerSecond.map((f, i) => `${perSecond(deepPerSecond[i]!)} / ${perSecond(f)}`).join(", ") +
            ` req/s; median ratio ${ratio.toFixed(3)}`,
        );
        return { firstPerSecond, deepPerSecond, ratio };
      };
      const stop = async (service: Server, what: string) => {
        const code = await service.stop();
        if (code !== 0) broken.push(`${what} exited with ${code} on SIGTERM after the load`);
      };

      if (!scaleOnly) {
        console.log("\n== docverify on an empty data folder ==");
        const empty = await startDocverify(binary, join(work, "load"));
        try {
          await run(EMPTY_SCENARIOS, empty);
          peakRss = memoryOf(empty.pid).peak;
          console.log(`docverify peak RSS during the load: ${mb(peakRss)}`);
        } finally {
          await stop(empty, "docverify");
        }
      }

      console.log(`\n== docverify on ${dataset.recordCount.toLocaleString("en-US")} anchored records (${dataset.realHashes.length.toLocaleString("en-US")} signed for real; see docs/benchmarks.md) ==`);
      const dataDir = join(work, "million", "data");
      const copyStarted = performance.now();
      copyDataset(dataset, dataDir);
      console.log(`copied the cached dataset (and waited until it was on disk) in ${((performance.now() - copyStarted) / 1000).toFixed(1)} s`);
      const million = await startDocverify(binary, join(work, "million"), { dataDir, env: UNLIMITED });
      let deepCursor = "";
      try {
        if (scaleOnly) {
          // Only what the scale part is compared with.
          await run(millionScenarios(dataset, deepCursor).filter((s) => s.name === "verify-public"), million);
        } else {
          deepCursor = await cursorAfter(million, dataset.logKey, LOG_DEPTH);
          // receipt-public measures batched records' receipts (scripts/bench/batched-receipt.ts).
          try {
            batchedReceipt = await checkBatchedReceipt(million.url, hotSet(dataset.realIds)[0]!);
            console.log(
              `receipt-public's records are anchored in batches: a receipt of ${(batchedReceipt.bytes / 1000).toFixed(1)} KB, leaf ${batchedReceipt.leafIndex} of ${batchedReceipt.treeSize}, ` +
                `${batchedReceipt.pathLength} hashes of inclusion path, checked against its batch message's root`,
            );
          } catch (e) {
            broken.push(`receipt-public: ${e instanceof Error ? e.message : String(e)}`);
            console.log(`receipt-public: BROKEN: ${e instanceof Error ? e.message : String(e)}`);
          }
          const list = millionScenarios(dataset, deepCursor).filter((s) => s.target === "million");
          await run(list, million);
          pagePair = await alternate(list.find((s) => s.name === "log-first-page")!, list.find((s) => s.name === "log-page-10k-deep")!, million);
        }
        console.log(`docverify peak RSS during the load: ${mb(memoryOf(million.pid).peak)}`);
      } finally {
        await stop(million, "docverify");
      }
      if (!scaleOnly) {
        const memoOff = await startAppServer(join(work, "memo-off"), { dataDir, env: UNLIMITED, flag: "--memo-off" });
        try {
          await run(millionScenarios(dataset, deepCursor).filter((s) => s.target === "million-memo-off"), memoOff);
        } finally {
          await stop(memoOff, "the memo-off server");
        }
        const unpaced = await startAppServer(join(work, "unpaced"), { dataDir, env: UNLIMITED, flag: "--unpaced" });
        try {
          await run(millionScenarios(dataset, deepCursor).filter((s) => s.target === "million-unpaced"), unpaced);
          // Person signatures through the JSON endpoints, on the same server and data.
          personSigning = await runPersonSigningBench({ url: unpaced.url, dataDir, workers: PERSON_SIGNERS, warmupS: mode.warmupS, seconds: Math.min(10, mode.maxDurationS) });
          printPersonSigning(personSigning);
        } finally {
          await stop(unpaced, "the unpaced server");
        }
        // VmRSS idle, right after keyed verification at 200 connections, and after a minute idle,
        // on the same data folder (docs/operations.md, "Memory").
        console.log("\n== memory after load (scripts/bench/memory-after-load.ts) ==");
        try {
          memoryAfterLoad = await measureMemoryAfterLoad({
            binary,
            wrk,
            dataset,
            dataDir,
            workDir: join(work, "memory"),
            loadS: Math.min(LOAD_S, mode.maxDurationS),
            threads: WRK_THREADS,
            say: (line) => console.log(line),
          });
          console.log(describeMemoryAfterLoad(memoryAfterLoad));
        } catch (e) {
          broken.push(`memory after load: ${e instanceof Error ? e.message : String(e)}`);
          console.log(`memory after load: BROKEN: ${e instanceof Error ? e.message : String(e)}`);
        }
      }
      // The million-record copy is done with: its B-tree depths for the scale report, then its disk back.
      const millionDepths = scaleData === null ? null : tableDepths(join(dataDir, "docverify.db"), ["records", "verifications"]);
      rmSync(dataDir, { recursive: true, force: true });

      if (scaleData !== null) {
        const data = scaleData;
        const full = data.spec.full;
        console.log(
          `\n== docverify at scale: ${data.rows.records.toLocaleString("en-US")} records, ${data.rows.verifications.toLocaleString("en-US")} log rows` +
            `${full ? "" : " (a DEVELOPMENT dataset from BENCH_SCALE_*, not the full 10,000,000)"} ==`,
        );
        console.log(
          `dataset: ${(data.bytes / 1e9).toFixed(1)} GB, built in ${data.buildSeconds.toFixed(0)} s; ${data.realHashes.length.toLocaleString("en-US")} records full-size and signed for real, ` +
            `the rest with ${BULK_SIGNATURE_BYTES}-byte signatures (docs/benchmarks.md); ${data.logRowsOfOrg0.toLocaleString("en-US")} rows in organisation 0's live log`,
        );
        console.log(`B-tree depths at scale (and in the 1,000,000-record dataset): ${formatDepthsBeside(data.depths, millionDepths ?? {})}`);
        let serving: ScaleServing | null = null;
        try {
          serving = await runScale({
            data,
            dir: join(work, "scale"),
            start: (scaleDataDir) => startDocverify(binary, join(work, "scale"), { dataDir: scaleDataDir, env: UNLIMITED }),
            run,
            stop: (server) => stop(server, "docverify on the scale dataset"),
            alternate,
            say: (line) => console.log(line),
          });
        } catch (e) {
          broken.push(`scale: ${e instanceof Error ? e.message : String(e)}`);
          console.log(`scale: BROKEN: ${e instanceof Error ? e.message : String(e)}`);
        }
        if (serving !== null) scale = {
          dataset: {
            records: data.rows.records,
            logRows: data.rows.verifications,
            logRowsOfLogOrg: data.logRowsOfOrg0,
            deepPageDepth: data.spec.depth,
            full,
            realRecords: data.realHashes.length,
            bulkSignatureBytes: BULK_SIGNATURE_BYTES,
            bytes: data.bytes,
            buildSeconds: data.buildSeconds,
            depths: data.depths,
            depthsAtOneMillion: millionDepths,
          },
          ...serving,
        };
      }
    } finally {
      await floor.stop();
    }

    const comparisons = compare(scenarios, signRate, personSigning, scale, pagePair, batchedReceipt);
    console.log("\ntargets across scenarios:");
    for (const c of comparisons) console.log(`  ${c.what}  ${c.verdict}`);
    if (!withScale) console.log(`  ${QUICK_SKIPS_SCALE}`);

    const startMs: number[] = [];
    let startMedian: number | null = null;
    let startVerdict: Verdict | null = null;
    let idleRss: number | null = null;
    let rssVerdict: Verdict | null = null;
    let verifier: Awaited<ReturnType<typeof runVerifierBench>> | null = null;
    let anchoring: Awaited<ReturnType<typeof runAnchoringBench>> | null = null;
    let batchedAnchoring: BatchedAnchoringReport | null = null;
    let bulk: BulkReport | null = null;
    if (!scaleOnly) {
      // The first start reads the binary from disk; the measured ones find it in the page cache,
      // as a service restarted by its supervisor does.
      for (let i = 0; i <= mode.coldStartRuns; i++) {
        const elapsed = await coldStart(binary, join(work, `cold-${i}`));
        if (i > 0) startMs.push(elapsed);
      }
      startMedian = median(startMs);
      startVerdict = startMedian <= TARGETS.coldStartMs ? "PASS" : "MISS";
      console.log(
        `\ncold start (spawn → first 200 on /healthz, fresh data folder, median of ${startMs.length}): ${ms(startMedian)}` +
          ` (min ${ms(Math.min(...startMs))}, max ${ms(Math.max(...startMs))})  target ≤ ${TARGETS.coldStartMs} ms  ${startVerdict}`,
      );

      idleRss = (await measureIdle(binary)).rss;
      rssVerdict = idleRss <= TARGETS.idleRssBytes ? "PASS" : "MISS";
      console.log(
        `idle RSS (after ${IDLE_REQUESTS} requests and ${IDLE_WAIT_MS / 1000} s idle): ${mb(idleRss)}  target ≤ ${mb(TARGETS.idleRssBytes)}  ${rssVerdict}`,
      );

      // The standalone verifier's time for one receipt (scripts/bench/receipt-verifier.ts).
      console.log("");
      verifier = await runVerifierBench(binary, work, (line) => console.log(line));

      // Anchoring throughput and backlog while records are created (scripts/bench/anchoring.ts).
      anchoring = await runAnchoringBench({ quick: mode.name === "quick", workDir: work });
      printAnchoring(anchoring);
      broken.push(...anchoring.broken);

      // What batches change, under a ledger with a cost per message (scripts/bench/batched-anchoring.ts).
      try {
        const quick = mode.name === "quick";
        batchedAnchoring = await runBatchedAnchoringBench({ seconds: batchedSeconds({ seconds: anchoringSeconds({ quick }), quick }), workDir: work });
        printBatchedAnchoring(batchedAnchoring);
        broken.push(...batchedAnchoring.broken);
      } catch (e) {
        broken.push(`batched anchoring: ${e instanceof Error ? e.message : String(e)}`);
        console.log(`batched anchoring: BROKEN: ${e instanceof Error ? e.message : String(e)}`);
      }

      // The bulk path: hashing against sha256sum, authenticate against the server alone (scripts/bench/bulk.ts).
      bulk = await runBulkBench({ quick: mode.name === "quick", workDir: work });
      broken.push(...bulk.broken);
    }

    if (options.json !== undefined) {
      const results = {
        date,
        mode: mode.name,
        scaleOnly,
        machine,
        dataset: { records: dataset.recordCount, realRecords: dataset.realHashes.length, logRowsOfLogOrg: dataset.logRowsOfOrg0 },
        signAndSealPerSecond: signRate,
        load: { threads: WRK_THREADS, warmupS: mode.warmupS, scenarios, peakRssBytes: peakRss, deepPageAlternation: pagePair },
        comparisons,
        scale: scale ?? { skipped: QUICK_SKIPS_SCALE },
        coldStart: scaleOnly ? null : { runsMs: startMs, medianMs: startMedian, targetMs: TARGETS.coldStartMs, verdict: startVerdict },
        idleRss: scaleOnly ? null : { bytes: idleRss, targetBytes: TARGETS.idleRssBytes, verdict: rssVerdict },
        memoryAfterLoad,
        receiptVerifier: verifier === null ? null : { ...verifier, targetMs: VERIFIER_TARGET_MS },
        personSigning,
        batchedReceipt,
        anchoring,
        batchedAnchoring,
        bulk,
        broken,
      };
      await Bun.write(options.json, JSON.stringify(results, null, 2) + "\n");
      console.log(`results written to ${options.json}`);
    }
  } catch (e) {
    broken.push(e instanceof Error ? e.message : String(e));
  } finally {
    killAll();
    rmSync(work, { recursive: true, force: true });
  }
  return exitCode(broken);
}

/** The run's exit code: 1, with the reasons on stderr, when anything made its figures untrustworthy. */
function exitCode(broken: readonly string[]): number {
  if (broken.length === 0) return 0;
  process.stderr.write(`\nBROKEN: these figures cannot be trusted:\n${broken.map((b) => `  - ${b}`).join("\n")}\n`);
  return 1;
}

/** The machine the run is on, printed as the run's first lines. */
async function describeMachine(wrk: string, run: string) {
  const machine = {
    cpus: availableParallelism(),
    cpuModel: cpuModel(),
    kernel: release(),
    bun: Bun.version,
    wrk: await wrkVersion(wrk),
    busyBeforeRun: await cpuBusy(1_000),
  };
  const date = new Date().toISOString();
  console.log(`docverify benchmark, ${run}, ${date}`);
  console.log(`machine: ${machine.cpus} × ${machine.cpuModel}, Linux ${machine.kernel}, Bun ${machine.bun}, ${machine.wrk}`);
  console.log(`CPU busy with other work just before the run: ${Math.round(machine.busyBeforeRun * 100)}%`);
  if (machine.busyBeforeRun > BUSY_WARNING) {
    console.log("  the machine is busy: the servers will get fewer cores than usual, and the floor loses most, so ratios read high");
  }
  return { machine, date };
}

/** The run's temporary folder, removed (with every process the run started killed) on SIGINT or SIGTERM. */
function workFolder(): string {
  const work = mkdtempSync(join(tmpdir(), "docverify-bench-"));
  const interrupted = () => {
    killAll();
    rmSync(work, { recursive: true, force: true });
    process.exit(130);
  };
  process.once("SIGINT", interrupted);
  process.once("SIGTERM", interrupted);
  return work;
}

/**
 * `--postgres` (scripts/bench/postgres-run.ts): one node on PostgreSQL against the
 * embedded SQLite, and failover under load; instead of the default run, not beside it.
 */
async function postgresMain(mode: Mode, json: string | undefined): Promise<number> {
  const wrk = await ensureWrk();
  const { machine, date } = await describeMachine(wrk, `${mode.name} run, --postgres`);
  const work = workFolder();
  const broken: string[] = [];
  try {
    const binary = await build(work);
    // Loaded only for this run: the default run never loads the PostgreSQL client.
    const { runPostgresBench } = await import("./bench/postgres-run.ts");
    const report: PostgresReport = await runPostgresBench({
      binary,
      wrk,
      workDir: work,
      quick: mode.name === "quick",
      warmupS: mode.warmupS,
      maxDurationS: mode.maxDurationS,
      say: (line) => console.log(line),
    });
    broken.push(...report.broken);
    if (json !== undefined) {
      await Bun.write(json, JSON.stringify({ date, mode: mode.name, postgres: true, machine, ...report, broken }, null, 2) + "\n");
      console.log(`results written to ${json}`);
    }
  } catch (e) {
    broken.push(e instanceof Error ? e.message : String(e));
  } finally {
    killAll();
    rmSync(work, { recursive: true, force: true });
  }
  return exitCode(broken);
}

/** Compiles the binary exactly as `npm run build` does, into the run's temporary folder. */
async function build(work: string): Promise<string> {
  const binary = join(work, "docverify");
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "build.ts"), binary], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`build failed (exit ${code}):\n${out}${err}`);
  console.log(out.trim().split("\n").at(-1));
  return binary;
}

interface LoadContext {
  readonly wrk: string;
  readonly mode: Mode;
  readonly floor: Server;
  readonly service: Server;
  readonly workDir: string;
}

async function measureScenario(scenario: Scenario, ctx: LoadContext): Promise<ScenarioReport> {
  const durationS = Math.min(scenario.duration, ctx.mode.maxDurationS);
  const measure = async (server: Server) => {
    await preflight(server, scenario);
    const base = { wrk: ctx.wrk, url: server.url, scenario, threads: WRK_THREADS, workDir: ctx.workDir };
    await runWrk({ ...base, durationS: ctx.mode.warmupS });
    return await runWrk({ ...base, durationS });
  };
  // Each server is warmed up right before its own measurement, and the two measurements of a
  // scenario run back to back so that drift in the machine's speed touches both alike.
  const floor = await measure(ctx.floor);
  const docverify = await measure(ctx.service);
  const ratio = docverify.requestsPerSecond / floor.requestsPerSecond;
  const target = scenario.floorRatioTarget ?? null;
  const verdict = (ok: boolean): Verdict => (ok ? "PASS" : "MISS");
  const checks: TargetCheck[] = [];
  if (target !== null) checks.push({ what: `ratio ${ratio.toFixed(2)}, target ≥ ${target.toFixed(2)}`, verdict: verdict(ratio >= target) });
  if (scenario.p99TargetMs !== undefined) {
    checks.push({ what: `p99 ${ms(docverify.latencyMs.p99)}, target ≤ ${scenario.p99TargetMs} ms`, verdict: verdict(docverify.latencyMs.p99 <= scenario.p99TargetMs) });
  }
  if (scenario.minRequestsPerSecond !== undefined) {
    checks.push({
      what: `${perSecond(docverify.requestsPerSecond)} req/s, target ≥ ${perSecond(scenario.minRequestsPerSecond)}`,
      verdict: verdict(docverify.requestsPerSecond >= scenario.minRequestsPerSecond),
    });
  }
  return {
    name: scenario.name,
    target: scenario.target,
    method: scenario.method,
    path: scenario.path,
    connections: scenario.connections,
    threads: Math.min(WRK_THREADS, scenario.connections),
    durationS,
    floor,
    docverify,
    ratio,
    floorRatioTarget: target,
    verdict: target === null ? null : verdict(ratio >= target),
    checks,
  };
}

/** The log cursor after `depth` rows of the key's log, by paging through the API 100 rows at a time. */
async function cursorAfter(server: Server, key: string, depth: number): Promise<string> {
  let cursor: string | null = null;
  for (let seen = 0; seen < depth; seen += 100) {
    const query = `limit=100${cursor === null ? "" : `&after=${cursor}`}`;
    const response = await fetch(`${server.url}/v1/verifications?${query}`, { headers: { authorization: `Bearer ${key}` } });
    const body = (await response.json()) as { pagination?: { nextCursor: string | null } };
    cursor = body.pagination?.nextCursor ?? null;
    if (response.status !== 200 || cursor === null) throw new Error(`paging the verification log stopped at ${seen} rows (status ${response.status})`);
  }
  return cursor!;
}

/** The single-core rate of sign + seal, in its own process while no server is loaded. */
async function measureSignRate(): Promise<number> {
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "bench", "sign-rate.ts"), String(SIGN_RATE_SECONDS)], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`sign-rate.ts failed (exit ${code}):\n${out}${err}`);
  return (JSON.parse(out) as { perSecond: number }).perSecond;
}

/** The targets that compare two measurements: the deep log page with the first, records with sign + seal, 10 M with 1 M. */
/** "median of 3 alternating rounds 0.97 (…)" for a deep-page check, or how the single measurements compare. */
function pairText(pair: PagePair | null): string {
  if (pair === null) return "";
  const rounds = pair.firstPerSecond.map((f, i) => (pair.deepPerSecond[i]! / f).toFixed(2)).join(", ");
  return `; median of ${pair.firstPerSecond.length} alternating round${pair.firstPerSecond.length === 1 ? "" : "s"}: ${pair.ratio.toFixed(2)} × (rounds ${rounds})`;
}

/**
 * The floor's own deep/first ratio: the bare server given the two request streams, the deep
 * page's longer by its cursor. Printed beside the verdict, which it does not change: what a
 * request that long costs any Bun server here, apart from paging.
 */
function floorPairText(deep: ScenarioReport, first: ScenarioReport): string {
  return `; the floor given the same two requests ${(deep.floor.requestsPerSecond / first.floor.requestsPerSecond).toFixed(2)} ×`;
}

function compare(
  scenarios: readonly ScenarioReport[],
  signRate: number | null,
  personSigning: PersonSigningResult | null,
  scale: ScaleReport | null,
  pagePair: PagePair | null,
  batchedReceipt: BatchedReceipt | null,
): TargetCheck[] {
  const byName = (name: string) => scenarios.find((s) => s.name === name);
  const checks: TargetCheck[] = [];
  const first = byName("log-first-page");
  const deep = byName("log-page-10k-deep");
  if (first !== undefined && deep !== undefined) {
    // Judged by the alternation when it ran: the single measurements are printed beside it.
    const single = deep.docverify.requestsPerSecond / first.docverify.requestsPerSecond;
    const r = pagePair?.ratio ?? single;
    checks.push({
      what:
        `log page ${LOG_DEPTH.toLocaleString("en-US")} rows deep vs first page: ${r.toFixed(2)} × the requests/s ` +
        `(the scenarios alone ${single.toFixed(2)} ×, p50 ${ms(deep.docverify.latencyMs.p50)} vs ${ms(first.docverify.latencyMs.p50)}, p99 ${ms(deep.docverify.latencyMs.p99)} vs ${ms(first.docverify.latencyMs.p99)}` +
        `${pairText(pagePair)}${floorPairText(deep, first)}); target ≥ ${TARGETS.deepPageRatio.toFixed(2)}`,
      verdict: r >= TARGETS.deepPageRatio ? "PASS" : "MISS",
    });
  }
  const receipts = byName("receipt-public");
  const verifications = byName("verify-public");
  if (receipts !== undefined && verifications !== undefined) {
    const r = receipts.docverify.requestsPerSecond / verifications.docverify.requestsPerSecond;
    checks.push({
      what:
        `public receipts ${perSecond(receipts.docverify.requestsPerSecond)}/s vs public verifications ${perSecond(verifications.docverify.requestsPerSecond)}/s ` +
        `on the million-record dataset${batchedReceipt === null ? " (NOT checked to be batched records' receipts)" : `, receipts of records in batches of ${batchedReceipt.treeSize}`}: ${r.toFixed(2)}; ` +
        `target ≥ ${TARGETS.receiptToVerifyRate.toFixed(2)}`,
      verdict: r >= TARGETS.receiptToVerifyRate ? "PASS" : "MISS",
    });
  }
  const records = byName("records-create");
  if (records !== undefined && signRate !== null) {
    const r = records.docverify.requestsPerSecond / signRate;
    checks.push({
      what: `records created ${perSecond(records.docverify.requestsPerSecond)}/s (every 201 durable) vs sign + seal ${perSecond(signRate)}/s on one core: ${r.toFixed(2)}; target ≥ ${TARGETS.recordsToSignRate.toFixed(2)}`,
      verdict: r >= TARGETS.recordsToSignRate ? "PASS" : "MISS",
    });
  }
  if (records !== undefined && personSigning !== null) {
    const r = personSigning.signaturesPerSecond / records.docverify.requestsPerSecond;
    checks.push({
      what:
        `person signatures ${perSecond(personSigning.signaturesPerSecond)}/s (options + passkey assertion + signature, every one 201) vs organisation records ${perSecond(records.docverify.requestsPerSecond)}/s: ` +
        `${r.toFixed(2)}; target ≥ ${TARGETS.personToRecordRate.toFixed(2)}`,
      verdict: r >= TARGETS.personToRecordRate ? "PASS" : "MISS",
    });
  }
  if (scale !== null) checks.push(...compareScale(byName, scale));
  return checks;
}

/** Public verification's p99 at 10 M against 1 M, and the page 1,000,000 rows deep against the first. */
function compareScale(byName: (name: string) => ScenarioReport | undefined, scale: ScaleReport): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const d = scale.dataset;
  const size = d.full ? "" : ` [DEVELOPMENT dataset: ${d.records.toLocaleString("en-US")} records, ${d.logRows.toLocaleString("en-US")} log rows; not the full 10,000,000]`;
  const atOne = byName("verify-public");
  const atScale = byName("verify-public-10m");
  if (atOne !== undefined && atScale !== undefined) {
    const r = atScale.docverify.latencyMs.p99 / atOne.docverify.latencyMs.p99;
    checks.push({
      what:
        `public verification p99 at ${d.records.toLocaleString("en-US")} records ${ms(atScale.docverify.latencyMs.p99)} vs ${ms(atOne.docverify.latencyMs.p99)} at 1,000,000: ${r.toFixed(2)} × ` +
        `(${perSecond(atScale.docverify.requestsPerSecond)} vs ${perSecond(atOne.docverify.requestsPerSecond)} req/s, p50 ${ms(atScale.docverify.latencyMs.p50)} vs ${ms(atOne.docverify.latencyMs.p50)}); ` +
        `target ≤ ${TARGETS.scaleP99Ratio.toFixed(2)}${size}`,
      verdict: r <= TARGETS.scaleP99Ratio ? "PASS" : "MISS",
    });
  }
  const first = byName("log-first-page-10m");
  const deep = byName("log-page-1m-deep");
  if (first !== undefined && deep !== undefined) {
    const single = deep.docverify.requestsPerSecond / first.docverify.requestsPerSecond;
    const pair = scale?.pagePair ?? null;
    const r = pair?.ratio ?? single;
    checks.push({
      what:
        `log page ${d.deepPageDepth.toLocaleString("en-US")} rows deep vs first page, ${d.logRows.toLocaleString("en-US")} log rows: ${r.toFixed(2)} × the requests/s ` +
        `(the scenarios alone ${single.toFixed(2)} ×, p50 ${ms(deep.docverify.latencyMs.p50)} vs ${ms(first.docverify.latencyMs.p50)}, p99 ${ms(deep.docverify.latencyMs.p99)} vs ${ms(first.docverify.latencyMs.p99)}${pairText(pair)}${floorPairText(deep, first)}); ` +
        `target ≥ ${TARGETS.scaleDeepPageRatio.toFixed(2)}${size}`,
      verdict: r >= TARGETS.scaleDeepPageRatio ? "PASS" : "MISS",
    });
  }
  return checks;
}

/** `records 4 (4), …`: each tree's depth at scale, with the 1 M dataset's in brackets where it has the tree. */
function formatDepthsBeside(atScale: Readonly<Record<string, number>>, atOne: Readonly<Record<string, number>>): string {
  return Object.entries(atScale)
    .map(([name, depth]) => `${name} ${depth}${atOne[name] === undefined ? "" : ` (${atOne[name]})`}`)
    .join(", ");
}

function printPersonSigning(r: PersonSigningResult): void {
  console.log(
    `person-signing: ${r.workers} persons signing at once, ${r.signatures} signatures in ${r.seconds.toFixed(1)} s = ${perSecond(r.signaturesPerSecond)}/s; ` +
      `one signature (two requests) p50 ${r.p50Ms.toFixed(1)} ms, p99 ${r.p99Ms.toFixed(1)} ms`,
  );
}

function printScenario(r: ScenarioReport): void {
  const row = (who: string, w: WrkResult) =>
    `  ${who.padEnd(10)} ${perSecond(w.requestsPerSecond).padStart(9)} req/s` +
    `   p50 ${ms(w.latencyMs.p50).padStart(9)}   p99 ${ms(w.latencyMs.p99).padStart(9)}`;
  const path = r.path.length > 60 ? `${r.path.slice(0, 57)}...` : r.path;
  console.log(`\n${r.name}: ${r.method} ${path}  (${r.connections} connections, ${r.durationS} s)`);
  console.log(row("floor", r.floor));
  console.log(row("docverify", r.docverify));
  console.log(`  ratio docverify/floor: ${r.ratio.toFixed(2)}${r.floorRatioTarget === null ? "  (no floor-ratio target)" : ""}`);
  for (const c of r.checks) console.log(`  ${c.what}  ${c.verdict}`);
  for (const [who, w] of [["floor", r.floor], ["docverify", r.docverify]] as const) {
    const problem = wrkProblem(w);
    if (problem !== null) console.log(`  BROKEN ${who}: ${problem}`);
  }
}

function perSecond(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

function cpuModel(): string {
  const m = /^model name\s*:\s*(.+)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"));
  return m?.[1]?.trim() ?? "unknown CPU";
}

/**
 * Share of all cores busy over `ms`, from /proc/stat. Other work on the machine takes cores
 * from the servers under test; a high figure here says the results are low for that reason.
 */
async function cpuBusy(ms: number): Promise<number> {
  const sample = () => {
    const fields = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal: idle and iowait are the idle time.
    const idle = fields[3]! + fields[4]!;
    return { idle, total: fields.slice(0, 8).reduce((a, b) => a + b, 0) };
  };
  const before = sample();
  await Bun.sleep(ms);
  const after = sample();
  const total = after.total - before.total;
  return total === 0 ? 0 : 1 - (after.idle - before.idle) / total;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function ms(value: number): string {
  return `${value < 10 ? value.toFixed(2) : value.toFixed(1)} ms`;
}

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

process.exit(await main(process.argv.slice(2)));
