/**
 * `docverify master-key rotate` with DOCVERIFY_DATABASE_URL (docs/operations.md "Rotate the master
 * key", several nodes): refused while a node is connected, naming it; with every node stopped, one
 * transaction re-encrypts every sealed key on PostgreSQL; a node started with the previous key
 * stays sealed and says why, and one given the new key file signs and anchors records.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { createHash, randomBytes } from "node:crypto";
import { join } from "node:path";
import { resealSubmitKeyEntry } from "../../src/anchoring/submit-key.ts";
import { deriveSeedEncryptionKey, masterKeyCheckValue, masterKeyId, openSeed, parseMasterKey, type Algorithm } from "../../src/crypto/index.ts";
import { LOCAL_LEDGER_FILES, startLocalLedger } from "../../src/local-ledger/index.ts";
import { cleanup, onCleanup, startService, tempDir } from "../support/env.ts";
import { sharedPostgres, type Postgres } from "../support/postgres.ts";
import { createRecordOnceTopicExists } from "../support/topic.ts";
import { waitFor } from "../support/wait.ts";
import { cli } from "../ops/support.ts";

let pg: Postgres;
beforeAll(async () => {
  pg = await sharedPostgres();
}, 120_000);
afterAll(async () => {
  await pg?.destroy();
  await cleanup();
});

const keyOf = (file: string) => {
  const parsed = parseMasterKey(new Uint8Array(readFileSync(file)));
  if ("error" in parsed) throw new Error(parsed.error);
  return parsed.key;
};

/** The database's check value, sealed seeds and submit key entry, read with psql. */
function sealedState(db: string) {
  const check = pg.psql("SELECT value FROM service_meta WHERE key = 'master_key_check'", db).trim();
  const submitKey = pg.psql("SELECT value FROM service_meta WHERE key = 'ledger_submit_key'", db).trim() || null;
  const seeds = pg
    .psql("SELECT encode(fingerprint, 'hex') || '|' || algorithm || '|' || purpose || '|' || encode(sealed_seed, 'hex') FROM signing_keys WHERE sealed_seed IS NOT NULL ORDER BY fingerprint", db)
    .trim()
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => {
      const [fingerprint, algorithm, purpose, sealed] = l.split("|");
      return { fingerprint: fingerprint!, algorithm: algorithm!, purpose: purpose!, sealed: sealed! };
    });
  return { check, submitKey, seeds };
}

function allOpenWith(db: string, key: Uint8Array): boolean {
  const enc = deriveSeedEncryptionKey(key);
  const state = sealedState(db);
  try {
    for (const s of state.seeds) {
      openSeed(enc, new Uint8Array(Buffer.from(s.sealed, "hex")), { algorithm: s.algorithm as Algorithm, fingerprint: new Uint8Array(Buffer.from(s.fingerprint, "hex")), purpose: s.purpose });
    }
    if (state.submitKey !== null) resealSubmitKeyEntry(state.submitKey, enc, enc);
    return state.seeds.length > 0;
  } catch {
    return false;
  }
}

const sha = () => `sha256:${createHash("sha256").update(randomBytes(32)).digest("hex")}`;

describe("master-key rotate on PostgreSQL", () => {
  test(
    "refused while a node is connected; with the nodes stopped every key is re-encrypted in one transaction; a node with the previous key stays sealed, one with the new key signs",
    async () => {
      const url = await pg.createDatabase();
      const db = new URL(url).pathname.slice(1);
      const keyFile = join(tempDir(), "master-key");
      writeFileSync(keyFile, randomBytes(32).toString("hex") + "\n", { mode: 0o600 });
      const oldKey = keyOf(keyFile);
      const oldCopy = join(tempDir(), "previous-master-key");
      copyFileSync(keyFile, oldCopy);
      const env = { DOCVERIFY_DATABASE_URL: url, DOCVERIFY_MASTER_KEY_FILE: keyFile };

      const org = cli(["org", "create", "--name", "Cluster Keys", "--addon", "--api-access", "--validated", "--json"], env);
      expect(org.code, org.stderr).toBe(0);
      const orgId = (JSON.parse(org.stdout) as { id: string }).id;
      const mint = cli(["key", "mint", "--org", orgId, "--env", "live", "--json"], env);
      const apiKey = (JSON.parse(mint.stdout) as { key: string }).key;

      const ledgerDir = tempDir("docverify-ledger-");
      const ledger = await startLocalLedger({ dataDir: ledgerDir, consensusMs: 300 });
      onCleanup(() => ledger.close());
      const nodeEnv = (name: string, masterKeyFile: string) => ({
        ...env,
        DOCVERIFY_MASTER_KEY_FILE: masterKeyFile,
        DOCVERIFY_DATA_DIR: tempDir(),
        DOCVERIFY_NODE_NAME: name,
        DOCVERIFY_LOCAL_LEDGER_URL: ledger.mirrorUrl,
        DOCVERIFY_LEDGER_OPERATOR_ID: ledger.operator.accountId,
        DOCVERIFY_LEDGER_OPERATOR_KEY_FILE: join(ledgerDir, LOCAL_LEDGER_FILES.operatorKey),
      });
      const create = (svcUrl: string, hash: string) => async () => {
        const res = await fetch(`${svcUrl}/v1/records`, {
          method: "POST",
          headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
          body: JSON.stringify({ originalDocHash: hash, filename: "contract.pdf" }),
        });
        await res.arrayBuffer();
        return res;
      };
      const verdictOf = async (svcUrl: string, hash: string) => {
        const res = await fetch(`${svcUrl}/v1/verifications`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ originalDocHash: hash }) });
        return ((await res.json()) as { verdict: string }).verdict;
      };

      // A node runs: it makes the submit key, and the first record makes the seal key.
      const node = await startService({ env: nodeEnv("dv-1", keyFile) });
      const first = sha();
      await createRecordOnceTopicExists(create(node.url, first));
      await waitFor("the first record anchored", async () => ((await verdictOf(node.url, first)) === "verified_org" ? true : undefined), 30_000);

      const before = sealedState(db);
      expect(before.submitKey).not.toBeNull();
      expect(before.seeds.length).toBeGreaterThanOrEqual(2);
      const refused = cli(["master-key", "rotate"], env);
      expect(refused.code).toBe(1);
      expect(refused.stdout).toBe("");
      expect(refused.stderr).toContain("master-key rotate refused: 1 docverify serve node is connected to the database");
      expect(refused.stderr).toContain("(dv-1)");
      expect(refused.stderr).toContain("Stop every node first");
      expect(sealedState(db)).toEqual(before);
      expect(keyOf(keyFile)).toEqual(oldKey);
      expect(await node.stop()).toBe(0);

      // Every node stopped: the rotation goes through at once (a stopped node's session is gone).
      const rotated = cli(["master-key", "rotate", "--json"], env);
      expect(rotated.code, rotated.stderr).toBe(0);
      const newKey = keyOf(keyFile);
      expect(JSON.parse(rotated.stdout)).toEqual({
        file: keyFile,
        keyId: masterKeyId(masterKeyCheckValue(newKey)),
        previousKeyId: masterKeyId(masterKeyCheckValue(oldKey)),
        signingKeys: before.seeds.length,
        submitKey: true,
      });
      expect(sealedState(db).check).toBe(masterKeyCheckValue(newKey));
      expect(allOpenWith(db, newKey)).toBe(true);
      expect(allOpenWith(db, oldKey)).toBe(false);
      expect(pg.psql("SELECT subject_type || ' ' || subject_id FROM audit_log WHERE action = 'master_key.rotate'", db).trim()).toBe(`master_key ${masterKeyId(masterKeyCheckValue(newKey))}`);

      // A node whose key file was not replaced stays sealed, and its log says what to do.
      const stale = await startService({ env: nodeEnv("dv-2", oldCopy) });
      const sealedLine = stale.logLines().find((l) => String(l.msg).startsWith("master key does not match"));
      expect(sealedLine?.hint).toContain("if docverify master-key rotate ran, this is the previous key: put the new key file in place (on every node");
      expect((await create(stale.url, sha())()).status).toBe(503);
      expect(await stale.stop()).toBe(0);

      // One given the new key file verifies the old record and anchors a new one.
      const fresh = await startService({ env: nodeEnv("dv-3", keyFile) });
      expect(await verdictOf(fresh.url, first)).toBe("verified_org");
      const second = sha();
      expect((await create(fresh.url, second)()).status).toBe(201);
      await waitFor("a record signed after the rotation anchored", async () => ((await verdictOf(fresh.url, second)) === "verified_org" ? true : undefined), 30_000);
      expect(fresh.logLines().filter((l) => l.level === "error")).toEqual([]);
      expect(await fresh.stop()).toBe(0);
    },
    120_000,
  );
});
