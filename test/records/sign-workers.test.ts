/**
 * Record creation over the signing workers (src/crypto/sign-pool.ts): the service's default
 * signer signs on them, a worker that dies while it holds a record's signatures fails that
 * request cleanly (500, nothing written: no record, no ledger message), and the next request
 * is signed by a fresh worker and is durable when it is answered.
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { DATABASE_FILE } from "../../src/app/core.ts";
import { loadOrCreateMasterKey } from "../../src/crypto/index.ts";
import { createSigner, SignWorkerError } from "../../src/crypto/index.ts";
import { recordsRoutes } from "../../src/http/routes/v1-records.ts";
import { createHttp } from "../../src/http/server.ts";
import { createRecords } from "../../src/records/service.ts";
import { cleanup, tempDir } from "../support/env.ts";
import { EXIT_DOC_HASH, THROW_DOC_HASH } from "../crypto/support/crash-marker.ts";
import { HASH, harness, stubAccess } from "./fixtures.ts";
import { recordsDrivers } from "../support/drivers.ts";
import { createWriteQueue } from "../../src/records/write-queue.ts";

afterAll(cleanup);

const CRASHING = new URL("../crypto/support/crashing-sign-worker.ts", import.meta.url);

describe("record creation on signing workers", () => {
  test("the service's signer signs on its workers, started by the first record", async () => {
    const h = harness();
    const org = await h.org();
    expect(h.core.signer.workersRunning()).toBe(0);
    expect((await h.create(org, { originalDocHash: HASH("w-1") })).status).toBe(201);
    expect(h.core.signer.workersRunning()).toBeGreaterThan(0);
  });

  for (const [how, docHash] of [
    ["throws", THROW_DOC_HASH],
    ["ends its thread", EXIT_DOC_HASH],
  ] as const) {
    test(`a worker that ${how} while it signs a record: 500 INTERNAL_ERROR, nothing written; the next record is created, durable`, async () => {
      const dir = tempDir();
      const h = harness({ dataDir: dir });
      const org = await h.org();
      const signer = createSigner({ masterKey: loadOrCreateMasterKey({ file: h.config.masterKeyFile, create: false }).key, workers: 1, workerEntry: CRASHING });
      const records = createRecords({ store: h.core.store, signer, clock: h.clock, ledger: h.ledger, publicUrl: h.config.publicUrl, writes: createWriteQueue(recordsDrivers(h.core.store).writes) });
      const http = createHttp({ log: h.log, version: "test", readiness: {}, plugins: [recordsRoutes({ access: stubAccess(h.core), records })] });
      const post = (hash: string) =>
        http.handle(
          new Request("http://localhost/v1/records", { method: "POST", headers: { authorization: `Bearer ${org}`, "content-type": "application/json" }, body: JSON.stringify({ originalDocHash: hash }) }),
          "127.0.0.1",
        );
      try {
        await expect(records.create(org, { docHash, filename: undefined })).rejects.toBeInstanceOf(SignWorkerError);
        const res = await post(docHash);
        expect(res.status).toBe(500);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe("INTERNAL_ERROR");
        expect(h.count("records") + h.count("ledger_transactions")).toBe(0);
        expect(h.ledger.wakes).toBe(0);

        const ok = await post(HASH("w-2"));
        expect(ok.status).toBe(201);
        const { recordId } = (await ok.json()) as { recordId: string };
        // Durable when answered: another connection reads it.
        const other = new Database(join(dir, DATABASE_FILE), { readonly: true });
        try {
          expect(other.query("SELECT count(*) AS n FROM records WHERE id = ?").get(recordId)).toEqual({ n: 1 });
          // Its message (a leaf) and the batch it opened.
          expect(other.query("SELECT kind, batch_leaf FROM ledger_transactions ORDER BY batch_leaf").all()).toEqual([{ kind: "batch_message", batch_leaf: 0 }, { kind: "record_message", batch_leaf: 1 }]);
        } finally {
          other.close();
        }
        // The failed hash is not taken: it can be authenticated once a worker signs it.
        expect(h.count("records")).toBe(1);
      } finally {
        signer.clearCache();
      }
    });
  }
});
