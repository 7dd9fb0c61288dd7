/**
 * Writes src/http/pages/verify-receipt.html: the receipt verifier's page (docs/receipts.md §4.4) as ONE self-contained file. The verifier core and the page's script
 * (src/verifier/page/browser.ts) are bundled for the browser, minified, and inlined with the
 * page's style into src/verifier/page/template.html, under a Content-Security-Policy that allows
 * exactly that script and that style by their SHA-256 and network requests to http(s) only (the
 * mirror nodes). The file is committed: the server embeds it (`GET /verify-receipt`) and
 * `npm run build` copies it to dist/. `--check` exits 1 when the committed file differs from
 * what would be written (test/receipts/page.test.ts runs it).
 *
 *   bun scripts/build-verify-page.ts [--check] [--out FILE]
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { receiptPagePolicy } from "../src/http/pages/html.ts";

const root = join(import.meta.dir, "..");
const pageDir = join(root, "src", "verifier", "page");
const target = join(root, "src", "http", "pages", "verify-receipt.html");

export async function renderPage(): Promise<string> {
  const built = await Bun.build({
    entrypoints: [join(pageDir, "browser.ts")],
    target: "browser",
    format: "iife",
    minify: true,
    sourcemap: "none",
  });
  if (!built.success) throw new AggregateError(built.logs, "bundling the page's script failed");
  if (built.outputs.length !== 1) throw new Error(`expected one bundle, got ${built.outputs.length}`);
  const script = (await built.outputs[0]!.text()).trim();
  // Inside <script>, these would end the element early or change how the rest is parsed.
  for (const bad of ["</script", "<!--", "<script"]) {
    if (script.toLowerCase().includes(bad)) throw new Error(`the bundled script contains "${bad}"; it cannot be inlined as is`);
  }
  const style = readFileSync(join(pageDir, "style.css"), "utf8").trim();
  const template = readFileSync(join(pageDir, "template.html"), "utf8");
  const slots: Record<string, string> = { CSP: receiptPagePolicy(script, style), STYLE: style, SCRIPT: script };
  // A function replacer: `$&` and friends in the bundle are not replacement patterns.
  const html = template.replace(/\{\{(CSP|STYLE|SCRIPT)\}\}/g, (_, name: string) => slots[name]!);
  return html;
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const outAt = args.indexOf("--out");
  const out = outAt >= 0 ? args[outAt + 1] : target;
  if (out === undefined) throw new Error("--out needs a file");
  const html = await renderPage();
  if (args.includes("--check")) {
    const current = existsSync(out) ? readFileSync(out, "utf8") : "";
    if (current !== html) {
      console.error("src/http/pages/verify-receipt.html is out of date; run npm run build:page");
      process.exit(1);
    }
  } else {
    writeFileSync(out, html);
    console.log(`wrote ${out} (${html.length} bytes)`);
  }
}
