/**
 * GET /verify/{recordId}: the public page a Record's `verifyUrl` points to (docs/records.md §5). No
 * credential, no /v1 access rules (it is a page for people, opened in a browser, so the `Origin`
 * rule does not apply either). Server-rendered; every byte comes from the binary; a strict
 * Content-Security-Policy allows only the page's own inline style and script, by hash.
 *
 * Shows the facts the service holds: the filename, the hash, who authenticated it and when (the
 * organisation's registered name: the verifyUrl is what an organisation hands out
 * with its document), the status (with a revocation's reason and what a verifier should
 * conclude), the anchor state and the ledger links, and once anchored a link to the record's
 * receipt (docs/receipts.md §2). It does not compute a verdict: that is
 * POST /v1/verifications' job. A box hashes a file in the browser and says whether it is this
 * record's document; of a docverify-signed PDF it hashes the original inside it (the bytes before
 * docverify's update, docs/signing.md "The signed PDF"), offers that original to save (what was
 * signed, without the stamp, which nothing signs), and a signed PDF changed afterwards never
 * matches.
 *
 * It never says more than is true: a record that has not reached consensus is shown as awaiting
 * the ledger (it can still be abandoned), never as valid and in good standing; and on network
 * `local` the ledger is called what it is, a local development ledger, nothing public.
 */
import { Elysia } from "elysia";
import type { LedgerNetwork } from "../../config/index.ts";
import type { Records } from "../../records/service.ts";
import type { PublicRecord } from "../../records/views.ts";
import { isRevocationReason, REVOCATION_MEANINGS } from "../../records/validate.ts";
import { contentSecurityPolicy, escapeHtml as e, htmlResponse, pageHeadStart, timeElement as time } from "./html.ts";
import { browserScript } from "./bundle.ts" with { type: "macro" };

export interface VerifyPageDeps {
  readonly records: Pick<Records, "publicRecord">;
  /**
   * The ledger network records are anchored on (config.ledger.network), named on the page.
   * Omitted: the page names no network and calls nothing public.
   */
  readonly network?: LedgerNetwork;
}

export interface VerifyPageOptions {
  readonly network?: LedgerNetwork;
}

const STYLE = `
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #fff; --muted: #57606a; --line: #d0d7de; --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9198a1; --line: #3d444d; --ok: #3fb950; --bad: #f85149; --warn: #d29922; } }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
main { max-width: 46rem; margin: 0 auto; padding: 1.5rem 1rem 3rem; }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; }
h2 { font-size: 1.15rem; margin: 2rem 0 .5rem; }
h1, h2, dt, .status strong { overflow-wrap: break-word; }
.lead { color: var(--muted); margin: 0 0 1.25rem; }
.status { border: 2px solid var(--line); border-radius: .5rem; padding: .75rem 1rem; margin: 0 0 1.25rem; }
.status.active { border-color: var(--ok); }
.status.revoked { border-color: var(--bad); }
.status.waiting { border-color: var(--warn); }
.notice { border-left: 4px solid var(--warn); padding: .25rem .75rem; margin: 0 0 1.25rem; }
.status strong { display: block; font-size: 1.1rem; }
dl { display: grid; grid-template-columns: minmax(9rem, max-content) minmax(0, 1fr); gap: .4rem 1rem; margin: 0; }
dt { font-weight: 600; }
dd { margin: 0; min-width: 0; overflow-wrap: break-word; }
code { font: .9em ui-monospace, monospace; overflow-wrap: anywhere; }
@media (max-width: 36rem) { dl { grid-template-columns: minmax(0, 1fr); gap: 0; } dd { margin: 0 0 .6rem; } }
a { color: inherit; }
.drop { display: block; border: 2px dashed var(--line); border-radius: .5rem; padding: 1.25rem; text-align: center; cursor: pointer; }
.drop.over, .drop:focus-within { border-color: var(--fg); }
.drop input { display: block; margin: .75rem auto 0; }
#result { min-height: 1.5em; font-weight: 600; overflow-wrap: break-word; }
#result.match { color: var(--ok); }
#result.match.revoked, #result.match.waiting, #result.busy { color: var(--warn); }
#result.mismatch { color: var(--bad); }
footer { margin-top: 2.5rem; color: var(--muted); font-size: .875rem; }
`;

/** The page's script (sign-pages/verify.ts), bundled when this module is compiled (bundle.ts). */
export const VERIFY_SCRIPT: string = browserScript("sign-pages/verify.ts");

const PAGE_CSP = contentSecurityPolicy(STYLE, VERIFY_SCRIPT);

/** The name offered for the original cut out of a signed PDF: the record's filename, else a plain one. */
function originalName(filename: string | null): string {
  const base = filename === null || filename.trim() === "" ? "document.pdf" : filename;
  return /\.pdf$/i.test(base) ? base.replace(/\.pdf$/i, " (original).pdf") : `${base} (original).pdf`;
}
const NOT_FOUND_CSP = contentSecurityPolicy(STYLE);

/** How the page names the ledger of each network. */
const LEDGER_NAME: Readonly<Record<LedgerNetwork, string>> = {
  mainnet: "the public Hedera mainnet ledger",
  testnet: "Hedera testnet, a public test ledger",
  previewnet: "Hedera previewnet, a public preview ledger",
  local: "a local development ledger run alongside this service; nothing about this record is on a public ledger",
};

function anchorText(state: PublicRecord["anchorState"], network: LedgerNetwork | undefined): string {
  switch (state) {
    case "pending":
      return "Pending: stored by this service; the ledger has not yet confirmed receiving it.";
    case "accepted":
      return "Accepted: the ledger accepted the message; consensus is expected within seconds.";
    case "anchored":
      return network === undefined
        ? "Anchored: consensus reached on the ledger; final and permanent."
        : network === "local"
          ? `Anchored: consensus reached on ${LEDGER_NAME.local}.`
          : `Anchored: consensus reached on ${LEDGER_NAME[network]}; final and permanent.`;
  }
}

/** The record's status: revoked, awaiting the ledger, or active (anchored and not revoked). */
type PageStatus = "revoked" | "waiting" | "active";

/**
 * What the page calls each status: the words every page people read uses for the same outcome
 * (docs/verification.md, "Words on the pages"): the receipt page says Valid and Revoked for the
 * same record, the signing page's list says these three. The API's names (`active`, `verified`,
 * `verified_org`, `pending_anchor`) are for machines.
 */
export const STATUS_WORDS: Readonly<Record<PageStatus, string>> = { active: "Valid", revoked: "Revoked", waiting: "Awaiting the ledger" };
function pageStatus(r: PublicRecord): PageStatus {
  if (r.revocation !== null) return "revoked";
  return r.anchorState === "anchored" ? "active" : "waiting";
}

function link(href: string, text: string): string {
  return `<a href="${e(href)}" rel="noopener noreferrer">${e(text)}</a>`;
}

/**
 * The receipt download (docs/receipts.md §2), offered once the record is anchored: before that
 * there is nothing on the ledger to prove it with, and the download would answer 409.
 */
function receiptLink(recordId: string): string {
  const href = `/verify/${encodeURIComponent(recordId)}/receipt`;
  return `<p id="receipt"><a href="${e(href)}" download="${e(`docverify-receipt-${recordId}.json`)}">${e("Download the receipt")}</a>${e(": it proves this record without this service.")}</p>\n`;
}

function statusBlock(r: PublicRecord): string {
  const status = pageStatus(r);
  const word = `<strong>${e(STATUS_WORDS[status])}</strong>`;
  if (status === "active") {
    return r.organisationSuspended
      ? `<div class="status active" role="status">${word}The authentication is anchored on the ledger and has not been revoked, ` +
          `but an administrator of this service has suspended the organisation: it is not in good standing now.</div>`
      : `<div class="status active" role="status">${word}The authentication is in good standing: it is anchored on the ledger and has not been revoked.</div>`;
  }
  if (r.revocation === null) {
    return (
      `<div class="status waiting" role="status">${word}` +
      `Not final yet: the record is stored by this service, but its ledger message has not reached consensus. ` +
      `If the ledger does not confirm it within a few minutes, the record is abandoned and no longer counts. Check again shortly.</div>`
    );
  }
  const reason = r.revocation.reason;
  const meaning = isRevocationReason(reason) ? REVOCATION_MEANINGS[reason] : null;
  return (
    `<div class="status revoked" role="status">${word}` +
    `Revoked on ${time(r.revocation.revokedAt)}. Reason: <code>${e(reason)}</code>` +
    (meaning === null ? "" : ` — ${e(meaning.meaning)} What a verifier should conclude: ${e(meaning.conclusion)}`) +
    `</div>`
  );
}

export function renderVerifyPage(r: PublicRecord, options: VerifyPageOptions = {}): string {
  const { network } = options;
  const org = r.organisationName === null ? null : `<bdi>${e(r.organisationName)}</bdi>`;
  const signer =
    r.signerType === "org"
      ? `${org ?? "An organisation"} <span class="lead">(${org === null ? "" : "its registered name; "}as an organisation, not a named person)</span>`
      : `A person${r.signerHint === null ? "" : `: <bdi>${e(r.signerHint)}</bdi>`}${org === null ? "" : ` <span class="lead">(signed within ${org})</span>`}`;
  const status = pageStatus(r);
  const a = r.anchor;
  const rows: [string, string][] = [
    ["Document", r.filename === null ? `<span class="lead">No file name was given.</span>` : `<bdi>${e(r.filename)}</bdi>`],
    ["Document hash", `<code>${e(r.originalDocHash)}</code>`],
    ["Authenticated by", signer],
    ["Authenticated at", time(r.authenticatedAt)],
    [
      "Status",
      e(STATUS_WORDS[status]) +
        (r.revocation !== null ? ` <span class="lead">(reason <code>${e(r.revocation.reason)}</code>)</span>` : status === "waiting" ? ` <span class="lead">(not final)</span>` : ""),
    ],
    ["Ledger anchor", e(anchorText(r.anchorState, network)) + (a.consensusAt === null ? "" : ` Consensus at ${time(a.consensusAt)}.`)],
    ["Ledger topic", `<code>${e(a.topicId)}</code>`],
    ["Transaction", `${link(a.hashscanUrl, a.transactionId)}${r.anchorState === "anchored" ? "" : ` <span class="lead">(resolves after consensus)</span>`}`],
  ];
  if (a.mirrorNodeUrl !== null && a.sequenceNumber !== null) {
    rows.push(["Ledger message", `${link(a.mirrorNodeUrl, `Message ${a.sequenceNumber} on topic ${a.topicId}`)} <span class="lead">(mirror node)</span>`]);
  }
  return `${pageHead(`Document record ${r.recordId} · docverify`)}
<body>
<main>
<h1>Document authenticity record</h1>
<p class="lead">Record <code>${e(r.recordId)}</code>. The service holds the document's hash, never the document.</p>
${network === "local" ? `<p class="notice" id="local-ledger">This service runs on a local development ledger (network <code>local</code>): nothing here is on a public ledger, and the ledger links point at this service's own machine.</p>\n` : ""}${statusBlock(r)}
<dl>
${rows.map(([k, v]) => `<dt>${e(k)}</dt><dd>${v}</dd>`).join("\n")}
</dl>
${r.anchorState === "anchored" ? receiptLink(r.recordId) : ""}<section id="check" data-hash="${e(r.originalDocHash)}" data-record="${e(r.recordId)}" data-status="${status}" aria-labelledby="check-title" hidden>
<h2 id="check-title">Check a file against this record</h2>
<p>Your browser computes the file's SHA-256 on this computer; the file is not uploaded anywhere. For a PDF signed with docverify, it checks the original document inside it, as it was before the stamp was added.</p>
<label class="drop" id="drop">Choose a file, or drop it here<input type="file" id="file"></label>
<p id="result" aria-live="polite"></p>
<p id="original" hidden><a id="original-link" download="${e(originalName(r.filename))}">Save the original document</a>: the bytes that were signed, without docverify's stamp. What this record vouches for is that document, not the stamp.</p>
</section>
<footer>docverify · the facts on this page are as recorded by this service. Verify a hash through the API (<code>POST /v1/verifications</code>) for a verdict that recomputes every signature.</footer>
</main>
<script>${VERIFY_SCRIPT}</script>
</body>
</html>
`;
}

/** The document head both pages share; `title` is escaped here. */
function pageHead(title: string): string {
  return `${pageHeadStart(title, STYLE)}
</head>`;
}

export function renderNotFoundPage(): string {
  return `${pageHead("No such record · docverify")}
<body>
<main>
<h1>No such record</h1>
<p>This service holds no record with this id. Check the link you followed.</p>
</main>
</body>
</html>
`;
}

const HTML = (description: string) => ({ description, content: { "text/html": { schema: { type: "string" as const } } } });

export function verifyPages(deps: VerifyPageDeps) {
  return new Elysia({ name: "verify-pages" }).get(
    "/verify/:recordId",
    async ({ params }) => {
      const record = await deps.records.publicRecord(params.recordId);
      if (record === null) return htmlResponse(404, renderNotFoundPage(), NOT_FOUND_CSP);
      return htmlResponse(200, renderVerifyPage(record, deps.network === undefined ? {} : { network: deps.network }), PAGE_CSP);
    },
    {
      detail: {
        tags: ["Pages"],
        operationId: "getVerifyPage",
        summary: "Public verification page of a record (HTML)",
        description:
          "The page a Record's `verifyUrl` points to. Needs no credential. Shows the filename, the hash, the organisation's registered name, the signed time, the status in the words every page uses (Valid, Awaiting the ledger, or Revoked with its reason; times in UTC to the second), the anchor state and ledger links, and hashes a dropped file in the browser to compare (of a docverify-signed PDF, the original inside it). " +
          "Once the record is anchored it links to its receipt (GET /verify/{recordId}/receipt). " +
          "An unknown, malformed or abandoned id gets a 404 page.",
        parameters: [{ name: "recordId", in: "path", required: true, schema: { type: "string", format: "uuid" } }],
        responses: { 200: HTML("The record's page"), 404: HTML("No such record") },
      },
    },
  );
}
