/**
 * Several nodes on one PostgreSQL database (docs/storage.md "Several nodes: heartbeats and the
 * anchor loop's leader"): each node's heartbeat, and the one
 * node that runs the anchor loop.
 *
 * **Leadership** is a session-level advisory lock held on a connection reserved for it. A node
 * that gets the lock raises `anchor_leader.epoch` by one; that number is its epoch until it stops
 * leading. Every change to the ledger queue runs through `fencedWrite`, which reads the leader row
 * `FOR SHARE` in the same transaction and refuses unless the epoch is still the writer's. So:
 * - a new leader's raise of the epoch waits for the old leader's fenced transactions in flight,
 *   and every fenced transaction after it fails (DeposedError): a deposed leader's late writes
 *   change nothing, whatever it believes;
 * - the leader refreshes `seen_at` (the database's clock, so the nodes' clocks do not matter)
 *   every `pollMs`. A failed refresh, a changed epoch or a lost connection ends its leadership at
 *   once, and so does a process that wakes from a pause longer than `staleMs` (`current()` then
 *   answers null before the next refresh is even tried);
 * - when the leader dies, PostgreSQL drops its connection and its lock, and a follower's next try
 *   (every `pollMs`) takes over. When the leader hangs with its connection open (a paused
 *   process, a partitioned host), its heartbeat goes stale; after `staleMs` a follower ends the
 *   holder's session (`pg_terminate_backend`, allowed to the role that opened it) and takes over.
 *   With the defaults, a new leader leads within 2 s of a crash and within 10 s of a hang.
 *
 * Only this file reads and writes `anchor_leader` and `nodes` (migrations/pg/0002_cluster.sql).
 */
import type { ReservedSQL } from "bun";
import { sql } from "drizzle-orm";
import type { Logger } from "../lib/log.ts";
import type { PostgresStore } from "./pg-store.ts";
import { q, type Body, type StoreDb, type Tables } from "./store.ts";

/** The advisory lock key of the anchor loop's leadership ("docv", 2). */
export const LEADER_LOCK = 0x646f6376_0002n;
const LOCK_HIGH = Number(LEADER_LOCK >> 32n);
const LOCK_LOW = Number(LEADER_LOCK & 0xffff_ffffn);

export const DEFAULT_POLL_MS = 1_000;
export const DEFAULT_STALE_MS = 8_000;

/** A fenced write refused: the writer's epoch is no longer the leader's. */
export class DeposedError extends Error {
  override readonly name = "DeposedError";
  constructor(
    readonly epoch: number,
    readonly current: number,
  ) {
    super(`this node led the anchor loop in epoch ${epoch}; the leader is now in epoch ${current}`);
  }
}

/**
 * Runs `body` as one write transaction only while `epoch` is still the leader's epoch: the
 * transaction first reads the leader row FOR SHARE, so the epoch cannot change before it commits.
 *
 * A leader paused in the middle of such a transaction would hold that share lock, and with it
 * every new leader's raise of the epoch, for as long as it is paused: the server ends a fenced
 * transaction left idle for `idleMs` (half the stale window by default), well before a follower
 * takes over.
 */
export function fencedWrite<T>(
  store: PostgresStore,
  epoch: number,
  body: Body<T>,
  idleMs = DEFAULT_STALE_MS / 2,
  isolation: "serializable" | "read committed" = "serializable",
): Promise<T> {
  if (!Number.isSafeInteger(idleMs) || idleMs <= 0) throw new RangeError("idleMs must be a positive whole number");
  // The share lock on the leader row holds until commit at either isolation level.
  return store.writeAt(isolation, function* (tx: StoreDb, t: Tables) {
    yield* q(tx.execute(sql.raw(`SET LOCAL idle_in_transaction_session_timeout = ${idleMs}`)));
    const rows = (yield* q(tx.execute(sql`SELECT epoch FROM anchor_leader WHERE id = 1 FOR SHARE`))) as unknown as { epoch: string | number }[];
    const current = Number(rows[0]?.epoch ?? -1);
    if (current !== epoch) throw new DeposedError(epoch, current);
    return yield* body(tx, t);
  });
}

export interface LeadershipOptions {
  /** This node's name (DOCVERIFY_NODE_NAME). */
  readonly node: string;
  readonly version: string;
  readonly log: Logger;
  readonly pollMs?: number;
  readonly staleMs?: number;
  /** Called when this node starts leading, with its epoch. */
  readonly onLead?: (epoch: number) => void;
  /**
   * Whether this node may lead now (default: always). False while leading makes it step down at
   * its next heartbeat; false while following keeps it from bidding. `serve` says false while
   * the ledger has not answered it for a while, so a node that reaches the ledger leads instead.
   */
  readonly mayLead?: () => boolean;
  /** While leading: what the anchor loop anchored in its last window, written with each heartbeat for the other nodes' back-pressure. */
  readonly anchoredRecently?: () => number;
  /** Called when this node stops leading (deposed, connection lost, paused too long, or stopped). */
  readonly onLose?: (epoch: number, reason: string) => void;
}

export interface Leadership {
  /** This node's epoch while it leads, or null. */
  current(): number | null;
  /** Stops trying; a leader gives up its lock. Resolves once the reserved connection is released. */
  stop(): Promise<void>;
}

/** Starts this node's heartbeat and its bid for the anchor loop's leadership. */
export function startLeadership(store: PostgresStore, options: LeadershipOptions): Leadership {
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  const staleMs = options.staleMs ?? DEFAULT_STALE_MS;
  const { log, node } = options;
  let conn: ReservedSQL | null = null;
  let epoch: number | null = null;
  /** performance.now() of the last heartbeat the database took, while leading. */
  let lastBeat = 0;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let running: Promise<void> = Promise.resolve();

  async function dropConnection(): Promise<void> {
    const c = conn;
    conn = null;
    if (c === null) return;
    // Closed, never released to the pool: closing the session is what releases a lock it holds.
    // A connection the server already terminated just goes.
    await c.close().catch(() => {});
  }

  async function lose(reason: string): Promise<void> {
    const was = epoch;
    epoch = null;
    await dropConnection();
    if (was !== null) {
      log.warn("no longer the anchor loop's leader", { node, epoch: was, reason });
      options.onLose?.(was, reason);
    }
  }

  async function heartbeat(): Promise<void> {
    await store.client`INSERT INTO nodes (name, version, started_at, seen_at) VALUES (${node}, ${options.version}, now(), now())
      ON CONFLICT (name) DO UPDATE SET seen_at = now(), version = EXCLUDED.version`;
  }

  async function tick(): Promise<void> {
    try {
      await heartbeat();
    } catch (e) {
      log.warn("node heartbeat failed", { node, error: (e as Error).message });
    }
    const may = options.mayLead?.() ?? true;
    if (epoch !== null) {
      if (performance.now() - lastBeat > staleMs) return lose(`paused for more than ${staleMs} ms`);
      if (!may) return lose("this node cannot reach the ledger; a node that can takes the lead");
      try {
        const anchored = Math.max(0, Math.min(2_000_000_000, Math.trunc(options.anchoredRecently?.() ?? 0)));
        const rows = (await conn!`UPDATE anchor_leader SET seen_at = now(), anchored_recently = ${anchored} WHERE id = 1 AND epoch = ${epoch} RETURNING epoch`) as unknown[];
        if (rows.length === 0) return lose("another node took the lead");
        lastBeat = performance.now();
      } catch (e) {
        return lose(`the database did not take the heartbeat: ${(e as Error).message}`);
      }
      return;
    }
    if (!may) return;
    try {
      conn ??= await store.client.reserve();
      const [{ got }] = (await conn`SELECT pg_try_advisory_lock(${LEADER_LOCK.toString()}::bigint) AS got`) as [{ got: boolean }];
      if (got) {
        const [row] = (await conn`UPDATE anchor_leader SET epoch = epoch + 1, node = ${node}, since = now(), seen_at = now(), anchored_recently = 0 WHERE id = 1 RETURNING epoch`) as [{ epoch: string }];
        epoch = Number(row.epoch);
        lastBeat = performance.now();
        log.info("leading the anchor loop", { node, epoch });
        options.onLead?.(epoch);
        return;
      }
      // Held elsewhere: replace a leader whose heartbeat stopped while its session stays open.
      const [leader] = (await conn`SELECT node, (clock_timestamp() - seen_at) > make_interval(secs => ${staleMs / 1000}) AS stale FROM anchor_leader WHERE id = 1`) as [{ node: string | null; stale: boolean | null }];
      if (leader?.stale === true) {
        // This database's holder only: an advisory lock is per database, and the server may hold
        // other docverify databases whose leaders are none of this node's business.
        const ended = (await conn`SELECT pid, pg_terminate_backend(pid) AS ended FROM pg_locks
          WHERE locktype = 'advisory' AND classid = ${LOCK_HIGH} AND objid = ${LOCK_LOW} AND objsubid = 1 AND granted
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`) as { pid: number; ended: boolean }[];
        log.warn("the anchor loop's leader stopped its heartbeat: ending its session to take over", { node, leader: leader.node, sessions: ended.length });
      }
    } catch (e) {
      log.warn("could not bid for the anchor loop's leadership", { node, error: (e as Error).message });
      await dropConnection();
    }
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      running = tick().finally(schedule);
    }, pollMs);
  }
  running = tick().finally(schedule);

  return {
    current() {
      if (epoch === null) return null;
      // A process that was paused must not act on a leadership it may have lost meanwhile.
      if (performance.now() - lastBeat > staleMs) return null;
      return epoch;
    },
    async stop() {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      await running;
      await lose("stopped");
      await dropConnection();
    },
  };
}

export interface NodeStatus {
  readonly name: string;
  readonly version: string;
  readonly startedAt: string;
  readonly seenAt: string;
  /** Seen within the stale window. */
  readonly live: boolean;
}

export interface ClusterStatus {
  readonly nodes: readonly NodeStatus[];
  readonly leader: { readonly node: string; readonly epoch: number; readonly since: string; readonly seenAt: string; readonly live: boolean } | null;
}

/** The nodes that have a heartbeat, and the anchor loop's leader, for `docverify status`. */
export async function clusterStatus(store: PostgresStore, staleMs = DEFAULT_STALE_MS): Promise<ClusterStatus> {
  const secs = staleMs / 1000;
  const nodes = (await store.client`SELECT name, version, started_at, seen_at, (clock_timestamp() - seen_at) <= make_interval(secs => ${secs}) AS live FROM nodes ORDER BY name`) as {
    name: string;
    version: string;
    started_at: Date;
    seen_at: Date;
    live: boolean;
  }[];
  const [leader] = (await store.client`SELECT node, epoch, since, seen_at, (clock_timestamp() - seen_at) <= make_interval(secs => ${secs}) AS live FROM anchor_leader WHERE id = 1`) as {
    node: string | null;
    epoch: string;
    since: Date | null;
    seen_at: Date | null;
    live: boolean | null;
  }[];
  return {
    nodes: nodes.map((n) => ({ name: n.name, version: n.version, startedAt: n.started_at.toISOString(), seenAt: n.seen_at.toISOString(), live: n.live })),
    leader:
      leader === undefined || leader.node === null
        ? null
        : { node: leader.node, epoch: Number(leader.epoch), since: leader.since!.toISOString(), seenAt: leader.seen_at!.toISOString(), live: leader.live === true },
  };
}

/** Lanes of transaction ids (anchoring/transaction-ids.ts): at most this many live nodes. */
export const LANES = 1000;
/** The advisory lock of lane i is LANE_LOCK + i ("docv", 0x1000 + i). */
const LANE_LOCK = 0x646f6376_1000n;
const LANE_PROBE_MS = 1_000;

export interface Lane {
  readonly index: number;
  readonly lanes: number;
  /** False once the lane's connection (and with it its lock) is lost. */
  held(): boolean;
  release(): Promise<void>;
}

/**
 * Claims the first free lane: an advisory lock held on a connection reserved for it for the node's
 * lifetime, so two live nodes never hold one lane. The connection is probed every second; once it
 * is lost, `held()` answers false for good (another node may take the lane) and the node claims a
 * new one.
 */
export async function claimLane(store: PostgresStore): Promise<Lane> {
  const conn = await store.client.reserve();
  for (let i = 0; i < LANES; i++) {
    const [{ got }] = (await conn`SELECT pg_try_advisory_lock(${(LANE_LOCK + BigInt(i)).toString()}::bigint) AS got`) as [{ got: boolean }];
    if (!got) continue;
    let held = true;
    const probe = setInterval(() => {
      conn`SELECT 1`.catch(() => {
        held = false;
        clearInterval(probe);
      });
    }, LANE_PROBE_MS);
    probe.unref?.();
    return {
      index: i,
      lanes: LANES,
      held: () => held,
      async release() {
        held = false;
        clearInterval(probe);
        await conn.close().catch(() => {});
      },
    };
  }
  await conn.close().catch(() => {});
  throw new Error(`every one of the ${LANES} lanes of transaction ids is held: more nodes than docverify supports share this database`);
}

/**
 * The `serve` nodes connected to this database now: how many sessions hold a lane of transaction
 * ids (every node holds one from start to exit; the kernel of the matter is PostgreSQL dropping a
 * session's advisory locks the moment it ends, however the node ended), and the names of the nodes
 * with a recent heartbeat. `docverify master-key rotate` refuses while `sessions` is not 0.
 */
export async function connectedNodes(store: PostgresStore, staleMs = DEFAULT_STALE_MS): Promise<{ readonly sessions: number; readonly names: readonly string[] }> {
  const laneLow = Number(LANE_LOCK & 0xffff_ffffn);
  const [{ sessions }] = (await store.client`SELECT count(DISTINCT pid)::int AS sessions FROM pg_locks
    WHERE locktype = 'advisory' AND classid = ${LOCK_HIGH} AND objid >= ${laneLow} AND objid < ${laneLow + LANES} AND objsubid = 1 AND granted
      AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`) as [{ sessions: number }];
  const names = (await store.client`SELECT name FROM nodes WHERE (clock_timestamp() - seen_at) <= make_interval(secs => ${staleMs / 1000}) ORDER BY name`) as { name: string }[];
  return { sessions, names: names.map((n) => n.name) };
}
