/**
 * Accessibility of the documentation page at /docs (Swagger UI, served by the binary itself:
 * src/http/docs-page.ts) in headless Chromium: axe-core's WCAG 2.0/2.1 A and AA rules find
 * nothing as the page opens, with operations expanded and with a schema opened; nor do axe's rules
 * on landmarks and heading order. The page logs no error. (Swagger UI 5 has one colour scheme
 * whatever the browser prefers: its dark mode is a switch this page does not offer.)
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chromium, type Browser, type Page } from "playwright-core";
import { expectClean, type RunOnly } from "../support/axe.ts";
import { cleanup, startService, type ServiceProcess } from "../support/env.ts";
import { CHROMIUM_ARGS, requireProgram } from "../support/programs.ts";

/** Structure beyond WCAG's A/AA tags (axe's best practices): one main, every part in a landmark, no heading level skipped. */
const STRUCTURE: RunOnly = {
  type: "rule",
  values: ["region", "landmark-one-main", "landmark-unique", "landmark-no-duplicate-main", "landmark-main-is-top-level", "landmark-no-duplicate-banner", "heading-order", "page-has-heading-one"],
};

let browser: Browser;
let svc: ServiceProcess;
beforeAll(async () => {
  svc = await startService();
  browser = await chromium.launch({ executablePath: requireProgram("chromium"), args: CHROMIUM_ARGS });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await cleanup();
});

async function open(colorScheme: "light" | "dark"): Promise<{ page: Page; problems: string[] }> {
  const page = await (await browser.newContext({ colorScheme })).newPage();
  const problems: string[] = [];
  page.on("console", (m) => void (m.type() === "error" && problems.push(m.text())));
  page.on("pageerror", (e) => problems.push(String(e)));
  await page.goto(`${svc.url}/docs`);
  await page.waitForSelector(".swagger-ui .info .title", { timeout: 15_000 });
  await page.waitForSelector(".opblock", { timeout: 15_000 });
  return { page, problems };
}

describe("/docs", () => {
  for (const scheme of ["light"] as const) {
    test(`0 violations: as it opens, with operations expanded, with a schema opened`, async () => {
      const { page, problems } = await open(scheme);
      await expectClean(page, `closed (${scheme})`);
      await expectClean(page, `closed, structure (${scheme})`, STRUCTURE);
      expect(await page.getAttribute("#servers", "aria-label")).toBe("Server");

      // One operation of each method opened: a POST with a request body, a GET with query parameters (one a list of values), a HEAD, a DELETE.
      for (const op of ["#operations-Verifications-verifyDocument", "#operations-Verifications-listVerifications", "#operations-Receipts-headPublicReceipt", ".opblock-delete"]) {
        await page.click(`${op} .opblock-summary`);
        await page.waitForSelector(`${op} .opblock-body`, { timeout: 15_000 });
      }
      expect(await page.textContent("#operations-Receipts-headPublicReceipt .opblock-body")).toContain("curl -sI");
      await expectClean(page, `operations expanded (${scheme})`);
      await expectClean(page, `operations expanded, structure (${scheme})`, STRUCTURE);

      // A schema in the Schemas section, opened.
      const schema = page.locator(".models article.json-schema-2020-12").filter({ hasText: "VerificationPage" }).first();
      await schema.locator(".json-schema-2020-12-expand-deep-button").click();
      await schema.locator(".json-schema-2020-12-body:not(.json-schema-2020-12-body--collapsed)").first().waitFor({ timeout: 15_000 });
      await expectClean(page, `schema opened (${scheme})`);
      expect(problems).toEqual([]);
      await page.context().close();
    }, 60_000);
  }
});
