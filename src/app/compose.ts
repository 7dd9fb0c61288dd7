/**
 * The services and the HTTP surface over a core, written once for both engines (`assemble`),
 * given what differs between them (`EngineParts`: sqlite.ts, postgres.ts). Each service is handed
 * what it uses: its ports (the core's engine's drivers, storage/engine-drivers.ts), the clock, the signer, the services it calls.
 * Returns one `close()` that undoes it all in reverse. Nothing here is a module-level singleton;
 * tests build as many apps as they like, each on its own data folder.
 */
import { randomBytes } from "node:crypto";
import type { Config } from "../config/index.ts";
import type { AdminCore } from "./core.ts";
import { createHttp, type AnyElysia, type Http, type HttpMetrics } from "../http/server.ts";
import { createRequestContexts, type RequestContexts } from "../http/request-context.ts";
import { createAddresses } from "../http/routable.ts";
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/log.ts";
import { metaValue, storageProbe } from "../storage/meta.ts";
import { createStorageFaults } from "../lib/storage-faults.ts";
import { createAccess, type Access, type AccessLimiter, type PublicAccess } from "../http/access.ts";
import type { ReadinessCheck } from "../http/routes/health.ts";
import type { Credentials } from "../keys/credentials.ts";
import type { Store } from "../storage/store.ts";
import { VERSION, COMMIT } from "../version.ts";
import type { AnchorStorage, AppAnchoring, LedgerLinks } from "../anchoring/index.ts";
import { linksFromSettings, suggestedMirrorNodes } from "../anchoring/links.ts";
import { loadAnchoring } from "../anchoring/load-anchoring.ts";
import type { LoopStorageNow } from "../anchoring/loop/ports.ts";
import type { Journal, JournalRules } from "../anchoring/journal/ports.ts";
import { DomainError } from "../lib/errors.ts";
import { createRecords, type Records } from "../records/service.ts";
import type { RecordWriter } from "../records/write-queue.ts";
import { createKeyAnnouncements, createPersonKeyAnnouncements } from "../records/announcements.ts";
import { encodeBatchMessage, encodeKeyCompromiseMessage } from "../records/messages.ts";
import { MAX_REVOCATIONS_PER_BATCH } from "../anchoring/journal/rules.ts";
import type { RecordLedger } from "../records/ledger.ts";
import { recordsRoutes } from "../http/routes/v1-records.ts";
import { verifyPages } from "../http/pages/verify.ts";
import { receiptPage } from "../http/pages/verify-receipt.ts";
import { verificationRoutes } from "../http/routes/v1-verifications.ts";
import { createVerifier, type Verifier } from "../verification/verify.ts";
import { createVerificationLog, type VerificationLog } from "../verification/log/service.ts";
import { createLogRetention, type LogRetention } from "../verification/retention.ts";
import { createServiceMetrics, metricsRoutes, type CacheGauge, type ServiceMetrics } from "../http/routes/metrics.ts";
import type { NamedCache } from "../lib/lru.ts";
import { createIdleRelease, QUIET_MS } from "../lib/idle-release.ts";
import { recordCounter } from "../records/counts.ts";
import { createReceipts, type Receipts } from "../receipts/receipt.ts";
import { createIdentity } from "../receipts/identity.ts";
import { receiptRoutes } from "../http/routes/receipts.ts";
import { wellKnownRoutes } from "../http/routes/well-known.ts";
import { appRoutes } from "../http/routes/persons.ts";
import { appPages } from "../http/pages/person-pages.ts";
import { createEnrolments } from "../persons/persons.ts";
import { createPersonApp } from "../persons/service.ts";
import { createWebAuthn, relyingPartyOf } from "../persons/webauthn.ts";

/**
 * What `serve` runs, on either engine: the HTTP surface and the services behind it. `App` is it on
 * the embedded SQLite (with the core's database, for tests and tools); `ClusterApp` (postgres.ts)
 * on PostgreSQL, one node of several.
 */
export interface ServiceApp {
  readonly config: Config;
  readonly instanceId: string;
  readonly store: Store;
  readonly http: Http;
  /** Who may call which /v1 operation: credentials, rate limits, scopes (docs/access.md). */
  readonly access: Access;
  /**
   * The ledger queue, its links and the anchor loop, once the ledger is up. The ledger starts in
   * the background (loading its SDK and the embedded ledger's thread takes longer than
   * everything else together), so `serve` listens at once: until `anchoringStarted` resolves,
   * reading this throws, readiness says "ledger starting", and record creation and revocation
   * answer 503 with Retry-After 1. Verification does not wait for it.
   */
  readonly anchoring: AppAnchoring;
  /**
   * Settles once the ledger has started (with the anchoring) or failed to (with the reason; the
   * app then never anchors anything and `serve` exits). `close()` waits for it either way.
   */
  readonly anchoringStarted: Promise<AppAnchoring>;
  /** Authenticating and revoking documents (POST /v1/records…, the verify page). */
  readonly records: Records;
  /** Verdicts recomputed per request, and the verification log. */
  readonly verifier: Verifier;
  readonly verificationLog: VerificationLog;
  /** Deletes log rows older than DOCVERIFY_LOG_RETENTION_DAYS in the background (docs/verification.md, "Retention"). */
  readonly logRetention: LogRetention;
  /** What GET /metrics renders (docs/operations.md, "Metrics"). */
  readonly metrics: ServiceMetrics;
  /** Closes everything, storage last. Idempotent. */
  close(): Promise<void>;
}

export interface AppOptions {
  readonly config: Config;
  readonly log: Logger;
  readonly clock?: Clock;
  /**
   * Base of `verifyUrl` when it is known only once the listener is up (the default public URL
   * with port 0). Default: the settings' public URL.
   */
  readonly publicUrl?: () => string;
  /** Extra route plugins, for tests of the shared HTTP machinery. */
  readonly plugins?: readonly AnyElysia[];
  /**
   * False: verification checks every signature from scratch instead of answering repeats from
   * the memo (createVerifier's `memo: false`). For the benchmark's memo-off run
   * (scripts/bench/app-server.ts) and tests only; deliberately not a DOCVERIFY_* setting,
   * since an operator has no reason to turn it off. Default true.
   */
  readonly verificationMemo?: boolean;
  /**
   * False: record creation is not paced to the ledger (no 503 back-pressure from the anchor
   * queue). Only for the benchmark that measures what the creation path itself sustains
   * (scripts/bench/app-server.ts); never a setting: a service that takes records faster than it
   * can anchor them lets them age towards their validity window. Default true.
   */
  readonly anchorPacing?: boolean;
  /**
   * Milliseconds without a request before memory is given back (lib/idle-release.ts); default
   * `QUIET_MS`. For tests only: an operator has no reason to change it (docs/operations.md, "Memory").
   */
  readonly quietMs?: number;
}

/** What differs between the engines when the service is assembled. */
export interface EngineParts {
  /** Where the anchor loop keeps its journal: the SQLite database, or another engine's storage. */
  readonly anchoring: { readonly journal: (rules: JournalRules) => Journal; readonly loop: LoopStorageNow } | { readonly storage: AnchorStorage; readonly idlePollMs?: number };
  /** The master key the core opened (core.ts `Opened`): the ledger submit key is sealed under it. */
  readonly masterKey: Uint8Array | null;
  /** The request path's writes: group commit on SQLite; READ COMMITTED transactions on PostgreSQL (postgres.ts). */
  readonly writes: RecordWriter;
  readonly limiter: AccessLimiter;
  readonly storageCheck: ReadinessCheck;
  /** SQLite: the verification log's writer thread opens this database file. */
  readonly logWriterThread?: { readonly path: string };
  /** Several nodes: whether this node leads the anchor loop now (it alone sweeps the log's expired rows). */
  readonly leading?: () => boolean;
  /** More readiness checks (several nodes: the transaction-id lane). */
  readonly readiness?: Readonly<Record<string, ReadinessCheck>>;
  /**
   * What the engine keeps beyond the services' caches: `held` is reported beside them (/metrics),
   * `release` gives back what it can when the service goes quiet (SQLite: the main connection's
   * page cache, the rate limiter's full buckets).
   */
  readonly memory?: { readonly held: () => readonly CacheGauge[]; release(): void };
  /** Closes the engine's parts and storage, after the services. */
  close(): Promise<void>;
}

/** The core the services are assembled over, on either engine. */
export interface ServiceCore extends AdminCore {
  readonly credentials: Credentials;
}

/**
 * The services and the HTTP surface over a core, on either engine: everything `serve` runs
 * above storage, written once.
 */
export async function assemble(core: ServiceCore, engine: EngineParts, options: AppOptions): Promise<Omit<ServiceApp, "config" | "instanceId" | "store">> {
  let anchoring: AppAnchoring | null = null;
  // Made first: the anchor loop, access and the routes report into it. No backlog while the
  // ledger starts: the loop that counts it does not exist yet.
  // Every cache the services keep (each bounded in bytes), reported on /metrics and emptied when
  // the service goes quiet; filled in once the services exist, below.
  const caches: NamedCache[] = [];
  const metrics = createServiceMetrics({
    version: VERSION,
    commit: COMMIT,
    records: recordCounter(core.drivers.records().counts),
    backlog: () => anchoring?.backlog() ?? { pending: 0, accepted: 0, oldestPendingAt: null },
    openBatches: () => anchoring?.openBatches() ?? { batches: 0, leaves: 0 },
    now: () => core.clock.now(),
    signatureVerifications: () => core.signer.verifiedBy(),
    caches: () => [...caches.map((c) => ({ name: c.name, ...c.stats() })), ...(engine.memory?.held() ?? [])],
    idleReleases: () => idle.releases,
  });
  // Loaded here, not at the top, and only after the caller has had its turn (serve listens in
  // it): the ledger SDK alone takes longer to load than the rest of serve (anchoring/load.ts).
  const anchoringStarted = loadAnchoring().then(({ startAnchoring }) =>
    startAnchoring({
      config: core.config,
      ...engine.anchoring,
      clock: core.clock,
      log: options.log,
      masterKey: engine.masterKey,
      announcementFor: createKeyAnnouncements({ keys: core.drivers.records().keys, signer: core.signer, clock: core.clock }),
      compromiseMessageFor: (key) => encodeKeyCompromiseMessage(key),
      batchMessageFor: (fields) => encodeBatchMessage(fields),
      personAnnouncementFor: createPersonKeyAnnouncements({ keys: core.drivers.records().keys, signer: core.signer, clock: core.clock }),
      metrics: metrics.anchoring,
      ...(options.anchorPacing === false ? { pacing: false } : {}),
    }),
  );
  let startFailure: string | null = null;
  anchoringStarted.then(
    (started) => (anchoring = started),
    (e: unknown) => (startFailure = e instanceof Error ? e.message : String(e)),
  );
  const started = (): AppAnchoring => {
    if (anchoring !== null) return anchoring;
    throw new DomainError("SERVICE_UNAVAILABLE", startFailure === null ? "The ledger is starting; retry shortly." : "The ledger could not be started.", undefined, 1);
  };
  // Links are known from the settings before the ledger is up, except the embedded ledger's on
  // its first start ever, when no record can have been anchored yet.
  const settingsLinks = linksFromSettings(core.config);
  const links: LedgerLinks = {
    transactionUrl: (id) => (anchoring?.links ?? settingsLinks ?? started().links).transactionUrl(id),
    topicMessageUrl: (topicId, seq) => (anchoring?.links ?? settingsLinks ?? started().links).topicMessageUrl(topicId, seq),
  };
  const ledger: RecordLedger = {
    newTransactionId: () => started().queue.newTransactionId(),
    // A row committed before the loop exists is found by the loop's first pass.
    wake: () => anchoring?.queue.wake(),
    assertCapacity: () => started().assertCapacity(),
    batches: { windowMs: core.config.ledger.batchWindowMs, max: core.config.ledger.batchMax, maxRevocations: MAX_REVOCATIONS_PER_BATCH },
    transactionUrl: links.transactionUrl,
    topicMessageUrl: links.topicMessageUrl,
  };
  // Each request's context (its id, peer, the headers its response ends with), shared by the
  // wrapper and the routes that read it; and the authorities a request's address was checked by.
  const requests = createRequestContexts();
  const addresses = createAddresses();
  const access = createAccess({
    config: core.config,
    credentials: core.credentials,
    limiter: engine.limiter,
    metrics: metrics.access,
    requests,
  });
  // One group-commit queue for every write on a request's path: records, and the person application's.
  const writes = engine.writes;
  const records = createRecords({ store: core.store, signer: core.signer, clock: core.clock, ledger, publicUrl: options.publicUrl ?? core.config.publicUrl, writes });
  const verifier = createVerifier({
    ...core.drivers.verification(),
    signer: core.signer,
    clock: core.clock,
    links,
    ...(options.verificationMemo === false ? { memo: false as const } : {}),
    // On the signing workers while verification is busy (docs/benchmarks.md, "How the figures moved"): the API's thread then only reads and answers.
    verifyMany: (calls) => core.signer.verifyMany(calls),
  });
  // Authenticates verification-log cursors; made once per installation (shared by every node of
  // a database), never leaves the database.
  const cursorKey = Buffer.from(await core.store.write(metaValue("cursor_key", () => randomBytes(32).toString("hex"))), "hex");
  // Names are unique, but a data folder an earlier release wrote may hold one twice (both kept,
  // storage/org-name-keys.ts): said at every start until the administrator renames them.
  for (const shared of await core.organisations.sharingNames()) {
    options.log.warn("organisations share a name, which verifiers cannot tell apart: rename all but one with docverify org set ORG --name NAME", {
      name: shared.name,
      organisations: shared.organisations.map((o) => ({ id: o.id, name: o.name })),
    });
  }
  const logStore = core.drivers.log(engine.logWriterThread !== undefined ? { writerThread: engine.logWriterThread } : {}).log;
  const verificationLog = createVerificationLog({ store: logStore, clock: core.clock, cursorKey });
  const logRetention = createLogRetention({
    store: logStore,
    clock: core.clock,
    log: options.log,
    days: core.config.logRetentionDays,
    ...(engine.leading !== undefined ? { active: engine.leading } : {}),
  });
  logRetention.start();
  const receipts = createReceipts({ ...core.drivers.receipts(), clock: core.clock, network: core.config.ledger.network, mirrorNodes: mirrorNodesOf(core) });
  caches.push(
    ...verifier.caches(),
    ...verificationLog.caches(),
    ...receipts.caches(),
    ...core.credentials.caches(),
    ...core.signer.caches(),
    addresses.cache,
  );
  // Memory given back once no request has been answered for a while (lib/idle-release.ts): the
  // caches emptied, the log writer's and the engine's page caches shrunk, then a full collection
  // of this thread's heap (which also has the allocator return freed pages).
  const idle = createIdleRelease({
    quietMs: options.quietMs ?? QUIET_MS,
    release() {
      for (const cache of caches) cache.clear();
      verificationLog.releaseMemory();
      engine.memory?.release();
      Bun.gc(true);
      options.log.debug("memory released after a quiet period");
    },
    failed: (error) => options.log.warn("could not release memory after a quiet period", { error }),
  });
  // Every answered request but the probes' (a monitor polling /healthz, /readyz or /metrics would
  // otherwise keep a quiet service from ever giving its memory back).
  const httpMetrics: HttpMetrics = {
    route(method, route) {
      const recorder = metrics.http.route(method, route);
      if (PROBE_ROUTES.has(route)) return recorder;
      return {
        record(status, seconds) {
          idle.active();
          recorder.record(status, seconds);
        },
      };
    },
  };
  const routePlugins: AnyElysia[] = [
    verificationRoutes({ access, verifier, log: verificationLog, clock: core.clock, onVerdict: metrics.verdict }),
    recordsRoutes({ access, records }),
    verifyPages({ records, network: core.config.ledger.network }),
    receiptPage({ access }),
    metricsRoutes({ metrics, allow: core.config.metricsAllow, trustedProxies: core.config.trustedProxies, requests }),
    ...receiptsRoutes(core, access, receipts, requests, options),
    ...personRoutes(core, access, records, ledger, writes, options),
  ];
  // The storage fault in force, if any: what a request met, and the probe that ends it.
  const storageFaults = createStorageFaults(options.log);
  const probe = () => core.store.write(storageProbe(String(core.clock.now())));
  const http = createHttp({
    requests,
    addresses,
    log: options.log,
    version: `${VERSION} (${COMMIT})`,
    documentation: { publicUrl: options.publicUrl ?? (() => core.config.publicUrl), contact: core.config.contact },
    storageFaults,
    readiness: {
      storage: () => storageFaults.readiness(engine.storageCheck, probe),
      ...engine.readiness,
      ledger: () => (anchoring !== null ? anchoring.readiness() : startFailure === null ? "ledger starting" : `ledger failed to start: ${startFailure}`),
    },
    plugins: [...routePlugins, ...(options.plugins ?? [])],
    metrics: httpMetrics,
  });
  let closing: Promise<void> | null = null;
  return {
    http,
    access,
    get anchoring() {
      return started();
    },
    anchoringStarted,
    records,
    verifier,
    verificationLog,
    logRetention,
    metrics,
    close() {
      // Retention's batch in progress and queued log rows first, then the loop (it may still store
      // an answer), then the ledger, then storage.
      closing ??= (async () => {
        idle.stop();
        await logRetention.stop();
        await verificationLog.close();
        const settled = await anchoringStarted.catch(() => null);
        await settled?.close();
        await engine.close();
      })();
      return closing;
    },
  };
}

/** Routes a monitor polls: answering them is not activity that keeps memory held (`createIdleRelease`). */
const PROBE_ROUTES = new Set(["/healthz", "/readyz", "/metrics"]);

/** The person application's JSON endpoints (docs/persons.md). */
function personRoutes(core: ServiceCore, access: PublicAccess, records: Records, ledger: RecordLedger, writes: RecordWriter, options: AppOptions): AnyElysia[] {
  const publicUrl = options.publicUrl ?? (() => core.config.publicUrl);
  const enrolments = createEnrolments({ store: core.store, clock: core.clock });
  const webauthn = createWebAuthn(() => relyingPartyOf(publicUrl()));
  const app = createPersonApp({ store: core.store, clock: core.clock, signer: core.signer, enrolments, records, ledger, webauthn, writes, publicUrl });
  return [appRoutes({ app, access, publicUrl }), appPages({ persons: enrolments, publicUrl })];
}

/**
 * The mirror nodes a receipt suggests. For the embedded ledger the suggestion comes from its
 * remembered addresses, a file: read at most once a second rather than once per receipt (its
 * ports change only when it restarts).
 */
function mirrorNodesOf(core: ServiceCore): () => readonly string[] {
  let suggested: { readonly at: number; readonly nodes: readonly string[] } | null = null;
  return () => {
    const now = core.clock.now();
    if (suggested === null || now - suggested.at >= 1000 || now < suggested.at) suggested = { at: now, nodes: suggestedMirrorNodes(core.config) };
    return suggested.nodes;
  };
}

/** The receipt routes and /.well-known/docverify.json (docs/receipts.md §2, §5). */
function receiptsRoutes(core: ServiceCore, access: ReturnType<typeof createAccess>, receipts: Receipts, requests: RequestContexts, options: AppOptions): AnyElysia[] {
  const network = core.config.ledger.network;
  const publicUrl = options.publicUrl ?? (() => core.config.publicUrl);
  const identity = createIdentity({ store: core.store, network, publicUrl });
  return [receiptRoutes({ access, receipts }), wellKnownRoutes({ access, identity: identity.identity, requests })];
}
