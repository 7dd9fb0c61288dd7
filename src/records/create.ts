/**
 * Authenticating a document as an organisation (docs/records.md §1), and what a person-signed
 * record's creation (person-signed.ts) shares with it: the refusal of a suspended organisation,
 * the signatures and seal, and the insert that loses to a record committed first.
 *
 * What callers may assume:
 * - `create` resolves only once the record and its `pending` ledger message are committed
 *   together (one write of the `RecordWrites` port, ports.ts): a 201 built from it is durable.
 * - At most one active (neither abandoned nor revoked) record per organisation and hash, whatever the concurrency,
 *   within and across processes: the check runs under the write lock, and the unique index
 *   `records_one_active` backs it.
 * - A repeat for a hash with an active record reads only; nothing is created or updated.
 * - Nothing is created for an organisation an administrator has suspended (docs/records.md §1,
 *   403 ORGANISATION_SUSPENDED), not even a repeat's 200: the flag is read again under the
 *   write lock, so a suspension committed before the record's transaction always wins.
 */
import { MasterKeyMissingError, encodeRecordPayload, type Signer } from "../crypto/index.ts";
import type { Clock } from "../lib/clock.ts";
import { DomainError } from "../lib/errors.ts";
import { pendingMessage } from "../anchoring/queue.ts";
import { toRecordRow, type RecordRow } from "../storage/record-row.ts";
import { ACTIVE_ORG_RECORD, CURRENT_SEAL_KEY, INSERT_RECORD, ORG_FOR_CREATE, ORG_SIGNING_KEY, ORG_SUSPENDED } from "../storage/statements.ts";
import { changes, firstRow, q, type Op, type Store, type StoreDb, type Tables } from "../storage/store.ts";
import type { RecordLedger } from "./ledger.ts";
import { encodeCreationMessage } from "./messages.ts";
import { ensureSealKeyIn, sealedKey, type StoredKey } from "./seal-key.ts";
import { filenameProblem, validateDocHash, type RecordRequest } from "./validate.ts";
import type { RecordView } from "./views.ts";
import { busyAsUnavailable, type RecordWriter } from "./write-queue.ts";

/**
 * Refuses record creation for a suspended organisation (docs/access.md "Order of refusals"). The
 * HTTP route calls it with the caller's organisation as the credential check read it, right after
 * access and before the body (an organisation-level refusal, like the add-on's); `create` checks
 * again.
 */
export function assertMayCreateRecords(org: { readonly suspended: boolean }): void {
  if (org.suspended) throw organisationSuspended();
}

function organisationSuspended(): DomainError {
  return new DomainError(
    "ORGANISATION_SUSPENDED",
    "An administrator has suspended this organisation: it cannot authenticate documents. Its keys still verify, and revoke its records.",
  );
}

/** Seconds a client waits while its organisation's ledger topic is being created. */
export const TOPIC_RETRY_SECONDS = 10;

/** A new record's row: pending, neither anchored nor revoked. */
export function pendingRow(fields: Omit<RecordRow, "anchorState" | "sequenceNumber" | "consensusAt" | "revokedAt" | "revocationReason" | "revocationTransactionId">): RecordRow {
  return { ...fields, anchorState: "pending", sequenceNumber: null, consensusAt: null, revokedAt: null, revocationReason: null, revocationTransactionId: null };
}

/**
 * A step of a record's write: inserts a new pending record and its creation message, unless
 * another writer (another request, process or node) committed an active record with the same
 * `records_one_active` key first: `winner` reads it, and it is returned instead (created false).
 */
export function* insertNew(
  tx: StoreDb,
  t: Tables,
  row: RecordRow,
  reserved: ReturnType<RecordLedger["newTransactionId"]>,
  message: Uint8Array,
  winner: () => Op<RecordRow | undefined>,
  signerKey: Uint8Array,
  ledger: Pick<RecordLedger, "batches" | "newTransactionId">,
): Op<{ created: boolean; row: RecordRow }> {
  const inserted = yield* q(
    changes(INSERT_RECORD, row.id, row.orgId!, row.signerType, row.kind, row.signerHint, row.docHash, row.filename, row.signedAtMs, row.signerFingerprint, row.signature,
      row.sealFingerprint, row.sealSignature, row.anchorState, row.topicId, row.transactionId, row.createdAt),
  );
  if (inserted === 0) {
    const other = yield* winner();
    if (other !== undefined) return { created: false, row: other };
    throw new Error(`record ${row.id} was not inserted and no active record stands in its way (its id is taken)`);
  }
  // Its message joins the organisation's open batch, whose transaction the record carries from now on.
  const transactionId = yield* pendingMessage(tx, t, {
    kind: "record_message",
    ...reserved,
    orgId: row.orgId!,
    recordId: row.id,
    topicId: row.topicId,
    message,
    now: row.createdAt,
    keyFingerprint: signerKey,
    sealFingerprint: row.sealFingerprint,
    batches: { policy: ledger.batches, newBatchId: () => ledger.newTransactionId() },
  });
  return { created: true, row: { ...row, transactionId } };
}

/** The organisation's active record for the hash. */
function* activeRecord(orgId: string, docHash: string): Op<RecordRow | undefined> {
  const raw = yield* q(firstRow(ACTIVE_ORG_RECORD, orgId, docHash));
  return raw === undefined ? undefined : toRecordRow(raw);
}

export function* orgForCreate(orgId: string): Op<{ topicId: string | null; systemKeyFingerprint: Uint8Array; suspended: boolean }> {
  const org = yield* q(firstRow(ORG_FOR_CREATE, orgId));
  if (org === undefined) throw new Error(`organisation ${orgId} does not exist`);
  return { topicId: org.topic_id, systemKeyFingerprint: org.system_key_fingerprint, suspended: org.suspended !== 0 };
}

/** Thrown inside a record's write when the organisation's key or the seal key was rotated since it was signed: the record is signed again. */
export class KeyRotatedMeanwhile extends Error {
  constructor() {
    super("the organisation's key or the seal key was rotated while the record was signed, three times in a row");
  }
}

/** Under the write lock: the organisation's current key is still `signer` (see ORG_SIGNING_KEY); otherwise the write is undone. */
function* refuseIfKeyRotated(orgId: string, signer: Uint8Array): Op<void> {
  const current = (yield* q(firstRow(ORG_SIGNING_KEY, orgId)))?.system_key_fingerprint;
  if (current === undefined || !Buffer.from(current).equals(Buffer.from(signer))) throw new KeyRotatedMeanwhile();
}

/** A rotation between signing and writing is rare; two in a row rarer still, and a third is an error. */
export const SIGNING_ROUNDS = 3;

/** Under the write lock: an administrator's suspension committed meanwhile wins. */
export function* refuseIfSuspended(orgId: string): Op<void> {
  if (((yield* q(firstRow(ORG_SUSPENDED, orgId)))?.suspended ?? 0) !== 0) throw organisationSuspended();
}

export interface SealingDeps {
  readonly store: Store;
  readonly signer: Signer;
  readonly clock: Clock;
  readonly ledger: RecordLedger;
}

/** The record signatures of one records service, with the keys it holds (the seal key, the signers' keys). */
export function recordSealing(deps: SealingDeps) {
  const { store, signer, clock, ledger } = deps;
  // The seal key as last read; a seal rotation (seal-rotation.ts) replaces it, which every
  // record's write notices (`refuseIfSealRotated`): the key is then read again.
  let sealKey: StoredKey | null = null;
  // Key rows never change (a record names its keys by fingerprint forever), so caching is safe.
  const heldKeys = new Map<string, StoredKey>();

  async function heldKey(fingerprint: Buffer): Promise<StoredKey> {
    const hex = fingerprint.toString("hex");
    let key = heldKeys.get(hex);
    if (key === undefined) {
      const loaded = await store.read(sealedKey(fingerprint));
      if (loaded === null) throw new Error(`signing key ${hex} has no private half`);
      key = loaded;
      if (heldKeys.size >= 1024) heldKeys.clear();
      heldKeys.set(hex, key);
    }
    return key;
  }

  /**
   * Signs the record payload with the held key `signerFingerprint`, seals it (on a signing worker:
   * `signer.signAndSeal`), and builds the creation message. 503 without the master key
   * (MasterKeyMissingError) or while the ledger queue is full; the seal key is created on first
   * use. Nothing is written here: a failure (a signing worker that stops, for one) leaves no trace.
   */
  async function signAndSeal(signerFingerprint: Buffer, recordId: string, docHash: string, signedAtMs: number) {
    if (!signer.canSign) throw new MasterKeyMissingError(null);
    ledger.assertCapacity();
    try {
      sealKey ??= await ensureSealKeyIn({ store, signer, clock });
    } catch (e) {
      // Its first creation takes the write lock outside the record writes: busy there is a 503 too.
      throw busyAsUnavailable(e);
    }
    const seal = sealKey;
    const signerKey = await heldKey(signerFingerprint);
    const payload = encodeRecordPayload({ recordId, docHash, signedAtMs, signerKeyFingerprint: signerKey.fingerprint });
    const { signature, sealSignature } = await signer.signAndSeal(signerKey, seal, payload);
    const message = encodeCreationMessage({ recordId, docHash, signedAtMs, signerPublicKey: signerKey.publicKey, signature, sealSignature });
    return { signerKey, seal, signature, sealSignature, message };
  }

  /**
   * Under the write lock: the installation's seal key is still `seal` (CURRENT_SEAL_KEY);
   * otherwise the held seal key is dropped and the write undone (KeyRotatedMeanwhile: the caller
   * signs again), so that no record sealed with a replaced seal key is written after its rotation.
   */
  function* refuseIfSealRotated(seal: Uint8Array): Op<void> {
    const current = (yield* q(firstRow(CURRENT_SEAL_KEY)))?.value;
    if (current === Buffer.from(seal).toString("hex")) return;
    sealKey = null;
    throw new KeyRotatedMeanwhile();
  }

  return { signAndSeal, refuseIfSealRotated };
}

export type RecordSealing = ReturnType<typeof recordSealing>;

export interface CreationDeps {
  readonly store: Store;
  readonly writes: RecordWriter;
  readonly clock: Clock;
  readonly ledger: RecordLedger;
  readonly sealing: RecordSealing;
  readonly view: (row: RecordRow) => RecordView;
}

/**
 * POST /v1/records for organisation `orgId`. `created` false means an active record for the
 * hash already existed (200); nothing was written then.
 */
export function orgSignedCreation(deps: CreationDeps) {
  const { store, writes, clock, ledger, sealing, view } = deps;
  return async function create(orgId: string, request: RecordRequest): Promise<{ created: boolean; record: RecordView }> {
    const docHash = validateDocHash(request.docHash);
    if (request.filename !== undefined && filenameProblem(request.filename) !== null) throw new TypeError("filename was not validated");

    const { org, existing } = await store.read(function* () {
      return { org: yield* orgForCreate(orgId), existing: yield* activeRecord(orgId, docHash) };
    });
    assertMayCreateRecords(org);
    if (existing !== undefined) return { created: false, record: view(existing) };

    if (org.topicId === null) {
      throw new DomainError(
        "SERVICE_UNAVAILABLE",
        "The organisation's ledger topic is being created; records can be authenticated once it exists. Retry shortly.",
        undefined,
        TOPIC_RETRY_SECONDS,
      );
    }
    const topicId = org.topicId;
    const recordId = Bun.randomUUIDv7();
    let signerFingerprint = Buffer.from(org.systemKeyFingerprint);
    for (let round = 1; ; round++) {
      try {
        const result = await signAndWrite(orgId, request, docHash, topicId, recordId, signerFingerprint);
        if (result.created) ledger.wake();
        return { created: result.created, record: view(result.row) };
      } catch (e) {
        if (!(e instanceof KeyRotatedMeanwhile) || round === SIGNING_ROUNDS) throw e;
        signerFingerprint = Buffer.from((await store.read(() => orgForCreate(orgId))).systemKeyFingerprint);
      }
    }
  };

  /**
   * Signs with `signerFingerprint` and writes, in one transaction, the record and its creation
   * message, which names its key (the message waits for that key's announcement, and the next
   * key's announcement waits for it: docs/anchoring.md "Key announcements"). KeyRotatedMeanwhile
   * when the organisation's key is no longer `signerFingerprint` under the write lock.
   */
  async function signAndWrite(orgId: string, request: RecordRequest, docHash: string, topicId: string, recordId: string, signerFingerprint: Buffer) {
    const signedAtMs = clock.now();
    const { signerKey, seal, signature, sealSignature, message } = await sealing.signAndSeal(signerFingerprint, recordId, docHash, signedAtMs);
    const reserved = ledger.newTransactionId();

    const now = clock.now();
    return await writes.write(function* (tx, t) {
      yield* refuseIfSuspended(orgId);
      yield* refuseIfKeyRotated(orgId, signerKey.fingerprint);
      yield* sealing.refuseIfSealRotated(seal.fingerprint);
      const winner = yield* activeRecord(orgId, docHash);
      if (winner !== undefined) return { created: false, row: winner };
      const row = pendingRow({
        id: recordId,
        orgId,
        signerType: "org",
        kind: "record_only",
        signerHint: null,
        docHash,
        filename: request.filename ?? null,
        signedAtMs,
        signerFingerprint: Buffer.from(signerKey.fingerprint),
        signature: Buffer.from(signature),
        sealFingerprint: Buffer.from(seal.fingerprint),
        sealSignature: Buffer.from(sealSignature),
        topicId,
        transactionId: reserved.transactionId,
        createdAt: now,
      });
      // Another writer of the same database may have got there first (records_one_active): its record wins.
      return yield* insertNew(tx, t, row, reserved, message, () => activeRecord(orgId, docHash), signerKey.fingerprint, ledger);
    });
  }
}
