/**
 * A record ledger for the contract suites that run on both engines: transaction ids numbered from
 * 1 (the same ids on each engine, so the same rows give the same bytes), nothing sent; and the
 * organisation's key announcement anchored on it.
 */
import { DEFAULT_BATCH_POLICY } from "../../src/anchoring/journal/rules.ts";
import type { Signer } from "../../src/crypto/index.ts";
import type { Clock } from "../../src/lib/clock.ts";
import { createKeyAnnouncements } from "../../src/records/announcements.ts";
import type { RecordLedger } from "../../src/records/ledger.ts";
import { q, type Store } from "../../src/storage/store.ts";
import { recordsDrivers } from "./drivers.ts";

export function numberedLedger(): RecordLedger {
  let issued = 0;
  return {
    newTransactionId: () => ({ transactionId: `0.0.2@1768469400.${String(++issued).padStart(9, "0")}`, validStartMs: 1_768_469_400_000, validSeconds: 120 }),
    wake() {},
    assertCapacity() {},
    batches: DEFAULT_BATCH_POLICY,
    transactionUrl: (id) => `https://hashscan.example/tx/${id}`,
    topicMessageUrl: (topic, n) => `https://mirror.example/${topic}/${n}`,
  };
}

/** Message `n`'s consensus time on the numbered ledger. */
export const consensusAt = (n: number) => `${1_768_469_400 + n}.${String(n * 1000).padStart(9, "0")}`;
/** Message `n`'s running hash on the numbered ledger. */
export const runningHash = (n: number) => Buffer.alloc(48, n);

/**
 * The organisation's key announcement, queued and anchored as message 1 of `topicId`, as the
 * anchor loop leaves it once anchored (docs/anchoring.md).
 */
export async function anchoredKeyAnnouncement(store: Store, deps: { readonly orgId: string; readonly topicId: string; readonly signer: Signer; readonly clock: Clock }): Promise<void> {
  const { orgId, topicId, signer, clock } = deps;
  const announcement = await createKeyAnnouncements({ keys: recordsDrivers(store).keys, signer, clock })(orgId);
  if (announcement === null) throw new Error("no announcement");
  await store.write((tx, t) =>
    q(
      tx.insert(t.ledgerTransactions).values({
        transactionId: "0.0.2@1768469399.000000001",
        kind: "key_announcement",
        orgId,
        topicId,
        message: Buffer.from(announcement.message),
        keyFingerprint: Buffer.from(announcement.keyFingerprint),
        sealFingerprint: Buffer.from(announcement.sealFingerprint),
        validStartMs: 1_768_469_399_000,
        validSeconds: 120,
        state: "anchored",
        sequenceNumber: 1,
        consensusAt: consensusAt(1),
        runningHash: runningHash(1),
        nextAttemptAt: 0,
        createdAt: clock.now(),
        updatedAt: clock.now(),
      }),
    ),
  );
}
