/**
 * The forger's toolkit, for tests that prove a verifier believes only its own trust roots
 * (docs/receipts.md §3): everything a receipt's author can choose, chosen by someone who never had
 * an organisation's key.
 *
 * - `forgerKeys()`: ML-DSA-65 signing and seal keys of the forger's own, from random seeds.
 * - `forgeReceipt()`: a receipt for a random document never authenticated anywhere, built with the
 *   product's published encoders (src/crypto, src/records/messages.ts) and signed with those keys,
 *   whose key announcement names any organisation id, name and domain the forger likes, on any
 *   network; with the topic it claims, messages and a correct version-3 running-hash chain.
 * - `startForgerMirrors()`: that topic served over the mirror node REST API (and CORS, for the
 *   page), as two "mirror nodes" that are one machine: two ports of one address, two names of one
 *   address (`localhost`, `127.0.0.1`), or two loopback addresses (127.0.0.2, 127.0.0.3).
 * - `openForgerTopic()`: the same forgery written on a real local ledger, on a topic the forger
 *   opens with the ledger's public development operator key and a submit key of their own.
 * - `hideRevocation()`: a real receipt of a revoked record, handed out with "mirror nodes" of the
 *   forger's (test/support/lying-mirror.ts, `hide`) that leave the revocation out.
 * - `startRelay()`: a TCP relay on an address of its choosing, so that a server bound to 127.0.0.1
 *   can also be reached as another host.
 */
import { Client, PrivateKey, TopicCreateTransaction, TopicMessageSubmitTransaction } from "@hashgraph/sdk";
import { ml_dsa65 } from "@noble/post-quantum/ml-dsa.js";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { createConnection, createServer, type Socket } from "node:net";
import { encodeRecordPayload, encodeSealPayload, keyFingerprint } from "../../src/crypto/index.ts";
import { DEVELOPMENT_OPERATOR_KEY } from "../../src/local-ledger/index.ts";
import { nextRunningHash } from "../../src/local-ledger/running-hash.ts";
import { encodeCreationMessage } from "../../src/records/messages.ts";
import { onCleanup } from "./env.ts";
import { startLyingMirror, type LyingMirror } from "./lying-mirror.ts";
import { waitFor } from "./wait.ts";

export type Network = "mainnet" | "testnet" | "previewnet" | "local";

const b64 = (b: Uint8Array) => Buffer.from(b).toString("base64");
const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
export const docHashOf = (bytes: Uint8Array) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

export interface KeyPair {
  readonly publicKey: Uint8Array;
  readonly secretKey: Uint8Array;
}

export interface ForgerKeys {
  /** What the forger signs with, passed off as an organisation's key. */
  readonly signer: KeyPair;
  /** What the forger seals with, passed off as docverify's seal key. */
  readonly seal: KeyPair;
}

/** Fresh ML-DSA-65 keys of the forger's own: random seeds, nobody else has them. */
export function forgerKeys(): ForgerKeys {
  return { signer: ml_dsa65.keygen(new Uint8Array(randomBytes(32))), seal: ml_dsa65.keygen(new Uint8Array(randomBytes(32))) };
}

const fingerprint = (publicKey: Uint8Array) => keyFingerprint({ algorithm: "ML-DSA-65", publicKey });

/** Who the forgery says made the record: any organisation's id and name, and a domain if the forger wants one. */
export interface Claim {
  readonly orgId: string;
  readonly name: string;
  readonly domain?: string;
}

/** A key announcement as the appliance writes one (docs/receipts.md §1), naming `claim`, announcing the forger's keys. */
export function announcementBytes(claim: Claim, keys: ForgerKeys): Uint8Array {
  return new TextEncoder().encode(
    JSON.stringify({
      v: 1,
      type: "key",
      orgId: claim.orgId,
      name: claim.name,
      ...(claim.domain === undefined ? {} : { domain: claim.domain }),
      algorithm: "ML-DSA-65",
      keyFingerprint: hex(fingerprint(keys.signer.publicKey)),
      sealKeyFingerprint: hex(fingerprint(keys.seal.publicKey)),
    }),
  );
}

/** A record of a document, signed and sealed with the forger's keys, and its ledger message. */
export interface SignedRecord {
  readonly recordId: string;
  readonly document: Uint8Array;
  readonly docHash: string;
  readonly authenticatedAt: string;
  readonly signer: { algorithm: "ML-DSA-65"; publicKey: string; payload: string; signature: string };
  readonly seal: { algorithm: "ML-DSA-65"; publicKey: string; payload: string; signature: string };
  /** The record message (`type: "record"`) that commits to it on a topic. */
  readonly message: Uint8Array;
}

/** A random 4 KiB document nobody ever authenticated, signed and sealed by the forger. */
export function signRecord(keys: ForgerKeys): SignedRecord {
  const document = new Uint8Array(randomBytes(4096));
  const docHash = docHashOf(document);
  const recordId = randomUUID();
  const signedAtMs = Date.now() - 60_000;
  const payload = encodeRecordPayload({ recordId, docHash, signedAtMs, signerKeyFingerprint: fingerprint(keys.signer.publicKey) });
  const signature = ml_dsa65.sign(payload, keys.signer.secretKey);
  const sealPayload = encodeSealPayload(payload, signature, fingerprint(keys.seal.publicKey));
  const sealSignature = ml_dsa65.sign(sealPayload, keys.seal.secretKey);
  return {
    recordId,
    document,
    docHash,
    authenticatedAt: new Date(signedAtMs).toISOString(),
    signer: { algorithm: "ML-DSA-65", publicKey: b64(keys.signer.publicKey), payload: b64(payload), signature: b64(signature) },
    seal: { algorithm: "ML-DSA-65", publicKey: b64(keys.seal.publicKey), payload: b64(sealPayload), signature: b64(sealSignature) },
    message: encodeCreationMessage({ recordId, docHash, signedAtMs, signerPublicKey: keys.signer.publicKey, signature, sealSignature }),
  };
}

/** One message of a topic as a mirror node shows it. */
export interface TopicMessage {
  readonly sequenceNumber: number;
  readonly consensusAt: string;
  readonly message: Uint8Array;
  readonly runningHash: Uint8Array;
  readonly transactionId: string;
}

/** The forger's topic: its id, its submit key as a mirror shows it, its messages. */
export interface ForgedTopic {
  readonly topicId: string;
  readonly submitKey: { readonly _type: string; readonly key: string };
  readonly messages: TopicMessage[];
}

const entity = (id: string) => {
  const [shard, realm, num] = id.split(".").map(Number) as [number, number, number];
  return { shard, realm, num };
};

/**
 * A topic with `messages`, paid by `payer`, one every three seconds from some minutes ago, with
 * the running hash of each computed as Hedera's consensus nodes compute it (version 3, chained
 * from 48 zero bytes): nothing in the chain tells it from a real topic's.
 */
export function forgeTopic(topicId: string, messages: readonly Uint8Array[], payer = "0.0.48213"): ForgedTopic {
  const submitKey = { _type: "ED25519", key: hex(new Uint8Array(randomBytes(32))) };
  let previous: Uint8Array = new Uint8Array(48);
  let seconds = Math.floor(Date.now() / 1000) - 600;
  const out: TopicMessage[] = messages.map((message, i) => {
    seconds += 3;
    const nanos = 1 + Math.floor(Math.random() * 999_999_998);
    const sequenceNumber = i + 1;
    previous = nextRunningHash({ previousRunningHash: previous, payer: entity(payer), topic: entity(topicId), consensusSeconds: seconds, consensusNanos: nanos, sequenceNumber, message });
    return { sequenceNumber, consensusAt: `${seconds}.${String(nanos).padStart(9, "0")}`, message, runningHash: previous, transactionId: `${payer}@${seconds - 2}.${String(nanos).padStart(9, "0")}` };
  });
  return { topicId, submitKey, messages: out };
}

/** A receipt (docs/receipts.md §2.1) of `record`, anchored at `anchor` with the announcement `announced`. */
export function receiptOf(record: SignedRecord, network: Network, topicId: string, anchor: TopicMessage, announced: TopicMessage, mirrorNodes: readonly string[]): Record<string, any> {
  return {
    v: 1,
    recordId: record.recordId,
    originalDocHash: record.docHash,
    authenticatedAt: record.authenticatedAt,
    kind: "record_only",
    signerType: "org",
    signer: record.signer,
    seal: record.seal,
    anchor: {
      network,
      topicId,
      sequenceNumber: anchor.sequenceNumber,
      consensusAt: anchor.consensusAt,
      transactionId: anchor.transactionId,
      message: b64(anchor.message),
      runningHash: b64(anchor.runningHash),
      inclusion: null,
    },
    keyAnnouncement: { topicId, sequenceNumber: announced.sequenceNumber, consensusAt: announced.consensusAt, message: b64(announced.message) },
    revocation: null,
    mirrorNodes: [...mirrorNodes],
    issuedAt: new Date().toISOString(),
  };
}

export interface Forgery {
  /** The receipt as a JSON value. */
  readonly receipt: Record<string, any>;
  /** The document it is "for": random bytes nobody authenticated. */
  readonly document: Uint8Array;
  readonly recordId: string;
  readonly keys: ForgerKeys;
  readonly claim: Claim;
  /** The topic the receipt names, as the forger's mirrors serve it. */
  readonly topic: ForgedTopic;
}

export interface ForgeOptions {
  readonly network: Network;
  readonly claim: Claim;
  /** The topic id the receipt names (default: a random one). */
  readonly topicId?: string;
  /** The receipt's `mirrorNodes`: what the forger suggests the verifier ask. */
  readonly mirrorNodes?: readonly string[];
}

/** A complete forgery: keys, a record, a topic with the announcement (#1) and the record (#2), the receipt. */
export function forgeReceipt(options: ForgeOptions): Forgery {
  const keys = forgerKeys();
  const record = signRecord(keys);
  const topicId = options.topicId ?? `0.0.${4_000_000 + Math.floor(Math.random() * 1_000_000)}`;
  const topic = forgeTopic(topicId, [announcementBytes(options.claim, keys), record.message]);
  const [announced, anchored] = topic.messages as [TopicMessage, TopicMessage];
  return { receipt: receiptOf(record, options.network, topicId, anchored, announced, options.mirrorNodes ?? []), document: record.document, recordId: record.recordId, keys, claim: options.claim, topic };
}

/** The receipt with its ledger network (and its revocation's) renamed: the label is not signed by anything. */
export function relabel(receipt: Record<string, any>, network: Network): Record<string, any> {
  const copy = structuredClone(receipt);
  copy.anchor.network = network;
  if (copy.revocation !== null) copy.revocation.anchor.network = network;
  return copy;
}

/** The key announcement a receipt carries, decoded. */
export function announcementOf(receipt: Record<string, any>): { orgId: string; name: string; domain?: string; keyFingerprint: string } {
  return JSON.parse(Buffer.from(receipt.keyAnnouncement.message as string, "base64").toString("utf8"));
}

// ---- The forger's mirror nodes.

const CORS = { "access-control-allow-origin": "*", "access-control-allow-methods": "GET, OPTIONS", "access-control-allow-headers": "accept" };
const answer = (body: unknown, status = 200) => Response.json(body, { status, headers: CORS });
const notFound = () => answer({ _status: { messages: [{ message: "Not found" }] } }, 404);

const compare = (a: string, b: string) => {
  const [as, an] = a.split(".").map(Number) as [number, number];
  const [bs, bn] = b.split(".").map(Number) as [number, number];
  return as - bs || an - bn;
};

function view(topicId: string, m: TopicMessage) {
  return {
    chunk_info: null,
    consensus_timestamp: m.consensusAt,
    message: b64(m.message),
    payer_account_id: m.transactionId.split("@")[0],
    running_hash: b64(m.runningHash),
    running_hash_version: 3,
    sequence_number: m.sequenceNumber,
    topic_id: topicId,
  };
}

/** The mirror node REST API (v1) over `topics`, as far as a verifier reads it. Records each request's path in `seen`. */
function mirrorHandler(topics: readonly ForgedTopic[], seen: string[]): (req: Request) => Response {
  return (req) => {
    const url = new URL(req.url);
    seen.push(`${url.host} ${url.pathname}${url.search}`);
    if (req.method === "OPTIONS") return new Response(null, { status: 204, headers: CORS });
    const parts = url.pathname.split("/").filter((p) => p !== "");
    if (parts[0] !== "api" || parts[1] !== "v1" || parts[2] !== "topics" || parts[3] === undefined) return notFound();
    const topic = topics.find((t) => t.topicId === parts[3]);
    if (topic === undefined) return notFound();
    if (parts[4] === undefined) return answer({ admin_key: null, auto_renew_account: null, auto_renew_period: 7776000, deleted: false, memo: "", submit_key: topic.submitKey, topic_id: topic.topicId });
    if (parts[4] !== "messages") return notFound();
    if (parts[5] !== undefined) {
      const m = topic.messages.find((x) => x.sequenceNumber === Number(parts[5]));
      return m === undefined ? notFound() : answer(view(topic.topicId, m));
    }
    const gt = url.searchParams.get("timestamp")?.replace(/^gt:/, "") ?? "0.000000000";
    const limit = Math.min(Number(url.searchParams.get("limit") ?? "25"), 100);
    const rows = topic.messages.filter((m) => compare(m.consensusAt, gt) > 0).slice(0, limit);
    const last = rows[rows.length - 1];
    const next = rows.length === limit && last !== undefined ? `/api/v1/topics/${topic.topicId}/messages?timestamp=gt:${last.consensusAt}&limit=${limit}&order=asc` : null;
    return answer({ messages: rows.map((m) => view(topic.topicId, m)), links: { next } });
  };
}

/**
 * Two "mirror nodes" of the forger's that are one machine or two:
 * - `two-ports`: one process listening on two ports of 127.0.0.1;
 * - `two-names`: one listener on 127.0.0.1, named `localhost` and `127.0.0.1`;
 * - `two-hosts`: one process listening on 127.0.0.2 and on 127.0.0.3, two addresses of loopback
 *   (the most a verifier can see of two independent hosts on one machine).
 */
export type MirrorLayout = "two-ports" | "two-names" | "two-hosts";

export interface ForgerMirrors {
  /** The two base URLs. */
  readonly urls: [string, string];
  /** Requests received so far, `host path?query`, in order. */
  readonly requests: string[];
  stop(): void;
}

export function startForgerMirrors(topics: readonly ForgedTopic[], layout: MirrorLayout): ForgerMirrors {
  const requests: string[] = [];
  const fetch = mirrorHandler(topics, requests);
  const listen = (hostname: string) => Bun.serve({ hostname, port: 0, fetch });
  const servers: ReturnType<typeof listen>[] = [];
  let urls: [string, string];
  if (layout === "two-ports") {
    servers.push(listen("127.0.0.1"), listen("127.0.0.1"));
    urls = [`http://127.0.0.1:${servers[0]!.port}`, `http://127.0.0.1:${servers[1]!.port}`];
  } else if (layout === "two-names") {
    servers.push(listen("127.0.0.1"));
    urls = [`http://localhost:${servers[0]!.port}`, `http://127.0.0.1:${servers[0]!.port}`];
  } else {
    servers.push(listen("127.0.0.2"), listen("127.0.0.3"));
    urls = [`http://127.0.0.2:${servers[0]!.port}`, `http://127.0.0.3:${servers[1]!.port}`];
  }
  const stop = () => {
    for (const s of servers.splice(0)) s.stop(true);
  };
  onCleanup(stop);
  return { urls, requests, stop };
}

// ---- A relay, to give a loopback server a second address.

export interface Relay {
  /** `http://ADDRESS:PORT` */
  readonly url: string;
  close(): Promise<void>;
}

/** Listens on `address` (a free port) and relays every TCP connection, byte for byte, to `target`'s host and port. */
export async function startRelay(address: string, target: string): Promise<Relay> {
  const to = new URL(target);
  const sockets = new Set<Socket>();
  const server = createServer((inbound) => {
    const outbound = createConnection({ host: to.hostname, port: Number(to.port) });
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
    }
    inbound.on("error", () => outbound.destroy());
    outbound.on("error", () => inbound.destroy());
    inbound.pipe(outbound);
    outbound.pipe(inbound);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, address, () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  let closed: Promise<void> | null = null;
  const close = () =>
    (closed ??= new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }));
  onCleanup(close);
  return { url: `http://${address}:${port}`, close };
}

// ---- The same forgery on a real local ledger.

export interface ForgerTopicOnLedger {
  readonly topicId: string;
  /**
   * Writes an announcement naming `claim` and a record message of a new forged record on the
   * forger's topic; resolves with the receipt, as the ledger's mirror shows both messages.
   */
  forge(claim: Claim, mirrorNodes?: readonly string[]): Promise<Forgery>;
  /** Writes any message on the topic; resolves with it as the ledger's mirror shows it (a batch message, say). */
  submit(message: Uint8Array): Promise<TopicMessage>;
  close(): void;
}

interface MirrorView {
  sequence_number: number;
  consensus_timestamp: string;
  message: string;
  running_hash: string;
}

/**
 * Opens a topic of the forger's own on the local ledger behind `mirrorUrl` (its gRPC address from
 * `/api/v1/network/nodes`), paid by the operator 0.0.2 with the ledger's public development key
 * (docs/local-ledger.md), with a submit key only the forger holds: the ledger's own rules, so its
 * mirrors serve the forger's messages like anyone's.
 */
export async function openForgerTopic(mirrorUrl: string): Promise<ForgerTopicOnLedger> {
  const base = mirrorUrl.replace(/\/+$/, "");
  const nodesBody = (await (await fetch(`${base}/api/v1/network/nodes`)).json()) as { nodes: { node_account_id: string; service_endpoints: { ip_address_v4?: string; domain_name?: string; port: number }[] }[] };
  const nodes: Record<string, string> = {};
  for (const n of nodesBody.nodes) for (const e of n.service_endpoints) nodes[`${e.domain_name || e.ip_address_v4}:${e.port}`] = n.node_account_id;
  const client = Client.forNetwork(nodes);
  client.setOperator("0.0.2", PrivateKey.fromStringDer(DEVELOPMENT_OPERATOR_KEY.privateKeyDer));
  const submitKey = PrivateKey.generateED25519();
  const topicId = (await (await new TopicCreateTransaction().setSubmitKey(submitKey.publicKey).execute(client)).getReceipt(client)).topicId!.toString();
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    client.close();
  };
  onCleanup(close);

  const submit = async (message: Uint8Array): Promise<TopicMessage> => {
    const tx = new TopicMessageSubmitTransaction().setTopicId(topicId).setMessage(message).freezeWith(client);
    await tx.sign(submitKey);
    const response = await tx.execute(client);
    const receipt = await response.getReceipt(client);
    const sequenceNumber = Number(receipt.topicSequenceNumber);
    const shown = await waitFor(`message #${sequenceNumber} of ${topicId} on the ledger's mirror`, async () => {
      const res = await fetch(`${base}/api/v1/topics/${topicId}/messages/${sequenceNumber}`);
      return res.status === 200 ? ((await res.json()) as MirrorView) : undefined;
    });
    return {
      sequenceNumber,
      consensusAt: shown.consensus_timestamp,
      message: new Uint8Array(Buffer.from(shown.message, "base64")),
      runningHash: new Uint8Array(Buffer.from(shown.running_hash, "base64")),
      transactionId: response.transactionId.toString(),
    };
  };

  const topic: ForgedTopic = { topicId, submitKey: { _type: "ED25519", key: hex(submitKey.publicKey.toBytesRaw()) }, messages: [] };
  return {
    topicId,
    async forge(claim, mirrorNodes = []) {
      const keys = forgerKeys();
      const record = signRecord(keys);
      const announced = await submit(announcementBytes(claim, keys));
      const anchored = await submit(record.message);
      topic.messages.push(announced, anchored);
      return { receipt: receiptOf(record, "local", topicId, anchored, announced, mirrorNodes), document: record.document, recordId: record.recordId, keys, claim, topic };
    },
    async submit(message) {
      const shown = await submit(message);
      topic.messages.push(shown);
      return shown;
    },
    close,
  };
}

// ---- Hiding a revocation.

export interface HiddenRevocation {
  /** The real receipt (fetched before the revocation), handed out with the liars as its mirror nodes. */
  readonly receipt: Record<string, any>;
  /** One liar per upstream, each leaving the revocation out of every answer. */
  readonly liars: LyingMirror[];
}

/**
 * A real receipt of a record that is revoked on the ledger, handed out by someone who wants it to
 * pass: its `mirrorNodes` are proxies of theirs (lying-mirror.ts, `hide`) in front of `upstreams`,
 * the ledger's real mirrors, that leave message `revocation.sequenceNumber` of its topic out.
 */
export async function hideRevocation(receiptText: string, upstreams: readonly string[], revocation: { readonly topicId: string; readonly sequenceNumber: number }): Promise<HiddenRevocation> {
  const liars: LyingMirror[] = [];
  for (const upstream of upstreams) {
    const liar = await startLyingMirror({ upstream, lie: { kind: "hide", topicId: revocation.topicId, sequenceNumber: revocation.sequenceNumber } });
    onCleanup(() => liar.close());
    liars.push(liar);
  }
  const receipt = JSON.parse(receiptText) as Record<string, any>;
  receipt.revocation = null;
  receipt.mirrorNodes = liars.map((l) => l.url);
  return { receipt, liars };
}
