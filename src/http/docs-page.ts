/**
 * The page at `/docs`: Swagger UI (served from the binary, docs.ts) below a header, with a
 * stylesheet and a start script of our own so that it meets WCAG 2.1 AA (axe-core finds nothing,
 * operations closed or open: test/openapi/docs-a11y.test.ts). Swagger UI's own colours for the
 * method badges, links, version badges and buttons fall short of 4.5:1 contrast; its server
 * `select` has no name; its headings skip a level; its operations are a `<main>` that leaves the
 * description and server choice outside any landmark; long examples scroll where the keyboard
 * cannot.
 */
import { escapeHtml } from "./pages/html.ts";

export const OPENAPI_PATH = "/v1/openapi.json";

/**
 * Swagger UI's start, served as a file so the page needs no inline script. "Try it out" is off
 * (`supportedSubmitMethods: []`): a browser sends `Origin` on a same-origin POST, and /v1 refuses
 * every request carrying `Origin` (docs/access.md "Order of refusals"), so the UI could not call
 * the API; the page shows the equivalent curl command instead (the document's description).
 *
 * Swagger UI renders after load and again as operations open: each time, what it leaves without a
 * name or a landmark gets one, and its headings their level, before anyone can reach them (the
 * observer runs before the browser next paints).
 */
export const INIT_SCRIPT = `window.addEventListener("load", () => {
  window.ui = SwaggerUIBundle({ dom_id: "#swagger-ui", url: ${JSON.stringify(OPENAPI_PATH)}, validatorUrl: "none", supportedSubmitMethods: [] });
  const root = document.getElementById("swagger-ui");
  const mend = () => {
    // The server select sits in a label without text; a parameter's select (its values) has none.
    for (const select of root.querySelectorAll("select:not([aria-label])")) {
      const param = select.closest("tr[data-param-name]");
      const name = select.id === "servers" ? "Server" : param !== null ? "Parameter " + param.getAttribute("data-param-name") : null;
      if (name !== null) select.setAttribute("aria-label", name);
    }
    // Swagger UI's operations are the page's <main>; its description and server choice, above them, are regions of their own.
    for (const [selector, label] of [[".information-container", "About this API"], [".scheme-container", "Server"]]) {
      const region = root.querySelector(selector + ":not([role])");
      if (region === null) continue;
      region.setAttribute("role", "region");
      region.setAttribute("aria-label", label);
    }
    // Each operation's responses table is a region: named after its operation, so that no two share a name.
    for (const table of root.querySelectorAll("[role=region].responses-table:not([aria-label])")) {
      const op = table.closest(".opblock");
      const what = op === null ? "" : [".opblock-summary-method", ".opblock-summary-path"].map((s) => op.querySelector(s)?.textContent ?? "").join(" ").trim();
      table.setAttribute("aria-label", "Responses of " + (what || table.id));
    }
    // Swagger UI's title is an h1 and its sections start at h3: each heading below the title one level up, so none is skipped.
    for (const h of root.querySelectorAll("h3:not([aria-level]), h4:not([aria-level]), h5:not([aria-level]), h6:not([aria-level])")) h.setAttribute("aria-level", String(Number(h.tagName[1]) - 1));
  };
  new MutationObserver(mend).observe(root, { childList: true, subtree: true });
  mend();
});
`;

/**
 * Colours with at least 4.5:1 contrast in place of Swagger UI's (white on #61affe is 2.3:1), the
 * same hues darkened; examples wrap instead of scrolling.
 */
export const DOCS_CSS = `body { margin: 0; }
.dv-header { padding: 12px 20px; border-bottom: 1px solid #d8dde7; font-family: sans-serif; }
.dv-header p { margin: 0; color: #3b4151; }
.dv-header a, .swagger-ui .info a, .swagger-ui .info .url, .swagger-ui .info__license__url .link { color: #1a62b8; }
.swagger-ui .info .title small { background: #5c6370; }
.swagger-ui .info .title small.version-stamp { background: #3b6e00; }
.swagger-ui .btn.authorize { color: #137a4a; border-color: #137a4a; }
.swagger-ui .btn.authorize svg { fill: #137a4a; }
.swagger-ui .opblock.opblock-get .opblock-summary-method { background: #1466b8; }
.swagger-ui .opblock.opblock-post .opblock-summary-method { background: #137a4a; }
.swagger-ui .opblock.opblock-delete .opblock-summary-method { background: #c4161c; }
.swagger-ui .opblock.opblock-head .opblock-summary-method { background: #9012fe; }
.swagger-ui .json-schema-2020-12-expand-deep-button, .swagger-ui .parameter__in { color: #595959; }
.swagger-ui .renderedMarkdown code { color: #5d0ca8; }
.swagger-ui .json-schema-2020-12__constraint--string { background-color: #8a5a00; }
.swagger-ui .json-schema-2020-12__attribute--muted { color: #595959; }
.swagger-ui .json-schema-2020-12__attribute--warning { color: #c4161c; }
.swagger-ui .highlight-code > .microlight { max-height: none; overflow: visible; white-space: pre-wrap; overflow-wrap: anywhere; }
`;

/** The page: a header (banner) naming it, then Swagger UI (its title the h1, its operations the main landmark), nothing inline. */
export function docsPage(version: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>docverify ${escapeHtml(version)}: API documentation</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="stylesheet" href="/docs/assets/docverify.css">
</head>
<body>
<header class="dv-header">
<p>docverify API documentation. The OpenAPI 3.1 document: <a href="${OPENAPI_PATH}">${OPENAPI_PATH}</a></p>
</header>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/init.js"></script>
</body>
</html>
`;
}
