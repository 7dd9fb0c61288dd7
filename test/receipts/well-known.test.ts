/**
 * GET /.well-known/docverify.json (docs/receipts.md §5), in-process and against `docverify serve`:
 * exactly the organisations with a topic, in the documented order, with their keys' fingerprints
 * recomputed from the stored public keys, announcement times from the journal, the seal keys, and
 * names as JSON writes them (no HTML escaping: it is JSON).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import type { App } from "../../src/app/sqlite.ts";
import { keyFingerprint } from "../../src/crypto/index.ts";
import { docHashOf } from "../support/records-fixture.ts";
import { cleanup, testApp } from "../support/env.ts";
import { startServiceWithOrg } from "../support/service-with-org.ts";
import { createRecordOnceTopicExists } from "../support/topic.ts";
import { waitFor } from "../support/wait.ts";
import { announced } from "./announce.ts";

afterAll(cleanup);

type Json = Record<string, any>;
const HIGH = { DOCVERIFY_RATE_LIMIT_ANONYMOUS: "100000", DOCVERIFY_RATE_LIMIT_KEY: "100000", DOCVERIFY_RATE_LIMIT_ORG: "100000" };
const FAST = { DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: "1000" };
const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

describe("/.well-known/docverify.json in-process", () => {
  let app: App;
  let request: (path: string, init?: RequestInit, peer?: string) => Promise<Response>;
  const NAMES = { zeta: `Zeta <script>alert("x")</script> & 'Sons' Ltd`, alpha: "Alpha Ltd", emoji: "Émile 😀 Ltd" };
  const ids: Record<string, string> = {};
  let noTopic: string;
  let extraKey: Uint8Array;

  const topicOf = (orgId: string) => (app.db.$client.query("SELECT topic_id FROM organisations WHERE id = ?").get(orgId) as { topic_id: string | null }).topic_id;
  const keyOf = (fp: Uint8Array) => app.db.$client.query("SELECT algorithm, public_key FROM signing_keys WHERE fingerprint = ?").get(fp) as { algorithm: "ML-DSA-65"; public_key: Uint8Array };
  const systemKey = (orgId: string) => (app.db.$client.query("SELECT system_key_fingerprint FROM organisations WHERE id = ?").get(orgId) as { system_key_fingerprint: Uint8Array }).system_key_fingerprint;

  beforeAll(async () => {
    ({ app, request } = await testApp({ env: { ...HIGH, ...FAST, DOCVERIFY_PUBLIC_URL: "https://verify.example.org/" } }));
    // Two organisations of the same name (ordered by id), one whose name HTML would escape, one
    // beyond ASCII; one without the add-on, so the service never gives it a topic. Names are
    // unique now: the second "Alpha Ltd" is one a folder of an earlier release may hold, kept
    // with a key of its own (storage/org-name-keys.ts).
    for (const [tag, name] of [["zeta", NAMES.zeta], ["alpha1", NAMES.alpha], ["alpha2", `${NAMES.alpha} (2)`], ["emoji", NAMES.emoji]] as const) {
      ids[tag] = (await app.organisations.create({ name, apiAccess: true, addon: true, validated: true }, "test")).id;
    }
    app.db.$client.query("UPDATE organisations SET name = ?, name_key = ? WHERE id = ?").run(NAMES.alpha, `alpha ltd#${ids.alpha2}`, ids.alpha2!);
    noTopic = (await app.organisations.create({ name: "Aaa Without Topic Ltd", apiAccess: true, addon: false, validated: true }, "test")).id;
    const key = (await app.apiKeys.mint({ orgId: ids.zeta!, environment: "live" }, "test")).key;
    // A record makes the service's seal key.
    await createRecordOnceTopicExists(() =>
      request("/v1/records", { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body: JSON.stringify({ originalDocHash: docHashOf("well-known") }) }),
    );
    for (const id of Object.values(ids)) {
      await waitFor(`organisation ${id}'s topic`, () => topicOf(id), 20_000);
      await announced(app.db, id);
    }
    // A second key of zeta's, announced but not final; a third whose announcement was abandoned.
    const db = app.db.$client;
    const addKey = (state: string) => {
      const publicKey = randomBytes(1952);
      const fp = keyFingerprint({ algorithm: "ML-DSA-65", publicKey });
      db.query("INSERT INTO signing_keys (fingerprint, algorithm, public_key, purpose, sealed_seed, created_at) VALUES (?, 'ML-DSA-65', ?, ?, NULL, 1)").run(fp, publicKey, `org:${ids.zeta}`);
      const now = Date.now();
      db.query(
        `INSERT INTO ledger_transactions (transaction_id, kind, org_id, topic_id, message, key_fingerprint, valid_start_ms, valid_seconds, state, next_attempt_at, created_at, updated_at)
         VALUES (?, 'key_announcement', ?, ?, x'7b7d', ?, ?, 180, ?, ?, ?, ?)`,
      ).run(`0.0.2@${Math.floor(now / 1000)}.${String(randomBytes(3).readUIntBE(0, 3)).padStart(9, "0")}`, ids.zeta!, topicOf(ids.zeta!), fp, now, state, now + 3_600_000, now, now);
      return fp;
    };
    extraKey = addKey("pending");
    addKey("abandoned");
  }, 90_000);

  test("lists exactly the organisations with a topic, by name then id, each with its network, topic and keys", async () => {
    const res = await request("/.well-known/docverify.json");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const body = (await res.json()) as Json;
    expect(Object.keys(body)).toEqual(["v", "service", "organisations", "sealKeys"]);
    expect(body.v).toBe(1);
    expect(body.service).toBe("https://verify.example.org");
    const alphas = [ids.alpha1!, ids.alpha2!].sort();
    expect(body.organisations.map((o: Json) => o.orgId)).toEqual([...alphas, ids.zeta, ids.emoji]);
    expect(body.organisations.map((o: Json) => o.orgId)).not.toContain(noTopic);
    for (const o of body.organisations as Json[]) {
      expect(Object.keys(o)).toEqual(["orgId", "name", "domain", "network", "topicId", "keys"]);
      expect(o.domain).toBeNull();
      expect(o.network).toBe("local");
      expect(o.topicId).toBe(topicOf(o.orgId));
      const announcement = await announced(app.db, o.orgId);
      const own = systemKey(o.orgId);
      const stored = keyOf(own);
      const first = o.keys[0] as Json;
      expect(Object.keys(first)).toEqual(["algorithm", "fingerprint", "announcedAt", "sequenceNumber"]);
      // The fingerprint is the stored key's, recomputed as docs/signing.md §2 says; its window starts at its announcement.
      expect(first).toEqual({ algorithm: "ML-DSA-65", fingerprint: hex(keyFingerprint({ algorithm: stored.algorithm, publicKey: stored.public_key })), announcedAt: announcement.consensusAt, sequenceNumber: announcement.sequenceNumber });
      expect(first.fingerprint).toBe(hex(own));
      expect(first.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    }
  });

  test("a key announced but not final is listed after, with announcedAt null; an abandoned announcement's key is not", async () => {
    const body = (await (await request("/.well-known/docverify.json")).json()) as Json;
    const zeta = (body.organisations as Json[]).find((o) => o.orgId === ids.zeta)!;
    expect(zeta.keys).toHaveLength(2);
    expect(zeta.keys[1]).toEqual({ algorithm: "ML-DSA-65", fingerprint: hex(extraKey), announcedAt: null, sequenceNumber: null });
    for (const o of body.organisations as Json[]) if (o.orgId !== ids.zeta) expect(o.keys).toHaveLength(1);
  });

  test("names are whole and escaped by JSON's rules only", async () => {
    const text = await (await request("/.well-known/docverify.json")).text();
    expect(text).toContain(JSON.stringify(NAMES.zeta));
    expect(text).toContain(`"name":"Émile 😀 Ltd"`);
    expect(text).not.toContain("&lt;");
    expect(text).not.toContain("&amp;");
    expect(text).not.toContain("\\u003c");
    const body = JSON.parse(text) as Json;
    expect((body.organisations as Json[]).find((o) => o.orgId === ids.zeta)!.name).toBe(NAMES.zeta);
  });

  test("sealKeys: the service's seal key, by fingerprint", async () => {
    const body = (await (await request("/.well-known/docverify.json")).json()) as Json;
    const meta = app.db.$client.query("SELECT value FROM service_meta WHERE key = 'seal_key_fingerprint'").get() as { value: string };
    const stored = keyOf(Buffer.from(meta.value, "hex"));
    expect(body.sealKeys).toEqual([{ algorithm: "ML-DSA-65", fingerprint: hex(keyFingerprint({ algorithm: stored.algorithm, publicKey: stored.public_key })) }]);
    expect(body.sealKeys[0].fingerprint).toBe(meta.value);
  });

  test("needs no credential, takes a browser's Origin, is readable by any origin, and is never cached", async () => {
    const res = await request("/.well-known/docverify.json", { headers: { origin: "https://elsewhere.example", authorization: "Bearer nonsense" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("x-ratelimit-limit")).toBe("100000");
    // Only this document: the API itself still refuses a browser's Origin, and says nothing of CORS.
    const api = await request("/v1/verifications", { method: "POST", headers: { origin: "https://elsewhere.example", "content-type": "application/json" }, body: "{}" });
    expect(api.status).toBe(403);
    expect(api.headers.get("access-control-allow-origin")).toBeNull();
  });

  test("domain: null until the administrator sets one, then the organisation's, right after its name; cleared, null again", async () => {
    const domainOf = async (orgId: string) => {
      const body = (await (await request("/.well-known/docverify.json")).json()) as Json;
      const o = (body.organisations as Json[]).find((x) => x.orgId === orgId)!;
      expect(Object.keys(o)).toEqual(["orgId", "name", "domain", "network", "topicId", "keys"]);
      return o.domain as string | null;
    };
    expect(await domainOf(ids.emoji!)).toBeNull();
    await app.organisations.set(ids.emoji!, { domain: "Xn--mile-9na.Example" }, "test");
    expect(await domainOf(ids.emoji!)).toBe("xn--mile-9na.example");
    expect(await domainOf(ids.zeta!)).toBeNull();
    const text = await (await request("/.well-known/docverify.json")).text();
    expect(text).toContain(`"name":"Émile 😀 Ltd","domain":"xn--mile-9na.example","network":"local"`);
    await app.organisations.set(ids.emoji!, { domain: null }, "test");
    expect(await domainOf(ids.emoji!)).toBeNull();
  });

  test("each key with its window: a key replaced by another whose announcement is anchored gets replacedAt and replacedBySequenceNumber, a key declared compromised compromisedSince", async () => {
    const db = app.db.$client;
    const old = systemKey(ids.emoji!);
    const first = await announced(app.db, ids.emoji!);
    // As a rotation and a compromise leave the rows (the new key's announcement anchored later on the topic).
    const publicKey = randomBytes(1952);
    const successor = keyFingerprint({ algorithm: "ML-DSA-65", publicKey });
    db.query("INSERT INTO signing_keys (fingerprint, algorithm, public_key, purpose, sealed_seed, created_at, replaces) VALUES (?, 'ML-DSA-65', ?, ?, NULL, 2, ?)").run(successor, publicKey, `org:${ids.emoji}`, old);
    db.query("UPDATE signing_keys SET retired_at = 3, compromised_since = ?, compromised_at = 4 WHERE fingerprint = ?").run(Date.UTC(2026, 0, 15, 9, 30, 0, 123), old);
    const seq = first.sequenceNumber + 1000;
    const at = `${Number(first.consensusAt.split(".")[0]) + 1000}.000000001`;
    db.query(
      `INSERT INTO ledger_transactions (transaction_id, kind, org_id, topic_id, message, key_fingerprint, announcement_generation, valid_start_ms, valid_seconds, state, sequence_number, consensus_at, running_hash, next_attempt_at, created_at, updated_at)
       VALUES ('0.0.2@1700000000.000000077', 'key_announcement', ?, ?, x'7b7d', ?, 0, 1, 180, 'anchored', ?, ?, x'00', 0, 1, 1)`,
    ).run(ids.emoji!, topicOf(ids.emoji!), successor, seq, at);
    const body = (await (await request("/.well-known/docverify.json", {}, "198.51.100.77")).json()) as Json;
    const emoji = (body.organisations as Json[]).find((o) => o.orgId === ids.emoji)!;
    expect(emoji.keys).toEqual([
      { algorithm: "ML-DSA-65", fingerprint: hex(old), announcedAt: first.consensusAt, sequenceNumber: first.sequenceNumber, replacedAt: at, replacedBySequenceNumber: seq, compromisedSince: "2026-01-15T09:30:00.123Z" },
      { algorithm: "ML-DSA-65", fingerprint: hex(successor), announcedAt: at, sequenceNumber: seq },
    ]);
  });
});

describe("/.well-known/docverify.json: rate limit and an empty installation", () => {
  test("an installation without topics lists none; the client IP's anonymous budget runs out with 429, readable by any origin", async () => {
    const { request } = await testApp({ env: { DOCVERIFY_RATE_LIMIT_ANONYMOUS: "2", DOCVERIFY_PUBLIC_URL: "https://empty.example.org" } });
    const first = await request("/.well-known/docverify.json", {}, "203.0.113.9");
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ v: 1, service: "https://empty.example.org", organisations: [], sealKeys: [] });
    expect((await request("/.well-known/docverify.json", {}, "203.0.113.9")).status).toBe(200);
    const limited = await request("/.well-known/docverify.json", {}, "203.0.113.9");
    expect(limited.status).toBe(429);
    // A refusal is readable by another origin too: a page can tell "wait" from "blocked".
    expect(limited.headers.get("access-control-allow-origin")).toBe("*");
    expect(((await limited.json()) as Json).error.code).toBe("RATE_LIMITED");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await request("/.well-known/docverify.json", {}, "203.0.113.10")).status).toBe(200);
  });
});

describe("/.well-known/docverify.json over HTTP against docverify serve", () => {
  test("names the service by its URL and the organisation once its topic exists", async () => {
    const s = await startServiceWithOrg({ env: { ...HIGH, ...FAST }, orgName: "Well Known Ltd" });
    const topicId = await waitFor("the organisation's topic", () => (s.admin.db.$client.query("SELECT topic_id FROM organisations WHERE id = ?").get(s.org.id) as { topic_id: string | null }).topic_id, 20_000);
    const res = await fetch(`${s.svc.url}/.well-known/docverify.json`, { headers: { origin: "null" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const body = (await res.json()) as Json;
    expect(body.service).toBe(s.svc.url);
    expect(body.organisations).toHaveLength(1);
    expect(body.organisations[0]).toMatchObject({ orgId: s.org.id, name: "Well Known Ltd", domain: null, network: "local", topicId });
    const own = s.admin.db.$client.query("SELECT system_key_fingerprint FROM organisations WHERE id = ?").get(s.org.id) as { system_key_fingerprint: Uint8Array };
    expect(body.organisations[0].keys[0].fingerprint).toBe(hex(own.system_key_fingerprint));
  }, 60_000);
});
