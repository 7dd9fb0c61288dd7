/**
 * An organisation's domain (docs/admin.md "The organisation's domain") end to end, on both engines:
 * `docverify serve` on the embedded SQLite with its embedded ledger, and on PostgreSQL with a local
 * ledger started apart, the administrator's commands run as processes beside it.
 *
 * - `org set --domain` set, changed and cleared, and `org set --name`: each audited, each announced
 *   on the topic again exactly once, with the bytes docs/receipts.md §1 prescribes, read back from
 *   the ledger's mirror REST API (cleared: the very bytes of the announcement before any domain);
 * - a change made while `serve` is down (a crash between the change and the queueing) is
 *   announced once when it starts again (the provisioning pass);
 * - a record's receipt carries the announcement before the record's message (the record made
 *   before a change keeps it), and a record made once the new announcement is anchored carries the
 *   new one (the kept receipt is not served stale); `/.well-known/docverify.json` lists the domain,
 *   `announcedAt` and `sequenceNumber` stay the key's first announcement's;
 * - `docverify trust export` while `serve` runs: parsed by the receipt verifier's strict parser,
 *   and checked field by field.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, asc, eq } from "drizzle-orm";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { decodeLedgerMessage, encodeKeyAnnouncementMessage } from "../../src/records/messages.ts";
import { SEAL_KEY_META } from "../../src/records/seal-key.ts";
import { DATABASE_FILE } from "../../src/storage/data-folder.ts";
import { openDatabase } from "../../src/storage/db.ts";
import { migrate } from "../../src/storage/migrate.ts";
import { postgresStore } from "../../src/storage/pg-store.ts";
import { q, sqliteStore, type Store } from "../../src/storage/store.ts";
import { parseTrustFile } from "../../src/verifier/trust.ts";
import { cliAsync } from "../ops/support.ts";
import { cleanup, startService, tempDir, type ServiceProcess } from "../support/env.ts";
import { sharedPostgres, type Postgres } from "../support/postgres.ts";
import { startSeparateLedger } from "../support/separate-ledger.ts";
import { docHashOf } from "../support/records-fixture.ts";
import { createRecordOnceTopicExists } from "../support/topic.ts";
import { waitFor } from "../support/wait.ts";

type Json = Record<string, any>;

let pg: Postgres;
let ledgerEnv: Record<string, string>;
beforeAll(async () => {
  pg = await sharedPostgres();
  ledgerEnv = await startSeparateLedger({ consensusMs: 300 });
}, 120_000);
const stores: Store[] = [];
afterAll(async () => {
  for (const s of stores) await s.close();
  await cleanup();
  await pg?.destroy();
});

const PUBLIC_URL = "https://verify.example.org";
const COMMON = {
  DOCVERIFY_PUBLIC_URL: `${PUBLIC_URL}/`,
  DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: "300",
  DOCVERIFY_RATE_LIMIT_ANONYMOUS: "100000",
  DOCVERIFY_RATE_LIMIT_KEY: "100000",
  DOCVERIFY_RATE_LIMIT_ORG: "100000",
};

/** Where one engine's service keeps its data: the settings `serve` and the commands share, and a store on the same database. */
interface Engine {
  readonly name: "SQLite" | "PostgreSQL";
  open(): Promise<{ env: Record<string, string>; store: Store }>;
}

const ENGINES: Engine[] = [
  {
    name: "SQLite",
    async open() {
      const data = tempDir();
      const env = { ...COMMON, DOCVERIFY_DATA_DIR: data };
      // The database made and migrated by the test's own connection, as the first command that
      // changes something would make it (`org list` only reads: it makes nothing).
      const db = openDatabase({ path: join(data, DATABASE_FILE) });
      migrate(db);
      const store = { ...sqliteStore(db), close: async () => db.$client.close() };
      stores.push(store);
      return { env, store };
    },
  },
  {
    name: "PostgreSQL",
    async open() {
      const url = await pg.createDatabase("domain");
      const keyFile = join(tempDir(), "master.key");
      writeFileSync(keyFile, randomBytes(32).toString("hex") + "\n", { mode: 0o600 });
      const env = { ...COMMON, ...ledgerEnv, DOCVERIFY_DATABASE_URL: url, DOCVERIFY_MASTER_KEY_FILE: keyFile, DOCVERIFY_DATA_DIR: tempDir() };
      const made = await cliAsync(["org", "list"], env);
      expect(made.code, made.stderr).toBe(0);
      const store = postgresStore(url);
      stores.push(store);
      return { env, store };
    },
  },
];

/** `docverify ARGS` with the engine's settings; its stdout parsed when it is JSON. */
async function dv(env: Record<string, string>, ...args: string[]): Promise<{ code: number; out: string; err: string; json: () => Json }> {
  const r = await cliAsync(args, env);
  return { code: r.code, out: r.stdout, err: r.stderr, json: () => JSON.parse(r.stdout) as Json };
}

interface AnnouncementRow {
  readonly transactionId: string;
  readonly state: string;
  readonly generation: number;
  readonly sequenceNumber: number | null;
  readonly message: Buffer;
}

/** The organisation's key announcements in the journal, oldest first. */
function announcementRows(store: Store, orgId: string): Promise<AnnouncementRow[]> {
  return store.read(function* (db, t) {
    const lt = t.ledgerTransactions;
    const rows = yield* q(
      db
        .select({ transactionId: lt.transactionId, state: lt.state, generation: lt.announcementGeneration, sequenceNumber: lt.sequenceNumber, message: lt.message })
        .from(lt)
        .where(and(eq(lt.orgId, orgId), eq(lt.kind, "key_announcement")))
        .orderBy(asc(lt.createdAt), asc(lt.transactionId)),
    );
    return rows.map((r) => ({ ...r, generation: Number(r.generation), sequenceNumber: r.sequenceNumber === null ? null : Number(r.sequenceNumber), message: r.message! }));
  });
}

/** What docs/receipts.md §1 prescribes for the organisation with `domain`, from what the database holds. */
async function expectedAnnouncement(store: Store, orgId: string, domain: string | null): Promise<Buffer> {
  const { org, seal } = await store.read(function* (db, t) {
    const [org] = yield* q(db.select().from(t.organisations).where(eq(t.organisations.id, orgId)));
    const [seal] = yield* q(db.select().from(t.serviceMeta).where(eq(t.serviceMeta.key, SEAL_KEY_META)));
    return { org: org!, seal: seal! };
  });
  return Buffer.from(
    encodeKeyAnnouncementMessage({ orgId, name: org.name, domain, algorithm: "ML-DSA-65", keyFingerprint: org.systemKeyFingerprint, sealKeyFingerprint: Buffer.from(seal.value, "hex") }),
  );
}

interface MirrorMessage {
  readonly bytes: Buffer;
  readonly sequenceNumber: number;
  readonly consensusAt: string;
}

/** The key announcements (`type: key`) on `topicId`, as the mirror node serves them, in sequence order. */
async function keyMessagesOn(mirror: string, topicId: string): Promise<MirrorMessage[]> {
  const res = await fetch(`${mirror}/api/v1/topics/${topicId}/messages?limit=100`);
  expect(res.status).toBe(200);
  const page = (await res.json()) as { messages: { message: string; sequence_number: number; consensus_timestamp: string }[] };
  return page.messages
    .map((m) => ({ bytes: Buffer.from(m.message, "base64"), sequenceNumber: m.sequence_number, consensusAt: m.consensus_timestamp }))
    .filter((m) => {
      try {
        return decodeLedgerMessage(m.bytes).type === "key";
      } catch {
        return false;
      }
    });
}

// The two engines' runs share nothing but the separate ledger (each its own organisation and
// topic) and wait mostly on the anchor loop, so they run at the same time.
for (const engine of ENGINES) {
  describe(`an organisation's domain on ${engine.name}`, () => {
    test.concurrent(
      "set, changed, cleared, renamed, and changed while serve is down: each audited and announced once with the right bytes; receipts carry the announcement before their record; /.well-known and trust export show the domain and name",
      async () => {
        const { env, store } = await engine.open();
        let svc: ServiceProcess = await startService({ env });

        // An organisation with a topic, its key announced, and an anchored record with a receipt.
        const orgId = (await dv(env, "org", "create", "--name", "Domain Test Ltd", "--addon", "--api-access", "--validated", "--json")).json().id as string;
        const key = (await dv(env, "key", "mint", "--org", orgId, "--env", "live", "--json")).json().key as string;
        const auth = { authorization: `Bearer ${key}` };
        const created = await createRecordOnceTopicExists(() =>
          fetch(`${svc.url}/v1/records`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ originalDocHash: docHashOf(`domain ${engine.name}`) }) }),
        );
        const recordId = ((await created.json()) as Json).recordId as string;
        const receiptOf = async (id = recordId) => {
          const res = await fetch(`${svc.url}/v1/records/${id}/receipt`, { headers: auth });
          return res.status === 200 ? ((await res.json()) as Json) : undefined;
        };
        /** The receipt of a record created now, once anchored. */
        let made = 0;
        const newRecordReceipt = async () => {
          const res = await fetch(`${svc.url}/v1/records`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ originalDocHash: docHashOf(`domain ${engine.name} ${++made}`) }) });
          const id = ((await res.json()) as Json).recordId as string;
          return waitFor(`record ${id}'s receipt`, () => receiptOf(id), 30_000, 100);
        };
        const first = await waitFor("the record's receipt (its message and the key's announcement anchored)", receiptOf, 30_000, 100);
        const topicId = first.anchor.topicId as string;
        const mirror = (first.mirrorNodes as string[])[0]!;
        const [announced] = await announcementRows(store, orgId);
        expect(announced).toMatchObject({ state: "anchored", generation: 0 });
        const original = await expectedAnnouncement(store, orgId, null);
        expect(announced!.message.equals(original)).toBe(true);
        expect(Buffer.from(first.keyAnnouncement.message, "base64").equals(original)).toBe(true);
        const firstOnLedger = await keyMessagesOn(mirror, topicId);
        expect(firstOnLedger.map((m) => m.bytes.equals(original))).toEqual([true]);

        /** The latest organisation.set audit row of the organisation, parsed. */
        const lastSet = async () => {
          const rows = await store.read(function* (db, t) {
            return yield* q(db.select().from(t.auditLog).where(and(eq(t.auditLog.subjectId, orgId), eq(t.auditLog.action, "organisation.set"))).orderBy(asc(t.auditLog.id)));
          });
          const row = rows.at(-1)!;
          return { count: rows.length, actor: row.actor, before: JSON.parse(row.before!) as Json, after: JSON.parse(row.after!) as Json };
        };

        /**
         * After a committed change to `domain` (the `n`th announcement of the key): exactly one
         * new announcement, anchored, with the expected bytes on the ledger; the receipt fetched
         * then carries it; /.well-known lists the domain.
         */
        const expectAnnouncedOnce = async (n: number, domain: string | null) => {
          const rows = await waitFor(
            `announcement ${n} (domain ${domain}) anchored`,
            async () => {
              const rows = await announcementRows(store, orgId);
              return rows.length === n && rows.every((r) => r.state === "anchored") ? rows : undefined;
            },
            30_000,
            100,
          );
          // One per generation, each anchored once: the new one last, on the topic after the others.
          expect(rows.map((r) => r.generation)).toEqual([...new Set(rows.map((r) => r.generation))]);
          const latest = rows.at(-1)!;
          const expected = await expectedAnnouncement(store, orgId, domain);
          expect(latest.message.equals(expected)).toBe(true);
          const decoded = decodeLedgerMessage(expected) as Json;
          expect(Object.keys(decoded)).toEqual(domain === null ? ["v", "type", "orgId", "name", "algorithm", "keyFingerprint", "sealKeyFingerprint"] : ["v", "type", "orgId", "name", "domain", "algorithm", "keyFingerprint", "sealKeyFingerprint"]);
          expect(decoded.domain).toBe(domain ?? undefined);
          const onLedger = await keyMessagesOn(mirror, topicId);
          expect(onLedger).toHaveLength(n);
          expect(onLedger.at(-1)!.bytes.equals(expected)).toBe(true);
          expect(onLedger.at(-1)!.sequenceNumber).toBe(latest.sequenceNumber!);
          // The record made before the change keeps the announcement before it (docs/receipts.md §1).
          const receipt = (await receiptOf())!;
          expect(receipt.keyAnnouncement).toEqual(first.keyAnnouncement);
          expect(receipt.anchor).toEqual(first.anchor);
          expect(receipt.signer).toEqual(first.signer);
          // Anchored: a record made now carries the new one, not one kept from before.
          const later = await newRecordReceipt();
          expect(later.keyAnnouncement).toEqual({
            topicId,
            sequenceNumber: latest.sequenceNumber,
            consensusAt: onLedger.at(-1)!.consensusAt,
            message: expected.toString("base64"),
          });
          // /.well-known: the domain; the key's announcedAt is still its first announcement's.
          const wk = (await (await fetch(`${svc.url}/.well-known/docverify.json`)).json()) as Json;
          const listed = (wk.organisations as Json[]).find((o) => o.orgId === orgId)!;
          expect(listed.domain).toBe(domain);
          expect(listed.keys).toEqual([{ algorithm: "ML-DSA-65", fingerprint: decoded.keyFingerprint, announcedAt: firstOnLedger[0]!.consensusAt, sequenceNumber: firstOnLedger[0]!.sequenceNumber }]);
          return expected;
        };

        // Set (lowercased), changed, cleared: one announcement each, audited each.
        const steps: [given: string, domain: string | null][] = [
          ["Domain.Example.ORG", "domain.example.org"],
          ["xn--bcher-kva.example", "xn--bcher-kva.example"],
          ["none", null],
        ];
        let n = 1;
        let audits = 0;
        let previous: string | null = null;
        for (const [given, domain] of steps) {
          const set = await dv(env, "org", "set", orgId, "--domain", given, "--json");
          expect(set.code, set.err).toBe(0);
          expect(set.json().domain).toBe(domain);
          const audit = await lastSet();
          expect(audit.count).toBe(++audits);
          expect(audit.actor).toMatch(/^os:tester \(uid /);
          expect(audit.before.domain).toBe(previous);
          expect(audit.after.domain).toBe(domain);
          const bytes = await expectAnnouncedOnce(++n, domain);
          // Cleared: the announcement is byte for byte the one made before any domain.
          if (domain === null) expect(bytes.equals(original)).toBe(true);
          previous = domain;
        }

        // A rename is announced once too: the same key under the new name, audited.
        const renamed = await dv(env, "org", "set", orgId, "--name", "Renamed Test Ltd", "--json");
        expect(renamed.code, renamed.err).toBe(0);
        expect(renamed.json().name).toBe("Renamed Test Ltd");
        const renaming = await lastSet();
        expect(renaming.count).toBe(++audits);
        expect([renaming.before.name, renaming.after.name]).toEqual(["Domain Test Ltd", "Renamed Test Ltd"]);
        const renamedBytes = await expectAnnouncedOnce(++n, null);
        expect((decodeLedgerMessage(renamedBytes) as Json).name).toBe("Renamed Test Ltd");
        const wellKnown = (await (await fetch(`${svc.url}/.well-known/docverify.json`)).json()) as Json;
        expect((wellKnown.organisations as Json[]).find((o) => o.orgId === orgId)!.name).toBe("Renamed Test Ltd");

        // A change committed while serve is down (as if it crashed before queueing): announced
        // once when it starts again.
        expect(await svc.stop("SIGKILL")).not.toBe(0);
        const whileDown = await dv(env, "org", "set", orgId, "--domain", "after-restart.example");
        expect(whileDown.code, whileDown.err).toBe(0);
        expect(whileDown.out).toContain("domain=after-restart.example");
        expect((await announcementRows(store, orgId)).length).toBe(n);
        svc = await startService({ env });
        await expectAnnouncedOnce(++n, "after-restart.example");
        // Settled: one live announcement per generation, none pending, none twice on the ledger.
        const rows = await announcementRows(store, orgId);
        expect(rows.filter((r) => r.state !== "abandoned").map((r) => r.generation)).toEqual([0, 1, 2, 3, 4, 5]);
        const onLedger = await keyMessagesOn(mirror, topicId);
        expect(onLedger.map((m) => decodeLedgerMessage(m.bytes) as Json).map((m) => [m.name, m.domain ?? null])).toEqual([
          ["Domain Test Ltd", null],
          ["Domain Test Ltd", "domain.example.org"],
          ["Domain Test Ltd", "xn--bcher-kva.example"],
          ["Domain Test Ltd", null],
          ["Renamed Test Ltd", null],
          ["Renamed Test Ltd", "after-restart.example"],
        ]);

        // trust export while serve runs: what the verifier reads, with the domain.
        const exported = await dv(env, "trust", "export", "--org", orgId);
        expect(exported.code, exported.err).toBe(0);
        const trust = parseTrustFile(exported.out);
        expect(trust.organisations).toEqual([
          { orgId, name: "Renamed Test Ltd", domain: "after-restart.example", network: "local", topicId, keys: [expect.objectContaining({ algorithm: "ML-DSA-65", fingerprint: (decodeLedgerMessage(original) as Json).keyFingerprint })] },
        ]);
        expect(trust.networks).toEqual({ local: first.mirrorNodes });
        expect(await svc.stop()).toBe(0);
      },
      180_000,
    );
  });
}
