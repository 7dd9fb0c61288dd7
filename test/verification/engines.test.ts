/**
 * Verification and the verification log against every storage engine (docs/verification.md,
 * docs/storage.md "Two engines"): embedded SQLite and a real PostgreSQL server the run shares
 * (test/support/postgres.ts), as test/storage/engines.test.ts runs the storage contract. The same
 * records give the same verdicts, matches and checks on both; a change made in the database (a
 * tampered signature, a suspension) reaches a verifier that has answered before; a large hash gives
 * the same matches in the same consensus order; and the log's pages and cursors work alike, across
 * two nodes of one database.
 */
import { DEFAULT_BATCH_POLICY } from "../../src/anchoring/journal/rules.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { createSigner } from "../../src/crypto/index.ts";
import { createOrganisations, type Organisation } from "../../src/keys/organisations.ts";
import { manualClock } from "../../src/lib/clock.ts";
import type { RecordLedger } from "../../src/records/ledger.ts";
import { createRecords } from "../../src/records/service.ts";
import { q, type Store } from "../../src/storage/store.ts";
import { createVerificationLog, type VerificationLog } from "../../src/verification/log/service.ts";
import { logDrivers, verificationDrivers, recordsDrivers } from "../support/drivers.ts";
import { createVerifier, MAX_MATCHES, type Verifier } from "../../src/verification/verify.ts";
import { useStoreEngines, type StoreEngine } from "../support/store-engines.ts";
import { createWriteQueue } from "../../src/records/write-queue.ts";

const { engines } = useStoreEngines();

const MASTER_KEY = new Uint8Array(32).fill(7);
const CURSOR_KEY = new Uint8Array(32).fill(3);
const links = { topicMessageUrl: (topic: string, n: number) => `https://mirror.example/${topic}/${n}` };

type Engine = StoreEngine;


const ENGINES: Engine[] = engines;

const hash = (label: string) => `sha256:${new Bun.CryptoHasher("sha256").update(label).digest("hex")}`;

/** What each engine answered, for the comparisons across engines at the end. */
const seen = new Map<string, Record<string, unknown>>();
const note = (engine: string, key: string, value: unknown) => {
  const m = seen.get(key) ?? {};
  m[engine] = value;
  seen.set(key, m);
};

for (const engine of ENGINES) {
  describe(`${engine.name}: verification`, () => {
    let store: Store;
    const clock = manualClock(Date.UTC(2026, 10, 24, 12));
    const signer = createSigner({ masterKey: MASTER_KEY, workers: 0 });
    let verifications = 0;
    const counting = { verify: (...args: Parameters<typeof signer.verify>) => (verifications++, signer.verify(...args)) };
    let orgs: ReturnType<typeof createOrganisations>;
    let recs: ReturnType<typeof createRecords>;
    let org: Organisation;
    let verifier: Verifier;
    let seq = 0;

    beforeAll(async () => {
      store = await engine.open();
      orgs = createOrganisations({ store, signer, clock });
      org = await orgs.create({ name: "Acme Certification Ltd", addon: true, apiAccess: true }, "alice");
      await store.write((tx, t) => q(tx.update(t.organisations).set({ topicId: "0.0.4321" }).where(eq(t.organisations.id, org.id))));
      let issued = 0;
      const ledger: RecordLedger = {
        newTransactionId: () => ({ transactionId: `0.0.2@1768469400.${String(++issued).padStart(9, "0")}`, validStartMs: 1_768_469_400_000, validSeconds: 120 }),
        wake() {},
        assertCapacity() {},
        batches: DEFAULT_BATCH_POLICY,
        transactionUrl: (id) => `https://hashscan.example/tx/${id}`,
        topicMessageUrl: links.topicMessageUrl,
      };
      recs = createRecords({ store, signer, clock, ledger, publicUrl: "https://verify.example.org", writes: createWriteQueue(recordsDrivers(store).writes) });
      verifier = createVerifier({ ...verificationDrivers(store), signer: counting, clock, links });
    });

    /** The record of `label`'s hash, created and then (unless told otherwise) anchored at `consensusAt`. */
    async function record(label: string, consensusAt: string | null = `1768469403.${String(++seq).padStart(9, "0")}`): Promise<string> {
      const created = await recs.create(org.id, { docHash: hash(label), filename: undefined });
      if (consensusAt !== null) await anchor(created.record.recordId, consensusAt);
      return created.record.recordId;
    }
    async function anchor(recordId: string, consensusAt: string): Promise<void> {
      const sequenceNumber = ++seq;
      await store.write((tx, t) =>
        q(tx.update(t.records).set({ anchorState: "anchored", sequenceNumber, consensusAt, topicId: "0.0.4321" }).where(eq(t.records.id, recordId))),
      );
    }
    const verify = async (label: string, tier: "public" | "organisation" = "public") => await verifier.verify({ docHash: hash(label), tier });

    test("verified_org: every check recomputed and passing, the organisation named at its tier", async () => {
      const id = await record("acme invoice");
      const answer = await verify("acme invoice", "organisation");
      expect(answer.verdict).toBe("verified_org");
      expect(answer.matches).toHaveLength(1);
      expect(answer.matches[0]).toMatchObject({
        recordId: id,
        kind: "record_only",
        status: "active",
        signerType: "org",
        signerStanding: "good_standing",
        signerOrg: "Acme Certification Ltd",
        checksPerformed: { hashBinding: "pass", userSignature: "pass", serverSeal: "pass", anchorStatus: "anchored" },
        anchor: { topicId: "0.0.4321", consensusAt: expect.stringMatching(/^2026-01-15T09:30:03\.\d{9}Z$/) },
      });
      const publicAnswer = await verify("acme invoice");
      expect(publicAnswer.matches[0]!.signerOrg).toBeUndefined();
      note(engine.name, "verified_org", { ...answer, matches: answer.matches.map((m) => ({ ...m, recordId: "", anchor: { ...m.anchor, transactionId: "", sequenceNumber: 0, consensusAt: "" } })) });
    });

    test("on SQLite the answer is synchronous, on PostgreSQL a promise", async () => {
      const r = verifier.verify({ docHash: hash("acme invoice"), tier: "public" });
      expect(r instanceof Promise).toBe(engine.name === "PostgreSQL");
      await r;
    });

    test("revoked, pending_anchor with retryAfterSeconds, no_record", async () => {
      const id = await record("revoked one");
      await recs.revoke(org.id, id, "SUPERSEDED");
      const revoked = await verify("revoked one");
      expect(revoked.verdict).toBe("revoked");
      expect(revoked.matches[0]).toMatchObject({ recordId: id, status: "revoked", revocation: { reason: "SUPERSEDED" } });

      const pending = await record("pending one", null);
      await store.write((tx, t) => q(tx.update(t.records).set({ anchorState: "accepted" }).where(eq(t.records.id, pending))));
      clock.advance(1_500);
      expect(await verify("pending one")).toEqual({ verdict: "pending_anchor", matches: [], retryAfterSeconds: 4 });
      clock.advance(10_000);
      expect(await verify("pending one")).toEqual({ verdict: "pending_anchor", matches: [], retryAfterSeconds: 2 });

      expect(await verify("never authenticated")).toEqual({ verdict: "no_record", matches: [] });
    });

    test("signature_invalid: a signature byte changed in the database is caught after a memoised verification", async () => {
      const id = await record("tampered later");
      expect((await verify("tampered later")).verdict).toBe("verified_org");
      const before = verifications;
      expect((await verify("tampered later")).verdict).toBe("verified_org");
      expect(verifications).toBe(before); // answered by the record memo
      await store.write(function* (tx, t) {
        const [row] = yield* q(tx.select({ signature: t.records.signature }).from(t.records).where(eq(t.records.id, id)));
        const signature = Buffer.from(row!.signature);
        signature[10]! ^= 0x01;
        yield* q(tx.update(t.records).set({ signature }).where(eq(t.records.id, id)));
      });
      const answer = await verify("tampered later");
      expect(answer.verdict).toBe("signature_invalid");
      expect(answer.matches[0]!.checksPerformed).toMatchObject({ hashBinding: "fail", userSignature: "fail", serverSeal: "fail" });
      // And again, now that this outcome is the memoised one.
      expect((await verify("tampered later")).verdict).toBe("signature_invalid");
    });

    test("an organisation suspended after a verification is shown suspended at the next", async () => {
      await record("standing");
      expect((await verify("standing")).matches[0]!.signerStanding).toBe("good_standing");
      expect((await verify("standing")).matches[0]!.signerStanding).toBe("good_standing");
      await orgs.set(org.id, { suspended: true }, "bob");
      const answer = await verify("standing", "organisation");
      expect(answer.verdict).toBe("verified_org");
      expect(answer.matches[0]!.signerStanding).toBe("suspended");
      await orgs.set(org.id, { suspended: false }, "bob");
      expect((await verify("standing")).matches[0]!.signerStanding).toBe("good_standing");
    });

    test("with the signature checks on the signing workers (verifyMany), the same answers as on this thread", async () => {
      const pooled = createSigner({ masterKey: MASTER_KEY, workers: 2, verifyOffThreadAbove: 0 });
      let offThread = 0;
      const onWorkers = createVerifier({
        ...verificationDrivers(store),
        signer,
        clock,
        links,
        memo: false,
        verifyMany: (calls) => ((offThread += calls.length), pooled.verifyMany(calls)),
      });
      const here = createVerifier({ ...verificationDrivers(store), signer, clock, links, memo: false });
      try {
        for (const label of ["acme invoice", "revoked one", "pending one", "tampered later", "standing", "never authenticated"]) {
          for (const tier of ["public", "organisation"] as const) {
            expect(await onWorkers.verify({ docHash: hash(label), tier })).toEqual(await here.verify({ docHash: hash(label), tier }));
          }
        }
        expect(offThread).toBe(2 * 2 * 4); // two checks, two tiers, four labels with an anchored record
        expect(pooled.workersRunning()).toBeGreaterThan(0);
      } finally {
        pooled.clearCache();
      }
    });

    test(
      `a large hash (more than ${MAX_MATCHES} records): exactly ${MAX_MATCHES} matches in consensus order, the verdict from a record beyond them`,
      async () => {
        // Create, anchor and revoke again and again: revoked records for ever, then one active one
        // whose consensus comes last. Seconds of nine and ten digits: as text "1000000000.…" sorts
        // before "999999999.…", in consensus order it is later.
        const label = "many records";
        const consensus: string[] = [];
        for (let i = 0; i < MAX_MATCHES + 8; i++) {
          const seconds = i % 3 === 0 ? 1_000_000_000 + i : 999_999_000 + i;
          consensus.push(`${seconds}.${String(i * 7).padStart(9, "0")}`);
        }
        consensus[consensus.length - 1] = "1999999999.000000000"; // the active one, last of all
        const bySeq = new Map<number, string>();
        const idAt = new Map<string, string>();
        for (const [i, at] of consensus.entries()) {
          const id = await record(label, at);
          bySeq.set(seq, at);
          idAt.set(at, id);
          if (i < consensus.length - 1) await recs.revoke(org.id, id, "SUPERSEDED");
        }
        const answer = await verify(label);
        expect(answer.verdict).toBe("verified_org");
        expect(answer.matches).toHaveLength(MAX_MATCHES);
        expect(answer.matches.every((m) => m.status === "revoked" && m.checksPerformed.userSignature === "pass")).toBe(true);
        const revokedInOrder = [...consensus.slice(0, -1)].sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
        expect(answer.matches.map((m) => bySeq.get(m.anchor.sequenceNumber))).toEqual(revokedInOrder.slice(0, MAX_MATCHES));
        note(engine.name, "large hash", answer.matches.map((m) => bySeq.get(m.anchor.sequenceNumber)));
        // Memoised or not, the same answer.
        expect(await verify(label)).toEqual(answer);
        // A corrupt anchored row without consensus time sorts first (NULL first, as SQLite orders
        // it), so even the latest record, far beyond the matches, is met and refused (a 500).
        const latestRevoked = idAt.get(revokedInOrder.at(-1)!)!;
        await store.write((tx, t) => q(tx.update(t.records).set({ consensusAt: null }).where(eq(t.records.id, latestRevoked))));
        await expect(verify(label)).rejects.toThrow(`record ${latestRevoked} is anchored without sequence number or consensus time`);
      },
      60_000,
    );
  });

  describe(`${engine.name}: the verification log`, () => {
    let nodeA: Store;
    let nodeB: Store;
    let org: Organisation;
    const clock = manualClock(Date.UTC(2026, 10, 24, 12));
    let logA: VerificationLog;
    let logB: VerificationLog;
    const written: string[] = [];

    beforeAll(async () => {
      [nodeA, nodeB] = await engine.openPair();
      const signer = createSigner({ masterKey: MASTER_KEY, workers: 0 });
      org = await createOrganisations({ store: nodeA, signer, clock }).create({ name: "Log Org" }, "alice");
      logA = createVerificationLog({ store: logDrivers(nodeA).log, clock, cursorKey: CURSOR_KEY, maxBatch: 4 });
      logB = createVerificationLog({ store: logDrivers(nodeB).log, clock, cursorKey: CURSOR_KEY });
      // Ten rows at once: batches of at most four, each acknowledged once committed.
      const acks = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          logA.record({ orgId: org.id, environment: "live", keyId: "key-1", verdict: i === 3 ? "pending_anchor" : "verified_org", docHash: hash(`log ${i}`), reference: `ref ${i}`, ...(i === 3 ? { retryAfterSeconds: 4 } : {}) }),
        ),
      );
      for (const a of acks) written.push(a.verificationId);
      clock.advance(5);
    });
    afterAll(async () => {
      await logA.close();
      await logB.close();
    });

    test("rows are acknowledged once committed, in order, and read back by another node at once", async () => {
      expect([...written].sort()).toEqual(written); // ids increase in the order rows were recorded
      expect(logA.stats()).toMatchObject({ rows: 10, failedBatches: 0 });
      expect(logA.stats().batches).toBeGreaterThanOrEqual(3);
      const got = await logB.get({ orgId: org.id, environment: "live", verificationId: written[3]! });
      expect(got).toMatchObject({ verificationId: written[3], verdict: "pending_anchor", reference: "ref 3", retryAfterSeconds: 4, matches: [] });
      await expect(Promise.resolve().then(() => logB.get({ orgId: org.id, environment: "test", verificationId: written[3]! }))).rejects.toMatchObject({ code: "NOT_FOUND" });
    });

    test("first page, next page by its cursor on the same node, the rest on another node", async () => {
      const newestFirst = [...written].reverse();
      const first = await logA.list({ orgId: org.id, environment: "live", filters: {}, limit: 4 });
      expect(first.data.map((d) => d.verificationId)).toEqual(newestFirst.slice(0, 4));
      expect(first.pagination.hasMore).toBe(true);
      const second = await logA.list({ orgId: org.id, environment: "live", filters: {}, limit: 4, after: first.pagination.nextCursor! });
      expect(second.data.map((d) => d.verificationId)).toEqual(newestFirst.slice(4, 8));
      // A cursor made by node A, accepted by node B (same database, same cursor key).
      const rest = JSON.parse(await logB.listJson({ orgId: org.id, environment: "live", filters: {}, limit: 4, after: second.pagination.nextCursor! }));
      expect(rest.data.map((d: { verificationId: string }) => d.verificationId)).toEqual(newestFirst.slice(8));
      expect(rest.pagination).toEqual({ nextCursor: null, hasMore: false });
      note(engine.name, "cursor length", first.pagination.nextCursor!.length);
      // Filters work the same: the one pending_anchor row.
      const pending = await logB.list({ orgId: org.id, environment: "live", filters: { verdict: "pending_anchor" }, limit: 10 });
      expect(pending.data.map((d) => d.verificationId)).toEqual([written[3]!]);
    });

    test("a tampered cursor is refused, with the same error on every engine", async () => {
      const first = await logA.list({ orgId: org.id, environment: "live", filters: {}, limit: 2 });
      const cursor = first.pagination.nextCursor!;
      const tampered = cursor.slice(0, 30) + (cursor[30] === "A" ? "B" : "A") + cursor.slice(31);
      const refusal = await Promise.resolve()
        .then(() => logB.list({ orgId: org.id, environment: "live", filters: {}, limit: 2, after: tampered }))
        .then(
          () => null,
          (e: unknown) => e as { code: string; message: string; details?: unknown },
        );
      expect(refusal).toMatchObject({ code: "VALIDATION_FAILED" });
      note(engine.name, "tampered cursor", { code: refusal!.code, message: refusal!.message, details: refusal!.details });
      // With other filters, the untampered cursor is refused alike.
      await expect(Promise.resolve().then(() => logB.list({ orgId: org.id, environment: "live", filters: { verdict: "verified_org" }, limit: 2, after: cursor }))).rejects.toMatchObject({
        code: "VALIDATION_FAILED",
      });
    });
  });
}

describe("both engines answer alike", () => {
  for (const key of ["verified_org", "large hash", "cursor length", "tampered cursor"]) {
    test(key, () => {
      const answers = seen.get(key)!;
      expect(Object.keys(answers).sort()).toEqual(["PostgreSQL", "SQLite"]);
      expect(answers["PostgreSQL"]).toEqual(answers["SQLite"]);
    });
  }
});
