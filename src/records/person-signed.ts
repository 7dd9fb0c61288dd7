/**
 * Person-signed records (docs/persons.md "Person-signed records"): created with exactly the id,
 * hash and time the person's WebAuthn challenge committed to, signed with the person's key and
 * sealed like any record, their message waiting for the person's key announcement.
 */
import { DomainError } from "../lib/errors.ts";
import { toRecordRow, type RecordRow } from "../storage/record-row.ts";
import { ACTIVE_PERSON_RECORD } from "../storage/statements.ts";
import { firstRow, q, type Op, type StoreDb, type Tables } from "../storage/store.ts";
import { assertMayCreateRecords, insertNew, KeyRotatedMeanwhile, orgForCreate, pendingRow, refuseIfSuspended, SIGNING_ROUNDS, TOPIC_RETRY_SECONDS, type CreationDeps } from "./create.ts";
import type { RecordView } from "./views.ts";

/** The person's active record for the hash. */
function* activePersonRecord(orgId: string, docHash: string, personKey: Uint8Array): Op<RecordRow | undefined> {
  const raw = yield* q(firstRow(ACTIVE_PERSON_RECORD, orgId, docHash, personKey));
  return raw === undefined ? undefined : toRecordRow(raw);
}

export interface PersonSignedInput {
  readonly orgId: string;
  readonly personName: string;
  readonly personKey: Uint8Array;
  readonly recordId: string;
  readonly docHash: string;
  readonly signedAtMs: number;
  readonly filename: string | null;
  /**
   * Runs first inside the record's transaction: the caller's single-use claim (the WebAuthn
   * challenge, the passkey's counter). If it throws, nothing is written and `createPersonSigned`
   * rejects with its error.
   */
  readonly claim?: (tx: StoreDb, t: Tables) => Op<void>;
}

/**
 * A person-signed record for `personKey`, in one group-committed transaction with the caller's
 * `claim`. `created` false: the person already has an active record for the hash (nothing written
 * but the claim). Refusals as `create`: 403 ORGANISATION_SUSPENDED (read again under the write
 * lock), 503 while the topic does not exist, without the master key, or when the ledger queue is
 * full.
 */
export function personSignedCreation(deps: CreationDeps) {
  const { store, writes, clock, ledger, sealing, view } = deps;
  return async function createPersonSigned(input: PersonSignedInput): Promise<{ created: boolean; record: RecordView }> {
    const { orgId, docHash } = input;
    const personKey = Buffer.from(input.personKey);
    const org = await store.read(() => orgForCreate(orgId));
    assertMayCreateRecords(org);
    const active = () => activePersonRecord(orgId, docHash, personKey);
    if (org.topicId === null) throw new DomainError("SERVICE_UNAVAILABLE", "Your organisation's ledger topic is being created; retry shortly.", undefined, TOPIC_RETRY_SECONDS);
    const topicId = org.topicId;
    for (let round = 1; ; round++) {
      try {
        const result = await signAndWrite(input, topicId, active);
        if (result.created) ledger.wake();
        return { created: result.created, record: view(result.row) };
      } catch (e) {
        // A seal rotation between sealing and writing: sealed again with the new seal key.
        if (!(e instanceof KeyRotatedMeanwhile) || round === SIGNING_ROUNDS) throw e;
      }
    }
  };

  async function signAndWrite(input: PersonSignedInput, topicId: string, active: () => Op<RecordRow | undefined>) {
    const { orgId, recordId, docHash, signedAtMs } = input;
    const personKey = Buffer.from(input.personKey);
    const { seal, signature, sealSignature, message } = await sealing.signAndSeal(personKey, recordId, docHash, signedAtMs);
    const reserved = ledger.newTransactionId();
    const now = clock.now();
    return await writes.write(function* (tx, t) {
      if (input.claim !== undefined) yield* input.claim(tx, t);
      yield* refuseIfSuspended(orgId);
      yield* sealing.refuseIfSealRotated(seal.fingerprint);
      const winner = yield* active();
      if (winner !== undefined) return { created: false, row: winner };
      const row = pendingRow({
        id: recordId,
        orgId,
        signerType: "user",
        kind: "pdf_embedded",
        signerHint: input.personName,
        docHash,
        filename: input.filename,
        signedAtMs,
        signerFingerprint: personKey,
        signature: Buffer.from(signature),
        sealFingerprint: Buffer.from(seal.fingerprint),
        sealSignature: Buffer.from(sealSignature),
        topicId,
        transactionId: reserved.transactionId,
        createdAt: now,
      });
      return yield* insertNew(tx, t, row, reserved, message, active, personKey, ledger);
    });
  }
}
