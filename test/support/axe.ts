/**
 * axe-core 4.14 from node_modules, run in a page of headless Chromium (playwright-core): the
 * accessibility checks of the enrolment and signing pages (test/app-pages/a11y.test.ts) and of
 * the documentation page (test/openapi/docs-a11y.test.ts). Nothing is fetched: the engine is
 * injected through the DevTools protocol.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "bun:test";
import type { Page } from "playwright-core";
import { ROOT } from "./env.ts";

const AXE_SOURCE = readFileSync(join(ROOT, "node_modules", "axe-core", "axe.min.js"), "utf8");
/** WCAG 2.0 and 2.1, levels A and AA. */
export const WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];

/** Which of axe's rules run: by tag (WCAG 2.1 AA by default) or by rule id. */
export type RunOnly = { type: "tag" | "rule"; values: readonly string[] };

/** axe-core's violations of those rules (WCAG 2.1 AA by default) on the page as it is now, one line each. */
export async function violations(page: Page, runOnly: RunOnly = { type: "tag", values: WCAG_TAGS }): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's policy (scripts from 'self' only) does not govern.
  if (!(await page.evaluate("typeof axe !== 'undefined'"))) await page.evaluate(AXE_SOURCE);
  const result = (await page.evaluate(`axe.run(document, { runOnly: ${JSON.stringify(runOnly)}, resultTypes: ["violations"] })`)) as {
    violations: { id: string; help: string; nodes: { target: string[] }[] }[];
  };
  return result.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.length} nodes: ${v.nodes.map((n) => n.target.join(" ")).join(", ")})`);
}

/** Fails, listing every violation, unless axe finds none. */
export async function expectClean(page: Page, what: string, runOnly?: RunOnly): Promise<void> {
  expect([what, await violations(page, runOnly)]).toEqual([what, []]);
}
