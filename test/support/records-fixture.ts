/**
 * Records written straight through storage, for verification tests: independent of the records
 * capability, so verification can be tested for cases the product cannot create (person-signed
 * records, any anchor state, tampered rows).
 *
 * - Organisations come from the real organisations service, so each has its real sealed system
 *   key; organisation-signed records are signed with it through the signer.
 * - Person-signed records are signed with a key generated here and used with
 *   @noble/post-quantum (the independent implementation): its row has `sealed_seed` NULL and
 *   purpose `person:<id>`, as the application stores a person's key.
 * - Every record is sealed with one `service-seal` key.
 * - The tamper helpers change stored bytes in place, as an attacker with the database would.
 */
import { eq } from "drizzle-orm";
import { join } from "node:path";
import {
  createSigner,
  encodeRecordPayload,
  encodeSealPayload,
  keyFingerprint,
  publicKeyFromSeedWithNoble,
  signWithNoble,
  type GeneratedKey,
  type SealedKey,
  type Signer,
} from "../../src/crypto/index.ts";
import { createOrganisations, type OrgFlags, type Organisation, type Organisations } from "../../src/keys/organisations.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { openDatabase, type Db } from "../../src/storage/db.ts";
import { migrate } from "../../src/storage/migrate.ts";
import { organisations, records, signingKeys } from "../../src/storage/schema.ts";
import { q, sqliteStore, type Store } from "../../src/storage/store.ts";
import { onCleanup, tempDir } from "./env.ts";

export type AnchorState = "pending" | "accepted" | "anchored" | "abandoned";

export interface FixtureOrg extends Organisation {
  readonly systemKey: SealedKey & { readonly fingerprint: Uint8Array };
}

export interface PersonKey {
  readonly personId: string;
  readonly algorithm: "ML-DSA-65";
  readonly seed: Uint8Array;
  readonly publicKey: Uint8Array;
  readonly fingerprint: Uint8Array;
}

export interface RecordOptions {
  readonly docHash: string;
  readonly anchorState?: AnchorState;
  /** Default: now. */
  readonly signedAtMs?: number;
  /** Ledger consensus as `seconds.nanoseconds`; default derived from a counter (later each call). */
  readonly consensusAt?: string;
  readonly sequenceNumber?: number;
  readonly revoked?: { readonly reason: string; readonly atMs?: number };
  /** Default: now. */
  readonly createdAt?: number;
  readonly id?: string;
  /** Default: TOPIC_ID. */
  readonly topicId?: string;
  /** Default: one derived from the signed time and the sequence number. */
  readonly transactionId?: string;
}

export interface RecordsFixture {
  readonly db: Db;
  /** The same database as a `Store`, as the services over it are given. */
  readonly store: Store;
  readonly signer: Signer;
  readonly clock: ReturnType<typeof manualClock>;
  readonly orgs: Organisations;
  readonly seal: GeneratedKey;
  createOrg(name: string, flags?: Partial<OrgFlags>): Promise<FixtureOrg>;
  /** An organisation made elsewhere on the same database (the core, the command line), with its system key. */
  orgOf(orgId: string): FixtureOrg;
  suspend(orgId: string, suspended?: boolean): Promise<void>;
  createPerson(): PersonKey;
  /** An organisation-signed record (`record_only`, `org`). Returns the record id. */
  addOrgRecord(org: FixtureOrg, options: RecordOptions): string;
  /** A person-signed record (`pdf_embedded`, `user`, with `signer_hint`), optionally within an organisation. */
  addPersonRecord(person: PersonKey, options: RecordOptions & { readonly hint?: string; readonly orgId?: string | null }): string;
  setAnchorState(recordId: string, state: AnchorState): void;
  revoke(recordId: string, reason: string, atMs?: number): void;
  readonly tamper: {
    /** Rewrites the stored document hash (the record then answers for `newHash`). */
    docHash(recordId: string, newHash: string): void;
    /** Flips one bit of the stored organisation/person signature. */
    signature(recordId: string): void;
    /** Flips one bit of the stored seal signature. */
    seal(recordId: string): void;
    /** Flips one bit of the stored signed time. */
    signedAt(recordId: string): void;
    /** Flips one bit of a stored public key (the key row keeps its fingerprint); a second call flips it back. */
    publicKey(fingerprint: Uint8Array): void;
    /** Relabels a stored key's algorithm. */
    algorithm(fingerprint: Uint8Array, algorithm: string): void;
    /** Points the record at another key row as its signer (which did not sign it). */
    signerFingerprint(recordId: string, fingerprint: Uint8Array): void;
  };
}

export const MASTER_KEY = new Uint8Array(32).fill(7);
export const TOPIC_ID = "0.0.1001";

/** A DocHash from any text. */
export function docHashOf(text: string): string {
  return `sha256:${new Bun.CryptoHasher("sha256").update(text).digest("hex")}`;
}

/**
 * One hash for each kind of record a verification tells apart, by kind, for tests that compare
 * two ways of verifying (`Object.values` for all of them): organisation-signed, person-signed
 * (alone and within `org`), revoked, awaiting consensus, a changed seal, signature or signed
 * time, an active record beside a revoked one, and a hash with no record. `freshHash` gives each
 * its own hash.
 */
export function everyKindOfRecord(fx: RecordsFixture, org: FixtureOrg, person: PersonKey, freshHash: () => string) {
  const kinds = {
    orgSigned: (h: string) => fx.addOrgRecord(org, { docHash: h }),
    personSigned: (h: string) => fx.addPersonRecord(person, { docHash: h }),
    personWithinOrg: (h: string) => fx.addPersonRecord(person, { docHash: h, orgId: org.id }),
    revoked: (h: string) => fx.addOrgRecord(org, { docHash: h, revoked: { reason: "OTHER" } }),
    accepted: (h: string) => fx.addOrgRecord(org, { docHash: h, anchorState: "accepted" }),
    sealChanged: (h: string) => fx.tamper.seal(fx.addOrgRecord(org, { docHash: h })),
    signatureChanged: (h: string) => fx.tamper.signature(fx.addPersonRecord(person, { docHash: h })),
    signedAtChanged: (h: string) => fx.tamper.signedAt(fx.addOrgRecord(org, { docHash: h })),
    activeBesideRevoked: (h: string) => {
      fx.addOrgRecord(org, { docHash: h });
      fx.addOrgRecord(org, { docHash: h, revoked: { reason: "SUPERSEDED" } });
    },
    none: () => undefined,
  };
  const hashes = {} as Record<keyof typeof kinds, string>;
  for (const [kind, add] of Object.entries(kinds) as [keyof typeof kinds, (h: string) => unknown][]) {
    hashes[kind] = freshHash();
    add(hashes[kind]);
  }
  return hashes;
}

/** Opens a fresh migrated database in a temporary folder. */
export function openTestDb(): Db {
  const db = openDatabase({ path: join(tempDir(), "docverify.db") });
  migrate(db);
  onCleanup(() => db.$client.close());
  return db;
}

function flipBit(b: Uint8Array | Buffer, index = 0): Buffer {
  const copy = Buffer.from(b);
  copy[index] = copy[index]! ^ 0x01;
  return copy;
}

/** Who signs a record the fixture writes, and how. */
interface RecordSigner {
  readonly orgId: string | null;
  readonly signerType: "org" | "user";
  readonly kind: string;
  readonly signerHint: string | null;
  readonly signerFingerprint: Uint8Array;
  readonly sign: (payload: Uint8Array) => Uint8Array;
}

interface RowContext {
  readonly signer: Signer;
  readonly seal: GeneratedKey;
  readonly clock: ReturnType<typeof manualClock>;
  nextSequence(): number;
  consensusFor(seq: number): string;
}

/** The stored row of a record signed by `row` and sealed with the fixture's seal key. */
function recordValues(ctx: RowContext, row: RecordSigner, o: RecordOptions): typeof records.$inferInsert & { id: string } {
  const { signer, seal, clock } = ctx;
  const id = o.id ?? Bun.randomUUIDv7();
  const signedAtMs = o.signedAtMs ?? clock.now();
  const payload = encodeRecordPayload({ recordId: id, docHash: o.docHash, signedAtMs, signerKeyFingerprint: row.signerFingerprint });
  const signature = row.sign(payload);
  const sealSignature = signer.sign(seal, encodeSealPayload(payload, signature, seal.fingerprint));
  const state = o.anchorState ?? "anchored";
  const seq = o.sequenceNumber ?? ctx.nextSequence();
  const anchored = state === "anchored";
  return {
    id,
    orgId: row.orgId,
    signerType: row.signerType,
    kind: row.kind,
    signerHint: row.signerHint,
    docHash: o.docHash,
    filename: "document.pdf",
    signedAtMs,
    signerFingerprint: Buffer.from(row.signerFingerprint),
    signature: Buffer.from(signature),
    sealFingerprint: Buffer.from(seal.fingerprint),
    sealSignature: Buffer.from(sealSignature),
    anchorState: state,
    topicId: o.topicId ?? TOPIC_ID,
    transactionId: o.transactionId ?? `0.0.2@${Math.floor(signedAtMs / 1000)}.${String((signedAtMs % 1000) * 1_000_000 + seq).padStart(9, "0")}`,
    sequenceNumber: anchored ? seq : null,
    consensusAt: anchored ? (o.consensusAt ?? ctx.consensusFor(seq)) : null,
    revokedAt: o.revoked ? (o.revoked.atMs ?? clock.now()) : null,
    revocationReason: o.revoked ? o.revoked.reason : null,
    revocationTransactionId: o.revoked ? `0.0.2@${Math.floor(clock.now() / 1000)}.000000001` : null,
    createdAt: o.createdAt ?? clock.now(),
  };
}

function orgSigner(signer: Signer, org: FixtureOrg): RecordSigner {
  return { orgId: org.id, signerType: "org", kind: "record_only", signerHint: null, signerFingerprint: org.systemKey.fingerprint, sign: (payload) => signer.sign(org.systemKey, payload) };
}

function personSigner(person: PersonKey, options: { readonly hint?: string; readonly orgId?: string | null }): RecordSigner {
  return {
    orgId: options.orgId ?? null,
    signerType: "user",
    kind: "pdf_embedded",
    signerHint: options.hint ?? "A. Person (identity verified)",
    signerFingerprint: person.fingerprint,
    sign: (payload) => signWithNoble(person.algorithm, person.seed, payload, { deterministic: false }),
  };
}

function newPerson(): PersonKey {
  const personId = Bun.randomUUIDv7();
  const seed = crypto.getRandomValues(new Uint8Array(32));
  const publicKey = publicKeyFromSeedWithNoble("ML-DSA-65", seed);
  const fingerprint = keyFingerprint({ algorithm: "ML-DSA-65", publicKey });
  return { personId, algorithm: "ML-DSA-65", seed, publicKey, fingerprint };
}

const personKeyRow = (person: PersonKey, at: number) => ({
  fingerprint: Buffer.from(person.fingerprint),
  algorithm: "ML-DSA-65",
  publicKey: Buffer.from(person.publicKey),
  purpose: `person:${person.personId}`,
  sealedSeed: null,
  createdAt: at,
});

const sealKeyRow = (seal: GeneratedKey, at: number) => ({
  fingerprint: Buffer.from(seal.fingerprint),
  algorithm: seal.algorithm,
  publicKey: Buffer.from(seal.publicKey),
  purpose: seal.purpose,
  sealedSeed: Buffer.from(seal.sealedSeed),
  createdAt: at,
});

/** The organisation `orgId` as the fixture gives it: its row and its system key. */
function fixtureOrg(stored: typeof organisations.$inferSelect, key: typeof signingKeys.$inferSelect): FixtureOrg {
  const { systemKeyFingerprint: _, ...org } = stored;
  return {
    ...org,
    systemKey: {
      algorithm: key.algorithm as "ML-DSA-65",
      publicKey: new Uint8Array(key.publicKey),
      purpose: key.purpose,
      sealedSeed: new Uint8Array(key.sealedSeed!),
      fingerprint: new Uint8Array(key.fingerprint),
    },
  };
}

/**
 * The fixture's writes over a store, on either engine (test/support/engine.ts): what the HTTP
 * suites that run on both engines need, answering with promises.
 */
export interface StoreRecordsFixture {
  readonly store: Store;
  readonly signer: Signer;
  readonly clock: ReturnType<typeof manualClock>;
  readonly orgs: Organisations;
  /** The seal key every record is sealed with. */
  readonly seal: GeneratedKey;
  createOrg(name: string, flags?: Partial<OrgFlags>): Promise<FixtureOrg>;
  createPerson(): Promise<PersonKey>;
  addOrgRecord(org: FixtureOrg, options: RecordOptions): Promise<string>;
  addPersonRecord(person: PersonKey, options: RecordOptions & { readonly hint?: string; readonly orgId?: string | null }): Promise<string>;
}

export async function createStoreRecordsFixture(options: { store: Store; signer: Signer; clock?: ReturnType<typeof manualClock> }): Promise<StoreRecordsFixture> {
  const { store, signer } = options;
  const clock = options.clock ?? manualClock(Date.UTC(2026, 0, 15, 9, 30));
  const orgs = createOrganisations({ store, signer, clock });
  const seal = signer.generateKey("service-seal");
  await store.write((tx, t) => q(tx.insert(t.signingKeys).values(sealKeyRow(seal, clock.now()))));
  let sequence = 0;
  const ctx: RowContext = {
    signer,
    seal,
    clock,
    nextSequence: () => ++sequence,
    consensusFor: (seq) => `${Math.floor(clock.now() / 1000) + 3 + seq}.${String(123_456_789 + seq).padStart(9, "0")}`,
  };
  async function insert(row: RecordSigner, o: RecordOptions): Promise<string> {
    const values = recordValues(ctx, row, o);
    await store.write((tx, t) => q(tx.insert(t.records).values(values)));
    return values.id;
  }
  return {
    store,
    signer,
    clock,
    orgs,
    seal,
    async createOrg(name, flags = {}) {
      const { id } = await orgs.create({ name, ...flags }, "test");
      return store.read(function* (db, t) {
        const [stored] = yield* q(db.select().from(t.organisations).where(eq(t.organisations.id, id)));
        const [key] = yield* q(db.select().from(t.signingKeys).where(eq(t.signingKeys.fingerprint, stored!.systemKeyFingerprint)));
        return fixtureOrg(stored as typeof organisations.$inferSelect, key as typeof signingKeys.$inferSelect);
      });
    },
    async createPerson() {
      const person = newPerson();
      await store.write((tx, t) => q(tx.insert(t.signingKeys).values(personKeyRow(person, clock.now()))));
      return person;
    },
    addOrgRecord: (org, o) => insert(orgSigner(signer, org), o),
    addPersonRecord: (person, o) => insert(personSigner(person, o), o),
  };
}

export function createRecordsFixture(options: { db?: Db; signer?: Signer; clock?: ReturnType<typeof manualClock> } = {}): RecordsFixture {
  const db = options.db ?? openTestDb();
  const signer = options.signer ?? createSigner({ masterKey: MASTER_KEY });
  const clock = options.clock ?? manualClock(Date.UTC(2026, 0, 15, 9, 30));
  const store = sqliteStore(db);
  const orgs = createOrganisations({ store, signer, clock });

  // Key rows named column by column, so the fixture also writes into a database left by an earlier
  // release (drizzle's insert names every column of today's schema).
  const insertKey = (row: ReturnType<typeof sealKeyRow> | ReturnType<typeof personKeyRow>) =>
    db.$client
      .query("INSERT INTO signing_keys (fingerprint, algorithm, public_key, purpose, sealed_seed, created_at) VALUES (?, ?, ?, ?, ?, ?)")
      .run(row.fingerprint, row.algorithm, row.publicKey, row.purpose, row.sealedSeed, row.createdAt);
  const seal = signer.generateKey("service-seal");
  insertKey(sealKeyRow(seal, clock.now()));

  let sequence = 0;
  const nextSequence = () => ++sequence;
  // Consensus a few seconds after the (fixture's) start, one second apart per record.
  const consensusFor = (seq: number) => `${Math.floor(clock.now() / 1000) + 3 + seq}.${String(123_456_789 + seq).padStart(9, "0")}`;

  function insertRecord(row: RecordSigner & { options: RecordOptions }): string {
    const values = recordValues({ signer, seal, clock, nextSequence, consensusFor }, row, row.options);
    db.insert(records).values(values).run();
    return values.id;
  }

  const keyRow = (fingerprint: Uint8Array) => eq(signingKeys.fingerprint, Buffer.from(fingerprint));
  const recordRow = (id: string) => db.select().from(records).where(eq(records.id, id)).get()!;

  // Synchronous, from the stored rows (as the rest of this fixture reads them), so that it can be
  // called inside a synchronous SQLite transaction; the same fields the organisations service gives.
  function orgOf(orgId: string): FixtureOrg {
    const stored = db.select().from(organisations).where(eq(organisations.id, orgId)).get();
    if (stored === undefined) throw new Error(`records fixture: no organisation ${orgId}`);
    return fixtureOrg(stored, db.select().from(signingKeys).where(keyRow(stored.systemKeyFingerprint)).get()!);
  }

  return {
    db,
    store,
    signer,
    clock,
    orgs,
    seal,

    async createOrg(name, flags = {}) {
      return orgOf((await orgs.create({ name, ...flags }, "test")).id);
    },

    orgOf,

    async suspend(orgId, suspended = true) {
      await orgs.set(orgId, { suspended }, "test");
    },

    createPerson() {
      const person = newPerson();
      insertKey(personKeyRow(person, clock.now()));
      return person;
    },

    addOrgRecord: (org, options) => insertRecord({ ...orgSigner(signer, org), options }),

    addPersonRecord: (person, options) => insertRecord({ ...personSigner(person, options), options }),

    setAnchorState(recordId, state) {
      const anchored = state === "anchored";
      const row = recordRow(recordId);
      db.update(records)
        .set({ anchorState: state, sequenceNumber: anchored ? (row.sequenceNumber ?? nextSequence()) : null, consensusAt: anchored ? (row.consensusAt ?? consensusFor(nextSequence())) : null })
        .where(eq(records.id, recordId))
        .run();
    },

    revoke(recordId, reason, atMs) {
      db.update(records)
        .set({ revokedAt: atMs ?? clock.now(), revocationReason: reason, revocationTransactionId: `0.0.2@${Math.floor(clock.now() / 1000)}.000000002` })
        .where(eq(records.id, recordId))
        .run();
    },

    tamper: {
      docHash(recordId, newHash) {
        db.update(records).set({ docHash: newHash }).where(eq(records.id, recordId)).run();
      },
      signature(recordId) {
        db.update(records).set({ signature: flipBit(recordRow(recordId).signature, 100) }).where(eq(records.id, recordId)).run();
      },
      seal(recordId) {
        db.update(records).set({ sealSignature: flipBit(recordRow(recordId).sealSignature, 100) }).where(eq(records.id, recordId)).run();
      },
      signedAt(recordId) {
        db.update(records).set({ signedAtMs: recordRow(recordId).signedAtMs ^ 1 }).where(eq(records.id, recordId)).run();
      },
      publicKey(fingerprint) {
        const key = db.select().from(signingKeys).where(keyRow(fingerprint)).get()!;
        db.update(signingKeys).set({ publicKey: flipBit(key.publicKey, 10) }).where(keyRow(fingerprint)).run();
      },
      algorithm(fingerprint, algorithm) {
        db.update(signingKeys).set({ algorithm }).where(keyRow(fingerprint)).run();
      },
      signerFingerprint(recordId, fingerprint) {
        db.update(records).set({ signerFingerprint: Buffer.from(fingerprint) }).where(eq(records.id, recordId)).run();
      },
    },
  };
}
