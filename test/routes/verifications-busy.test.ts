/**
 * POST /v1/verifications while verification is busy: more signature checks than
 * VERIFY_OFF_THREAD_ABOVE in two seconds, none answered by a memo, so `serve`'s app sends them
 * to the signing workers. Every answer is what a quiet service gives: verified_org for each good
 * record, signature_invalid for the one whose stored signature was changed; and /metrics counts
 * where the checks ran (docverify_signature_verifications_total).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { VERIFY_OFF_THREAD_ABOVE } from "../../src/crypto/index.ts";
import { q } from "../../src/storage/store.ts";
import { testService, type TestService } from "../support/engine.ts";
import { createStoreRecordsFixture, docHashOf, type StoreRecordsFixture } from "../support/records-fixture.ts";
import { cleanup } from "../support/env.ts";

afterAll(cleanup);

const LIMITS = { DOCVERIFY_RATE_LIMIT_ANONYMOUS: "100000" };
/** Records verified once each: two checks apiece, well over the threshold. */
const RECORDS = VERIFY_OFF_THREAD_ABOVE;

let service: TestService;
let fx: StoreRecordsFixture;
const hashes: string[] = [];
let tamperedHash: string;

beforeAll(async () => {
  service = await testService({ env: LIMITS });
  fx = await createStoreRecordsFixture({ store: service.store, signer: service.signer });
  const org = await fx.createOrg("Busy Records Ltd", { apiAccess: true, validated: true });
  for (let i = 0; i < RECORDS; i++) {
    const hash = docHashOf(`busy verification ${i}`);
    await fx.addOrgRecord(org, { docHash: hash });
    hashes.push(hash);
  }
  tamperedHash = docHashOf("busy verification, tampered");
  const id = await fx.addOrgRecord(org, { docHash: tamperedHash });
  await service.store.write(function* (tx, t) {
    const [row] = yield* q(tx.select({ signature: t.records.signature }).from(t.records).where(eq(t.records.id, id)));
    const signature = Buffer.from(row!.signature);
    signature[10]! ^= 0x01;
    yield* q(tx.update(t.records).set({ signature }).where(eq(t.records.id, id)));
  });
}, 120_000);

const verify = async (hash: string) => {
  const res = await service.request("/v1/verifications", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ originalDocHash: hash }) });
  return { status: res.status, body: (await res.json()) as { verdict: string; matches: { checksPerformed: Record<string, string> }[] } };
};

/** docverify_signature_verifications_total by `where`, scraped from /metrics as Prometheus would (from loopback). */
async function signatureVerifications(): Promise<{ thread: number; workers: number }> {
  const text = await (await service.request("/metrics", {}, "127.0.0.1")).text();
  const count = (where: string) => Number(new RegExp(`^docverify_signature_verifications_total\\{where="${where}"\\} (\\d+)$`, "m").exec(text)?.[1] ?? NaN);
  return { thread: count("thread"), workers: count("workers") };
}

test("a burst of first verifications, 16 at a time, then the tampered record: every answer as a quiet service gives it, the checks past the threshold made on the workers", async () => {
  const before = await signatureVerifications();
  expect(before).toEqual({ thread: 0, workers: 0 });
  const answers: Awaited<ReturnType<typeof verify>>[] = [];
  for (let i = 0; i < hashes.length; i += 16) answers.push(...(await Promise.all(hashes.slice(i, i + 16).map(verify))));
  for (const a of answers) {
    expect(a.status).toBe(200);
    expect(a.body.verdict).toBe("verified_org");
    expect(a.body.matches[0]!.checksPerformed).toEqual({ hashBinding: "pass", userSignature: "pass", serverSeal: "pass", anchorStatus: "anchored" });
  }
  const tampered = await verify(tamperedHash);
  expect(tampered.status).toBe(200);
  expect(tampered.body.verdict).toBe("signature_invalid");
  expect(tampered.body.matches[0]!.checksPerformed).toMatchObject({ hashBinding: "fail", userSignature: "fail", serverSeal: "fail" });
  // Two checks per record: the first VERIFY_OFF_THREAD_ABOVE on the API's thread, the rest on the workers.
  const after = await signatureVerifications();
  expect(after.thread + after.workers).toBe(2 * (RECORDS + 1));
  expect(after.thread).toBeGreaterThanOrEqual(VERIFY_OFF_THREAD_ABOVE);
  expect(after.workers).toBeGreaterThan(0);
}, 120_000);
