/**
 * Receipts' reads on the embedded SQLite (receipts/ports.ts, `ReceiptSource`): the statements'
 * SQLite texts (storage/receipt-statements.ts) prepared once on the connection and run directly,
 * each when the build needs it (a kept fixed part needs only the record, and the revocation's
 * message when revoked), so a receipt is answered synchronously. Receipts are benchmarked; a step
 * through the store's generator costs more than some of these reads.
 *
 * The record's row and a revocation's message as last read are kept under the data version they
 * were read at (storage/data-version.ts, `others()`: the log's writer thread's commits, log rows
 * only, leave it unchanged): answered again only while nothing else was committed since, by any
 * connection of any process, as a hash's record heads are for verification. Read only from.
 */
import { approxBytes, Lru, namedCache, stringBytes } from "../../lib/lru.ts";
import type { ReceiptCompromiseRow, ReceiptKeyRow, ReceiptLeafRow, ReceiptRecordRow, ReceiptReads, ReceiptSource, ReceiptTransactionRow } from "../../receipts/ports.ts";
import { readKept, type KeptRead } from "../data-version.ts";
import { onFirstUse } from "./first-use.ts";
import { RECEIPT_ANNOUNCEMENT, RECEIPT_COMPROMISE, RECEIPT_KEY, RECEIPT_LEAF, RECEIPT_RECORD, RECEIPT_TRANSACTION } from "../receipt-statements.ts";
import type { SqliteStore } from "../store.ts";

/** Records' and transactions' rows kept, at most (each). */
export const RECEIPT_ROWS_ENTRIES = 2048;
/** Records' rows read (about 7.9 KB each, both signatures included: some 1,500 rows). */
export const RECEIPT_RECORDS_BYTES = 12 * 1024 * 1024;
/** Ledger transactions' rows read (about 1 KB each). */
export const RECEIPT_TRANSACTIONS_BYTES = 2 * 1024 * 1024;

export function sqliteReceiptReads(store: SqliteStore): ReceiptSource {
  const client = store.db.$client;
  const recordById = onFirstUse(() => client.prepare<ReceiptRecordRow, [string]>(RECEIPT_RECORD.sqlite));
  const keyByFingerprint = onFirstUse(() => client.prepare<ReceiptKeyRow, [Uint8Array]>(RECEIPT_KEY.sqlite));
  const transactionById = onFirstUse(() => client.prepare<ReceiptTransactionRow, [string]>(RECEIPT_TRANSACTION.sqlite));
  const announcementOf = onFirstUse(() => client.prepare<ReceiptTransactionRow, [string, Uint8Array, string, number | null]>(RECEIPT_ANNOUNCEMENT.sqlite));
  const compromiseOf = onFirstUse(() => client.prepare<ReceiptTransactionRow & { since: number }, [Uint8Array]>(RECEIPT_COMPROMISE.sqlite));
  const leafOf = onFirstUse(() => client.prepare<ReceiptLeafRow, [string, string, string]>(RECEIPT_LEAF.sqlite));
  const bytesOf = (id: string, kept: KeptRead<unknown>) => stringBytes(id) + approxBytes(kept);
  const keptRecords = new Lru<string, KeptRead<ReceiptRecordRow | null>>({ maxEntries: RECEIPT_ROWS_ENTRIES, maxBytes: RECEIPT_RECORDS_BYTES, bytesOf });
  const keptTransactions = new Lru<string, KeptRead<ReceiptTransactionRow | null>>({ maxEntries: RECEIPT_ROWS_ENTRIES, maxBytes: RECEIPT_TRANSACTIONS_BYTES, bytesOf });
  // A key's compromise, read on every receipt of a record it signed: kept like the rows above.
  const keptCompromises = new Lru<string, KeptRead<ReceiptCompromiseRow | null>>({ maxEntries: RECEIPT_ROWS_ENTRIES, maxBytes: RECEIPT_TRANSACTIONS_BYTES, bytesOf });
  // A leaf, once placed in its closed batch, never changes: kept like the rows above.
  const keptLeaves = new Lru<string, KeptRead<ReceiptLeafRow | null>>({ maxEntries: RECEIPT_ROWS_ENTRIES, maxBytes: RECEIPT_TRANSACTIONS_BYTES, bytesOf });
  const caches = [
    namedCache("receipt_records", keptRecords),
    namedCache("receipt_transactions", keptTransactions),
    namedCache("receipt_compromises", keptCompromises),
    namedCache("receipt_leaves", keptLeaves),
  ];
  // One set of reads serves every receipt: each runs when asked.
  const reads: ReceiptReads = {
    record: (id) => readKept(keptRecords, store.version.others(), id, () => recordById().get(id)),
    transaction: (id) => readKept(keptTransactions, store.version.others(), id, () => transactionById().get(id)),
    announcement: (orgId, fingerprint, seal, before) => announcementOf().get(orgId, fingerprint, Buffer.from(seal).toString("hex"), before),
    compromise: (fingerprint) =>
      readKept(keptCompromises, store.version.others(), Buffer.from(fingerprint).toString("hex"), () => {
        const row = compromiseOf().get(fingerprint);
        if (row === null) return null;
        const { since, ...transaction } = row;
        return { since, transaction };
      }),
    leaf: (batchId, recordId, kind) => readKept(keptLeaves, store.version.others(), `${kind} ${recordId} ${batchId}`, () => leafOf().get(batchId, recordId, kind)),
    key: (fingerprint) => keyByFingerprint().get(fingerprint),
  };
  return { readsFor: () => reads, caches: () => caches };
}
