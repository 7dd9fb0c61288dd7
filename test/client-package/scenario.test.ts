/**
 * @docverify/client against a live `docverify serve`: the whole life of a record through the
 * package's methods, and the refusals a caller branches on (typed codes, never retried).
 */
import { afterAll, expect, test } from "bun:test";
import { DocverifyError, createClient, type ResponseInfo, type RetryInfo, type VerificationSummary } from "../../packages/client/src/index.ts";
import { cleanup } from "../support/env.ts";
import { startServiceWithOrg } from "../support/service-with-org.ts";

afterAll(cleanup);

// Consensus in a second rather than the local ledger's default three: waitForVerdict polls less.
const started = startServiceWithOrg({ revoke: true, env: { DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: "1000" } });

test(
  "create, create again, wait for verified_org, page the log, receipts with and without the key, revoke twice",
  async () => {
    const { svc, key } = await started;
    const responses: ResponseInfo[] = [];
    const retries: RetryInfo[] = [];
    // A trailing slash on the URL is tolerated.
    // Every body as it came off the wire, to hold the receipts' text to the bytes served.
    const bodies = new Map<string, string>(); // path → base64 of the body's bytes
    const recording = Object.assign(
      async (input: string | URL | Request, init?: RequestInit) => {
        const res = await fetch(input, init);
        bodies.set(new URL(String(input)).pathname, Buffer.from(await res.clone().arrayBuffer()).toString("base64"));
        return res;
      },
      { preconnect: fetch.preconnect },
    );
    const client = createClient({ url: svc.url + "/", apiKey: key, fetch: recording, onResponse: (r) => responses.push(r), retry: { onRetry: (r) => retries.push(r) } });
    const hash = "sha256:" + "d4".repeat(32);

    // The organisation's topic may still be on its way: the client retries the 503 on its own.
    const first = await client.createRecord({ originalDocHash: hash, filename: "contract.pdf" });
    expect(first.created).toBe(true);
    expect(first.record.originalDocHash).toBe(hash);
    expect(["pending", "accepted", "anchored"]).toContain(first.record.anchorState);
    for (const r of retries) expect(r.status).toBe(503);

    const again = await client.createRecord({ originalDocHash: hash });
    expect(again.created).toBe(false);
    expect(again.record.recordId).toBe(first.record.recordId);
    const created = responses.filter((r) => r.method === "POST" && r.path === "/v1/records");
    expect(created.at(-2)?.status).toBe(201);
    expect(created.at(-1)?.status).toBe(200);
    expect(created.at(-1)?.rateLimitLimit).toBeNumber();
    expect(created.at(-1)?.requestId).toBeString();

    const verified = await client.waitForVerdict(hash, { reference: "wait", timeoutMs: 60_000 });
    expect(verified).toMatchObject({ verdict: "verified_org", disclosureTier: "organisation", originalDocHash: hash, reference: "wait" });
    expect(verified.matches[0]?.anchor.sequenceNumber).toBeNumber();

    // More rows than a page holds: the iterator follows nextCursor to the end.
    for (const reference of ["a", "b", "c", "d", "e"]) await client.verify(hash, { reference });
    const before = responses.length;
    const rows: VerificationSummary[] = [];
    for await (const row of client.verifications({ limit: 2, originalDocHash: hash })) rows.push(row);
    const pages = responses.slice(before).filter((r) => r.path === "/v1/verifications" && r.method === "GET");
    expect(rows.length).toBeGreaterThanOrEqual(6);
    expect(pages.length).toBe(Math.ceil(rows.length / 2));
    expect(new Set(rows.map((r) => r.verificationId)).size).toBe(rows.length);
    expect(rows.map((r) => r.reference)).toEqual(expect.arrayContaining(["a", "b", "c", "d", "e", "wait"]));
    const firstPage = await client.listVerifications({ limit: 2, originalDocHash: hash });
    expect(firstPage.data).toEqual(rows.slice(0, 2));
    expect(firstPage.pagination.hasMore).toBe(true);
    const second = await client.listVerifications({ limit: 2, originalDocHash: hash, cursor: firstPage.pagination.nextCursor! });
    expect(second.data).toEqual(rows.slice(2, 4));
    const one = await client.getVerification(rows[0]!.verificationId);
    // The service answers the whole Verification; every field of the log row is in it.
    expect(one).toMatchObject(rows[0]!);

    // The receipt's text is the exact bytes served (what a verifier checks), with and without the key.
    const withKey = await client.receipt(first.record.recordId);
    expect(Buffer.from(withKey.text).toString("base64")).toBe(bodies.get(`/v1/records/${first.record.recordId}/receipt`)!);
    expect(withKey.receipt).toMatchObject({ v: 1, recordId: first.record.recordId, originalDocHash: hash });
    expect(withKey.receipt.anchor.sequenceNumber).toBe(verified.matches[0]!.anchor.sequenceNumber);
    const publicReceipt = await client.receipt(first.record.recordId, { public: true });
    expect(Buffer.from(publicReceipt.text).toString("base64")).toBe(bodies.get(`/verify/${first.record.recordId}/receipt`)!);
    expect(publicReceipt.receipt).toMatchObject({ v: 1, recordId: first.record.recordId, originalDocHash: hash });

    const identity = await client.identity();
    expect(identity.v).toBe(1);
    expect(identity.organisations.map((o) => o.topicId)).toContain(first.record.anchor.topicId);

    expect(await client.revokeRecord(first.record.recordId, "SUPERSEDED")).toEqual({ recordId: first.record.recordId });
    const refused = await client.revokeRecord(first.record.recordId, "SUPERSEDED").catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DocverifyError);
    const error = refused as DocverifyError;
    expect(error.code).toBe("ALREADY_REVOKED");
    expect(error.status).toBe(409);
    expect(error.requestId).toBeString();
    expect(error.message).not.toContain(key);

    // A revoked record can never become verified: waitForVerdict answers at once instead of spinning.
    const polls = responses.length;
    expect((await client.waitForVerdict(hash)).verdict).toBe("revoked");
    expect(responses.length).toBe(polls + 1);
  },
  120_000,
);

test("a test key is refused on a record operation with TEST_ENVIRONMENT; a wrong key with UNAUTHENTICATED, once", async () => {
  const { svc, admin, org, key } = await started;
  const testKey = (await admin.apiKeys.mint({ orgId: org.id, environment: "test" }, "test")).key;
  const responses: ResponseInfo[] = [];
  const sandbox = createClient({ url: svc.url, apiKey: testKey, onResponse: (r) => responses.push(r) });
  const refused = (await sandbox.createRecord({ originalDocHash: "sha256:" + "e5".repeat(32) }).catch((e: unknown) => e)) as DocverifyError;
  expect(refused).toBeInstanceOf(DocverifyError);
  expect(refused.code).toBe("TEST_ENVIRONMENT");
  expect(refused.status).toBe(403);
  expect(refused.message).not.toContain(testKey);
  expect(responses.map((r) => r.status)).toEqual([403]);

  // A key of the right shape that the service never issued: refused, and not retried.
  const wrongKey = key.slice(0, -4) + (key.endsWith("AAAA") ? "BBBB" : "AAAA");
  const seen: ResponseInfo[] = [];
  const retried: RetryInfo[] = [];
  const stranger = createClient({ url: svc.url, apiKey: wrongKey, onResponse: (r) => seen.push(r), retry: { onRetry: (r) => retried.push(r) } });
  const unauthenticated = (await stranger.verify("sha256:" + "e5".repeat(32)).catch((e: unknown) => e)) as DocverifyError;
  expect(unauthenticated).toBeInstanceOf(DocverifyError);
  expect(unauthenticated.code).toBe("UNAUTHENTICATED");
  expect(unauthenticated.status).toBe(401);
  expect(seen.length).toBe(1);
  expect(retried).toEqual([]);
  expect(String(unauthenticated)).not.toContain(wrongKey);
  expect(JSON.stringify(unauthenticated)).not.toContain(wrongKey);
});
