/**
 * The ledger as processes see it: `docverify local-ledger` and `docverify status` as commands,
 * `serve` with its embedded ledger end to end (readiness, a topic for an organisation whose
 * add-on another process switched on, stable ledger addresses across a restart), `serve`
 * killed with SIGKILL while a message awaits consensus on an external local ledger, and `serve`
 * pointed at a `local-ledger` of another process and folder with nothing but its URL (the
 * development key), or at one created with a key of its own.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { openCore } from "../../src/app/core.ts";
import { insertPendingMessage } from "../../src/anchoring/queue.ts";
import { DEVELOPMENT_OPERATOR_KEY, startLocalLedger } from "../../src/local-ledger/index.ts";
import { parseConfig } from "../../src/config/index.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { BUN, ROOT, cleanup, onCleanup, startService, tempDir } from "../support/env.ts";
import { createRecordsFixture } from "../support/records-fixture.ts";
import { createRecordOnceTopicExists } from "../support/topic.ts";
import { waitFor } from "../support/wait.ts";

afterEach(cleanup);

const MAIN = join(ROOT, "src", "main.ts");
const baseEnv = () => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", USER: "tester" });

function cli(args: string[], env: Record<string, string> = {}) {
  const p = Bun.spawnSync([BUN, MAIN, ...args], { env: { ...baseEnv(), ...env } });
  return { code: p.exitCode, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
}

function startLocalLedgerProcess(data: string, extra: string[] = []) {
  const proc = Bun.spawn([BUN, MAIN, "local-ledger", "--data", data, "--consensus-ms", "100", "--json", ...extra], { env: baseEnv(), stdout: "pipe", stderr: "pipe" });
  onCleanup(() => {
    proc.kill("SIGKILL");
    return proc.exited;
  });
  const reader = proc.stdout.getReader();
  const first = (async () => {
    let text = "";
    while (!text.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`local-ledger exited: ${await new Response(proc.stderr).text()}`);
      text += new TextDecoder().decode(value);
    }
    return JSON.parse(text.split("\n")[0]!) as { grpcAddress: string; mirrorUrl: string; operatorAccountId: string; operatorKeyFile: string; developmentKey: boolean };
  })();
  return { proc, first };
}

describe("docverify local-ledger and status", () => {
  test("local-ledger prints its addresses and runs until SIGTERM; status reports it reachable, then not", async () => {
    const data = tempDir();
    expect(cli(["status", "--data", data]).code).toBe(1); // no data folder yet
    expect(cli(["org", "create", "--name", "Acme", "--data", data]).code).toBe(0);

    const { proc, first } = startLocalLedgerProcess(data);
    const info = await first;
    expect(info.grpcAddress).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(info.mirrorUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(info.operatorAccountId).toBe("0.0.2");
    expect(info.operatorKeyFile).toBe(join(data, "ledger", "operator.key"));
    expect((await fetch(`${info.mirrorUrl}/api/v1/network/nodes`)).status).toBe(200);

    // The embedded-ledger view of the folder: the remembered address answers.
    const up = cli(["status", "--json", "--data", data], { DOCVERIFY_NODE_NAME: "dv-node-7" });
    expect(up.code).toBe(0);
    const status = JSON.parse(up.stdout);
    expect(status.node).toBe("dv-node-7");
    expect(status.ledger).toMatchObject({ network: "local", mode: "embedded", mirrorUrl: info.mirrorUrl, grpcAddress: info.grpcAddress, reachable: true });
    expect(status.records).toEqual({ pending: 0, accepted: 0, anchored: 0, abandoned: 0 });
    expect(status.queue).toMatchObject({ pending: 0, accepted: 0, oldestUnfinished: null, lastError: null, organisationsAwaitingTopic: 0 });
    // Pointed at the ledger by URL.
    const byUrl = JSON.parse(cli(["status", "--json", "--data", data], { DOCVERIFY_LOCAL_LEDGER_URL: info.mirrorUrl }).stdout);
    expect(byUrl.ledger).toMatchObject({ mode: "external", reachable: true });
    const text = cli(["status", "--data", data]).stdout;
    expect(text).toContain("reachable: the local ledger answers");

    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    const down = JSON.parse(cli(["status", "--json", "--data", data]).stdout);
    expect(down.ledger.reachable).toBe(false);

    // Restarted without port flags: the same addresses.
    const again = startLocalLedgerProcess(data);
    expect((await again.first).mirrorUrl).toBe(info.mirrorUrl);
    again.proc.kill("SIGINT");
    expect(await again.proc.exited).toBe(0);
  }, 30_000);

  test("usage errors exit 2", () => {
    expect(cli(["local-ledger", "--grpc-port", "x"]).code).toBe(2);
    expect(cli(["local-ledger", "--bogus"]).code).toBe(2);
    expect(cli(["status", "extra"]).code).toBe(2);
  });
});

describe("serve with the embedded local ledger", () => {
  test("ready with the ledger; topic created once another process switches the add-on on; same ledger address after a restart", async () => {
    const data = tempDir();
    const env = { DOCVERIFY_DATA_DIR: data, DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: "100" };
    const svc = await startService({ env });
    const started = svc.logLines().find((l) => l.msg === "docverify started")!;
    expect(started.ledgerNetwork).toBe("local");
    expect(String(started.notice)).toContain("nothing is public");
    const mirrorUrl = String(svc.logLines().find((l) => l.msg === "ledger ready")!.ledgerMirrorUrl);
    expect(mirrorUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const ready = await fetch(`${svc.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { checks: Record<string, string> }).checks).toEqual({ storage: "ok", ledger: "ok" });

    const orgId = cli(["org", "create", "--name", "Acme", "--data", data]).stdout.trim();
    expect(cli(["org", "set", orgId, "--addon", "on", "--data", data]).code).toBe(0);
    const topicId = await waitFor("the organisation's topic", () => {
      const orgs = JSON.parse(cli(["org", "list", "--json", "--data", data]).stdout) as { id: string; topicId: string | null }[];
      return orgs.find((o) => o.id === orgId)?.topicId ?? null;
    }, 10_000);
    expect(topicId).toMatch(/^0\.0\.\d+$/);
    const topic = (await (await fetch(`${mirrorUrl}/api/v1/topics/${topicId}`)).json()) as { submit_key: { _type: string } };
    expect(topic.submit_key._type).toBe("ED25519");
    // The loop writes the row before it logs the line, and the line reaches stdout in a batch: wait for it.
    await waitFor("the topic's anchored log line", () => svc.logLines().some((l) => l.msg === "anchor" && l.event === "anchored" && l.kind === "topic_create") || null);
    // Then the organisation's key announcement, queued with the topic, is the topic's first message.
    await waitFor("the key announcement's anchored log line", () => svc.logLines().some((l) => l.msg === "anchor" && l.event === "anchored" && l.kind === "key_announcement") || null);

    const status = JSON.parse(cli(["status", "--json", "--data", data]).stdout);
    expect(status.ledger).toMatchObject({ mode: "embedded", reachable: true, mirrorUrl });
    expect(status.queue).toMatchObject({ anchored: 2, pending: 0, accepted: 0 });

    expect(await svc.stop()).toBe(0);
    const svc2 = await startService({ env });
    expect(svc2.logLines().find((l) => l.msg === "ledger ready")!.ledgerMirrorUrl).toBe(mirrorUrl);
    expect((await fetch(`${mirrorUrl}/api/v1/topics/${topicId}`)).status).toBe(200);
    expect(await svc2.stop()).toBe(0);
  }, 60_000);
});

describe("serve killed with SIGKILL while a message awaits consensus", () => {
  test("the restarted service reconciles it: exactly one message on the ledger for the record", async () => {
    const data = tempDir();
    // The ledger runs in this process (so consensus can be held), in the folder where serve
    // looks for the operator key by default.
    const ledger = await startLocalLedger({ dataDir: join(data, "ledger"), consensusMs: 100 });
    onCleanup(() => ledger.close());
    const env = { DOCVERIFY_DATA_DIR: data, DOCVERIFY_LOCAL_LEDGER_URL: ledger.mirrorUrl };
    const orgId = cli(["org", "create", "--name", "Acme", "--addon", "--data", data]).stdout.trim();
    const svc = await startService({ env });
    const topicId = await waitFor("the topic", () => {
      const orgs = JSON.parse(cli(["org", "list", "--json", "--data", data]).stdout) as { id: string; topicId: string | null }[];
      return orgs.find((o) => o.id === orgId)?.topicId ?? null;
    }, 10_000);

    const core = openCore({ config: parseConfig({ DOCVERIFY_DATA_DIR: data }), log: memoryLogger() });
    onCleanup(() => core.close());
    // The organisation's key announcement goes first (record messages wait for it): let it land.
    await waitFor("the key announcement", () => core.db.$client.query("SELECT 1 FROM ledger_transactions WHERE org_id = ? AND kind = 'key_announcement' AND state = 'anchored'").get(orgId), 10_000);

    ledger.faults.pauseConsensus();
    // A record and its pending message, written by another connection as the records service would.
    const fixture = createRecordsFixture({ db: core.db, signer: core.signer });
    const recordId = Bun.randomUUIDv7();
    const nowMs = Date.now();
    const transactionId = `0.0.2@${Math.floor((nowMs - 1000) / 1000)}.${String(((nowMs - 1000) % 1000) * 1_000_000 + 7).padStart(9, "0")}`;
    const message = new TextEncoder().encode(`{"v":1,"record":"${recordId}"}`);
    core.db.transaction((tx) => {
      fixture.addOrgRecord(fixture.orgOf(orgId), { id: recordId, docHash: `sha256:${"1".repeat(64)}`, anchorState: "pending", topicId, transactionId, signedAtMs: nowMs, createdAt: nowMs });
      insertPendingMessage(tx, { kind: "record_message", transactionId, validStartMs: nowMs - 1000, validSeconds: 120, orgId, recordId, topicId, message, now: nowMs });
    });
    const state = () => (core.db.$client.query("SELECT anchor_state AS s FROM records WHERE id = ?").get(recordId) as { s: string }).s;
    await waitFor("acceptance", () => (state() === "accepted" ? true : null), 10_000);

    svc.proc.kill("SIGKILL");
    await svc.proc.exited;
    ledger.faults.resumeConsensus();

    const svc2 = await startService({ env });
    await waitFor("anchoring after the restart", () => (state() === "anchored" ? true : null), 10_000);
    const msgs = (await (await fetch(`${ledger.mirrorUrl}/api/v1/topics/${topicId}/messages`)).json()) as { messages: { message: string }[] };
    expect(msgs.messages.length).toBe(2); // the key announcement, then the record's, once
    expect(JSON.parse(Buffer.from(msgs.messages[0]!.message, "base64").toString())).toMatchObject({ type: "key", orgId });
    expect(Buffer.from(msgs.messages[1]!.message, "base64").toString()).toBe(new TextDecoder().decode(message));
    const rows = core.db.$client.query("SELECT count(*) AS n FROM ledger_transactions WHERE record_id = ?").get(recordId) as { n: number };
    expect(rows.n).toBe(1);
    expect(await svc2.stop()).toBe(0);
  }, 60_000);
});

describe("serve against a local-ledger started elsewhere", () => {
  /** An organisation with the add-on and API access in `data`, and a live key for it. */
  function orgWithKey(data: string): string {
    const org = cli(["org", "create", "--name", "Acme", "--addon", "--api-access", "--json", "--data", data]);
    expect(org.code, org.stderr).toBe(0);
    const mint = cli(["key", "mint", "--org", (JSON.parse(org.stdout) as { id: string }).id, "--env", "live", "--json", "--data", data]);
    expect(mint.code, mint.stderr).toBe(0);
    return (JSON.parse(mint.stdout) as { key: string }).key;
  }

  test("needs only DOCVERIFY_LOCAL_LEDGER_URL (the development key), from another data folder; a record anchors", async () => {
    const { first } = startLocalLedgerProcess(tempDir("docverify-ledger-"));
    const info = await first;
    expect(info.developmentKey).toBe(true);
    const account = (await (await fetch(`${info.mirrorUrl}/api/v1/accounts/0.0.2`)).json()) as { key: { _type: string; key: string } };
    expect(account.key).toEqual({ _type: "ED25519", key: "0aa8e21064c61eab86e2a9c164565b4e7a9a4146106e0a6cd03a8c395a110e92" });

    // Another data folder, no key file anywhere near it: the URL is the only setting.
    const data = tempDir();
    const key = orgWithKey(data);
    const svc = await startService({ env: { DOCVERIFY_DATA_DIR: data, DOCVERIFY_LOCAL_LEDGER_URL: info.mirrorUrl } });
    const ready = svc.logLines().find((l) => l.msg === "ledger ready")!;
    expect(ready).toMatchObject({ ledgerMirrorUrl: info.mirrorUrl, ledgerOperator: "0.0.2", ledgerOperatorKey: "development key" });

    const created = await createRecordOnceTopicExists(() =>
      fetch(`${svc.url}/v1/records`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ originalDocHash: `sha256:${"ab".repeat(32)}` }),
      }),
    );
    const recordId = ((await created.json()) as { recordId: string }).recordId;
    expect(recordId).toBeString();
    await waitFor("the record anchored", () => {
      const status = JSON.parse(cli(["status", "--json", "--data", data], { DOCVERIFY_LOCAL_LEDGER_URL: info.mirrorUrl }).stdout) as { records: { anchored: number } };
      return status.records.anchored === 1 ? true : null;
    }, 10_000);
    expect(await svc.stop()).toBe(0);
  }, 60_000);

  test("a ledger created with a key of its own: serve says which setting to give, and starts once given it", async () => {
    const ledgerData = tempDir("docverify-ledger-");
    // Another ED25519 key, as hex DER PKCS#8.
    const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as unknown as CryptoKeyPair;
    const ownKey = Buffer.from(await crypto.subtle.exportKey("pkcs8", pair.privateKey)).toString("hex");
    const keyFile = join(tempDir(), "operator.key");
    writeFileSync(keyFile, ownKey + "\n", { mode: 0o600 });
    const ledger = startLocalLedgerProcess(ledgerData, ["--operator-key-file", keyFile]);
    const info = await ledger.first;
    expect(info.developmentKey).toBe(false);

    const data = tempDir();
    const refused = Bun.spawn([BUN, MAIN, "serve"], { env: { ...baseEnv(), DOCVERIFY_DATA_DIR: data, DOCVERIFY_PORT: "0", DOCVERIFY_LOCAL_LEDGER_URL: info.mirrorUrl }, stdout: "pipe", stderr: "pipe" });
    onCleanup(() => refused.kill("SIGKILL"));
    expect(await refused.exited).toBe(1);
    const stderr = await new Response(refused.stderr).text();
    expect(stderr).toContain("DOCVERIFY_LEDGER_OPERATOR_KEY_FILE");
    expect(stderr).toContain("not the development key");

    const svc = await startService({ env: { DOCVERIFY_DATA_DIR: data, DOCVERIFY_LOCAL_LEDGER_URL: info.mirrorUrl, DOCVERIFY_LEDGER_OPERATOR_KEY_FILE: info.operatorKeyFile } });
    expect(svc.logLines().find((l) => l.msg === "ledger ready")!.ledgerOperatorKey).toBe(info.operatorKeyFile);
    expect(await svc.stop()).toBe(0);

    // The ledger keeps the key it was created with: started again with another, it refuses.
    ledger.proc.kill("SIGTERM");
    expect(await ledger.proc.exited).toBe(0);
    const otherKeyFile = join(tempDir(), "development.key");
    writeFileSync(otherKeyFile, DEVELOPMENT_OPERATOR_KEY.privateKeyDer + "\n", { mode: 0o600 });
    const other = cli(["local-ledger", "--data", ledgerData, "--operator-key-file", otherKeyFile, "--json"]);
    expect(other.code).toBe(1);
    expect(other.stderr).toContain("created with another operator key");
  }, 60_000);
});
