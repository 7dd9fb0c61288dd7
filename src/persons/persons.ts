/**
 * Persons (docs/admin.md "Persons"): named people of an organisation who will sign PDFs with their
 * own key. An administrator adds them on the local machine, attesting how their identity was
 * verified; each gets an enrolment link `{publicUrl}/enrol/{token}`. The token is 32 random bytes,
 * shown once in the link and stored only as its SHA-256 digest; it is good for one use within 24
 * hours, and a new link for the same person replaces every unused older one. Every administrative
 * change writes its audit row in the same transaction; no audit row holds a token or its digest.
 */
import { createHash, randomBytes } from "node:crypto";
import { and, asc, eq, gt, isNull } from "drizzle-orm";
import type { Clock } from "../lib/clock.ts";
import { DomainError, invalid } from "../lib/errors.ts";
import { q, type Op, type Store, type StoreDb, type Tables } from "../storage/store.ts";
import { audit } from "../keys/audit.ts";
import { validateOrgName } from "../keys/organisations.ts";
import { refuseWhileAnnouncing } from "./person-keys.ts";

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

function view(row: Tables["persons"]["$inferSelect"]): Person {
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

const notFound = (id: string) => new DomainError("NOT_FOUND", `No person ${id}.`);

/**
 * Administration of persons, on either engine (docs/storage.md): add, list, links, suspension.
 * Each change and its audit row are one write operation.
 */
export function createPersons(deps: { store: Store; clock: Clock; publicUrl: string }) {
  const { store, clock, publicUrl } = deps;

  /** A new link's secret and expiry, made before the write (a PostgreSQL write may run twice). */
  function newLink(now: number): { token: string; expiresAt: number } {
    return { token: randomBytes(32).toString("base64url"), expiresAt: now + ENROLMENT_TTL_MS };
  }

  /** Replaces the person's unused links with `link`; a step of the caller's write. */
  function* issue(tx: StoreDb, t: Tables, person: Person, now: number, link: { token: string; expiresAt: number }, actor: string): Op<EnrolmentLink> {
    // Older unused links end now: they then answer "expired or replaced".
    yield* q(
      tx
        .update(t.enrolments)
        .set({ expiresAt: now })
        .where(and(eq(t.enrolments.personId, person.id), isNull(t.enrolments.usedAt), gt(t.enrolments.expiresAt, now))),
    );
    yield* q(tx.insert(t.enrolments).values({ tokenDigest: tokenDigest(link.token), personId: person.id, expiresAt: link.expiresAt, usedAt: null, createdAt: now }));
    yield* audit(tx, t, now, { actor, action: "person.link", subjectType: "person", subjectId: person.id, before: null, after: { expiresAt: link.expiresAt } });
    return { personId: person.id, enrolUrl: `${publicUrl}/enrol/${link.token}`, expiresAt: link.expiresAt };
  }

  function* getIn(db: StoreDb, t: Tables, id: string): Op<Person> {
    const [row] = yield* q(db.select().from(t.persons).where(eq(t.persons.id, id)));
    if (row === undefined) throw notFound(id);
    return view(row);
  }

  function* orgExists(db: StoreDb, t: Tables, orgId: string): Op<void> {
    const [org] = yield* q(db.select({ id: t.organisations.id }).from(t.organisations).where(eq(t.organisations.id, orgId)));
    if (org === undefined) throw new DomainError("NOT_FOUND", `No organisation ${orgId}.`);
  }

  return {
    get(id: string): Promise<Person> {
      return store.read((db, t) => getIn(db, t, id));
    },

    /** Persons, oldest first; of one organisation when `orgId` is given (NOT_FOUND if it does not exist). */
    list(filter: { orgId?: string } = {}): Promise<Person[]> {
      return store.read(function* (db, t) {
        const all = db.select().from(t.persons);
        if (filter.orgId === undefined) return (yield* q(all.orderBy(asc(t.persons.createdAt), asc(t.persons.id)))).map(view);
        yield* orgExists(db, t, filter.orgId);
        return (yield* q(all.where(eq(t.persons.orgId, filter.orgId)).orderBy(asc(t.persons.createdAt), asc(t.persons.id)))).map(view);
      });
    },

    /** Adds a person and issues their first enrolment link. */
    add(input: { orgId: string; name: string; email: string; identity: string }, actor: string): Promise<{ person: Person; link: EnrolmentLink }> {
      let name: string, email: string, identityEvidence: string;
      try {
        name = validateOrgName(input.name);
        email = validateEmail(input.email);
        identityEvidence = validateIdentityEvidence(input.identity);
      } catch (e) {
        return Promise.reject(e);
      }
      const now = clock.now();
      const id = Bun.randomUUIDv7();
      const link = newLink(now);
      return store.write(function* (tx, t) {
        yield* orgExists(tx, t, input.orgId);
        const row = { id, orgId: input.orgId, name, email, identityEvidence, suspended: false, keyFingerprint: null, createdAt: now, enrolledAt: null };
        yield* q(tx.insert(t.persons).values(row));
        const person = view(row);
        yield* audit(tx, t, now, { actor, action: "person.add", subjectType: "person", subjectId: person.id, before: null, after: person });
        return { person, link: yield* issue(tx, t, person, now, link, actor) };
      });
    },

    /**
     * A new enrolment link for a person who is not suspended; unused older links stop working.
     * For an enrolled person it is a re-enrolment link: enrolling with it replaces their passkeys
     * and key (docs/persons.md "Re-enrolment"); refused (FORBIDDEN) while their key is not yet
     * announced (person-keys.ts `refuseWhileAnnouncing`).
     */
    issueLink(personId: string, actor: string): Promise<EnrolmentLink> {
      const now = clock.now();
      const link = newLink(now);
      return store.write(function* (tx, t) {
        const person = yield* getIn(tx, t, personId);
        if (person.suspended) throw new DomainError("FORBIDDEN", `Person ${personId} is suspended.`);
        if (person.keyFingerprint !== null) yield* refuseWhileAnnouncing(tx, t, person, Buffer.from(person.keyFingerprint, "hex"));
        return yield* issue(tx, t, person, now, link, actor);
      });
    },

    /** Suspends a person. Idempotent: suspending a suspended person changes nothing and writes no audit row. */
    suspend(personId: string, actor: string): Promise<Person> {
      const now = clock.now();
      return store.write(function* (tx, t) {
        const before = yield* getIn(tx, t, personId);
        if (before.suspended) return before;
        const after = { ...before, suspended: true };
        yield* q(tx.update(t.persons).set({ suspended: true }).where(eq(t.persons.id, personId)));
        yield* audit(tx, t, now, { actor, action: "person.suspend", subjectType: "person", subjectId: personId, before, after });
        return after;
      });
    },
  };
}

export type Persons = ReturnType<typeof createPersons>;

/**
 * Enrolment links as the person application uses them: checked, peeked at and redeemed, on either
 * engine. `redeemStep` is a step of the application's enrolment operation (persons/service.ts).
 */
export function createEnrolments(deps: { store: Store; clock: Clock }) {
  const { store, clock } = deps;

  /** The token's enrolment row and person if it may be used now; EnrolmentTokenError otherwise. */
  function* check(db: StoreDb, t: Tables, token: string, now: number): Op<{ digest: Buffer; person: Person }> {
    if (!TOKEN_RE.test(token)) throw new EnrolmentTokenError("unknown");
    const digest = tokenDigest(token);
    const [row] = yield* q(db.select().from(t.enrolments).where(eq(t.enrolments.tokenDigest, digest)));
    if (row === undefined) throw new EnrolmentTokenError("unknown");
    if (row.usedAt !== null) throw new EnrolmentTokenError("used");
    if (now >= row.expiresAt) throw new EnrolmentTokenError("expired");
    const [p] = yield* q(db.select().from(t.persons).where(eq(t.persons.id, row.personId)));
    if (p === undefined) throw notFound(row.personId);
    const person = view(p);
    // A link made before the person enrolled is spent; one made after is a re-enrolment link.
    if (person.enrolledAt !== null && row.createdAt <= person.enrolledAt) throw new EnrolmentTokenError("used");
    if (person.suspended) throw new EnrolmentTokenError("suspended");
    return { digest, person };
  }

  /** Checks the token and marks it used: a step of the caller's write operation. */
  function* redeemStep(tx: StoreDb, t: Tables, token: string, now: number): Op<Person> {
    const { digest, person } = yield* check(tx, t, token, now);
    yield* q(tx.update(t.enrolments).set({ usedAt: now }).where(eq(t.enrolments.tokenDigest, digest)));
    return person;
  }

  return {
    /**
     * Checks an enrolment token and marks it used, in one write operation (two concurrent
     * redemptions: exactly one succeeds). Throws EnrolmentTokenError: `unknown`, `expired` (or
     * replaced by a newer link), `used`, or `suspended`. The lookup is by the digest's primary key,
     * so nothing compares the secret itself.
     */
    redeemEnrolment(token: string, now: number): Promise<Person> {
      return store.write((tx, t) => redeemStep(tx, t, token, now));
    },

    redeemStep,

    /**
     * The person and organisation an enrolment token is for, without using it: for the enrolment
     * page and the registration options. The same refusals as `redeemEnrolment`.
     */
    peekEnrolment(token: string, now: number = clock.now()): Promise<{ person: Person; organisation: { id: string; name: string } }> {
      return store.read(function* (db, t) {
        const { person } = yield* check(db, t, token, now);
        const [org] = yield* q(db.select({ id: t.organisations.id, name: t.organisations.name }).from(t.organisations).where(eq(t.organisations.id, person.orgId)));
        if (org === undefined) throw new Error(`person ${person.id}'s organisation does not exist`);
        return { person, organisation: org };
      });
    },
  };
}

export type Enrolments = ReturnType<typeof createEnrolments>;
