/**
 * Revoking a record's authentication (docs/records.md §2), by its organisation or, for a
 * person-signed record, by its person.
 *
 * What callers may assume:
 * - A revocation resolves once the revocation and its `pending` ledger message are committed
 *   together; verification reports the record revoked from then on.
 * - Of two revocations at once, one revokes and the other is refused ALREADY_REVOKED: one
 *   revocation message is queued.
 * - Revocation is not affected by an organisation's suspension: it is how a compromised
 *   organisation protects verifiers.
 */
import { and, eq, isNull } from "drizzle-orm";
import type { Clock } from "../lib/clock.ts";
import { DomainError } from "../lib/errors.ts";
import { pendingMessage } from "../anchoring/queue.ts";
import { toRecordRow, type RecordRow } from "../storage/record-row.ts";
import { RECORD_BY_ID } from "../storage/statements.ts";
import { firstRow, q, type Op, type Store } from "../storage/store.ts";
import type { RecordLedger } from "./ledger.ts";
import { encodeRevocationMessage } from "./messages.ts";
import { isRecordId, type RevocationReason } from "./validate.ts";
import type { RecordWriter } from "./write-queue.ts";

export interface RevocationDeps {
  readonly store: Store;
  readonly writes: RecordWriter;
  readonly clock: Clock;
  readonly ledger: RecordLedger;
}

export function recordRevocation(deps: RevocationDeps) {
  const { store, writes, clock, ledger } = deps;

  /** Revocation of a record `owns` accepts (docs/records.md §2's refusal order), for `revoke` and `revokePersonSigned`. */
  async function revokeIf(owns: (row: RecordRow) => boolean, notYours: string, recordId: string, reason: RevocationReason): Promise<{ recordId: string }> {
    const check = (row: RecordRow | undefined): RecordRow => {
      if (row === undefined || row.anchorState === "abandoned") throw new DomainError("NOT_FOUND", "No such record.");
      if (!owns(row)) throw new DomainError("NOT_REVOCABLE", notYours);
      if (row.revokedAt !== null) throw new DomainError("ALREADY_REVOKED", "The record is already revoked; revocation is permanent.");
      if (row.anchorState !== "anchored") {
        throw new DomainError("ANCHOR_NOT_FINAL", "The record's anchor has not reached consensus yet; retry once it is anchored (verification then no longer reports pending_anchor).");
      }
      return row;
    };
    if (!isRecordId(recordId)) throw new DomainError("NOT_FOUND", "No such record.");
    function* byId(): Op<RecordRow | undefined> {
      const raw = yield* q(firstRow(RECORD_BY_ID, recordId));
      return raw === undefined ? undefined : toRecordRow(raw);
    }
    // Refusals without the write lock; the same checks run again under it.
    check(await store.read(byId));
    const reserved = ledger.newTransactionId();
    const now = clock.now();
    const message = encodeRevocationMessage({ recordId, reason, revokedAtMs: now });
    await writes.write(function* (tx, t) {
      const row = check(yield* byId());
      // Only while not revoked: of two revocations at once, whatever the isolation, one changes the
      // row and the other finds it revoked (ALREADY_REVOKED), so one revocation message is queued.
      const revoked = yield* q(
        tx
          .update(t.records)
          .set({ revokedAt: now, revocationReason: reason, revocationTransactionId: reserved.transactionId })
          .where(and(eq(t.records.id, recordId), isNull(t.records.revokedAt)))
          .returning({ id: t.records.id }),
      );
      if (revoked.length === 0) {
        check(yield* byId());
        throw new Error(`record ${recordId} changed during its revocation`);
      }
      // Its message joins the organisation's open batch of revocations, whose transaction the revocation carries from now on.
      yield* pendingMessage(tx, t, {
        kind: "revocation_message",
        ...reserved,
        orgId: row.orgId!,
        recordId,
        topicId: row.topicId,
        message,
        now,
        batches: { policy: ledger.batches, newBatchId: () => ledger.newTransactionId() },
      });
    });
    ledger.wake();
    return { recordId };
  }

  return {
    /**
     * POST /v1/records/{recordId}/revoke by organisation `orgId`. Refusals, in this order:
     * 404 NOT_FOUND (malformed, unknown or abandoned id), 403 NOT_REVOCABLE (another
     * organisation's or a person-signed record), 409 ALREADY_REVOKED, 409 ANCHOR_NOT_FINAL.
     */
    async revoke(orgId: string, recordId: string, reason: RevocationReason): Promise<{ recordId: string }> {
      return revokeIf((row) => row.signerType === "org" && row.orgId === orgId, "This record is not revocable by your organisation.", recordId, reason);
    },

    /**
     * POST /app/records/{recordId}/revoke by the person whose key is `keyFingerprint`
     * (docs/persons.md "Person-signed records"): their own person-signed records only. The same
     * refusals, in the same order, as `revoke`.
     */
    async revokePersonSigned(keyFingerprint: Uint8Array, recordId: string, reason: RevocationReason): Promise<{ recordId: string }> {
      const key = Buffer.from(keyFingerprint);
      return revokeIf((row) => row.signerType === "user" && key.equals(row.signerFingerprint), "This record was not signed by you: you can revoke only your own.", recordId, reason);
    },
  };
}
