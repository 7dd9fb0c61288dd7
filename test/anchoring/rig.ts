/**
 * A data folder, a local ledger and an anchor loop over them, for the anchoring tests. The
 * real SDK path runs over real gRPC; only time is the test's (a manual clock shared by the
 * ledger and the loop, unless `realClock`).
 */
import { join } from "node:path";
import { openCore, type Core } from "../../src/app/core.ts";
import { createAnchoring, sqliteAnchorStorage, type AnchorMetrics, type Anchoring } from "../../src/anchoring/anchorer.ts";
import { insertPendingMessage, pendingMessage } from "../../src/anchoring/queue.ts";
import type { BatchPolicy } from "../../src/anchoring/journal/ports.ts";
import { DEFAULT_BATCH_POLICY } from "../../src/anchoring/journal/rules.ts";
import { anchoringDrivers, journalDrivers, recordsDrivers } from "../support/drivers.ts";
import { createHederaLedger } from "../../src/anchoring/hedera-ledger.ts";
import type { HederaLedgerOptions } from "../../src/anchoring/hedera-options.ts";
import type { Ledger } from "../../src/anchoring/ledger.ts";
import { startLocalLedger, type LocalLedger } from "../../src/local-ledger/index.ts";
import { localLinks } from "../../src/anchoring/setup.ts";
import { manualClock, systemClock, type Clock } from "../../src/lib/clock.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { ledgerTransactions, organisations, records } from "../../src/storage/schema.ts";
import { and, eq } from "drizzle-orm";
import { onCleanup, tempDir, testConfig } from "../support/env.ts";
import { createRecordsFixture } from "../support/records-fixture.ts";
import { createKeyAnnouncements } from "../../src/records/announcements.ts";
import { SEAL_KEY_META } from "../../src/records/seal-key.ts";
import { encodeBatchMessage, encodeCreationMessage, encodeRevocationMessage } from "../../src/records/messages.ts";

export const VALID_SECONDS = 30;

/** The SDK adapter over a local ledger, as its operator; closed by cleanup(). */
export function hederaLedgerOver(local: LocalLedger, options: Pick<HederaLedgerOptions, "grpcDeadlineMs" | "answerFreshMs"> = {}): Ledger {
  const ledger = createHederaLedger({
    network: "local",
    operatorAccountId: local.operator.accountId,
    operatorPrivateKey: local.operator.privateKeyDer,
    nodes: { [local.grpcAddress]: local.nodeAccountId },
    mirrorUrl: local.mirrorUrl,
    ...options,
  });
  onCleanup(() => ledger.close());
  return ledger;
}

export interface Rig {
  readonly dir: string;
  readonly clock: Clock & { advance(ms: number): void };
  readonly core: Core;
  readonly local: LocalLedger;
  readonly ledger: Ledger;
  readonly log: ReturnType<typeof memoryLogger>;
  readonly masterKey: Uint8Array;
  anchoring: Anchoring;
  /** A new anchor loop on the same data folder and ledger, as after a restart. */
  restart(): Anchoring;
  /**
   * An organisation with the add-on whose topic exists and whose key announcement is anchored on
   * it (sequence number 1), both driven there: its record messages may go.
   */
  orgWithTopic(): Promise<{ orgId: string; topicId: string; announcement: typeof ledgerTransactions.$inferSelect }>;
  /** A record and its pending creation message, written together as the records service does. */
  insertRecord(orgId: string, topicId: string, message?: Uint8Array): { recordId: string; transactionId: string; message: Uint8Array };
  /**
   * A record and its creation message, the message a leaf of the organisation's open batch, written
   * together as the records service does (`pendingMessage`); the record carries the batch's id.
   */
  insertBatchedRecord(orgId: string, topicId: string, policy?: BatchPolicy): { recordId: string; batchId: string; leafId: string; message: Uint8Array };
  /** A revocation of `recordId` and its message, a leaf of the organisation's open batch of revocations, as the records service writes them. */
  revokeBatched(orgId: string, topicId: string, recordId: string, policy?: BatchPolicy): { batchId: string; message: Uint8Array };
  /** Advances time by `ms`, runs consensus, then one loop pass; `times` times. */
  drive(times?: number, ms?: number): Promise<void>;
  row(transactionId: string): typeof ledgerTransactions.$inferSelect;
  record(recordId: string): typeof records.$inferSelect;
  mirror(path: string): Promise<{ status: number; body: Record<string, unknown> }>;
}

export async function makeRig(
  options: {
    consensusMs?: number;
    realClock?: boolean;
    grpcDeadlineMs?: number;
    /** See HederaLedgerOptions.answerFreshMs: 0 checks the node before every request. */
    answerFreshMs?: number;
    backlogLimit?: number;
    maxQueueAgeMs?: number;
    backlogFloor?: number;
    /** See AnchoringOptions.confirmFallbackMs (default: the loop's, 15 s). */
    confirmFallbackMs?: number;
    /** See AnchoringOptions.batchMax (default: the loop's, 1,024). */
    batchMax?: number;
    metrics?: AnchorMetrics;
    /** What the loop sees of the ledger (default: the SDK adapter itself), e.g. to watch its submissions. */
    wrapLedger?: (ledger: Ledger) => Ledger;
    /** Whether this node leads the anchor loop, asked at every pass (several nodes; default: always). */
    active?: () => boolean;
  } = {},
): Promise<Rig> {
  const dir = tempDir("docverify-anchor-");
  const clock = options.realClock ? Object.assign({ advance: (_ms: number) => undefined }, systemClock) : manualClock(Date.now());
  const log = memoryLogger();
  const core = openCore({ config: testConfig({ DOCVERIFY_DATA_DIR: dir, DOCVERIFY_ANCHOR_VALID_SECONDS: String(VALID_SECONDS) }), log, clock });
  onCleanup(() => core.close());
  const fixture = createRecordsFixture({ db: core.db, signer: core.signer });
  // The fixture's seal key is the service's: announcements name the key that sealed its records.
  core.db.$client.query("INSERT OR REPLACE INTO service_meta (key, value) VALUES (?, ?)").run(SEAL_KEY_META, Buffer.from(fixture.seal.fingerprint).toString("hex"));
  const local = await startLocalLedger({ dataDir: join(dir, "ledger"), consensusMs: options.consensusMs ?? 1000, clock });
  onCleanup(() => local.close());
  const adapter = hederaLedgerOver(local, {
    grpcDeadlineMs: options.grpcDeadlineMs ?? 1000,
    ...(options.answerFreshMs !== undefined ? { answerFreshMs: options.answerFreshMs } : {}),
  });
  const ledger = options.wrapLedger?.(adapter) ?? adapter;
  const masterKey = crypto.getRandomValues(new Uint8Array(32));
  // As the composition root wires it: the organisation's key and the service seal key.
  const announcements = createKeyAnnouncements({ keys: recordsDrivers(core.store).keys, signer: core.signer, clock });
  const make = () => {
    const a = createAnchoring({
      ...(options.active === undefined ? { journal: journalDrivers(core.store).journal, loop: anchoringDrivers(core.store).loop } : { storage: { ...sqliteAnchorStorage(journalDrivers(core.store).journal, anchoringDrivers(core.store).loop), active: options.active } }),
      clock,
      log,
      ledger,
      links: localLinks(local.mirrorUrl),
      masterKey,
      announcementFor: announcements,
      batchMessageFor: encodeBatchMessage,
      validSeconds: VALID_SECONDS,
      receiptPollMs: 200,
      backoffBaseMs: 200,
      backoffMaxMs: 2000,
      settleGraceMs: 0,
      idlePollMs: 100,
      ...(options.backlogLimit !== undefined ? { backlogLimit: options.backlogLimit } : {}),
      ...(options.maxQueueAgeMs !== undefined ? { maxQueueAgeMs: options.maxQueueAgeMs } : {}),
      ...(options.backlogFloor !== undefined ? { backlogFloor: options.backlogFloor } : {}),
      ...(options.metrics !== undefined ? { metrics: options.metrics } : {}),
      ...(options.confirmFallbackMs !== undefined ? { confirmFallbackMs: options.confirmFallbackMs } : {}),
      ...(options.batchMax !== undefined ? { batchMax: options.batchMax } : {}),
    });
    onCleanup(() => a.stop());
    return a;
  };
  const rig: Rig = {
    dir,
    clock,
    core,
    local,
    ledger,
    log,
    masterKey,
    anchoring: make(),
    restart() {
      rig.anchoring = make();
      return rig.anchoring;
    },
    async orgWithTopic() {
      const org = await core.organisations.create({ name: `Org ${Math.random()}`, addon: true }, "test");
      for (let i = 0; i < 40; i++) {
        await rig.drive(1);
        const row = core.db.select().from(organisations).where(eq(organisations.id, org.id)).get()!;
        const announcement = core.db
          .select()
          .from(ledgerTransactions)
          .where(and(eq(ledgerTransactions.orgId, org.id), eq(ledgerTransactions.kind, "key_announcement"), eq(ledgerTransactions.state, "anchored")))
          .get();
        if (row.topicId !== null && announcement !== undefined) return { orgId: org.id, topicId: row.topicId, announcement };
      }
      throw new Error("topic or key announcement never anchored");
    },
    insertRecord(orgId, topicId, message = new TextEncoder().encode(JSON.stringify({ v: 1, n: Math.random() }))) {
      const reserved = rig.anchoring.queue.newTransactionId();
      const now = clock.now();
      const docHash = `sha256:${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}`;
      // One transaction on the core's connection: the fixture's insert and the message commit together.
      const recordId = core.db.transaction((tx) => {
        const id = fixture.addOrgRecord(fixture.orgOf(orgId), { docHash, anchorState: "pending", topicId, transactionId: reserved.transactionId, signedAtMs: now, createdAt: now });
        insertPendingMessage(tx, { kind: "record_message", ...reserved, orgId, recordId: id, topicId, message, now });
        return id;
      });
      rig.anchoring.queue.wake();
      return { recordId, transactionId: reserved.transactionId, message };
    },
    insertBatchedRecord(orgId, topicId, policy = DEFAULT_BATCH_POLICY) {
      const reserved = rig.anchoring.queue.newTransactionId();
      const now = clock.now();
      const docHash = `sha256:${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}`;
      const recordId = fixture.addOrgRecord(fixture.orgOf(orgId), { docHash, anchorState: "pending", topicId, transactionId: reserved.transactionId, signedAtMs: now, createdAt: now });
      const row = core.db.select().from(records).where(eq(records.id, recordId)).get()!;
      const message = encodeCreationMessage({ recordId, docHash, signedAtMs: now, signerPublicKey: fixture.orgOf(orgId).systemKey.publicKey, signature: row.signature, sealSignature: row.sealSignature });
      const batchId = core.store.writeSync((tx, t) =>
        pendingMessage(tx, t, {
          kind: "record_message",
          ...reserved,
          orgId,
          recordId,
          topicId,
          message,
          now,
          keyFingerprint: row.signerFingerprint,
          sealFingerprint: row.sealFingerprint,
          batches: { policy, newBatchId: () => rig.anchoring.queue.newTransactionId() },
        }),
      );
      rig.anchoring.queue.wake();
      return { recordId, batchId, leafId: reserved.transactionId, message };
    },
    revokeBatched(orgId, topicId, recordId, policy = DEFAULT_BATCH_POLICY) {
      const reserved = rig.anchoring.queue.newTransactionId();
      const now = clock.now();
      const message = encodeRevocationMessage({ recordId, reason: "SUPERSEDED", revokedAtMs: now });
      core.db.update(records).set({ revokedAt: now, revocationReason: "SUPERSEDED", revocationTransactionId: reserved.transactionId }).where(eq(records.id, recordId)).run();
      const batchId = core.store.writeSync((tx, t) =>
        pendingMessage(tx, t, { kind: "revocation_message", ...reserved, orgId, recordId, topicId, message, now, batches: { policy, newBatchId: () => rig.anchoring.queue.newTransactionId() } }),
      );
      rig.anchoring.queue.wake();
      return { batchId, message };
    },
    async drive(times = 1, ms = 1100) {
      for (let i = 0; i < times; i++) {
        clock.advance(ms);
        await local.runConsensus();
        await rig.anchoring.runOnce();
      }
    },
    row(transactionId) {
      return core.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.transactionId, transactionId)).get()!;
    },
    record(recordId) {
      return core.db.select().from(records).where(eq(records.id, recordId)).get()!;
    },
    async mirror(path) {
      const res = await fetch(`${local.mirrorUrl}${path}`);
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
  };
  return rig;
}
