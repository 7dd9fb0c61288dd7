/**
 * Consensus batching: brings due transactions (per the injected clock) to consensus in
 * acceptance order, up to 500 at a time, each batch decided by the handlers (handlers.ts) and
 * then written in one SQLite transaction: fees, topics, messages and results together.
 *
 * Guarantees: consensus timestamps are strictly increasing across the whole ledger and restarts
 * (each is the batch's time, or 1 ns after the previous one when that is later, as after the
 * clock stepped back; validity windows are then judged on the clock, handlers.ts); runs are
 * serialised (a call while one runs waits for it and runs again); after a full batch the event
 * loop gets a turn before the next, so requests are not starved.
 */
import type { Faults } from "./faults.ts";
import type { Decide, Decision, Overlay } from "./handlers.ts";
import { msToNs, nsToTimestamp, timestampToNs, type Timestamp } from "./ids.ts";
import type { NodeOptions } from "./node.ts";
import type { TxRow } from "./rows.ts";
import { FEE_COLLECTION_ACCOUNT, NODE_ACCOUNT, nodeShareOf } from "./rules.ts";

export interface Consensus {
  /** Brings every due transaction to consensus; returns how many did. */
  runConsensus(): Promise<number>;
  /** Resolves once no consensus run is in progress. */
  whenIdle(): Promise<void>;
}

type ConsensusOptions = Pick<NodeOptions, "store" | "clock"> & { readonly faults: Faults; readonly decide: Decide };

export function createConsensus(options: ConsensusOptions): Consensus {
  const { store, clock, faults, decide } = options;
  let lastConsensusNs = (() => {
    const last = store.lastConsensus();
    return last ? timestampToNs(last) : 0n;
  })();

  const BATCH = 500;

  /** One batch: decide each due transaction in order, then write all at once. */
  function consensusBatch(): number {
    if (faults.consensusPaused()) return 0;
    const due = store.duePending(clock.now(), BATCH);
    if (due.length === 0) return 0;
    const overlay: Overlay = { topics: new Map(), balanceDelta: new Map(), nextEntityNum: store.peekEntityNum() };
    const nowNs = msToNs(clock.now());
    const decided: { tx: TxRow; consensus: Timestamp; d: Decision }[] = [];
    let last = lastConsensusNs;
    for (const tx of due) {
      last = nowNs > last ? nowNs : last + 1n;
      const consensus = nsToTimestamp(last);
      const d = decide(tx, consensus, overlay, nowNs);
      if (d.fee > 0) overlay.balanceDelta.set(tx.payer, (overlay.balanceDelta.get(tx.payer) ?? 0) - d.fee);
      decided.push({ tx, consensus, d });
    }
    store.atomically(() => {
      for (const { tx, consensus, d } of decided) {
        if (d.fee > 0) {
          const nodeShare = nodeShareOf(d.fee);
          store.addBalance(tx.payer, -d.fee);
          store.addBalance(NODE_ACCOUNT, nodeShare);
          store.addBalance(FEE_COLLECTION_ACCOUNT, d.fee - nodeShare);
        }
        for (const effect of d.effects) effect(store);
        store.finalizeTransaction(tx.seq, {
          consensus,
          result: d.result,
          entityNum: d.entityNum,
          chargedFee: d.fee,
          topicSequenceNumber: d.sequenceNumber,
          topicRunningHash: d.runningHash,
        });
      }
    });
    lastConsensusNs = last;
    return due.length;
  }

  let running: Promise<number> | null = null;
  let again = false;

  async function runConsensus(): Promise<number> {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      let total = 0;
      try {
        do {
          again = false;
          for (;;) {
            const n = consensusBatch();
            total += n;
            // Always yield after a batch: `running` is assigned only once this function first
            // awaits, and a call that arrives meanwhile must find it (and ask for another pass).
            // After a full batch, yield to the event loop, so requests get in before the next.
            await (n < BATCH ? Promise.resolve() : new Promise<void>((resolve) => setImmediate(resolve)));
            if (n < BATCH) break;
          }
        } while (again);
      } finally {
        running = null;
      }
      return total;
    })();
    return running;
  }

  return {
    runConsensus,
    whenIdle: async () => {
      while (running) await running.catch(() => 0);
    },
  };
}
