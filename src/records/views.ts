/**
 * What records look like to their readers: the API's Record (docs/records.md §2.6), a person's
 * list of their own records, and the public verify page's record. An abandoned record is never
 * returned by anything here: it behaves as if it did not exist.
 */
import { and, eq } from "drizzle-orm";
import { consensusToRfc3339, rfc3339Ms } from "../lib/formats.ts";
import { toRecordRow, type RecordRow } from "../storage/record-row.ts";
import { PERSON_RECORDS } from "../storage/statements.ts";
import { q, rows, type Store } from "../storage/store.ts";
import type { RecordLedger } from "./ledger.ts";
import { keyCompromise, revocationOf } from "../verification/revocation.ts";
import { isRecordId } from "./validate.ts";

/** Seconds a client waits before polling a record that is not anchored yet (finality: 3–5 s). */
export const ANCHOR_RETRY_SECONDS = 5;

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

/**
 * A person's records, newest first, abandoned ones left out: one range of the partial index
 * `records_person (signer_fingerprint, id) WHERE signer_type = 'user'`, never a scan of the
 * records table. Exported for the plan test.
 */
export const PERSON_RECORDS_SQL = PERSON_RECORDS.sqlite;

export interface RecordViewsDeps {
  readonly store: Store;
  readonly ledger: RecordLedger;
  /**
   * Base of `verifyUrl` (config.publicUrl). A function when it is known only once the listener is
   * bound (DOCVERIFY_PORT=0 without DOCVERIFY_PUBLIC_URL); read on every answer.
   */
  readonly publicUrl: string | (() => string);
}

export function recordViews(deps: RecordViewsDeps) {
  const { store, ledger } = deps;
  const publicUrlOption = deps.publicUrl;
  const publicUrl = () => (typeof publicUrlOption === "function" ? publicUrlOption() : publicUrlOption).replace(/\/+$/, "");

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

  return {
    view,

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
     * What the public verify page shows, or null for a malformed, unknown or abandoned id. Its
     * revocation is verification's (verification/revocation.ts): its own, or its signer key's
     * declared compromise when it was signed at or after `since`, the earlier. Throws on
     * a stored time it cannot spell (src/lib/formats.ts: corruption, never padded or echoed).
     */
    async publicRecord(recordId: string): Promise<PublicRecord | null> {
      if (!isRecordId(recordId)) return null;
      const read = await store.read(function* (db, t) {
        const [found] = yield* q(
          db
            .select({
              record: t.records,
              organisationName: t.organisations.name,
              organisationSuspended: t.organisations.suspended,
              compromisedSince: t.signingKeys.compromisedSince,
              compromisedAt: t.signingKeys.compromisedAt,
            })
            .from(t.records)
            .leftJoin(t.organisations, eq(t.records.orgId, t.organisations.id))
            .leftJoin(t.signingKeys, eq(t.records.signerFingerprint, t.signingKeys.fingerprint))
            .where(eq(t.records.id, recordId)),
        );
        if (found === undefined || found.compromisedSince === null || found.compromisedAt === null) return { found, compromise: null };
        // The signer key declared compromised: revoked from its key_compromise message's consensus time once anchored.
        const lt = t.ledgerTransactions;
        const [message] = yield* q(
          db
            .select({ consensusAt: lt.consensusAt })
            .from(lt)
            .where(and(eq(lt.keyFingerprint, found.record.signerFingerprint), eq(lt.kind, "key_compromise"), eq(lt.state, "anchored")))
            .limit(1),
        );
        return { found, compromise: keyCompromise(found.compromisedSince, found.compromisedAt, message?.consensusAt ?? null) };
      });
      const found = read.found;
      if (found === undefined || found.record.anchorState === "abandoned") return null;
      const r = found.record;
      const revocation = revocationOf({ revoked_at: r.revokedAt, revocation_reason: r.revocationReason, signed_at_ms: r.signedAtMs }, read.compromise);
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
        revocation: revocation === null ? null : { reason: revocation.reason, revokedAt: rfc3339Ms(revocation.revokedAtMs) },
      };
    },
  };
}

export type RecordViews = ReturnType<typeof recordViews>;
