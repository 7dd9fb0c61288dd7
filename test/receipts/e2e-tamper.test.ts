/**
 * Receipts end to end, altered: with a real receipt of a real ledger (serve stopped), every byte
 * string of the receipt with one byte flipped, the receipt checked against another document, the
 * offline check, and receipts that are not receipts. In every shell that takes the case, given two
 * witnesses of the ledger on two hosts (e2e-rig.ts): altered receipts never pass, malformed ones
 * are a one-line usage error with exit 2, never a crash.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanup, tempDir } from "../support/env.ts";
import { authenticate, cliVerify, deploy, nodeVerify, SHELLS, verifyIn, writeReceipt, type Deployment, type Held, type ShellResult } from "./e2e-rig.ts";

afterAll(cleanup);

let d: Deployment;
let held: Held;
let receipt: Record<string, unknown>;
let witnesses: string[];

beforeAll(async () => {
  d = await deploy("separate");
  held = await authenticate(d);
  receipt = JSON.parse(held.receiptText) as Record<string, unknown>;
  await d.stopServe();
  witnesses = await d.witnesses();
}, 60_000);

/** The receipt with the middle byte of the base64 field at `path` XORed with 1. */
function flipped(path: string): Record<string, unknown> {
  const copy = structuredClone(receipt);
  const keys = path.split(".");
  let at = copy as Record<string, unknown>;
  for (const k of keys.slice(0, -1)) at = at[k] as Record<string, unknown>;
  const last = keys.at(-1)!;
  const bytes = Buffer.from(at[last] as string, "base64");
  bytes[bytes.length >> 1]! ^= 1;
  at[last] = bytes.toString("base64");
  return copy;
}

const BYTE_FIELDS = [
  "signer.signature",
  "signer.payload",
  "signer.publicKey",
  "seal.signature",
  "seal.payload",
  "seal.publicKey",
  "anchor.message",
  "anchor.runningHash",
  "keyAnnouncement.message",
];

describe("a real receipt, altered", () => {
  test(
    "one byte flipped in each signature, payload, public key and message: signature_invalid or inconsistent_mirrors in every shell, never a pass",
    async () => {
      for (const field of BYTE_FIELDS) {
        const path = writeReceipt(flipped(field), `${field}.json`);
        for (const shell of SHELLS) {
          const o = await verifyIn(shell, path, held.documentPath, { mirrors: witnesses });
          expect([field, shell, o.verdict]).toEqual([field, shell, expect.stringMatching(/^(signature_invalid|inconsistent_mirrors)$/)]);
          expect([field, shell, o.code]).toEqual([field, shell, shell === "page" ? null : 1]);
          expect([field, shell, o.failed.length > 0]).toEqual([field, shell, true]);
        }
      }
    },
    120_000,
  );

  test(
    "its kind relabelled (a record only, passed off as a signed PDF): signature_invalid in every shell, the kind check failed",
    async () => {
      expect(receipt.kind).toBe("record_only");
      const path = writeReceipt({ ...receipt, kind: "pdf_embedded" }, "kind.json");
      for (const shell of SHELLS) {
        const o = await verifyIn(shell, path, held.documentPath, { mirrors: witnesses });
        expect([shell, o.verdict, o.code, o.failed]).toEqual([shell, "signature_invalid", shell === "page" ? null : 1, ["kind"]]);
      }
    },
    60_000,
  );

  test(
    "checked against another document: no_record in every shell, exit 1",
    async () => {
      const other = join(tempDir(), "other.pdf");
      writeFileSync(other, new Uint8Array(held.document.length));
      for (const shell of SHELLS) {
        const o = await verifyIn(shell, held.receiptPath, other, { mirrors: witnesses });
        expect([shell, o.verdict, o.code, o.failed]).toEqual([shell, "no_record", shell === "page" ? null : 1, ["documentHash"]]);
      }
    },
    60_000,
  );

  test(
    "--offline is never verified: the intact receipt is unverifiable, an altered one signature_invalid, the ledger's checks skipped",
    async () => {
      for (const run of [cliVerify, nodeVerify]) {
        const intact = await run([held.receiptPath, "--file", held.documentPath, "--offline", "--json"]);
        expect([intact.code, intact.report?.verdict]).toEqual([1, "unverifiable"]);
        // The local checks pass; every check of the ledger is skipped.
        expect(intact.report!.checks.filter((c) => c.status === "pass").map((c) => c.name)).toEqual(["documentHash", "kind", "recordPayload", "signerSignature", "sealPayload", "sealSignature", "inclusion"]);
        expect(intact.report!.checks.filter((c) => c.status === "skipped").map((c) => c.name)).toEqual(["mirrors", "ledgerMessage", "messageCommitments", "keyAnnouncement", "topicSubmitKey", "keyWindow", "revocationScan", "keyCompromise", "identity"]);
        expect((intact.report as unknown as { mirrors: string[] }).mirrors).toEqual([]);
        const altered = await run([writeReceipt(flipped("signer.signature")), "--file", held.documentPath, "--offline", "--json"]);
        expect([altered.code, altered.report?.verdict]).toEqual([1, "signature_invalid"]);
        // Human output says the same.
        const human = await run([held.receiptPath, "--file", held.documentPath, "--offline"]);
        expect(human.code).toBe(1);
        expect(human.stdout).toContain("unverifiable");
        expect(human.stdout).not.toMatch(/Verdict: verified/);
      }
    },
    60_000,
  );
});

describe("receipts that are not receipts", () => {
  const expectUsageError = (what: string, r: ShellResult, mentions: RegExp) => {
    expect([what, r.code]).toEqual([what, 2]);
    expect([what, r.stdout]).toEqual([what, ""]);
    const lines = r.stderr.trimEnd().split("\n");
    expect([what, lines.length]).toEqual([what, 1]);
    expect([what, lines[0]]).toEqual([what, expect.stringMatching(/^docverify verify-receipt: /)]);
    expect([what, lines[0]]).toEqual([what, expect.stringMatching(mentions)]);
    expect([what, r.stderr]).toEqual([what, expect.not.stringMatching(/\bat .*:\d+|Error:|TypeError|SyntaxError/)]);
  };

  test(
    "truncated, not JSON, not an object, an unknown v, wrong types and encodings: one line on stderr, exit 2, in both command-line shells",
    async () => {
      const cases: [string, string, RegExp][] = [
        ["truncated", held.receiptText.slice(0, 200), /JSON|receipt/i],
        ["empty", "", /JSON|receipt|empty/i],
        ["an array", "[]", /object|receipt/i],
        ["v 2", JSON.stringify({ ...receipt, v: 2 }), /\bv\b/],
        ["v missing", JSON.stringify({ ...receipt, v: undefined }), /\bv\b/],
        ["sequenceNumber a string", JSON.stringify({ ...receipt, anchor: { ...(receipt.anchor as object), sequenceNumber: "2" } }), /anchor\.sequenceNumber/],
        ["anchor a string", JSON.stringify({ ...receipt, anchor: "0.0.1001" }), /anchor/],
        ["signature not base64", JSON.stringify({ ...receipt, signer: { ...(receipt.signer as object), signature: "not base64!" } }), /signer\.signature/],
        ["recordId not a UUID", JSON.stringify({ ...receipt, recordId: "x" }), /recordId/],
        ["mirrorNodes not an array", JSON.stringify({ ...receipt, mirrorNodes: "http://127.0.0.1:1" }), /mirrorNodes/],
      ];
      for (const [what, text, mentions] of cases) {
        const path = writeReceipt(text, `${what}.json`);
        expectUsageError(`cli: ${what}`, await cliVerify([path, "--file", held.documentPath, "--json"]), mentions);
        expectUsageError(`node: ${what}`, await nodeVerify([path, "--file", held.documentPath, "--json"]), mentions);
      }
    },
    120_000,
  );

  test("a receipt file that does not exist: one line, exit 2", async () => {
    const missing = join(tempDir(), "nowhere.json");
    expectUsageError("cli", await cliVerify([missing, "--file", held.documentPath]), /nowhere\.json/);
    expectUsageError("node", await nodeVerify([missing, "--file", held.documentPath]), /nowhere\.json/);
  });
});
