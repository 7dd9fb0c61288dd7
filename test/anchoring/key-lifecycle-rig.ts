/**
 * What the key lifecycle's end-to-end tests share (docs/signing.md "Key lifecycle"): HTTP calls to
 * a running serve, a steady stream of records, and the organisation's topic read back from the
 * local ledger's mirror REST, with the rule every message on it must keep: each record message
 * after the announcement of the key that signed it and before any announcement replacing that
 * key, each key announced once, no record message lost or doubled.
 */
import { expect } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import type { ServiceProcess } from "../support/env.ts";
import { createRecordOnceTopicExists } from "../support/topic.ts";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { merkleTree } from "../../src/anchoring/merkle.ts";
import { DATABASE_FILE } from "../../src/storage/data-folder.ts";

export const HIGH_LIMITS = { DOCVERIFY_RATE_LIMIT_ANONYMOUS: "1000000", DOCVERIFY_RATE_LIMIT_KEY: "1000000", DOCVERIFY_RATE_LIMIT_ORG: "1000000" };
export const sha = () => `sha256:${createHash("sha256").update(randomBytes(32)).digest("hex")}`;

export interface Reply {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly text: string;
  readonly headers: Headers;
}

/** One request to `node`: GET without a body, POST with one; `key` null for the anonymous tier. */
export async function call(node: ServiceProcess, path: string, key: string | null, body?: unknown): Promise<Reply> {
  const res = await fetch(`${node.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { ...(key !== null ? { authorization: `Bearer ${key}` } : {}), ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text.startsWith("{") ? (JSON.parse(text) as Record<string, unknown>) : {}, text, headers: res.headers };
}

export interface Created {
  readonly recordId: string;
  readonly hash: string;
  readonly authenticatedAt: string;
}

/** POST /v1/records of a fresh hash: 201 (retried while the topic does not exist yet, or the anchor queue asks to wait). */
export async function createRecord(node: () => ServiceProcess, key: string): Promise<Created> {
  const hash = sha();
  const r = await createRecordOnceTopicExists(() => call(node(), "/v1/records", key, { originalDocHash: hash }));
  return { recordId: r.body.recordId as string, hash, authenticatedAt: r.body.authenticatedAt as string };
}

/** Records created one after another by `parallel` clients until `stop()`; what was acknowledged. */
export function recordStream(node: () => ServiceProcess, key: string, parallel = 2) {
  const created: Created[] = [];
  let stopping = false;
  const clients = Array.from({ length: parallel }, async () => {
    while (!stopping) created.push(await createRecord(node, key));
  });
  return {
    created,
    async stop(): Promise<Created[]> {
      stopping = true;
      await Promise.all(clients);
      return created;
    },
  };
}

export interface TopicMessage {
  readonly sequenceNumber: number;
  /** `seconds.nanoseconds`. */
  readonly consensusAt: string;
  readonly m: Record<string, string>;
}

/** Every message on `topicId`, in order, from the mirror REST at `mirrorUrl`. */
export async function topicMessages(mirrorUrl: string, topicId: string): Promise<TopicMessage[]> {
  const out: TopicMessage[] = [];
  let next: string | null = `/api/v1/topics/${topicId}/messages?limit=100&order=asc`;
  while (next !== null) {
    const res: Response = await fetch(new URL(next, mirrorUrl));
    expect(res.status).toBe(200);
    const page = (await res.json()) as { messages: { message: string; sequence_number: number; consensus_timestamp: string }[]; links: { next: string | null } };
    for (const x of page.messages) {
      out.push({ sequenceNumber: x.sequence_number, consensusAt: x.consensus_timestamp, m: JSON.parse(Buffer.from(x.message, "base64").toString("utf8")) as Record<string, string> });
    }
    next = page.links.next;
  }
  return out;
}

/**
 * The topic's messages with each batch message replaced by its leaves, in leaf order, at the
 * batch's place (a leaf is anchored where its batch is: docs/anchoring.md "Batches"). `leavesOf`
 * gives a batch's leaves by its organisation and batch sequence (from the appliance's database: the
 * topic carries only the root; found by what the message says, so also before the appliance has
 * recorded the batch anchored); each
 * batch's root and size are recomputed from them, and no leaf may be in two batches.
 */
export function withLeaves(messages: readonly TopicMessage[], leavesOf: (orgId: string, batch: number) => readonly Uint8Array[]): TopicMessage[] {
  const out: TopicMessage[] = [];
  const seen = new Set<string>();
  for (const x of messages) {
    if (x.m.type !== "batch") {
      out.push(x);
      continue;
    }
    const leaves = leavesOf(x.m.orgId!, Number(x.m.batch));
    expect({ batch: x.sequenceNumber, size: leaves.length, root: Buffer.from(merkleTree([...leaves]).root).toString("hex") }).toEqual({
      batch: x.sequenceNumber,
      size: Number(x.m.size),
      root: x.m.root!,
    });
    for (const leaf of leaves) {
      const text = Buffer.from(leaf).toString("utf8");
      expect({ leaf: text, twice: seen.has(text) }).toEqual({ leaf: text, twice: false });
      seen.add(text);
      out.push({ sequenceNumber: x.sequenceNumber, consensusAt: x.consensusAt, m: JSON.parse(text) as Record<string, string> });
    }
  }
  return out;
}

/** The leaves of every closed batch in an embedded data folder's database, by organisation and batch sequence. */
export function leavesInDataFolder(dataDir: string): (orgId: string, batch: number) => Uint8Array[] {
  const db = new Database(join(dataDir, DATABASE_FILE), { readonly: true });
  try {
    const rows = db
      .query(
        `SELECT b.org_id AS org, b.batch_sequence AS seq, l.message AS message FROM ledger_transactions l JOIN ledger_transactions b ON b.transaction_id = l.batch_transaction_id
          WHERE b.batch_sequence IS NOT NULL AND l.batch_leaf = 1 ORDER BY b.batch_sequence, l.leaf_index`,
      )
      .all() as { org: string; seq: number; message: Uint8Array }[];
    return byBatch(rows.map((r) => [r.org, r.seq, new Uint8Array(r.message)]));
  } finally {
    db.close();
  }
}

/** The same from a PostgreSQL database, through `psql` (unaligned, tuples only). */
export function leavesInPostgres(psql: (sql: string) => string): (orgId: string, batch: number) => Uint8Array[] {
  const out = psql(
    `SELECT b.org_id || '|' || b.batch_sequence || '|' || encode(l.message, 'hex') FROM ledger_transactions l JOIN ledger_transactions b ON b.transaction_id = l.batch_transaction_id
      WHERE b.batch_sequence IS NOT NULL AND l.batch_leaf = 1 ORDER BY b.batch_sequence, l.leaf_index`,
  );
  const rows = out
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((line): [string, number, Uint8Array] => {
      const [org, seq, hex] = line.trim().split("|") as [string, string, string];
      return [org, Number(seq), new Uint8Array(Buffer.from(hex, "hex"))];
    });
  return byBatch(rows);
}

function byBatch(rows: readonly (readonly [string, number, Uint8Array])[]): (orgId: string, batch: number) => Uint8Array[] {
  const leaves = new Map<string, Uint8Array[]>();
  for (const [org, seq, message] of rows) leaves.set(`${org} ${seq}`, [...(leaves.get(`${org} ${seq}`) ?? []), message]);
  return (orgId, batch) => leaves.get(`${orgId} ${batch}`) ?? [];
}

/** `sha256:` + hex SHA-256 of a raw public key, as a record message names its signer (docs/records.md §3). */
export const publicKeyDigest = (publicKey: Uint8Array) => `sha256:${createHash("sha256").update(publicKey).digest("hex")}`;

/**
 * Asserts the key windows on `messages` (one organisation's topic) and returns what it found:
 * every key announced exactly once; each record message after its key's announcement and before
 * the announcement of a key that replaced it; the record messages exactly `recordIds`, once each.
 * `keyOf` maps a record message's `signerPublicKeySha256` to its key's fingerprint.
 */
export function expectKeyWindows(messages: readonly TopicMessage[], keyOf: (digest: string) => string, recordIds: readonly string[]) {
  const announced = new Map<string, number>();
  const replacedAt = new Map<string, number>();
  const announcements: Record<string, string>[] = [];
  messages.forEach(({ m }, i) => {
    if (m.type !== "key") return;
    expect([m.keyFingerprint, announced.has(m.keyFingerprint!)]).toEqual([m.keyFingerprint, false]);
    announced.set(m.keyFingerprint!, i);
    announcements.push(m);
    if (m.replaces !== undefined) {
      expect([m.replaces, replacedAt.has(m.replaces)]).toEqual([m.replaces, false]);
      replacedAt.set(m.replaces, i);
    }
  });
  const records = messages.map((x, i) => ({ ...x, i })).filter((x) => x.m.type === "record");
  const byKey = new Map<string, number>();
  for (const r of records) {
    const key = keyOf(r.m.signerPublicKeySha256!);
    const from = announced.get(key);
    const until = replacedAt.get(key) ?? Infinity;
    expect({ record: r.m.recordId, after: from !== undefined && from < r.i, before: r.i < until }).toEqual({ record: r.m.recordId, after: true, before: true });
    byKey.set(key, (byKey.get(key) ?? 0) + 1);
  }
  expect(records.map((r) => r.m.recordId).sort()).toEqual([...recordIds].sort());
  return { announcements, byKey, compromises: messages.filter((x) => x.m.type === "key_compromise") };
}

/** A consensus time `seconds.nanoseconds` as the API spells a revocation time (RFC 3339, ms, rounded down). */
export function consensusMs(consensusAt: string): string {
  const [s, n] = consensusAt.split(".") as [string, string];
  return new Date(Number(s) * 1000 + Math.floor(Number(n) / 1e6)).toISOString();
}
