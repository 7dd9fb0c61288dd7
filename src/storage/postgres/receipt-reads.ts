/**
 * Receipts' reads on PostgreSQL (receipts/ports.ts, `ReceiptSource`): the record and everything
 * its receipt needs read in one statement (`RECEIPT_SNAPSHOT`: one snapshot, one round trip), and
 * the build's reads answered from that row. The change counter is read in that statement too;
 * PostgreSQL raises it once per changing statement, whichever node writes, so what a receipt
 * keeps follows another node's change at once. Keeps nothing itself.
 */
import type { ReceiptKeyRow, ReceiptLeafRow, ReceiptReads, ReceiptSource, ReceiptTransactionRow as TransactionRow } from "../../receipts/ports.ts";
import type { PostgresStore } from "../pg-store.ts";
import { RECEIPT_SNAPSHOT, type ReceiptSnapshotRow } from "../receipt-statements.ts";
import { firstRow, q } from "../store.ts";

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);

/** A prefixed group of the snapshot's columns (`c_`, `a_`, `v_`), or null when its join found nothing. */
function transactionOf(row: ReceiptSnapshotRow, p: "c_" | "a_" | "v_" | "k_"): TransactionRow | null {
  const id = row[`${p}transaction_id`];
  if (id === null) return null;
  return {
    transaction_id: id,
    topic_id: row[`${p}topic_id`],
    message: row[`${p}message`],
    state: row[`${p}state`]!,
    sequence_number: row[`${p}sequence_number`],
    consensus_at: row[`${p}consensus_at`],
    running_hash: row[`${p}running_hash`],
    created_at: row[`${p}created_at`]!,
    kind: row[`${p}kind`]!,
    batch_size: row[`${p}batch_size`],
  };
}

function leafOf(row: ReceiptSnapshotRow, p: "cl_" | "vl_"): ReceiptLeafRow | null {
  const message = row[`${p}message`];
  return message === null ? null : { message, leaf_index: row[`${p}leaf_index`], inclusion_path: row[`${p}inclusion_path`] };
}

function keyOf(row: ReceiptSnapshotRow, p: "sk_" | "lk_"): ReceiptKeyRow | null {
  const algorithm = row[`${p}algorithm`];
  const publicKey = row[`${p}public_key`];
  return algorithm === null || publicKey === null ? null : { algorithm, public_key: publicKey };
}

/**
 * The reads of one receipt answered from its snapshot row (or none: no such record). Asked only
 * what the build asks of a record (its own creation and revocation messages, its signer's
 * announcement, its two keys, its signer key's compromise); anything else would be a build that no longer matches the
 * snapshot, and fails loudly.
 */
export function snapshotReads(recordId: string, row: ReceiptSnapshotRow | undefined): ReceiptReads {
  const mismatch = (what: string) => new Error(`receipt: the build asked for ${what}, which the snapshot of ${recordId} does not hold`);
  const creation = row === undefined ? null : transactionOf(row, "c_");
  const revocation = row === undefined ? null : transactionOf(row, "v_");
  return {
    record: (id) => {
      if (id !== recordId) throw mismatch(`record ${id}`);
      return row ?? null;
    },
    transaction: (id) => {
      if (row !== undefined && id === row.transaction_id) return creation;
      if (row !== undefined && id === row.revocation_transaction_id) return revocation;
      throw mismatch(`transaction ${id}`);
    },
    announcement: (orgId, fingerprint, seal, before) => {
      const same = row !== undefined && orgId === row.org_id && sameBytes(fingerprint, row.signer_fingerprint) && sameBytes(seal, row.seal_fingerprint) && before === row.c_sequence_number;
      if (!same) throw mismatch("another announcement");
      return transactionOf(row, "a_");
    },
    compromise: (fingerprint) => {
      if (row === undefined || !sameBytes(fingerprint, row.signer_fingerprint)) throw mismatch("another key's compromise");
      const transaction = transactionOf(row, "k_");
      return transaction === null || row.sk_compromised_since === null ? null : { since: row.sk_compromised_since, transaction };
    },
    leaf: (batchId, id, kind) => {
      if (row === undefined || id !== recordId) throw mismatch(`another record's leaf`);
      if (kind === "record_message" && batchId === row.transaction_id) return leafOf(row, "cl_");
      if (kind === "revocation_message" && batchId === row.revocation_transaction_id) return leafOf(row, "vl_");
      throw mismatch(`a leaf in batch ${batchId}`);
    },
    key: (fingerprint) => {
      if (row !== undefined && sameBytes(fingerprint, row.signer_fingerprint)) return keyOf(row, "sk_");
      if (row !== undefined && sameBytes(fingerprint, row.seal_fingerprint)) return keyOf(row, "lk_");
      throw mismatch("another key");
    },
  };
}

export function postgresReceiptReads(store: PostgresStore): ReceiptSource {
  return {
    readsFor: async (recordId) => snapshotReads(recordId, await store.read(() => q(firstRow(RECEIPT_SNAPSHOT, recordId)))),
    caches: () => [],
  };
}
