/**
 * Record creation across an organisation's key rotation (docs/signing.md "Key lifecycle"), on
 * both engines: a record's creation message names the key that signed it (it waits for that key's
 * announcement, and the next key's announcement waits for it), and a record signed with a key that
 * a rotation replaced before its write committed is signed again with the new key, so no message
 * of an old key is written after the rotation.
 */
import { DEFAULT_BATCH_POLICY } from "../../src/anchoring/journal/rules.ts";
import { beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { createSigner } from "../../src/crypto/index.ts";
import { createOrganisations, type Organisation } from "../../src/keys/organisations.ts";
import { manualClock } from "../../src/lib/clock.ts";
import type { RecordLedger } from "../../src/records/ledger.ts";
import { createRecords } from "../../src/records/service.ts";
import { createWriteQueue, type RecordWriter } from "../../src/records/write-queue.ts";
import { insertSigningKey } from "../../src/storage/signing-keys.ts";
import { q, type Store } from "../../src/storage/store.ts";
import { recordsDrivers } from "../support/drivers.ts";
import { useStoreEngines } from "../support/store-engines.ts";

const { engines } = useStoreEngines();
const hash = (label: string) => `sha256:${new Bun.CryptoHasher("sha256").update(label).digest("hex")}`;
const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

for (const engine of engines) {
  describe(`${engine.name}: records across a key rotation`, () => {
    let store: Store;
    const clock = manualClock(Date.UTC(2026, 10, 24, 12));
    const signer = createSigner({ masterKey: new Uint8Array(32).fill(7), workers: 0 });
    let orgs: ReturnType<typeof createOrganisations>;
    let org: Organisation;
    /** Rotations to make just before the next writes run: the race a rotation makes with record creation. */
    let rotateBeforeWrite = 0;
    let recs: ReturnType<typeof createRecords>;

    beforeAll(async () => {
      store = await engine.open();
      orgs = createOrganisations({ store, signer, clock });
      org = await orgs.create({ name: "Acme Ltd", addon: true, apiAccess: true }, "alice");
      await store.write((tx, t) => q(tx.update(t.organisations).set({ topicId: "0.0.4321" }).where(eq(t.organisations.id, org.id))));
      let issued = 0;
      const ledger: RecordLedger = {
        newTransactionId: () => ({ transactionId: `0.0.2@1768469400.${String(++issued).padStart(9, "0")}`, validStartMs: 1_768_469_400_000, validSeconds: 120 }),
        wake() {},
        assertCapacity() {},
        batches: DEFAULT_BATCH_POLICY,
        transactionUrl: (id) => `https://hashscan.example/tx/${id}`,
        topicMessageUrl: (topic, n) => `https://mirror.example/${topic}/${n}`,
      };
      const inner = createWriteQueue(recordsDrivers(store).writes);
      const writes: RecordWriter = {
        async write(body) {
          if (rotateBeforeWrite > 0) {
            rotateBeforeWrite--;
            // The organisation's key changed under the record, as a rotation commits it (without its refusal of a second one).
            const key = signer.generateKey(`org:${org.id}`);
            await store.write(function* (tx, t) {
              yield* insertSigningKey(tx, t, key, clock.now());
              yield* q(tx.update(t.organisations).set({ systemKeyFingerprint: Buffer.from(key.fingerprint) }).where(eq(t.organisations.id, org.id)));
            });
          }
          return inner.write(body);
        },
      };
      recs = createRecords({ store, signer, clock, ledger, publicUrl: "https://verify.example.org", writes });
    });

    const currentKey = async () => hex((await store.read((db, t) => q(db.select().from(t.organisations).where(eq(t.organisations.id, org.id)))))[0]!.systemKeyFingerprint);
    const written = async (recordId: string) => {
      const [record] = await store.read((db, t) => q(db.select().from(t.records).where(eq(t.records.id, recordId))));
      const [message] = await store.read((db, t) => q(db.select().from(t.ledgerTransactions).where(eq(t.ledgerTransactions.recordId, recordId))));
      return { signer: hex(record!.signerFingerprint), messageKey: message!.keyFingerprint === null ? null : hex(message!.keyFingerprint) };
    };

    test("the creation message names the key that signed the record", async () => {
      const { record } = await recs.create(org.id, { docHash: hash("one"), filename: undefined });
      const key = await currentKey();
      expect(await written(record.recordId)).toEqual({ signer: key, messageKey: key });
    });

    test("a rotation committed between signing and writing: the record is signed again with the new key", async () => {
      const before = await currentKey();
      rotateBeforeWrite = 1;
      const { record } = await recs.create(org.id, { docHash: hash("two"), filename: undefined });
      const after = await currentKey();
      expect(after).not.toBe(before);
      expect(await written(record.recordId)).toEqual({ signer: after, messageKey: after });
    });

    test("rotations without end (never in practice): refused after three signatures, nothing written", async () => {
      rotateBeforeWrite = 3;
      await expect(recs.create(org.id, { docHash: hash("three"), filename: undefined })).rejects.toThrow("rotated while the record was signed, three times in a row");
      expect(rotateBeforeWrite).toBe(0);
      const rows = await store.read((db, t) => q(db.select().from(t.records).where(eq(t.records.docHash, hash("three")))));
      expect(rows).toEqual([]);
    });
  });
}
