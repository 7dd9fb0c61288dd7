/**
 * Records end to end against `docverify serve` as a process, with the embedded local ledger and
 * the real anchor loop: organisation and keys from the command line, the topic created by the
 * service, POST /v1/records (201, then 200), anchoring to `anchored`, revocation before and after
 * consensus, by another key of the same organisation and by another organisation, and the page.
 */
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { waitFor } from "../support/wait.ts";
import { createRecordOnceTopicExists } from "../support/topic.ts";
import { BUN, ROOT, cleanup, startService, tempDir } from "../support/env.ts";

afterAll(cleanup);

const HASH = "sha256:" + "5e".repeat(32);
/**
 * The embedded ledger reaches consensus this long after accepting a transaction: far longer than
 * the one request over loopback between a record's 201 and its first revocation (a few
 * milliseconds), so that revocation always meets a record not yet anchored. Each of the topic, the
 * key announcement and the record waits for one consensus in turn.
 */
const CONSENSUS_MS = 1_500;

test(
  "create, anchor, revoke and show a record through the running service",
  async () => {
    const data = tempDir();
    const dv = (...args: string[]) => {
      const p = Bun.spawnSync([BUN, join(ROOT, "src", "main.ts"), ...args, "--data", data, "--json"], { env: { PATH: process.env.PATH, USER: "ops" } });
      if (p.exitCode !== 0) throw new Error(p.stderr.toString());
      return JSON.parse(p.stdout.toString()) as Record<string, string>;
    };
    const org = dv("org", "create", "--name", "Acme <Records>", "--api-access", "--addon", "--validated").id!;
    const writer = dv("key", "mint", "--org", org, "--env", "live").key!;
    const revoker = dv("key", "mint", "--org", org, "--env", "live", "--revoke").key!;
    const other = dv("org", "create", "--name", "Other", "--api-access", "--addon", "--validated").id!;
    const otherRevoker = dv("key", "mint", "--org", other, "--env", "live", "--revoke").key!;

    const svc = await startService({ env: { DOCVERIFY_DATA_DIR: data, DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: String(CONSENSUS_MS) } });
    const post = (path: string, key: string, body: unknown) =>
      fetch(svc.url + path, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });

    // The service creates the organisation's topic; until then record creation answers 503.
    const res = await createRecordOnceTopicExists(() => post("/v1/records", writer, { originalDocHash: HASH, filename: "Résumé <final>.pdf" }));
    expect(res.status).toBe(201);
    expect(res.headers.get("x-ratelimit-limit")).not.toBeNull();
    const record = (await res.json()) as { recordId: string; anchorState: string; verifyUrl: string; anchor: { topicId: string; transactionId: string; hashscanUrl: string } };
    expect(record.anchor.topicId).toMatch(/^0\.0\.\d+$/);
    expect(record.anchor.transactionId).toMatch(/^0\.0\.\d+@\d+\.\d+$/);
    // no DOCVERIFY_PUBLIC_URL and port 0: the link uses the address the service actually bound
    expect(record.verifyUrl).toBe(`${svc.url}/verify/${record.recordId}`);

    // Before consensus (CONSENSUS_MS away): not revocable yet.
    const early = await post(`/v1/records/${record.recordId}/revoke`, revoker, { reason: "SUPERSEDED" });
    expect([early.status, ((await early.json()) as { error: { code: string } }).error.code]).toEqual([409, "ANCHOR_NOT_FINAL"]);

    // Repeats answer 200 with the same record, and follow its anchor state to `anchored`.
    await waitFor("the record to anchor", async () => {
      const again = await post("/v1/records", writer, { originalDocHash: HASH, filename: "ignored.pdf" });
      expect(again.status).toBe(200);
      const body = (await again.json()) as { recordId: string; anchorState: string; retryAfterSeconds?: number };
      expect(body.recordId).toBe(record.recordId);
      if (body.anchorState !== "anchored") return null;
      expect(body.retryAfterSeconds).toBeUndefined();
      return true;
    }, 30_000, 200);

    const foreign = await post(`/v1/records/${record.recordId}/revoke`, otherRevoker, { reason: "OTHER" });
    expect(foreign.status).toBe(403);
    expect(((await foreign.json()) as { error: { code: string } }).error.code).toBe("NOT_REVOCABLE");
    // The writer key lacks records:revoke: access refuses before the record is looked at.
    const noScope = await post(`/v1/records/${record.recordId}/revoke`, writer, { reason: "OTHER" });
    expect(noScope.status).toBe(403);
    expect(((await noScope.json()) as { error: { code: string } }).error.code).toBe("SCOPE_REQUIRED");
    // Created by one key, revoked by another key of the same organisation.
    const ok = await post(`/v1/records/${record.recordId}/revoke`, revoker, { reason: "SUPERSEDED" });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ recordId: record.recordId });
    const twice = await post(`/v1/records/${record.recordId}/revoke`, revoker, { reason: "SUPERSEDED" });
    expect(twice.status).toBe(409);
    expect(((await twice.json()) as { error: { code: string } }).error.code).toBe("ALREADY_REVOKED");

    const page = await fetch(record.verifyUrl);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("<bdi>Résumé &lt;final&gt;.pdf</bdi>");
    expect(html).toContain("Acme &lt;Records&gt;");
    expect(html).toContain("<strong>Revoked</strong>");
    expect(html).toContain("Anchored:");
    expect(html).toContain("/api/v1/topics/");
    // The links the service hands out answer on the local ledger: the hashscan link names the
    // transaction in the mirror form (0.0.2-s-nnnnnnnnn), the page's mirror-node link the message.
    const [account, start] = record.anchor.transactionId.split("@") as [string, string];
    const [s, n] = start.split(".") as [string, string];
    expect(record.anchor.hashscanUrl).toEndWith(`/transaction/${account}-${s}-${n.padStart(9, "0")}`);
    expect((await fetch(record.anchor.hashscanUrl)).status).toBe(200);
    const mirrorNodeUrl = /href="([^"]*\/api\/v1\/topics\/[^"]*)"/.exec(html)?.[1];
    expect(mirrorNodeUrl).toBeDefined();
    const message = await fetch(mirrorNodeUrl!.replaceAll("&amp;", "&"));
    expect([message.status, ((await message.json()) as { topic_id: string }).topic_id]).toEqual([200, record.anchor.topicId]);

    expect(await svc.stop()).toBe(0);
  },
  120_000,
);
