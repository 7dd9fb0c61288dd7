/**
 * The app while its ledger is still starting (serve listens first, docs/anchoring.md
 * "Start-up"): readiness says so, creation and revocation answer 503 with Retry-After 1,
 * verification keeps working with links from the settings, the backlog gauge reads zero. A
 * local ledger "started elsewhere" whose mirror does not answer until the test lets it holds
 * the start-up open for as long as the test needs; its answer, a 500, is no ledger yet, so
 * anchoring starts without it.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createApp } from "../src/app/sqlite.ts";
import { linksFromSettings } from "../src/anchoring/links.ts";
import { memoryLogger } from "../src/lib/log.ts";
import { giveTopics } from "./support/access-matrix.ts";
import { cleanup, onCleanup, tempDir, testConfig } from "./support/env.ts";
import { parseExposition, sampleValue } from "./support/prometheus.ts";
import { createRecordsFixture, docHashOf } from "./support/records-fixture.ts";

afterAll(cleanup);

type Json = Record<string, any>;

describe("while the ledger starts", () => {
  test("ready only once it has started; records wait with 503; verification answers; a mirror answering 500 is found later", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const mirror = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: async () => (await gate, new Response("not today", { status: 500 })) });
    onCleanup(() => mirror.stop(true));
    const mirrorUrl = `http://127.0.0.1:${mirror.port}`;
    const data = tempDir();
    mkdirSync(join(data, "ledger"), { recursive: true });
    writeFileSync(join(data, "ledger", "operator.key"), "302e020100300506032b657004220420" + "11".repeat(32));
    const app = await createApp({ config: testConfig({ DOCVERIFY_DATA_DIR: data, DOCVERIFY_LOCAL_LEDGER_URL: mirrorUrl }), log: memoryLogger() });
    let closed = false;
    onCleanup(() => (closed ? undefined : app.close()));
    const send = async (path: string, init: RequestInit = {}) => {
      const res = await app.http.handle(new Request(`http://localhost${path}`, init), "127.0.0.1");
      return { status: res.status, headers: res.headers, text: await res.text() };
    };
    const post = (path: string, body: unknown, key?: string) =>
      send(path, { method: "POST", headers: { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) }, body: JSON.stringify(body) });

    const fx = createRecordsFixture({ db: app.db, signer: app.signer });
    const org = await fx.createOrg("Acme Records Ltd", { apiAccess: true, addon: true, validated: true });
    giveTopics(app);
    const key = (await app.apiKeys.mint({ orgId: org.id, environment: "live", revoke: true }, "test")).key;
    const signedHash = docHashOf("anchored before this start");
    const recordId = fx.addOrgRecord(org, { docHash: signedHash });

    expect((await send("/healthz")).status).toBe(200);
    const ready = await send("/readyz");
    expect(ready.status).toBe(503);
    expect((JSON.parse(ready.text) as Json).checks).toEqual({ storage: "ok", ledger: "ledger starting" });
    expect(() => app.anchoring).toThrow("starting");

    const created = await post("/v1/records", { originalDocHash: docHashOf("a new document") }, key);
    expect([created.status, (JSON.parse(created.text) as Json).error.code, created.headers.get("retry-after")]).toEqual([503, "SERVICE_UNAVAILABLE", "1"]);
    const revoked = await post(`/v1/records/${recordId}/revoke`, { reason: "SUPERSEDED" }, key);
    expect([revoked.status, (JSON.parse(revoked.text) as Json).error.code, revoked.headers.get("retry-after")]).toEqual([503, "SERVICE_UNAVAILABLE", "1"]);
    expect(app.db.$client.query("SELECT count(*) AS n FROM records").get()).toEqual({ n: 1 });
    expect(app.db.$client.query("SELECT count(*) AS n FROM ledger_transactions").get()).toEqual({ n: 0 });

    const verified = await post("/v1/verifications", { originalDocHash: signedHash });
    expect(verified.status).toBe(200);
    const match = (JSON.parse(verified.text) as Json).matches[0];
    expect(match.recordId).toBe(recordId);
    expect(match.anchor.mirrorNodeUrl).toBe(`${mirrorUrl}/api/v1/topics/${match.anchor.topicId}/messages/${match.anchor.sequenceNumber}`);

    const metrics = parseExposition((await send("/metrics")).text);
    expect(sampleValue(metrics, "docverify_anchor_backlog", { state: "pending" })).toBe(0);
    expect(sampleValue(metrics, "docverify_anchor_backlog", { state: "accepted" })).toBe(0);

    // The mirror answers 500: not a ledger that answers, so anchoring starts without it and finds
    // it when it answers (docs/anchoring.md, "Start-up"): readiness says why, and a record is
    // taken as pending, as while a ledger is down.
    release();
    await app.anchoringStarted;
    const waiting = await send("/readyz");
    expect(waiting.status).toBe(503);
    // The reason is public; its detail (a URL, a port) is in the log only.
    expect((JSON.parse(waiting.text) as Json).checks.ledger).toBe("ledger unreachable");
    const later = await post("/v1/records", { originalDocHash: docHashOf("another") }, key);
    expect([later.status, (JSON.parse(later.text) as Json).anchorState]).toEqual([201, "pending"]);
    closed = true;
    await app.close();
  }, 30_000);

  test("links before the ledger is up: from the settings, the embedded ledger's remembered address, or none on its first start", () => {
    expect(linksFromSettings(testConfig({ DOCVERIFY_LEDGER_NETWORK: "testnet", DOCVERIFY_LEDGER_OPERATOR_ID: "0.0.1234", DOCVERIFY_LEDGER_OPERATOR_KEY_FILE: "/nonexistent" }))!.topicMessageUrl("0.0.5", 7)).toBe(
      "https://testnet.mirrornode.hedera.com/api/v1/topics/0.0.5/messages/7",
    );
    expect(linksFromSettings(testConfig({ DOCVERIFY_LOCAL_LEDGER_URL: "http://127.0.0.1:5551/" }))!.topicMessageUrl("0.0.5", 7)).toBe("http://127.0.0.1:5551/api/v1/topics/0.0.5/messages/7");
    const data = tempDir();
    expect(linksFromSettings(testConfig({ DOCVERIFY_DATA_DIR: data }))).toBeNull();
    mkdirSync(join(data, "ledger"), { recursive: true });
    writeFileSync(join(data, "ledger", "ports.json"), JSON.stringify({ host: "127.0.0.1", grpcPort: 5600, mirrorPort: 5601 }));
    expect(linksFromSettings(testConfig({ DOCVERIFY_DATA_DIR: data }))!.topicMessageUrl("0.0.5", 7)).toBe("http://127.0.0.1:5601/api/v1/topics/0.0.5/messages/7");
  });
});
