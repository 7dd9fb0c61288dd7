/**
 * One node of several on one PostgreSQL database (docs/operations.md "Several nodes"): the same
 * services as on the embedded SQLite (compose.ts `assemble`), over the shared database, with what
 * several nodes need besides:
 * - the node's heartbeat and its bid for the anchor loop's leadership (storage/pg-cluster.ts):
 *   every node runs the loop's timer, only the leader works the queue, every change it makes is
 *   fenced by its epoch (postgresAnchorStorage, below);
 * - a lane of transaction ids, so no two nodes paying with one account make the same id;
 * - rate limits shared by the nodes (keys/cluster-rate-limit.ts), leased a few tokens at a time.
 *
 * Loaded only when DOCVERIFY_DATABASE_URL is set: the embedded path never loads the PostgreSQL client.
 */
import { assemble, type AppOptions, type ServiceApp } from "./compose.ts";
import { ConfigError } from "../config/index.ts";
import { openPostgresCoreAndKey } from "./core.ts";
import { postgresDrivers } from "../storage/postgres/drivers.ts";
import { journalRules } from "../anchoring/journal/rules.ts";
import type { SubmitKeyPair } from "../anchoring/ledger.ts";
import { loadOrCreateSubmitKey } from "../anchoring/submit-key.ts";
import { createTransactionIds, maxValidStartNs } from "../anchoring/transaction-ids.ts";
import type { AnchorStorage } from "../anchoring/types.ts";
import { createClusterRateLimiter } from "../keys/cluster-rate-limit.ts";
import { createCredentials } from "../keys/credentials.ts";
import { claimLane, clusterStatus, LANES, startLeadership, type ClusterStatus, type Lane, type Leadership } from "../storage/pg-cluster.ts";
import { pgLease, sweepRateBuckets } from "../storage/pg-rate.ts";
import type { PostgresStore } from "../storage/pg-store.ts";
import { createWriteQueue } from "../records/write-queue.ts";
import { VERSION } from "../version.ts";

/** Connections each node opens: the leadership's and the lane's reserved ones, and the pool. */
export const NODE_CONNECTIONS = 16;

/** Records created on another node wake nothing on the leader: it looks at the queue this often. */
export const LEADER_POLL_MS = 200;

/** How long the storage readiness check waits for the database. */
const READY_TIMEOUT_MS = 2_000;

/** How often a node that lost its lane of transaction ids tries to claim one again. */
const LANE_RECLAIM_MS = 1_000;

/** Buckets untouched for a minute are swept by the leader this often. */
const SWEEP_EVERY_MS = 60_000;

export interface ClusterApp extends ServiceApp {
  readonly store: PostgresStore;
  readonly leadership: Leadership;
  /** The nodes and the leader, as `docverify status` shows them. */
  cluster(): Promise<ClusterStatus>;
}

export async function createClusterApp(options: AppOptions): Promise<ClusterApp> {
  const { config, log } = options;
  if (config.ledger.network === "local" && config.ledger.localLedgerUrl === null) {
    // Each node would start a ledger of its own, and a record anchored on the leader's would not
    // exist on the next leader's.
    throw new ConfigError(
      "DOCVERIFY_LOCAL_LEDGER_URL",
      "with DOCVERIFY_DATABASE_URL and the local ledger network, every node needs the same ledger: start one with `docverify local-ledger` and give its URL to every node",
    );
  }
  const { core, masterKey } = await openPostgresCoreAndKey(options, { connections: NODE_CONNECTIONS });
  const { store, clock } = core;
  const credentials = createCredentials({ ...core.drivers.keys(), clock, log });
  let lane: Lane;
  try {
    lane = await claimLane(store);
  } catch (e) {
    await core.close();
    throw e;
  }
  // A lane lost with its connection (the database restarted, a network cut) is claimed again,
  // perhaps another: until then record creation answers 503 (anchoring/transaction-ids.ts).
  const laneView = {
    get index() {
      return lane.index;
    },
    lanes: LANES,
    held: () => lane.held(),
  };
  let reclaiming = false;
  const reclaim = setInterval(() => {
    if (reclaiming || lane.held()) return;
    reclaiming = true;
    claimLane(store)
      .then(
        (next) => {
          log.info("claimed a lane of transaction ids again", { node: config.nodeName, lane: next.index });
          lane = next;
        },
        (e: unknown) => log.warn("could not claim a lane of transaction ids; retrying", { node: config.nodeName, error: (e as Error).message }),
      )
      .finally(() => (reclaiming = false));
  }, LANE_RECLAIM_MS);
  reclaim.unref?.();
  // What the loop anchored lately (for the other nodes' back-pressure) and how long the ledger has
  // not answered (a leader cut off from it steps down): known once the ledger is up.
  let loop: { anchoredRecently(): number; ledgerUnreachableForMs(): number } | null = null;
  const leadership = startLeadership(store, {
    node: config.nodeName,
    version: VERSION,
    log,
    anchoredRecently: () => loop?.anchoredRecently() ?? 0,
    // A leader the ledger has not answered for DOCVERIFY_LEDGER_STEP_DOWN_SECONDS steps down (and
    // bids again once it answers), so that a node that reaches the ledger leads: a node cut off
    // from the ledger but not from the database would otherwise hold the lead while nothing is
    // anchored.
    mayLead: () => (loop?.ledgerUnreachableForMs() ?? 0) < config.ledgerStepDownSeconds * 1000,
  });
  const limiter = createClusterRateLimiter({ lease: pgLease(store), clock });
  /** Undoes the node's parts, storage last (at shutdown, or when starting fails half-way). */
  const closeNode = async () => {
    clearInterval(sweep);
    clearInterval(reclaim);
    await credentials.close();
    await limiter.stop();
    await leadership.stop();
    await lane.release();
    await core.close();
  };
  const sweep = setInterval(() => {
    if (leadership.current() === null) return;
    sweepRateBuckets(store).catch((e: unknown) => log.warn("could not sweep the shared rate buckets", { error: (e as Error).message }));
  }, SWEEP_EVERY_MS);
  sweep.unref?.();

  let service: Awaited<ReturnType<typeof assemble>>;
  try {
    const storage = await postgresAnchorStorage(store, { epoch: () => leadership.current(), lane: laneView });
    service = await assemble(
      { ...core, credentials },
      {
        anchoring: { storage, idlePollMs: LEADER_POLL_MS },
        masterKey,
        leading: () => leadership.current() !== null,
        // Records and the person application's request-path writes: READ COMMITTED transactions
        // (storage/postgres/record-writes.ts says why that keeps them correct).
        writes: createWriteQueue(core.drivers.records().writes),
        limiter,
        storageCheck: () => databaseAnswers(store),
        readiness: {
          // A node that lost its lane of transaction ids cannot take records: not ready.
          lane: () => (lane.held() ? true : "lost its lane of transaction ids: the database connection that held it was lost; claiming another"),
        },
        close: closeNode,
      },
      options,
    );
  } catch (e) {
    await closeNode().catch(() => {});
    throw e;
  }
  service.anchoringStarted.then(
    (a) => (loop = a),
    () => {},
  );
  // Descriptors, not a spread: `anchoring` is a getter that throws until the ledger is up.
  const node = { config, instanceId: core.instanceId, store, leadership, cluster: () => clusterStatus(store) };
  return Object.defineProperties(node, Object.getOwnPropertyDescriptors(service)) as unknown as ClusterApp;
}

/** The database answers a query within READY_TIMEOUT_MS. */
async function databaseAnswers(store: PostgresStore): Promise<true | string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      store.client`SELECT 1`,
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS))),
    ]);
    return true;
  } catch (e) {
    return `database not answering: ${(e as Error).message}`;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The loop's storage on PostgreSQL: the fenced journal, transaction ids in this node's lane (the
 * last valid start read once, now), and the submit key every node shares.
 */
export async function postgresAnchorStorage(
  store: PostgresStore,
  options: { readonly epoch: () => number | null; readonly lane: { readonly index: number; readonly lanes: number; held(): boolean } },
): Promise<AnchorStorage> {
  const drivers = postgresDrivers(store, { epoch: options.epoch });
  const { loop } = drivers.anchoring();
  const lastValidStartNs = maxValidStartNs((await loop.transactionIds.newestIds()).map((id) => ({ id })));
  const { journal } = drivers.journal();
  return {
    journal: (clock, newTransactionId, batches) => journal(journalRules(clock, newTransactionId, batches)),
    transactionIds: (o) => createTransactionIds({ ...o, lastValidStartNs, lane: options.lane }),
    submitKey: (masterKey: Uint8Array | null, generate: () => SubmitKeyPair) => loadOrCreateSubmitKey(loop.submitKey, masterKey, generate),
    active: () => options.epoch() !== null,
  };
}
