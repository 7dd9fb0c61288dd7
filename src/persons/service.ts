/**
 * The person application behind /enrol and /sign (docs/persons.md): enrolment with a passkey,
 * sessions, person-signed records and their revocation. HTTP-free: src/http/routes/persons.ts maps
 * requests onto it. See docs/persons.md.
 *
 * What callers may assume:
 * - Every challenge is single-use and lives five minutes; it is deleted in the transaction that
 *   accepts its answer, so a replayed answer (or two racing ones) is accepted at most once.
 * - Enrolment is one write operation (storage/store.ts), all or nothing: the token is used, the passkey registered, the
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
import {
  CHALLENGE_BY_VALUE,
  CURRENT_SEAL_KEY,
  DELETE_EXPIRED_CHALLENGES,
  DELETE_IDLE_SESSIONS,
  DELETE_SESSION,
  INSERT_CHALLENGE,
  INSERT_SESSION,
  ORG_SIGNING,
  PASSKEY_BY_ID,
  PASSKEY_USED,
  PASSKEYS_OF_PERSON,
  SESSION_BY_DIGEST,
  SIGNED_IN_PERSON,
  TAKE_CHALLENGE,
  TOUCH_SESSION,
  TRIM_SUBJECT_CHALLENGES,
  type PasskeyRow,
} from "../storage/statements.ts";
import { changes, firstRow, q, rows, type Op, type Store } from "../storage/store.ts";
import { insertSigningKey } from "../storage/signing-keys.ts";
import { audit } from "../keys/audit.ts";
import { refuseWhileAnnouncing } from "./person-keys.ts";
import type { Enrolments, Person } from "./persons.ts";
import { pendingPersonKeyAnnouncement } from "../anchoring/queue.ts";
import type { RecordLedger } from "../records/ledger.ts";
import { encodePersonKeyAnnouncementMessage } from "../records/messages.ts";
import { ensureSealKeyIn } from "../records/seal-key.ts";
import type { Records } from "../records/service.ts";
import type { RecordView } from "../records/views.ts";
import type { RecordWriter } from "../records/write-queue.ts";
import { parseRecordRequest, type RevocationReason } from "../records/validate.ts";
import { AnswerRefused, CHALLENGE_TTL_MS, challengeOf, type StoredPasskey, type WebAuthn } from "./webauthn.ts";

/** A session ends this long after its last use (docs/persons.md "The API behind the pages: /app"). */
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
  /** Their key was declared compromised (person-keys.ts): it signs nothing more until they re-enrol. */
  readonly keyCompromised: boolean;
}

/** What the pages show of the signed-in person. */
export function personView(p: SignedInPerson): { id: string; name: string; organisation: string } {
  return { id: p.id, name: p.name, organisation: p.organisation };
}

export interface PersonAppDeps {
  /** The database, on either engine (storage/store.ts). */
  readonly store: Store;
  readonly clock: Clock;
  readonly signer: Signer;
  readonly enrolments: Enrolments;
  readonly records: Pick<Records, "createPersonSigned" | "revokePersonSigned" | "personSigned">;
  readonly ledger: Pick<RecordLedger, "newTransactionId" | "wake">;
  readonly webauthn: WebAuthn;
  /** Where writes run: on SQLite the group-commit queue record creation uses (challenges, sign-ins and signatures share its fsyncs). */
  readonly writes: RecordWriter;
  /** The public URL, for the signing page's address. */
  readonly publicUrl: () => string;
}

const digest = (token: string): Buffer => createHash("sha256").update(token, "utf8").digest();

const compromisedKey = () =>
  new DomainError("FORBIDDEN", "Your key was declared compromised: it signs nothing more. Ask your administrator for a re-enrolment link, which gives you a new passkey and key.");

const suspendedPerson = () => new DomainError("FORBIDDEN", "An administrator has suspended you: you cannot sign. What you signed before still verifies.");

const passkeyOf = (p: PasskeyRow): StoredPasskey & { personId: string } => ({
  credentialId: p.credential_id,
  personId: p.person_id,
  publicKey: new Uint8Array(p.public_key),
  counter: p.counter,
  transports: p.transports === null ? [] : p.transports.split(" "),
});

export function createPersonApp(deps: PersonAppDeps) {
  const { store, clock, signer, records, ledger, webauthn, writes } = deps;
  const people = deps.enrolments;

  /** A fresh 32-byte challenge stored for `purpose`; expired ones are cleared on the way. */
  async function issueChallenge(purpose: "enrol" | "session" | "signature", subject: string | null, payload: string | null, challenge: Uint8Array = randomBytes(32)): Promise<Uint8Array> {
    const now = clock.now();
    await writes.write(function* () {
      yield* q(changes(DELETE_EXPIRED_CHALLENGES, now));
      yield* q(changes(INSERT_CHALLENGE, Buffer.from(challenge).toString("base64url"), purpose, subject, payload, now + CHALLENGE_TTL_MS));
      // Of one subject's live challenges (a person's signatures, an enrolment link's), only the
      // newest LIVE_PER_SUBJECT are kept: someone holding a session cannot fill the table.
      if (subject !== null) yield* q(changes(TRIM_SUBJECT_CHALLENGES, purpose, subject, LIVE_PER_SUBJECT));
    });
    return challenge;
  }

  /** The unexpired challenge `value` issued for `purpose`, or a 401. */
  async function issuedChallenge(value: string, purpose: "enrol" | "session" | "signature"): Promise<{ subject: string | null; payload: string | null }> {
    const row = await store.read(() => q(firstRow(CHALLENGE_BY_VALUE, value)));
    if (row === undefined || row.purpose !== purpose || row.expires_at <= clock.now()) {
      throw new AnswerRefused("The passkey's answer is for a challenge this service did not issue, has already accepted, or that has expired: start again.");
    }
    return row;
  }

  /** Deletes the challenge, a step of the caller's write; false when another answer took it first (a replay). */
  function* consume(value: string): Op<boolean> {
    return (yield* q(changes(TAKE_CHALLENGE, value))) === 1;
  }

  async function passkeysOf(personId: string): Promise<StoredPasskey[]> {
    return (await store.read(() => q(rows(PASSKEYS_OF_PERSON, personId)))).map(passkeyOf);
  }

  /** The passkey an answer names (its `id`), or a 401. */
  async function passkeyNamed(body: Record<string, unknown>): Promise<StoredPasskey & { personId: string }> {
    const row = typeof body.id === "string" ? await store.read(() => q(firstRow(PASSKEY_BY_ID, body.id as string))) : undefined;
    if (row === undefined) throw new AnswerRefused("This passkey is not registered with this service. Enrol first with the link your administrator gave you.");
    return passkeyOf(row);
  }

  function* signedInStep(personId: string): Op<SignedInPerson> {
    const row = yield* q(firstRow(SIGNED_IN_PERSON, personId));
    if (row === undefined) throw new Error(`person ${personId} does not exist`);
    return { id: row.id, name: row.name, organisation: row.organisation, orgId: row.org_id, suspended: row.suspended !== 0, keyFingerprint: row.key_fingerprint === null ? null : new Uint8Array(row.key_fingerprint), keyCompromised: row.key_compromised !== 0 };
  }

  const signedIn = (personId: string): Promise<SignedInPerson> => store.read(() => signedInStep(personId));

  /** Records need the add-on and a topic, as POST /v1/records does. The topic, and the domain a person's key announcement carries. */
  async function assertOrganisationCanSign(orgId: string): Promise<{ topicId: string; domain: string | null }> {
    const org = await store.read(() => q(firstRow(ORG_SIGNING, orgId)));
    if (org === undefined) throw new Error(`organisation ${orgId} does not exist`);
    if (org.suspended !== 0) throw new DomainError("ORGANISATION_SUSPENDED", "An administrator has suspended your organisation: nobody in it can sign. What was signed before still verifies.");
    if (org.addon === 0) throw new DomainError("ADDON_REQUIRED", "Your organisation does not hold the authentication add-on, which signing needs. Ask your administrator.");
    if (org.topic_id === null) throw new DomainError("SERVICE_UNAVAILABLE", "Your organisation's ledger topic is being created; try again in a minute.", undefined, 10);
    return { topicId: org.topic_id, domain: org.domain };
  }

  /** A new session for the person (ended ones are deleted on the way): a step of the caller's write. */
  function* openSession(personId: string, now: number, token: string): Op<string> {
    yield* q(changes(DELETE_IDLE_SESSIONS, now - SESSION_IDLE_MS));
    yield* q(changes(INSERT_SESSION, digest(token), personId, now));
    return token;
  }

  return {
    // ---- enrolment -------------------------------------------------------------------------

    /** POST /app/enrol/{token}/options. Token refusals: EnrolmentTokenError (404 unknown, 403 otherwise). */
    async enrolOptions(token: string) {
      const { person, organisation } = await people.peekEnrolment(token);
      await assertOrganisationCanSign(organisation.id);
      const challenge = await issueChallenge("enrol", digest(token).toString("hex"), null);
      return webauthn.registrationOptions({ challenge, personId: person.id, userName: person.email, displayName: `${person.name} (${organisation.name})`, exclude: [] });
    },

    /**
     * POST /app/enrol/{token}: registers the passkey and creates the person's key (see the
     * header). Returns the session token to set as the cookie.
     */
    async enrol(token: string, body: Record<string, unknown>): Promise<{ person: SignedInPerson; keyFingerprint: string; sessionToken: string }> {
      const { person, organisation } = await people.peekEnrolment(token);
      const value = challengeOf(body, "registration");
      const challenge = await issuedChallenge(value, "enrol");
      if (challenge.subject !== digest(token).toString("hex")) throw new AnswerRefused("The passkey's answer is for another enrolment link's challenge.");
      const { topicId, domain } = await assertOrganisationCanSign(organisation.id);
      const passkey = await webauthn.verifyRegistration(body, value);
      // CPU work outside the write lock: the key, and the seal key the announcement names.
      const key = signer.generateKey(`person:${person.id}`);
      const seal = await ensureSealKeyIn({ store, signer, clock });
      // The organisation's domain as it is now: a person's key is not announced again when it changes.
      const message = encodePersonKeyAnnouncementMessage({ orgId: organisation.id, personId: person.id, domain, algorithm: key.algorithm, keyFingerprint: key.fingerprint, sealKeyFingerprint: seal.fingerprint });
      const reserved = ledger.newTransactionId();
      const now = clock.now();
      const sessionToken = randomBytes(32).toString("base64url");
      const fingerprint = Buffer.from(key.fingerprint);
      // One write: the token used, the passkey and key stored, the announcement queued, the audit
      // row and the session; or none of it.
      await store.write(function* (tx, t) {
        if (!(yield* consume(value))) throw new AnswerRefused("This passkey answer has already been used: start again.");
        const current = yield* people.redeemStep(tx, t, token, now);
        const old = current.keyFingerprint === null ? null : Buffer.from(current.keyFingerprint, "hex");
        if (old !== null) yield* refuseWhileAnnouncing(tx, t, current, old);
        if ((yield* q(firstRow(PASSKEY_BY_ID, passkey.credentialId))) !== undefined) throw new AnswerRefused("This passkey is already registered.");
        yield* insertSigningKey(tx, t, key, now, old);
        if (old !== null) {
          // Re-enrolment: the new key replaces the old one; the old passkeys and sessions end.
          yield* q(tx.update(t.signingKeys).set({ retiredAt: now }).where(eq(t.signingKeys.fingerprint, old)));
          yield* q(tx.delete(t.passkeys).where(eq(t.passkeys.personId, person.id)));
          yield* q(tx.delete(t.appSessions).where(eq(t.appSessions.personId, person.id)));
        }
        yield* q(
          tx.insert(t.passkeys).values({
            credentialId: passkey.credentialId,
            personId: person.id,
            publicKey: Buffer.from(passkey.publicKey),
            counter: passkey.counter,
            transports: passkey.transports.join(" ") || null,
            createdAt: now,
            lastUsedAt: null,
          }),
        );
        yield* q(tx.update(t.persons).set({ keyFingerprint: fingerprint, enrolledAt: now }).where(eq(t.persons.id, person.id)));
        // A first key is announced at once, unless a seal key rotation committed since the message
        // was built (it would name the replaced seal key); a replacing one, or that one, by the anchor
        // loop, once the old key's record messages have settled (docs/anchoring.md "Key announcements").
        const sealNow = (yield* q(firstRow(CURRENT_SEAL_KEY)))?.value;
        if (old === null && sealNow === Buffer.from(seal.fingerprint).toString("hex")) yield* pendingPersonKeyAnnouncement(tx, t, { ...reserved, orgId: organisation.id, topicId, message, keyFingerprint: key.fingerprint, sealFingerprint: seal.fingerprint, now });
        const after: Person = { ...current, keyFingerprint: fingerprint.toString("hex"), enrolledAt: now };
        yield* audit(tx, t, now, { actor: `person:${person.id}`, action: old === null ? "person.enrol" : "person.reenrol", subjectType: "person", subjectId: person.id, before: current, after });
        yield* openSession(person.id, now, sessionToken);
      });
      ledger.wake();
      return { person: await signedIn(person.id), sessionToken, keyFingerprint: fingerprint.toString("hex") };
    },

    // ---- sessions --------------------------------------------------------------------------

    /** POST /app/session/options: any of this service's passkeys may answer (discoverable credentials). */
    async sessionOptions() {
      return webauthn.authenticationOptions({ challenge: await issueChallenge("session", null, null), allow: [] });
    },

    /** POST /app/session: the person whose passkey answered, and their new session token. */
    async signIn(body: Record<string, unknown>): Promise<{ person: SignedInPerson; sessionToken: string }> {
      const value = challengeOf(body, "assertion");
      await issuedChallenge(value, "session");
      const passkey = await passkeyNamed(body);
      const counter = await webauthn.verifyAssertion(body, value, passkey);
      const person = await signedIn(passkey.personId);
      if (person.suspended) throw suspendedPerson();
      const now = clock.now();
      const sessionToken = await writes.write(function* () {
        if (!(yield* consume(value))) throw new AnswerRefused("This passkey answer has already been used: sign in again.");
        yield* q(changes(PASSKEY_USED, counter, now, passkey.credentialId));
        return yield* openSession(person.id, now, randomBytes(32).toString("base64url"));
      });
      return { person, sessionToken };
    },

    /** The signed-in person of a session cookie's value, or 401 (none, unknown or idle for 15 minutes). */
    async session(token: string | null): Promise<SignedInPerson> {
      const refused = () => new DomainError("UNAUTHENTICATED", "You are not signed in, or your session ended after 15 minutes without use. Sign in with your passkey.");
      if (token === null || !/^[A-Za-z0-9_-]{43}$/.test(token)) throw refused();
      const now = clock.now();
      const key = digest(token);
      const row = await store.read(() => q(firstRow(SESSION_BY_DIGEST, key, now - SESSION_IDLE_MS)));
      if (row === undefined) throw refused();
      if (now - row.last_seen_at >= TOUCH_EVERY_MS) await store.write(() => q(changes(TOUCH_SESSION, now, key)));
      return signedIn(row.person_id);
    },

    /** DELETE /app/session: ends the session (nothing to do for an unknown one). */
    async signOut(token: string | null): Promise<void> {
      if (token !== null) await store.write(() => q(changes(DELETE_SESSION, digest(token))));
    },

    // ---- signing ---------------------------------------------------------------------------

    /** POST /app/signatures/options for the signed-in person. */
    async signatureOptions(person: SignedInPerson, body: Record<string, unknown>) {
      const { docHash, filename } = parseRecordRequest(body);
      if (person.suspended) throw suspendedPerson();
      if (person.keyFingerprint === null) throw new Error(`signed-in person ${person.id} has no key`);
      if (person.keyCompromised) throw compromisedKey();
      await assertOrganisationCanSign(person.orgId);
      const recordId = Bun.randomUUIDv7();
      const signedAtMs = clock.now();
      const payload = encodeRecordPayload({ recordId, docHash, signedAtMs, signerKeyFingerprint: person.keyFingerprint });
      const challenge = createHash("sha256").update(payload).digest();
      await issueChallenge("signature", person.id, JSON.stringify({ recordId, docHash, signedAtMs, filename: filename ?? null }), challenge);
      const options = await webauthn.authenticationOptions({ challenge, allow: await passkeysOf(person.id) });
      return {
        ...options,
        docverify: { recordId, originalDocHash: docHash, signedAt: rfc3339Ms(signedAtMs), payload: Buffer.from(payload).toString("base64url") },
      };
    },

    /** POST /app/signatures: `created` false when the person already has an active record for the hash. */
    async sign(person: SignedInPerson, body: Record<string, unknown>): Promise<{ created: boolean; record: RecordView }> {
      const value = challengeOf(body, "assertion");
      const challenge = await issuedChallenge(value, "signature");
      if (challenge.subject !== person.id) throw new DomainError("FORBIDDEN", "This signature was prepared for another person than the one signed in.");
      const passkey = await passkeyNamed(body);
      if (passkey.personId !== person.id) throw new DomainError("FORBIDDEN", "This passkey belongs to another person than the one signed in.");
      if (person.suspended) throw suspendedPerson();
      if (person.keyFingerprint === null) throw new Error(`signed-in person ${person.id} has no key`);
      if (person.keyCompromised) throw compromisedKey();
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
          if (!(yield* consume(value))) throw new AnswerRefused("This passkey answer has already been used: sign again.");
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
