/**
 * Anchoring as the composition root wires it: the ledger for the configured network (the
 * embedded local ledger included) and the anchor loop over the data folder's queue.
 * `close()` stops the loop quietly, then closes the ledger client, then the embedded ledger;
 * storage is the caller's and is closed after.
 */
import "../lib/protobuf-long.ts"; // first: see the file
import type { Config } from "../config/index.ts";
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/log.ts";
import type { Journal, JournalRules } from "./journal/ports.ts";
import { createAnchoring, type AnchorMetrics, type Anchoring, type AnchorStorage, type AnnouncementFor } from "./anchorer.ts";
import type { BatchMessageFor, CompromiseMessageFor, PersonAnnouncementFor } from "./types.ts";
import type { LoopStorageNow } from "./loop/ports.ts";
import { openLedger } from "./setup.ts";

export { insertPendingMessage, queueSummary } from "./queue.ts";
export type { AnchorMetrics, AnchorQueue, Anchoring, AnchorStorage, AnnouncementFor, BackPressureCause, KeyAnnouncement, LedgerErrorKind, LedgerLinks } from "./types.ts";

export interface AppAnchoring extends Anchoring {
  /** Where the ledger is, for the startup line. */
  readonly describe: Readonly<Record<string, string>>;
  close(): Promise<void>;
}

export async function startAnchoring(options: {
  readonly config: Config;
  /** The embedded SQLite's journal, unless `storage` names another (PostgreSQL: app/postgres.ts postgresAnchorStorage). */
  readonly journal?: (rules: JournalRules) => Journal;
  /** With `journal`: the loop's storage besides the journal, on the same database (storage/engine-drivers.ts). */
  readonly loop?: LoopStorageNow;
  readonly storage?: AnchorStorage;
  /** The loop's pass when nothing wakes it (default 1 s). Several nodes: records created on other nodes wake nothing here. */
  readonly idlePollMs?: number;
  readonly clock: Clock;
  readonly log: Logger;
  readonly masterKey: Uint8Array | null;
  /** Builds an organisation's key announcement (records/announcements.ts). */
  readonly announcementFor: AnnouncementFor;
  /** Builds a batch's message (records/messages.ts). */
  readonly batchMessageFor: BatchMessageFor;
  /** Builds a key's key-compromise message (records/messages.ts). */
  readonly compromiseMessageFor?: CompromiseMessageFor;
  /** Builds a person's key announcement (records/announcements.ts). */
  readonly personAnnouncementFor?: PersonAnnouncementFor;
  /** Start the background loop (default true). */
  readonly start?: boolean;
  /** Monitoring sink for the loop (default: reports nothing). */
  readonly metrics?: AnchorMetrics;
  /** For tests only: see `OpenLedgerOptions.ledgerWorkerEntry`. */
  readonly ledgerWorkerEntry?: URL;
  /** False: no back-pressure on record creation (the creation benchmark only; see AppOptions.anchorPacing). */
  readonly pacing?: boolean;
}): Promise<AppAnchoring> {
  const { config, log } = options;
  const setup = await openLedger({ config, log, clock: options.clock, ...(options.ledgerWorkerEntry ? { ledgerWorkerEntry: options.ledgerWorkerEntry } : {}) });
  const anchoring = createAnchoring({
    ...(options.storage !== undefined ? { storage: options.storage } : { journal: options.journal!, loop: options.loop! }),
    ...(options.idlePollMs !== undefined ? { idlePollMs: options.idlePollMs } : {}),
    clock: options.clock,
    log,
    ledger: setup.ledger,
    links: setup.links,
    masterKey: options.masterKey,
    announcementFor: options.announcementFor,
    batchMessageFor: options.batchMessageFor,
    batchWindowMs: config.ledger.batchWindowMs,
    batchMax: config.ledger.batchMax,
    ...(options.compromiseMessageFor !== undefined ? { compromiseMessageFor: options.compromiseMessageFor } : {}),
    ...(options.personAnnouncementFor !== undefined ? { personAnnouncementFor: options.personAnnouncementFor } : {}),
    validSeconds: config.ledger.anchorValidSeconds,
    // Public nodes refuse a valid start in their future; ours may run a little ahead.
    validStartBackdateMs: config.ledger.network === "local" ? 0 : 5000,
    // The local mirror has no ingestion lag; a public one trails consensus by seconds.
    settleGraceMs: config.ledger.network === "local" ? 2000 : 30_000,
    ...(options.metrics !== undefined ? { metrics: options.metrics } : {}),
    ...(options.pacing === false ? { backlogLimit: Infinity, backlogFloor: Infinity, maxQueueAgeMs: Infinity } : {}),
  });
  if (options.start !== false) anchoring.start();
  let closed = false;
  return {
    ...anchoring,
    describe: setup.describe,
    // A stopped embedded-ledger thread fails readiness at once, whatever the cached health says.
    readiness: async () => setup.failure() ?? (await anchoring.readiness()),
    async close() {
      if (closed) return;
      closed = true;
      await anchoring.stop();
      await setup.close();
    },
  };
}
