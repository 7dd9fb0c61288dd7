/**
 * What the parts of the anchor loop share (anchorer.ts makes it, once per loop): the journal, the
 * ledger, the loop's clock and timer, its monitoring and its settings. Each part (state changes,
 * the state machine, provisioning, confirmation in batches) is a factory over it; nothing here is
 * kept at module level.
 */
import type { Logger } from "../../lib/log.ts";
import type { BackPressure } from "../back-pressure.ts";
import type { Ledger, SubmitKeyPair } from "../ledger.ts";
import type { Journal, LedgerTransactionRow } from "../queue.ts";
import type { ErrorLog, LedgerHealth } from "../retry.ts";
import type { TopicWatches } from "../topic-watches.ts";
import type { AnchorMetrics, AnnouncementFor, BatchMessageFor, CompromiseMessageFor, PersonAnnouncementFor } from "../types.ts";
import type { Ticker } from "./ticker.ts";

/** Margin the nodes require: a transaction with less than 10 s of its window left is refused. */
export const SUBMIT_MARGIN_MS = 10_000;

/** The loop's settings, defaults applied (types.ts `AnchoringOptions` says what each is). */
export interface LoopTiming {
  readonly receiptPollMs: number;
  readonly confirmPollMs: number;
  readonly confirmFallbackMs: number;
  readonly backoffMaxMs: number;
  readonly settleGraceMs: number;
}

export interface LoopContext {
  /** The loop's clock (the injected one, which may step). */
  readonly now: () => number;
  readonly log: Logger;
  readonly ledger: Ledger;
  /** The ledger's listing of a topic's messages, when it has one (confirmation in batches). */
  readonly listing: NonNullable<Ledger["topicMessages"]> | null;
  readonly journal: Journal;
  readonly metrics: Required<AnchorMetrics>;
  readonly errors: ErrorLog;
  readonly health: LedgerHealth;
  readonly ticker: Ticker;
  readonly pressure: BackPressure;
  readonly watches: TopicWatches;
  /** The steps under way, by transaction id. */
  readonly inFlight: Map<string, Promise<void>>;
  readonly timing: LoopTiming;
  readonly topicMemo: string;
  readonly announcementFor: AnnouncementFor;
  readonly compromiseMessageFor: CompromiseMessageFor | null;
  readonly batchMessageFor: BatchMessageFor;
  readonly personAnnouncementFor: PersonAnnouncementFor | null;
  /** The ledger submit key, opened at first use and kept; null while the key store is sealed. */
  submitKey(): Promise<SubmitKeyPair | null>;
  /** The loop's retry delay after `n` failures: capped exponential, with jitter. */
  backoff(n: number): number;
  reschedule(row: LedgerTransactionRow, delayMs: number, lastError: string | null): void;
}

/** The end of a row's validity window (ms, exclusive). */
export const windowEnd = (row: LedgerTransactionRow) => row.validStartMs + row.validSeconds * 1000 + 1;
