/**
 * `docverify seal rotate-key` against a running `docverify serve` on the same data folder (the
 * local ledger): the service seals its next record with the new seal key without a restart, and
 * anchors it after the organisation's key is announced again with the new seal key; and the
 * command's refusals, which change nothing.
 */
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { decodeLedgerMessage } from "../../src/records/messages.ts";
import { BUN, ROOT, cleanup, tempDir } from "../support/env.ts";
import { docHashOf } from "../support/records-fixture.ts";
import { startServiceWithOrg } from "../support/service-with-org.ts";
import { createRecordOnceTopicExists } from "../support/topic.ts";
import { waitFor } from "../support/wait.ts";

afterAll(cleanup);

async function cli(args: string[], data: string) {
  const p = Bun.spawn([BUN, join(ROOT, "src", "main.ts"), ...args, "--data", data], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", DOCVERIFY_DATA_DIR: data },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}

test("a serve running during seal rotate-key seals its next record with the new key and anchors it after the new announcement", async () => {
  const { svc, admin, key } = await startServiceWithOrg();
  const data = admin.config.dataDir;
  const db = admin.db.$client;
  const post = (hash: string) =>
    fetch(`${svc.url}/v1/records`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ originalDocHash: hash }) });
  const first = (await (await createRecordOnceTopicExists(() => post(docHashOf("before")))).json()) as { recordId: string };
  const anchored = (id: string) => (db.query("SELECT anchor_state FROM records WHERE id = ?").get(id) as { anchor_state: string }).anchor_state === "anchored" || undefined;
  await waitFor("the first record anchored", () => anchored(first.recordId), 30_000);
  const sealOf = (id: string) => Buffer.from((db.query("SELECT seal_fingerprint FROM records WHERE id = ?").get(id) as { seal_fingerprint: Uint8Array }).seal_fingerprint).toString("hex");
  const oldSeal = sealOf(first.recordId);

  const rotated = await cli(["seal", "rotate-key", "--json"], data);
  expect({ code: rotated.code, stderr: rotated.stderr }).toEqual({ code: 0, stderr: "" });
  const r = JSON.parse(rotated.stdout) as { keyFingerprint: string; replaces: string; organisations: number };
  expect(r).toMatchObject({ replaces: oldSeal, organisations: 1 });

  const second = await post(docHashOf("after"));
  expect(second.status).toBe(201);
  const { recordId } = (await second.json()) as { recordId: string };
  expect(sealOf(recordId)).toBe(r.keyFingerprint);
  await waitFor("the record sealed with the new key anchored", () => anchored(recordId), 30_000);
  // On the topic: the announcement naming the new seal key, then the record.
  const rows = db
    .query("SELECT kind, message, sequence_number AS seq, record_id FROM ledger_transactions WHERE state = 'anchored' AND kind IN ('key_announcement', 'record_message') ORDER BY sequence_number")
    .all() as { kind: string; message: Uint8Array; seq: number; record_id: string | null }[];
  const announcement = rows.find((x) => x.kind === "key_announcement" && (decodeLedgerMessage(x.message) as { sealKeyFingerprint?: string }).sealKeyFingerprint === r.keyFingerprint);
  expect(announcement).toBeDefined();
  expect(announcement!.seq).toBeLessThan(rows.find((x) => x.record_id === recordId)!.seq);
  expect(announcement!.seq).toBeGreaterThan(rows.find((x) => x.record_id === first.recordId)!.seq);
}, 120_000);

test("refused, exit 1, nothing changed: an installation without a seal key yet; a subcommand it does not know: exit 2", async () => {
  const data = join(tempDir(), "data");
  // The data folder is created by an administrative command (as org create would); no record, so no seal key.
  expect((await cli(["org", "create", "--name", "Acme"], data)).code).toBe(0);
  const refused = await cli(["seal", "rotate-key"], data);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain("no seal key yet");
  expect(refused.stdout).toBe("");
  const usage = await cli(["seal", "spin"], data);
  expect(usage.code).toBe(2);
  expect(usage.stderr).toContain('unknown seal subcommand "spin"');
});
