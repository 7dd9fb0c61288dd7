/**
 * A record ledger for the contract suites that run on both engines: transaction ids numbered from
 * 1 (the same ids on each engine, so the same rows give the same bytes), nothing sent.
 */
import type { RecordLedger } from "../../src/records/ledger.ts";

export function numberedLedger(): RecordLedger {
  let issued = 0;
  return {
    newTransactionId: () => ({ transactionId: `0.0.2@1768469400.${String(++issued).padStart(9, "0")}`, validStartMs: 1_768_469_400_000, validSeconds: 120 }),
    wake() {},
    assertCapacity() {},
    transactionUrl: (id) => `https://hashscan.example/tx/${id}`,
    topicMessageUrl: (topic, n) => `https://mirror.example/${topic}/${n}`,
  };
}
