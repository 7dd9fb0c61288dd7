/**
 * Build-time code: the two pages' browser scripts, bundled from their TypeScript sources when the
 * module that serves them is compiled. verify-receipt.ts and verify.ts import these functions
 * `with { type: "macro" }`, so Bun runs them as it transpiles (from source) or bundles (`bun build
 * --compile`) and puts the string they return in place of the call: the executable embeds the
 * result and never runs this file, and no generated copy of a source is kept in the repository.
 * scripts/build.ts (dist/verify-receipt.html) and the tests call the same functions directly.
 *
 * What these guarantee:
 * - The bundle is for the browser, one IIFE, minified, and would not end its `<script>` early;
 *   nothing in it calls eval (the pages' policy forbids it).
 * - A failure throws, so a build (or the start from source) fails rather than serving a page
 *   without its script.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { receiptPagePolicy } from "./html.ts";

const SRC = join(import.meta.dir, "..", "..");

/** `entry` (a path below src/) bundled for the browser: the text of one inline script. */
export function browserScript(entry: string): string {
  // Bun.build cannot run inside a macro (the bundler waits on it): the same bundler, as a command.
  const built = Bun.spawnSync([process.execPath, "build", join(SRC, entry), "--target=browser", "--format=iife", "--minify"]);
  if (built.exitCode !== 0) throw new Error(`bundling ${entry} for the browser failed:\n${built.stderr.toString()}`);
  const script = built.stdout.toString().trim();
  // Inside <script>, these would end the element early or change how the rest is parsed.
  for (const bad of ["</script", "<!--", "<script"]) {
    if (script.toLowerCase().includes(bad)) throw new Error(`the bundle of ${entry} contains "${bad}"; it cannot be inlined as is`);
  }
  if (/\beval\(|new Function\(/.test(script)) throw new Error(`the bundle of ${entry} calls eval or new Function, which the pages' Content-Security-Policy forbids`);
  return script;
}

/**
 * The receipt verifier's page (docs/receipts.md §4.4) as one self-contained file: the verifier core
 * and the page's script (verifier/page/browser.ts) bundled and inlined, with the page's style,
 * into verifier/page/template.html under a Content-Security-Policy that allows exactly that
 * script and that style by their SHA-256, and requests to http(s) only (the mirror nodes).
 */
export function receiptPageHtml(): string {
  const pageDir = join(SRC, "verifier", "page");
  const script = browserScript("verifier/page/browser.ts");
  const style = readFileSync(join(pageDir, "style.css"), "utf8").trim();
  const template = readFileSync(join(pageDir, "template.html"), "utf8");
  const slots: Record<string, string> = { CSP: receiptPagePolicy(script, style), STYLE: style, SCRIPT: script };
  // A function replacer: `$&` and friends in the bundle are not replacement patterns.
  return template.replace(/\{\{(CSP|STYLE|SCRIPT)\}\}/g, (_, name: string) => slots[name]!);
}
