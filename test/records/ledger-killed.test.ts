/**
 * A separate local ledger whose process dies (`kill -9`) while `serve` anchors through it, over
 * HTTP against `docverify serve` as a process: the first record after the death had its bytes
 * handed to the SDK (the node had answered a moment before) but no connection was ever made, so
 * nothing was sent; the record is abandoned when its window can no longer be met, and a repeat
 * `POST /v1/records` then answers 201 with a new record. When the ledger is started again on
 * its remembered ports, the first record created anchors without a repeat.
 */
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { openCore, type Core } from "../../src/app/core.ts";
import { parseConfig } from "../../src/config/index.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { waitFor } from "../support/wait.ts";
import { createRecordOnceTopicExists } from "../support/topic.ts";
import { docHashOf } from "../support/records-fixture.ts";
import { BUN, ROOT, cleanup, onCleanup, startService, tempDir } from "../support/env.ts";

let admin: Core | undefined;
afterAll(async () => {
  admin?.close();
  await cleanup();
});

/** The shortest window the settings allow: a record nothing of which was sent is abandoned 5 s after its creation. */
const VALID_SECONDS = 15;
/** The nodes refuse a transaction with less than this left of its window. */
const SUBMIT_MARGIN_MS = 10_000;

/** `docverify local-ledger` as a process of its own, in `dir`; resolves once it prints its addresses. */
async function startLedgerProcess(dir: string): Promise<{ proc: ReturnType<typeof Bun.spawn>; mirrorUrl: string }> {
  const proc = Bun.spawn([BUN, join(ROOT, "src", "main.ts"), "local-ledger", "--json", "--data", dir, "--consensus-ms", "300"], { stdout: "pipe", stderr: "pipe" });
  onCleanup(() => proc.kill("SIGKILL"));
  const reader = proc.stdout.getReader();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`local-ledger exited before printing its addresses: ${text}`);
    text += new TextDecoder().decode(value);
    try {
      return { proc, mirrorUrl: (JSON.parse(text) as { mirrorUrl: string }).mirrorUrl };
    } catch {
      /* not all of it yet */
    }
  }
}

test("the ledger's process is killed: the next record is abandoned when its window can no longer be met, and a repeat creates a new one; the ledger started again, the first record after anchors without a repeat", async () => {
  const ledgerDir = tempDir();
  const first = await startLedgerProcess(ledgerDir);
  const data = tempDir();
  const svc = await startService({
    env: {
      DOCVERIFY_DATA_DIR: data,
      DOCVERIFY_LOCAL_LEDGER_URL: first.mirrorUrl,
      DOCVERIFY_ANCHOR_VALID_SECONDS: String(VALID_SECONDS),
      DOCVERIFY_RATE_LIMIT_KEY: "100000",
      DOCVERIFY_RATE_LIMIT_ORG: "100000",
    },
  });
  admin = openCore({ config: parseConfig({ DOCVERIFY_DATA_DIR: data }), log: memoryLogger() });
  const org = await admin.organisations.create({ name: "Killed Ledger Ltd", apiAccess: true, addon: true, validated: true }, "test");
  const key = (await admin.apiKeys.mint({ orgId: org.id, environment: "live" }, "test")).key;
  const create = async (hash: string) => {
    const res = await fetch(`${svc.url}/v1/records`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ originalDocHash: hash }),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> };
  };
  const queueRow = (transactionId: string) =>
    admin!.db.$client.query("SELECT state, attempts, last_error AS lastError FROM ledger_transactions WHERE transaction_id = ?").get(transactionId) as {
      state: string;
      attempts: number;
      lastError: string | null;
    };
  const verdictOf = async (hash: string) =>
    ((await (await fetch(`${svc.url}/v1/verifications`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ originalDocHash: hash }) })).json()) as { verdict: string }).verdict;

  // A record anchors: the node has just answered when its process dies.
  const warmUp = await createRecordOnceTopicExists(() => create(docHashOf("before the ledger dies")));
  await waitFor("the first record to anchor", async () => ((await verdictOf(docHashOf("before the ledger dies"))) === "verified_org" ? true : null), 30_000, 100);
  expect(warmUp.status).toBe(201);
  first.proc.kill("SIGKILL");
  await first.proc.exited;

  const hash = docHashOf("created once the ledger is dead");
  // Its validity window starts at its creation, no earlier than this.
  const createdAt = Date.now();
  const made = await create(hash);
  expect(made.status).toBe(201);
  const transactionId = made.body.anchor.transactionId as string;
  await waitFor("the record's first submission to come back", () => queueRow(transactionId).lastError ?? null, 10_000);
  // Nothing left this machine: the attempt is not counted.
  expect(queueRow(transactionId)).toMatchObject({ state: "pending", attempts: 0 });
  expect(queueRow(transactionId).lastError).toStartWith("not sent: ");
  const repeat = await create(hash);
  expect([repeat.status, repeat.body.recordId]).toEqual([200, made.body.recordId]);

  // Abandoned when its window can no longer be met, within a few seconds: the repeat then creates.
  const cutoff = createdAt + VALID_SECONDS * 1000 - SUBMIT_MARGIN_MS;
  const anew = await waitFor("a repeat to create a new record", async () => {
    const r = await create(hash);
    if (r.status === 200) return null;
    return r;
  }, VALID_SECONDS * 1000, 100);
  const judgedAfterMs = Date.now() - cutoff;
  expect(anew.status).toBe(201);
  expect(anew.body.recordId).not.toBe(made.body.recordId);
  expect(judgedAfterMs).toBeLessThan(3_000);
  expect(queueRow(transactionId)).toMatchObject({ state: "abandoned", attempts: 0 });

  // The ledger's process is started again on its remembered ports: no restart of serve, and the
  // first record created after it anchors without a repeat.
  await startLedgerProcess(ledgerDir);
  const laterHash = docHashOf("created once the ledger is back");
  const later = await create(laterHash);
  expect(later.status).toBe(201);
  await waitFor("the record created after the ledger's return to anchor", async () => ((await verdictOf(laterHash)) === "verified_org" ? true : null), 30_000, 200);
  expect(queueRow(later.body.anchor.transactionId)).toMatchObject({ state: "anchored" });
  expect(svc.logLines().some((l) => l.level === "error")).toBe(false);
}, 120_000);
