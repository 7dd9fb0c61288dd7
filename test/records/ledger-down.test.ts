/**
 * Records while the ledger refuses connections (docs/operations.md "When the ledger is
 * unreachable, or the clock steps"), over HTTP
 * against `docverify serve` as a process, anchoring through the real SDK to a local ledger
 * started here whose sockets are closed and opened again: a record created during the outage is
 * abandoned when its validity window closes although the ledger stays down, so a repeat
 * `POST /v1/records` for the hash answers 201 with a new record; once the ledger is back, the
 * first record created anchors without a repeat, the one created just before the return too,
 * and the queue drains.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { openCore, type Core } from "../../src/app/core.ts";
import { mirrorFormTransactionId } from "../../src/anchoring/ledger.ts";
import { startLocalLedger, type LocalLedger } from "../../src/local-ledger/index.ts";
import { parseConfig } from "../../src/config/index.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { waitFor } from "../support/wait.ts";
import { createRecordOnceTopicExists } from "../support/topic.ts";
import { docHashOf } from "../support/records-fixture.ts";
import { cleanup, onCleanup, startService, tempDir, type ServiceProcess } from "../support/env.ts";

afterAll(async () => {
  admin?.close();
  await cleanup();
});

/** Shortest window the settings allow: a never-sent record is abandoned 5 s after its creation. */
const VALID_SECONDS = 15;

let ledger: LocalLedger;
let svc: ServiceProcess;
let admin: Core;
let key: string;

type Json = Record<string, any>;
async function post(path: string, body: unknown, bearer?: string): Promise<{ status: number; body: Json; headers: Headers }> {
  const res = await fetch(svc.url + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...(bearer !== undefined ? { authorization: `Bearer ${bearer}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Json, headers: res.headers };
}
const create = (hash: string) => post("/v1/records", { originalDocHash: hash }, key);
const verdictOf = async (hash: string) => (await post("/v1/verifications", { originalDocHash: hash })).body;
const queueRow = (transactionId: string) =>
  admin.db.$client.query("SELECT state, attempts, last_error AS lastError FROM ledger_transactions WHERE transaction_id = ?").get(transactionId) as {
    state: string;
    attempts: number;
    lastError: string | null;
  };
const anchorState = (recordId: string) => (admin.db.$client.query("SELECT anchor_state AS s FROM records WHERE id = ?").get(recordId) as { s: string }).s;

beforeAll(async () => {
  ledger = await startLocalLedger({ dataDir: join(tempDir(), "ledger"), consensusMs: 300 });
  onCleanup(() => ledger.close());
  const data = tempDir();
  const keyFile = join(tempDir(), "operator.key");
  writeFileSync(keyFile, ledger.operator.privateKeyDer);
  svc = await startService({
    env: {
      DOCVERIFY_DATA_DIR: data,
      DOCVERIFY_LOCAL_LEDGER_URL: ledger.mirrorUrl,
      DOCVERIFY_LEDGER_OPERATOR_KEY_FILE: keyFile,
      DOCVERIFY_ANCHOR_VALID_SECONDS: String(VALID_SECONDS),
      DOCVERIFY_RATE_LIMIT_ANONYMOUS: "100000",
      DOCVERIFY_RATE_LIMIT_KEY: "100000",
      DOCVERIFY_RATE_LIMIT_ORG: "100000",
    },
  });
  admin = openCore({ config: parseConfig({ DOCVERIFY_DATA_DIR: data }), log: memoryLogger() });
  const org = await admin.organisations.create({ name: "Ledger Outage Ltd", apiAccess: true, addon: true, validated: true }, "test");
  key = (await admin.apiKeys.mint({ orgId: org.id, environment: "live" }, "test")).key;
  const warmUp = await createRecordOnceTopicExists(() => create(docHashOf("warm-up")));
  // The outage begins with the organisation's key announced and its first record anchored: its
  // record messages are not held back by an announcement still on its way.
  await waitFor("the warm-up record to anchor", () => (anchorState(warmUp.body.recordId) === "anchored" ? true : null), 30_000);
}, 60_000);

test("a record created while the ledger refuses connections is abandoned when its window closes, the ledger still down: the repeat answers 201 with a new record; once the ledger is back the next record anchors without a repeat and the queue drains", async () => {
  await ledger.faults.unreachable(true);
  // Whatever was on its way when the outage began may have left (`unknown`): it waits for the
  // ledger's return. This first record after the outage is that one, or already refused
  // before anything was sent; either way, its submission has come back before the next record.
  const first = await create(docHashOf("first after the outage"));
  expect(first.status).toBe(201);
  await waitFor("the first submission to come back", () => queueRow(first.body.anchor.transactionId).lastError ?? null, 15_000);

  const hash = docHashOf("created while the ledger is down");
  const made = await create(hash);
  expect(made.status).toBe(201);
  const original = made.body.recordId as string;
  const sent = await waitFor("the record's first submission", () => queueRow(made.body.anchor.transactionId).lastError ?? null, 10_000);
  expect(sent).toStartWith("not sent: ");
  expect(queueRow(made.body.anchor.transactionId)).toMatchObject({ state: "pending", attempts: 0 });
  // While its window is open, the record is the organisation's active one for the hash.
  const repeat = await create(hash);
  expect([repeat.status, repeat.body.recordId]).toEqual([200, original]);

  // Its window closes with the ledger still down: abandoned, and no longer counted.
  const anew = await waitFor("a new record for the hash", async () => {
    const r = await create(hash);
    if (r.status === 200) {
      expect(r.body.recordId).toBe(original);
      return null;
    }
    return r;
  }, (VALID_SECONDS + 10) * 1000, 200);
  expect(anew.status).toBe(201);
  expect(anew.body.recordId).not.toBe(original);
  expect(anew.body.anchorState).toBe("pending");
  expect(anchorState(original)).toBe("abandoned");
  expect(queueRow(made.body.anchor.transactionId)).toMatchObject({ state: "abandoned", attempts: 0 });
  expect((await verdictOf(hash)).verdict).toBe("no_record");
  expect((await fetch(`${svc.url}/verify/${original}`)).status).toBe(404);

  // The ledger returns: later records anchor, and the queue drains.
  await ledger.faults.unreachable(false);
  const laterHash = docHashOf("created once the ledger is back");
  const later = await create(laterHash);
  expect(later.status).toBe(201);
  // The first record after the ledger's return anchors, without a repeat.
  await waitFor("the later record to anchor", async () => ((await verdictOf(laterHash)).verdict === "verified_org" ? true : null), 30_000, 200);
  expect(queueRow(later.body.anchor.transactionId)).toMatchObject({ state: "anchored", attempts: 1 });
  // The record created just before the return, its window still open then, anchors too.
  await waitFor("the new record for the hash to anchor", async () => ((await verdictOf(hash)).verdict === "verified_org" ? true : null), 30_000, 200);
  expect((await verdictOf(hash)).matches.map((m: Json) => m.recordId)).toEqual([anew.body.recordId]);
  await waitFor("the queue to drain", () => {
    const n = (admin.db.$client.query("SELECT count(*) AS n FROM ledger_transactions WHERE state IN ('pending','accepted')").get() as { n: number }).n;
    return n === 0 || null;
  }, 30_000, 200);
  // The first record's fate was settled by the receipt or the mirror: it never reached the ledger.
  expect(queueRow(first.body.anchor.transactionId).state).toBe("abandoned");
  // Nothing abandoned ever reached the ledger.
  for (const tx of [first.body.anchor.transactionId, made.body.anchor.transactionId]) {
    expect((await fetch(`${ledger.mirrorUrl}/api/v1/transactions/${mirrorFormTransactionId(tx)}`)).status).toBe(404);
  }
  expect(svc.logLines().some((l) => l.level === "error")).toBe(false);
}, 210_000);
