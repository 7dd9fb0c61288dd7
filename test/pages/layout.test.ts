/**
 * The pages people read, on a phone (390 px) and on a desktop (1280 px), in light and dark:
 * the public verify page with a file checked, the receipt verifier with a receipt verified, the
 * signing page with the revoke dialog open, and the enrolment page. In every view:
 * - nothing is wider than the screen: the document does not scroll sideways, and no element
 *   (the dialog included) reaches past the viewport's edges;
 * - no ordinary word is broken across two lines ("Doc/um/ent"): only hashes, ids and other
 *   long tokens may wrap anywhere;
 * - times are for people ("15 January 2026, 09:30:00 UTC"), each a <time> whose attributes carry
 *   the exact machine value; no nanosecond timestamp, no ISO time with a fraction of a second;
 * - text contrast passes axe-core's WCAG AA rule (dark mode was never checked on these pages).
 * And one outcome has one name on every page: the verify page and the receipt page say the same
 * word for the same record (docs/verification.md, "Words on the pages"), and the signing page's
 * list uses the same words.
 *
 * The verify and receipt pages come from a real `serve` on a real local ledger with two witnesses
 * (test/receipts/e2e-rig.ts); the signing and enrolment pages from the fake of the /app endpoints
 * the accessibility test uses (test/app-pages/fake-app.ts). One Chromium for the file; each page
 * is put in its state once and then looked at in the four views.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { cleanup, ROOT } from "../support/env.ts";
import { CHROMIUM_ARGS, requireProgram } from "../support/programs.ts";
import { authenticate, deploy, type Deployment, type Held } from "../receipts/e2e-rig.ts";
import { GOOD_TOKEN, recordOf, startFakeApp, type FakeApp } from "../app-pages/fake-app.ts";

const AXE_SOURCE = readFileSync(join(ROOT, "node_modules", "axe-core", "axe.min.js"), "utf8");

const VIEWS = [
  { width: 390, height: 844, scheme: "light" },
  { width: 390, height: 844, scheme: "dark" },
  { width: 1280, height: 800, scheme: "light" },
  { width: 1280, height: 800, scheme: "dark" },
] as const;

/** A time as every human page writes it. */
const HUMAN_TIME = /^\d{1,2} (January|February|March|April|May|June|July|August|September|October|November|December) \d{4}, \d{2}:\d{2}:\d{2} UTC$/;

/**
 * What is wrong with the page as it is laid out now, one line each. Runs in the page (as source:
 * the repository's types have no DOM). A word is a run of letters and digits inside a
 * whitespace-separated token shorter than 20 characters that holds no run of 16 hex digits:
 * longer tokens (hashes, record ids, URLs, long file names) may wrap anywhere; a break after a
 * hyphen or a slash is a normal break, not a broken word.
 */
const FINDINGS = String.raw`(() => {
  const out = [];
  const vw = window.innerWidth;
  const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (typeof el.className === "string" && el.className.trim() !== "" ? "." + el.className.trim().split(/\s+/).join(".") : "");
  const unseen = (el) => el.closest("script, style, template, .vh, .visually-hidden") !== null;
  const sw = document.documentElement.scrollWidth;
  if (sw > vw) out.push("the document is " + sw + " px wide in a " + vw + " px viewport");
  for (const el of document.querySelectorAll("body *")) {
    if (unseen(el)) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (r.left < -1 || r.right > vw + 1) out.push(name(el) + " spans " + Math.round(r.left) + " to " + Math.round(r.right) + " px of " + vw);
  }
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let n = walker.nextNode(); n !== null; n = walker.nextNode()) {
    const parent = n.parentElement;
    if (parent === null || unseen(parent) || parent.closest("textarea, select, option") !== null || parent.getClientRects().length === 0) continue;
    for (const token of n.data.matchAll(/\S+/g)) {
      if (token[0].length >= 20 || /[0-9a-f]{16}/i.test(token[0])) continue;
      for (const word of token[0].matchAll(/[\p{L}\p{N}'’]+/gu)) {
        if (word[0].length < 2) continue;
        const at = token.index + word.index;
        range.setStart(n, at);
        range.setEnd(n, at + word[0].length);
        const tops = [...range.getClientRects()].filter((r) => r.width > 0).map((r) => r.top);
        if (tops.length > 1 && Math.max(...tops) - Math.min(...tops) > 2) out.push("the word " + JSON.stringify(word[0]) + " in " + name(parent) + " is broken across " + tops.length + " lines");
      }
    }
  }
  const text = document.body.innerText;
  // A transaction id (0.0.2@seconds.nanoseconds) is an id, not a time: the lookbehind skips it.
  for (const m of text.matchAll(/(?<![@.\d])\d{9,}\.\d{9}(?!\d)/g)) out.push("a nanosecond timestamp is shown: " + m[0]);
  for (const m of text.matchAll(/\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}\.\d+|\d{2}:\d{2}:\d{2}\.\d+/g)) out.push("a time with a fraction of a second is shown: " + m[0]);
  for (const t of document.querySelectorAll("time")) {
    if (t.getClientRects().length === 0) continue;
    if (!t.hasAttribute("datetime")) out.push("a <time> without datetime: " + t.textContent);
  }
  return out;
})()`;

let browser: Browser;
let d: Deployment;
let kept: Held;
let withdrawn: Held;
let witnesses: string[];
let fake: FakeApp;

beforeAll(async () => {
  browser = await chromium.launch({ executablePath: requireProgram("chromium"), args: CHROMIUM_ARGS });
  d = await deploy("separate");
  kept = await authenticate(d, "contract.pdf");
  withdrawn = await authenticate(d, "withdrawn.pdf");
  await d.revoke(withdrawn.recordId, "SUPERSEDED");
  // Fetched again: the receipt now carries the revocation, final on the ledger.
  writeFileSync(withdrawn.receiptPath, await d.receipt(withdrawn.recordId));
  witnesses = await d.witnesses();
  fake = startFakeApp();
  fake.signedIn = true;
  fake.records = [
    recordOf(fake.base, 1, { anchorState: "pending" }),
    recordOf(fake.base, 2, { anchorState: "accepted", filename: null }),
    recordOf(fake.base, 3, { filename: "Quarterly financial statement for the board of directors.pdf" }),
    recordOf(fake.base, 4, { revocation: { reason: "ERROR_IN_DOCUMENT", revokedAt: "2026-01-16T10:00:00.123Z" } }),
    recordOf(fake.base, 5, { anchorState: "abandoned", filename: "Annual-report-2026-final-version-approved-by-the-council.pdf" }),
  ];
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await cleanup();
});

async function open(url: string): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: VIEWS[0].width, height: VIEWS[0].height } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error" && !/^Failed to load resource: the server responded with a status of 40[14]/.test(m.text())) problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(String(e)));
  await page.goto(url);
  return { page, problems };
}

/** axe-core's colour-contrast violations (WCAG 2 AA) on the page as it is now. */
async function contrast(page: Page): Promise<string[]> {
  // Through the DevTools protocol, which the pages' policies do not govern.
  if (!(await page.evaluate("typeof axe !== 'undefined'"))) await page.evaluate(AXE_SOURCE);
  const result = (await page.evaluate(`axe.run(document, { runOnly: { type: "rule", values: ["color-contrast"] }, resultTypes: ["violations"] })`)) as {
    violations: { nodes: { target: string[]; any: { message: string }[] }[] }[];
  };
  return result.violations.flatMap((v) => v.nodes.map((n) => `contrast: ${n.target.join(" ")}: ${n.any[0]?.message ?? ""}`));
}

/** Every finding on `page` in each of the four views, labelled by view; [] when all is well. */
async function inEveryView(page: Page): Promise<string[]> {
  const all: string[] = [];
  for (const v of VIEWS) {
    await page.setViewportSize({ width: v.width, height: v.height });
    await page.emulateMedia({ colorScheme: v.scheme });
    const found = [...((await page.evaluate(FINDINGS)) as string[]), ...(await contrast(page))];
    all.push(...found.map((f) => `${v.width} px ${v.scheme}: ${f}`));
  }
  return all;
}

const text = async (page: Page, selector: string) => ((await page.textContent(selector)) ?? "").trim();

/** The visible text of each <time> under `selector`, with its datetime and title. */
async function times(page: Page, selector: string): Promise<{ text: string; datetime: string; title: string }[]> {
  return page.$$eval(`${selector} time`, (els) =>
    els.map((el) => {
      const t = el as unknown as { textContent: string | null; getAttribute(n: string): string | null };
      return { text: (t.textContent ?? "").trim(), datetime: t.getAttribute("datetime") ?? "", title: t.getAttribute("title") ?? "" };
    }),
  );
}

/** The text of the verify page's definition of `term` (its <dd>). */
async function definition(page: Page, term: string): Promise<string> {
  const found = await page.evaluate(`[...document.querySelectorAll("dt")].find((x) => x.textContent === ${JSON.stringify(term)})?.nextElementSibling?.textContent ?? ""`);
  return String(found).trim();
}

/** The public verify page of `held`, with `file` checked in its box (a match, or a mismatch showing the file's hash). */
async function verifyPage(held: Held, file: string, result: "match" | "mismatch"): Promise<{ page: Page; problems: string[] }> {
  const opened = await open(`${d.svc.url}/verify/${held.recordId}`);
  await opened.page.waitForSelector("#check:not([hidden])");
  await opened.page.setInputFiles("#file", file);
  await opened.page.waitForSelector(`#result.${result}`, { timeout: 20_000 });
  return opened;
}

/** The receipt verifier served by docverify, with `held`'s receipt and document verified against the two witnesses. */
async function receiptPage(held: Held): Promise<{ page: Page; problems: string[] }> {
  const opened = await open(`${d.svc.url}/verify-receipt`);
  const { page } = opened;
  await page.setInputFiles("#receipt", held.receiptPath);
  await page.waitForSelector("#receipt-info:not(:empty)");
  await page.setInputFiles("#document", held.documentPath);
  await page.fill("#mirrors", witnesses.join("\n"));
  await page.click("#verify");
  await page.waitForSelector("#verdict:not(:empty), #progress.error", { timeout: 30_000 });
  expect(await text(page, "#progress")).toBe("");
  await page.waitForSelector("#checks:not([hidden])");
  return opened;
}

/** The signing page, signed in with records in every state, the revoke dialog open on the anchored one. */
async function signPageWithDialog(): Promise<{ page: Page; problems: string[] }> {
  const opened = await open(`${fake.base}/sign`);
  const { page } = opened;
  await page.waitForSelector("#records:not([hidden])");
  await page.click("#records-body button");
  await page.waitForSelector("#revoke-dialog[open]");
  return opened;
}

/** The headline word of an outcome: what a page says before any comma or parenthesis. */
const word = (headline: string) => headline.split(/[,(:.]/)[0]!.trim();

describe("each page at 390 px and 1280 px, light and dark: nothing wider than the screen, no word broken, times for people, enough contrast", () => {
  test("the verify page of a valid record with its document checked (a match), and of a revoked one with another file (no match: its hash shown)", async () => {
    for (const [held, file, result] of [
      [kept, kept.documentPath, "match"],
      [withdrawn, kept.documentPath, "mismatch"],
    ] as const) {
      const { page, problems } = await verifyPage(held, file, result);
      expect([held.recordId, await inEveryView(page)]).toEqual([held.recordId, []]);
      for (const t of await times(page, "main")) expect(t.text).toMatch(HUMAN_TIME);
      expect(problems).toEqual([]);
      await page.context().close();
    }
  }, 60_000);

  test("the receipt verifier with a receipt verified: valid, and revoked on the ledger", async () => {
    for (const held of [kept, withdrawn]) {
      const { page, problems } = await receiptPage(held);
      expect([held.recordId, await inEveryView(page)]).toEqual([held.recordId, []]);
      const shown = await times(page, "#status");
      expect(shown.length).toBeGreaterThan(0);
      for (const t of shown) expect(t.text).toMatch(HUMAN_TIME);
      // The checks' details name consensus times too: for people, with the exact value kept.
      const inChecks = await times(page, "#check-rows");
      expect(inChecks.length).toBeGreaterThan(0);
      for (const t of inChecks) expect([t.text, t.title]).toEqual([expect.stringMatching(HUMAN_TIME), expect.stringMatching(/^\d{9,}\.\d{9}$|^\d{4}-\d{2}-\d{2}T/)]);
      expect(problems).toEqual([]);
      await page.context().close();
    }
  }, 60_000);

  test("the signing page, signed in with records in every state, the revoke dialog open", async () => {
    const { page, problems } = await signPageWithDialog();
    const findings = await inEveryView(page);
    expect(findings).toEqual([]);
    // The dialog fits on a phone, whole.
    await page.setViewportSize({ width: 390, height: 844 });
    const box = (await page.locator("#revoke-dialog").boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(390);
    for (const t of await times(page, "#records-body")) expect([t.text, t.datetime]).toEqual([expect.stringMatching(HUMAN_TIME), expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/)]);
    expect(await text(page, "#revoke-what")).toContain("signed 15 January 2026, 09:33:00 UTC.");
    expect(problems).toEqual([]);
    await page.context().close();
  }, 60_000);

  test("the enrolment page", async () => {
    const { page, problems } = await open(`${fake.base}/enrol/${GOOD_TOKEN}`);
    await page.waitForSelector("#enrol");
    expect(await inEveryView(page)).toEqual([]);
    expect(problems).toEqual([]);
    await page.context().close();
  }, 60_000);
});

describe("one word for one outcome, one way to write a time", () => {
  test("the verify page and the receipt page call the same record the same (Valid, Revoked) and show its times alike; the signing page's list uses the same words; the API's names only as detail", async () => {
    const seen: Record<string, { verify: string; receipt: string; status: string }> = {};
    for (const [held, outcome] of [
      [kept, "valid"],
      [withdrawn, "revoked"],
    ] as const) {
      const v = await verifyPage(held, held.documentPath, "match");
      const r = await receiptPage(held);
      // The time the record was authenticated, on both pages: the same words, the same instant.
      const verifySigned = (await v.page.evaluate(`(() => {
        const dt = [...document.querySelectorAll("dt")].find((x) => x.textContent === "Authenticated at");
        const t = dt.nextElementSibling.querySelector("time");
        return [t.textContent, t.getAttribute("datetime")];
      })()`)) as [string, string];
      const receiptSigned = (await times(r.page, "#signed"))[0]!;
      expect([receiptSigned.text, receiptSigned.datetime]).toEqual(verifySigned);
      expect(verifySigned[0]).toMatch(HUMAN_TIME);
      seen[outcome] = { verify: await text(v.page, ".status strong"), receipt: await text(r.page, "#verdict"), status: await definition(v.page, "Status") };
      // The receipt page names the verifier's verdict too, for machines and people who compare with --json, only as code.
      expect(await text(r.page, "#verdict-code")).toBe(outcome === "valid" ? "verified_org" : "revoked");
      if (outcome === "revoked") {
        const onVerify = await times(v.page, ".status");
        const onReceipt = await times(r.page, "#revocation");
        expect(onVerify.length).toBe(1);
        // The same revocation time, first on both; the receipt page adds its consensus time on the ledger.
        expect(onReceipt[0]).toEqual(onVerify[0]!);
        for (const t of onReceipt) expect(t.text).toMatch(HUMAN_TIME);
      }
      for (const p of [v, r]) {
        // The other names this outcome had: none is a word on either page.
        expect((await p.page.evaluate("document.body.innerText")) as string).not.toMatch(/\bActive\b|\bVerified\b/);
        expect(p.problems).toEqual([]);
        await p.page.context().close();
      }
    }
    expect(seen.valid!.verify).toBe("Valid");
    expect(word(seen.valid!.receipt)).toBe("Valid");
    expect(word(seen.valid!.status)).toBe("Valid");
    expect(seen.revoked!.verify).toBe("Revoked");
    expect(word(seen.revoked!.receipt)).toBe("Revoked");
    expect(word(seen.revoked!.status)).toBe("Revoked");

    // The signing page's list: the same word for each state.
    const { page, problems } = await open(`${fake.base}/sign`);
    await page.waitForSelector("#records:not([hidden])");
    const states = await page.$$eval("#records-body td[data-state]", (cells) => cells.map((c) => [(c as unknown as { getAttribute(n: string): string }).getAttribute("data-state"), ((c as unknown as { textContent: string }).textContent ?? "").trim()]));
    expect(states.map(([state, words]) => [state, word(words!)])).toEqual([
      ["pending", "Awaiting the ledger"],
      ["accepted", "Awaiting the ledger"],
      ["anchored", "Valid"],
      ["revoked", "Revoked"],
      ["abandoned", "Not recorded"],
    ]);
    expect(problems).toEqual([]);
    await page.context().close();
  }, 60_000);
});

