/**
 * A document's life with docverify, in TypeScript with plain `fetch` (no dependency): create a
 * record of its hash, wait until it verifies as verified_org, find the verification in the log,
 * save the receipt, revoke the record, and see it verify as revoked.
 *
 *   DOCVERIFY_URL=http://127.0.0.1:8080 DOCVERIFY_API_KEY=dv_live_... bun scenario.ts [FILE]
 *   DOCVERIFY_URL=http://127.0.0.1:8080 DOCVERIFY_API_KEY=dv_live_... npx tsx scenario.ts [FILE]
 *
 * Runs on Bun, and on Node.js 20 or later through tsx (Node.js 22.6 and later also run it with
 * --experimental-strip-types: the file uses type annotations only). The key needs records:write
 * and records:revoke (`docverify sandbox` prints one). Without FILE a unique document is made up.
 * Exits 1 on any answer it does not expect.
 */
import { createHash, randomUUID } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { basename } from "node:path";

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed, when it is JSON. */
  json: Record<string, unknown>;
}

class Unexpected extends Error {}

const sleep = (seconds: number) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

/** Retry-After in seconds, or `fallback` when the answer has none. */
function retryAfter(answer: Answer, fallback: number): number {
  const v = Number(answer.headers.get("retry-after"));
  return Number.isInteger(v) && v >= 0 ? v : fallback;
}

/** What an error answer says: HTTP status, code, message. */
function describe(answer: Answer): string {
  const error = (answer.json.error ?? {}) as { code?: string; message?: string };
  return `HTTP ${answer.status} ${error.code ?? ""}: ${error.message ?? answer.text.slice(0, 200)}`;
}

async function main(): Promise<void> {
  const base = (process.env.DOCVERIFY_URL ?? "").replace(/\/+$/, "");
  const key = process.env.DOCVERIFY_API_KEY ?? "";
  if (base === "") throw new Unexpected("set DOCVERIFY_URL, e.g. http://127.0.0.1:8080");
  if (key === "") throw new Unexpected("set DOCVERIFY_API_KEY to a key with records:write and records:revoke");

  /** One request; 429 and 503 are waited out as their Retry-After says (every operation is safe to repeat). */
  async function call(method: string, path: string, body?: unknown): Promise<Answer> {
    for (let attempt = 1; ; attempt++) {
      let res: Response;
      try {
        res = await fetch(base + path, {
          method,
          headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      } catch (e) {
        throw new Unexpected(`${method} ${path}: no answer from ${base} (${e instanceof Error ? e.message : String(e)})`);
      }
      const text = await res.text();
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(text) as Record<string, unknown>;
      } catch {
        /* not JSON: kept as text */
      }
      const answer: Answer = { status: res.status, headers: res.headers, text, json };
      if ((res.status !== 429 && res.status !== 503) || attempt === 8) return answer;
      const wait = retryAfter(answer, 1);
      console.log(`  ${method} ${path}: ${describe(answer)}; retrying in ${wait} s`);
      await sleep(wait);
    }
  }

  // The document: the file given, or a unique one made up.
  const file = process.argv[2];
  const bytes = file !== undefined ? readFileSync(file) : Buffer.from(`docverify example document ${new Date().toISOString()} ${randomUUID()}\n`);
  const name = file !== undefined ? basename(file) : "example.txt";
  const hash = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
  console.log(`document: ${hash} (${name})`);

  // 1. Create the record: 201 for a new one, 200 when the organisation already holds an active record of this hash.
  const created = await call("POST", "/v1/records", { originalDocHash: hash, filename: name });
  if (created.status !== 201 && created.status !== 200) throw new Unexpected(`create: ${describe(created)}`);
  const recordId = String(created.json.recordId);
  console.log(`create: ${created.status} record ${recordId} (anchorState ${String(created.json.anchorState)})`);

  // 2. Verify until verified_org: pending_anchor says when to ask again (retryAfterSeconds); a
  // record not yet accepted by the ledger is not reported at all (no_record) for a moment.
  const deadline = Date.now() + 180_000;
  let verification: Answer;
  for (;;) {
    verification = await call("POST", "/v1/verifications", { originalDocHash: hash, reference: "example scenario" });
    if (verification.status !== 200) throw new Unexpected(`verify: ${describe(verification)}`);
    const verdict = String(verification.json.verdict);
    if (verdict === "verified_org") break;
    if (verdict !== "pending_anchor" && verdict !== "no_record") throw new Unexpected(`verify: verdict ${verdict}, expected verified_org`);
    if (Date.now() > deadline) throw new Unexpected(`verify: still ${verdict} after 180 s`);
    const wait = typeof verification.json.retryAfterSeconds === "number" ? verification.json.retryAfterSeconds : 1;
    console.log(`verify: ${verdict}, asking again in ${wait} s`);
    await sleep(wait);
  }
  const verificationId = String(verification.json.verificationId);
  console.log(`verify: verified_org (verification ${verificationId})`);

  // 3. The verification log: the newest verifications of this hash, one page.
  const log = await call("GET", `/v1/verifications?originalDocHash=${encodeURIComponent(hash)}&limit=100`);
  if (log.status !== 200) throw new Unexpected(`log: ${describe(log)}`);
  const page = log.json.data as { verificationId: string; verdict: string }[];
  if (!page.some((v) => v.verificationId === verificationId)) throw new Unexpected(`log: verification ${verificationId} is not on the first page`);
  console.log(`log: verification ${verificationId} found on the first page`);

  // 4. The receipt, saved as served: it proves the record on the ledger without docverify.
  let receipt = await call("GET", `/v1/records/${recordId}/receipt`);
  for (let i = 0; i < 5 && receipt.status === 409 && (receipt.json.error as { code?: string } | undefined)?.code === "ANCHOR_NOT_FINAL"; i++) {
    await sleep(retryAfter(receipt, 5));
    receipt = await call("GET", `/v1/records/${recordId}/receipt`);
  }
  if (receipt.status !== 200) throw new Unexpected(`receipt: ${describe(receipt)}`);
  const saved = `docverify-receipt-${recordId}.json`;
  writeFileSync(saved, receipt.text);
  console.log(`receipt: saved ${saved} (${Buffer.byteLength(receipt.text)} bytes)`);

  // 5. Revoke it, once more after Retry-After if its anchor is not final yet.
  let revoked = await call("POST", `/v1/records/${recordId}/revoke`, { reason: "SUPERSEDED" });
  if (revoked.status === 409 && (revoked.json.error as { code?: string } | undefined)?.code === "ANCHOR_NOT_FINAL") {
    const wait = retryAfter(revoked, 5);
    console.log(`revoke: anchor not final, retrying in ${wait} s`);
    await sleep(wait);
    revoked = await call("POST", `/v1/records/${recordId}/revoke`, { reason: "SUPERSEDED" });
  }
  if (revoked.status !== 200) throw new Unexpected(`revoke: ${describe(revoked)}`);
  console.log(`revoke: ${revoked.status} (reason SUPERSEDED)`);

  // 6. Anyone verifying the document now learns it was revoked.
  const last = await call("POST", "/v1/verifications", { originalDocHash: hash });
  if (last.status !== 200) throw new Unexpected(`verify: ${describe(last)}`);
  if (last.json.verdict !== "revoked") throw new Unexpected(`verify: verdict ${String(last.json.verdict)}, expected revoked`);
  console.log("verify: revoked");
  console.log(`done: record ${recordId} created, verified, logged, receipted and revoked`);
}

main().catch((e: unknown) => {
  console.error(`error: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
