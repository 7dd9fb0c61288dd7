/**
 * Fixtures for the records tests: the records routes and the verify page over a real data
 * folder, behind an in-test Access stub (the caller's organisation comes from
 * `Authorization: Bearer <orgId>`) and a fake ledger that records what it is asked. The access
 * rules themselves are tested by test/access/; these tests are about records.
 */
import { DEFAULT_BATCH_POLICY } from "../../src/anchoring/journal/rules.ts";
import { eq } from "drizzle-orm";
import { openCore } from "../../src/app/core.ts";
import type { AdminCore } from "../../src/app/core.ts";
import type { Config } from "../../src/config/index.ts";
import type { Access, Caller, Operation } from "../../src/http/access.ts";
import { verifyPages } from "../../src/http/pages/verify.ts";
import { recordsRoutes } from "../../src/http/routes/v1-records.ts";
import { createHttp } from "../../src/http/server.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { DomainError } from "../../src/lib/errors.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import type { RecordLedger } from "../../src/records/ledger.ts";
import { createRecords } from "../../src/records/service.ts";
import { organisations, records } from "../../src/storage/schema.ts";
import { q, type SqliteStore } from "../../src/storage/store.ts";
import { countRows, sqlRow, sqlRows, sqlRun, TEST_ENGINE, testCore } from "../support/engine.ts";
import { onCleanup, testConfig } from "../support/env.ts";
import { recordsDrivers } from "../support/drivers.ts";
import { createWriteQueue } from "../../src/records/write-queue.ts";

export const T0 = Date.UTC(2026, 0, 15, 9, 30, 0, 123);

export function fakeLedger(): RecordLedger & { wakes: number; issued: string[] } {
  // Unique across fakes, like real ids across processes: two harnesses may share a data folder.
  let n = Math.floor(Math.random() * 1e8) * 10;
  const issued: string[] = [];
  return {
    wakes: 0,
    issued,
    newTransactionId() {
      n++;
      const transactionId = `0.0.2@1768469400.${String(n).padStart(9, "0")}`;
      issued.push(transactionId);
      return { transactionId, validStartMs: 1768469400000, validSeconds: 180 };
    },
    wake() {
      this.wakes++;
    },
    assertCapacity() {},
    batches: DEFAULT_BATCH_POLICY,
    transactionUrl: (id) => `http://ledger.test/transaction/${encodeURIComponent(id)}`,
    topicMessageUrl: (topic, seq) => `http://ledger.test/api/v1/topics/${topic}/messages/${seq}`,
  };
}

/** Admits anyone whose `Authorization: Bearer <orgId>` names an organisation; counts calls. */
export function stubAccess(core: Pick<AdminCore, "store">): Access & { calls: { operation: Operation; bodyUsed: boolean }[] } {
  const calls: { operation: Operation; bodyUsed: boolean }[] = [];
  const { store } = core;
  const admitted = (orgId: string, keyId: string, row: typeof organisations.$inferSelect | undefined): Caller => {
    if (row === undefined) throw new DomainError("UNAUTHENTICATED", "The credential is missing or unusable.");
    const { systemKeyFingerprint: _, ...org } = row;
    return { tier: "organisation", clientIp: "127.0.0.1", key: { keyId, environment: "live", scopes: ["verifications:read", "records:write", "records:revoke"] }, org };
  };
  return {
    calls,
    admit(request, operation) {
      calls.push({ operation, bodyUsed: request.bodyUsed });
      const m = /^Bearer (\S+)$/.exec(request.headers.get("authorization") ?? "");
      if (m === null) throw new DomainError("UNAUTHENTICATED", "The credential is missing or unusable.");
      const [orgId, keyId = "key-1"] = m[1]!.split("/");
      // On SQLite the organisation is read synchronously, as access answers there (lib/maybe.ts);
      // on PostgreSQL with a promise.
      if (store.engine === "sqlite") return admitted(orgId!, keyId, (store as SqliteStore).db.select().from(organisations).where(eq(organisations.id, orgId!)).get());
      return store.read((db, t) => q(db.select().from(t.organisations).where(eq(t.organisations.id, orgId!)))).then(([row]) => admitted(orgId!, keyId, row as typeof organisations.$inferSelect | undefined));
    },
  };
}

export interface HarnessOptions {
  readonly env?: Record<string, string>;
  readonly dataDir?: string;
}

/** The records routes and the verify page over `core`, behind the stub access and a fake ledger. */
function assembleHarness(core: AdminCore, log: ReturnType<typeof memoryLogger>, clock: ReturnType<typeof manualClock>) {
  const { config } = core;
  const ledger = fakeLedger();
  const recordsService = createRecords({ store: core.store, signer: core.signer, clock, ledger, publicUrl: config.publicUrl, writes: createWriteQueue(recordsDrivers(core.store).writes) });
  const access = stubAccess(core);
  const http = createHttp({ log, version: "test", readiness: {}, plugins: [recordsRoutes({ access, records: recordsService }), verifyPages({ records: recordsService })] });
  const request = (path: string, init?: RequestInit) => http.handle(new Request(`http://localhost${path}`, init), "127.0.0.1");

  /** POST /v1/records as `orgId` (or `orgId/keyId`). */
  function create(orgId: string, body: unknown, headers: Record<string, string> = {}) {
    return request("/v1/records", {
      method: "POST",
      headers: { authorization: `Bearer ${orgId}`, "content-type": "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  }

  function revoke(orgId: string, recordId: string, body: unknown = { reason: "SUPERSEDED" }) {
    return request(`/v1/records/${recordId}/revoke`, {
      method: "POST",
      headers: { authorization: `Bearer ${orgId}`, "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  }

  return { config, log, clock, ledger, records: recordsService, access, http, request, create, revoke };
}

/**
 * `name`, numbered from its second use on ("Acme Ltd", "Acme Ltd 2", …): organisation names are
 * unique on an appliance, and the tests that ask for an organisation tell them apart by id.
 */
const uses = new Map<string, number>();
function unique(name: string): string {
  const n = (uses.get(name) ?? 0) + 1;
  uses.set(name, n);
  return n === 1 ? name : `${name} ${n}`;
}

/** The harness on the embedded SQLite, synchronous where SQLite is (for the SQLite-only tests). */
export function harness(options: HarnessOptions = {}) {
  const env = { ...options.env, ...(options.dataDir === undefined ? {} : { DOCVERIFY_DATA_DIR: options.dataDir }) };
  const config = testConfig(env);
  const log = memoryLogger();
  const clock = manualClock(T0);
  const core = openCore({ config, log, clock });
  onCleanup(() => core.close());
  const parts = assembleHarness(core, log, clock);

  /** An organisation with API access and the add-on, and (unless told otherwise) a ledger topic. */
  async function org(name = "Acme Ltd", topicId: string | null = "0.0.1001") {
    const created = await core.organisations.create({ name: unique(name), apiAccess: true, addon: true, validated: true }, "test");
    if (topicId !== null) core.db.update(organisations).set({ topicId }).where(eq(organisations.id, created.id)).run();
    return created.id;
  }

  /** What the anchor loop would do on consensus. */
  function markAnchored(recordId: string, sequenceNumber = 1) {
    core.db
      .update(records)
      .set({ anchorState: "anchored", sequenceNumber, consensusAt: "1768469403.123456789" })
      .where(eq(records.id, recordId))
      .run();
  }

  function setAnchorState(recordId: string, state: "pending" | "accepted" | "anchored" | "abandoned") {
    core.db.update(records).set({ anchorState: state }).where(eq(records.id, recordId)).run();
  }

  function count(table: string): number {
    return (core.db.$client.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  }

  return { ...parts, core, org, markAnchored, setAnchorState, count };
}

/**
 * The harness on the engine test/support/engine.ts selects (DOCVERIFY_TEST_ENGINE): the same
 * routes, services and helpers, the state helpers answering with promises. Rows are read with
 * `row`/`rows` in SQLite's SQL and SQLite's value types (engine.ts `sqlRows`).
 */
export async function engineHarness(options: { readonly env?: Record<string, string>; readonly sameDatabaseAs?: { readonly config: Config } } = {}) {
  const log = memoryLogger();
  const clock = manualClock(T0);
  const core = await testCore({ env: options.env, clock, log, sameDatabaseAs: options.sameDatabaseAs?.config });
  const parts = assembleHarness(core, log, clock);
  const { store } = core;
  const setRecord = (recordId: string, set: Partial<typeof records.$inferInsert>) =>
    store.write((tx, t) => q(tx.update(t.records).set(set).where(eq(t.records.id, recordId))));

  return {
    ...parts,
    engine: TEST_ENGINE,
    core,
    /** An organisation with API access and the add-on, and (unless told otherwise) a ledger topic. */
    async org(name = "Acme Ltd", topicId: string | null = "0.0.1001") {
      const created = await core.organisations.create({ name: unique(name), apiAccess: true, addon: true, validated: true }, "test");
      if (topicId !== null) await store.write((tx, t) => q(tx.update(t.organisations).set({ topicId }).where(eq(t.organisations.id, created.id))));
      return created.id;
    },
    /** What the anchor loop would do on consensus. */
    async markAnchored(recordId: string, sequenceNumber = 1) {
      await setRecord(recordId, { anchorState: "anchored", sequenceNumber, consensusAt: "1768469403.123456789" });
    },
    async setAnchorState(recordId: string, state: "pending" | "accepted" | "anchored" | "abandoned") {
      await setRecord(recordId, { anchorState: state });
    },
    count: (table: string) => countRows(store, table),
    row: (sql: string, ...params: unknown[]) => sqlRow(store, sql, ...params),
    rows: (sql: string, ...params: unknown[]) => sqlRows(store, sql, ...params),
    run: (sql: string, ...params: unknown[]) => sqlRun(store, sql, ...params),
  };
}

export type EngineHarness = Awaited<ReturnType<typeof engineHarness>>;
export type Harness = ReturnType<typeof harness>;

export const HASH = (n: number | string) => "sha256:" + createHex(String(n));

function createHex(seed: string): string {
  return new Bun.CryptoHasher("sha256").update(seed).digest("hex");
}
