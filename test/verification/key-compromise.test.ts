/**
 * A key declared compromised, as verification answers it (docs/signing.md "Key lifecycle"), on
 * both engines: in a run of records, those signed before `since` stay verified_org, those at or
 * after it are revoked with reason KEY_COMPROMISE, revoked at the declaration's time until the
 * key_compromise message is anchored and at its consensus time after; a record revoked earlier on
 * its own keeps its own revocation; records signed with the key that replaced it verify. The
 * compromised keys are read once per value of the change counter, never once per verification.
 */
import { DEFAULT_BATCH_POLICY } from "../../src/anchoring/journal/rules.ts";
import { beforeAll, describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { journalRules } from "../../src/anchoring/journal/rules.ts";
import { createTransactionIds } from "../../src/anchoring/transaction-ids.ts";
import { createSigner } from "../../src/crypto/index.ts";
import { createOrganisations, type Organisation } from "../../src/keys/organisations.ts";
import { manualClock } from "../../src/lib/clock.ts";
import { rfc3339Ms } from "../../src/lib/formats.ts";
import type { RecordLedger } from "../../src/records/ledger.ts";
import { createRecords } from "../../src/records/service.ts";
import { createWriteQueue } from "../../src/records/write-queue.ts";
import { q, type Store } from "../../src/storage/store.ts";
import type { VerificationReads } from "../../src/verification/ports.ts";
import { createVerifier, type Verifier } from "../../src/verification/verify.ts";
import { journalDrivers, recordsDrivers, verificationDrivers } from "../support/drivers.ts";
import { useStoreEngines } from "../support/store-engines.ts";

const { engines } = useStoreEngines();
const TOPIC = "0.0.4321";
const links = { topicMessageUrl: (topic: string, n: number) => `https://mirror.example/${topic}/${n}` };
const hash = (label: string) => `sha256:${new Bun.CryptoHasher("sha256").update(label).digest("hex")}`;

for (const engine of engines) {
  describe(`${engine.name}: a compromised key in verification`, () => {
    let store: Store;
    const clock = manualClock(Date.UTC(2026, 10, 24, 12));
    const signer = createSigner({ masterKey: new Uint8Array(32).fill(7), workers: 0 });
    let orgs: ReturnType<typeof createOrganisations>;
    let recs: ReturnType<typeof createRecords>;
    let org: Organisation;
    let verifier: Verifier;
    let compromiseReads = 0;
    let seq = 0;

    beforeAll(async () => {
      store = await engine.open();
      orgs = createOrganisations({ store, signer, clock });
      org = await orgs.create({ name: "Acme Ltd", addon: true, apiAccess: true }, "alice");
      await store.write((tx, t) => q(tx.update(t.organisations).set({ topicId: TOPIC }).where(eq(t.organisations.id, org.id))));
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
      const { reads } = verificationDrivers(store);
      const counted: VerificationReads = { ...reads, compromisedKeys: () => (compromiseReads++, reads.compromisedKeys()) } as VerificationReads;
      verifier = createVerifier({ reads: counted, signer, clock, links });
    });

    /** A record of `label`, signed now, anchored (the record and its message). */
    async function record(label: string): Promise<string> {
      const created = await recs.create(org.id, { docHash: hash(label), filename: undefined });
      const n = ++seq;
      const consensusAt = `1768469403.${String(n).padStart(9, "0")}`;
      await store.write(function* (tx, t) {
        yield* q(tx.update(t.records).set({ anchorState: "anchored", sequenceNumber: n, consensusAt }).where(eq(t.records.id, created.record.recordId)));
        yield* q(tx.update(t.ledgerTransactions).set({ state: "anchored", sequenceNumber: n, consensusAt }).where(eq(t.ledgerTransactions.recordId, created.record.recordId)));
      });
      return created.record.recordId;
    }
    const verify = async (label: string) => await verifier.verify({ docHash: hash(label), tier: "public" });

    test("since in the middle of a run: earlier records verified_org, later ones revoked KEY_COMPROMISE at the declaration, then at the consensus time", async () => {
      const labels = ["run 1", "run 2", "run 3", "run 4"];
      const signedAt: number[] = [];
      for (const l of labels) {
        signedAt.push(clock.now());
        await record(l);
        clock.advance(60_000);
      }
      // Revoked on its own before the declaration: keeps its own, earlier revocation.
      await recs.revoke(org.id, (await verify("run 4")).matches[0]!.recordId, "SUPERSEDED");
      for (const l of labels.slice(0, 3)) expect((await verify(l)).verdict).toBe("verified_org");

      clock.advance(60_000);
      const declaredAt = clock.now();
      const declared = await orgs.declareKeyCompromised(org.id, { sinceMs: signedAt[1]! }, "alice");
      expect(declared.rotation).not.toBeNull();

      expect((await verify("run 1")).verdict).toBe("verified_org");
      for (const l of ["run 2", "run 3"]) {
        const answer = await verify(l);
        expect(answer.verdict).toBe("revoked");
        expect(answer.matches[0]).toMatchObject({ status: "revoked", revocation: { reason: "KEY_COMPROMISE", revokedAt: rfc3339Ms(declaredAt) } });
      }
      expect((await verify("run 4")).matches[0]).toMatchObject({ status: "revoked", revocation: { reason: "SUPERSEDED" } });

      // Signed from now on with the key that replaced it: verified.
      await record("after");
      expect((await verify("after")).verdict).toBe("verified_org");

      // The key_compromise message anchored (the anchor loop's journal): revoked at its consensus time.
      if (store.engine === "postgres") await store.write((tx) => q(tx.execute(sql`UPDATE anchor_leader SET epoch = 1, node = 'test' WHERE id = 1`)));
      const ids = createTransactionIds({ clock, operator: "0.0.2", validSeconds: 30, backdateMs: 0, lastValidStartNs: 0n });
      const journal = journalDrivers(store, { epoch: () => 1 }).journal(journalRules(clock, ids));
      const [wanted] = await journal.keysWantingCompromiseMessage();
      const queued = (await journal.queueCompromise(wanted!, new TextEncoder().encode('{"v":1,"type":"key_compromise"}')))!;
      await journal.grouped.toAnchoredMessage(queued, { sequenceNumber: 99, consensusAt: "1798200000.250000000", runningHash: new Uint8Array(48) });
      expect((await verify("run 2")).matches[0]).toMatchObject({ revocation: { reason: "KEY_COMPROMISE", revokedAt: "2026-12-25T12:00:00.250Z" } });
      expect((await verify("run 1")).verdict).toBe("verified_org");
    });

    test("the compromised keys are read once per change of the counter, not per verification", async () => {
      await verify("run 1");
      const before = compromiseReads;
      for (let i = 0; i < 5; i++) {
        await verify("run 1");
        await verify("run 2");
      }
      expect(compromiseReads).toBe(before);
      await orgs.set(org.id, { validated: true }, "alice"); // raises the counter
      await verify("run 2");
      await verify("run 3");
      expect(compromiseReads).toBe(before + 1);
    });
  });
}
