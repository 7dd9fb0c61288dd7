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
import { sqliteStore, type Store } from "../../src/storage/store.ts";
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

export function createRecordsFixture(options: { db?: Db; signer?: Signer; clock?: ReturnType<typeof manualClock> } = {}): RecordsFixture {
  const db = options.db ?? openTestDb();
  const signer = options.signer ?? createSigner({ masterKey: MASTER_KEY });
  const clock = options.clock ?? manualClock(Date.UTC(2026, 0, 15, 9, 30));
  const store = sqliteStore(db);
  const orgs = createOrganisations({ store, signer, clock });

  const seal = signer.generateKey("service-seal");
  db.insert(signingKeys)
    .values({ fingerprint: Buffer.from(seal.fingerprint), algorithm: seal.algorithm, publicKey: Buffer.from(seal.publicKey), purpose: seal.purpose, sealedSeed: Buffer.from(seal.sealedSeed), createdAt: clock.now() })
    .run();

  let sequence = 0;
  const nextSequence = () => ++sequence;
  // Consensus a few seconds after the (fixture's) start, one second apart per record.
  const consensusFor = (seq: number) => `${Math.floor(clock.now() / 1000) + 3 + seq}.${String(123_456_789 + seq).padStart(9, "0")}`;

  function insertRecord(row: {
    orgId: string | null;
    signerType: "org" | "user";
    kind: string;
    signerHint: string | null;
    signerFingerprint: Uint8Array;
    sign: (payload: Uint8Array) => Uint8Array;
    options: RecordOptions;
  }): string {
    const o = row.options;
    const id = o.id ?? Bun.randomUUIDv7();
    const signedAtMs = o.signedAtMs ?? clock.now();
    const payload = encodeRecordPayload({ recordId: id, docHash: o.docHash, signedAtMs, signerKeyFingerprint: row.signerFingerprint });
    const signature = row.sign(payload);
    const sealSignature = signer.sign(seal, encodeSealPayload(payload, signature, seal.fingerprint));
    const state = o.anchorState ?? "anchored";
    const seq = o.sequenceNumber ?? nextSequence();
    const anchored = state === "anchored";
    db.insert(records)
      .values({
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
        consensusAt: anchored ? (o.consensusAt ?? consensusFor(seq)) : null,
        revokedAt: o.revoked ? (o.revoked.atMs ?? clock.now()) : null,
        revocationReason: o.revoked ? o.revoked.reason : null,
        revocationTransactionId: o.revoked ? `0.0.2@${Math.floor(clock.now() / 1000)}.000000001` : null,
        createdAt: o.createdAt ?? clock.now(),
      })
      .run();
    return id;
  }

  const keyRow = (fingerprint: Uint8Array) => eq(signingKeys.fingerprint, Buffer.from(fingerprint));
  const recordRow = (id: string) => db.select().from(records).where(eq(records.id, id)).get()!;

  // Synchronous, from the stored rows (as the rest of this fixture reads them), so that it can be
  // called inside a synchronous SQLite transaction; the same fields the organisations service gives.
  function orgOf(orgId: string): FixtureOrg {
    const stored = db.select().from(organisations).where(eq(organisations.id, orgId)).get();
    if (stored === undefined) throw new Error(`records fixture: no organisation ${orgId}`);
    const { systemKeyFingerprint, ...org } = stored;
    const key = db.select().from(signingKeys).where(keyRow(systemKeyFingerprint)).get()!;
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
      const personId = Bun.randomUUIDv7();
      const seed = crypto.getRandomValues(new Uint8Array(32));
      const publicKey = publicKeyFromSeedWithNoble("ML-DSA-65", seed);
      const fingerprint = keyFingerprint({ algorithm: "ML-DSA-65", publicKey });
      db.insert(signingKeys)
        .values({ fingerprint: Buffer.from(fingerprint), algorithm: "ML-DSA-65", publicKey: Buffer.from(publicKey), purpose: `person:${personId}`, sealedSeed: null, createdAt: clock.now() })
        .run();
      return { personId, algorithm: "ML-DSA-65", seed, publicKey, fingerprint };
    },

    addOrgRecord(org, options) {
      return insertRecord({
        orgId: org.id,
        signerType: "org",
        kind: "record_only",
        signerHint: null,
        signerFingerprint: org.systemKey.fingerprint,
        sign: (payload) => signer.sign(org.systemKey, payload),
        options,
      });
    },

    addPersonRecord(person, options) {
      return insertRecord({
        orgId: options.orgId ?? null,
        signerType: "user",
        kind: "pdf_embedded",
        signerHint: options.hint ?? "A. Person (identity verified)",
        signerFingerprint: person.fingerprint,
        sign: (payload) => signWithNoble(person.algorithm, person.seed, payload, { deterministic: false }),
        options,
      });
    },

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
