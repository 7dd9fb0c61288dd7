/**
 * `docverify serve` started while its separate local ledger does not answer (a power cut, its
 * ledger egress not back yet), as a process: it comes up all the same, answers verification,
 * says on `/readyz` that the ledger is not ready, takes a record as `pending`; and when the
 * ledger answers, it finds it without a restart, the record anchors and `/readyz` is ready.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { openCore, type Core } from "../../src/app/core.ts";
import { parseConfig } from "../../src/config/index.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { startLocalLedger, type LocalLedger } from "../../src/local-ledger/index.ts";
import { cleanup, onCleanup, startService, tempDir } from "../support/env.ts";
import { docHashOf } from "../support/records-fixture.ts";
import { createRecordOnceTopicExists } from "../support/topic.ts";
import { waitFor } from "../support/wait.ts";

afterAll(async () => {
  admin?.close();
  await cleanup();
});

type Json = Record<string, any>;

let ledger: LocalLedger;
let admin: Core;
let key: string;
let env: Record<string, string>;
const warmUpHash = docHashOf("anchored before the power cut");

async function post(url: string, path: string, body: unknown, bearer?: string): Promise<{ status: number; body: Json; headers: Headers }> {
  const res = await fetch(url + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...(bearer !== undefined ? { authorization: `Bearer ${bearer}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Json, headers: res.headers };
}

beforeAll(async () => {
  ledger = await startLocalLedger({ dataDir: join(tempDir(), "ledger"), consensusMs: 300 });
  onCleanup(() => ledger.close());
  const keyFile = join(tempDir(), "operator.key");
  writeFileSync(keyFile, ledger.operator.privateKeyDer);
  const data = tempDir();
  env = { DOCVERIFY_DATA_DIR: data, DOCVERIFY_LOCAL_LEDGER_URL: ledger.mirrorUrl, DOCVERIFY_LEDGER_OPERATOR_KEY_FILE: keyFile };
  // Before the power cut: the organisation has its topic, and a record anchored.
  const before = await startService({ env });
  admin = openCore({ config: parseConfig({ DOCVERIFY_DATA_DIR: data }), log: memoryLogger() });
  const org = await admin.organisations.create({ name: "Power Cut Ltd", apiAccess: true, addon: true, validated: true }, "test");
  key = (await admin.apiKeys.mint({ orgId: org.id, environment: "live" }, "test")).key;
  await createRecordOnceTopicExists(() => post(before.url, "/v1/records", { originalDocHash: warmUpHash }, key));
  await waitFor("the record to anchor", async () => ((await post(before.url, "/v1/verifications", { originalDocHash: warmUpHash })).body.verdict === "verified_org" ? true : null), 30_000);
  expect(await before.stop()).toBe(0);
}, 60_000);

test("serve starts while the ledger does not answer, verifies and takes records; it finds the ledger when it answers, without a restart", async () => {
  await ledger.faults.unreachable(true);
  const svc = await startService({ env });
  expect(svc.logLines().some((l) => l.msg === "ledger unreachable at start; serving, and anchoring once it answers")).toBe(true);

  // Verification is the database's: it answers.
  expect((await post(svc.url, "/v1/verifications", { originalDocHash: warmUpHash })).body.verdict).toBe("verified_org");
  // Readiness says what is missing.
  const notReady = await fetch(`${svc.url}/readyz`);
  expect(notReady.status).toBe(503);
  expect(((await notReady.json()) as Json).checks.ledger).not.toBe("ok");
  // A record is taken as the ledger-down rules say: stored, pending.
  const hash = docHashOf("created during the outage");
  const made = await post(svc.url, "/v1/records", { originalDocHash: hash }, key);
  expect([made.status, made.body.anchorState]).toEqual([201, "pending"]);
  expect((await post(svc.url, "/v1/verifications", { originalDocHash: hash })).body.verdict).toBe("no_record");

  // The ledger answers: found without a restart, the record anchors, readiness passes.
  await ledger.faults.unreachable(false);
  await waitFor("the record to anchor", async () => ((await post(svc.url, "/v1/verifications", { originalDocHash: hash })).body.verdict === "verified_org" ? true : null), 30_000, 200);
  await waitFor("readiness", async () => ((await fetch(`${svc.url}/readyz`)).status === 200 ? true : null), 15_000, 200);
  expect(svc.logLines().some((l) => l.msg === "ledger reached")).toBe(true);
  expect(await svc.stop()).toBe(0);
}, 60_000);
