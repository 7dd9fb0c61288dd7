/**
 * The person application behind /enrol and /sign (decisions §10): enrolment with a passkey,
 * sessions, person-signed records and their revocation. HTTP-free: src/http/routes/app.ts maps
 * requests onto it. See docs/persons.md.
 *
 * What callers may assume:
 * - Every challenge is single-use and lives five minutes; it is deleted in the transaction that
 *   accepts its answer, so a replayed answer (or two racing ones) is accepted at most once.
 * - Enrolment is one IMMEDIATE transaction: the token is used, the passkey registered, the
 *   person's ML-DSA-65 key stored sealed under the master key, the key's announcement queued on
 *   the organisation's topic (by fingerprint and person id only), the audit row written, and a
 *   session opened; or none of it.
 * - A signature challenge is SHA-256 of the exact record payload (docs/signing.md §3) the person's
 *   key will sign: record id, hash, time and key are fixed when the options are made and the
 *   record is created with exactly those.
 * - Session tokens and enrolment tokens are stored only as SHA-256 digests; a session ends 15
 *   minutes after its last use.
 * - A suspended person cannot sign in, sign or enrol (403 FORBIDDEN); their records still verify.
 */
import { createHash, randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { encodeRecordPayload, type Signer } from "../crypto/index.ts";
import type { Clock } from "../lib/clock.ts";
import { DomainError } from "../lib/errors.ts";
import { rfc3339Ms } from "../lib/formats.ts";
import type { Db } from "../storage/db.ts";
import { appSessions, passkeys, persons, signingKeys } from "../storage/schema.ts";
import { PASSKEY_USED, TAKE_CHALLENGE } from "../storage/statements.ts";
import { changes, q } from "../storage/store.ts";
import { writeAudit } from "../keys/audit.ts";
import type { Enrolments, Person } from "../keys/persons.ts";
import { insertPendingPersonKeyAnnouncement } from "../anchoring/queue.ts";
import type { RecordLedger } from "../records/ledger.ts";
import { encodePersonKeyAnnouncementMessage } from "../records/messages.ts";
import { ensureSealKey } from "../records/seal-key.ts";
import type { Records, RecordView } from "../records/service.ts";
import type { WriteQueue } from "../records/write-queue.ts";
import { parseRecordRequest, type RevocationReason } from "../records/validate.ts";
import { AnswerRefused, CHALLENGE_TTL_MS, challengeOf, type StoredPasskey, type WebAuthn } from "./webauthn.ts";

/** A session ends this long after its last use (decisions §10). */
export const SESSION_IDLE_MS = 15 * 60 * 1000;
/** A session's last use is written at most this often, so reading pages does not write every time. */
const TOUCH_EVERY_MS = 30 * 1000;
/** Live challenges kept per subject (a person's signatures in progress, an enrolment link's). */
export const LIVE_PER_SUBJECT = 10;
/** At most this many of a person's records are listed. */
export const LISTED_RECORDS = 100;

export interface SignedInPerson {
  readonly id: string;
  readonly name: string;
  readonly organisation: string;
  readonly orgId: string;
  readonly suspended: boolean;
  readonly keyFingerprint: Uint8Array | null;
}

/** What the pages show of the signed-in person. */
export function personView(p: SignedInPerson): { id: string; name: string; organisation: string } {
  return { id: p.id, name: p.name, organisation: p.organisation };
}

export interface PersonAppDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly signer: Signer;
  readonly enrolments: Enrolments;
  readonly records: Pick<Records, "createPersonSigned" | "revokePersonSigned" | "personSigned">;
  readonly ledger: Pick<RecordLedger, "newTransactionId" | "wake">;
  readonly webauthn: WebAuthn;
  /** The group-commit queue record creation uses: challenges, sign-ins and signatures share its fsyncs. */
  readonly writes: WriteQueue;
  /** The public URL, for the signing page's address. */
  readonly publicUrl: () => string;
}

const digest = (token: string): Buffer => createHash("sha256").update(token, "utf8").digest();

const suspendedPerson = () => new DomainError("FORBIDDEN", "An administrator has suspended you: you cannot sign. What you signed before still verifies.");

export function createPersonApp(deps: PersonAppDeps) {
  const { db, clock, signer, records, ledger, webauthn, writes } = deps;
  const people = deps.enrolments;
  // The signing path's statements, prepared once on the connection (drizzle builds and prepares a
  // statement per call: about 0.1 ms each, a dozen per signature). On the same connection as
  // drizzle's transactions and the write queue's, so inside them they join their transaction.
  const client = db.$client;
  const deleteChallenge = client.prepare<never, [string]>("DELETE FROM app_challenges WHERE challenge = ?");
  const deleteExpiredChallenges = client.prepare<never, [number]>("DELETE FROM app_challenges WHERE expires_at < ?");
  // Of one subject's live challenges (a person's signatures, an enrolment link's), only the newest
  // LIVE_PER_SUBJECT are kept: someone holding a session cannot fill the table.
  const trimSubject = client.prepare<never, [string, string, string, string, number]>(
    `DELETE FROM app_challenges WHERE purpose = ? AND subject = ? AND challenge NOT IN (
       SELECT challenge FROM app_challenges WHERE purpose = ? AND subject = ? ORDER BY expires_at DESC LIMIT ?)`,
  );
  const deleteIdleSessions = client.prepare<never, [number]>("DELETE FROM app_sessions WHERE last_seen_at <= ?");
  const insertChallenge = client.prepare<never, [string, string, string | null, string | null, number]>(
    "INSERT INTO app_challenges (challenge, purpose, subject, payload, expires_at) VALUES (?, ?, ?, ?, ?)",
  );
  const challengeByValue = client.prepare<{ purpose: string; subject: string | null; payload: string | null; expires_at: number }, [string]>(
    "SELECT purpose, subject, payload, expires_at FROM app_challenges WHERE challenge = ?",
  );
  type PasskeyRow = { credential_id: string; person_id: string; public_key: Uint8Array; counter: number; transports: string | null };
  const passkeyById = client.prepare<PasskeyRow, [string]>("SELECT credential_id, person_id, public_key, counter, transports FROM passkeys WHERE credential_id = ?");
  const passkeysByPerson = client.prepare<PasskeyRow, [string]>("SELECT credential_id, person_id, public_key, counter, transports FROM passkeys WHERE person_id = ? ORDER BY created_at");
  const updateCounter = client.prepare<never, [number, number, string]>("UPDATE passkeys SET counter = ?, last_used_at = ? WHERE credential_id = ?");
  const personById = client.prepare<{ id: string; name: string; org_id: string; suspended: number; key_fingerprint: Uint8Array | null; organisation: string }, [string]>(
    `SELECT p.id, p.name, p.org_id, p.suspended, p.key_fingerprint, o.name AS organisation
       FROM persons p JOIN organisations o ON o.id = p.org_id WHERE p.id = ?`,
  );
  const orgById = client.prepare<{ suspended: number; addon: number; topic_id: string | null }, [string]>("SELECT suspended, addon, topic_id FROM organisations WHERE id = ?");
  const sessionByDigest = client.prepare<{ person_id: string; last_seen_at: number }, [Uint8Array, number]>(
    "SELECT person_id, last_seen_at FROM app_sessions WHERE token_digest = ? AND last_seen_at > ?",
  );
  const touchSession = client.prepare<never, [number, Uint8Array]>("UPDATE app_sessions SET last_seen_at = ? WHERE token_digest = ?");

  /** A fresh 32-byte challenge stored for `purpose`; expired ones are cleared on the way. */
  async function issueChallenge(purpose: "enrol" | "session" | "signature", subject: string | null, payload: string | null, challenge: Uint8Array = randomBytes(32)): Promise<Uint8Array> {
    const now = clock.now();
    await writes.run(() => {
      deleteExpiredChallenges.run(now);
      insertChallenge.run(Buffer.from(challenge).toString("base64url"), purpose, subject, payload, now + CHALLENGE_TTL_MS);
      if (subject !== null) trimSubject.run(purpose, subject, purpose, subject, LIVE_PER_SUBJECT);
    });
    return challenge;
  }

  /** The unexpired challenge `value` issued for `purpose`, or a 401. */
  function issuedChallenge(value: string, purpose: "enrol" | "session" | "signature"): { subject: string | null; payload: string | null } {
    const row = challengeByValue.get(value);
    if (row === null || row.purpose !== purpose || row.expires_at <= clock.now()) {
      throw new AnswerRefused("The passkey's answer is for a challenge this service did not issue, has already accepted, or that has expired: start again.");
    }
    return row;
  }

  /** Deletes the challenge, inside the caller's transaction (same connection); false when another answer took it first (a replay). */
  function consume(value: string): boolean {
    return deleteChallenge.run(value).changes === 1;
  }

  const passkeyOf = (p: PasskeyRow): StoredPasskey & { personId: string } => ({
    credentialId: p.credential_id,
    personId: p.person_id,
    publicKey: new Uint8Array(p.public_key),
    counter: p.counter,
    transports: p.transports === null ? [] : p.transports.split(" "),
  });

  function passkeysOf(personId: string): StoredPasskey[] {
    return passkeysByPerson.all(personId).map(passkeyOf);
  }

  /** The passkey an answer names (its `id`), or a 401. */
  function passkeyNamed(body: Record<string, unknown>): StoredPasskey & { personId: string } {
    const row = typeof body.id === "string" ? passkeyById.get(body.id) : null;
    if (row === null) throw new AnswerRefused("This passkey is not registered with this service. Enrol first with the link your administrator gave you.");
    return passkeyOf(row);
  }

  function signedIn(personId: string): SignedInPerson {
    const row = personById.get(personId);
    if (row === null) throw new Error(`person ${personId} does not exist`);
    return { id: row.id, name: row.name, organisation: row.organisation, orgId: row.org_id, suspended: row.suspended !== 0, keyFingerprint: row.key_fingerprint === null ? null : new Uint8Array(row.key_fingerprint) };
  }

  /** Records need the add-on and a topic, as POST /v1/records does. */
  function assertOrganisationCanSign(orgId: string): { topicId: string } {
    const org = orgById.get(orgId);
    if (org === null) throw new Error(`organisation ${orgId} does not exist`);
    if (org.suspended !== 0) throw new DomainError("ORGANISATION_SUSPENDED", "An administrator has suspended your organisation: nobody in it can sign. What was signed before still verifies.");
    if (org.addon === 0) throw new DomainError("ADDON_REQUIRED", "Your organisation does not hold the authentication add-on, which signing needs. Ask your administrator.");
    if (org.topic_id === null) throw new DomainError("SERVICE_UNAVAILABLE", "Your organisation's ledger topic is being created; try again in a minute.", undefined, 10);
    return { topicId: org.topic_id };
  }

  /** A new session for the person (ended ones are deleted on the way); its token, for the cookie. */
  function openSession(tx: Pick<Db, "insert">, personId: string, now: number): string {
    deleteIdleSessions.run(now - SESSION_IDLE_MS);
    const token = randomBytes(32).toString("base64url");
    tx.insert(appSessions).values({ tokenDigest: digest(token), personId, createdAt: now, lastSeenAt: now }).run();
    return token;
  }

  return {
    // ---- enrolment -------------------------------------------------------------------------

    /** POST /app/enrol/{token}/options. Token refusals: EnrolmentTokenError (404 unknown, 403 otherwise). */
    async enrolOptions(token: string) {
      const { person, organisation } = people.peekEnrolment(token);
      assertOrganisationCanSign(organisation.id);
      const challenge = await issueChallenge("enrol", digest(token).toString("hex"), null);
      return webauthn.registrationOptions({ challenge, personId: person.id, userName: person.email, displayName: `${person.name} (${organisation.name})`, exclude: [] });
    },

    /**
     * POST /app/enrol/{token}: registers the passkey and creates the person's key (see the
     * header). Returns the session token to set as the cookie.
     */
    async enrol(token: string, body: Record<string, unknown>): Promise<{ person: SignedInPerson; keyFingerprint: string; sessionToken: string }> {
      const { person, organisation } = people.peekEnrolment(token);
      const value = challengeOf(body, "registration");
      const challenge = issuedChallenge(value, "enrol");
      if (challenge.subject !== digest(token).toString("hex")) throw new AnswerRefused("The passkey's answer is for another enrolment link's challenge.");
      const { topicId } = assertOrganisationCanSign(organisation.id);
      const passkey = await webauthn.verifyRegistration(body, value);
      // CPU work outside the write lock: the key, and the seal key the announcement names.
      const key = signer.generateKey(`person:${person.id}`);
      const seal = ensureSealKey({ db, signer, clock });
      const message = encodePersonKeyAnnouncementMessage({ orgId: organisation.id, personId: person.id, algorithm: key.algorithm, keyFingerprint: key.fingerprint, sealKeyFingerprint: seal.fingerprint });
      const reserved = ledger.newTransactionId();
      const result = db.transaction((tx) => {
        if (!consume(value)) throw new AnswerRefused("This passkey answer has already been used: start again.");
        const now = clock.now();
        people.redeemEnrolmentIn(tx, token, now);
        if (tx.select({ id: passkeys.credentialId }).from(passkeys).where(eq(passkeys.credentialId, passkey.credentialId)).get() !== undefined) {
          throw new AnswerRefused("This passkey is already registered.");
        }
        const fingerprint = Buffer.from(key.fingerprint);
        tx.insert(signingKeys).values({ fingerprint, algorithm: key.algorithm, publicKey: Buffer.from(key.publicKey), purpose: key.purpose, sealedSeed: Buffer.from(key.sealedSeed), createdAt: now }).run();
        tx.insert(passkeys).values({ credentialId: passkey.credentialId, personId: person.id, publicKey: Buffer.from(passkey.publicKey), counter: passkey.counter, transports: passkey.transports.join(" ") || null, createdAt: now, lastUsedAt: null }).run();
        tx.update(persons).set({ keyFingerprint: fingerprint, enrolledAt: now }).where(eq(persons.id, person.id)).run();
        insertPendingPersonKeyAnnouncement(tx, { ...reserved, orgId: organisation.id, topicId, message, keyFingerprint: key.fingerprint, now });
        const after: Person = { ...person, keyFingerprint: fingerprint.toString("hex"), enrolledAt: now };
        writeAudit(tx, now, { actor: `person:${person.id}`, action: "person.enrol", subjectType: "person", subjectId: person.id, before: person, after });
        return { sessionToken: openSession(tx, person.id, now), keyFingerprint: fingerprint.toString("hex") };
      }, { behavior: "immediate" });
      ledger.wake();
      return { person: signedIn(person.id), ...result };
    },

    // ---- sessions --------------------------------------------------------------------------

    /** POST /app/session/options: any of this service's passkeys may answer (discoverable credentials). */
    async sessionOptions() {
      return webauthn.authenticationOptions({ challenge: await issueChallenge("session", null, null), allow: [] });
    },

    /** POST /app/session: the person whose passkey answered, and their new session token. */
    async signIn(body: Record<string, unknown>): Promise<{ person: SignedInPerson; sessionToken: string }> {
      const value = challengeOf(body, "assertion");
      issuedChallenge(value, "session");
      const passkey = passkeyNamed(body);
      const counter = await webauthn.verifyAssertion(body, value, passkey);
      const person = signedIn(passkey.personId);
      if (person.suspended) throw suspendedPerson();
      const sessionToken = await writes.run((tx) => {
        if (!consume(value)) throw new AnswerRefused("This passkey answer has already been used: sign in again.");
        const now = clock.now();
        updateCounter.run(counter, now, passkey.credentialId);
        return openSession(tx, person.id, now);
      });
      return { person, sessionToken };
    },

    /** The signed-in person of a session cookie's value, or 401 (none, unknown or idle for 15 minutes). */
    session(token: string | null): SignedInPerson {
      const refused = () => new DomainError("UNAUTHENTICATED", "You are not signed in, or your session ended after 15 minutes without use. Sign in with your passkey.");
      if (token === null || !/^[A-Za-z0-9_-]{43}$/.test(token)) throw refused();
      const now = clock.now();
      const key = digest(token);
      const row = sessionByDigest.get(key, now - SESSION_IDLE_MS);
      if (row === null) throw refused();
      if (now - row.last_seen_at >= TOUCH_EVERY_MS) touchSession.run(now, key);
      return signedIn(row.person_id);
    },

    /** DELETE /app/session: ends the session (nothing to do for an unknown one). */
    signOut(token: string | null): void {
      if (token !== null) db.delete(appSessions).where(eq(appSessions.tokenDigest, digest(token))).run();
    },

    // ---- signing ---------------------------------------------------------------------------

    /** POST /app/signatures/options for the signed-in person. */
    async signatureOptions(person: SignedInPerson, body: Record<string, unknown>) {
      const { docHash, filename } = parseRecordRequest(body);
      if (person.suspended) throw suspendedPerson();
      if (person.keyFingerprint === null) throw new Error(`signed-in person ${person.id} has no key`);
      assertOrganisationCanSign(person.orgId);
      const recordId = Bun.randomUUIDv7();
      const signedAtMs = clock.now();
      const payload = encodeRecordPayload({ recordId, docHash, signedAtMs, signerKeyFingerprint: person.keyFingerprint });
      const challenge = createHash("sha256").update(payload).digest();
      await issueChallenge("signature", person.id, JSON.stringify({ recordId, docHash, signedAtMs, filename: filename ?? null }), challenge);
      const options = await webauthn.authenticationOptions({ challenge, allow: passkeysOf(person.id) });
      return {
        ...options,
        docverify: { recordId, originalDocHash: docHash, signedAt: rfc3339Ms(signedAtMs), payload: Buffer.from(payload).toString("base64url") },
      };
    },

    /** POST /app/signatures: `created` false when the person already has an active record for the hash. */
    async sign(person: SignedInPerson, body: Record<string, unknown>): Promise<{ created: boolean; record: RecordView }> {
      const value = challengeOf(body, "assertion");
      const challenge = issuedChallenge(value, "signature");
      if (challenge.subject !== person.id) throw new DomainError("FORBIDDEN", "This signature was prepared for another person than the one signed in.");
      const passkey = passkeyNamed(body);
      if (passkey.personId !== person.id) throw new DomainError("FORBIDDEN", "This passkey belongs to another person than the one signed in.");
      if (person.suspended) throw suspendedPerson();
      if (person.keyFingerprint === null) throw new Error(`signed-in person ${person.id} has no key`);
      const counter = await webauthn.verifyAssertion(body, value, passkey);
      const fields = JSON.parse(challenge.payload!) as { recordId: string; docHash: string; signedAtMs: number; filename: string | null };
      // The challenge is the payload's digest: rebuilt here, so what is signed is what was authorised.
      const payload = encodeRecordPayload({ recordId: fields.recordId, docHash: fields.docHash, signedAtMs: fields.signedAtMs, signerKeyFingerprint: person.keyFingerprint });
      if (createHash("sha256").update(payload).digest("base64url") !== value) throw new Error("a signature challenge does not commit to its payload");
      const usedAt = clock.now();
      return records.createPersonSigned({
        orgId: person.orgId,
        personName: person.name,
        personKey: person.keyFingerprint,
        recordId: fields.recordId,
        docHash: fields.docHash,
        signedAtMs: fields.signedAtMs,
        filename: fields.filename,
        // In the record's own transaction: a replayed answer finds its challenge gone and writes nothing.
        claim: function* () {
          if ((yield* q(changes(TAKE_CHALLENGE, value))) !== 1) throw new AnswerRefused("This passkey answer has already been used: sign again.");
          yield* q(changes(PASSKEY_USED, counter, usedAt, passkey.credentialId));
        },
      });
    },

    /** GET /app/records: the person's records, newest first. */
    async records(person: SignedInPerson) {
      if (person.keyFingerprint === null) return [];
      return (await records.personSigned(person.keyFingerprint, LISTED_RECORDS)).map(({ record, filename, revocation }) => ({
        recordId: record.recordId,
        originalDocHash: record.originalDocHash,
        filename,
        authenticatedAt: record.authenticatedAt,
        anchorState: record.anchorState,
        verifyUrl: record.verifyUrl,
        revocation,
      }));
    },

    /** POST /app/records/{id}/revoke: the person's own records only. */
    async revoke(person: SignedInPerson, recordId: string, reason: RevocationReason): Promise<{ recordId: string }> {
      if (person.keyFingerprint === null) throw new DomainError("NOT_REVOCABLE", "This record was not signed by you: you can revoke only your own.");
      return records.revokePersonSigned(person.keyFingerprint, recordId, reason);
    },
  };
}

export type PersonApp = ReturnType<typeof createPersonApp>;
