/**
 * `kill -9` of the anchor loop's LEADER at each step of a batch's life, with two `serve` nodes on
 * one PostgreSQL database and a local ledger of their own (docs/anchoring.md "Batches",
 * "Crashes"; docs/operations.md "Several nodes"); the PostgreSQL counterpart of
 * test/anchoring/batches-crash.test.ts. Records come in through the node that does not lead. The
 * leader is killed while the batch is open and taking records; once closed and sent, before any
 * answer (the ledger takes the bytes and never answers); and once accepted, before consensus.
 * After each kill the other node leads within the failover time, and every acknowledged record is
 * anchored in exactly one anchored batch, no leaf in two, each batch message once on the topic,
 * its root recomputed from its leaves; every record verifies `verified_org` on the survivor.
 *
 * The three steps share one cluster, in order: the killed node is started again as the follower,
 * and the next step kills the node that took over.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { LocalLedger } from "../../src/local-ledger/index.ts";
import { call, createRecord, HIGH_LIMITS, leavesInPostgres, topicMessages, withLeaves, type Created } from "../anchoring/key-lifecycle-rig.ts";
import { cli } from "../ops/support.ts";
import { cleanup, startService, tempDir, type ServiceProcess } from "../support/env.ts";
import { sharedPostgres, type Postgres } from "../support/postgres.ts";
import { startSeparateLedgerWithControls } from "../support/separate-ledger.ts";
import { waitFor } from "../support/wait.ts";

/** Long enough to see a batch open, and to arm a fault before it closes. */
const BATCH_WINDOW_MS = 3_000;
/** A crashed leader's connection and lock go with it: a follower leads at its next bid (docs say within 2 s). */
const FAILOVER_MS = 5_000;

let pg: Postgres;
let ledger: LocalLedger;
let db: string;
let orgId: string;
let key: string;
const envs: Record<string, string>[] = [];
const nodes: ServiceProcess[] = [];
/** Every record acknowledged (201) so far, through any step. */
const acknowledged: Created[] = [];

const sql = (q: string) => pg.psql(q, db).trim();
const rows = (q: string) => sql(q).split("\n").filter((l) => l !== "");

/** The leader's index and epoch, from the shared database. */
function leaderRow(): { index: number; epoch: number } | undefined {
  const [node, epoch] = sql("SELECT node || '|' || epoch FROM anchor_leader WHERE id = 1").split("|") as [string, string];
  return /^node-[01]$/.test(node) ? { index: Number(node.slice(5)), epoch: Number(epoch) } : undefined;
}

/** The batches of records (not announcements): `transaction id|state|attempts|size`, oldest first. */
const batches = () =>
  rows("SELECT transaction_id || '|' || state || '|' || attempts || '|' || batch_size FROM ledger_transactions WHERE kind = 'batch_message' ORDER BY created_at, transaction_id").map((l) => {
    const [id, state, attempts, size] = l.split("|") as [string, string, string, string];
    return { id, state, attempts: Number(attempts), size: Number(size) };
  });

/** The SHA-256 of batch `id`'s signed bytes, as stored before its first submission. */
const signedDigest = (id: string) => sql(`SELECT encode(sha256(signed_bytes), 'hex') FROM ledger_transactions WHERE transaction_id = '${id}'`);

/** The batch the records `created` are leaves of: one batch, the transaction id they all carry. */
function batchOf(created: readonly Created[]): string {
  const ids = new Set(rows(`SELECT transaction_id FROM records WHERE id IN (${created.map((c) => `'${c.recordId}'`).join(",")})`));
  expect(ids.size).toBe(1);
  return [...ids][0]!;
}

/**
 * `n` records through node `index`, one after another, all within the batch window: one batch.
 * (On PostgreSQL a creation passes over a batch another creation is joining and opens its own, so
 * creations at once may make several: docs/anchoring.md "Batches".) What was acknowledged.
 */
async function createSeveral(index: number, n: number): Promise<Created[]> {
  const made: Created[] = [];
  for (let i = 0; i < n; i++) made.push(await createRecord(() => nodes[index]!, key));
  acknowledged.push(...made);
  return made;
}

beforeAll(async () => {
  pg = await sharedPostgres();
  const started = await startSeparateLedgerWithControls({ consensusMs: 300 });
  ledger = started.ledger;
  const url = await pg.createDatabase("batchcrash");
  db = new URL(url).pathname.slice(1);
  const keyFile = join(tempDir(), "master.key");
  writeFileSync(keyFile, randomBytes(32).toString("hex") + "\n", { mode: 0o600 });
  const env = { DOCVERIFY_DATABASE_URL: url, DOCVERIFY_MASTER_KEY_FILE: keyFile, DOCVERIFY_BATCH_WINDOW_MS: String(BATCH_WINDOW_MS), ...started.env, ...HIGH_LIMITS };
  for (const i of [0, 1]) envs.push({ ...env, DOCVERIFY_DATA_DIR: tempDir(), DOCVERIFY_NODE_NAME: `node-${i}` });
  // Started together: one migrates, the other finds it done.
  nodes.push(...(await Promise.all(envs.map((e) => startService({ env: e })))));
  const org = cli(["org", "create", "--name", "Batch Crash Ltd", "--addon", "--api-access", "--validated", "--json", "--data", tempDir()], env);
  expect(org.code, org.stderr).toBe(0);
  orgId = (JSON.parse(org.stdout) as { id: string }).id;
  const mint = cli(["key", "mint", "--org", orgId, "--env", "live", "--json", "--data", tempDir()], env);
  expect(mint.code, mint.stderr).toBe(0);
  key = (JSON.parse(mint.stdout) as { key: string }).key;
  // The topic and the key announcement anchored first: the first record waits for them, and
  // neither may be the message a step below swallows or holds.
  const { index } = await waitFor("a leader", leaderRow, 20_000, 50);
  await createSeveral(1 - index, 1);
  await waitFor("the first record and the key announcement anchored", () => (rows("SELECT state FROM ledger_transactions WHERE state <> 'anchored'").length === 0 && sql("SELECT count(*) FROM records WHERE anchor_state <> 'anchored'") === "0" ? true : undefined), 30_000, 50);
  expect(sql(`SELECT state FROM ledger_transactions WHERE org_id = '${orgId}' AND kind = 'key_announcement'`)).toBe("anchored");
}, 60_000);

afterAll(async () => {
  await cleanup();
  await pg?.destroy();
});

/** `kill -9` of the leader: the other node leads within the failover time. Returns the survivor's index. */
async function killLeader(leader: { index: number; epoch: number }): Promise<number> {
  const killedAt = performance.now();
  await nodes[leader.index]!.stop("SIGKILL");
  const next = await waitFor("a new leader", () => {
    const row = leaderRow();
    return row !== undefined && row.epoch > leader.epoch ? row : undefined;
  }, 20_000, 20);
  const failoverMs = performance.now() - killedAt;
  console.log(`node-${next.index} leads (epoch ${next.epoch}) ${Math.round(failoverMs)} ms after kill -9 of node-${leader.index}`);
  expect(next.index).toBe(1 - leader.index);
  expect(failoverMs).toBeLessThan(FAILOVER_MS);
  return next.index;
}

/** A node killed by an earlier step started again, on the same settings and folder: it follows. The leader then. */
async function bothUp(): Promise<{ index: number; epoch: number }> {
  for (const [i, node] of nodes.entries()) if (node.proc.exitCode !== null || node.proc.signalCode !== null) nodes[i] = await startService({ env: envs[i]! });
  return waitFor("a leader", leaderRow, 20_000, 50);
}

/**
 * Every acknowledged record anchored: each a leaf of exactly one batch, that batch anchored; on
 * the topic each batch message once, its root and size recomputed from its leaves, the leaves
 * exactly the acknowledged records, each once; every record `verified_org` on `survivor`.
 */
async function expectExactlyOnce(survivor: ServiceProcess): Promise<void> {
  await waitFor("every record anchored", () => (sql("SELECT count(*) FROM records WHERE anchor_state <> 'anchored'") === "0" ? true : undefined), 30_000, 50);
  const ids = acknowledged.map((c) => c.recordId).sort();
  expect(rows("SELECT id FROM records ORDER BY id")).toEqual(ids);
  // Each record's creation leaf: one row, ever, and its batch anchored.
  const leaves = rows(
    `SELECT l.record_id || '|' || count(*) || '|' || bool_and(b.state = 'anchored') FROM ledger_transactions l JOIN ledger_transactions b ON b.transaction_id = l.batch_transaction_id
      WHERE l.batch_leaf = 1 AND l.kind = 'record_message' GROUP BY l.record_id ORDER BY l.record_id`,
  );
  expect(leaves).toEqual(ids.map((id) => `${id}|1|true`));
  expect(batches().filter((b) => b.state !== "anchored")).toEqual([]);
  const topicId = sql(`SELECT topic_id FROM organisations WHERE id = '${orgId}'`);
  const raw = await topicMessages(ledger.mirrorUrl, topicId);
  expect(new Set(raw.map((x) => JSON.stringify(x.m))).size).toBe(raw.length);
  const sent = raw.filter((x) => x.m.type === "batch");
  expect(new Set(sent.map((x) => x.m.batch)).size).toBe(sent.length);
  expect(sent).toHaveLength(batches().length);
  const expanded = withLeaves(raw, leavesInPostgres(sql));
  expect(expanded.filter((x) => x.m.type === "record").map((x) => x.m.recordId).sort()).toEqual(ids);
  for (const c of acknowledged) expect(((await call(survivor, "/v1/verifications", null, { originalDocHash: c.hash })).body as { verdict: string }).verdict).toBe("verified_org");
}

describe("the leader killed at each step of a batch's life, two nodes on PostgreSQL", () => {
  test(
    "while the batch is open and taking records: the other node leads, closes the batch and anchors it once",
    async () => {
      const leader = await bothUp();
      const created = await createSeveral(1 - leader.index, 6);
      const batch = batchOf(created);
      expect(batches().find((b) => b.id === batch)).toMatchObject({ state: "open", size: 6 });
      const survivor = await killLeader(leader);
      await expectExactlyOnce(nodes[survivor]!);
      expect(batches().find((b) => b.id === batch)).toMatchObject({ state: "anchored", size: 6 });
    },
    45_000,
  );

  test(
    "once the batch is sent and the node never answers: the other node leads, the same bytes go again and it is anchored once",
    async () => {
      const leader = await bothUp();
      ledger.faults.swallowNext(1);
      const created = await createSeveral(1 - leader.index, 5);
      const batch = batchOf(created);
      await waitFor("the batch sent, unanswered", () => (batches().some((b) => b.id === batch && b.state === "pending" && b.attempts >= 1) ? true : undefined), 20_000, 5);
      const bytes = signedDigest(batch);
      const survivor = await killLeader(leader);
      await expectExactlyOnce(nodes[survivor]!);
      // The new leader sent the bytes the killed one had signed, again.
      expect(batches().find((b) => b.id === batch)).toMatchObject({ state: "anchored", size: 5 });
      expect(batches().find((b) => b.id === batch)!.attempts).toBeGreaterThanOrEqual(2);
      expect(signedDigest(batch)).toBe(bytes);
    },
    45_000,
  );

  test(
    "once the batch is accepted, before consensus: the other node leads, confirms it and it is anchored once",
    async () => {
      const leader = await bothUp();
      ledger.faults.pauseConsensus();
      try {
        const created = await createSeveral(1 - leader.index, 5);
        const batch = batchOf(created);
        await waitFor("the batch accepted", () => (batches().some((b) => b.id === batch && b.state === "accepted") ? true : undefined), 20_000, 5);
        const bytes = signedDigest(batch);
        const survivor = await killLeader(leader);
        ledger.faults.resumeConsensus();
        await expectExactlyOnce(nodes[survivor]!);
        expect(batches().find((b) => b.id === batch)).toMatchObject({ state: "anchored", size: 5 });
        expect(signedDigest(batch)).toBe(bytes);
      } finally {
        ledger.faults.resumeConsensus();
      }
    },
    45_000,
  );
});
