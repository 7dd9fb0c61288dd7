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
 * Two families of routes, as on the public mirror node: the `rest/` module's (messages,
 * transactions, accounts: parameter names lowercased, unknown ones refused, errors a `message`)
 * and the rest-java service's (`/topics/{id}`, `/network/nodes`: names as written, errors a
 * reason phrase and a `detail`). A successful `/api/v1/` answer says how long it may be cached,
 * as the mirror node does.
 *
 * This file routes and answers; the JSON shapes are mirror-views.ts's, the parameter syntax
 * mirror-params.ts's, the HTML mirror-page.ts's. docs/local-ledger.md lists what is implemented
 * and the known differences.
 *
 * The routes that show stored rows (messages, topics, transactions, accounts, a transaction's
 * page) need @hashgraph/proto (result names, keys, chunk ids): mirror-views.ts and key-codec.ts
 * are imported by the first such request, not with this file, so a ledger nobody has read holds
 * no protobuf classes (docs/local-ledger.md, "Idle memory"). That request waits for the load and
 * is answered as any other; the other routes answer at once, as before.
 */
import { entityId, formatTimestamp, parseEntityId, parseTimestampParam, parseTransactionId, type Timestamp } from "./ids.ts";
import type { mirrorKey } from "./key-codec.ts";
import { page, transactionPage } from "./mirror-page.ts";
import { exactQuery, filterOf, filtersOf, isPositiveLong, nextLink, orderedQuery } from "./mirror-params.ts";
import type { messageView, resultName, transactionView } from "./mirror-views.ts";
import type { Comparison, TxRow } from "./rows.ts";
import { NODE_ACCOUNT } from "./rules.ts";
import type { LedgerStore } from "./store.ts";

/** What the routes that show stored rows use (see the file's comment). */
interface Views {
  readonly messageView: typeof messageView;
  readonly transactionView: typeof transactionView;
  readonly resultName: typeof resultName;
  readonly mirrorKey: typeof mirrorKey;
}

let views: Promise<Views> | null = null;

/** mirror-views.ts and key-codec.ts, imported once, by the first request that needs them. */
function loadViews(): Promise<Views> {
  return (views ??= Promise.all([import("./mirror-views.ts"), import("./key-codec.ts")]).then(([v, k]) => ({
    messageView: v.messageView,
    transactionView: v.transactionView,
    resultName: v.resultName,
    mirrorKey: k.mirrorKey,
  })));
}

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

/** One entry of an error body: a message, and the detail the rest-java routes add. */
type ErrorMessage = string | { message: string; detail: string };

function errorBody(status: number, messages: ErrorMessage[]): Response {
  return json(status, { _status: { messages: messages.map((m) => (typeof m === "string" ? { message: m } : m)) } });
}

const notFound = (): Response => errorBody(404, ["Not found"]);
const invalid = (...params: string[]): Response => errorBody(400, params.map((p) => `Invalid parameter: ${p}`));
/** A 400 as the mirror node's rest-java routes write it: the status's reason phrase and a detail. */
const badRequest = (detail: string): Response => errorBody(400, [{ message: "Bad Request", detail }]);

/**
 * A route that takes no query parameter (one message by number or by timestamp): each parameter
 * given is refused, as the mirror node's `validateReq` refuses it, before the path is read.
 */
function refuseParameters(url: URL): Response | null {
  const keys = [...orderedQuery(url).keys()];
  return keys.length ? errorBody(400, keys.map((k) => `Unknown query parameter: ${k}`)) : null;
}

function topicNumOf(text: string): number | null | "foreign" {
  const id = parseEntityId(text);
  if (!id) return null;
  return id.shard !== 0 || id.realm !== 0 ? "foreign" : id.num;
}

function listMessages(store: LedgerStore, url: URL, topicText: string, { messageView }: Views): Response {
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
        // base64 (the default) or UTF-8 text, any case, `utf8` or `utf-8`, as the mirror node reads it.
        if (f.op !== "eq" || !/^(?:base64|utf-?8)$/.test(f.value.toLowerCase())) bad.push(f.key);
        else encoding = f.value.toLowerCase() === "base64" ? "base64" : "utf-8";
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

function getMessage(store: LedgerStore, url: URL, topicText: string, seqText: string, { messageView }: Views): Response {
  const refused = refuseParameters(url);
  if (refused) return refused;
  const topic = topicNumOf(topicText);
  const badParams = [...(topic === null ? ["topic.id"] : []), ...(isPositiveLong(seqText) ? [] : ["sequencenumber"])];
  if (badParams.length) return invalid(...badParams);
  if (topic === "foreign" || topic === null) return notFound();
  const m = store.getMessage(topic, Number(seqText));
  return m ? json(200, messageView(m)) : notFound();
}

function getMessageAt(store: LedgerStore, url: URL, tsText: string, { messageView }: Views): Response {
  const refused = refuseParameters(url);
  if (refused) return refused;
  const ts = parseTimestampParam(tsText);
  if (!ts) return invalid("consensus_timestamp");
  const m = store.messageAt(ts);
  return m ? json(200, messageView(m)) : notFound();
}

/**
 * One topic, as the mirror node's rest-java service answers it: query parameters are ignored, and
 * its errors carry a detail (`Failed to convert 'id'`, `Topic not found`).
 */
function getTopic(store: LedgerStore, topicText: string, { mirrorKey }: Views): Response {
  const topic = topicNumOf(topicText);
  if (topic === null) return badRequest("Failed to convert 'id'");
  const t = topic === "foreign" ? null : store.getTopic(topic);
  if (!t) return errorBody(404, [{ message: "Not Found", detail: "Topic not found" }]);
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

function getTransactions(store: LedgerStore, url: URL, idOrHash: string, { transactionView }: Views): Response {
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
function getAccount(store: LedgerStore, accountText: string, { mirrorKey }: Views): Response {
  const num = topicNumOf(accountText);
  if (num === null) return invalid("idOrAliasOrEvmAddress");
  const account = num === "foreign" ? null : store.getAccount(num);
  if (!account) return notFound();
  // Every field the mirror node's AccountInfo requires; what this ledger does not keep (creation,
  // expiry, staking, aliases) is null, as the mirror node writes an unknown; the EVM address is
  // the account's long-zero form.
  return json(200, {
    account: entityId(account.num),
    alias: null,
    auto_renew_period: null,
    balance: { balance: account.balance, timestamp: null, tokens: [] },
    created_timestamp: null,
    decline_reward: false,
    deleted: false,
    ethereum_nonce: 0,
    evm_address: `0x${account.num.toString(16).padStart(40, "0")}`,
    expiry_timestamp: null,
    key: mirrorKey(account.key),
    max_automatic_token_associations: 0,
    memo: "",
    pending_reward: 0,
    receiver_sig_required: false,
    stake_period_start: null,
    staked_account_id: null,
    staked_node_id: null,
    transactions: [],
    links: { next: null },
  });
}

const NODE_PARAMETERS = ["file.id", "node.id", "limit", "order"];
const NODES_DEFAULT_LIMIT = 10;
const NODES_MAX_LIMIT = 25;
/** The address books a network keeps: 0.0.101 and 0.0.102 (the default); each lists the one node here. */
const ADDRESS_BOOKS = new Set([101, 102]);

interface NodesRequest {
  fileNum: number | null;
  nodeIds: { op: string; num: number }[];
  limit: number;
  order: "asc" | "desc";
}

/**
 * `network/nodes`' parameters as the mirror node's rest-java service reads them: names exactly
 * as written (no lowercasing there); `file.id` (`eq` only, default 0.0.102), `node.id` (any
 * number of `eq`/`gt`/`gte`/`lt`/`lte` bounds), `limit` (1 or more, at most 25 used, default 10),
 * `order` (`asc`/`desc`, any case). A blank value is the default. Errors: a repeated single
 * parameter or `file.id` with a range operator is a 400 with a detail; unreadable values and
 * unknown names are listed together, the values first.
 */
function nodesRequest(url: URL): NodesRequest | Response {
  const query = exactQuery(url);
  for (const key of ["file.id", "limit", "order"]) {
    if ((query.get(key)?.length ?? 0) > 1) return badRequest(`Only a single instance is supported for ${key}`);
  }
  const present = (key: string): string[] => (query.get(key) ?? []).filter((v, i) => i > 0 || v.trim() !== "");
  const invalidNames: string[] = [];
  const entity = (key: string, text: string): { op: string; num: number } | null => {
    const f = filterOf(key, text);
    const id = /^(?:(\d{1,4})\.)?(?:(\d{1,5})\.)?(\d{1,12})$/.exec(f.value);
    if (!id || !["eq", "gt", "gte", "lt", "lte"].includes(f.op)) return null;
    // Another shard or realm names nothing on this ledger (shard and realm 0).
    return { op: f.op, num: Number(id[1] ?? 0) !== 0 || Number(id[2] ?? 0) !== 0 ? -1 : Number(id[3]) };
  };
  let file: { op: string; num: number } | null = { op: "eq", num: 102 };
  const [fileText] = present("file.id");
  if (fileText !== undefined) {
    file = entity("file.id", fileText);
    if (!file) invalidNames.push("file.id");
  }
  const nodeIds: { op: string; num: number }[] = [];
  for (const v of present("node.id")) {
    const b = entity("node.id", v);
    if (b) nodeIds.push(b);
    else if (!invalidNames.includes("node.id")) invalidNames.push("node.id");
  }
  let limit = NODES_DEFAULT_LIMIT;
  const [limitText] = present("limit");
  if (limitText !== undefined) {
    if (!/^\d{1,10}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > 2147483647) invalidNames.push("limit");
    else limit = Math.min(Number(limitText), NODES_MAX_LIMIT);
  }
  let order: "asc" | "desc" = "asc";
  const [orderText] = present("order");
  if (orderText !== undefined) {
    const o = orderText.trim().toLowerCase();
    if (o !== "asc" && o !== "desc") invalidNames.push("order");
    else order = o;
  }
  const unknown = [...query.keys()].filter((k) => !NODE_PARAMETERS.includes(k));
  if (invalidNames.length || unknown.length) {
    return errorBody(400, [...invalidNames.map((k) => `Invalid parameter: ${k}`), ...unknown.map((k) => `Unknown query parameter: ${k}`)]);
  }
  if (file && file.op !== "eq") return badRequest("Only equality operator is supported for file.id");
  return { fileNum: file?.num ?? 102, nodeIds, limit, order };
}

function matchesBounds(num: number, bounds: readonly { op: string; num: number }[]): boolean {
  const equals = bounds.filter((b) => b.op === "eq");
  if (equals.length && !equals.some((b) => b.num === num)) return false;
  return bounds.every((b) => b.op === "eq" || (b.op === "gt" ? num > b.num : b.op === "gte" ? num >= b.num : b.op === "lt" ? num < b.num : num <= b.num));
}

function networkNodes(url: URL, endpoint: { host: string; port: number }): Response {
  const request = nodesRequest(url);
  if (request instanceof Response) return request;
  const all = request.fileNum !== null && ADDRESS_BOOKS.has(request.fileNum) ? [localNode(endpoint, request.fileNum)] : [];
  const nodes = all.filter((n) => matchesBounds(n.node_id, request.nodeIds)).slice(0, request.limit);
  const last = nodes[nodes.length - 1];
  let next: string | null = null;
  if (last && nodes.length === request.limit) {
    // The request's own parameters, the paging direction's node.id bounds replaced by the page's last node.
    const paging = request.order === "asc" ? /^gte?:/ : /^lte?:/;
    const parts: string[] = [];
    for (const [k, vs] of exactQuery(url)) for (const v of vs) if (k !== "node.id" || !paging.test(v)) parts.push(`${k}=${v}`);
    parts.push(`node.id=${request.order === "asc" ? "gt" : "lt"}:${last.node_id}`);
    next = `/api/v1/network/nodes?${parts.join("&")}`;
  }
  return json(200, { nodes, links: { next } });
}

function localNode(endpoint: { host: string; port: number }, fileNum: number) {
  const isIpv4 = /^\d{1,3}(?:\.\d{1,3}){3}$/.test(endpoint.host);
  return {
        admin_key: null,
        decline_reward: true,
        description: "docverify local ledger",
        file_id: entityId(fileNum),
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
  };
}

/**
 * How long a successful answer may be cached, as the mirror node says: `public, max-age=1`, and 5
 * seconds for one topic (`/api/v1/topics/{id}`). Errors and the HTML pages carry none.
 */
function cacheControl(pathname: string): string | null {
  if (!pathname.startsWith("/api/v1/")) return null;
  return /^\/api\/v1\/topics\/[^/]+$/.test(pathname) && pathname !== "/api/v1/topics/messages" ? "public, max-age=5" : "public, max-age=1";
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

/** The mirror's fetch handler, for Bun.serve: a Response, or its promise while the views load. */
export function createMirrorHandler(options: MirrorOptions): (req: Request) => Response | Promise<Response> {
  const route = createRoutes(options);
  const finish = (req: Request, res: Response): Response => {
    for (const [k, v] of Object.entries(CORS_HEADERS)) res.headers.set(k, v);
    const cache = res.status === 200 ? cacheControl(new URL(req.url).pathname) : null;
    if (cache !== null) res.headers.set("cache-control", cache);
    return res;
  };
  return (req) => {
    if (req.method === "OPTIONS") return preflight(req);
    const res = route(req);
    return res instanceof Response ? finish(req, res) : res.then((r) => finish(req, r));
  };
}

function createRoutes(options: MirrorOptions): (req: Request) => Response | Promise<Response> {
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
    /** A route that shows stored rows: answered once the views are loaded. */
    const withViews = (answer: (v: Views) => Response): Promise<Response> => loadViews().then(answer);
    if (rest.length === 0 && a === "api" && b === "v1") {
      if (c === "topics" && d === "messages" && e !== undefined && f === undefined) return withViews((v) => getMessageAt(store, url, e, v));
      if (c === "topics" && d !== undefined && e === undefined) return withViews((v) => getTopic(store, d, v));
      if (c === "topics" && d !== undefined && e === "messages" && f === undefined) return withViews((v) => listMessages(store, url, d, v));
      if (c === "topics" && d !== undefined && e === "messages" && f !== undefined) return withViews((v) => getMessage(store, url, d, f, v));
      if (c === "transactions" && d !== undefined && e === undefined) return withViews((v) => getTransactions(store, url, d, v));
      if (c === "accounts" && d !== undefined && e === undefined) return withViews((v) => getAccount(store, d, v));
      if (c === "network" && d === "nodes" && e === undefined) return networkNodes(url, options.grpcEndpoint());
    }
    if (a === "transaction" && b !== undefined && c === undefined) return withViews((v) => transactionPage(store, b, findTransactions(store, b, true), v.resultName));
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
