/**
 * The contract of verification's storage port (src/verification/ports.ts `VerificationReads`),
 * run on every engine (test/support/store-engines.ts): each method's MUST, against rows written
 * straight into the tables. The verifier over it is tested in verify.test.ts and engines.test.ts.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { q, type Store } from "../../src/storage/store.ts";
import { verificationDrivers } from "../support/drivers.ts";
import { MAX_MATCHES } from "../../src/storage/verification-statements.ts";
import type { HashRow, HeadRow, VerificationReads, VerifyRow } from "../../src/verification/ports.ts";
import { useStoreEngines } from "../support/store-engines.ts";

const { engines } = useStoreEngines();

const hash = (label: string) => `sha256:${new Bun.CryptoHasher("sha256").update(label).digest("hex")}`;
const bytes = (n: number, fill: number) => Buffer.alloc(n, fill);
const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

const ORG_KEY = bytes(32, 1);
const PERSON_KEY = bytes(32, 2);
const OLD_PERSON_KEY = bytes(32, 7);
const SEAL_KEY = bytes(32, 3);
const UNKNOWN_KEY = bytes(32, 9);
const ORG = "org-acme";

/** The columns verification reads of a record (every one but the filename and the revocation's transaction). */
const VERIFY_COLUMNS = [
  "id", "org_id", "signer_type", "kind", "signer_hint", "doc_hash", "signed_at_ms", "signer_fingerprint", "signature", "seal_fingerprint", "seal_signature",
  "anchor_state", "topic_id", "transaction_id", "sequence_number", "consensus_at", "revoked_at", "revocation_reason", "created_at",
].sort();

/** Consensus order (`CONSENSUS_ORDER`) over well-formed rows: a shorter time first, then the text, then the id. */
const consensusOrder = (a: { consensus_at: string | null; id: string }, b: { consensus_at: string | null; id: string }) =>
  (a.consensus_at!.length - b.consensus_at!.length) || (a.consensus_at! < b.consensus_at! ? -1 : a.consensus_at! > b.consensus_at! ? 1 : 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

interface Rec {
  id: string;
  docHash: string;
  signerType?: "org" | "user";
  anchorState?: "pending" | "accepted" | "anchored" | "abandoned";
  consensusAt?: string | null;
  revokedAt?: number | null;
  createdAt?: number;
  orgId?: string | null;
}

for (const engine of engines) {
  describe(`${engine.name}: VerificationReads`, () => {
    let store: Store;
    let reads: VerificationReads;
    let seq = 0;

    async function insert(recs: readonly Rec[]): Promise<void> {
      await store.write((tx, t) =>
        q(
          tx.insert(t.records).values(
            recs.map((r) => {
              const user = r.signerType === "user";
              const anchored = (r.anchorState ?? "anchored") === "anchored";
              return {
                id: r.id,
                orgId: r.orgId === undefined ? ORG : r.orgId,
                signerType: r.signerType ?? "org",
                kind: "record_only",
                signerHint: user ? "Alice" : null,
                docHash: r.docHash,
                filename: "not read.pdf",
                signedAtMs: 1_768_469_400_000 + ++seq,
                signerFingerprint: user ? PERSON_KEY : ORG_KEY,
                signature: bytes(64, seq % 256),
                sealFingerprint: SEAL_KEY,
                sealSignature: bytes(64, (seq + 1) % 256),
                anchorState: r.anchorState ?? "anchored",
                topicId: "0.0.4321",
                transactionId: `0.0.2@1768469400.${String(seq).padStart(9, "0")}`,
                sequenceNumber: anchored ? seq : null,
                consensusAt: r.consensusAt !== undefined ? r.consensusAt : anchored ? `1768469403.${String(seq).padStart(9, "0")}` : null,
                revokedAt: r.revokedAt ?? null,
                revocationReason: r.revokedAt != null ? "SUPERSEDED" : null,
                revocationTransactionId: r.revokedAt != null ? "0.0.2@1768469401.000000001" : null,
                createdAt: r.createdAt ?? 1_768_469_400_000 + seq,
              };
            }),
          ),
        ),
      );
    }
    const counter = () => store.read((db, t) => q(db.select({ value: t.changeCounter.value }).from(t.changeCounter).where(eq(t.changeCounter.id, 1)))).then((r) => r[0]!.value);
    const sortById = <R extends { id: string }>(rows: readonly R[]) => [...rows].sort((a, b) => (a.id < b.id ? -1 : 1));

    beforeAll(async () => {
      store = await engine.open();
      reads = verificationDrivers(store).reads;
      await store.write(function* (tx, t) {
        for (const [fingerprint, algorithm] of [[ORG_KEY, "ml-dsa-65"], [PERSON_KEY, "ml-dsa-65"], [SEAL_KEY, "ml-dsa-65"]] as const) {
          // A person's key is stored with purpose person:<id>, as enrolment stores it.
          yield* q(tx.insert(t.signingKeys).values({ fingerprint, algorithm, publicKey: bytes(1952, fingerprint[0]!), purpose: fingerprint === PERSON_KEY ? "person:person-alice" : "test", createdAt: 1 }));
        }
        // Alice's key before she re-enrolled: her standing still applies to what it signed.
        yield* q(tx.insert(t.signingKeys).values({ fingerprint: OLD_PERSON_KEY, algorithm: "ml-dsa-65", publicKey: bytes(1952, 9), purpose: "person:person-alice", createdAt: 1, retiredAt: 2 }));
        yield* q(tx.insert(t.organisations).values({ id: ORG, name: "Acme Certification Ltd", createdAt: 1, systemKeyFingerprint: ORG_KEY }));
        yield* q(tx.insert(t.organisations).values({ id: "org-suspended", name: "Suspended Ltd", suspended: true, createdAt: 1, systemKeyFingerprint: ORG_KEY }));
        yield* q(tx.insert(t.persons).values({ id: "person-alice", orgId: ORG, name: "Alice", email: "alice@example.org", identityEvidence: "passport", suspended: true, keyFingerprint: PERSON_KEY, createdAt: 1 }));
      });
    });

    test("interleaves: false exactly when every method answers synchronously (SQLite), true with promises (PostgreSQL)", async () => {
      expect(reads.interleaves).toBe(engine.name === "PostgreSQL");
      const answers = [reads.recordHeads(hash("none")), reads.recordsByHash(hash("none")), reads.largeHash(hash("none")), reads.context({ keys: [hex(ORG_KEY)], orgs: [ORG], persons: [] })];
      for (const a of answers) expect(a instanceof Promise).toBe(reads.interleaves);
      await Promise.all(answers);
    });

    test("recordsByHash: every record of the hash in any state, read whole, each with its key and the change counter; none of another hash", async () => {
      const h = hash("small");
      await insert([
        { id: "small-1", docHash: h },
        { id: "small-2", docHash: h, anchorState: "accepted", orgId: "org-suspended" },
        { id: "small-3", docHash: h, revokedAt: 1_768_469_500_000 },
        { id: "small-4", docHash: h, signerType: "user" },
        { id: "other-1", docHash: hash("other") },
      ]);
      const gen = await counter();
      const whole = sortById(await reads.recordsByHash(h));
      expect(whole.map((r) => r.id)).toEqual(["small-1", "small-2", "small-3", "small-4"]);
      for (const r of whole) {
        expect(Object.keys(r).sort()).toEqual([...VERIFY_COLUMNS, "gen", "rid"].sort());
        expect(r.gen).toBe(gen);
        expect(typeof r.rid).toBe(engine.name === "SQLite" ? "number" : "string");
        expect(typeof r.signed_at_ms).toBe("number");
        expect(typeof r.created_at).toBe("number");
        expect(r.signer_fingerprint).toBeInstanceOf(Uint8Array);
        expect(r.signature).toBeInstanceOf(Uint8Array);
      }
      expect(whole[0]).toMatchObject({ anchor_state: "anchored", sequence_number: expect.any(Number), revoked_at: null, org_id: ORG, signer_type: "org" });
      expect(whole[1]).toMatchObject({ anchor_state: "accepted", sequence_number: null, consensus_at: null });
      expect(whole[2]).toMatchObject({ revoked_at: 1_768_469_500_000, revocation_reason: "SUPERSEDED" });
      expect(Buffer.from(whole[3]!.signer_fingerprint).equals(PERSON_KEY)).toBe(true);
      expect(await reads.recordsByHash(hash("never stored"))).toEqual([]);
    });

    test("recordHeads: the same rows without the two signatures, read again once anything was committed", async () => {
      const h = hash("small");
      const without = (r: HashRow): HeadRow => {
        const { signature: _s, seal_signature: _ss, ...rest } = r;
        return rest;
      };
      const heads = sortById(await reads.recordHeads(h));
      expect(heads).toEqual(sortById(await reads.recordsByHash(h)).map(without));
      for (const r of heads) expect("signature" in r || "seal_signature" in r).toBe(false);
      // A change committed since (a revocation, which also raises the counter) is seen at once.
      await store.write((tx, t) => q(tx.update(t.records).set({ revokedAt: 1_768_469_600_000, revocationReason: "OTHER" }).where(eq(t.records.id, "small-1"))));
      const after = sortById(await reads.recordHeads(h));
      expect(after[0]).toMatchObject({ id: "small-1", revoked_at: 1_768_469_600_000, gen: await counter() });
      expect(after).toEqual(sortById(await reads.recordsByHash(h)).map(without));
    });

    test("recordHeads: a change another connection commits (another process, another node) is seen at the next read", async () => {
      const [mine, other] = await engine.openPair();
      const h = hash("two connections");
      const kept = verificationDrivers(mine).reads;
      for (const s of [mine, other]) {
        await s.write(function* (tx, t) {
          yield* q(tx.insert(t.signingKeys).values({ fingerprint: ORG_KEY, algorithm: "ml-dsa-65", publicKey: bytes(1952, 1), purpose: "test", createdAt: 1 }).onConflictDoNothing());
          yield* q(tx.insert(t.signingKeys).values({ fingerprint: SEAL_KEY, algorithm: "ml-dsa-65", publicKey: bytes(1952, 3), purpose: "test", createdAt: 1 }).onConflictDoNothing());
          yield* q(tx.insert(t.organisations).values({ id: ORG, name: "Acme Certification Ltd", createdAt: 1, systemKeyFingerprint: ORG_KEY }).onConflictDoNothing());
        });
      }
      const insertVia = async (s: Store, id: string) => {
        const saved = store;
        store = s;
        try {
          await insert([{ id, docHash: h, revokedAt: 1 }]);
        } finally {
          store = saved;
        }
      };
      await insertVia(mine, "two-1");
      expect((await kept.recordHeads(h)).map((r) => r.id)).toEqual(["two-1"]);
      expect((await kept.recordHeads(h)).map((r) => r.id)).toEqual(["two-1"]);
      await insertVia(other, "two-2");
      expect(sortById(await kept.recordHeads(h)).map((r) => r.id)).toEqual(["two-1", "two-2"]);
    });

    describe("a hash with more than MAX_MATCHES records", () => {
      const h = hash("large");
      const revoked = MAX_MATCHES + 5;
      beforeAll(async () => {
        // Revoked records first in consensus order (so they fill the page), some with a shorter,
        // earlier, consensus time; then the active organisation's and the person's, beyond it.
        const recs: Rec[] = [];
        for (let i = 0; i < revoked; i++) {
          recs.push({ id: `large-r${String(i).padStart(3, "0")}`, docHash: h, revokedAt: 1_768_469_500_000, consensusAt: i % 7 === 0 ? `999999999.${String(i).padStart(9, "0")}` : `1768469403.${String(revoked - i).padStart(9, "0")}` });
        }
        recs.push({ id: "large-user", docHash: h, signerType: "user", consensusAt: "1768469999.000000001" });
        recs.push({ id: "large-org", docHash: h, consensusAt: "1768469999.000000000" });
        recs.push({ id: "large-accepted", docHash: h, anchorState: "accepted", createdAt: 1_768_469_999_999, orgId: "org-suspended" });
        await insert(recs);
      });

      test("recordHeads and recordsByHash stop at MAX_MATCHES + 1 rows", async () => {
        expect(await reads.recordHeads(h)).toHaveLength(MAX_MATCHES + 1);
        expect(await reads.recordsByHash(h)).toHaveLength(MAX_MATCHES + 1);
      });

      test("largeHash: the counter, the first MAX_MATCHES anchored records in consensus order, and beyond them the earliest of each class they lack, read whole in one snapshot", async () => {
        const read = await reads.largeHash(h);
        expect(read.gen).toBe(await counter());
        const all = sortById(await store.read((db, t) => q(db.select({ id: t.records.id, consensus_at: t.records.consensusAt, anchorState: t.records.anchorState }).from(t.records).where(eq(t.records.docHash, h)))));
        const anchored = all.filter((r) => r.anchorState === "anchored").sort(consensusOrder);
        expect(read.page.map((r) => r.id)).toEqual(anchored.slice(0, MAX_MATCHES).map((r) => r.id));
        expect(read.beyond.map((r) => r.id)).toEqual(["large-org", "large-user"]);
        for (const r of [...read.page, ...read.beyond] as VerifyRow[]) {
          expect(Object.keys(r).sort()).toEqual(VERIFY_COLUMNS);
          expect(r.doc_hash).toBe(h);
        }
        expect(read.newest).toBeNull();
      });

      test("largeHash of a hash without anchored records: nothing to read whole, and when the newest awaiting consensus was stored", async () => {
        const pending = hash("only accepted");
        await insert([
          { id: "acc-1", docHash: pending, anchorState: "accepted", createdAt: 5 },
          { id: "acc-2", docHash: pending, anchorState: "accepted", createdAt: 9, signerType: "user" },
          { id: "acc-3", docHash: pending, anchorState: "abandoned", createdAt: 12 },
        ]);
        expect(await reads.largeHash(pending)).toEqual({ gen: await counter(), page: [], beyond: [], newest: 9 });
        expect(await reads.largeHash(hash("never stored"))).toEqual({ gen: await counter(), page: [], beyond: [], newest: null });
      });
    });

    test("context: the key rows, organisations and persons asked for that exist, by lower-case hex or id; the rest absent", async () => {
      const found = await reads.context({ keys: [hex(ORG_KEY), hex(SEAL_KEY), hex(UNKNOWN_KEY)], orgs: [ORG, "org-suspended", "org-missing"], persons: [hex(PERSON_KEY), hex(OLD_PERSON_KEY), hex(ORG_KEY)] });
      expect([...found.keys.keys()].sort()).toEqual([hex(ORG_KEY), hex(SEAL_KEY)].sort());
      expect(found.keys.get(hex(ORG_KEY))!.algorithm).toBe("ml-dsa-65");
      expect(Buffer.from(found.keys.get(hex(SEAL_KEY))!.public_key).equals(bytes(1952, 3))).toBe(true);
      expect(found.orgs).toEqual(new Map([[ORG, { name: "Acme Certification Ltd", suspended: 0 }], ["org-suspended", { name: "Suspended Ltd", suspended: 1 }]]));
      expect(found.persons).toEqual(new Map([[hex(PERSON_KEY), true], [hex(OLD_PERSON_KEY), true]]));
      const none = await reads.context({ keys: [], orgs: [], persons: [] });
      expect([none.keys.size, none.orgs.size, none.persons.size]).toEqual([0, 0, 0]);
    });

    test("caches: what the driver keeps, each within its budget", () => {
      for (const c of reads.caches()) {
        const s = c.stats();
        expect(s.bytes).toBeLessThanOrEqual(s.maxBytes);
      }
      expect(reads.caches().map((c) => c.name)).toEqual(engine.name === "SQLite" ? ["verification_record_heads"] : []);
    });
  });
}
