/**
 * The anchoring benchmark (docs/benchmarks.md "Anchoring under record creation"): records
 * anchored per second against the local ledger with 3 s consensus, sustained while records are
 * created over HTTP as fast as the service allows; the anchor backlog must stay flat and no record
 * may be anchored twice. Records are anchored in batches, as the product does by default
 * (docs/anchoring.md "Batches"); scripts/bench/batched-anchoring.ts measures what batches change.
 *
 * What it does:
 * 1. An organisation (API access, the add-on, validated) and a live key are created with the
 *    admin command line on a fresh data folder; then `docverify serve` starts from src/main.ts
 *    on it, with DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS=3000 and rate limits out of the way. The
 *    harness waits for the running service to create the organisation's topic (POST
 *    /v1/records answers 503 until then), and for that first record to be anchored (the key
 *    announcement every batch waits for is then on the ledger).
 * 2. Load: CONNECTIONS client loops each POST /v1/records with a new document hash, back to
 *    back. A 503 is the service's back-pressure: that loop waits its Retry-After, as a client
 *    should. WARMUP_S of load fill the pipeline (consensus takes 3 s), then the measured
 *    window runs for BENCH_ANCHOR_SECONDS (default 60).
 * 3. Every second the harness reads the service's database read-only: the backlog (records'
 *    messages `pending` or `accepted`, a batch's leaves included) and the anchored count.
 * 4. After the window the load stops; the backlog must drain. Then the time from a record's 201
 *    to `verified_org`, at a steady moderate rate (time-to-verified.ts), and the backlog drains
 *    again.
 * 5. Exactly once (exactly-once.ts): the topic read back through the mirror REST, every page,
 *    against the data folder: each acknowledged record's leaf in exactly one anchored batch on the
 *    topic, the batch's leaves giving the root its message carries, nothing else there.
 * 6. Floor: raw `@hashgraph/sdk` TopicMessageSubmitTransactions, FLOOR_CONCURRENCY in flight,
 *    from this process to the same embedded ledger (serve idle by then) for FLOOR_S seconds:
 *    the rate at which the ledger in that process accepts messages when the ledger has the
 *    process to itself.
 *
 *   bun scripts/bench/anchoring.ts [--seconds N] [--json FILE]      (or BENCH_ANCHOR_SECONDS=N)
 */
import "../../src/lib/protobuf-long.ts"; // before the SDK: see the file
import { Database } from "bun:sqlite";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { benchOrganisation, drain, firstAnchored, firstRecord, KEEPS_PACE_SHARE, keepsPace, MAIN, poster, runLoad, sampler, tail, type Json, type LoadResult } from "./anchor-load.ts";
import { checkExactlyOnce, describeCheck, type ExactlyOnceCheck } from "./exactly-once.ts";
import { spawnLogged, stopProcess } from "./processes.ts";
import { describeTimeToVerified, measureTimeToVerified, type TimeToVerified } from "./time-to-verified.ts";

export const DEFAULT_SECONDS = 60;
const QUICK_SECONDS = 10;
const CONSENSUS_MS = 3000;
const CONNECTIONS = 16;
const WARMUP_S = 5;
const DRAIN_TIMEOUT_S = 240;
const FLOOR_S = 10;
const FLOOR_CONCURRENCY = 64;

export interface AnchoringReport {
  readonly consensusMs: number;
  readonly connections: number;
  readonly warmupS: number;
  readonly windowS: number;
  readonly recordsCreated: number;
  readonly recordsPerSecond: number;
  /** Records anchored in the window (each a leaf of a batch). */
  readonly messagesAnchored: number;
  readonly anchoredPerSecond: number;
  readonly refused503: number;
  /** Of those, the answers 503 inside the measured window. */
  readonly refused503InWindow: number;
  /**
   * The target: anchoring keeps pace with creation. PASS when the window anchored at least
   * KEEPS_PACE_SHARE of what it created, the backlog stayed flat, and no creation was refused
   * (503) inside the window: creation ran at its own speed, not at the pace back-pressure set.
   */
  readonly keepsPace: { readonly share: number; readonly verdict: "PASS" | "MISS" };
  readonly otherErrors: number;
  readonly backlog: LoadResult["backlog"];
  readonly drainS: number | null;
  /** 201 → verified_org at a steady moderate rate, after the load (time-to-verified.ts). */
  readonly timeToVerified: TimeToVerified | null;
  readonly check: ExactlyOnceCheck;
  readonly floor: { readonly accepted: number; readonly perSecond: number; readonly errors: number } | null;
  readonly ratio: number | null;
  /** Why the figures cannot be trusted; empty when the run was clean. */
  readonly broken: string[];
}

/** Seconds measured: `seconds` if given; else 10 for `quick`; else BENCH_ANCHOR_SECONDS, default 60. */
export function anchoringSeconds(options: { seconds?: number; quick?: boolean }): number {
  const seconds = options.seconds ?? (options.quick === true ? QUICK_SECONDS : Number(process.env.BENCH_ANCHOR_SECONDS ?? DEFAULT_SECONDS));
  if (!Number.isInteger(seconds) || seconds < 10) throw new Error(`anchoring benchmark: the measured window must be a whole number of seconds ≥ 10, got ${seconds} (BENCH_ANCHOR_SECONDS)`);
  return seconds;
}

export async function runAnchoringBench(options: { seconds?: number; quick?: boolean; workDir?: string; log?: (line: string) => void } = {}): Promise<AnchoringReport> {
  const seconds = anchoringSeconds(options);
  const say = options.log ?? ((line: string) => console.log(line));
  const ownWork = options.workDir === undefined;
  const work = options.workDir !== undefined ? join(options.workDir, "anchoring") : mkdtempSync(join(tmpdir(), "docverify-bench-anchoring-"));
  const dataDir = join(work, "data");
  const broken: string[] = [];
  let serve: ReturnType<typeof spawnLogged> | null = null;
  let db: Database | null = null;
  try {
    // ---- the organisation, its key, the service ------------------------------------------
    const { key } = await benchOrganisation(dataDir, "Anchoring Bench Ltd");
    // BENCH_ANCHOR_PROFILE=DIR: a CPU profile of serve (markdown) in DIR, written when it stops.
    const profile = process.env.BENCH_ANCHOR_PROFILE;
    const profileArgs = profile === undefined || profile === "" ? [] : ["--cpu-prof-md", `--cpu-prof-dir=${resolve(profile)}`];
    serve = spawnLogged(
      [process.execPath, ...profileArgs, MAIN, "serve"],
      {
        DOCVERIFY_PORT: "0",
        DOCVERIFY_DATA_DIR: dataDir,
        DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: String(CONSENSUS_MS),
        DOCVERIFY_RATE_LIMIT_ANONYMOUS: "1000000000",
        DOCVERIFY_RATE_LIMIT_KEY: "1000000000",
        DOCVERIFY_RATE_LIMIT_ORG: "1000000000",
      },
      join(work, "serve"),
    );
    const url = await startedUrl(serve);
    const records = poster(url, key);
    const first = await firstRecord(records);
    const topicId = first.topicId;
    say(`\nanchoring: local ledger, ${CONSENSUS_MS} ms consensus, batches as the product makes them; POST /v1/records from ${CONNECTIONS} client loops; ${WARMUP_S} s warm-up, then ${seconds} s measured (topic ${topicId})`);

    // ---- load and sampling -----------------------------------------------------------------
    db = new Database(join(dataDir, "docverify.db"), { readonly: true });
    const sample = sampler(db);
    await firstAnchored(sample, 60);
    const load = await runLoad({ poster: records, sample, connections: CONNECTIONS, warmupS: WARMUP_S, seconds, say });
    if (load.errors > 0) broken.push(`${load.errors} POST /v1/records failed other than with 503; first: ${load.firstError}`);

    // ---- drain -------------------------------------------------------------------------------
    const drainS = await drain(sample, DRAIN_TIMEOUT_S);
    if (drainS === null) broken.push(`the backlog did not drain within ${DRAIN_TIMEOUT_S} s of the load stopping`);

    // ---- 201 → verified_org at a moderate rate -----------------------------------------------
    let timeToVerified: TimeToVerified | null = null;
    const acknowledged = [first.recordId, ...load.acknowledged];
    try {
      timeToVerified = await measureTimeToVerified({ url, poster: records, db, topicId, acknowledged });
      if (timeToVerified.notCreated > 0) broken.push(`time to verified_org: ${timeToVerified.notCreated} creations not answered 201`);
      if (timeToVerified.notVerified > 0) broken.push(`time to verified_org: ${timeToVerified.notVerified} records never verified_org`);
    } catch (e) {
      broken.push(`time to verified_org: ${(e as Error).message}`);
    }
    if ((await drain(sample, DRAIN_TIMEOUT_S)) === null) broken.push(`the backlog did not drain within ${DRAIN_TIMEOUT_S} s after the time-to-verified records`);

    // ---- exactly once, on the ledger ---------------------------------------------------------
    const check = await checkExactlyOnce(db, mirrorUrlOf(dataDir).mirrorUrl, topicId, acknowledged);
    if (!check.exactlyOnce) broken.push(`not exactly once: ${describeCheck(check)}`);

    // ---- floor -------------------------------------------------------------------------------
    let floor: AnchoringReport["floor"] = null;
    try {
      floor = await rawSubmitFloor(dataDir, Math.min(FLOOR_S, seconds));
    } catch (e) {
      broken.push(`floor: ${(e as Error).message}`);
    }

    const anchoredPerSecond = load.anchoredInWindow / load.windowS;
    return {
      consensusMs: CONSENSUS_MS,
      connections: CONNECTIONS,
      warmupS: WARMUP_S,
      windowS: load.windowS,
      recordsCreated: load.createdInWindow,
      recordsPerSecond: load.createdInWindow / load.windowS,
      messagesAnchored: load.anchoredInWindow,
      anchoredPerSecond,
      refused503: load.refused503,
      refused503InWindow: load.refused503InWindow,
      keepsPace: keepsPace(load.createdInWindow, load.anchoredInWindow, load.backlog.flat, load.refused503InWindow),
      otherErrors: load.errors,
      backlog: load.backlog,
      drainS,
      timeToVerified,
      check,
      floor,
      ratio: floor === null || floor.perSecond === 0 ? null : anchoredPerSecond / floor.perSecond,
      broken,
    };
  } catch (e) {
    const log = serve === null ? "" : `\n${tail(serve.stderrFile)}${tail(serve.stdoutFile)}`;
    throw new Error(`anchoring benchmark: ${(e as Error).message}${log}`);
  } finally {
    db?.close();
    if (serve !== null) {
      const proc = serve.proc;
      try {
        const code = await stopProcess(proc, 20_000);
        if (code !== 0) broken.push(`docverify serve exited with ${code ?? proc.signalCode} on SIGTERM`);
      } catch {
        broken.push("docverify serve did not stop within 20 s of SIGTERM");
      }
    }
    if (ownWork) rmSync(work, { recursive: true, force: true });
  }
}

async function startedUrl(s: ReturnType<typeof spawnLogged>): Promise<string> {
  const deadline = performance.now() + 30_000;
  for (;;) {
    // The listener comes up first and the ledger after it ("ledger ready"): wait for both.
    let url: string | null = null;
    let ready = false;
    for (const line of readFileSync(s.stdoutFile, "utf8").split("\n")) {
      if (!line.startsWith("{")) continue;
      const entry = JSON.parse(line) as Json;
      if (entry.msg === "docverify started" && typeof entry.url === "string") url = entry.url;
      if (entry.msg === "ledger ready") ready = true;
    }
    if (url !== null && ready) return url;
    if (s.proc.exitCode !== null || s.proc.signalCode !== null) throw new Error(`docverify serve exited (${s.proc.exitCode ?? s.proc.signalCode}) before starting`);
    if (performance.now() > deadline) throw new Error("docverify serve did not start within 30 s");
    await Bun.sleep(20);
  }
}

function mirrorUrlOf(dataDir: string): { mirrorUrl: string; grpcAddress: string } {
  const ports = JSON.parse(readFileSync(join(dataDir, "ledger", "ports.json"), "utf8")) as { host: string; grpcPort: number; mirrorPort: number };
  const host = ports.host.includes(":") ? `[${ports.host}]` : ports.host;
  return { mirrorUrl: `http://${host}:${ports.mirrorPort}`, grpcAddress: `${host}:${ports.grpcPort}` };
}

/**
 * The floor: TopicMessageSubmitTransactions straight from the SDK to the embedded ledger, as the
 * operator, on a topic of its own without a submit key, `concurrency` in flight for `seconds`.
 * Counts precheck OK answers.
 */
async function rawSubmitFloor(dataDir: string, seconds: number): Promise<NonNullable<AnchoringReport["floor"]>> {
  const { Client, PrivateKey, TopicCreateTransaction, TopicMessageSubmitTransaction, AccountId } = await import("@hashgraph/sdk");
  const { grpcAddress } = mirrorUrlOf(dataDir);
  const operatorKey = PrivateKey.fromStringDer(readFileSync(join(dataDir, "ledger", "operator.key"), "utf8").trim());
  const client = Client.forNetwork({ [grpcAddress]: "0.0.3" });
  client.setOperator("0.0.2", operatorKey);
  try {
    const created = await new TopicCreateTransaction().setTopicMemo("bench floor").execute(client);
    const topicId = (await created.getReceipt(client)).topicId!;
    // From here one attempt per request, as the service's adapter does: a BUSY counts as an error, not a wait.
    client.setMaxAttempts(1);
    // A message of the size the service sends (about 420 bytes of JSON).
    const message = JSON.stringify({ v: 1, type: "record", recordId: "00000000-0000-7000-8000-000000000000", pad: "x".repeat(360) });
    const node = [AccountId.fromString("0.0.3")];
    let accepted = 0;
    let errors = 0;
    let counting = false;
    let going = true;
    const loop = async () => {
      while (going) {
        try {
          await new TopicMessageSubmitTransaction().setTopicId(topicId).setMessage(message).setNodeAccountIds(node).execute(client);
          if (counting) accepted++;
        } catch {
          if (counting) errors++;
        }
      }
    };
    const loops = Array.from({ length: FLOOR_CONCURRENCY }, loop);
    await Bun.sleep(1000);
    counting = true;
    const t0 = performance.now();
    await Bun.sleep(seconds * 1000);
    const elapsed = (performance.now() - t0) / 1000;
    counting = false;
    const n = accepted;
    going = false;
    await Promise.all(loops);
    return { accepted: n, perSecond: n / elapsed, errors };
  } finally {
    client.close();
  }
}

export function printAnchoring(r: AnchoringReport, say: (line: string) => void = (l) => console.log(l)): void {
  const f = (x: number) => x.toFixed(1);
  say(`  records created       ${f(r.recordsPerSecond).padStart(8)} /s   (${r.recordsCreated} in ${f(r.windowS)} s; 503 back-pressure answers: ${r.refused503}, ${r.refused503InWindow} of them in the window)`);
  say(`  records anchored      ${f(r.anchoredPerSecond).padStart(8)} /s   (${r.messagesAnchored} in the window)`);
  const b = r.backlog;
  say(
    `  backlog (pending+accepted)  start ${b.start}  end ${b.end}  max ${b.max}  first-10 s avg ${f(b.first10Avg)}  last-10 s avg ${f(b.last10Avg)}  ${b.flat ? "FLAT (bounded: the second half never rose clearly above the first)" : "GROWING (the second half rose above the first)"}`,
  );
  say(
    `  keeps pace with creation: anchored ${r.keepsPace.share.toFixed(2)} × created in the window, backlog ${b.flat ? "flat" : "growing"}, ${r.refused503InWindow} answers 503 in the window; ` +
      `target ≥ ${KEEPS_PACE_SHARE.toFixed(2)} ×, flat, none refused  ${r.keepsPace.verdict}`,
  );
  say(`  drained after the load in ${r.drainS === null ? "— (did not drain)" : `${f(r.drainS)} s`}`);
  if (r.timeToVerified !== null) say(`  ${describeTimeToVerified(r.timeToVerified)}`);
  say(`  ${describeCheck(r.check)}`);
  if (r.floor !== null) {
    say(`  floor: raw SDK submissions accepted by the same ledger, ${FLOOR_CONCURRENCY} in flight: ${f(r.floor.perSecond)} /s (${r.floor.errors} errors)`);
    say(`  ratio records anchored/floor: ${r.ratio === null ? "—" : r.ratio.toFixed(2)} (one batch message carries many records)`);
  }
}

if (import.meta.main) {
  const { values } = parseArgs({ args: process.argv.slice(2), options: { seconds: { type: "string" }, json: { type: "string" } }, strict: true });
  let seconds: number;
  try {
    seconds = anchoringSeconds({ seconds: values.seconds === undefined ? undefined : Number(values.seconds) });
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exit(2);
  }
  const report = await runAnchoringBench({ seconds });
  printAnchoring(report);
  if (values.json !== undefined) await Bun.write(values.json, JSON.stringify(report, null, 2) + "\n");
  if (report.broken.length > 0) {
    process.stderr.write(`\nBROKEN:\n${report.broken.map((b) => `  - ${b}`).join("\n")}\n`);
    process.exit(1);
  }
  process.exit(0);
}
