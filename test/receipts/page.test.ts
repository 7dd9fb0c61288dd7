/**
 * The receipt verifier's page (docs/receipts.md §4.4): built from its sources and
 * self-contained; GET /verify-receipt serves exactly it with the page headers and a policy that
 * allows its own script and the mirror nodes; and in headless Chromium, opened from a file and from
 * the server, it verifies a real receipt against two witnesses of a real ledger on two hosts (its
 * own two ports are one: e2e-rig.ts), named in the mirror field, which starts empty for a local
 * ledger's receipt, with the receipt's suggestions shown beside it and added only on request;
 * shows the organisation's name as text and as a claim, that a local ledger proves nothing
 * publicly, every check, progress during a long scan, and a clear message for each thing a person
 * can get wrong, with no request but to the mirror nodes; a docverify-signed PDF is verified by the
 * original inside it, and one changed after signing is not.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { browserScript, receiptPageHtml } from "../../src/http/pages/bundle.ts";
import { PAGE_SECURITY_HEADERS } from "../../src/http/pages/html.ts";
import { RECEIPT_PAGE } from "../../src/http/pages/verify-receipt.ts";
import { signPdf } from "../../src/pdf/stamp.ts";
import { documentLine, minimumMirrors, mirrorLines, verdictText } from "../../src/verifier/page/view.ts";
import { humanTime } from "../../src/verifier/human-time.ts";
import { makeTestPdf } from "../support/pdf.ts";
import { ROOT, cleanup, onCleanup, tempDir, testApp } from "../support/env.ts";
import { nextLoopback } from "../support/loopback.ts";
import { CHROMIUM_ARGS, requireProgram } from "../support/programs.ts";
import { authenticate, deploy, docHash, PAGE_HTML, pageOnDisk, pageVerify, sharedBrowser, writeReceipt, type Deployment, type Held } from "./e2e-rig.ts";

afterAll(cleanup);

const html = PAGE_HTML;
const sha256b64 = (text: string) => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;
const inline = (tag: string) => {
  const all = [...html.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, "g"))];
  expect(all.length).toBe(1);
  return all[0]![1]!;
};

describe("the generated page", () => {
  test(
    "built from its sources when the server's module is compiled: the template, its style as written, the verifier bundled",
    () => {
      const pageDir = join(ROOT, "src", "verifier", "page");
      const template = readFileSync(join(pageDir, "template.html"), "utf8");
      expect(inline("style")).toBe(readFileSync(join(pageDir, "style.css"), "utf8").trim());
      expect(inline("script")).toBe(browserScript("verifier/page/browser.ts"));
      expect(html.startsWith(template.slice(0, template.indexOf("{{")))).toBe(true);
      expect(html).not.toContain("{{");
      // What the server embeds is what a build writes beside the executable.
      expect(RECEIPT_PAGE).toBe(receiptPageHtml());
    },
    60_000,
  );

  test("one file that loads nothing: its only script and style are inline and allowed by hash, requests only to http(s)", () => {
    const script = inline("script");
    const style = inline("style");
    const meta = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html);
    expect(meta).not.toBeNull();
    expect(meta![1]!.split("; ")).toEqual([
      "default-src 'none'",
      `script-src ${sha256b64(script)}`,
      `style-src ${sha256b64(style)}`,
      "connect-src http: https:",
      "img-src 'none'",
      "base-uri 'none'",
      "form-action 'none'",
    ]);
    // Nothing fetched from anywhere: no external script, style, font, image or frame.
    const markup = html.replace(script, "").replace(style, "");
    expect(markup).not.toMatch(/\s(src|href|srcset|action)=/i);
    expect(markup).not.toMatch(/<(link|iframe|object|embed|img)\b/i);
    expect(style).not.toMatch(/url\(|@import|@font-face/i);
    // The document is hashed here and never sent: the page says so.
    expect(markup).toContain("Your document is hashed in this browser and is never uploaded.");
    // Every control has a label.
    for (const id of ["receipt", "document", "mirrors", "min-mirrors", "trust"]) expect(markup).toContain(`<label for="${id}">`);
    expect(markup).toContain('role="status"');
  });
});

describe("the page's words", () => {
  test("every verdict has a headline, an explanation and a tone; an unknown one is shown as is", () => {
    // The words every page uses for the outcome (docs/verification.md, "Words on the pages"), not the verifier's names.
    for (const v of ["verified", "verified_org"]) expect(verdictText(v)).toMatchObject({ headline: "Valid", tone: "good" });
    for (const v of ["revoked", "signature_invalid", "no_record", "inconsistent_mirrors"]) expect(verdictText(v).tone).toBe("bad");
    expect(verdictText("unverifiable")).toMatchObject({ headline: "Could not be verified", tone: "warn" });
    expect(verdictText("something_new")).toMatchObject({ headline: "something_new", tone: "warn" });
  });

  test("what was hashed: the file, the original inside a signed PDF, or a signed PDF changed afterwards, whole", () => {
    const id = "0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d";
    const h = "sha256:" + "ab".repeat(32);
    expect(documentLine("a.pdf", 2048, { kind: "not-signed" }, h)).toBe(`a.pdf (2.0 KiB), hashed in this browser: ${h}`);
    expect(documentLine("a.pdf", 2048, { kind: "signed", originalLength: 900, recordId: id }, h)).toBe(
      `a.pdf (2.0 KiB) is a PDF signed with docverify (record ${id}): its original document, the first 900 bytes, hashed in this browser: ${h}`,
    );
    expect(documentLine("a.pdf", 2048, { kind: "changed-after-signing", originalLength: 900, recordId: id }, h)).toBe(
      `a.pdf (2.0 KiB) is a PDF signed with docverify (record ${id}) but changed after signing, so it is no longer the signed document and cannot match; hashed whole in this browser: ${h}`,
    );
  });

  test("the mirror list is one URL a line, blanks dropped; the minimum is a whole number of at least 1", () => {
    expect(mirrorLines(" http://a \r\n\n  https://b/\n")).toEqual(["http://a", "https://b/"]);
    expect(mirrorLines("\n \n")).toEqual([]);
    expect([" 2 ", "1", "10"].map(minimumMirrors)).toEqual([2, 1, 10]);
    expect(["0", "-1", "1.5", "", "two", "1e3", "9999"].map(minimumMirrors)).toEqual([null, null, null, null, null, null, null]);
  });
});

describe("GET /verify-receipt", () => {
  test("serves the committed page, with no credential, the page headers, and a policy allowing its script, its style and the mirror nodes", async () => {
    const { request } = await testApp();
    const res = await request("/verify-receipt");
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(html);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("no-store");
    for (const [k, v] of Object.entries(PAGE_SECURITY_HEADERS)) expect(res.headers.get(k)).toBe(v);
    expect(res.headers.get("content-security-policy")!.split("; ")).toEqual([
      "default-src 'none'",
      `script-src ${sha256b64(inline("script"))}`,
      `style-src ${sha256b64(inline("style"))}`,
      "connect-src http: https:",
      "img-src 'none'",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ]);
    // A browser's request (with Origin) is a page view like any other.
    expect((await request("/verify-receipt", { headers: { origin: "https://elsewhere.example" } })).status).toBe(200);
    expect((await request("/verify-receipt", { method: "POST" })).status).toBe(405);
  });

  test("limited per client IP like anonymous verification: 429 RATE_LIMITED beyond the budget, other clients unaffected", async () => {
    const { request } = await testApp({ env: { DOCVERIFY_RATE_LIMIT_ANONYMOUS: "2" } });
    expect((await request("/verify-receipt", {}, "192.0.2.1")).status).toBe(200);
    expect((await request("/verify-receipt", {}, "192.0.2.1")).status).toBe(200);
    const refused = await request("/verify-receipt", {}, "192.0.2.1");
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("RATE_LIMITED");
    expect(refused.headers.get("retry-after")).not.toBeNull();
    expect((await request("/verify-receipt", {}, "192.0.2.2")).status).toBe(200);
  });
});

/**
 * A mirror node that serves at most one message a page (a real mirror node may cap `limit`): in
 * front of a real one, so that scanning two messages takes two pages and the page shows the
 * verifier's progress. Its `links.next` are the real node's, relative, so they lead back here.
 * On a loopback address of its own: two of them are two hosts.
 */
function smallPagesMirror(upstream: string): string {
  const hostname = nextLoopback();
  const server = Bun.serve({
    port: 0,
    hostname,
    async fetch(req) {
      const url = new URL(req.url);
      if (url.searchParams.has("limit")) url.searchParams.set("limit", "1");
      const res = await fetch(upstream + url.pathname + url.search, { method: req.method, headers: req.headers });
      return new Response(await res.arrayBuffer(), { status: res.status, headers: res.headers });
    },
  });
  onCleanup(() => server.stop(true));
  return `http://${hostname}:${server.port}`;
}

const LOCAL_NOTICE = "Local development ledger: this proves nothing publicly. Anyone can run one and write anything on it.";

describe("the page in Chromium, against two witnesses of a real ledger", () => {
  let d: Deployment;
  let held: Held;
  let witnesses: string[];

  beforeAll(async () => {
    d = await deploy("separate");
    held = await authenticate(d);
    witnesses = await d.witnesses();
  }, 60_000);

  const expectVerified = (run: Awaited<ReturnType<typeof pageVerify>>) => {
    expect(run.error).toBe("");
    expect(run.verdict).toBe("verified_org");
    // Proven on the ledger, but neither who made it nor the ledger itself is anything public.
    expect(run.headline).toBe("Valid, but who made it is not confirmed (local development ledger: proves nothing publicly)");
    expect(run.ledgerNotice).toBe(LOCAL_NOTICE);
    // The organisation's name from the ledger, as text (its markup characters shown, never parsed), and as a claim.
    expect([run.identity, run.organisationName]).toEqual(["unconfirmed", d.orgName]);
    expect(run.organisation).toStartWith(`Organisation: unconfirmed claim. The ledger announcement claims ${d.orgName}`);
    const receipt = JSON.parse(held.receiptText) as { authenticatedAt: string };
    expect(run.signed).toBe(`Authenticated at ${humanTime(receipt.authenticatedAt)} (the signed time), record ${held.recordId}.`);
    expect(run.revocation).toBe("");
    expect(run.checks.map((c) => c.name)).toEqual([
      "documentHash",
      "kind",
      "recordPayload",
      "signerSignature",
      "sealPayload",
      "sealSignature",
      "mirrors",
      "ledgerMessage",
      "messageCommitments",
      "keyAnnouncement",
      "topicSubmitKey",
      "keyWindow",
      "revocationScan",
      "keyCompromise",
      "identity",
      "inclusion",
    ]);
    // Every check passed but the identity, which is a claim: a warning, not a failure.
    expect(run.checks.filter((c) => c.status !== "pass").map((c) => [c.name, c.status])).toEqual([["identity", "warning"]]);
    expect(run.checks.every((c) => c.detail.length > 0)).toBe(true);
    expect(run.mirrorsUsed).toStartWith(`Mirror nodes asked: ${witnesses.join(", ")}, on 2 distinct hosts (minimum 2;`);
    // No request but to the two witnesses named; none to the receipt's own mirror nodes; no policy violation.
    expect(run.requests.length).toBeGreaterThan(0);
    expect(run.requests.filter((u) => !witnesses.some((m) => u.startsWith(m + "/api/v1/")))).toEqual([]);
    expect(run.consoleErrors).toEqual([]);
  };

  test(
    "opened from a file: verified_org, the organisation's name as text and as a claim, every check passed",
    async () => {
      const run = await pageVerify(pageOnDisk(), { receiptPath: held.receiptPath, documentPath: held.documentPath, mirrors: witnesses });
      expectVerified(run);
      // The field started empty (a local ledger has no built-in mirror nodes); the receipt's were only suggested.
      expect(run.startingMirrors).toBe("");
      expect(run.suggested).toContain(`The receipt suggests: ${d.mirrors.join(", ")}.`);
    },
    60_000,
  );

  test(
    "served by docverify at /verify-receipt: the same",
    async () => {
      expectVerified(await pageVerify(`${d.svc.url}/verify-receipt`, { receiptPath: held.receiptPath, documentPath: held.documentPath, mirrors: witnesses }));
    },
    60_000,
  );

  test(
    "served over plain HTTP under a host name (not a secure context, as on a private network): the same",
    async () => {
      // Chromium treats localhost and 127.0.0.1 as secure; a name mapped to the same address is not.
      const port = new URL(d.svc.url).port;
      const browser = await chromium.launch({ executablePath: requireProgram("chromium"), args: [...CHROMIUM_ARGS, "--host-resolver-rules=MAP docverify.test 127.0.0.1"] });
      try {
        const p = await browser.newPage();
        await p.goto(`http://docverify.test:${port}/verify-receipt`);
        expect(await p.evaluate(() => (globalThis as unknown as { isSecureContext: boolean }).isSecureContext)).toBe(false);
        await p.setInputFiles("#receipt", held.receiptPath);
        await p.waitForSelector("#receipt-info:not(:empty)");
        await p.setInputFiles("#document", held.documentPath);
        await p.fill("#mirrors", witnesses.join("\n"));
        await p.click("#verify");
        await p.waitForSelector("#verdict:not(:empty)", { timeout: 30_000 });
        expect(await p.getAttribute("#verdict", "data-verdict")).toBe("verified_org");
      } finally {
        await browser.close();
      }
    },
    60_000,
  );

  test(
    "a docverify-signed PDF: verified by the original inside it; the same PDF changed after signing: no_record",
    async () => {
      const original = makeTestPdf({ xrefStream: true, title: "signed on the page" });
      const recordId = await d.create(original);
      const receiptPath = writeReceipt(await d.receipt(recordId), `docverify-receipt-${recordId}.json`);
      const signed = await signPdf(original, { recordId, verifyUrl: `${d.svc.url}/verify/${recordId}`, signerName: "Ada Lovelace", organisation: "Acme", signedAt: new Date().toISOString() });
      const dir = tempDir();
      const signedPath = join(dir, "contract-signed.pdf");
      writeFileSync(signedPath, signed);
      const changedPath = join(dir, "contract-changed.pdf");
      writeFileSync(changedPath, new Uint8Array([...signed, ...new TextEncoder().encode("%changed\n")]));

      const ok = await pageVerify(pageOnDisk(), { receiptPath, documentPath: signedPath, mirrors: witnesses });
      expect([ok.error, ok.verdict]).toEqual(["", "verified_org"]);
      expect(ok.checks.find((c) => c.name === "documentHash")!.status).toBe("pass");
      expect(ok.documentInfo).toStartWith(`contract-signed.pdf (${(signed.length / 1024).toFixed(1)} KiB) is a PDF signed with docverify (record ${recordId}): its original document, the first ${original.length} bytes`);
      expect(ok.documentInfo).toEndWith(docHash(original));

      const changed = await pageVerify(pageOnDisk(), { receiptPath, documentPath: changedPath, mirrors: witnesses });
      expect(changed.verdict).toBe("no_record");
      expect(changed.checks.find((c) => c.name === "documentHash")!.status).toBe("fail");
      expect(changed.documentInfo).toContain("but changed after signing, so it is no longer the signed document and cannot match");
    },
    60_000,
  );

  test(
    "another document: not verified (no_record), the document hash check failed",
    async () => {
      const other = join(tempDir(), "other.pdf");
      writeFileSync(other, "another document");
      const run = await pageVerify(pageOnDisk(), { receiptPath: held.receiptPath, documentPath: other, mirrors: witnesses });
      expect(run.verdict).toBe("no_record");
      expect(run.headline).toBe("No record for this document (local development ledger: proves nothing publicly)");
      expect(run.checks.find((c) => c.name === "documentHash")!.status).toBe("fail");
      expect(run.documentInfo).toBe(`other.pdf (16 bytes), hashed in this browser: ${docHash("another document")}`);
      // Nothing about the record is vouched for: no organisation named, not even as a claim; no signed time.
      expect([run.identity, run.organisationName, run.signed]).toEqual(["", "", ""]);
      expect(run.organisation).toStartWith("Organisation: not established");
    },
    60_000,
  );

  test(
    "a receipt fetched before its record was revoked (in a later batch): Revoked, with the revocation as found on the ledger, its batch message listing the record, the reason not on the ledger; one fetched after proves its leaf: the reason and time",
    async () => {
      const withdrawn = await authenticate(d, "withdrawn.pdf");
      expect(JSON.parse(withdrawn.receiptText).revocation).toBeNull();
      await d.revoke(withdrawn.recordId, "KEY_COMPROMISE");
      const afterText = await d.receipt(withdrawn.recordId);
      const after = JSON.parse(afterText) as { revocation: { revokedAt: string; anchor: { sequenceNumber: number; consensusAt: string; message: string; inclusion: { leafMessage: string } | null } } };
      // On the ledger: a batch message listing the record in `revoked`; the leaf with the reason is in the later receipt only.
      expect(JSON.parse(Buffer.from(after.revocation.anchor.message, "base64").toString("utf8"))).toMatchObject({ type: "batch", revoked: [withdrawn.recordId] });
      expect(JSON.parse(Buffer.from(after.revocation.anchor.inclusion!.leafMessage, "base64").toString("utf8"))).toMatchObject({ type: "revocation", recordId: withdrawn.recordId, reason: "KEY_COMPROMISE" });
      const found = `ledger message ${after.revocation.anchor.sequenceNumber}, consensus at ${humanTime(after.revocation.anchor.consensusAt)}`;

      const run = await pageVerify(pageOnDisk(), { receiptPath: withdrawn.receiptPath, documentPath: withdrawn.documentPath, mirrors: witnesses });
      expect([run.verdict, run.headline]).toEqual(["revoked", "Revoked (local development ledger: proves nothing publicly)"]);
      expect(run.revocation).toBe(`Revoked by ${found}; the reason is not on the ledger.`);
      expect(run.checks.filter((c) => c.status === "fail").map((c) => c.name)).toEqual(["revocationScan"]);
      expect(run.checks.find((c) => c.name === "revocationScan")!.detail).toContain("reason not on the ledger: the receipt names no revocation of the record");

      const proven = await pageVerify(pageOnDisk(), { receiptPath: writeReceipt(afterText, `docverify-receipt-${withdrawn.recordId}.json`), documentPath: withdrawn.documentPath, mirrors: witnesses });
      expect([proven.verdict, proven.headline]).toEqual(["revoked", "Revoked (local development ledger: proves nothing publicly)"]);
      expect(proven.revocation).toBe(`Revoked on ${humanTime(after.revocation.revokedAt)}, reason KEY_COMPROMISE: ${found}.`);
      expect(proven.checks.filter((c) => c.status === "fail").map((c) => c.name)).toEqual(["revocationScan"]);
    },
    60_000,
  );

  test(
    "progress is shown during a long topic scan",
    async () => {
      // Two more messages on the topic after the record's; served one a page, the scan takes pages.
      await d.receipt(await d.create(new TextEncoder().encode("after 1")));
      await d.receipt(await d.create(new TextEncoder().encode("after 2")));
      const mirrors = d.mirrors.map(smallPagesMirror);
      const run = await pageVerify(pageOnDisk(), { receiptPath: held.receiptPath, documentPath: held.documentPath, mirrors });
      expect(run.verdict).toBe("verified_org");
      expect(run.progress).toContain("Asking the mirror nodes…");
      const scans = run.progress.filter((p) => p.includes("topic scan of"));
      expect(scans.length).toBeGreaterThan(0);
      expect(scans[0]).toMatch(/page [2-9]\d*, \d+ messages/);
    },
    60_000,
  );

  test(
    "a receipt that is not one (truncated, not JSON, an unknown version): a clear message at once, no verdict, no request",
    async () => {
      const receipt = JSON.parse(held.receiptText) as Record<string, unknown>;
      const cases: [string, string, RegExp][] = [
        ["truncated", held.receiptText.slice(0, held.receiptText.length / 2), /not a usable receipt/],
        ["version 2", JSON.stringify({ ...receipt, v: 2 }), /not a usable receipt.*\bv\b/],
        ["wrong type", JSON.stringify({ ...receipt, anchor: "0.0.1" }), /not a usable receipt.*anchor/],
      ];
      for (const [what, text, message] of cases) {
        const run = await pageVerify(pageOnDisk(), { receiptPath: writeReceipt(text), documentPath: held.documentPath });
        expect([what, run.verdict]).toEqual([what, null]);
        expect([what, run.error]).toEqual([what, expect.stringMatching(message)]);
        expect([what, run.requests]).toEqual([what, []]);
        expect([what, run.consoleErrors]).toEqual([what, []]);
      }
    },
    60_000,
  );

  test(
    "a mirror line that is not a URL, or a minimum that is not a whole number: said so, nothing asked",
    async () => {
      const notUrl = await pageVerify(pageOnDisk(), { receiptPath: held.receiptPath, documentPath: held.documentPath, mirrors: [d.mirrors[0]!, "ftp://mirror.example"] });
      expect(notUrl.verdict).toBeNull();
      expect(notUrl.error).toBe("Not a mirror node URL (http:// or https://, no query): ftp://mirror.example");
      expect(notUrl.requests).toEqual([]);
      const badMin = await pageVerify(pageOnDisk(), { receiptPath: held.receiptPath, documentPath: held.documentPath, minMirrors: "0" });
      expect(badMin.verdict).toBeNull();
      expect(badMin.error).toBe("The minimum number of mirror nodes must be a whole number, 1 or more.");
      expect(badMin.requests).toEqual([]);
    },
    60_000,
  );

  test(
    "one mirror node with a minimum of 1: verified, and the page calls it a weakened check",
    async () => {
      const run = await pageVerify(pageOnDisk(), { receiptPath: held.receiptPath, documentPath: held.documentPath, mirrors: [d.mirrors[0]!], minMirrors: "1" });
      expect(run.verdict).toBe("verified_org");
      expect(run.mirrorsUsed).toBe(`Mirror nodes asked: ${d.mirrors[0]}, on 1 distinct host (minimum 1, a weakened check; this page compares host names, as a browser cannot resolve them).`);
      expect(run.requests.filter((u) => !u.startsWith(d.mirrors[0]!))).toEqual([]);
    },
    60_000,
  );

  test(
    "by keyboard and by dropping files: every control is reached with Tab in order, a missing file is named, the receipt's mirror nodes added only on request (one host: unverifiable), Enter verifies, the verdict takes the focus",
    async () => {
      const context = await (await sharedBrowser()).newContext();
      try {
        const p = await context.newPage();
        await p.goto(pageOnDisk());
        const focused = () => p.evaluate(() => (globalThis as unknown as { document: { activeElement: { id: string } | null } }).document.activeElement?.id ?? "");
        const order: string[] = [];
        for (let i = 0; i < 7; i++) {
          await p.keyboard.press("Tab");
          order.push(await focused());
        }
        // The button adding the receipt's suggestions is hidden until a receipt suggests some.
        expect(order).toEqual(["receipt", "document", "mirrors", "min-mirrors", "max-scan-pages", "trust", "verify"]);
        expect(await p.inputValue("#min-mirrors")).toBe("2");

        await p.keyboard.press("Enter");
        expect(await p.textContent("#progress.error")).toBe("Choose the receipt file first.");

        /** Drops a file made in the page, as a person drags one from their desktop. */
        const drop = async (zone: string, name: string, bytes: number[]) => {
          const dt = await p.evaluateHandle(
            ({ name, bytes }) => {
              const g = globalThis as unknown as { DataTransfer: new () => { items: { add(f: unknown): void } } };
              const transfer = new g.DataTransfer();
              transfer.items.add(new File([new Uint8Array(bytes)], name));
              return transfer;
            },
            { name, bytes },
          );
          await p.dispatchEvent(zone, "drop", { dataTransfer: dt });
        };
        await drop("#receipt-drop", "receipt.json", [...new TextEncoder().encode(held.receiptText)]);
        await p.waitForSelector("#receipt-info:not(:empty)");
        expect(await p.textContent("#receipt-info")).toBe(`receipt.json: record ${held.recordId}, ${docHash(held.document)}, on the local ledger.`);
        // The mirror field starts from the page's own list for the local ledger: none. The receipt's are suggested beside it.
        const suggestions = (JSON.parse(held.receiptText) as { mirrorNodes: string[] }).mirrorNodes;
        expect(suggestions).toEqual(d.mirrors);
        expect(await p.inputValue("#mirrors")).toBe("");
        expect(await p.textContent("#suggested")).toContain(`The receipt suggests: ${suggestions.join(", ")}. A receipt does not choose its own witnesses: they are asked only if you add them.`);
        // Pressing "Add the receipt's suggestions" (reached by Tab after the field) fills them in, one a line.
        await p.focus("#mirrors");
        await p.keyboard.press("Tab");
        expect(await focused()).toBe("use-suggested");
        await p.keyboard.press("Enter");
        expect(await p.inputValue("#mirrors")).toBe(suggestions.join("\n"));

        await p.focus("#verify");
        await p.keyboard.press("Enter");
        expect(await p.textContent("#progress.error")).toBe("Choose the document the receipt is for.");

        await drop("#document-drop", "contract.pdf", [...held.document]);
        await p.waitForSelector("#document-info:not(:empty)");
        // The receipt's two suggestions are two ports of one ledger: one host, fewer than two witnesses.
        await p.focus("#verify");
        await p.keyboard.press("Enter");
        await p.waitForSelector("#verdict:not(:empty)", { timeout: 30_000 });
        expect(await p.getAttribute("#verdict", "data-verdict")).toBe("unverifiable");
        expect(await p.textContent("#check-rows tr[data-check=mirrors]")).toContain("only 1 distinct host among the mirror nodes for a minimum of 2");

        await p.fill("#mirrors", witnesses.join("\n"));
        await p.focus("#verify");
        await p.keyboard.press("Enter");
        // The verdict before is cleared at once; the next one replaces it.
        await p.waitForSelector('#verdict:not([data-verdict=""]):not([data-verdict="unverifiable"])', { timeout: 30_000 });
        expect(await p.getAttribute("#verdict", "data-verdict")).toBe("verified_org");
        expect(await focused()).toBe("verdict");
        // The verdict is in the status region a screen reader announces.
        expect(await p.$eval("#verdict", (el) => (el as unknown as { closest(s: string): { getAttribute(n: string): string | null } | null }).closest("[role=status]")?.getAttribute("id"))).toBe("status");
      } finally {
        await context.close();
      }
    },
    60_000,
  );
});
