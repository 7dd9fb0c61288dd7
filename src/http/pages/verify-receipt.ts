/**
 * GET /verify-receipt: the receipt verifier's page (docs/receipts.md §4.4), the same
 * self-contained file as dist/verify-receipt.html. bundle.ts builds it when this module is
 * compiled, so the compiled executable embeds it.
 *
 * The page calls the mirror nodes the visitor lists, and the well-known document of a domain an
 * organisation announces, so unlike the other pages its policy allows
 * `connect-src http: https:`; the script and the style are allowed by their hashes, computed
 * here from the embedded file itself, so the header cannot drift from the page.
 */
import { Elysia } from "elysia";
import { receiptPageHtml } from "./bundle.ts" with { type: "macro" };
import { htmlResponse, receiptPagePolicy } from "./html.ts";

/** The page, built when this module is compiled. */
export const RECEIPT_PAGE: string = receiptPageHtml();
const PAGE = RECEIPT_PAGE;

/** The text of the page's only `<tag>` element. */
function inline(tag: "script" | "style"): string {
  const m = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`).exec(PAGE);
  if (m === null) throw new Error(`the receipt page has no <${tag}>`);
  return m[1]!;
}

export const RECEIPT_PAGE_CSP = `${receiptPagePolicy(inline("script"), inline("style"))}; frame-ancestors 'none'`;

export interface ReceiptPageDeps {
  /** The public documents' per-IP limit (http/access.ts `admitPublic`): throws RATE_LIMITED. */
  readonly access: { admitPublic(request: Request): void };
}

export function receiptPage(deps: ReceiptPageDeps) {
  return new Elysia({ name: "receipt-page" }).get(
    "/verify-receipt",
    async ({ request }) => {
      await deps.access.admitPublic(request);
      return htmlResponse(200, PAGE, RECEIPT_PAGE_CSP);
    },
    {
      detail: {
        tags: ["Pages"],
        operationId: "getReceiptVerifierPage",
        summary: "The receipt verifier (HTML)",
        description:
          "A self-contained page that checks a receipt (GET /verify/{recordId}/receipt) against the document and the ledger's mirror nodes, in the browser: the document is hashed locally and never uploaded; the only requests go to the mirror nodes listed (starting from the verifier's built-in ones for the receipt's network, never the receipt's own) and to the well-known document of a domain the organisation announces, to confirm its identity. The same file is dist/verify-receipt.html. Needs no credential; limited per client IP like anonymous verification.",
        responses: {
          200: { description: "The page", content: { "text/html": { schema: { type: "string" as const } } } },
          429: { description: "Too many requests from this client's address (the anonymous tier's limit); error envelope `RATE_LIMITED`" },
        },
      },
    },
  );
}
