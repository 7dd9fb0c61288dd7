/**
 * Persons (decisions §10): named people of an organisation who will sign PDFs with their own key.
 * An administrator adds them on the local machine, attesting how their identity was verified;
 * each gets an enrolment link `{publicUrl}/enrol/{token}`. The token is 32 random bytes, shown
 * once in the link and stored only as its SHA-256 digest; it is good for one use within 24 hours,
 * and a new link for the same person replaces every unused older one. Every administrative change
 * writes its audit row in the same transaction; no audit row holds a token or its digest.
 */
import { createHash, randomBytes } from "node:crypto";
import { and, asc, eq, gt, isNull } from "drizzle-orm";
import type { Clock } from "../lib/clock.ts";
import { DomainError, invalid } from "../lib/errors.ts";
import type { Db } from "../storage/db.ts";
import { enrolments, organisations, persons } from "../storage/schema.ts";
import { writeAudit } from "./audit.ts";
import { validateOrgName } from "./organisations.ts";

export const ENROLMENT_TTL_MS = 24 * 60 * 60 * 1000;
const MAX_EMAIL = 254;
const MAX_IDENTITY = 500;
const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;
const CONTROL = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

export interface Person {
  readonly id: string;
  readonly orgId: string;
  readonly name: string;
  readonly email: string;
  /** The administrator's attestation of how identity was verified. */
  readonly identityEvidence: string;
  readonly suspended: boolean;
  /** Hex fingerprint of the person's own key; null until enrolment. */
  readonly keyFingerprint: string | null;
  readonly createdAt: number;
  readonly enrolledAt: number | null;
}

/** A link shown once: the caller prints it and never stores or logs it. */
export interface EnrolmentLink {
  readonly personId: string;
  readonly enrolUrl: string;
  readonly expiresAt: number;
}

export type EnrolmentRefusal = "unknown" | "expired" | "used" | "suspended";

const REFUSALS: Readonly<Record<EnrolmentRefusal, { code: "NOT_FOUND" | "FORBIDDEN"; message: string }>> = {
  unknown: { code: "NOT_FOUND", message: "This enrolment link is not known. Ask your administrator for a new one." },
  expired: { code: "FORBIDDEN", message: "This enrolment link has expired or was replaced by a newer one. Ask your administrator for a new one." },
  used: { code: "FORBIDDEN", message: "This enrolment link has already been used. Ask your administrator for a new one." },
  suspended: { code: "FORBIDDEN", message: "This person is suspended and cannot enrol." },
};

/** An enrolment token refused: `reason` says which refusal, for the page to explain. */
export class EnrolmentTokenError extends DomainError {
  constructor(readonly reason: EnrolmentRefusal) {
    super(REFUSALS[reason].code, REFUSALS[reason].message);
  }
}

/** A plain, bounded check: one `@` with text either side, no whitespace or control characters. */
export function validateEmail(email: string): string {
  if (email.length === 0) throw invalid("email", "must not be empty");
  if (email.length > MAX_EMAIL) throw invalid("email", `must be at most ${MAX_EMAIL} characters`);
  if (/\s/u.test(email) || CONTROL.test(email)) throw invalid("email", "must not contain spaces or control characters");
  const parts = email.split("@");
  if (parts.length !== 2 || parts[0] === "" || parts[1] === "") throw invalid("email", "must be one address: local part, one @, domain");
  return email;
}

/** What the administrator attests: 1 to 500 printable characters, on one line. */
export function validateIdentityEvidence(text: string): string {
  const t = text.trim();
  if (t === "") throw invalid("identity", "must say how identity was verified (document type and reference)");
  if ([...t].length > MAX_IDENTITY) throw invalid("identity", `must be at most ${MAX_IDENTITY} characters`);
  if (CONTROL.test(t.replace(/[\u200c\u200d]/g, ""))) throw invalid("identity", "must not contain control or invisible formatting characters");
  return t;
}

/** The digest an enrolment token is stored and looked up by. */
export function tokenDigest(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}

function view(row: typeof persons.$inferSelect): Person {
  return {
    id: row.id,
    orgId: row.orgId,
    name: row.name,
    email: row.email,
    identityEvidence: row.identityEvidence,
    suspended: row.suspended,
    keyFingerprint: row.keyFingerprint === null ? null : row.keyFingerprint.toString("hex"),
    createdAt: row.createdAt,
    enrolledAt: row.enrolledAt,
  };
}

type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

export function createPersons(deps: { db: Db; clock: Clock; publicUrl: string }) {
  const { db, clock, publicUrl } = deps;

  const notFound = (id: string) => new DomainError("NOT_FOUND", `No person ${id}.`);

  /** Replaces the person's unused links with a new one; inside the caller's transaction. */
  function issue(tx: Tx, person: Person, now: number, actor: string): EnrolmentLink {
    const token = randomBytes(32).toString("base64url");
    const expiresAt = now + ENROLMENT_TTL_MS;
    // Older unused links end now: they then answer "expired or replaced".
    tx.update(enrolments)
      .set({ expiresAt: now })
      .where(and(eq(enrolments.personId, person.id), isNull(enrolments.usedAt), gt(enrolments.expiresAt, now)))
      .run();
    tx.insert(enrolments).values({ tokenDigest: tokenDigest(token), personId: person.id, expiresAt, usedAt: null, createdAt: now }).run();
    writeAudit(tx, now, { actor, action: "person.link", subjectType: "person", subjectId: person.id, before: null, after: { expiresAt } });
    return { personId: person.id, enrolUrl: `${publicUrl}/enrol/${token}`, expiresAt };
  }

  function getIn(tx: Pick<Db, "select">, id: string): Person {
    const row = tx.select().from(persons).where(eq(persons.id, id)).get();
    if (row === undefined) throw notFound(id);
    return view(row);
  }

  /** The token's enrolment row and person if it may be used now; EnrolmentTokenError otherwise. */
  function check(tx: Pick<Db, "select">, token: string, now: number): { digest: Buffer; person: Person } {
    if (!TOKEN_RE.test(token)) throw new EnrolmentTokenError("unknown");
    const digest = tokenDigest(token);
    const row = tx.select().from(enrolments).where(eq(enrolments.tokenDigest, digest)).get();
    if (row === undefined) throw new EnrolmentTokenError("unknown");
    if (row.usedAt !== null) throw new EnrolmentTokenError("used");
    if (now >= row.expiresAt) throw new EnrolmentTokenError("expired");
    const person = getIn(tx, row.personId);
    if (person.enrolledAt !== null) throw new EnrolmentTokenError("used");
    if (person.suspended) throw new EnrolmentTokenError("suspended");
    return { digest, person };
  }

  function redeemIn(tx: Tx, token: string, now: number): Person {
    const { digest, person } = check(tx, token, now);
    tx.update(enrolments).set({ usedAt: now }).where(eq(enrolments.tokenDigest, digest)).run();
    return person;
  }

  return {
    get(id: string): Person {
      return getIn(db, id);
    },

    /** Persons, oldest first; of one organisation when `orgId` is given (NOT_FOUND if it does not exist). */
    list(filter: { orgId?: string } = {}): Person[] {
      if (filter.orgId !== undefined) {
        if (db.select({ id: organisations.id }).from(organisations).where(eq(organisations.id, filter.orgId)).get() === undefined) {
          throw new DomainError("NOT_FOUND", `No organisation ${filter.orgId}.`);
        }
        return db.select().from(persons).where(eq(persons.orgId, filter.orgId)).orderBy(asc(persons.createdAt), asc(persons.id)).all().map(view);
      }
      return db.select().from(persons).orderBy(asc(persons.createdAt), asc(persons.id)).all().map(view);
    },

    /** Adds a person and issues their first enrolment link. */
    add(input: { orgId: string; name: string; email: string; identity: string }, actor: string): { person: Person; link: EnrolmentLink } {
      const name = validateOrgName(input.name);
      const email = validateEmail(input.email);
      const identityEvidence = validateIdentityEvidence(input.identity);
      return db.transaction((tx) => {
        if (tx.select({ id: organisations.id }).from(organisations).where(eq(organisations.id, input.orgId)).get() === undefined) {
          throw new DomainError("NOT_FOUND", `No organisation ${input.orgId}.`);
        }
        const now = clock.now();
        const row = { id: Bun.randomUUIDv7(), orgId: input.orgId, name, email, identityEvidence, suspended: false, keyFingerprint: null, createdAt: now, enrolledAt: null };
        tx.insert(persons).values(row).run();
        const person = view(row);
        writeAudit(tx, now, { actor, action: "person.add", subjectType: "person", subjectId: person.id, before: null, after: person });
        return { person, link: issue(tx, person, now, actor) };
      }, { behavior: "immediate" });
    },

    /** A new enrolment link for a person not yet enrolled and not suspended; unused older links stop working. */
    issueLink(personId: string, actor: string): EnrolmentLink {
      return db.transaction((tx) => {
        const person = getIn(tx, personId);
        if (person.enrolledAt !== null) throw new DomainError("FORBIDDEN", `Person ${personId} has already enrolled.`);
        if (person.suspended) throw new DomainError("FORBIDDEN", `Person ${personId} is suspended.`);
        return issue(tx, person, clock.now(), actor);
      }, { behavior: "immediate" });
    },

    /** Suspends a person. Idempotent: suspending a suspended person changes nothing and writes no audit row. */
    suspend(personId: string, actor: string): Person {
      return db.transaction((tx) => {
        const before = getIn(tx, personId);
        if (before.suspended) return before;
        const after = { ...before, suspended: true };
        tx.update(persons).set({ suspended: true }).where(eq(persons.id, personId)).run();
        writeAudit(tx, clock.now(), { actor, action: "person.suspend", subjectType: "person", subjectId: personId, before, after });
        return after;
      }, { behavior: "immediate" });
    },

    /**
     * Checks an enrolment token and marks it used, in one IMMEDIATE transaction (two concurrent
     * redemptions: exactly one succeeds). Throws EnrolmentTokenError: `unknown`, `expired` (or
     * replaced by a newer link), `used`, or `suspended`. The lookup is by the digest's primary key,
     * so nothing compares the secret itself.
     */
    redeemEnrolment(token: string, now: number): Person {
      return db.transaction((tx) => redeemIn(tx, token, now), { behavior: "immediate" });
    },

    /** `redeemEnrolment` inside the caller's IMMEDIATE transaction (the enrolment that registers the passkey). */
    redeemEnrolmentIn: redeemIn,

    /**
     * The person and organisation an enrolment token is for, without using it: for the enrolment
     * page and the registration options. The same refusals as `redeemEnrolment`.
     */
    peekEnrolment(token: string, now: number = clock.now()): { person: Person; organisation: { id: string; name: string } } {
      const person = check(db, token, now).person;
      const org = db.select({ id: organisations.id, name: organisations.name }).from(organisations).where(eq(organisations.id, person.orgId)).get();
      if (org === undefined) throw new Error(`person ${person.id}'s organisation does not exist`);
      return { person, organisation: org };
    },
  };
}

export type Persons = ReturnType<typeof createPersons>;
