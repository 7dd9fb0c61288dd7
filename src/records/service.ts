/**
 * Authenticating documents as an organisation, and revoking that authentication
 * (docs/records.md §1 and §2).
 *
 * What callers may assume:
 * - `create` resolves only once the record and its `pending` ledger message are committed
 *   together (one IMMEDIATE transaction, `synchronous=FULL`): a 201 built from it is durable.
 * - At most one active (neither abandoned nor revoked) record per organisation and hash, whatever the concurrency,
 *   within and across processes: the check runs under the write lock, and the unique index
 *   `records_one_active` backs it.
 * - A repeat for a hash with an active record reads only; nothing is created or updated.
 * - `revoke` resolves once the revocation and its `pending` ledger message are committed
 *   together; verification reports the record revoked from then on.
 * - An abandoned record is never returned by anything here: it behaves as if it did not exist.
 * - A write lock held by another connection past busy_timeout is 503 SERVICE_UNAVAILABLE with
 *   Retry-After (write-queue.ts), never an internal error; nothing is written then.
 * - Nothing is created for an organisation an administrator has suspended (docs/records.md §1,
 *   403 ORGANISATION_SUSPENDED), not even a repeat's 200: the flag is read again under the
 *   write lock, so a suspension committed before the record's transaction always wins. Revocation
 *   is not affected: it is how a compromised organisation protects verifiers.
 */
import { and, eq, isNull } from "drizzle-orm";
import { MasterKeyMissingError, encodeRecordPayload, type Signer } from "../crypto/index.ts";
import type { Clock } from "../lib/clock.ts";
import { DomainError } from "../lib/errors.ts";
import { consensusToRfc3339, rfc3339Ms } from "../lib/formats.ts";
import { toRecordRow, type RecordRow } from "../storage/record-row.ts";
import { pendingMessage } from "../anchoring/queue.ts";
import { ACTIVE_ORG_RECORD, ACTIVE_PERSON_RECORD, INSERT_RECORD, ORG_FOR_CREATE, ORG_SUSPENDED, PERSON_RECORDS, RECORD_BY_ID } from "../storage/statements.ts";
import { changes, firstRow, q, rows, type Op, type SqliteStore, type Store, type StoreDb, type Tables } from "../storage/store.ts";
import type { RecordLedger } from "./ledger.ts";
import { encodeCreationMessage, encodeRevocationMessage } from "./messages.ts";
import { ensureSealKeyIn, sealedKey, type StoredKey } from "./seal-key.ts";
import { filenameProblem, isRecordId, validateDocHash, type RecordRequest, type RevocationReason } from "./validate.ts";
import { busyAsUnavailable, createWriteQueue, type RecordWriter } from "./write-queue.ts";

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

/** Seconds a client waits before polling a record that is not anchored yet (finality: 3–5 s). */
export const ANCHOR_RETRY_SECONDS = 5;
/** Seconds a client waits while its organisation's ledger topic is being created. */
export const TOPIC_RETRY_SECONDS = 10;

export type AnchorState = "pending" | "accepted" | "anchored";

/** The spec's Record (§2.6). */
export interface RecordView {
  readonly recordId: string;
  readonly originalDocHash: string;
  readonly authenticatedAt: string;
  readonly anchorState: AnchorState;
  readonly verifyUrl: string;
  readonly anchor: { readonly topicId: string; readonly transactionId: string; readonly hashscanUrl: string };
  readonly retryAfterSeconds?: number;
}

/** Everything the public verify page shows about a record. */
export interface PublicRecord {
  readonly recordId: string;
  readonly originalDocHash: string;
  readonly authenticatedAt: string;
  readonly signerType: "org" | "user";
  /**
   * The registered name of the record's organisation (docs/verification.md "Disclosure tiers"): the
   * signer of an organisation-signed record, the organisation a person-signed record was signed
   * within; null when there is none.
   */
  readonly organisationName: string | null;
  /** True while an administrator has suspended that organisation (read per request). */
  readonly organisationSuspended: boolean;
  /** The person hint (person-signed records). */
  readonly signerHint: string | null;
  readonly filename: string | null;
  readonly anchorState: AnchorState;
  readonly anchor: {
    readonly topicId: string;
    readonly transactionId: string;
    readonly hashscanUrl: string;
    readonly sequenceNumber: number | null;
    /** RFC 3339 with the ledger's nanoseconds, once anchored. */
    readonly consensusAt: string | null;
    /** Mirror-node URL of the topic message, once anchored. */
    readonly mirrorNodeUrl: string | null;
  };
  readonly revocation: { readonly reason: string; readonly revokedAt: string } | null;
}

export interface RecordsDeps {
  /** The database, on either engine (storage/store.ts). */
  readonly store: Store;
  readonly signer: Signer;
  readonly clock: Clock;
  readonly ledger: RecordLedger;
  /**
   * Base of `verifyUrl` (config.publicUrl). A function when it is known only once the listener is
   * bound (DOCVERIFY_PORT=0 without DOCVERIFY_PUBLIC_URL); read on every answer.
   */
  readonly publicUrl: string | (() => string);
  /**
   * Where record writes run: on SQLite the shared group-commit queue (one is made when absent), on
   * PostgreSQL the store itself.
   */
  readonly writes?: RecordWriter;
}

/**
 * A person's records, newest first, abandoned ones left out: one range of the partial index
 * `records_person (signer_fingerprint, id) WHERE signer_type = 'user'`, never a scan of the
 * records table. Exported for the plan test.
 */
export const PERSON_RECORDS_SQL = PERSON_RECORDS.sqlite;

/** A new record's row: pending, neither anchored nor revoked. */
function pendingRow(fields: Omit<RecordRow, "anchorState" | "sequenceNumber" | "consensusAt" | "revokedAt" | "revocationReason" | "revocationTransactionId">): RecordRow {
  return { ...fields, anchorState: "pending", sequenceNumber: null, consensusAt: null, revokedAt: null, revocationReason: null, revocationTransactionId: null };
}

export function createRecords(deps: RecordsDeps) {
  const { store, signer, clock, ledger } = deps;
  const publicUrlOption = deps.publicUrl;
  const publicUrl = () => (typeof publicUrlOption === "function" ? publicUrlOption() : publicUrlOption).replace(/\/+$/, "");
  const writes: RecordWriter = deps.writes ?? (store.engine === "sqlite" ? createWriteQueue((store as SqliteStore).db) : store);
  let sealKey: StoredKey | null = null;
  // Key rows never change (a record names its keys by fingerprint forever), so caching is safe.
  const heldKeys = new Map<string, StoredKey>();

  function view(row: RecordRow): RecordView {
    if (row.anchorState === "abandoned") throw new Error("an abandoned record is never shown");
    return {
      recordId: row.id,
      originalDocHash: row.docHash,
      authenticatedAt: rfc3339Ms(row.signedAtMs),
      anchorState: row.anchorState,
      verifyUrl: `${publicUrl()}/verify/${row.id}`,
      anchor: { topicId: row.topicId, transactionId: row.transactionId, hashscanUrl: ledger.transactionUrl(row.transactionId) },
      ...(row.anchorState === "anchored" ? {} : { retryAfterSeconds: ANCHOR_RETRY_SECONDS }),
    };
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
      // Its first creation takes the write lock outside the queue: busy there is a 503 too.
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
   * A step of a record's write: inserts a new pending record and its creation message, unless
   * another writer (another request, process or node) committed an active record with the same
   * `records_one_active` key first: `winner` reads it, and it is returned instead (created false).
   */
  function* insertNew(
    tx: StoreDb,
    t: Tables,
    row: RecordRow,
    reserved: ReturnType<RecordLedger["newTransactionId"]>,
    message: Uint8Array,
    winner: () => Op<RecordRow | undefined>,
    waitFor?: Uint8Array,
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
    yield* pendingMessage(tx, t, {
      kind: "record_message",
      ...reserved,
      orgId: row.orgId!,
      recordId: row.id,
      topicId: row.topicId,
      message,
      now: row.createdAt,
      ...(waitFor === undefined ? {} : { keyFingerprint: waitFor }),
    });
    return { created: true, row };
  }

  /** The organisation's active record for the hash. */
  function* activeRecord(orgId: string, docHash: string): Op<RecordRow | undefined> {
    const raw = yield* q(firstRow(ACTIVE_ORG_RECORD, orgId, docHash));
    return raw === undefined ? undefined : toRecordRow(raw);
  }

  /** The person's active record for the hash. */
  function* activePersonRecord(orgId: string, docHash: string, personKey: Uint8Array): Op<RecordRow | undefined> {
    const raw = yield* q(firstRow(ACTIVE_PERSON_RECORD, orgId, docHash, personKey));
    return raw === undefined ? undefined : toRecordRow(raw);
  }

  function* orgForCreate(orgId: string): Op<{ topicId: string | null; systemKeyFingerprint: Uint8Array; suspended: boolean }> {
    const org = yield* q(firstRow(ORG_FOR_CREATE, orgId));
    if (org === undefined) throw new Error(`organisation ${orgId} does not exist`);
    return { topicId: org.topic_id, systemKeyFingerprint: org.system_key_fingerprint, suspended: org.suspended !== 0 };
  }

  /** Under the write lock: an administrator's suspension committed meanwhile wins. */
  function* refuseIfSuspended(orgId: string): Op<void> {
    if (((yield* q(firstRow(ORG_SUSPENDED, orgId)))?.suspended ?? 0) !== 0) throw organisationSuspended();
  }

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
      yield* pendingMessage(tx, t, { kind: "revocation_message", ...reserved, orgId: row.orgId!, recordId, topicId: row.topicId, message, now });
    });
    ledger.wake();
    return { recordId };
  }

  return {
    /**
     * POST /v1/records for organisation `orgId`. `created` false means an active record for the
     * hash already existed (200); nothing was written then.
     */
    async create(orgId: string, request: RecordRequest): Promise<{ created: boolean; record: RecordView }> {
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
      const signedAtMs = clock.now();
      const { signerKey, seal, signature, sealSignature, message } = await signAndSeal(Buffer.from(org.systemKeyFingerprint), recordId, docHash, signedAtMs);
      const reserved = ledger.newTransactionId();

      const now = clock.now();
      const result = await writes.write(function* (tx, t) {
        yield* refuseIfSuspended(orgId);
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
        return yield* insertNew(tx, t, row, reserved, message, () => activeRecord(orgId, docHash));
      });
      if (result.created) ledger.wake();
      return { created: result.created, record: view(result.row) };
    },

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

    /**
     * A person-signed record (docs/persons.md "Person-signed records") for `personKey`, with
     * exactly the id, hash and time the person's WebAuthn challenge committed to: signed with the
     * person's key and sealed like any record, its message waiting for the person's key
     * announcement, in one group-committed transaction with the caller's `claim`. `created` false:
     * the person already has an active record for the hash (nothing written but the claim).
     * Refusals as `create`: 403 ORGANISATION_SUSPENDED (read again under the write lock), 503 while
     * the topic does not exist, without the master key, or when the ledger queue is full.
     */
    async createPersonSigned(input: {
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
    }): Promise<{ created: boolean; record: RecordView }> {
      const { orgId, recordId, docHash, signedAtMs } = input;
      const personKey = Buffer.from(input.personKey);
      const org = await store.read(() => orgForCreate(orgId));
      assertMayCreateRecords(org);
      const active = () => activePersonRecord(orgId, docHash, personKey);
      if (org.topicId === null) throw new DomainError("SERVICE_UNAVAILABLE", "Your organisation's ledger topic is being created; retry shortly.", undefined, TOPIC_RETRY_SECONDS);
      const topicId = org.topicId;
      const { seal, signature, sealSignature, message } = await signAndSeal(personKey, recordId, docHash, signedAtMs);
      const reserved = ledger.newTransactionId();
      const now = clock.now();
      const result = await writes.write(function* (tx, t) {
        if (input.claim !== undefined) yield* input.claim(tx, t);
        yield* refuseIfSuspended(orgId);
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
        return yield* insertNew(tx, t, row, reserved, message, active, personKey);
      });
      if (result.created) ledger.wake();
      return { created: result.created, record: view(result.row) };
    },

    /** A person's records (by their key), newest first, at most `limit`; abandoned ones never. */
    async personSigned(keyFingerprint: Uint8Array, limit: number): Promise<{ record: RecordView; filename: string | null; revocation: { reason: string; revokedAt: string } | null }[]> {
      const raw = await store.read(() => q(rows(PERSON_RECORDS, keyFingerprint, limit)));
      return raw
        .map(toRecordRow)
        .map((r) => ({
          record: view(r),
          filename: r.filename,
          revocation: r.revokedAt === null ? null : { reason: r.revocationReason ?? "UNSPECIFIED", revokedAt: rfc3339Ms(r.revokedAt) },
        }));
    },

    /**
     * What the public verify page shows, or null for a malformed, unknown or abandoned id. Throws on
     * a stored time it cannot spell (src/lib/formats.ts: corruption, never padded or echoed).
     */
    async publicRecord(recordId: string): Promise<PublicRecord | null> {
      if (!isRecordId(recordId)) return null;
      const [found] = await store.read((db, t) =>
        q(
          db
            .select({ record: t.records, organisationName: t.organisations.name, organisationSuspended: t.organisations.suspended })
            .from(t.records)
            .leftJoin(t.organisations, eq(t.records.orgId, t.organisations.id))
            .where(eq(t.records.id, recordId)),
        ),
      );
      if (found === undefined || found.record.anchorState === "abandoned") return null;
      const r = found.record;
      const anchorState = r.anchorState as AnchorState;
      const anchored = anchorState === "anchored" && r.sequenceNumber !== null;
      return {
        recordId: r.id,
        originalDocHash: r.docHash,
        authenticatedAt: rfc3339Ms(r.signedAtMs),
        signerType: r.signerType,
        organisationName: found.organisationName,
        organisationSuspended: found.organisationSuspended === true,
        signerHint: r.signerHint,
        filename: r.filename,
        anchorState,
        anchor: {
          topicId: r.topicId,
          transactionId: r.transactionId,
          hashscanUrl: ledger.transactionUrl(r.transactionId),
          sequenceNumber: r.sequenceNumber,
          consensusAt: r.consensusAt === null ? null : consensusToRfc3339(r.consensusAt),
          mirrorNodeUrl: anchored ? ledger.topicMessageUrl(r.topicId, r.sequenceNumber!) : null,
        },
        revocation: r.revokedAt === null ? null : { reason: r.revocationReason ?? "UNSPECIFIED", revokedAt: rfc3339Ms(r.revokedAt) },
      };
    },
  };
}

export type Records = ReturnType<typeof createRecords>;
