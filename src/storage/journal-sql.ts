/**
 * The anchor journal's conditions that both engines' drivers state in the same SQL
 * (storage/sqlite/journal.ts, storage/postgres/journal.ts): plain text, no imports, so that
 * either driver may load it.
 */

/**
 * Whether the record message `r` (the alias of the inner row) is sealed with a seal key a seal
 * rotation has retired (`signing_keys.retired_at`): its record, by primary key, names the seal.
 */
const SEALED_WITH_RETIRED_SEAL = `EXISTS (SELECT 1 FROM records s JOIN signing_keys sk ON sk.fingerprint = s.seal_fingerprint
        WHERE s.id = r.record_id AND sk.retired_at IS NOT NULL)`;

/**
 * Whether organisation `o` (the outer row) still has an unfinished (pending or accepted) record
 * message that must land before its current key's next announcement (docs/signing.md "Key
 * lifecycle"): one signed with one of its keys other than its current one (a key rotation), or
 * one signed with its current key and sealed with a seal key a seal rotation retired. That
 * announcement is not queued, so not submitted, until every such message has settled (anchored
 * or abandoned): each then lands before the announcement that ends its pair's window, and every
 * message of the new pair after it. A record message names its key (`key_fingerprint`); an
 * organisation's keys are those whose purpose is `org:<id>` (a person's messages are held back
 * for their own announcement, `PERSON_OLDER_MESSAGES_UNSETTLED`).
 * A row written before record messages named their key (NULL) counts as older once the current
 * key replaced another; it waits for the current key's announcement, so the two wait for each
 * other until its validity window abandons it (minutes): never a message outside its window.
 * Evaluated only for an organisation whose current key lacks its announcement: rare.
 */
export const OLDER_KEY_MESSAGES_UNSETTLED = `EXISTS (SELECT 1 FROM ledger_transactions r
    WHERE r.org_id = o.id AND r.kind = 'record_message' AND r.state IN ('pending', 'accepted')
      AND ((r.key_fingerprint IS NULL AND EXISTS (SELECT 1 FROM signing_keys c WHERE c.fingerprint = o.system_key_fingerprint AND c.replaces IS NOT NULL))
        OR (r.key_fingerprint <> o.system_key_fingerprint
            AND EXISTS (SELECT 1 FROM signing_keys k WHERE k.fingerprint = r.key_fingerprint AND k.purpose = 'org:' || o.id))
        OR ((r.key_fingerprint IS NULL OR r.key_fingerprint = o.system_key_fingerprint) AND ${SEALED_WITH_RETIRED_SEAL})))`;

/**
 * The same for person `p` (the outer row of `persons`): an unfinished record message signed with
 * one of the person's keys other than their current one (re-enrolment), or with their current
 * key and sealed with a retired seal key. Their current key's announcement with the current seal
 * key waits for it.
 */
export const PERSON_OLDER_MESSAGES_UNSETTLED = `EXISTS (SELECT 1 FROM ledger_transactions r JOIN signing_keys k ON k.fingerprint = r.key_fingerprint
    WHERE r.org_id = p.org_id AND r.kind = 'record_message' AND r.state IN ('pending', 'accepted') AND k.purpose = 'person:' || p.id
      AND (r.key_fingerprint <> p.key_fingerprint OR ${SEALED_WITH_RETIRED_SEAL}))`;

/** A condition on the seal key `cs`: it is the installation's current one (a seal rotation has not retired it). */
export const IS_CURRENT_SEAL = "cs.purpose = 'service-seal' AND cs.retired_at IS NULL";

/** The installation's current seal key: the one a seal rotation has not retired (at most one). */
const CURRENT_SEAL = `(SELECT cs.fingerprint FROM signing_keys cs WHERE ${IS_CURRENT_SEAL})`;

/**
 * Persons with a key, in an organisation with a topic, whose current key has no live
 * announcement naming the current seal key: re-enrolled persons, and every person after a seal
 * rotation. Held ones (`PERSON_OLDER_MESSAGES_UNSETTLED`) are listed too; queueing them is
 * refused until their older messages have settled. A scan of the persons with a key, each probing
 * the partial unique index by organisation and key; the journal runs it only when the change
 * counter moved since it last found none (a rotation, an enrolment raise it).
 */
export const WANTING_PERSON_ANNOUNCEMENT = `SELECT p.id AS id FROM persons p JOIN organisations o ON o.id = p.org_id
  WHERE p.key_fingerprint IS NOT NULL AND o.topic_id IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM ledger_transactions a
                    WHERE a.org_id = o.id AND a.key_fingerprint = p.key_fingerprint AND a.kind = 'key_announcement' AND a.state <> 'abandoned'
                      AND a.seal_fingerprint = ${CURRENT_SEAL})`;

/**
 * Organisations with a topic whose current key has no live announcement at the organisation's
 * current announcement generation, and no older key's record message unsettled
 * (`OLDER_KEY_MESSAGES_UNSETTLED`): a scan of the organisations (as topic provisioning's), each
 * probing the partial unique index by organisation, key and generation. Exported for the plan test.
 */
export const WANTING_ANNOUNCEMENT = `SELECT o.id AS id FROM organisations o
  WHERE o.topic_id IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM ledger_transactions a
                    WHERE a.org_id = o.id AND a.key_fingerprint = o.system_key_fingerprint AND a.announcement_generation = o.announcement_generation
                      AND a.kind = 'key_announcement' AND a.state <> 'abandoned')
    AND NOT ${OLDER_KEY_MESSAGES_UNSETTLED}`;

/**
 * A record message, or a batch of record messages (whose row names their key and seal key; a
 * batch of revocations names none and never waits), may go once its key is announced and anchored
 * together with the seal key that sealed its record (docs/anchoring.md "Key announcements"): after a seal rotation, a record
 * sealed with the new seal key waits for its key's announcement naming that seal key. A row that
 * does not name its key (written before messages did) waits for the organisation's current key. Evaluated per candidate row of `due` (`ANNOUNCED_SQL`, which names the outer
 * table `ledger_transactions`): one primary-key read of the organisation and one probe of
 * the partial unique index `ledger_transactions_one_announcement`, whose WHERE terms are
 * repeated word for word so that SQLite may use it; `a.state = 'anchored'` then filters the one
 * live row. Exported for test/anchoring/journal-engines.test.ts, which checks the plan on SQLite.
 */
export const ANNOUNCED = `((ledger_transactions.kind <> 'record_message' AND ledger_transactions.kind <> 'batch_message')
  OR (ledger_transactions.kind = 'batch_message' AND (ledger_transactions.key_fingerprint IS NULL OR EXISTS (
    SELECT 1 FROM ledger_transactions a
    WHERE a.org_id = ledger_transactions.org_id AND a.key_fingerprint = ledger_transactions.key_fingerprint AND a.kind = 'key_announcement' AND a.state <> 'abandoned'
      AND a.state = 'anchored' AND a.seal_fingerprint = ledger_transactions.seal_fingerprint)))
  OR (ledger_transactions.kind = 'record_message' AND ledger_transactions.key_fingerprint IS NULL AND EXISTS (
    SELECT 1 FROM organisations o JOIN ledger_transactions a
      ON a.org_id = o.id AND a.key_fingerprint = o.system_key_fingerprint AND a.kind = 'key_announcement' AND a.state <> 'abandoned'
    WHERE o.id = ledger_transactions.org_id AND a.state = 'anchored'))
  OR (ledger_transactions.kind = 'record_message' AND ledger_transactions.key_fingerprint IS NOT NULL AND EXISTS (
    SELECT 1 FROM ledger_transactions a JOIN records s ON s.id = ledger_transactions.record_id
    WHERE a.org_id = ledger_transactions.org_id AND a.key_fingerprint = ledger_transactions.key_fingerprint AND a.kind = 'key_announcement' AND a.state <> 'abandoned'
      AND a.state = 'anchored' AND a.seal_fingerprint = s.seal_fingerprint)))`;


/**
 * The keys declared compromised, an organisation's (`org:<id>`) or a person's (`person:<id>`, with
 * the person's id), whose organisation has a topic and that have no live `key_compromise` row
 * (the partial unique index `ledger_transactions_one_compromise`, probed by key). A scan of the
 * signing keys: the journal runs it only when the change counter moved since it last found none
 * (a declaration raises it).
 */
export const WANTING_COMPROMISE = `SELECT o.id AS org_id, CAST(NULL AS TEXT) AS person_id, k.fingerprint AS fingerprint, k.compromised_since AS since
  FROM signing_keys k JOIN organisations o ON k.purpose = 'org:' || o.id
  WHERE k.compromised_at IS NOT NULL AND k.compromised_since IS NOT NULL AND o.topic_id IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM ledger_transactions c
                    WHERE c.key_fingerprint = k.fingerprint AND c.kind = 'key_compromise' AND c.state <> 'abandoned')
  UNION ALL
  SELECT o.id AS org_id, p.id AS person_id, k.fingerprint AS fingerprint, k.compromised_since AS since
  FROM signing_keys k JOIN persons p ON k.purpose = 'person:' || p.id JOIN organisations o ON o.id = p.org_id
  WHERE k.compromised_at IS NOT NULL AND k.compromised_since IS NOT NULL AND o.topic_id IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM ledger_transactions c
                    WHERE c.key_fingerprint = k.fingerprint AND c.kind = 'key_compromise' AND c.state <> 'abandoned')`;

/** The change counter (migration 0010): what `keysWantingCompromiseMessage` compares with its last empty answer. */
export const CHANGE_COUNTER = "SELECT value FROM change_counter WHERE id = 1";

/** Raises the change counter through the signing key's own trigger: a compromise message anchored changes what verification answers (its revocation time). */
export const TOUCH_COMPROMISED_KEY = "UPDATE signing_keys SET compromised_at = compromised_at WHERE fingerprint = ";

/** The organisation's (the parameter) next batch sequence: one more than its highest. */
export const NEXT_BATCH_SEQUENCE = `SELECT coalesce(max(batch_sequence), 0) + 1 AS next FROM ledger_transactions WHERE org_id = ? AND kind = 'batch_message'`;
