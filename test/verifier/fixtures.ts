/**
 * A receipt and the ledger behind it, built with the product's own encoders (src/crypto/,
 * src/records/messages.ts) and noble deterministic keys from fixed seeds, and fake mirror nodes
 * that serve that ledger over HTTP in the real mirror node REST shapes (Bun.serve). Each mirror
 * holds its own copy of the ledger, so a test can make one of them lie.
 */
import { ml_dsa65 } from "@noble/post-quantum/ml-dsa.js";
import { createHash } from "node:crypto";
import { encodeRecordPayload, encodeSealPayload, keyFingerprint } from "../../src/crypto/index.ts";
import { merkleTree } from "../../src/anchoring/merkle.ts";
import { encodeBatchMessage, encodeCreationMessage, encodeRevocationMessage } from "../../src/records/messages.ts";
import { onCleanup } from "../support/env.ts";
import { nextLoopback } from "../support/loopback.ts";

export const ORG_SEED = Uint8Array.from({ length: 32 }, (_, i) => i);
export const SEAL_SEED = Uint8Array.from({ length: 32 }, (_, i) => 0x20 + i);
export const RECORD_ID = "0190f5a3-7c1e-7d2a-9b4c-3e5f6a7b8c9d";
export const ORG_ID = "0190f5a3-0000-7000-8000-000000000001";
export const DOCUMENT = new TextEncoder().encode("hello");
export const DOC_HASH = "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";
export const OTHER_HASH = "sha256:" + "ab".repeat(32);
export const AUTHENTICATED_AT = "2026-01-15T09:30:00.123Z";
export const TOPIC = "0.0.5012345";

const b64 = (b: Uint8Array) => Buffer.from(b).toString("base64");
const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

const orgKeys = ml_dsa65.keygen(ORG_SEED);
const sealKeys = ml_dsa65.keygen(SEAL_SEED);

/** The signer key's fingerprint (docs/signing.md §2), as a trust file or a domain's document lists it. */
export const SIGNER_FINGERPRINT = hex(keyFingerprint({ algorithm: "ML-DSA-65", publicKey: orgKeys.publicKey }));

/** One message as the ledger holds it. */
export interface LedgerMessage {
  sequenceNumber: number;
  consensusAt: string;
  message: Uint8Array;
  runningHash: Uint8Array;
}

export interface Ledger {
  topicId: string;
  /** null: a topic anyone may write to; undefined: no such topic. */
  submitKey: { _type: string; key: string } | null | undefined;
  messages: LedgerMessage[];
}

/** Consensus time of message `n`: 1768469390 + 10·n seconds, odd nanoseconds. */
export const consensusOf = (n: number) => `${1768469390 + 10 * n}.${String(7 + n).padStart(9, "0")}`;
const runningHashOf = (n: number) => new Uint8Array(createHash("sha384").update(`running ${n}`).digest());

export interface Built {
  /** The receipt as a JSON value (mutable: tests change fields). */
  receipt: Record<string, any>;
  ledger: Ledger;
}

export interface BuildOptions {
  signerType?: "org" | "user";
  /** Messages of other records between the record and the end of the topic. */
  fillers?: number;
  /** A revocation of the record on the ledger, after the fillers. */
  revoked?: boolean;
  orgName?: string;
  /** The domain the key announcement claims (none by default, as before organisations had one). */
  domain?: string;
}

export const PERSON_ID = "0190f5a3-7c1e-7d2a-9b4c-0000000000aa";

export function announcementBytes(name = "Acme Ltd", over: Record<string, unknown> = {}): Uint8Array {
  const fp = (pk: Uint8Array) => hex(keyFingerprint({ algorithm: "ML-DSA-65", publicKey: pk }));
  return new TextEncoder().encode(
    JSON.stringify({ v: 1, type: "key", orgId: ORG_ID, name, algorithm: "ML-DSA-65", keyFingerprint: fp(orgKeys.publicKey), sealKeyFingerprint: fp(sealKeys.publicKey), ...over }),
  );
}

export const SIGNER_SIGNATURE_PAYLOAD = encodeRecordPayload({
  recordId: RECORD_ID,
  docHash: DOC_HASH,
  signedAtMs: Date.parse(AUTHENTICATED_AT),
  signerKeyFingerprint: keyFingerprint({ algorithm: "ML-DSA-65", publicKey: orgKeys.publicKey }),
});
const signature = ml_dsa65.sign(SIGNER_SIGNATURE_PAYLOAD, orgKeys.secretKey, { extraEntropy: false });
const sealPayload = encodeSealPayload(SIGNER_SIGNATURE_PAYLOAD, signature, keyFingerprint({ algorithm: "ML-DSA-65", publicKey: sealKeys.publicKey }));
const sealSignature = ml_dsa65.sign(sealPayload, sealKeys.secretKey, { extraEntropy: false });
const creation = encodeCreationMessage({ recordId: RECORD_ID, docHash: DOC_HASH, signedAtMs: Date.parse(AUTHENTICATED_AT), signerPublicKey: orgKeys.publicKey, signature, sealSignature });

export function revocationBytes(recordId = RECORD_ID, reason = "SUPERSEDED"): Uint8Array {
  return encodeRevocationMessage({ recordId, reason, revokedAtMs: Date.parse("2026-01-16T09:30:00.123Z") });
}

/** A receipt for DOCUMENT, and its topic: the announcement (#1), the record (#2), fillers, maybe a revocation. */
export function buildReceipt(options: BuildOptions = {}): Built {
  const messages: LedgerMessage[] = [];
  const push = (message: Uint8Array) => {
    const n = messages.length + 1;
    messages.push({ sequenceNumber: n, consensusAt: consensusOf(n), message, runningHash: runningHashOf(n) });
  };
  // A person's key is announced by ids only (docs/receipts.md §1): the same key here, as a
  // person's.
  const domain = options.domain === undefined ? {} : { domain: options.domain };
  push(options.signerType === "user" ? announcementBytes(undefined, { type: "person_key", name: undefined, personId: PERSON_ID, ...domain }) : announcementBytes(options.orgName, domain));
  push(creation);
  for (let i = 0; i < (options.fillers ?? 0); i++) {
    // Other records' revocations and messages that are not JSON: the scan must pass over both.
    push(i % 2 === 0 ? revocationBytes(`0190f5a3-7c1e-7d2a-9b4c-${String(i).padStart(12, "0")}`) : new TextEncoder().encode(`filler ${i}`));
  }
  if (options.revoked) push(revocationBytes());
  const [announcement, record] = [messages[0]!, messages[1]!];
  const receipt = {
    v: 1,
    recordId: RECORD_ID,
    originalDocHash: DOC_HASH,
    authenticatedAt: AUTHENTICATED_AT,
    // An organisation's record is record_only, a person's signed PDF pdf_embedded (the kind check).
    kind: options.signerType === "user" ? "pdf_embedded" : "record_only",
    signerType: options.signerType ?? "org",
    signer: { algorithm: "ML-DSA-65", publicKey: b64(orgKeys.publicKey), payload: b64(SIGNER_SIGNATURE_PAYLOAD), signature: b64(signature) },
    seal: { algorithm: "ML-DSA-65", publicKey: b64(sealKeys.publicKey), payload: b64(sealPayload), signature: b64(sealSignature) },
    anchor: {
      network: "testnet",
      topicId: TOPIC,
      sequenceNumber: record.sequenceNumber,
      consensusAt: record.consensusAt,
      transactionId: "0.0.1234@1768469400.123000000",
      message: b64(record.message),
      runningHash: b64(record.runningHash),
      inclusion: null,
    },
    keyAnnouncement: { topicId: TOPIC, sequenceNumber: announcement.sequenceNumber, consensusAt: announcement.consensusAt, message: b64(announcement.message) },
    revocation: null as unknown,
    mirrorNodes: ["https://testnet.mirrornode.hedera.com"],
    issuedAt: "2026-11-24T12:00:00.000Z",
  };
  return { receipt, ledger: { topicId: TOPIC, submitKey: { _type: "ED25519", key: "ab".repeat(32) }, messages } };
}

export interface BatchOptions {
  /** Leaves of the record's batch (default 5), the record's at `leafIndex` (default 1); the others revocations of other records. */
  size?: number;
  leafIndex?: number;
  /** A later batch (after `fillers` messages) whose leaves include the record's revocation, listed in its `revoked`. */
  revokedInBatch?: boolean;
  /** The record's own revocation as the last leaf of its own batch (created and revoked within one window). */
  revokedInOwnBatch?: boolean;
  fillers?: number;
  /** The batch messages' orgId (default the announcement's). */
  orgId?: string;
}

export interface BatchedBuilt extends Built {
  /** The record's batch message (#2) and its leaves. */
  batchMessage: Uint8Array;
  leaves: Uint8Array[];
  /** The revoking batch's leaves (`revokedInBatch`): another record's creation, then the record's revocation. */
  revokingLeaves: Uint8Array[] | null;
  /** The receipt's `revocation` as the appliance would issue it for the revoking batch (null without one). */
  revocation: Record<string, any> | null;
}

/** An inclusion proof as a receipt carries it. */
export function inclusionOf(leaves: readonly Uint8Array[], leafIndex: number): Record<string, any> {
  const tree = merkleTree(leaves);
  return { algorithm: "RFC9162-SHA256", leafMessage: b64(leaves[leafIndex]!), leafIndex, treeSize: leaves.length, path: tree.paths[leafIndex]!.map(b64) };
}

/**
 * A receipt for DOCUMENT anchored in a batch (docs/receipts.md §1, "Batches"): the announcement (#1),
 * the batch message (#2) whose tree holds the record's creation message among revocations of other
 * records, fillers, and maybe a later batch revoking the record. `anchor.message` is the batch
 * message, `anchor.inclusion` the record's leaf and path.
 */
export function buildBatchedReceipt(options: BatchOptions = {}): BatchedBuilt {
  const built = buildReceipt({ fillers: options.fillers });
  const size = options.size ?? 5;
  const leafIndex = options.leafIndex ?? 1;
  const other = (i: number) => `0190f5a3-7c1e-7d2a-9b4c-${String(900 + i).padStart(12, "0")}`;
  const leaves = Array.from({ length: size }, (_, i) => (i === leafIndex ? creation : revocationBytes(other(i))));
  const revoked = Array.from({ length: size }, (_, i) => i).filter((i) => i !== leafIndex).map(other);
  if (options.revokedInOwnBatch) {
    leaves.push(revocationBytes());
    revoked.push(RECORD_ID);
  }
  const orgId = options.orgId ?? ORG_ID;
  const batchMessage = encodeBatchMessage({ orgId, batch: 1, size: leaves.length, root: merkleTree(leaves).root, revoked });
  const messages = built.ledger.messages;
  messages[1] = { ...messages[1]!, message: batchMessage };
  let revocation: Record<string, any> | null = null;
  let later: Uint8Array[] | null = null;
  if (options.revokedInBatch) {
    // Created after the receipt was issued: a record of another, then the record's revocation.
    later = [encodeCreationMessage({ recordId: other(99), docHash: OTHER_HASH, signedAtMs: Date.parse(AUTHENTICATED_AT) + 1000, signerPublicKey: orgKeys.publicKey, signature, sealSignature }), revocationBytes()];
    const message = encodeBatchMessage({ orgId, batch: 2, size: later.length, root: merkleTree(later).root, revoked: [RECORD_ID] });
    const n = messages.length + 1;
    messages.push({ sequenceNumber: n, consensusAt: consensusOf(n), message, runningHash: runningHashOf(n) });
    revocation = {
      reason: "SUPERSEDED",
      revokedAt: "2026-01-16T09:30:00.123Z",
      anchor: { network: "testnet", topicId: TOPIC, sequenceNumber: n, consensusAt: consensusOf(n), transactionId: "0.0.1234@1768469500.000000000", message: b64(message), runningHash: b64(runningHashOf(n)), inclusion: inclusionOf(later, 1) },
    };
  }
  Object.assign(built.receipt.anchor, { message: b64(batchMessage), inclusion: inclusionOf(leaves, leafIndex) });
  return { ...built, batchMessage, leaves, revokingLeaves: later, revocation };
}

export const cloneLedger = (l: Ledger): Ledger => ({ topicId: l.topicId, submitKey: l.submitKey === undefined || l.submitKey === null ? l.submitKey : { ...l.submitKey }, messages: l.messages.map((m) => ({ ...m, message: m.message.slice(), runningHash: m.runningHash.slice() })) });

export interface FakeMirror {
  readonly url: string;
  ledger: Ledger;
  /** How the mirror misbehaves: answers garbage, hangs, or answers 500. */
  mode: "ok" | "garbage" | "hang" | "error500" | "html404";
  /** Messages per page at most (the real one: 100). */
  pageSize: number;
  /** Requests seen, path and query. */
  readonly requests: string[];
  /** The Host header of each request seen, in the same order. */
  readonly hostHeaders: string[];
  stop(): void;
}

const notFound = () => Response.json({ _status: { messages: [{ message: "Not found" }] } }, { status: 404 });

function view(topicId: string, m: LedgerMessage) {
  return {
    chunk_info: null,
    consensus_timestamp: m.consensusAt,
    message: b64(m.message),
    payer_account_id: "0.0.1234",
    running_hash: b64(m.runningHash),
    running_hash_version: 3,
    sequence_number: m.sequenceNumber,
    topic_id: topicId,
  };
}

const compare = (a: string, b: string) => {
  const [as, an] = a.split(".").map(Number) as [number, number];
  const [bs, bn] = b.split(".").map(Number) as [number, number];
  return as - bs || an - bn;
};

/**
 * A mirror node over `ledger` (a copy of it), on a free port of a loopback address of its own
 * (so two fake mirrors are two hosts to the verifier), stopped at cleanup.
 */
export function fakeMirror(ledger: Ledger, hostname = nextLoopback()): FakeMirror {
  const state: FakeMirror = {
    url: "",
    ledger: cloneLedger(ledger),
    mode: "ok",
    pageSize: 100,
    requests: [],
    hostHeaders: [],
    stop: () => server.stop(true),
  };
  const server = Bun.serve({
    port: 0,
    hostname,
    fetch: async (req) => {
      const url = new URL(req.url);
      state.requests.push(url.pathname + url.search);
      state.hostHeaders.push(req.headers.get("host") ?? "");
      if (state.mode === "hang") return await new Promise<Response>(() => {});
      if (state.mode === "garbage") return new Response("<html>maintenance</html>", { status: 200 });
      if (state.mode === "error500") return Response.json({ _status: { messages: [{ message: "Internal error" }] } }, { status: 500 });
      if (state.mode === "html404") return new Response("not here", { status: 404 });
      const l = state.ledger;
      const parts = url.pathname.split("/").filter((p) => p !== "");
      // /api/v1/topics/{id}[/messages[/{seq}]]
      if (parts[0] !== "api" || parts[1] !== "v1" || parts[2] !== "topics" || parts[3] === undefined) return notFound();
      if (parts[3] !== l.topicId) return parts[4] === "messages" && parts[5] === undefined ? Response.json({ messages: [], links: { next: null } }) : notFound();
      if (parts[4] === undefined) {
        if (l.submitKey === undefined) return notFound();
        return Response.json({ admin_key: null, auto_renew_account: null, deleted: false, memo: "", submit_key: l.submitKey, topic_id: l.topicId });
      }
      if (parts[4] !== "messages") return notFound();
      if (parts[5] !== undefined) {
        const m = l.messages.find((x) => x.sequenceNumber === Number(parts[5]));
        return m ? Response.json(view(l.topicId, m)) : notFound();
      }
      const gt = url.searchParams.get("timestamp")?.replace(/^gt:/, "") ?? "0.000000000";
      const limit = Math.min(Number(url.searchParams.get("limit") ?? "25"), state.pageSize);
      const rows = l.messages.filter((m) => compare(m.consensusAt, gt) > 0).sort((a, b) => compare(a.consensusAt, b.consensusAt)).slice(0, limit);
      const last = rows[rows.length - 1];
      const next = rows.length === limit && last ? `/api/v1/topics/${l.topicId}/messages?timestamp=gt:${last.consensusAt}&limit=${url.searchParams.get("limit")}&order=asc` : null;
      return Response.json({ messages: rows.map((m) => view(l.topicId, m)), links: { next } });
    },
  });
  (state as { url: string }).url = `http://${hostname}:${server.port}`;
  onCleanup(() => server.stop(true));
  return state;
}

/** A loopback URL where nothing listens (a port just released). */
export function deadUrl(): string {
  const hostname = nextLoopback();
  const s = Bun.serve({ port: 0, hostname, fetch: () => new Response("") });
  const url = `http://${hostname}:${s.port}`;
  s.stop(true);
  return url;
}

/** The fixture's organisation pinned as a trust file pins it (docs/receipts.md §7); `over` changes fields. */
export function pinnedOrganisation(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { orgId: ORG_ID, name: "Acme Ltd", domain: "acme.example", network: "testnet", topicId: TOPIC, keys: [{ algorithm: "ML-DSA-65", fingerprint: SIGNER_FINGERPRINT }], ...over };
}

/** A trust file's text: the fixture's organisation pinned, and `networks`' mirror nodes. */
export function trustFileText(options: { networks?: Record<string, { mirrors: string[] }>; organisations?: Record<string, unknown>[] } = {}): string {
  return JSON.stringify({ v: 1, service: "https://verify.example.org", exportedAt: "2026-11-28T12:00:00.000Z", networks: options.networks ?? {}, organisations: options.organisations ?? [pinnedOrganisation()] });
}
