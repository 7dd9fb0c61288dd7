/**
 * The mirror-node REST subset, with the public mirror node's paths, field names, value formats,
 * pagination links and error bodies (hiero-mirror-node's REST API, v1), plus one plain HTML page
 * per transaction for the product's explorer links.
 *
 * Guarantee: only what reached consensus is visible, as on a real mirror node; a transaction
 * that is pending, dropped or unknown is 404 alike.
 */
import { proto } from "@hashgraph/proto";
import { createHash } from "node:crypto";
import {
  base64,
  entityId,
  formatTimestamp,
  hex,
  mirrorTransactionId,
  parseEntityId,
  parseTimestampParam,
  parseTransactionId,
  type Timestamp,
} from "./ids.ts";
import { mirrorKey } from "./keys.ts";
import type { Comparison, MessageRow, TxRow } from "./rows.ts";
import { NODE_ACCOUNT, transfersOf } from "./rules.ts";
import type { LedgerStore } from "./store.ts";

const DEFAULT_LIMIT = 25;
const MAX_LIMIT = 100;
const MAX_REPEATED_PARAMETERS = 100;
const OPERATORS = new Set<string>(["eq", "ne", "gt", "gte", "lt", "lte"]);

export interface MirrorOptions {
  readonly store: LedgerStore;
  /** Where the consensus node listens, for /api/v1/network/nodes. */
  readonly grpcEndpoint: () => { host: string; port: number };
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8", ...headers } });
}

function errorBody(status: number, messages: string[]): Response {
  return json(status, { _status: { messages: messages.map((message) => ({ message })) } });
}

const notFound = (): Response => errorBody(404, ["Not found"]);
const invalid = (...params: string[]): Response => errorBody(400, params.map((p) => `Invalid parameter: ${p}`));

// ---- view models (the mirror node's field names and formats) ----------------------------------

function transactionIdView(bytes: Uint8Array): Record<string, unknown> {
  const id = proto.TransactionID.decode(bytes);
  const a = id.accountID;
  const start = id.transactionValidStart;
  return {
    account_id: `${Number(a?.shardNum ?? 0)}.${Number(a?.realmNum ?? 0)}.${Number(a?.accountNum ?? 0)}`,
    nonce: id.nonce ?? 0,
    scheduled: id.scheduled ?? false,
    transaction_valid_start: formatTimestamp({ seconds: Number(start?.seconds ?? 0), nanos: start?.nanos ?? 0 }),
  };
}

function messageView(m: MessageRow, encoding: "base64" | "utf-8" = "base64"): Record<string, unknown> {
  return {
    chunk_info:
      m.chunkNumber == null
        ? null
        : {
            initial_transaction_id: m.initialTransactionId ? transactionIdView(m.initialTransactionId) : null,
            number: m.chunkNumber,
            total: m.chunkTotal,
          },
    consensus_timestamp: formatTimestamp(m.consensus),
    message: encoding === "utf-8" ? Buffer.from(m.message).toString("utf8") : base64(m.message),
    payer_account_id: entityId(m.payer),
    running_hash: base64(m.runningHash),
    running_hash_version: m.runningHashVersion,
    sequence_number: m.sequenceNumber,
    topic_id: entityId(m.topicNum),
  };
}

function resultName(code: number | null): string {
  return (code != null ? proto.ResponseCodeEnum[code] : undefined) ?? "UNKNOWN";
}

function transactionView(tx: TxRow): Record<string, unknown> {
  return {
    bytes: null,
    charged_tx_fee: tx.chargedFee ?? 0,
    consensus_timestamp: tx.consensus ? formatTimestamp(tx.consensus) : null,
    entity_id: tx.entityNum != null ? entityId(tx.entityNum) : null,
    max_custom_fees: [],
    max_fee: String(tx.maxFee),
    memo_base64: base64(tx.memo),
    name: tx.type,
    nft_transfers: [],
    node: entityId(NODE_ACCOUNT),
    nonce: tx.nonce,
    parent_consensus_timestamp: null,
    result: resultName(tx.result),
    scheduled: tx.scheduled,
    staking_reward_transfers: [],
    token_transfers: [],
    transaction_hash: base64(tx.transactionHash),
    transaction_id: mirrorTransactionId(tx.payer, tx.validStart),
    transfers: transfersOf(tx)
      .sort((a, b) => a.account - b.account)
      .map((t) => ({ account: entityId(t.account), amount: t.amount, is_approval: false })),
    valid_duration_seconds: String(tx.validDurationSeconds),
    valid_start_timestamp: formatTimestamp(tx.validStart),
  };
}

// ---- query parameters ------------------------------------------------------------------------

interface Filter {
  key: string;
  op: string;
  value: string;
}

/** The request's parameters in order of first appearance, repeated ones as lists, like Express. */
function orderedQuery(url: URL): Map<string, string[]> {
  const q = new Map<string, string[]>();
  for (const [k, v] of url.searchParams) q.set(k, [...(q.get(k) ?? []), v]);
  return q;
}

function filtersOf(query: Map<string, string[]>): { filters: Filter[]; errors: string[] } {
  const filters: Filter[] = [];
  const errors: string[] = [];
  for (const [key, values] of query) {
    if (values.length > MAX_REPEATED_PARAMETERS) {
      errors.push(`Parameter values count exceeds maximum number allowed: ${key} count: ${values.length} max: ${MAX_REPEATED_PARAMETERS}`);
      continue;
    }
    for (const value of values) {
      const parts = value.split(":");
      filters.push(parts.length === 1 ? { key, op: "eq", value } : { key, op: parts[0] ?? "", value: parts[1] ?? "" });
    }
  }
  return { filters, errors };
}

const isPositiveLong = (v: string): boolean => /^\d{1,19}$/.test(v) && BigInt(v) > 0n && BigInt(v) <= 9223372036854775807n;

/**
 * The `links.next` of a page, built as the mirror node builds it: the request's own parameters,
 * with any `timestamp=gt:`/`gte:` (ascending) or `lt:`/`lte:` (descending) replaced by the last
 * row's timestamp.
 */
function nextLink(path: string, query: Map<string, string[]>, order: "asc" | "desc", last: Timestamp): string {
  const q = new Map([...query].map(([k, v]) => [k, [...v]] as const));
  const field = "timestamp";
  const pattern = order === "asc" ? /gt[e]?:/ : /lt[e]?:/;
  const insert = `${order === "asc" ? "gt" : "lt"}:${formatTimestamp(last)}`;
  const original = q.get(field);
  if (original) {
    const kept = original.filter((v) => !pattern.test(v));
    q.delete(field);
    if (kept.length > 0) q.set(field, original.some((v) => /[gl]t[e]?:/.test(v)) ? [...kept, insert] : kept);
    else q.set(field, [insert]);
  } else {
    q.set(field, [insert]);
  }
  const parts: string[] = [];
  for (const [k, vs] of q) for (const v of vs) parts.push(`${k}=${v}`);
  return `${path}?${parts.join("&")}`;
}

// ---- handlers --------------------------------------------------------------------------------

function topicNumOf(text: string): number | null | "foreign" {
  const id = parseEntityId(text);
  if (!id) return null;
  return id.shard !== 0 || id.realm !== 0 ? "foreign" : id.num;
}

function listMessages(store: LedgerStore, url: URL, topicText: string): Response {
  const topic = topicNumOf(topicText);
  if (topic === null) return invalid("topic.id");
  const query = orderedQuery(url);
  const { filters, errors } = filtersOf(query);
  const bad: string[] = [];
  const unknown: string[] = [];
  let limit = DEFAULT_LIMIT;
  let order: "asc" | "desc" = "asc";
  let encoding: "base64" | "utf-8" = "base64";
  const sequenceNumber: { op: Comparison; value: number }[] = [];
  const timestamp: { op: Comparison; value: Timestamp }[] = [];
  for (const f of filters) {
    if (!["encoding", "limit", "order", "sequencenumber", "timestamp"].includes(f.key)) {
      unknown.push(f.key);
      continue;
    }
    if (!OPERATORS.has(f.op)) {
      bad.push(f.key);
      continue;
    }
    switch (f.key) {
      case "limit":
        if (f.op !== "eq" || !isPositiveLong(f.value)) bad.push(f.key);
        else limit = Math.min(Number(f.value), MAX_LIMIT);
        break;
      case "order":
        if (f.op !== "eq" || (f.value !== "asc" && f.value !== "desc")) bad.push(f.key);
        else order = f.value;
        break;
      case "encoding":
        if (f.op !== "eq" || !["base64", "utf-8"].includes(f.value.toLowerCase())) bad.push(f.key);
        else encoding = f.value.toLowerCase() as "base64" | "utf-8";
        break;
      case "sequencenumber":
        if (!isPositiveLong(f.value)) bad.push(f.key);
        else sequenceNumber.push({ op: f.op as Comparison, value: Number(f.value) });
        break;
      case "timestamp": {
        const ts = parseTimestampParam(f.value);
        if (!ts) bad.push(f.key);
        else timestamp.push({ op: f.op as Comparison, value: ts });
        break;
      }
    }
  }
  if (errors.length || bad.length || unknown.length) {
    return errorBody(400, [...errors, ...bad.map((p) => `Invalid parameter: ${p}`), ...unknown.map((p) => `Unknown query parameter: ${p}`)]);
  }
  // An unknown topic is an empty page, not a 404, as on the public mirror node.
  const rows = topic === "foreign" ? [] : store.listMessages({ topicNum: topic, sequenceNumber, timestamp, order, limit });
  const messages = rows.map((m) => messageView(m, encoding));
  const last = rows[rows.length - 1];
  return json(200, { messages, links: { next: rows.length === limit && last ? nextLink(url.pathname, query, order, last.consensus) : null } });
}

function getMessage(store: LedgerStore, topicText: string, seqText: string): Response {
  const topic = topicNumOf(topicText);
  const badParams = [...(topic === null ? ["topic.id"] : []), ...(isPositiveLong(seqText) ? [] : ["sequencenumber"])];
  if (badParams.length) return invalid(...badParams);
  if (topic === "foreign" || topic === null) return notFound();
  const m = store.getMessage(topic, Number(seqText));
  return m ? json(200, messageView(m)) : notFound();
}

function getMessageAt(store: LedgerStore, tsText: string): Response {
  const ts = parseTimestampParam(tsText);
  if (!ts) return invalid("consensus_timestamp");
  const m = store.messageAt(ts);
  return m ? json(200, messageView(m)) : notFound();
}

function getTopic(store: LedgerStore, topicText: string): Response {
  const topic = topicNumOf(topicText);
  if (topic === null) return invalid("topic.id");
  const t = topic === "foreign" ? null : store.getTopic(topic);
  if (!t) return notFound();
  const created = formatTimestamp({ seconds: t.createdSeconds, nanos: t.createdNanos });
  return json(200, {
    admin_key: mirrorKey(t.adminKey),
    auto_renew_account: t.autoRenewAccount != null ? entityId(t.autoRenewAccount) : null,
    auto_renew_period: t.autoRenewPeriod,
    created_timestamp: created,
    custom_fees: { created_timestamp: created, fixed_fees: [] },
    deleted: false,
    fee_exempt_key_list: [],
    fee_schedule_key: null,
    memo: t.memo,
    submit_key: mirrorKey(t.submitKey),
    timestamp: { from: created, to: null },
    topic_id: entityId(t.num),
  });
}

const HASH_PATTERN = /^(?:(?:0x)?[0-9a-fA-F]{96}|[A-Za-z0-9_-]{64})$/;
const INVALID_TRANSACTION_ID = 'Invalid Transaction id. Please use "shard.realm.num-sss-nnn" format where sss are seconds and nnn are nanoseconds';

/** Final transactions named by a mirror-form id or a transaction hash, or a 400 response. */
function findTransactions(store: LedgerStore, idOrHash: string, allowSdkForm: boolean): TxRow[] | Response {
  if (HASH_PATTERN.test(idOrHash)) {
    const raw = idOrHash.length === 64 ? Buffer.from(idOrHash, "base64url") : Buffer.from(idOrHash.replace(/^0x/, ""), "hex");
    return store.finalTransactionsByHash(new Uint8Array(raw));
  }
  const id = parseTransactionId(idOrHash, { allowSdkForm });
  if (!id) return errorBody(400, [INVALID_TRANSACTION_ID]);
  if (id.shard !== 0 || id.realm !== 0) return [];
  return store.finalTransactionsById(id.payer, id.validStart);
}

function getTransactions(store: LedgerStore, url: URL, idOrHash: string): Response {
  const { filters } = filtersOf(orderedQuery(url));
  const unknown = filters.filter((f) => f.key !== "nonce" && f.key !== "scheduled").map((f) => `Unknown query parameter: ${f.key}`);
  const bad: string[] = [];
  let nonce: number | undefined;
  let scheduled: boolean | undefined;
  for (const f of filters) {
    if (f.key === "nonce") {
      if (f.op !== "eq" || !/^\d{1,10}$/.test(f.value)) bad.push("nonce");
      else nonce = Number(f.value);
    } else if (f.key === "scheduled") {
      if (f.op !== "eq" || !["true", "false"].includes(f.value)) bad.push("scheduled");
      else scheduled = f.value === "true";
    }
  }
  if (unknown.length || bad.length) return errorBody(400, [...bad.map((p) => `Invalid parameter: ${p}`), ...unknown]);
  const found = findTransactions(store, idOrHash, false);
  if (found instanceof Response) return found;
  const rows = found.filter((t) => (nonce === undefined || t.nonce === nonce) && (scheduled === undefined || t.scheduled === scheduled));
  return rows.length ? json(200, { transactions: rows.map(transactionView) }) : notFound();
}

/**
 * One account in the mirror node's form, the fields a client checks before using it (its key,
 * above all: `serve` compares the operator key it holds with 0.0.2's); no transaction list.
 */
function getAccount(store: LedgerStore, accountText: string): Response {
  const num = topicNumOf(accountText);
  if (num === null) return invalid("idOrAliasOrEvmAddress");
  const account = num === "foreign" ? null : store.getAccount(num);
  if (!account) return notFound();
  return json(200, {
    account: entityId(account.num),
    balance: { balance: account.balance, timestamp: null, tokens: [] },
    deleted: false,
    key: mirrorKey(account.key),
    memo: "",
    transactions: [],
    links: { next: null },
  });
}

function networkNodes(endpoint: { host: string; port: number }): Response {
  const isIpv4 = /^\d{1,3}(?:\.\d{1,3}){3}$/.test(endpoint.host);
  return json(200, {
    nodes: [
      {
        admin_key: null,
        decline_reward: true,
        description: "docverify local ledger",
        file_id: "0.0.102",
        grpc_proxy_endpoint: null,
        max_stake: null,
        memo: entityId(NODE_ACCOUNT),
        min_stake: null,
        node_account_id: entityId(NODE_ACCOUNT),
        node_cert_hash: "0x",
        node_id: 0,
        public_key: "0x",
        reward_rate_start: 0,
        service_endpoints: [{ domain_name: isIpv4 ? "" : endpoint.host, ip_address_v4: isIpv4 ? endpoint.host : "", port: endpoint.port }],
        stake: 0,
        stake_not_rewarded: null,
        stake_rewarded: 0,
        staking_period: null,
        timestamp: { from: "0.000000000", to: null },
      },
    ],
    links: { next: null },
  });
}

// ---- HTML ------------------------------------------------------------------------------------

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

function page(status: number, title: string, body: string): Response {
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

function transactionPage(store: LedgerStore, idText: string): Response {
  const found = findTransactions(store, idText, true);
  if (found instanceof Response || found.length === 0) {
    const why = found instanceof Response ? "This is not a transaction id." : "No transaction with this id has reached consensus on this ledger.";
    return page(found instanceof Response ? 400 : 404, "Transaction not found", `<h1>Transaction not found</h1><p>${escapeHtml(why)}</p>`);
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

/** The mirror's fetch handler, for Bun.serve. */
export function createMirrorHandler(options: MirrorOptions): (req: Request) => Response {
  const { store } = options;
  return (req) => {
    const url = new URL(req.url);
    if (req.method !== "GET" && req.method !== "HEAD") return notFound();
    const parts = url.pathname.split("/").map((p) => {
      try {
        return decodeURIComponent(p);
      } catch {
        return p;
      }
    });
    // parts[0] is "" (the path starts with "/").
    const [, a, b, c, d, e, f, ...rest] = parts;
    if (rest.length === 0 && a === "api" && b === "v1") {
      if (c === "topics" && d === "messages" && e !== undefined && f === undefined) return getMessageAt(store, e);
      if (c === "topics" && d !== undefined && e === undefined) return getTopic(store, d);
      if (c === "topics" && d !== undefined && e === "messages" && f === undefined) return listMessages(store, url, d);
      if (c === "topics" && d !== undefined && e === "messages" && f !== undefined) return getMessage(store, d, f);
      if (c === "transactions" && d !== undefined && e === undefined) return getTransactions(store, url, d);
      if (c === "accounts" && d !== undefined && e === undefined) return getAccount(store, d);
      if (c === "network" && d === "nodes" && e === undefined) return networkNodes(options.grpcEndpoint());
    }
    if (a === "transaction" && b !== undefined && c === undefined) return transactionPage(store, b);
    if (url.pathname === "/") {
      return page(
        200,
        "docverify local ledger",
        "<h1>docverify local ledger</h1><p>A single-node Hedera ledger on loopback. Mirror REST API under <code>/api/v1/</code>; " +
          "one page per transaction under <code>/transaction/{transactionId}</code>.</p>",
      );
    }
    return notFound();
  };
}
