/**
 * Batches, at each of the leader's passes (docs/anchoring.md "Batches"). Records and revocations
 * join their organisation's open batch in their own transaction (queue.ts `pendingMessage`); here
 * an open batch is closed once its window has passed or it is full: a Merkle tree over its leaves
 * (RFC 9162, anchoring/merkle.ts) whose root its one ledger message carries. The journal stores
 * the message, the batch's sequence and each leaf's place and inclusion proof in one transaction,
 * before anything is submitted (`Journal.closeBatch`); the batch's message then goes as any
 * message does (state-machine.ts).
 */
import type { BatchBuilder, BatchPolicy } from "../journal/ports.ts";
import type { BatchMessageFor } from "../types.ts";
import { concatPath, merkleTree } from "../merkle.ts";
import type { LoopContext } from "./context.ts";
import type { StateChanges } from "./state-changes.ts";

/** A closing batch's message and every leaf's inclusion path: the Merkle tree over its leaves, its root in the message `batchMessageFor` writes. */
export function batchBuilder(batchMessageFor: BatchMessageFor): BatchBuilder {
  return ({ orgId, sequence, leaves }) => {
    const tree = merkleTree(leaves.map((l) => l.message));
    const message = batchMessageFor({
      orgId,
      batch: sequence,
      size: leaves.length,
      root: tree.root,
      revoked: leaves.filter((l) => l.kind === "revocation_message").map((l) => l.recordId),
    });
    return { message, paths: tree.paths.map(concatPath) };
  };
}

export function createBatcher(ctx: LoopContext, changes: StateChanges, policy: BatchPolicy) {
  const { journal, now } = ctx;
  /** When the next open batch's window ends (the loop's clock), as of the last look; null: none open. */
  let nextAt: number | null = null;
  /** The open batches and their leaves, as of the last look. */
  let open = { batches: 0, leaves: 0 };

  const build = batchBuilder(ctx.batchMessageFor);

  /** Closes every open batch whose window has passed or that is full; returns how many. */
  const close = async (): Promise<number> => {
    const t = now();
    let closed = 0;
    let soonest: number | null = null;
    let left = { batches: 0, leaves: 0 };
    for (const batch of await journal.openBatches()) {
      if (batch.nextAttemptAt > t && (batch.batchSize ?? 0) < policy.max) {
        soonest = soonest === null ? batch.nextAttemptAt : Math.min(soonest, batch.nextAttemptAt);
        left = { batches: left.batches + 1, leaves: left.leaves + (batch.batchSize ?? 0) };
        continue;
      }
      const row = await journal.closeBatch(batch, build);
      if (row === null) continue; // closed or abandoned meanwhile
      closed++;
      changes.event("closed", row, { topicId: row.topicId, batch: row.batchSequence, leaves: row.batchSize });
    }
    nextAt = soonest;
    open = left;
    return closed;
  };

  return {
    close,
    /** When the loop should look again for a batch to close (the loop's clock), or null. */
    nextAt: () => nextAt,
    /** The batches left open at the last look, and their leaves. */
    open: () => open,
  };
}
