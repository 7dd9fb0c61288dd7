/**
 * `docverify master-key rotate` on the embedded SQLite, as an operator runs it (docs/operations.md
 * "Rotate the master key"): every sealed private key re-encrypted under a new key, the service
 * restarting on it with old records verifying and new ones signed and anchored, a backup taken
 * before restoring with the previous key; a crash (SIGKILL) at each step of the file dance leaving
 * a folder that opens; every refusal with its message and exit code, changing nothing.
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { createHash, randomBytes } from "node:crypto";
import { join } from "node:path";
import { KILL_AT_VARIABLE, KILL_STEPS } from "../../src/admin/master-key.ts";
import { openCore } from "../../src/app/core.ts";
import { parseConfig } from "../../src/config/index.ts";
import { deriveSeedEncryptionKey, masterKeyCheckValue, masterKeyId, openSeed, parseMasterKey, type Algorithm } from "../../src/crypto/index.ts";
import { resealSubmitKeyEntry } from "../../src/anchoring/submit-key.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { LOCAL_LEDGER_FILES, startLocalLedger } from "../../src/local-ledger/index.ts";
import { MasterKeyChangedError } from "../../src/storage/master-key-rotation.ts";
import { cleanup, onCleanup, startService, tempDir } from "../support/env.ts";
import { createRecordOnceTopicExists } from "../support/topic.ts";
import { waitFor } from "../support/wait.ts";
import { cli } from "../ops/support.ts";

afterAll(cleanup);

const keyOf = (file: string) => {
  const parsed = parseMasterKey(new Uint8Array(readFileSync(file)));
  if ("error" in parsed) throw new Error(parsed.error);
  return parsed.key;
};

/** What the database holds of the master key: its check value, every sealed seed, the submit key entry. */
function sealedState(data: string) {
  const db = new Database(join(data, "docverify.db"), { readonly: true });
  try {
    const meta = (key: string) => (db.query("SELECT value FROM service_meta WHERE key = ?").get(key) as { value: string } | null)?.value ?? null;
    const seeds = db.query("SELECT fingerprint, algorithm, purpose, sealed_seed FROM signing_keys WHERE sealed_seed IS NOT NULL ORDER BY fingerprint").all() as {
      fingerprint: Uint8Array;
      algorithm: string;
      purpose: string;
      sealed_seed: Uint8Array;
    }[];
    return { check: meta("master_key_check"), submitKey: meta("ledger_submit_key"), seeds };
  } finally {
    db.close();
  }
}

/** Whether every sealed key in `data` opens with `key` (and the submit key, when there is one). */
function allOpenWith(data: string, key: Uint8Array): boolean {
  const enc = deriveSeedEncryptionKey(key);
  const state = sealedState(data);
  try {
    for (const s of state.seeds) openSeed(enc, new Uint8Array(s.sealed_seed), { algorithm: s.algorithm as Algorithm, fingerprint: new Uint8Array(s.fingerprint), purpose: s.purpose });
    if (state.submitKey !== null) resealSubmitKeyEntry(state.submitKey, enc, enc);
    return state.seeds.length > 0;
  } catch {
    return false;
  }
}

function auditRows(data: string) {
  const db = new Database(join(data, "docverify.db"), { readonly: true });
  try {
    return db.query("SELECT actor, action, subject_type, subject_id, before, after FROM audit_log WHERE action = 'master_key.rotate' ORDER BY id").all() as Record<string, string>[];
  } finally {
    db.close();
  }
}

function orgIn(data: string, name = "Acme Keys"): { orgId: string; key: string } {
  const org = cli(["org", "create", "--name", name, "--addon", "--api-access", "--validated", "--json", "--data", data]);
  expect(org.code, org.stderr).toBe(0);
  const orgId = (JSON.parse(org.stdout) as { id: string }).id;
  const mint = cli(["key", "mint", "--org", orgId, "--env", "live", "--json", "--data", data]);
  expect(mint.code, mint.stderr).toBe(0);
  return { orgId, key: (JSON.parse(mint.stdout) as { key: string }).key };
}

/** Everything a refusal must leave as it was: the key file's bytes, the side files, the database's sealed state. */
function snapshot(data: string, keyFile = join(data, "master.key")) {
  return {
    key: existsSync(keyFile) ? readFileSync(keyFile).toString("hex") : null,
    next: existsSync(`${keyFile}.next`),
    previous: existsSync(`${keyFile}.previous`),
    state: sealedState(data),
    audit: auditRows(data).length,
  };
}

const sha = () => `sha256:${createHash("sha256").update(randomBytes(32)).digest("hex")}`;

describe("a rotation, the service around it, and the backups on either side", () => {
  test(
    "refused while serve runs; then every key re-encrypted, the service restarts, old records verify, new ones anchor; a backup from before restores with the previous key",
    async () => {
      const ledgerDir = tempDir("docverify-ledger-");
      const ledger = await startLocalLedger({ dataDir: ledgerDir, consensusMs: 300 });
      onCleanup(() => ledger.close());
      const env = {
        DOCVERIFY_LOCAL_LEDGER_URL: ledger.mirrorUrl,
        DOCVERIFY_LEDGER_OPERATOR_ID: ledger.operator.accountId,
        DOCVERIFY_LEDGER_OPERATOR_KEY_FILE: join(ledgerDir, LOCAL_LEDGER_FILES.operatorKey),
      };
      const data = tempDir();
      const { key: apiKey } = orgIn(data);
      const keyFile = join(data, "master.key");
      const oldKey = keyOf(keyFile);

      const verdictOf = async (url: string, hash: string) => {
        const res = await fetch(`${url}/v1/verifications`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ originalDocHash: hash }) });
        return ((await res.json()) as { verdict: string }).verdict;
      };
      const create = (url: string, hash: string) => async () => {
        const res = await fetch(`${url}/v1/records`, {
          method: "POST",
          headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
          body: JSON.stringify({ originalDocHash: hash, filename: "contract.pdf" }),
        });
        await res.arrayBuffer();
        return res;
      };

      let svc = await startService({ env: { DOCVERIFY_DATA_DIR: data, ...env } });
      const first = sha();
      await createRecordOnceTopicExists(create(svc.url, first));
      await waitFor("the first record anchored", async () => ((await verdictOf(svc.url, first)) === "verified_org" ? true : undefined), 30_000);

      // Refused while serve runs on the folder, naming it; nothing changed.
      const before = snapshot(data);
      const refused = cli(["master-key", "rotate", "--data", data]);
      expect(refused.code).toBe(1);
      expect(refused.stdout).toBe("");
      expect(refused.stderr).toContain(`master-key rotate refused: docverify serve (pid ${svc.proc.pid}) runs on the data folder ${data}`);
      expect(refused.stderr).toContain("Nothing was changed");
      expect(snapshot(data)).toEqual(before);

      // The backup, taken before the rotation, names the key it opens with.
      const backupFile = join(tempDir("docverify-backups-"), "before-rotation.db");
      const backup = cli(["backup", backupFile, "--data", data, "--json"]);
      expect(backup.code, backup.stderr).toBe(0);
      expect((JSON.parse(backup.stdout) as { masterKeyId: string }).masterKeyId).toBe(masterKeyId(masterKeyCheckValue(oldKey)));
      expect(await svc.stop()).toBe(0);

      // The rotation: the organisation's key, the seal key and the ledger submit key.
      expect(before.state.submitKey).not.toBeNull();
      expect(before.state.seeds.length).toBeGreaterThanOrEqual(2);
      const rotated = cli(["master-key", "rotate", "--data", data, "--json"]);
      expect(rotated.code, rotated.stderr).toBe(0);
      const report = JSON.parse(rotated.stdout) as Record<string, unknown>;
      const newKey = keyOf(keyFile);
      expect(report).toEqual({
        file: keyFile,
        keyId: masterKeyId(masterKeyCheckValue(newKey)),
        previousKeyId: masterKeyId(masterKeyCheckValue(oldKey)),
        signingKeys: before.state.seeds.length,
        submitKey: true,
      });
      expect(Buffer.from(newKey).equals(Buffer.from(oldKey))).toBe(false);
      expect(statSync(keyFile).mode & 0o777).toBe(0o600);
      expect([existsSync(`${keyFile}.next`), existsSync(`${keyFile}.previous`)]).toEqual([false, false]);
      const after = sealedState(data);
      expect(after.check).toBe(masterKeyCheckValue(newKey));
      expect(after.seeds.map((s) => Buffer.from(s.fingerprint).toString("hex"))).toEqual(before.state.seeds.map((s) => Buffer.from(s.fingerprint).toString("hex")));
      expect(allOpenWith(data, newKey)).toBe(true);
      expect(allOpenWith(data, oldKey)).toBe(false);
      const [row] = auditRows(data);
      expect(row).toMatchObject({ actor: expect.stringContaining("os:tester"), subject_type: "master_key", subject_id: report.keyId });
      expect(JSON.parse(row!.before!)).toEqual({ keyId: report.previousKeyId });
      expect(JSON.parse(row!.after!)).toEqual({ keyId: report.keyId, signingKeys: before.state.seeds.length, submitKey: true });

      // The human form says which key goes with which backup.
      const human = cli(["master-key", "rotate", "--data", data]);
      expect(human.code, human.stderr).toBe(0);
      expect(human.stdout).toContain(`previous master key  ${report.keyId}  removed`);
      expect(human.stdout).toContain("Backups taken before now open only with the previous key");
      const newestKey = keyOf(keyFile);

      // The service restarts on the new key: the old record verifies, a new one is signed and anchored.
      svc = await startService({ env: { DOCVERIFY_DATA_DIR: data, ...env } });
      expect(await verdictOf(svc.url, first)).toBe("verified_org");
      const second = sha();
      expect((await create(svc.url, second)()).status).toBe(201);
      await waitFor("a record signed after the rotation anchored", async () => ((await verdictOf(svc.url, second)) === "verified_org" ? true : undefined), 30_000);
      expect(svc.logLines().filter((l) => l.level === "error")).toEqual([]);
      expect(await svc.stop()).toBe(0);

      // The backup from before the rotation, restored: the current key is not its key, the previous one is.
      const restored = tempDir();
      const withNewKey = cli(["restore", backupFile, "--data", restored, "--json", "--force"], { DOCVERIFY_MASTER_KEY_FILE: keyFile });
      expect(withNewKey.code, withNewKey.stderr).toBe(0);
      expect(JSON.parse(withNewKey.stdout)).toMatchObject({ masterKey: "differs", masterKeyId: report.previousKeyId });
      writeFileSync(join(restored, "master.key"), Buffer.from(oldKey).toString("hex") + "\n", { mode: 0o600 });
      const withOldKey = cli(["restore", backupFile, "--data", restored, "--json", "--force"]);
      expect(JSON.parse(withOldKey.stdout)).toMatchObject({ masterKey: "matches", masterKeyId: report.previousKeyId });
      const old = await startService({ env: { DOCVERIFY_DATA_DIR: restored, ...env } });
      expect(await verdictOf(old.url, first)).toBe("verified_org");
      expect((await create(old.url, sha())()).status).toBe(201);
      expect(old.logLines().filter((l) => l.level === "error")).toEqual([]);
      expect(await old.stop()).toBe(0);
      expect(allOpenWith(data, newestKey)).toBe(true);
    },
    120_000,
  );
});

describe("a crash at each step leaves a folder that opens", () => {
  for (const step of KILL_STEPS) {
    test(`SIGKILL at ${step}: the next command finishes or undoes the rotation, every key opens, and a new rotation works`, () => {
      const data = tempDir();
      orgIn(data, `Crash ${step}`);
      const keyFile = join(data, "master.key");
      const oldKey = keyOf(keyFile);
      const killed = Bun.spawnSync([process.execPath, join(import.meta.dir, "..", "..", "src", "main.ts"), "master-key", "rotate", "--data", data], {
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", USER: "tester", [KILL_AT_VARIABLE]: step },
      });
      expect(killed.signalCode).toBe("SIGKILL");

      // What the crash left: the new key beside the old, and the database on one of them.
      const committed = step !== "key-written";
      const newKeyFile = step === "installed" ? keyFile : `${keyFile}.next`;
      expect(existsSync(`${keyFile}.next`)).toBe(step !== "installed");
      expect(sealedState(data).check).toBe(masterKeyCheckValue(committed ? keyOf(newKeyFile) : oldKey));
      expect(existsSync(`${keyFile}.previous`)).toBe(step === "previous-kept" || step === "installed");

      // Any command that opens the folder settles it.
      const list = cli(["org", "list", "--json", "--data", data]);
      expect(list.code, list.stderr).toBe(0);
      expect(list.stderr).toContain(committed ? (step === "installed" ? "its previous key file was removed" : "the new master key is in place") : "its new key file was removed");
      expect([existsSync(`${keyFile}.next`), existsSync(`${keyFile}.previous`)]).toEqual([false, false]);
      const current = keyOf(keyFile);
      expect(Buffer.from(current).equals(Buffer.from(oldKey))).toBe(!committed);
      expect(sealedState(data).check).toBe(masterKeyCheckValue(current));
      expect(allOpenWith(data, current)).toBe(true);
      expect(auditRows(data).length).toBe(committed ? 1 : 0);

      // The folder works: a new organisation's key is sealed under the current key; another rotation goes through.
      orgIn(data, `After ${step}`);
      expect(allOpenWith(data, current)).toBe(true);
      const again = cli(["master-key", "rotate", "--data", data]);
      expect(again.code, again.stderr).toBe(0);
      expect(allOpenWith(data, keyOf(keyFile))).toBe(true);
    });
  }
});

describe("refusals change nothing", () => {
  test("bad usage: exit 2 with a pointer to the usage", () => {
    const data = tempDir();
    orgIn(data);
    const before = snapshot(data);
    for (const [args, message, topic] of [
      [["master-key"], "master-key needs a subcommand: rotate", "master-key"],
      [["master-key", "spin"], 'no subcommand "spin"', "master-key"],
      [["master-key", "rotate", "--force"], "--force", "master-key rotate"],
      [["master-key", "rotate", "extra"], "Unexpected argument 'extra'", "master-key rotate"],
    ] as const) {
      const r = cli([...args, "--data", data]);
      expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 2, stdout: "" });
      expect(r.stderr).toContain(message);
      expect(r.stderr).toContain(`Run docverify ${topic} --help for its usage.`);
    }
    expect(snapshot(data)).toEqual(before);
  });

  test("no data folder: exit 1, nothing created", () => {
    const data = join(tempDir(), "nothing-here");
    const r = cli(["master-key", "rotate", "--data", data]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`no data folder at ${data}`);
    expect(existsSync(data)).toBe(false);
  });

  test("a sealed key store (the master key missing, or another key): exit 1, no key made, nothing changed", () => {
    const data = tempDir();
    orgIn(data);
    const keyFile = join(data, "master.key");
    renameSync(keyFile, join(data, "kept.key"));
    const before = snapshot(data);
    const missing = cli(["master-key", "rotate", "--data", data]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("master-key rotate refused: the key store is sealed");
    expect(missing.stderr).toContain("Nothing was changed");
    expect(snapshot(data)).toEqual(before);

    writeFileSync(keyFile, randomBytes(32).toString("hex") + "\n", { mode: 0o600 });
    const wrongBefore = snapshot(data);
    const wrong = cli(["master-key", "rotate", "--data", data]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("master key does not match this data folder");
    expect(wrong.stderr).toContain("master-key rotate refused: the key store is sealed");
    expect(snapshot(data)).toEqual(wrongBefore);
  });

  test("a sealed key that does not open with the current master key: exit 1, the transaction rolled back, no new key left", () => {
    const data = tempDir();
    orgIn(data);
    const db = new Database(join(data, "docverify.db"));
    db.run("UPDATE signing_keys SET sealed_seed = ? WHERE sealed_seed IS NOT NULL", [Buffer.concat([Buffer.from("DVSS\x01"), randomBytes(60)])]);
    db.close();
    const before = snapshot(data);
    const r = cli(["master-key", "rotate", "--data", data]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("does not open with the current master key (authentication_failed); nothing was changed");
    expect(snapshot(data)).toEqual(before);
  });

  test("systemd's copy of the credential: exit 2, naming the source file to rotate", () => {
    const data = tempDir();
    orgIn(data);
    const creds = tempDir();
    copyFileSync(join(data, "master.key"), join(creds, "master-key"));
    const before = snapshot(data, join(creds, "master-key"));
    const r = cli(["master-key", "rotate", "--data", data], { CREDENTIALS_DIRECTORY: creds });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("is the copy systemd hands the service");
    expect(r.stderr).toContain("DOCVERIFY_MASTER_KEY_FILE=/etc/docverify/credentials/master-key");
    expect(snapshot(data, join(creds, "master-key"))).toEqual(before);
  });

  test("the test hook is an unknown setting to every other command", () => {
    const r = cli(["org", "list", "--data", tempDir()], { [KILL_AT_VARIABLE]: "committed" });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${KILL_AT_VARIABLE}: unknown setting`);
  });

  test("a process that opened the previous key cannot store a key sealed under it after the rotation", async () => {
    const data = tempDir();
    orgIn(data);
    const core = openCore({ config: parseConfig({ DOCVERIFY_DATA_DIR: data }), log: memoryLogger() });
    onCleanup(() => core.close());
    const r = cli(["master-key", "rotate", "--data", data]);
    expect(r.code, r.stderr).toBe(0);
    const seeds = sealedState(data).seeds.length;
    await expect(core.organisations.create({ name: "Too Late Ltd", apiAccess: false, addon: false, validated: false }, "test")).rejects.toBeInstanceOf(MasterKeyChangedError);
    await core.close();
    expect(sealedState(data).seeds.length).toBe(seeds);
    expect(allOpenWith(data, keyOf(join(data, "master.key")))).toBe(true);
  });
});
