/**
 * Authenticating documents as an organisation, and revoking that authentication
 * (docs/records.md §1 and §2); a person's own records (docs/persons.md "Person-signed records").
 * The records service is composed here of its parts: creation (create.ts, person-signed.ts),
 * revocation (revoke.ts) and what readers see (views.ts).
 *
 * What callers may assume:
 * - `create` resolves only once the record and its `pending` ledger message are committed
 *   together (on SQLite one IMMEDIATE transaction, `synchronous=FULL`): a 201 built from it is durable.
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
import type { Signer } from "../crypto/index.ts";
import type { Clock } from "../lib/clock.ts";
import type { Store } from "../storage/store.ts";
import { orgSignedCreation, recordSealing } from "./create.ts";
import type { RecordLedger } from "./ledger.ts";
import { personSignedCreation } from "./person-signed.ts";
import { recordRevocation } from "./revoke.ts";
import { recordViews } from "./views.ts";
import type { RecordWriter } from "./write-queue.ts";

export interface RecordsDeps {
  /** The database, on either engine (storage/store.ts): the records' reads. */
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
   * Where record writes run (write-queue.ts over the `RecordWrites` port: on SQLite the
   * connection's shared group commit, on PostgreSQL READ COMMITTED transactions).
   */
  readonly writes: RecordWriter;
}

export function createRecords(deps: RecordsDeps) {
  const { store, signer, clock, ledger, writes } = deps;
  const views = recordViews({ store, ledger, publicUrl: deps.publicUrl });
  const creation = { store, writes, clock, ledger, sealing: recordSealing({ store, signer, clock, ledger }), view: views.view };
  const revocation = recordRevocation({ store, writes, clock, ledger });
  return {
    create: orgSignedCreation(creation),
    revoke: revocation.revoke,
    revokePersonSigned: revocation.revokePersonSigned,
    createPersonSigned: personSignedCreation(creation),
    personSigned: views.personSigned,
    publicRecord: views.publicRecord,
  };
}

export type Records = ReturnType<typeof createRecords>;
