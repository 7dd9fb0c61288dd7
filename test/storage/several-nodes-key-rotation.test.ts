/**
 * An organisation's key rotated on PostgreSQL with two `serve` nodes (docs/signing.md "Key
 * lifecycle", docs/operations.md "Several nodes"): `org rotate-key` run with the settings of the
 * node that is not the anchor loop's leader, while records come in through that node; the leader
 * anchors exactly one announcement of the new key, with `replaces`, every record message lies inside
 * its key's window on the topic, and every record verifies on both nodes.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { call, createRecord, expectKeyWindows, HIGH_LIMITS, leavesInPostgres, publicKeyDigest, recordStream, topicMessages, withLeaves } from "../anchoring/key-lifecycle-rig.ts";
import { cli, cliAsync } from "../ops/support.ts";
import { cleanup, startService, tempDir, type ServiceProcess } from "../support/env.ts";
import { sharedPostgres, type Postgres } from "../support/postgres.ts";
import { startSeparateLedger } from "../support/separate-ledger.ts";
import { waitFor } from "../support/wait.ts";

let pg: Postgres;
let ledgerEnv: Record<string, string>;
beforeAll(async () => {
  pg = await sharedPostgres();
  ledgerEnv = await startSeparateLedger({ consensusMs: 200 });
}, 120_000);
afterAll(async () => {
  await cleanup();
  await pg?.destroy();
});

test(
  "rotate-key run beside the node that does not lead: the leader anchors one announcement of the new key; records through the other node stay in their keys' windows and verify on both",
  async () => {
    const url = await pg.createDatabase("rotation");
    const db = new URL(url).pathname.slice(1);
    const sql = (q: string) => pg.psql(q, db).trim();
    const keyFile = join(tempDir(), "master.key");
    writeFileSync(keyFile, randomBytes(32).toString("hex") + "\n", { mode: 0o600 });
    const env = { DOCVERIFY_DATABASE_URL: url, DOCVERIFY_MASTER_KEY_FILE: keyFile, ...ledgerEnv, ...HIGH_LIMITS };
    const dirs = [tempDir(), tempDir()];
    const nodes: ServiceProcess[] = await Promise.all(dirs.map((dir, i) => startService({ env: { ...env, DOCVERIFY_DATA_DIR: dir, DOCVERIFY_NODE_NAME: `node-${i}` } })));
    const org = cli(["org", "create", "--name", "Two Nodes Ltd", "--addon", "--api-access", "--validated", "--json", "--data", dirs[0]!], env);
    expect(org.code, org.stderr).toBe(0);
    const orgId = (JSON.parse(org.stdout) as { id: string }).id;
    const mint = cli(["key", "mint", "--org", orgId, "--env", "live", "--json", "--data", dirs[0]!], env);
    expect(mint.code, mint.stderr).toBe(0);
    const key = (JSON.parse(mint.stdout) as { key: string }).key;

    const leader = await waitFor(
      "a leader",
      () => {
        const node = sql("SELECT node FROM anchor_leader WHERE id = 1");
        return /^node-[01]$/.test(node) ? Number(node.slice(5)) : undefined;
      },
      20_000,
      100,
    );
    const other = 1 - leader;
    const first = await createRecord(() => nodes[other]!, key);
    const oldKey = sql(`SELECT encode(system_key_fingerprint, 'hex') FROM organisations WHERE id = '${orgId}'`);
    const announcedKey = (fingerprint: string) =>
      sql(`SELECT state FROM ledger_transactions WHERE kind = 'key_announcement' AND encode(key_fingerprint, 'hex') = '${fingerprint}' AND state <> 'abandoned'`);
    // A key is replaced once it is announced (before that a rotation is refused: its messages would
    // wait for an announcement that never comes).
    await waitFor("the first key's announcement anchored", () => (announcedKey(oldKey) === "anchored" ? true : undefined), 30_000, 50);

    const stream = recordStream(() => nodes[other]!, key, 2);
    await waitFor("records through the other node", () => (stream.created.length >= 5 ? true : undefined), 20_000, 10);
    const r = await cliAsync(["org", "rotate-key", orgId, "--json", "--data", dirs[other]!], { ...env, DOCVERIFY_NODE_NAME: `node-${other}` });
    expect(r.code, r.stderr).toBe(0);
    const rotation = JSON.parse(r.stdout) as { keyFingerprint: string; replaces: string };
    expect(rotation.replaces).toBe(oldKey);
    const announced = () => announcedKey(rotation.keyFingerprint);
    await waitFor("the new key's announcement anchored", () => (announced() === "anchored" ? true : undefined), 30_000, 50);
    const after = stream.created.length;
    await waitFor("records signed with the new key", () => (stream.created.length >= after + 5 ? true : undefined), 20_000, 10);
    const created = [first, ...(await stream.stop())];
    await waitFor("every record anchored", () => (sql("SELECT count(*) FROM records WHERE anchor_state <> 'anchored'") === "0" ? true : undefined), 30_000, 100);

    // The leader submitted it (still the leader: nothing made it step down).
    expect(sql("SELECT node FROM anchor_leader WHERE id = 1")).toBe(`node-${leader}`);
    const keys = new Map(
      sql("SELECT encode(fingerprint, 'hex') || ' ' || encode(public_key, 'hex') FROM signing_keys")
        .split("\n")
        .map((line) => line.split(" ") as [string, string])
        .map(([fp, pk]) => [publicKeyDigest(Buffer.from(pk, "hex")), fp]),
    );
    const topicId = sql(`SELECT topic_id FROM organisations WHERE id = '${orgId}'`);
    const messages = withLeaves(await topicMessages(ledgerEnv.DOCVERIFY_LOCAL_LEDGER_URL!, topicId), leavesInPostgres(sql));
    const windows = expectKeyWindows(messages, (d) => keys.get(d) ?? d, created.map((c) => c.recordId));
    expect(windows.announcements.map((a) => [a.keyFingerprint, a.replaces])).toEqual([
      [oldKey, undefined],
      [rotation.keyFingerprint, oldKey],
    ]);
    expect([windows.byKey.get(oldKey)! > 0, windows.byKey.get(rotation.keyFingerprint)! > 0]).toEqual([true, true]);
    for (const c of created) {
      for (const node of nodes) expect([c.recordId, (await call(node, "/v1/verifications", null, { originalDocHash: c.hash })).body.verdict]).toEqual([c.recordId, "verified_org"]);
    }
    await Promise.all(nodes.map((n) => n.stop("SIGKILL")));
  },
  90_000,
);
