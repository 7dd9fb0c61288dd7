/**
 * `npm run bench -- --postgres`: one node on PostgreSQL against embedded SQLite, in the
 * same run, on the same data and the same ledger; then the failover time of three nodes on
 * PostgreSQL under load. docs/benchmarks.md, "PostgreSQL (`--postgres`)", has the results.
 *
 * 1. **The data.** The bench dataset's generator (dataset.ts) at POSTGRES_DATASET's size: 100,000
 *    records and 20,000 log rows, the 1,000,000-record dataset's shape at a tenth of its size.
 *    SQLite serves a copy of it; PostgreSQL a database it is copied into (postgres.ts), at 4,000
 *    to 7,000 records a second here: the 1,000,000 records would add three to four minutes to
 *    every run, this size 10 to 20 s. Both engines get the same size, so the ratios compare
 *    engines, not sizes; the 1,000,000-record figures of the default run are not comparable with
 *    these.
 * 2. **The ledger.** One local ledger of its own (`docverify local-ledger`), used by both engines:
 *    with DOCVERIFY_DATABASE_URL every node needs the same ledger outside itself, and SQLite is
 *    given the same one so that neither side runs a ledger in its own process.
 * 3. **The comparison.** POSTGRES_SCENARIOS, the default run's scenarios of those names
 *    (scenarios.ts, the same bodies, connections and durations): public and organisation-tier
 *    verification on the compiled binary's `serve`, record creation (every 201 durable: SQLite's
 *    WAL fsynced, PostgreSQL's commit flushed) on app-server.ts `--unpaced`, as the default run
 *    measures it. For each scenario SQLite, then PostgreSQL, back to back, each warmed up first.
 *    Printed: requests/s, p50 and p99 for each, and the ratio PostgreSQL/SQLite.
 * 4. **Failover under load.** A fresh database, three `serve` nodes on it, an organisation and its
 *    key made with the command line. wrk creates records on the two nodes that do not lead
 *    (FAILOVER.connections each, with the product's pacing: a 503 is back-pressure, counted, not
 *    an error); FAILOVER.killAfterS into the load the leader gets `kill -9`. Measured: from the
 *    kill to `docverify status --json` naming a new leader (a new epoch). Then: every record wrk
 *    saw acknowledged (201) must become verified_org on a surviving node, and appear on the
 *    organisation's topic exactly once (read back from the ledger's mirror).
 *
 * Two cores cannot show horizontal scaling (HORIZONTAL_NOTE): the figures are per node.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { copyDataset, ensureDataset, type Dataset, type DatasetSize } from "./dataset.ts";
import { copySqliteIntoPostgres, cpuSecondsOfTree, SERVER_SETTINGS, startBenchPostgres, type BenchPostgres } from "./postgres.ts";
import { preflight } from "./preflight.ts";
import { baseEnv, spawnLogged, startAppServer, startDocverify, stopProcess, type Server } from "./processes.ts";
import { millionScenarios, type Scenario } from "./scenarios.ts";
import { readResponses, runWrk, wrkProblem, type WrkResult } from "./wrk.ts";

/** The dataset both engines serve in this mode (see the file's comment for why this size). */
export const POSTGRES_DATASET: DatasetSize = { records: 100_000, logRows: 20_000 };

/** The default run's scenarios compared across the engines (scenarios.ts). */
export const POSTGRES_SCENARIOS = ["verify-public", "verify-organisation", "records-create"] as const;

export const FAILOVER = {
  nodes: 3,
  /** wrk connections on each of the two nodes that do not lead. */
  connections: 16,
  /** Seconds of load in all (a --quick run: QUICK_LOAD_S), and when into it the leader is killed. */
  loadS: 15,
  quickLoadS: 8,
  killAfterS: 3,
  /** How often `docverify status --json` is asked for the leader after the kill. */
  pollMs: 100,
  /** How long every acknowledged record may take to become verified_org after the load. */
  verifiedWithinS: 120,
} as const;

export const HORIZONTAL_NOTE =
  "These 2 cores cannot show horizontal scaling: the load generator, PostgreSQL, the ledger and every node share them, " +
  "so a second or third node here takes cores from the first instead of adding its own. The figures above are per node " +
  "(one node on PostgreSQL against the embedded SQLite); what several nodes add needs nodes and the database on machines of their own.";

/** Rate limits far above any load here, as in the default run. */
const UNLIMITED = {
  DOCVERIFY_RATE_LIMIT_ANONYMOUS: "1000000000",
  DOCVERIFY_RATE_LIMIT_KEY: "1000000000",
  DOCVERIFY_RATE_LIMIT_ORG: "1000000000",
};
const WRK_THREADS = 2;

export type Engine = "sqlite" | "postgres";
export const ENGINES: readonly Engine[] = ["sqlite", "postgres"];
const ENGINE_NAME: Record<Engine, string> = { sqlite: "SQLite", postgres: "PostgreSQL" };

/** Which server a scenario runs on: the compiled binary's `serve`, or app-server.ts `--unpaced`. */
export type PlannedServer = "serve" | "unpaced";

export interface PlannedScenario {
  readonly scenario: Scenario;
  readonly server: PlannedServer;
  /** Measured on each engine in this order. */
  readonly engines: readonly Engine[];
}

/** What `--postgres` measures on `data`, in order: POSTGRES_SCENARIOS, each on both engines. */
export function postgresPlan(data: Dataset): PlannedScenario[] {
  // No log page is loaded here, so no deep cursor is needed.
  const all = millionScenarios(data, "");
  return POSTGRES_SCENARIOS.map((name) => {
    const scenario = all.find((s) => s.name === name);
    if (scenario === undefined) throw new Error(`no scenario ${name} in scenarios.ts`);
    return { scenario, server: scenario.target === "million-unpaced" ? "unpaced" : "serve", engines: ENGINES };
  });
}

export interface EngineComparison {
  readonly name: string;
  readonly method: string;
  readonly path: string;
  readonly connections: number;
  readonly durationS: number;
  readonly server: PlannedServer;
  readonly sqlite: WrkResult;
  readonly postgres: WrkResult;
  /** PostgreSQL's requests/s over SQLite's. */
  readonly ratio: number;
  /**
   * CPU seconds used during each engine's measurement: by the node's process, and by PostgreSQL's
   * processes (during SQLite's measurement, what an idle server takes).
   */
  readonly cpu: Readonly<Record<Engine, { readonly node: number; readonly postgres: number }>>;
  /** The bench database's transactions committed and rolled back (serialization retries among them) during PostgreSQL's measurement, from pg_stat_database. */
  readonly postgresTransactions: { readonly committed: number; readonly rolledBack: number };
}

export interface FailoverReport {
  readonly nodes: number;
  readonly killed: string;
  readonly oldEpoch: number;
  readonly newLeader: string | null;
  readonly newEpoch: number | null;
  /** From the kill to `status --json` naming a new leader; null when none came. */
  readonly failoverMs: number | null;
  /** How long one `status --json` took (its median): the resolution of failoverMs. */
  readonly statusPollMs: number;
  readonly load: {
    readonly seconds: number;
    readonly connectionsPerNode: number;
    readonly acknowledged: number;
    /** Seconds into the load when the leader was killed. */
    readonly killedAtS: number;
    readonly refused503: number;
    readonly otherStatuses: Readonly<Record<string, number>>;
    readonly socketErrors: number;
  };
  readonly verifiedOrg: { readonly all: boolean; readonly missing: number; readonly secondsAfterLoad: number };
  readonly ledger: { readonly recordMessages: number; readonly duplicates: number; readonly acknowledgedMissing: number };
}

export interface PostgresReport {
  readonly dataset: { readonly records: number; readonly logRows: number; readonly realRecords: number; readonly copySeconds: number; readonly databaseBytes: number };
  readonly serverSettings: Readonly<Record<string, string>>;
  readonly postgresVersion: string;
  readonly threads: number;
  readonly warmupS: number;
  readonly comparisons: readonly EngineComparison[];
  readonly failover: FailoverReport | null;
  readonly note: string;
  readonly broken: string[];
}

export interface PostgresRunOptions {
  readonly binary: string;
  readonly wrk: string;
  readonly workDir: string;
  readonly quick: boolean;
  readonly warmupS: number;
  readonly maxDurationS: number;
  readonly say: (line: string) => void;
}

export async function runPostgresBench(o: PostgresRunOptions): Promise<PostgresReport> {
  const { say, workDir } = o;
  const broken: string[] = [];
  const dataset = await ensureDataset(say, POSTGRES_DATASET);
  const ledger = await startLedger(o.binary, join(workDir, "ledger"));
  const pg = await startBenchPostgres(join(workDir, "postgres"));
  try {
    const postgresVersion = pg.psql("SHOW server_version");
    say(`PostgreSQL ${postgresVersion}, durability at its defaults (fsync, synchronous_commit, full_page_writes on); ${Object.entries(SERVER_SETTINGS).map(([k, v]) => `${k}=${v}`).join(", ")}`);
    say(`local ledger (one process of its own, for both engines): ${ledger.env.DOCVERIFY_LOCAL_LEDGER_URL}`);

    const sqliteDir = join(workDir, "sqlite", "data");
    copyDataset(dataset, sqliteDir);
    const benchUrl = pg.createDatabase("bench");
    const copyStarted = performance.now();
    const rows = await copySqliteIntoPostgres(join(dataset.dir, "docverify.db"), benchUrl);
    const copySeconds = (performance.now() - copyStarted) / 1000;
    const databaseBytes = Number(pg.psql("SELECT pg_database_size('bench')"));
    say(
      `dataset: ${dataset.recordCount.toLocaleString("en-US")} records (${dataset.realHashes.length.toLocaleString("en-US")} signed for real), ${POSTGRES_DATASET.logRows.toLocaleString("en-US")} log rows; ` +
        `copied into PostgreSQL (${rows.toLocaleString("en-US")} rows, ${(databaseBytes / 1e9).toFixed(2)} GB, VACUUM ANALYZE and CHECKPOINT included) in ${copySeconds.toFixed(1)} s`,
    );
    // The same master key opens the same sealed keys on both engines.
    const masterKeyFile = join(workDir, "postgres-master.key");
    writeFileSync(masterKeyFile, readFileSync(join(sqliteDir, "master.key")), { mode: 0o600 });
    const envOf: Record<Engine, { dataDir: string; env: Record<string, string> }> = {
      sqlite: { dataDir: sqliteDir, env: { ...UNLIMITED, ...ledger.env } },
      postgres: {
        dataDir: join(workDir, "postgres-node", "data"),
        env: { ...UNLIMITED, ...ledger.env, DOCVERIFY_DATABASE_URL: benchUrl, DOCVERIFY_MASTER_KEY_FILE: masterKeyFile, DOCVERIFY_NODE_NAME: "node-0" },
      },
    };
    mkdirSync(envOf.postgres.dataDir, { recursive: true, mode: 0o700 });

    say(`\nload: wrk ${WRK_THREADS} threads, ${o.warmupS} s warm-up, then the measurement; each scenario on SQLite, then on PostgreSQL (one node)`);
    const comparisons: EngineComparison[] = [];
    const plan = postgresPlan(dataset);
    for (const server of ["serve", "unpaced"] as const) {
      const list = plan.filter((p) => p.server === server);
      if (list.length === 0) continue;
      const servers = new Map<Engine, Server>();
      try {
        for (const engine of ENGINES) {
          const dir = join(workDir, `${engine}-${server}`);
          const { dataDir, env } = envOf[engine];
          servers.set(engine, server === "serve" ? await startDocverify(o.binary, dir, { dataDir, env }) : await startAppServer(dir, { dataDir, env, flag: "--unpaced" }));
        }
        for (const p of list) {
          const durationS = Math.min(p.scenario.duration, o.maxDurationS);
          const results = new Map<Engine, WrkResult>();
          const cpu = {} as Record<Engine, { node: number; postgres: number }>;
          let postgresTransactions = { committed: 0, rolledBack: 0 };
          for (const engine of p.engines) {
            const service = servers.get(engine)!;
            await preflight(service, p.scenario);
            const base = { wrk: o.wrk, url: service.url, scenario: p.scenario, threads: WRK_THREADS, workDir };
            await runWrk({ ...base, durationS: o.warmupS });
            // PostgreSQL's statistics reach pg_stat_database within a second of a transaction's end.
            if (engine === "postgres") await Bun.sleep(STATS_FLUSH_MS);
            const before = { node: cpuSecondsOfTree(service.pid), postgres: pg.cpuSeconds(), transactions: transactionsOf(pg) };
            const result = await runWrk({ ...base, durationS });
            cpu[engine] = { node: cpuSecondsOfTree(service.pid) - before.node, postgres: pg.cpuSeconds() - before.postgres };
            if (engine === "postgres") {
              await Bun.sleep(STATS_FLUSH_MS);
              const after = transactionsOf(pg);
              postgresTransactions = { committed: after.committed - before.transactions.committed, rolledBack: after.rolledBack - before.transactions.rolledBack };
            }
            const problem = wrkProblem(result);
            if (problem !== null) broken.push(`${p.scenario.name} (${ENGINE_NAME[engine]}): ${problem}`);
            results.set(engine, result);
          }
          const c: EngineComparison = {
            name: p.scenario.name,
            method: p.scenario.method,
            path: p.scenario.path,
            connections: p.scenario.connections,
            durationS,
            server,
            sqlite: results.get("sqlite")!,
            postgres: results.get("postgres")!,
            ratio: results.get("postgres")!.requestsPerSecond / results.get("sqlite")!.requestsPerSecond,
            cpu,
            postgresTransactions,
          };
          comparisons.push(c);
          say(formatComparison(c));
        }
      } finally {
        for (const [engine, service] of servers) {
          const code = await service.stop().catch((e: unknown) => (e as Error).message);
          if (code !== 0) broken.push(`${ENGINE_NAME[engine]} (${server}) did not exit cleanly on SIGTERM after the load: ${code}`);
        }
      }
    }

    let failover: FailoverReport | null = null;
    try {
      failover = await runFailover({ ...o, pg, ledgerEnv: ledger.env, broken });
      say(formatFailover(failover));
    } catch (e) {
      broken.push(`failover: ${(e as Error).message}`);
      say(`failover: BROKEN: ${(e as Error).message}`);
    }
    say(`\nNOTE: ${HORIZONTAL_NOTE}`);
    return {
      dataset: { records: dataset.recordCount, logRows: POSTGRES_DATASET.logRows, realRecords: dataset.realHashes.length, copySeconds, databaseBytes },
      serverSettings: SERVER_SETTINGS,
      postgresVersion,
      threads: WRK_THREADS,
      warmupS: o.warmupS,
      comparisons,
      failover,
      note: HORIZONTAL_NOTE,
      broken,
    };
  } finally {
    await pg.stop().catch((e: unknown) => broken.push(`PostgreSQL did not stop: ${(e as Error).message}`));
    await ledger.stop();
  }
}

/** Longer than PostgreSQL's statistics take to reach pg_stat_database after a transaction (at most a second). */
const STATS_FLUSH_MS = 1_200;

function transactionsOf(pg: BenchPostgres): { committed: number; rolledBack: number } {
  const [committed, rolledBack] = pg.psql("SELECT xact_commit || ' ' || xact_rollback FROM pg_stat_database WHERE datname = 'bench'").split(" ").map(Number);
  return { committed: committed!, rolledBack: rolledBack! };
}

interface Ledger {
  /** What a node needs to use it: the mirror's URL, the operator and its key file. */
  readonly env: Record<string, string>;
  stop(): Promise<void>;
}

/** `docverify local-ledger` in `dir`, alone in its process; resolves once it printed its addresses. */
async function startLedger(binary: string, dir: string): Promise<Ledger> {
  const spawned = spawnLogged([binary, "local-ledger", "--json", "--data", join(dir, "data")], {}, dir);
  const deadline = performance.now() + 30_000;
  for (;;) {
    const line = readFileSync(spawned.stdoutFile, "utf8").split("\n").find((l) => l.startsWith("{"));
    if (line !== undefined) {
      const info = JSON.parse(line) as { mirrorUrl: string; operatorAccountId: string; operatorKeyFile: string };
      return {
        env: { DOCVERIFY_LOCAL_LEDGER_URL: info.mirrorUrl, DOCVERIFY_LEDGER_OPERATOR_ID: info.operatorAccountId, DOCVERIFY_LEDGER_OPERATOR_KEY_FILE: info.operatorKeyFile },
        stop: async () => void (await stopProcess(spawned.proc, 15_000)),
      };
    }
    if (spawned.proc.exitCode !== null || performance.now() > deadline) {
      spawned.proc.kill("SIGKILL");
      throw new Error(`the local ledger did not start:\n${readFileSync(spawned.stderrFile, "utf8").slice(-2000)}`);
    }
    await Bun.sleep(20);
  }
}

/** Runs the compiled binary's command line with `env`; its stdout, or an error with its stderr. */
async function cli(binary: string, args: string[], env: Record<string, string>, dir: string): Promise<string> {
  const proc = Bun.spawn([binary, ...args, "--data", dir], { env: { ...baseEnv(), ...env }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`docverify ${args.join(" ")} exited with ${code}: ${err.trim()}`);
  return out;
}

interface FailoverContext extends PostgresRunOptions {
  readonly pg: BenchPostgres;
  readonly ledgerEnv: Record<string, string>;
  readonly broken: string[];
}

async function runFailover(o: FailoverContext): Promise<FailoverReport> {
  const { say, workDir } = o;
  const dir = join(workDir, "failover");
  const cliDir = join(dir, "cli");
  mkdirSync(cliDir, { recursive: true, mode: 0o700 });
  const url = o.pg.createDatabase("failover");
  const masterKeyFile = join(dir, "master.key");
  writeFileSync(masterKeyFile, Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex") + "\n", { mode: 0o600 });
  const env = { ...UNLIMITED, ...o.ledgerEnv, DOCVERIFY_DATABASE_URL: url, DOCVERIFY_MASTER_KEY_FILE: masterKeyFile };
  say(`\n== failover under load: ${FAILOVER.nodes} nodes (the compiled binary's serve) on one PostgreSQL database ==`);
  // Started together, as an operator's supervisor would: one migrates, the others find it done.
  const nodes = await Promise.all(
    Array.from({ length: FAILOVER.nodes }, (_, i) => startDocverify(o.binary, join(dir, `node-${i}`), { env: { ...env, DOCVERIFY_NODE_NAME: `node-${i}` } })),
  );
  const stopped = new Set<number>();
  try {
    const org = JSON.parse(await cli(o.binary, ["org", "create", "--name", "Bench failover", "--addon", "--api-access", "--validated", "--json"], env, cliDir)) as { id: string };
    const { key } = JSON.parse(await cli(o.binary, ["key", "mint", "--org", org.id, "--env", "live", "--json"], env, cliDir)) as { key: string };
    // The leader creates the organisation's topic; records wait for it (503) until then.
    const topicOf = () => o.pg.psql(`SELECT coalesce(topic_id, '') FROM organisations WHERE id = '${org.id}'`, "failover");
    const topicDeadline = performance.now() + 60_000;
    while (topicOf() === "") {
      if (performance.now() > topicDeadline) throw new Error("the leader did not create the organisation's topic within 60 s");
      await Bun.sleep(100);
    }
    const topicId = topicOf();

    const pollTimes: number[] = [];
    const leaderNow = async (): Promise<{ node: string; epoch: number } | null> => {
      const started = performance.now();
      const status = JSON.parse(await cli(o.binary, ["status", "--json"], env, cliDir)) as { cluster?: { leader: { node: string; epoch: number } | null } };
      pollTimes.push(performance.now() - started);
      return status.cluster?.leader ?? null;
    };
    let old: { node: string; epoch: number } | null = null;
    const leaderDeadline = performance.now() + 30_000;
    while ((old = await leaderNow()) === null) {
      if (performance.now() > leaderDeadline) throw new Error("no leader within 30 s of the nodes starting");
      await Bun.sleep(FAILOVER.pollMs);
    }
    const leaderIndex = Number(old.node.replace("node-", ""));
    const followers = nodes.map((n, i) => ({ n, i })).filter(({ i }) => i !== leaderIndex);
    const loadS = o.quick ? FAILOVER.quickLoadS : FAILOVER.loadS;
    say(`leader: ${old.node} (epoch ${old.epoch}); wrk creates records on ${followers.map(({ i }) => `node-${i}`).join(" and ")}, ${FAILOVER.connections} connections each, for ${loadS} s; kill -9 of ${old.node} ${FAILOVER.killAfterS} s in`);

    // One scenario per node, each with its own name: wrk's script is named after the scenario,
    // and each script has its own random prefix for the hashes it sends.
    const scenarioOn = (i: number): Scenario => ({
      name: `failover-records-create-node-${i}`,
      target: "cluster",
      method: "POST",
      path: "/v1/records",
      freshHashBody: '{"originalDocHash":"{{hash}}","filename":"failover.pdf"}',
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      connections: FAILOVER.connections,
      duration: loadS,
    });
    const loadStarted = performance.now();
    const loads = followers.map(({ n, i }) =>
      runWrk({ wrk: o.wrk, url: n.url, scenario: scenarioOn(i), threads: 1, durationS: loadS, workDir: dir, responsesFile: join(dir, `responses-node-${i}`) }),
    );
    await Bun.sleep(FAILOVER.killAfterS * 1000);
    process.kill(nodes[leaderIndex]!.pid, "SIGKILL");
    const killedAt = performance.now();
    stopped.add(leaderIndex);
    let next: { node: string; epoch: number } | null = null;
    let failoverMs: number | null = null;
    while (performance.now() - killedAt < 30_000) {
      const leader = await leaderNow();
      if (leader !== null && leader.epoch !== old.epoch) {
        next = leader;
        failoverMs = performance.now() - killedAt;
        break;
      }
      await Bun.sleep(FAILOVER.pollMs);
    }
    const results = await Promise.all(loads);
    const loadEnded = performance.now();
    const killedAtS = (killedAt - loadStarted) / 1000;

    let acknowledged: string[] = [];
    let refused503 = 0;
    const otherStatuses: Record<string, number> = {};
    for (const { i } of followers) {
      for (const r of await readResponses(join(dir, `responses-node-${i}`), 1)) {
        if (r.status === 201) acknowledged.push((JSON.parse(r.body) as { originalDocHash: string }).originalDocHash);
        else if (r.status === 503) refused503++;
        else otherStatuses[String(r.status)] = (otherStatuses[String(r.status)] ?? 0) + 1;
      }
    }
    acknowledged = [...new Set(acknowledged)];
    const socketErrors = results.reduce((a, r) => a + r.errors.connect + r.errors.read + r.errors.write + r.errors.timeout, 0);
    if (Object.keys(otherStatuses).length > 0) o.broken.push(`failover: answers other than 201 and 503 during the load: ${JSON.stringify(otherStatuses)}`);
    if (socketErrors > 0) o.broken.push(`failover: ${socketErrors} socket errors during the load`);
    if (next === null) o.broken.push(`failover: no new leader within 30 s of kill -9 of ${old.node}`);

    // Every acknowledged record verified_org on a node that survived (public verification).
    const survivors = followers.map(({ n }) => n);
    const pending = new Set(acknowledged);
    const verifyDeadline = performance.now() + FAILOVER.verifiedWithinS * 1000;
    while (pending.size > 0 && performance.now() < verifyDeadline) {
      const batch = [...pending];
      for (let from = 0; from < batch.length; from += 16) {
        await Promise.all(
          batch.slice(from, from + 16).map(async (hash, j) => {
            const node = survivors[j % survivors.length]!;
            const r = await fetch(`${node.url}/v1/verifications`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ originalDocHash: hash }) });
            const body = (await r.json().catch(() => ({}))) as { verdict?: string };
            if (body.verdict === "verified_org") pending.delete(hash);
          }),
        );
      }
      if (pending.size > 0) await Bun.sleep(500);
    }
    const secondsAfterLoad = (performance.now() - loadEnded) / 1000;
    if (pending.size > 0) o.broken.push(`failover: ${pending.size} of ${acknowledged.length} acknowledged records not verified_org ${FAILOVER.verifiedWithinS} s after the load`);

    // The organisation's topic, read back from the ledger's mirror: each acknowledged record once,
    // a batch message standing for its leaves (read from the database: only the root is on the
    // ledger; a batch is found by its organisation and batch sequence).
    const messages = await topicMessages(o.ledgerEnv.DOCVERIFY_LOCAL_LEDGER_URL!, topicId);
    const leaves = new Map<string, string[]>();
    for (const line of o.pg
      .psql(
        `SELECT b.batch_sequence || '|' || encode(l.message, 'hex') FROM ledger_transactions l JOIN ledger_transactions b ON b.transaction_id = l.batch_transaction_id
          WHERE b.org_id = '${org.id}' AND b.batch_sequence IS NOT NULL AND l.batch_leaf = 1 ORDER BY b.batch_sequence, l.leaf_index`,
        "failover",
      )
      .split("\n")
      .filter((l) => l.trim() !== "")) {
      const [seq, leaf] = line.trim().split("|") as [string, string];
      leaves.set(seq, [...(leaves.get(seq) ?? []), Buffer.from(leaf, "hex").toString("base64")]);
    }
    const recordHashes = messages.flatMap(function hashesOf(m: string): string[] {
      const decoded = JSON.parse(Buffer.from(m, "base64").toString("utf8")) as { type?: string; originalDocHash?: string; batch?: number };
      if (decoded.type === "batch") return (leaves.get(String(decoded.batch)) ?? []).flatMap(hashesOf);
      return decoded.type === "record" && typeof decoded.originalDocHash === "string" ? [decoded.originalDocHash] : [];
    });
    const duplicates = messages.length - new Set(messages).size + (recordHashes.length - new Set(recordHashes).size);
    const onLedger = new Set(recordHashes);
    const acknowledgedMissing = acknowledged.filter((h) => !onLedger.has(h)).length;
    if (duplicates > 0) o.broken.push(`failover: ${duplicates} messages twice on the topic`);
    if (acknowledgedMissing > 0) o.broken.push(`failover: ${acknowledgedMissing} acknowledged records not on the topic`);

    const sorted = [...pollTimes].sort((a, b) => a - b);
    return {
      nodes: FAILOVER.nodes,
      killed: old.node,
      oldEpoch: old.epoch,
      newLeader: next?.node ?? null,
      newEpoch: next?.epoch ?? null,
      failoverMs,
      statusPollMs: sorted[sorted.length >> 1] ?? 0,
      load: {
        seconds: (loadEnded - loadStarted) / 1000,
        connectionsPerNode: FAILOVER.connections,
        acknowledged: acknowledged.length,
        killedAtS,
        refused503,
        otherStatuses,
        socketErrors,
      },
      verifiedOrg: { all: pending.size === 0, missing: pending.size, secondsAfterLoad },
      ledger: { recordMessages: recordHashes.length, duplicates, acknowledgedMissing },
    };
  } finally {
    for (const [i, node] of nodes.entries()) {
      if (stopped.has(i)) continue;
      const code = await node.stop().catch((e: unknown) => (e as Error).message);
      if (code !== 0) o.broken.push(`failover: node-${i} did not exit cleanly on SIGTERM: ${code}`);
    }
  }
}

/** Every message on `topicId`, base64 as the mirror gives them, every page. */
async function topicMessages(mirrorUrl: string, topicId: string): Promise<string[]> {
  const out: string[] = [];
  let next: string | null = `/api/v1/topics/${topicId}/messages?limit=100`;
  while (next !== null) {
    const response: Response = await fetch(new URL(next, mirrorUrl));
    if (response.status !== 200) throw new Error(`the ledger's mirror answered ${response.status} for ${next}`);
    const page = (await response.json()) as { messages: { message: string }[]; links: { next: string | null } };
    out.push(...page.messages.map((m) => m.message));
    next = page.links.next;
  }
  return out;
}

function perSecond(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

function ms(value: number): string {
  return `${value < 10 ? value.toFixed(2) : value.toFixed(1)} ms`;
}

export function formatComparison(c: EngineComparison): string {
  const row = (who: string, w: WrkResult) =>
    `  ${who.padEnd(11)} ${perSecond(w.requestsPerSecond).padStart(9)} req/s   p50 ${ms(w.latencyMs.p50).padStart(9)}   p99 ${ms(w.latencyMs.p99).padStart(9)}`;
  const where = c.server === "unpaced" ? ", app-server.ts --unpaced" : ", serve";
  const lines = [
    `\n${c.name}: ${c.method} ${c.path}  (${c.connections} connections, ${c.durationS} s${where})`,
    row("SQLite", c.sqlite),
    row("PostgreSQL", c.postgres),
    `  ratio PostgreSQL/SQLite: ${c.ratio.toFixed(2)} × the requests/s; p50 ${(c.postgres.latencyMs.p50 / c.sqlite.latencyMs.p50).toFixed(2)} ×, p99 ${(c.postgres.latencyMs.p99 / c.sqlite.latencyMs.p99).toFixed(2)} ×`,
    `  CPU per request: SQLite node ${perRequestMs(c.cpu.sqlite.node, c.sqlite)}; PostgreSQL node ${perRequestMs(c.cpu.postgres.node, c.postgres)} + the server ${perRequestMs(c.cpu.postgres.postgres, c.postgres)}; ` +
      `PostgreSQL transactions during its measurement: ${c.postgresTransactions.committed.toLocaleString("en-US")} committed, ${c.postgresTransactions.rolledBack.toLocaleString("en-US")} rolled back`,
  ];
  for (const [who, w] of [["SQLite", c.sqlite], ["PostgreSQL", c.postgres]] as const) {
    const problem = wrkProblem(w);
    if (problem !== null) lines.push(`  BROKEN ${who}: ${problem}`);
  }
  return lines.join("\n");
}

function perRequestMs(cpuSeconds: number, w: WrkResult): string {
  return `${((cpuSeconds * 1000) / Math.max(1, w.requests)).toFixed(3)} ms`;
}

export function formatFailover(f: FailoverReport): string {
  const l = f.load;
  return [
    f.failoverMs === null
      ? `no new leader within 30 s of kill -9 of ${f.killed}  BROKEN`
      : `failover: ${f.newLeader} leads (epoch ${f.newEpoch}) ${Math.round(f.failoverMs)} ms after kill -9 of ${f.killed} (epoch ${f.oldEpoch}); ` +
        `\`docverify status --json\` polled every ${FAILOVER.pollMs} ms, each taking ${Math.round(f.statusPollMs)} ms`,
    `load: ${l.seconds.toFixed(1)} s, ${l.acknowledged.toLocaleString("en-US")} records acknowledged (201) = ${perSecond(l.acknowledged / l.seconds)}/s on the two nodes, ` +
      `${l.refused503.toLocaleString("en-US")} answers 503 (back-pressure, Retry-After), other answers ${JSON.stringify(l.otherStatuses)}, socket errors ${l.socketErrors}`,
    f.verifiedOrg.all
      ? `every acknowledged record verified_org on a surviving node, the last ${f.verifiedOrg.secondsAfterLoad.toFixed(1)} s after the load ended`
      : `${f.verifiedOrg.missing} acknowledged records NOT verified_org ${f.verifiedOrg.secondsAfterLoad.toFixed(0)} s after the load  BROKEN`,
    `ledger: ${f.ledger.recordMessages.toLocaleString("en-US")} record messages on the organisation's topic, ${f.ledger.duplicates} twice, ${f.ledger.acknowledgedMissing} acknowledged records missing`,
  ].join("\n");
}
