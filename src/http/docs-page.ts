/**
 * The page at `/docs`: Swagger UI (served from the binary, docs.ts), inside landmarks, with a
 * stylesheet and a start script of our own so that it meets WCAG 2.1 AA (axe-core finds nothing,
 * operations closed or open: test/openapi/docs-a11y.test.ts). Swagger UI's own colours for the
 * method badges, links, version badges and buttons fall short of 4.5:1 contrast; its server
 * `select` has no name; long examples scroll where the keyboard cannot.
 */
import { escapeHtml } from "./pages/html.ts";

export const OPENAPI_PATH = "/v1/openapi.json";

/**
 * Swagger UI's start, served as a file so the page needs no inline script. "Try it out" is off
 * (`supportedSubmitMethods: []`): a browser sends `Origin` on a same-origin POST, and /v1 refuses
 * every request carrying `Origin` (docs/access.md "Order of refusals"), so the UI could not call
 * the API; the page shows the equivalent curl command instead (the document's description).
 *
 * Swagger UI renders after load and again as operations open: each time, a control it leaves
 * without a name (the server `select`) gets one, before anyone can reach it.
 */
export const INIT_SCRIPT = `window.addEventListener("load", () => {
  window.ui = SwaggerUIBundle({ dom_id: "#swagger-ui", url: ${JSON.stringify(OPENAPI_PATH)}, validatorUrl: "none", supportedSubmitMethods: [] });
  const root = document.getElementById("swagger-ui");
  const name = () => {
    for (const select of root.querySelectorAll("select:not([aria-label])")) {
      if (select.labels.length > 0 || select.hasAttribute("aria-labelledby")) continue;
      select.setAttribute("aria-label", select.id === "servers" ? "Server" : "Media type");
    }
  };
  new MutationObserver(name).observe(root, { childList: true, subtree: true });
  name();
});
`;

/**
 * Colours with at least 4.5:1 contrast in place of Swagger UI's (white on #61affe is 2.3:1), the
 * same hues darkened; examples wrap instead of scrolling.
 */
export const DOCS_CSS = `body { margin: 0; }
.dv-header { padding: 12px 20px; border-bottom: 1px solid #d8dde7; font-family: sans-serif; }
.dv-header h1 { margin: 0; font-size: 1.25rem; color: #3b4151; }
.dv-header p { margin: 4px 0 0; color: #3b4151; }
.dv-header a, .swagger-ui .info a, .swagger-ui .info .url, .swagger-ui a.nostyle, .swagger-ui .info__license__url .link { color: #1a62b8; }
.swagger-ui .info .title small { background: #5c6370; }
.swagger-ui .info .title small.version-stamp { background: #3b6e00; }
.swagger-ui .btn.authorize { color: #137a4a; border-color: #137a4a; }
.swagger-ui .btn.authorize svg { fill: #137a4a; }
.swagger-ui .opblock.opblock-get .opblock-summary-method { background: #1466b8; }
.swagger-ui .opblock.opblock-post .opblock-summary-method { background: #137a4a; }
.swagger-ui .opblock.opblock-delete .opblock-summary-method { background: #c4161c; }
.swagger-ui .opblock.opblock-head .opblock-summary-method { background: #9012fe; }
.swagger-ui .json-schema-2020-12-expand-deep-button { color: #595959; }
.swagger-ui .highlight-code > .microlight { max-height: none; overflow: visible; white-space: pre-wrap; overflow-wrap: anywhere; }
`;

/** The page: a header naming it, Swagger UI in the main landmark, nothing inline. */
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
<h1>docverify API documentation</h1>
<p>The OpenAPI 3.1 document: <a href="${OPENAPI_PATH}">${OPENAPI_PATH}</a></p>
</header>
<main id="swagger-ui"></main>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/init.js"></script>
</body>
</html>
`;
}
