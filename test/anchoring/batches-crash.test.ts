/**
 * `kill -9` of serve at each step of a batch's life, on the embedded SQLite against a local ledger
 * of its own (docs/anchoring.md "Batches", "Crashes"): while the batch is open and taking records;
 * once closed and sent, before any answer (the node takes the bytes and never answers); and once
 * accepted, before consensus. After each restart every acknowledged record is anchored, in
 * exactly one anchored batch, no leaf in two, each batch message once on the topic, its root
 * recomputed from its leaves; every record verifies `verified_org`.
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { DATABASE_FILE } from "../../src/storage/data-folder.ts";
import { cli } from "../ops/support.ts";
import { cleanup, startService, tempDir, type ServiceProcess } from "../support/env.ts";
import { startSeparateLedgerWithControls } from "../support/separate-ledger.ts";
import { waitFor } from "../support/wait.ts";
import { call, createRecord, HIGH_LIMITS, leavesInDataFolder, topicMessages, withLeaves, type Created } from "./key-lifecycle-rig.ts";

afterAll(cleanup);

/** A serve on a folder of its own, one organisation (add-on, validated) and a live key; `batchWindowMs` its batch window. */
async function deploy(ledgerEnv: Record<string, string>, batchWindowMs: number) {
  const data = tempDir();
  const env = { DOCVERIFY_DATA_DIR: data, DOCVERIFY_BATCH_WINDOW_MS: String(batchWindowMs), ...ledgerEnv, ...HIGH_LIMITS };
  let svc = await startService({ env });
  const org = cli(["org", "create", "--name", "Batches Ltd", "--addon", "--api-access", "--validated", "--json", "--data", data]);
  expect(org.code, org.stderr).toBe(0);
  const orgId = (JSON.parse(org.stdout) as { id: string }).id;
  const mint = cli(["key", "mint", "--org", orgId, "--env", "live", "--json", "--data", data]);
  expect(mint.code, mint.stderr).toBe(0);
  const key = (JSON.parse(mint.stdout) as { key: string }).key;
  const rows = <T>(sql: string, ...params: string[]): T[] => {
    const db = new Database(join(data, DATABASE_FILE), { readonly: true });
    try {
      return db.query(sql).all(...params) as T[];
    } finally {
      db.close();
    }
  };
  return {
    data,
    key,
    get svc(): ServiceProcess {
      return svc;
    },
    rows,
    /** The batches of records (not the organisation's announcements), by state. */
    batches: () => rows<{ id: string; state: string; attempts: number; size: number }>("SELECT transaction_id AS id, state, attempts, batch_size AS size FROM ledger_transactions WHERE kind = 'batch_message'"),
    async killAndRestart(): Promise<void> {
      await svc.stop("SIGKILL");
      svc = await startService({ env });
    },
    /** Waits until every record is anchored. */
    allAnchored: () =>
      waitFor("every record anchored", () => (rows<{ n: number }>("SELECT count(*) AS n FROM records WHERE anchor_state <> 'anchored'")[0]!.n === 0 ? true : undefined), 30_000, 100),
    topicId: () => rows<{ t: string }>("SELECT topic_id AS t FROM organisations WHERE id = ?", orgId)[0]!.t,
  };
}

/** Records created at once by several clients: what was acknowledged. */
async function createSeveral(d: Awaited<ReturnType<typeof deploy>>, n: number): Promise<Created[]> {
  return Promise.all(Array.from({ length: n }, () => createRecord(() => d.svc, d.key)));
}

/** Every record of the folder (those acknowledged before the batch in question, and in it). */
function everyRecord(d: Awaited<ReturnType<typeof deploy>>): Created[] {
  return d.rows<{ id: string; hash: string }>("SELECT id, doc_hash AS hash FROM records").map((r) => ({ recordId: r.id, hash: r.hash, authenticatedAt: "" }));
}

/**
 * After the restart: every acknowledged record anchored; on the topic each batch message once
 * (by its transaction), its root over its leaves, the leaves exactly the records' messages, each
 * once; every record `verified_org`.
 */
async function expectExactlyOnce(d: Awaited<ReturnType<typeof deploy>>, ledgerUrl: string, created: readonly Created[]): Promise<void> {
  await d.allAnchored();
  const raw = await topicMessages(ledgerUrl, d.topicId());
  const batches = raw.filter((x) => x.m.type === "batch");
  expect(new Set(batches.map((x) => x.m.batch)).size).toBe(batches.length);
  const expanded = withLeaves(raw, leavesInDataFolder(d.data));
  const recordIds = expanded.filter((x) => x.m.type === "record").map((x) => x.m.recordId);
  expect([...recordIds].sort()).toEqual(created.map((c) => c.recordId).sort());
  // No record's leaf in two batches, anchored or not: the others' are abandoned, never anchored.
  const anchoredLeaves = d.rows<{ record: string; n: number }>("SELECT record_id AS record, count(*) AS n FROM ledger_transactions WHERE batch_leaf = 1 AND state = 'anchored' GROUP BY record_id");
  expect(anchoredLeaves.every((l) => l.n === 1)).toBe(true);
  expect(anchoredLeaves).toHaveLength(created.length);
  for (const c of created) expect(((await call(d.svc, "/v1/verifications", null, { originalDocHash: c.hash })).body as { verdict: string }).verdict).toBe("verified_org");
}

describe("serve killed at each step of a batch's life", () => {
  test(
    "while the batch is open and taking records: restarted, it closes the batch and anchors it once",
    async () => {
      const { env, ledger } = await startSeparateLedgerWithControls({ consensusMs: 300 });
      const d = await deploy(env, 3_000);
      // The topic and the key announcement first.
      const first = await createSeveral(d, 1);
      await d.allAnchored();
      const created = await createSeveral(d, 6);
      expect(d.batches().filter((b) => b.state === "open").map((b) => b.size)).toEqual([6]);
      await d.killAndRestart();
      await expectExactlyOnce(d, ledger.mirrorUrl, [...first, ...created]);
      expect(d.batches().map((b) => [b.state, b.size])).toEqual([
        ["anchored", 1],
        ["anchored", 6],
      ]);
    },
    90_000,
  );

  test(
    "once the batch is sent and the node never answers: restarted, the same bytes go again and it is anchored once",
    async () => {
      const { env, ledger } = await startSeparateLedgerWithControls({ consensusMs: 300 });
      const d = await deploy(env, 200);
      // The topic and the key announcement first (their messages must not be the ones swallowed).
      await createSeveral(d, 1);
      await d.allAnchored();
      ledger.faults.swallowNext(1);
      const created = await createSeveral(d, 5);
      await waitFor("the batch sent, unanswered", () => (d.batches().some((b) => b.state === "pending" && b.attempts >= 1) ? true : undefined), 20_000, 5);
      await d.killAndRestart();
      const all = everyRecord(d);
      expect(all).toHaveLength(created.length + 1);
      await expectExactlyOnce(d, ledger.mirrorUrl, all);
    },
    90_000,
  );

  test(
    "once the batch is accepted, before consensus: restarted, it is confirmed and anchored once",
    async () => {
      const { env, ledger } = await startSeparateLedgerWithControls({ consensusMs: 300 });
      const d = await deploy(env, 200);
      await createSeveral(d, 1);
      await d.allAnchored();
      ledger.faults.pauseConsensus();
      const created = await createSeveral(d, 5);
      await waitFor("the batch accepted", () => (d.batches().some((b) => b.state === "accepted") ? true : undefined), 20_000, 5);
      await d.killAndRestart();
      ledger.faults.resumeConsensus();
      const all = everyRecord(d);
      expect(all).toHaveLength(created.length + 1);
      await expectExactlyOnce(d, ledger.mirrorUrl, all);
    },
    90_000,
  );
});
