/**
 * `docverify status [--json] [--data DIR]`: records by anchor state, the ledger network and
 * whether it answers, and the anchor queue (unfinished counts, the oldest unfinished item, the
 * last error); on PostgreSQL also the nodes with a heartbeat and the anchor loop's leader. Reads
 * the database directly, also while `serve` runs on it; it never starts a ledger and never
 * submits anything.
 */
import { openAdminCore } from "../app/core.ts";
import { parseConfig, type Config } from "../config/index.ts";
import { queueSummary } from "../anchoring/queue.ts";
import { statusCounts } from "../records/counts.ts";
import { tcpConnectProblem } from "../anchoring/node-reachability.ts";
import { PUBLIC_MIRRORS } from "../anchoring/links.ts";
import { ledgerDir, readRememberedAddress } from "../anchoring/paths.ts";
import { parseFlags } from "../lib/args.ts";
import { createLogger } from "../lib/log.ts";

type Out = { write(s: string): void };

const PROBE_MS = 2000;

async function httpAnswers(url: string): Promise<true | string> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(PROBE_MS) });
    await res.body?.cancel();
    return res.ok ? true : `answered ${res.status}`;
  } catch (e) {
    return (e as Error).message;
  }
}


export interface LedgerStatus {
  readonly network: string;
  readonly mode: "embedded" | "external" | "public";
  readonly mirrorUrl: string | null;
  readonly grpcAddress: string | null;
  readonly reachable: boolean;
  readonly detail: string;
}

async function ledgerStatus(config: Config): Promise<LedgerStatus> {
  const l = config.ledger;
  if (l.network === "local" && l.localLedgerUrl === null) {
    const remembered = readRememberedAddress(ledgerDir(config.dataDir));
    if (remembered === null) return { network: "local", mode: "embedded", mirrorUrl: null, grpcAddress: null, reachable: false, detail: "the embedded ledger has not been started on this data folder yet" };
    const host = remembered.host.includes(":") ? `[${remembered.host}]` : remembered.host;
    const mirrorUrl = `http://${host}:${remembered.mirrorPort}`;
    const grpcAddress = `${host}:${remembered.grpcPort}`;
    const [mirror, grpc] = await Promise.all([httpAnswers(`${mirrorUrl}/api/v1/network/nodes`), tcpConnectProblem(grpcAddress, PROBE_MS)]);
    const reachable = mirror === true && grpc === null;
    return {
      network: "local",
      mode: "embedded",
      mirrorUrl,
      grpcAddress,
      reachable,
      detail: reachable ? "the local ledger answers (nothing on it is public)" : `no local ledger answers at the remembered address (is serve running?): ${mirror === true ? grpc : mirror}`,
    };
  }
  if (l.network === "local") {
    const mirror = await httpAnswers(`${l.localLedgerUrl}/api/v1/network/nodes`);
    return { network: "local", mode: "external", mirrorUrl: l.localLedgerUrl, grpcAddress: null, reachable: mirror === true, detail: mirror === true ? "the local ledger's mirror answers" : `the local ledger's mirror does not answer: ${mirror}` };
  }
  const mirrorUrl = PUBLIC_MIRRORS[l.network];
  const mirror = await httpAnswers(`${mirrorUrl}/api/v1/network/nodes?limit=1`);
  return { network: l.network, mode: "public", mirrorUrl, grpcAddress: null, reachable: mirror === true, detail: mirror === true ? "the public mirror node answers" : `the public mirror node does not answer: ${mirror}` };
}

export async function runStatus(args: readonly string[], env: Readonly<Record<string, string | undefined>>, out: Out): Promise<number> {
  const { values } = parseFlags(args, { json: { type: "boolean" }, data: { type: "string" } });
  const config = parseConfig(env, { dataDir: typeof values.data === "string" ? values.data : undefined });
  const log = createLogger({ level: "error", write: (l) => process.stderr.write(l + "\n") });
  // It only reads: a data folder that does not exist is refused, and nothing is created.
  const core = await openAdminCore({ config, log, mayCreate: false });
  let report;
  try {
    const now = core.clock.now();
    const counts = await core.store.read(statusCounts());
    const queue = await core.store.read(queueSummary(now));
    const cluster = await core.admin.cluster();
    report = {
      records: counts.records,
      queue: { ...queue, organisationsAwaitingTopic: counts.organisationsAwaitingTopic },
      // Several nodes (docs/operations.md "Several nodes"): who has a heartbeat, and who runs the
      // anchor loop.
      ...(cluster !== null ? { cluster } : {}),
    };
  } finally {
    await core.close();
  }
  const ledger = await ledgerStatus(config);
  const full = { node: config.nodeName, database: config.databaseUrlRedacted ?? "sqlite", dataDir: config.dataDir, ledger, ...report };
  if (values.json) {
    out.write(JSON.stringify(full) + "\n");
  } else {
    const q = full.queue;
    const lines = [
      `node          ${full.node}`,
      `database      ${full.database === "sqlite" ? `embedded SQLite in ${full.dataDir}` : full.database}`,
      ...("cluster" in full && full.cluster !== undefined
        ? [
            `nodes         ${full.cluster.nodes.map((n) => `${n.name}${n.live ? "" : " (not seen)"}`).join(", ") || "-"}`,
            `anchor leader ${full.cluster.leader === null ? "-" : `${full.cluster.leader.node}, epoch ${full.cluster.leader.epoch}${full.cluster.leader.live ? "" : " (heartbeat stale)"}`}`,
          ]
        : []),
      `data folder   ${full.dataDir}`,
      `ledger        ${ledger.network} (${ledger.mode})${ledger.mirrorUrl ? `  mirror ${ledger.mirrorUrl}` : ""}${ledger.grpcAddress ? `  grpc ${ledger.grpcAddress}` : ""}`,
      `              ${ledger.reachable ? "reachable" : "NOT reachable"}: ${ledger.detail}`,
      `records       ${Object.entries(full.records).map(([s, n]) => `${s}=${n}`).join(" ")}`,
      `anchor queue  pending=${q.pending} accepted=${q.accepted} anchored=${q.anchored} abandoned=${q.abandoned} organisations-awaiting-topic=${q.organisationsAwaitingTopic}`,
      `batches       open=${q.batches.open} waiting=${q.batches.waiting} waiting-leaves=${q.batches.waitingLeaves} oldest-waiting=${q.batches.oldestWaitingSeconds === null ? "-" : `${q.batches.oldestWaitingSeconds} s`} anchored=${q.batches.anchored} anchored-leaves=${q.batches.anchoredLeaves}${q.batches.anchored > 0 ? ` (${(q.batches.anchoredLeaves / q.batches.anchored).toFixed(1)} a batch)` : ""}`,
      `oldest        ${q.oldestUnfinished ? `${q.oldestUnfinished.kind} ${q.oldestUnfinished.transactionId} ${q.oldestUnfinished.state}, ${q.oldestUnfinished.ageSeconds} s old` : "-"}`,
      `last error    ${q.lastError ? `${q.lastError.at} ${q.lastError.transactionId} (${q.lastError.state}): ${q.lastError.error}` : "-"}`,
    ];
    out.write(lines.join("\n") + "\n");
  }
  return 0;
}
