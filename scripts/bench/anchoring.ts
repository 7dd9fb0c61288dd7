/**
 * The anchoring benchmark (docs/benchmarks.md "Anchoring under record creation"): messages anchored
 * per second against the local ledger with 3 s consensus, sustained while records are created over
 * HTTP as fast as the service allows; the anchor backlog must stay flat and no record may be
 * anchored twice.
 *
 * What it does:
 * 1. An organisation (API access, the add-on, validated) and a live key are created with the
 *    admin command line on a fresh data folder; then `docverify serve` starts from src/main.ts
 *    on it, with DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS=3000 and rate limits out of the way. The
 *    harness waits for the running service to create the organisation's topic (POST
 *    /v1/records answers 503 until then).
 * 2. Load: CONNECTIONS client loops each POST /v1/records with a new document hash, back to
 *    back. A 503 is the service's back-pressure: that loop waits its Retry-After, as a client
 *    should. WARMUP_S of load fill the pipeline (consensus takes 3 s), then the measured
 *    window runs for BENCH_ANCHOR_SECONDS (default 60).
 * 3. Every second the harness reads the service's database read-only: the backlog
 *    (`ledger_transactions` rows `pending` or `accepted`) and the anchored count.
 * 4. After the window the load stops; the backlog must drain. Then the ledger itself is read
 *    through its mirror REST (`/api/v1/topics/{id}/messages`, every page) and every record
 *    message is decoded: each record must be on the ledger exactly once, at the sequence number
 *    its row names, and nothing else may be there.
 * 5. Floor: raw `@hashgraph/sdk` TopicMessageSubmitTransactions, FLOOR_CONCURRENCY in flight,
 *    from this process to the same embedded ledger (serve idle by then) for FLOOR_S seconds:
 *    the rate at which the ledger in that process accepts messages when the ledger has the
 *    process to itself. The ratio anchored/floor says what the rest of the path (record
 *    creation, journaling, receipts, mirror confirmation) costs on top.
 *
 *   bun scripts/bench/anchoring.ts [--seconds N] [--json FILE]      (or BENCH_ANCHOR_SECONDS=N)
 */
import "../../src/lib/protobuf-long.ts"; // before the SDK: see the file
import { Database } from "bun:sqlite";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { baseEnv, spawnLogged, stopProcess } from "./processes.ts";

const ROOT = resolve(import.meta.dir, "..", "..");
const MAIN = join(ROOT, "src", "main.ts");

export const DEFAULT_SECONDS = 60;
const QUICK_SECONDS = 10;
const CONSENSUS_MS = 3000;
const CONNECTIONS = 16;
const WARMUP_S = 5;
const DRAIN_TIMEOUT_S = 240;
const FLOOR_S = 10;
const FLOOR_CONCURRENCY = 64;
/** A backlog whose last-10 s average exceeds the first-10 s average by more than this share (and by more than 50 rows) is "growing". */
const FLAT_TOLERANCE = 0.25;

export interface AnchoringReport {
  readonly consensusMs: number;
  readonly connections: number;
  readonly warmupS: number;
  readonly windowS: number;
  readonly recordsCreated: number;
  readonly recordsPerSecond: number;
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
  readonly backlog: { readonly start: number; readonly end: number; readonly max: number; readonly first10Avg: number; readonly last10Avg: number; readonly flat: boolean; readonly samples: number[] };
  readonly drainS: number | null;
  readonly check: { readonly records: number; readonly ledgerMessages: number; readonly duplicates: number; readonly missing: number; readonly unknown: number; readonly wrongSequence: number; readonly notAnchored: number; readonly abandoned: number };
  readonly floor: { readonly accepted: number; readonly perSecond: number; readonly errors: number } | null;
  readonly ratio: number | null;
  /** Why the figures cannot be trusted; empty when the run was clean. */
  readonly broken: string[];
}

type Json = Record<string, any>;

async function admin(args: string[], dataDir: string): Promise<Json> {
  const proc = Bun.spawn([process.execPath, MAIN, ...args, "--json", "--data", dataDir], {
    env: baseEnv(),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`docverify ${args.join(" ")} failed (exit ${code}): ${err}${out}`);
  return JSON.parse(out) as Json;
}

function docHash(n: number, run: string): string {
  return `sha256:${new Bun.CryptoHasher("sha256").update(`${run}/${n}`).digest("hex")}`;
}

const mean = (xs: readonly number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);

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
    const org = await admin(["org", "create", "--name", "Anchoring Bench Ltd", "--api-access", "--addon", "--validated"], dataDir);
    const key = String((await admin(["key", "mint", "--org", String(org.id), "--env", "live"], dataDir)).key);
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
    const run = Bun.randomUUIDv7();
    let counter = 0;
    const post = async (): Promise<{ status: number; body: Json; retryAfter: number }> => {
      const res = await fetch(`${url}/v1/records`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ originalDocHash: docHash(counter++, run) }),
      });
      return { status: res.status, body: (await res.json()) as Json, retryAfter: Number(res.headers.get("retry-after") ?? "1") };
    };
    const topicDeadline = performance.now() + 60_000;
    let topicId: string;
    for (;;) {
      const r = await post();
      if (r.status === 201) {
        topicId = String(r.body.anchor.topicId);
        break;
      }
      if (r.status !== 503) throw new Error(`POST /v1/records answered ${r.status} while waiting for the topic: ${JSON.stringify(r.body)}`);
      if (performance.now() > topicDeadline) throw new Error("the service did not create the organisation's topic within 60 s");
      await Bun.sleep(200);
    }
    say(`\nanchoring: local ledger, ${CONSENSUS_MS} ms consensus; POST /v1/records from ${CONNECTIONS} client loops; ${WARMUP_S} s warm-up, then ${seconds} s measured (topic ${topicId})`);

    // ---- load and sampling -----------------------------------------------------------------
    db = new Database(join(dataDir, "docverify.db"), { readonly: true });
    const sampleQuery = db.query("SELECT state, count(*) AS n FROM ledger_transactions WHERE kind = 'record_message' GROUP BY state");
    const sample = () => {
      const rows = sampleQuery.all() as { state: string; n: number }[];
      const n = (s: string) => rows.find((r) => r.state === s)?.n ?? 0;
      return { at: performance.now(), backlog: n("pending") + n("accepted"), anchored: n("anchored"), abandoned: n("abandoned") };
    };
    let created = 0;
    let refused = 0;
    let refusedInWindow = 0;
    let errors = 0;
    let firstError: string | null = null;
    let loading = true;
    let inWindow = false;
    let createdInWindow = 0;
    const loop = async () => {
      while (loading) {
        try {
          const r = await post();
          if (r.status === 201) {
            created++;
            if (inWindow) createdInWindow++;
          } else if (r.status === 503) {
            refused++;
            if (inWindow) refusedInWindow++;
            await Bun.sleep(Math.max(1, r.retryAfter) * 1000);
          } else {
            errors++;
            firstError ??= `${r.status} ${JSON.stringify(r.body).slice(0, 300)}`;
          }
        } catch (e) {
          errors++;
          firstError ??= (e as Error).message;
          await Bun.sleep(100);
        }
      }
    };
    const loops = Array.from({ length: CONNECTIONS }, loop);
    await Bun.sleep(WARMUP_S * 1000);
    const start = sample();
    inWindow = true;
    const samples = [start];
    for (let i = 1; i <= seconds; i++) {
      await Bun.sleep(Math.max(0, start.at + i * 1000 - performance.now()));
      samples.push(sample());
      if (i % 10 === 0 || i === seconds) {
        const s = samples.at(-1)!;
        say(`  ${String(i).padStart(3)} s  created ${createdInWindow}  anchored ${s.anchored - start.anchored}  backlog ${s.backlog}${refused > 0 ? `  503s ${refused}` : ""}`);
      }
    }
    inWindow = false;
    const end = samples.at(-1)!;
    loading = false;
    await Promise.all(loops);
    const windowS = (end.at - start.at) / 1000;
    if (errors > 0) broken.push(`${errors} POST /v1/records failed other than with 503; first: ${firstError}`);

    const backlogs = samples.map((s) => s.backlog);
    // The first and last 10 s; in a short run the first and last third, so the two never overlap.
    const edge = Math.max(1, Math.min(10, Math.floor(backlogs.length / 3)));
    const head = backlogs.slice(0, edge);
    const tail = backlogs.slice(-edge);
    const first10Avg = mean(head);
    const last10Avg = mean(tail);
    // Flat means bounded, not constant: the service's back-pressure lets the backlog swing between
    // empty and about ten seconds of anchoring. It is growing when the second half of the window
    // reaches clearly higher than the first half did (a backlog that climbs without bound).
    const half = Math.floor(backlogs.length / 2);
    const firstHalfMax = Math.max(0, ...backlogs.slice(0, half));
    const secondHalfMax = Math.max(0, ...backlogs.slice(half));
    const flat = secondHalfMax <= firstHalfMax * (1 + FLAT_TOLERANCE) + 50;

    // ---- drain -------------------------------------------------------------------------------
    const drainStart = performance.now();
    let drainS: number | null = null;
    while (performance.now() - drainStart < DRAIN_TIMEOUT_S * 1000) {
      const s = sample();
      if (s.backlog === 0) {
        drainS = (performance.now() - drainStart) / 1000;
        break;
      }
      await Bun.sleep(250);
    }
    if (drainS === null) broken.push(`the backlog did not drain within ${DRAIN_TIMEOUT_S} s of the load stopping`);

    // ---- exactly once, on the ledger ---------------------------------------------------------
    const check = await checkExactlyOnce(db, dataDir, topicId);
    if (check.duplicates > 0) broken.push(`${check.duplicates} record(s) anchored more than once`);

    // ---- floor -------------------------------------------------------------------------------
    let floor: AnchoringReport["floor"] = null;
    try {
      floor = await rawSubmitFloor(dataDir, Math.min(FLOOR_S, seconds));
    } catch (e) {
      broken.push(`floor: ${(e as Error).message}`);
    }

    const anchoredInWindow = end.anchored - start.anchored;
    const anchoredPerSecond = anchoredInWindow / windowS;
    return {
      consensusMs: CONSENSUS_MS,
      connections: CONNECTIONS,
      warmupS: WARMUP_S,
      windowS,
      recordsCreated: createdInWindow,
      recordsPerSecond: createdInWindow / windowS,
      messagesAnchored: anchoredInWindow,
      anchoredPerSecond,
      refused503: refused,
      refused503InWindow: refusedInWindow,
      keepsPace: keepsPace(createdInWindow, anchoredInWindow, flat, refusedInWindow),
      otherErrors: errors,
      backlog: { start: start.backlog, end: end.backlog, max: Math.max(...backlogs), first10Avg, last10Avg, flat, samples: backlogs },
      drainS,
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

function tail(file: string): string {
  try {
    return readFileSync(file, "utf8").slice(-3000);
  } catch {
    return "";
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
 * Reads every message on the topic through the mirror REST and compares with the records table:
 * each record exactly once on the ledger, at the sequence number its row names, and `anchored`.
 */
async function checkExactlyOnce(db: Database, dataDir: string, topicId: string): Promise<AnchoringReport["check"]> {
  const { mirrorUrl } = mirrorUrlOf(dataDir);
  const onLedger = new Map<string, number[]>();
  let ledgerMessages = 0;
  let next: string | null = `/api/v1/topics/${topicId}/messages?limit=100&order=asc`;
  while (next !== null) {
    const res = await fetch(mirrorUrl + next);
    if (res.status !== 200) throw new Error(`mirror ${next} answered ${res.status}`);
    const page = (await res.json()) as { messages: { sequence_number: number; message: string }[]; links: { next: string | null } };
    for (const m of page.messages) {
      ledgerMessages++;
      const decoded = JSON.parse(Buffer.from(m.message, "base64").toString("utf8")) as Json;
      if (decoded.v !== 1 || decoded.type !== "record") continue;
      const seqs = onLedger.get(decoded.recordId) ?? [];
      seqs.push(m.sequence_number);
      onLedger.set(decoded.recordId, seqs);
    }
    next = page.links.next;
  }
  const rows = db.query("SELECT id, anchor_state AS state, sequence_number AS seq FROM records WHERE topic_id = ?").all(topicId) as { id: string; state: string; seq: number | null }[];
  let duplicates = 0;
  let missing = 0;
  let wrongSequence = 0;
  let notAnchored = 0;
  let abandoned = 0;
  const known = new Set<string>();
  for (const r of rows) {
    known.add(r.id);
    const seqs = onLedger.get(r.id) ?? [];
    if (seqs.length > 1) duplicates += seqs.length - 1;
    if (r.state === "abandoned") {
      abandoned++;
      continue;
    }
    if (seqs.length === 0) missing++;
    if (r.state !== "anchored") notAnchored++;
    else if (seqs.length > 0 && !seqs.includes(r.seq!)) wrongSequence++;
  }
  let unknown = 0;
  for (const id of onLedger.keys()) if (!known.has(id)) unknown++;
  return { records: rows.length, ledgerMessages, duplicates, missing, unknown, wrongSequence, notAnchored, abandoned };
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

/** Anchored in the window at least this share of what was created in it (the backlog's own swing is the rest). */
export const KEEPS_PACE_SHARE = 0.95;

export function keepsPace(created: number, anchored: number, flat: boolean, refusedInWindow: number): AnchoringReport["keepsPace"] {
  const share = created === 0 ? 0 : anchored / created;
  return { share, verdict: share >= KEEPS_PACE_SHARE && flat && refusedInWindow === 0 ? "PASS" : "MISS" };
}

export function printAnchoring(r: AnchoringReport, say: (line: string) => void = (l) => console.log(l)): void {
  const f = (x: number) => x.toFixed(1);
  say(`  records created       ${f(r.recordsPerSecond).padStart(8)} /s   (${r.recordsCreated} in ${f(r.windowS)} s; 503 back-pressure answers: ${r.refused503}, ${r.refused503InWindow} of them in the window)`);
  say(`  messages anchored     ${f(r.anchoredPerSecond).padStart(8)} /s   (${r.messagesAnchored} in the window)`);
  const b = r.backlog;
  say(
    `  backlog (pending+accepted)  start ${b.start}  end ${b.end}  max ${b.max}  first-10 s avg ${f(b.first10Avg)}  last-10 s avg ${f(b.last10Avg)}  ${b.flat ? "FLAT (bounded: the second half never rose clearly above the first)" : "GROWING (the second half rose above the first)"}`,
  );
  say(
    `  keeps pace with creation: anchored ${r.keepsPace.share.toFixed(2)} × created in the window, backlog ${b.flat ? "flat" : "growing"}, ${r.refused503InWindow} answers 503 in the window; ` +
      `target ≥ ${KEEPS_PACE_SHARE.toFixed(2)} ×, flat, none refused  ${r.keepsPace.verdict}`,
  );
  say(`  drained after the load in ${r.drainS === null ? "— (did not drain)" : `${f(r.drainS)} s`}`);
  const c = r.check;
  say(
    `  on the ledger: ${c.ledgerMessages} messages for ${c.records} records; duplicates ${c.duplicates}, missing ${c.missing}, not anchored ${c.notAnchored}, ` +
      `abandoned ${c.abandoned}, wrong sequence ${c.wrongSequence}, unknown ${c.unknown}  ${c.duplicates === 0 && c.missing === 0 && c.notAnchored === 0 && c.unknown === 0 && c.wrongSequence === 0 ? "EXACTLY ONCE" : "NOT EXACTLY ONCE"}`,
  );
  if (r.floor !== null) {
    say(`  floor: raw SDK submissions accepted by the same ledger, ${FLOOR_CONCURRENCY} in flight: ${f(r.floor.perSecond)} /s (${r.floor.errors} errors)`);
    say(`  ratio anchored/floor: ${r.ratio === null ? "—" : r.ratio.toFixed(2)}`);
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
