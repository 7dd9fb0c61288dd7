/**
 * The mirror-node REST subset, with the public mirror node's paths, field names, value formats,
 * pagination links and error bodies (hiero-mirror-node's REST API, v1), plus one plain HTML page
 * per transaction for the product's explorer links.
 *
 * Guarantee: only what reached consensus is visible, as on a real mirror node; a transaction
 * that is pending, dropped or unknown is 404 alike.
 *
 * CORS as the public mirror node answers it (its REST server uses the `cors` middleware with
 * its defaults): every answer carries `Access-Control-Allow-Origin: *`, so a web page (the
 * receipt verifier, docs/receipts.md) may read it from any origin; an OPTIONS preflight, on any
 * path, is 204 with the methods this mirror serves (GET, HEAD) and the request's headers
 * allowed. Nothing here is secret and no credential is involved.
 *
 * This file routes and answers; the JSON shapes are mirror-views.ts's, the parameter syntax
 * mirror-params.ts's, the HTML mirror-page.ts's.
 */
import { entityId, formatTimestamp, parseEntityId, parseTimestampParam, parseTransactionId, type Timestamp } from "./ids.ts";
import { mirrorKey } from "./keys.ts";
import { page, transactionPage } from "./mirror-page.ts";
import { filtersOf, isPositiveLong, nextLink, orderedQuery } from "./mirror-params.ts";
import { messageView, transactionView } from "./mirror-views.ts";
import type { Comparison, TxRow } from "./rows.ts";
import { NODE_ACCOUNT } from "./rules.ts";
import type { LedgerStore } from "./store.ts";

const DEFAULT_LIMIT = 25;
const MAX_LIMIT = 100;
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

/** Final transactions named by a mirror-form id or a transaction hash, or null when the text is neither. */
function findTransactions(store: LedgerStore, idOrHash: string, allowSdkForm: boolean): TxRow[] | null {
  if (HASH_PATTERN.test(idOrHash)) {
    const raw = idOrHash.length === 64 ? Buffer.from(idOrHash, "base64url") : Buffer.from(idOrHash.replace(/^0x/, ""), "hex");
    return store.finalTransactionsByHash(new Uint8Array(raw));
  }
  const id = parseTransactionId(idOrHash, { allowSdkForm });
  if (!id) return null;
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
  if (found === null) return errorBody(400, [INVALID_TRANSACTION_ID]);
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

/** Carried by every mirror answer (also the listener's 500, index.ts). */
export const CORS_HEADERS: Readonly<Record<string, string>> = { "access-control-allow-origin": "*" };

/** The answer to an OPTIONS request: a CORS preflight, as the `cors` middleware answers it. */
function preflight(req: Request): Response {
  const headers: Record<string, string> = { ...CORS_HEADERS, "access-control-allow-methods": "GET,HEAD", vary: "Access-Control-Request-Headers" };
  const asked = req.headers.get("access-control-request-headers");
  if (asked !== null) headers["access-control-allow-headers"] = asked;
  return new Response(null, { status: 204, headers });
}

/** The mirror's fetch handler, for Bun.serve. */
export function createMirrorHandler(options: MirrorOptions): (req: Request) => Response {
  const route = createRoutes(options);
  return (req) => {
    if (req.method === "OPTIONS") return preflight(req);
    const res = route(req);
    for (const [k, v] of Object.entries(CORS_HEADERS)) res.headers.set(k, v);
    return res;
  };
}

function createRoutes(options: MirrorOptions): (req: Request) => Response {
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
    if (a === "transaction" && b !== undefined && c === undefined) return transactionPage(store, b, findTransactions(store, b, true));
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
