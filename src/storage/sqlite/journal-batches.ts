/**
 * The SQLite anchor journal's closing of a batch (storage/sqlite/journal.ts; the port's contract
 * is anchoring/journal/ports.ts `closeBatch`): one IMMEDIATE transaction that reads the open
 * batch's leaves, has the loop's builder make its message and every leaf's inclusion path, and
 * stores them, the batch becoming `pending`; or changes nothing.
 */
import type { BatchBuilder, BatchLeaf, JournalRules, LedgerTransactionRow } from "../../anchoring/journal/ports.ts";
import type { Db } from "../db.ts";
import { abandonIn } from "./journal-changes.ts";
import type { JournalStatements } from "./journal-statements.ts";

export function closeBatchIn(db: Db, s: JournalStatements, rules: JournalRules, row: LedgerTransactionRow, build: BatchBuilder): LedgerTransactionRow | null {
  const t = rules.clock.now();
  const closed = db.$client
    .transaction((): LedgerTransactionRow | "empty" | null => {
      if (s.stateOf.get(row.transactionId)?.state !== "open") return null;
      const leaves = s.leavesOf.all(row.transactionId);
      if (leaves.length === 0) return "empty";
      const given: BatchLeaf[] = leaves.map((l) => {
        if ((l.kind !== "record_message" && l.kind !== "revocation_message") || l.record_id === null || l.message === null) throw new Error(`batch ${row.transactionId} holds a malformed leaf ${l.transaction_id}`);
        return { kind: l.kind, recordId: l.record_id, message: l.message };
      });
      const sequence = s.nextBatchSequence.get(row.orgId)!.next;
      const built = build({ orgId: row.orgId, sequence, leaves: given });
      if (built.paths.length !== leaves.length) throw new Error("a batch's builder must give every leaf its path");
      rules.checkLength(built.message);
      s.closeBatch.run(built.message, sequence, leaves.length, t, t, row.transactionId);
      leaves.forEach((l, i) => s.placeLeaf.run(i, built.paths[i]!, t, l.transaction_id));
      return {
        ...row,
        state: "pending",
        message: Buffer.from(built.message),
        batchSequence: sequence,
        batchSize: leaves.length,
        nextAttemptAt: t,
        updatedAt: t,
      };
    })
    .immediate();
  // No leaf joined it (its record's write undone after the batch was made: nothing to anchor).
  if (closed === "empty") {
    abandonIn(db, rules, row, "no record or revocation joined the batch");
    return null;
  }
  return closed;
}
