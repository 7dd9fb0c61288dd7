/**
 * The key lifecycle end to end, the appliance and the receipt verifier together (docs/signing.md
 * "Key lifecycle", docs/receipts.md): serve on its embedded ledger; `docverify org rotate-key`
 * and `docverify org key-compromised` run by the administrator on serve's data folder while it
 * serves; receipts fetched before the compromise; then every shell (`docverify verify-receipt`,
 * `node docverify-verify.mjs`, the page), reading the topic from two witnesses, agrees with the
 * API: a record signed with the replaced key before its replacement is verified_org, and so is one
 * signed with the new key before `since`; one signed with it at or after `since` is revoked,
 * KEY_COMPROMISE, even from a receipt fetched before the compromise; a record signed with the key
 * that replaced the compromised one is verified_org.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUN, cleanup, tempDir } from "../support/env.ts";
import { waitFor } from "../support/wait.ts";
import { deploy, docHash, MAIN, verifyInEveryShell, type Deployment } from "./e2e-rig.ts";

afterAll(cleanup);

interface Kept {
  readonly recordId: string;
  readonly documentPath: string;
  readonly receiptPath: string;
  readonly hash: string;
}

/** `docverify ARGS --data DIR --json` while serve runs on DIR: its parsed answer (exit 0 required). */
function admin(d: Deployment, args: string[]): unknown {
  const r = Bun.spawnSync([BUN, MAIN, ...args, "--data", d.dataDir, "--json"], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: tempDir() } });
  if (r.exitCode !== 0) throw new Error(`docverify ${args.join(" ")} exited ${r.exitCode}: ${r.stderr.toString()}`);
  return JSON.parse(r.stdout.toString()) as unknown;
}

describe("rotation and compromise, judged alike by the API and every receipt shell", () => {
  let d: Deployment;
  let orgId: string;
  const kept: Record<"beforeRotation" | "beforeSince" | "afterSince" | "afterCompromise", Kept> = {} as never;

  /** A new document authenticated now, its receipt once final (fetched now, kept as a file). */
  async function keep(): Promise<Kept> {
    const document = new Uint8Array(randomBytes(2048));
    const recordId = await d.create(document);
    const dir = tempDir("docverify-kept-");
    const documentPath = join(dir, "document.bin");
    writeFileSync(documentPath, document);
    const receiptPath = join(dir, "receipt.json");
    writeFileSync(receiptPath, await d.receipt(recordId));
    return { recordId, documentPath, receiptPath, hash: docHash(document) };
  }

  beforeAll(async () => {
    d = await deploy("embedded", { orgName: "Rotating Ltd" });
    const orgs = admin(d, ["org", "list"]) as unknown as { id: string; name: string }[];
    orgId = orgs.find((o) => o.name === "Rotating Ltd")!.id;
    kept.beforeRotation = await keep();
    admin(d, ["org", "rotate-key", orgId]);
    kept.beforeSince = await keep();
    // `since` falls between the two records: the first signed before it, the second at or after it.
    await Bun.sleep(5); // distinct milliseconds for the signed times around `since`
    const since = new Date().toISOString();
    await Bun.sleep(5);
    kept.afterSince = await keep();
    admin(d, ["org", "key-compromised", orgId, "--since", since]);
    kept.afterCompromise = await keep();
    // The compromise is final on the ledger once a receipt fetched now carries it.
    await waitFor(
      "the compromise anchored",
      async () => ((JSON.parse(await d.receipt(kept.afterSince.recordId)) as { revocation: { reason: string } | null }).revocation?.reason === "KEY_COMPROMISE" ? true : undefined),
      20_000,
      100,
    );
  }, 120_000);

  test("the API: public verification of each hash", async () => {
    const verdicts: Record<string, unknown> = {};
    for (const [name, k] of Object.entries(kept)) {
      const res = await fetch(`${d.svc.url}/v1/verifications`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ originalDocHash: k.hash }) });
      const body = (await res.json()) as { verdict: string };
      verdicts[name] = [res.status, body.verdict];
    }
    expect(verdicts).toEqual({
      beforeRotation: [200, "verified_org"],
      beforeSince: [200, "verified_org"],
      afterSince: [200, "revoked"],
      afterCompromise: [200, "verified_org"],
    });
  });

  test(
    "every shell, from receipts fetched before the compromise, reading the topic itself",
    async () => {
      const witnesses = await d.witnesses();
      const expected = { beforeRotation: "verified_org", beforeSince: "verified_org", afterSince: "revoked", afterCompromise: "verified_org" } as const;
      for (const [name, k] of Object.entries(kept) as [keyof typeof expected, Kept][]) {
        const outcomes = await verifyInEveryShell(k.receiptPath, k.documentPath, { mirrors: witnesses });
        expect(outcomes.map((o) => [name, o.shell, o.verdict])).toEqual(outcomes.map((o) => [name, o.shell, expected[name]]));
        if (expected[name] === "revoked") for (const o of outcomes) expect([o.shell, o.failed]).toEqual([o.shell, expect.arrayContaining(["keyCompromise"])]);
      }
    },
    180_000,
  );
});
