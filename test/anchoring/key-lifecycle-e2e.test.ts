/**
 * Key rotation and compromise end to end (docs/signing.md "Key lifecycle"): a real `serve` on
 * SQLite anchoring on a local ledger started apart (so that it outlives a killed serve), the
 * commands run as an operator runs them on serve's data folder while it serves, the topic read back
 * from the ledger's mirror REST.
 *
 * - Rotation under load: records created without pause while `org rotate-key` runs twice; every
 *   record ends verified_org, and on the topic every record message lies inside its key's window
 *   (after its key's announcement, before the announcement replacing it), none lost or doubled,
 *   each new key announced once, with `replaces`.
 * - `kill -9` of serve while the rotation's announcement, then the compromise's message, is with
 *   the ledger (accepted, not yet anchored): after a restart, exactly one of each on the topic.
 * - A compromise with `since` in the middle of a run of records: earlier ones verified_org, later
 *   ones revoked with KEY_COMPROMISE, anonymous and keyed, in the verification log and on the
 *   verify page; revoked at the declaration, then at the message's consensus time.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { cli, cliAsync } from "../ops/support.ts";
import { cleanup, startService, tempDir, type ServiceProcess } from "../support/env.ts";
import { startSeparateLedger } from "../support/separate-ledger.ts";
import { waitFor } from "../support/wait.ts";
import { call, consensusMs, createRecord, expectKeyWindows, HIGH_LIMITS, leavesInDataFolder, publicKeyDigest, recordStream, topicMessages, withLeaves, type Created } from "./key-lifecycle-rig.ts";

afterAll(cleanup);

/** A serve on a data folder of its own, one organisation (add-on, validated) and a live key minted by the command line. */
async function deploy(ledgerEnv: Record<string, string>) {
  const data = tempDir();
  const env = { DOCVERIFY_DATA_DIR: data, ...ledgerEnv, ...HIGH_LIMITS };
  let svc = await startService({ env });
  const org = cli(["org", "create", "--name", "Rotating Ltd", "--addon", "--api-access", "--validated", "--json", "--data", data]);
  expect(org.code, org.stderr).toBe(0);
  const orgId = (JSON.parse(org.stdout) as { id: string }).id;
  const mint = cli(["key", "mint", "--org", orgId, "--env", "live", "--revoke", "--json", "--data", data]);
  expect(mint.code, mint.stderr).toBe(0);
  const key = (JSON.parse(mint.stdout) as { key: string }).key;
  const rows = <T>(sql: string, ...params: string[]): T[] => {
    const db = new Database(join(data, "docverify.db"), { readonly: true });
    try {
      return db.query(sql).all(...params) as T[];
    } finally {
      db.close();
    }
  };
  const keyState = (kind: string, fingerprint: string) =>
    rows<{ state: string }>("SELECT state FROM ledger_transactions WHERE kind = ? AND lower(hex(key_fingerprint)) = ? AND state <> 'abandoned'", kind, fingerprint)[0]?.state;
  const d = {
    data,
    orgId,
    key,
    get svc(): ServiceProcess {
      return svc;
    },
    rows,
    /** The organisation's current key fingerprint. */
    currentKey: () => rows<{ k: string }>("SELECT lower(hex(system_key_fingerprint)) AS k FROM organisations WHERE id = ?", orgId)[0]!.k,
    keyState,
    /** Waits until the live journal row of `kind` for key `fingerprint` is in `state`. */
    until: (kind: string, fingerprint: string, state: string, everyMs = 50) =>
      waitFor(`the ${kind} of ${fingerprint.slice(0, 8)} ${state}`, () => (keyState(kind, fingerprint) === state ? true : undefined), 30_000, everyMs),
    /** Waits until no record awaits the ledger. */
    allAnchored: () =>
      waitFor("every record anchored", () => (rows<{ n: number }>("SELECT count(*) AS n FROM records WHERE anchor_state <> 'anchored'")[0]!.n === 0 ? true : undefined), 30_000, 100),
    /** Every message on the organisation's topic, each batch's leaves in its place. */
    topic: async () => withLeaves(await topicMessages(ledgerEnv.DOCVERIFY_LOCAL_LEDGER_URL!, rows<{ t: string }>("SELECT topic_id AS t FROM organisations WHERE id = ?", orgId)[0]!.t), leavesInDataFolder(data)),
    /** A record message's signer digest → the key's fingerprint. */
    keyOf: () => {
      const keys = new Map(rows<{ fp: string; pk: Uint8Array }>("SELECT lower(hex(fingerprint)) AS fp, public_key AS pk FROM signing_keys").map((k) => [publicKeyDigest(k.pk), k.fp]));
      return (digest: string) => keys.get(digest) ?? `unknown key ${digest}`;
    },
    /** serve killed with SIGKILL, and started again on the same folder. */
    async killAndRestart() {
      await svc.stop("SIGKILL");
      svc = await startService({ env });
    },
  };
  return d;
}

const verdict = async (d: { svc: ServiceProcess }, hash: string, key: string | null = null) => (await call(d.svc, "/v1/verifications", key, { originalDocHash: hash })).body;

describe("rotation under load", () => {
  let ledgerEnv: Record<string, string>;
  beforeAll(async () => {
    ledgerEnv = await startSeparateLedger({ consensusMs: 150 });
  }, 60_000);

  test(
    "records created without pause through two rotations: every one verified_org, every record message inside its key's window, none lost, each key announced once with replaces",
    async () => {
      const d = await deploy(ledgerEnv);
      const first = await createRecord(() => d.svc, d.key);
      const keys = [d.currentKey()];
      // A key is replaced once it is announced (a rotation before that is refused: its messages
      // would wait for an announcement that never comes).
      await d.until("key_announcement", keys[0]!, "anchored");
      const stream = recordStream(() => d.svc, d.key, 2);
      for (let i = 0; i < 2; i++) {
        const before = stream.created.length;
        await waitFor("records signed with the current key", () => (stream.created.length >= before + 5 ? true : undefined), 20_000, 10);
        const r = await cliAsync(["org", "rotate-key", d.orgId, "--json", "--data", d.data]);
        expect(r.code, r.stderr).toBe(0);
        const rotation = JSON.parse(r.stdout) as { keyFingerprint: string; replaces: string };
        expect(rotation.replaces).toBe(keys.at(-1)!);
        keys.push(rotation.keyFingerprint);
        // The announcement goes while records keep coming, and records signed with the new key follow it.
        await d.until("key_announcement", rotation.keyFingerprint, "anchored", 20);
        const after = stream.created.length;
        await waitFor("records signed with the new key", () => (stream.created.length >= after + 5 ? true : undefined), 20_000, 10);
      }
      const created = [first, ...(await stream.stop())];
      await d.allAnchored();

      const windows = expectKeyWindows(await d.topic(), d.keyOf(), created.map((c) => c.recordId));
      expect(windows.announcements.map((a) => [a.keyFingerprint, a.replaces])).toEqual([
        [keys[0], undefined],
        [keys[1], keys[0]],
        [keys[2], keys[1]],
      ]);
      // Each key signed records: the windows were all used.
      expect(keys.map((k) => (windows.byKey.get(k) ?? 0) > 0)).toEqual([true, true, true]);
      for (const c of created) expect([c.recordId, (await verdict(d, c.hash)).verdict]).toEqual([c.recordId, "verified_org"]);
    },
    90_000,
  );
});

describe("serve killed while the announcement or the compromise message is with the ledger", () => {
  let ledgerEnv: Record<string, string>;
  beforeAll(async () => {
    // Consensus slow enough to find the message accepted and not yet anchored.
    ledgerEnv = await startSeparateLedger({ consensusMs: 700 });
  }, 60_000);

  test(
    "restarted, it anchors exactly one announcement of the new key and exactly one key_compromise message; every record verifies as it should",
    async () => {
      const d = await deploy(ledgerEnv);
      const old = await createRecord(() => d.svc, d.key);
      const oldKey = d.currentKey();
      await d.until("key_announcement", oldKey, "anchored");

      const r = cli(["org", "rotate-key", d.orgId, "--json", "--data", d.data]);
      expect(r.code, r.stderr).toBe(0);
      const newKey = (JSON.parse(r.stdout) as { keyFingerprint: string }).keyFingerprint;
      await d.until("key_announcement", newKey, "accepted", 5);
      await d.killAndRestart();
      await d.until("key_announcement", newKey, "anchored");
      const signedWithNew = await createRecord(() => d.svc, d.key);

      // A compromise of the new key since the record it signed: its message killed in flight too.
      const c = cli(["org", "key-compromised", d.orgId, "--since", signedWithNew.authenticatedAt, "--json", "--data", d.data]);
      expect(c.code, c.stderr).toBe(0);
      const third = (JSON.parse(c.stdout) as { rotation: { keyFingerprint: string } }).rotation.keyFingerprint;
      await d.until("key_compromise", newKey, "accepted", 5);
      await d.killAndRestart();
      await d.until("key_compromise", newKey, "anchored");
      await d.until("key_announcement", third, "anchored");
      const signedWithThird = await createRecord(() => d.svc, d.key);
      await d.allAnchored();

      const messages = await d.topic();
      const windows = expectKeyWindows(messages, d.keyOf(), [old, signedWithNew, signedWithThird].map((x) => x.recordId));
      expect(windows.announcements.map((a) => [a.keyFingerprint, a.replaces])).toEqual([
        [oldKey, undefined],
        [newKey, oldKey],
        [third, newKey],
      ]);
      expect(windows.compromises.map((x) => x.m)).toEqual([{ v: 1, type: "key_compromise", orgId: d.orgId, keyFingerprint: newKey, since: signedWithNew.authenticatedAt } as never]);
      expect((await verdict(d, old.hash)).verdict).toBe("verified_org");
      expect((await verdict(d, signedWithNew.hash)).matches).toMatchObject([{ revocation: { reason: "KEY_COMPROMISE", revokedAt: consensusMs(windows.compromises[0]!.consensusAt) } }]);
      expect((await verdict(d, signedWithThird.hash)).verdict).toBe("verified_org");
    },
    90_000,
  );
});

describe("a compromise with since in the middle of a run of records", () => {
  let ledgerEnv: Record<string, string>;
  beforeAll(async () => {
    ledgerEnv = await startSeparateLedger({ consensusMs: 150 });
  }, 60_000);

  test(
    "earlier records verified_org, later ones revoked KEY_COMPROMISE: anonymous and keyed, in the log, on the verify page; at the declaration, then at the message's consensus time",
    async () => {
      const d = await deploy(ledgerEnv);
      const run: Created[] = [];
      for (let i = 0; i < 4; i++) run.push(await createRecord(() => d.svc, d.key));
      await d.allAnchored();
      for (const r of run) expect((await verdict(d, r.hash)).verdict).toBe("verified_org");
      const since = run[2]!.authenticatedAt;
      expect(Date.parse(run[1]!.authenticatedAt)).toBeLessThan(Date.parse(since));
      const compromised = d.currentKey();

      const c = cli(["org", "key-compromised", d.orgId, "--since", since, "--json", "--data", d.data]);
      expect(c.code, c.stderr).toBe(0);
      const declaredAt = (JSON.parse(c.stdout) as { declaredAt: string }).declaredAt;

      /** What every judge says of `r`, anonymous and keyed (then read back from the log), and the page. */
      const judged = async (r: Created) => {
        const anonymous = await verdict(d, r.hash);
        const keyed = await verdict(d, r.hash, d.key);
        const logged = await call(d.svc, `/v1/verifications/${keyed.verificationId as string}`, d.key);
        const listed = await call(d.svc, `/v1/verifications?originalDocHash=${encodeURIComponent(r.hash)}&limit=1`, d.key);
        const page = (await call(d.svc, `/verify/${r.recordId}`, null)).text;
        const revocation = (answer: Record<string, unknown>) => (answer.matches as { revocation?: { reason: string; revokedAt: string } }[])[0]!.revocation ?? null;
        // The log keeps the verdict given (its GET by id shows no matches: docs/verification.md).
        return {
          verdicts: [anonymous.verdict, keyed.verdict, logged.body.verdict, (listed.body.data as { verdict: string }[])[0]!.verdict],
          revocations: [revocation(anonymous), revocation(keyed)],
          page: /<code>KEY_COMPROMISE<\/code>/.test(page) ? "KEY_COMPROMISE" : /<strong>Valid<\/strong>/.test(page) ? "Valid" : "other",
          pageTime: /Revoked on <time datetime="([^"]+)"/.exec(page)?.[1] ?? null,
        };
      };
      const valid = { verdicts: Array(4).fill("verified_org"), revocations: [null, null], page: "Valid", pageTime: null };
      const revokedAt = (at: string) => ({ verdicts: Array(4).fill("revoked"), revocations: Array(2).fill({ reason: "KEY_COMPROMISE", revokedAt: at }), page: "KEY_COMPROMISE", pageTime: at });

      // Before the message is anchored, the declaration's time (the message may already be anchored: then its own).
      const message = async () => (await d.topic()).find((x) => x.m.type === "key_compromise");
      const early = await message();
      const expectedEarly = early === undefined ? declaredAt : consensusMs(early.consensusAt);
      for (const r of run.slice(0, 2)) expect(await judged(r)).toEqual(valid);
      const third = await judged(run[2]!);
      if ((await message()) === undefined || early !== undefined) expect(third).toEqual(revokedAt(expectedEarly));

      await d.until("key_compromise", compromised, "anchored");
      const anchored = (await message())!;
      expect(anchored.m).toEqual({ v: 1, type: "key_compromise", orgId: d.orgId, keyFingerprint: compromised, since } as never);
      for (const r of run.slice(0, 2)) expect(await judged(r)).toEqual(valid);
      for (const r of run.slice(2)) expect(await judged(r)).toEqual(revokedAt(consensusMs(anchored.consensusAt)));
      // Signed with the key that replaced it: valid.
      const fresh = await createRecord(() => d.svc, d.key);
      await d.allAnchored();
      expect(await judged(fresh)).toEqual(valid);
    },
    60_000,
  );
});
