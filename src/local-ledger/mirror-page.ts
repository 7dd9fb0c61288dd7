/**
 * The mirror's HTML: one plain page per transaction, for the product's explorer links
 * (`hashscanUrl` of a local record), and the ledger's front page.
 *
 * Guarantees: every value shown goes through `escapeHtml`; a page runs no script and loads
 * nothing (a strict Content-Security-Policy allows only its one inline style, by hash); each says
 * that nothing on this ledger is public.
 */
import { createHash } from "node:crypto";
import { base64, entityId, formatTimestamp, hex, mirrorTransactionId } from "./ids.ts";
import type { TxRow } from "./rows.ts";
import { NODE_ACCOUNT } from "./rules.ts";
import type { LedgerStore } from "./store.ts";

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c);
}

const STYLE =
  "body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}" +
  "h1{font-size:1.3rem}.note{background:#fff4d6;border:1px solid #e0c060;padding:.5rem .8rem}" +
  "table{border-collapse:collapse;width:100%}th,td{text-align:left;vertical-align:top;padding:.3rem .6rem;border-bottom:1px solid #ddd}" +
  "th{width:14rem;font-weight:600}code,pre{font:13px ui-monospace,monospace;word-break:break-all;white-space:pre-wrap}";
// The page runs no script and loads nothing; the one inline style is allowed by its hash.
const CSP = `default-src 'none'; style-src 'sha256-${createHash("sha256").update(STYLE).digest("base64")}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

export function page(status: number, title: string, body: string): Response {
  const html =
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>` +
    `<p class="note">Local ledger: this record exists only on this machine's local Hedera ledger. Nothing here is public.</p>` +
    `${body}</body></html>`;
  return new Response(html, {
    status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": CSP,
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
    },
  });
}

function row(label: string, value: string, code = false): string {
  return `<tr><th>${escapeHtml(label)}</th><td>${code ? `<code>${escapeHtml(value)}</code>` : escapeHtml(value)}</td></tr>`;
}

/**
 * The page of the transactions one id names: `found` is what the id found (final transactions
 * only), or null when the text is not a transaction id. `resultName` is mirror-views.ts's, passed
 * in so that this file (the front page) loads no protobuf classes.
 */
export function transactionPage(store: LedgerStore, idText: string, found: readonly TxRow[] | null, resultName: (code: number | null) => string): Response {
  if (found === null || found.length === 0) {
    const why = found === null ? "This is not a transaction id." : "No transaction with this id has reached consensus on this ledger.";
    return page(found === null ? 400 : 404, "Transaction not found", `<h1>Transaction not found</h1><p>${escapeHtml(why)}</p>`);
  }
  const sections = found.map((tx) => {
    const id = mirrorTransactionId(tx.payer, tx.validStart);
    const rows = [
      row("Transaction ID", id, true),
      row("Type", tx.type),
      row("Result", resultName(tx.result)),
      row("Consensus timestamp", tx.consensus ? `${formatTimestamp(tx.consensus)} (${new Date(tx.consensus.seconds * 1000).toISOString()})` : ""),
      row("Payer", entityId(tx.payer)),
      row("Node", entityId(NODE_ACCOUNT)),
      row("Valid start", formatTimestamp(tx.validStart)),
      row("Charged fee", `${tx.chargedFee ?? 0} tinybars`),
      row("Transaction hash (SHA-384)", hex(tx.transactionHash), true),
      row("Memo", new TextDecoder().decode(tx.memo)),
    ];
    let links = `<a href="/api/v1/transactions/${encodeURIComponent(id)}">JSON</a>`;
    if (tx.entityNum != null) rows.push(row("Topic", entityId(tx.entityNum)));
    const message = tx.type === "CONSENSUSSUBMITMESSAGE" && tx.topicSequenceNumber != null && tx.entityNum != null ? store.getMessage(tx.entityNum, tx.topicSequenceNumber) : null;
    let messageHtml = "";
    if (message) {
      rows.push(row("Sequence number", String(message.sequenceNumber)));
      rows.push(row("Running hash", hex(message.runningHash), true));
      rows.push(row("Running hash version", String(message.runningHashVersion)));
      const text = new TextDecoder("utf-8", { fatal: false }).decode(message.message);
      messageHtml =
        `<h2>Message (${message.message.length} bytes)</h2><pre>${escapeHtml(text)}</pre>` +
        `<h3>Base64</h3><pre>${escapeHtml(base64(message.message))}</pre>`;
      links += ` · <a href="/api/v1/topics/${encodeURIComponent(entityId(message.topicNum))}/messages/${message.sequenceNumber}">message JSON</a>`;
    }
    return `<h1>Transaction ${escapeHtml(id)}</h1><table>${rows.join("")}</table>${messageHtml}<p>${links}</p>`;
  });
  return page(200, `Transaction ${idText}`, sections.join("<hr>"));
}
