/**
 * A forged receipt on the verify page (the receipt page saved and opened from disk in
 * Chromium; docs/receipts.md §3): the forger's own keys, a document nobody authenticated, a claimed
 * organisation name with a right-to-left override in it, and "mirror nodes" of the forger's
 * (test/support/forgery.ts) suggested by the receipt.
 *
 * Used as it comes (the receipt and the document, the mirror field as the page fills it) the page
 * never says verified: the field starts with the page's own mirror nodes for the receipt's network,
 * never the receipt's, and is empty for a local-ledger receipt. With the forger's machines typed in,
 * one address under two ports or two names is one witness, and two addresses give a ledger proof
 * whose maker the page headlines as not confirmed and labels a claim, its text made safe.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { builtinMirrors } from "../../src/verifier/trust.ts";
import { cleanup, tempDir } from "../support/env.ts";
import { forgeReceipt, startForgerMirrors, type Forgery, type ForgerMirrors, type MirrorLayout } from "../support/forgery.ts";
import { pageOnDisk, sharedBrowser } from "./e2e-rig.ts";

afterAll(cleanup);

/** A name that, shown raw, would display its end reversed ("plc.exe" as "exe.clp"). */
const NAME = "Northwind Bank \u202Eexe.clp";
const ESCAPED = "Northwind Bank \\u{202e}exe.clp";
const CLAIM = { orgId: randomUUID(), name: NAME };

interface Seen {
  /** The mirror field as the page filled it from the receipt. */
  readonly startingMirrors: string;
  readonly suggested: string;
  readonly useSuggestedShown: boolean;
  readonly verdict: string | null;
  readonly identity: string | null;
  readonly headline: string;
  readonly ledgerNotice: string;
  readonly organisation: string;
  readonly checks: { name: string; status: string; detail: string }[];
  readonly pageText: string;
  readonly requests: string[];
}

const $text = (page: Page, selector: string) => page.textContent(selector).then((t) => t ?? "");

/** Opens the page from disk, chooses the two files, types `mirrors` if given (else leaves the field as filled), presses Verify. */
async function onThePage(forgery: Forgery, mirrors?: readonly string[]): Promise<Seen> {
  const dir = tempDir("docverify-forged-");
  const receiptPath = join(dir, `docverify-receipt-${forgery.recordId}.json`);
  const documentPath = join(dir, "contract.pdf");
  writeFileSync(receiptPath, JSON.stringify(forgery.receipt, null, 2));
  writeFileSync(documentPath, forgery.document);
  const context = await (await sharedBrowser()).newContext();
  try {
    const page = await context.newPage();
    const url = pageOnDisk();
    const requests: string[] = [];
    page.on("request", (r) => {
      if (r.url() !== url) requests.push(r.url());
    });
    await page.goto(url);
    await page.setInputFiles("#receipt", receiptPath);
    await page.waitForSelector("#receipt-info:not(:empty)");
    const startingMirrors = await page.inputValue("#mirrors");
    await page.setInputFiles("#document", documentPath);
    if (mirrors !== undefined) await page.fill("#mirrors", mirrors.join("\n"));
    await page.click("#verify");
    await page.waitForSelector("#verdict:not(:empty), #progress.error", { timeout: 30_000 });
    const checks = await page.$$eval("#check-rows tr", (rows) =>
      rows.map((r) => {
        const row = r as unknown as { getAttribute(n: string): string | null; children: ArrayLike<{ textContent: string | null }> };
        return { name: row.getAttribute("data-check") ?? "", status: row.children[0]!.textContent ?? "", detail: row.children[2]!.textContent ?? "" };
      }),
    );
    return {
      startingMirrors,
      suggested: await $text(page, "#suggested"),
      useSuggestedShown: await page.isVisible("#use-suggested"),
      verdict: await page.getAttribute("#verdict", "data-verdict"),
      identity: await page.getAttribute("#verdict", "data-identity"),
      headline: await $text(page, "#verdict"),
      ledgerNotice: await $text(page, "#ledger-notice"),
      organisation: await $text(page, "#organisation"),
      checks,
      pageText: await $text(page, "body"),
      requests,
    };
  } finally {
    await context.close();
  }
}

const detail = (seen: Seen, name: string) => seen.checks.find((c) => c.name === name)?.detail ?? `(no ${name} check)`;

describe("a forged receipt on the verify page", () => {
  let mainnet: Forgery;
  let local: Forgery;
  const mirrors: Partial<Record<MirrorLayout, ForgerMirrors>> = {};

  beforeAll(async () => {
    mainnet = forgeReceipt({ network: "mainnet", claim: CLAIM });
    local = forgeReceipt({ network: "local", claim: CLAIM });
    for (const layout of ["two-ports", "two-names", "two-hosts"] as const) mirrors[layout] = startForgerMirrors([mainnet.topic, local.topic], layout);
    mainnet.receipt.mirrorNodes = mirrors["two-hosts"]!.urls;
    local.receipt.mirrorNodes = mirrors["two-hosts"]!.urls;
    await sharedBrowser();
  }, 30_000);

  test("mainnet, as the page fills it: the built-in mainnet mirror nodes, not the receipt's; never verified, the forger's mirrors never asked", async () => {
    const seen = await onThePage(mainnet);
    expect(seen.startingMirrors).toBe(builtinMirrors("mainnet").join("\n"));
    for (const url of mainnet.receipt.mirrorNodes as string[]) {
      expect(seen.startingMirrors).not.toContain(url);
      expect(seen.suggested).toContain(url);
    }
    expect(seen.suggested).toContain("they are asked only if you add them");
    expect(seen.useSuggestedShown).toBe(true);
    expect([seen.verdict, seen.headline]).toEqual(["unverifiable", "Could not be verified"]);
    expect(seen.organisation).toStartWith("Organisation: not established");
    expect(seen.pageText).not.toContain("Northwind");
    expect(mirrors["two-hosts"]!.requests).toEqual([]);
    expect(seen.requests.filter((r) => r.startsWith("http://127.0.0."))).toEqual([]);
  });

  test("local, as the page fills it: an empty mirror field; unverifiable, saying to name the local ledger's mirror nodes, proving nothing publicly", async () => {
    const seen = await onThePage(local);
    expect(seen.startingMirrors).toBe("");
    expect(seen.suggested).toContain("A local-ledger receipt has no built-in mirror nodes: name the local ledger's (it proves nothing publicly).");
    expect(seen.verdict).toBe("unverifiable");
    expect(seen.headline).toBe("Could not be verified (local development ledger: proves nothing publicly)");
    expect(seen.ledgerNotice).toContain("this proves nothing publicly");
    expect(detail(seen, "mirrors")).toStartWith("network local has no built-in mirror nodes: name the local ledger's in the mirror node field");
    expect(seen.requests).toEqual([]);
    expect(mirrors["two-hosts"]!.requests).toEqual([]);
  });

  for (const layout of ["two-ports", "two-names"] as const) {
    test(`the forger's ${layout === "two-ports" ? "two ports of one address" : "localhost and 127.0.0.1"} typed in: one host, unverifiable`, async () => {
      const seen = await onThePage(mainnet, mirrors[layout]!.urls);
      expect(seen.verdict).toBe("unverifiable");
      expect(detail(seen, "mirrors")).toStartWith("only 1 distinct host among the mirror nodes for a minimum of 2");
    });
  }

  test("the forger's 127.0.0.2 and 127.0.0.3 typed in: who made it is not confirmed, the name a claim, its override character escaped", async () => {
    const seen = await onThePage(mainnet, mirrors["two-hosts"]!.urls);
    expect([seen.verdict, seen.identity]).toEqual(["verified_org", "unconfirmed"]);
    expect(seen.headline).toBe("Valid, but who made it is not confirmed");
    expect(seen.organisation).toStartWith(`Organisation: unconfirmed claim. The ledger announcement claims ${ESCAPED}`);
    expect(seen.organisation).toContain("Anyone can announce any name on a ledger topic of their own");
    expect(detail(seen, "keyAnnouncement")).toContain(`an organisation calling itself "${ESCAPED}"`);
    expect(detail(seen, "identity")).toStartWith("unconfirmed: ");
    // Nowhere on the page is the override character itself.
    expect(seen.pageText).not.toContain("\u202E");
    expect(seen.checks.map((c) => c.detail).join("\n")).not.toContain("\u202E");
  });

  test("the forged local receipt with the forger's two hosts typed in: not confirmed, and proving nothing publicly", async () => {
    const seen = await onThePage(local, mirrors["two-hosts"]!.urls);
    expect([seen.verdict, seen.identity]).toEqual(["verified_org", "unconfirmed"]);
    expect(seen.headline).toBe("Valid, but who made it is not confirmed (local development ledger: proves nothing publicly)");
    expect(seen.ledgerNotice).toContain("this proves nothing publicly");
    expect(seen.organisation).toStartWith(`Organisation: unconfirmed claim. The ledger announcement claims ${ESCAPED}`);
    expect(seen.pageText).not.toContain("\u202E");
  });
});
