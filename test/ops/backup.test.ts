/**
 * `docverify backup` and `docverify restore` as an operator runs them: processes against a
 * running `serve` under write load, then a restore into a fresh data folder that serves every
 * record acknowledged before the backup began. And every refusal: a restore over a running
 * service, garbage, truncated and damaged files, another program's SQLite file, a database
 * from a newer docverify, bad flags, an existing file without --force. Refusals change nothing.
 */
import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createHash, randomBytes } from "node:crypto";
import { join } from "node:path";
import { LOCAL_LEDGER_FILES, startLocalLedger } from "../../src/local-ledger/index.ts";
import { cleanup, onCleanup, startService, tempDir } from "../support/env.ts";
import { createRecordOnceTopicExists } from "../support/topic.ts";
import { waitFor } from "../support/wait.ts";
import { cli, cliAsync } from "./support.ts";

afterEach(cleanup);

const HIGH_LIMITS = { DOCVERIFY_RATE_LIMIT_ANONYMOUS: "1000000", DOCVERIFY_RATE_LIMIT_KEY: "1000000", DOCVERIFY_RATE_LIMIT_ORG: "1000000" };

/** A data folder with one organisation holding the add-on and API access, and its live key. */
function orgWithKey(data: string): { orgId: string; key: string } {
  const org = cli(["org", "create", "--name", "Acme Backups", "--addon", "--api-access", "--json", "--data", data]);
  expect(org.code, org.stderr).toBe(0);
  const orgId = (JSON.parse(org.stdout) as { id: string }).id;
  const mint = cli(["key", "mint", "--org", orgId, "--env", "live", "--json", "--data", data]);
  expect(mint.code, mint.stderr).toBe(0);
  return { orgId, key: (JSON.parse(mint.stdout) as { key: string }).key };
}

const sha = () => `sha256:${createHash("sha256").update(randomBytes(32)).digest("hex")}`;

/** A small backup to feed the refusal tests. */
function smallBackup(): { data: string; file: string } {
  const data = tempDir();
  orgWithKey(data);
  const file = join(tempDir(), "small.db");
  const r = cli(["backup", file, "--data", data]);
  expect(r.code, r.stderr).toBe(0);
  return { data, file };
}

describe("backup under write load, restored to a working service", () => {
  test(
    "every record acknowledged before the backup began is served by the restored service",
    async () => {
      // The ledger outlives both services, as a public ledger does: records still pending in the
      // backup reach consensus through the restored service.
      const ledgerDir = tempDir("docverify-ledger-");
      const ledger = await startLocalLedger({ dataDir: ledgerDir, consensusMs: 400 });
      onCleanup(() => ledger.close());
      const ledgerEnv = {
        DOCVERIFY_LOCAL_LEDGER_URL: ledger.mirrorUrl,
        DOCVERIFY_LEDGER_OPERATOR_ID: ledger.operator.accountId,
        DOCVERIFY_LEDGER_OPERATOR_KEY_FILE: join(ledgerDir, LOCAL_LEDGER_FILES.operatorKey),
      };

      const dataA = tempDir();
      const { key } = orgWithKey(dataA);
      const svcA = await startService({ env: { DOCVERIFY_DATA_DIR: dataA, ...ledgerEnv, ...HIGH_LIMITS } });

      const create = async (hash: string) => {
        const res = await fetch(`${svcA.url}/v1/records`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ originalDocHash: hash, filename: "contract.pdf" }),
        });
        return { status: res.status, headers: res.headers, body: (await res.json()) as { recordId?: string } };
      };
      const first = sha();
      const firstRecord = (await createRecordOnceTopicExists(() => create(first))).body.recordId!;

      type Ack = { hash: string; recordId: string };
      const acked: Ack[] = [{ hash: first, recordId: firstRecord }];
      let stop = false;
      const failures: string[] = [];
      const worker = async () => {
        while (!stop) {
          const hash = sha();
          const r = await create(hash);
          if (r.status === 201) acked.push({ hash, recordId: r.body.recordId! });
          // Back-pressure while the ledger catches up (docs/anchoring.md): a client waits and goes on.
          // A fixed pause on purpose: it is the load's client backing off, not a wait for an event.
          else if (r.status === 503) await Bun.sleep(200);
          else failures.push(`${r.status} ${JSON.stringify(r.body)}`);
        }
      };
      const workers = [worker(), worker(), worker(), worker()];
      // The backup is to hold more than 10 records, some of them already anchored.
      const anchoredOnA = async (hash: string) => {
        const res = await fetch(`${svcA.url}/v1/verifications`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ originalDocHash: hash }) });
        return ((await res.json()) as { verdict: string }).verdict === "verified_org";
      };
      await waitFor("more than 10 records acknowledged under load, the first anchored", async () => (failures.length > 0 || (acked.length > 10 && (await anchoredOnA(first))) ? true : undefined), 30_000);

      // Every 201 received so far; the backup process starts right after.
      const before = [...acked];
      const backupFile = join(tempDir("docverify-backups-"), "docverify-backup.db");
      const backup = await cliAsync(["backup", backupFile, "--data", dataA, "--json"]);
      const afterBackup = acked.length;
      await waitFor("a record acknowledged after the backup", () => (acked.length > afterBackup || failures.length > 0 ? true : undefined), 30_000);
      stop = true;
      await Promise.all(workers);
      expect(failures).toEqual([]);
      expect(backup.code, backup.stderr).toBe(0);
      // Records acknowledged once the backup had finished were created after its snapshot.
      const later = acked.slice(afterBackup);
      expect(before.length).toBeGreaterThan(10);
      expect(later.length).toBeGreaterThan(0);

      const report = JSON.parse(backup.stdout) as { file: string; bytes: number; integrity: string; migrations: number; masterKeyIncluded: boolean };
      expect(report).toMatchObject({ file: backupFile, integrity: "ok", masterKeyIncluded: false });
      expect(statSync(backupFile).size).toBe(report.bytes);
      expect(statSync(backupFile).mode & 0o777).toBe(0o600);
      expect(backup.stderr).toContain("the master key is not in the backup");
      // Only the backup itself is left in its folder: no temporary file.
      expect(readdirSync(join(backupFile, ".."))).toEqual(["docverify-backup.db"]);

      // A running service's data is never overwritten; nothing is changed.
      const listing = readdirSync(dataA).sort();
      const refused = cli(["restore", backupFile, "--data", dataA, "--force"]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("is open in another process");
      expect(refused.stderr).toContain(`pid ${svcA.proc.pid}`);
      expect(readdirSync(dataA).sort()).toEqual(listing);
      expect(await svcA.stop()).toBe(0);

      // Restore into a fresh data folder, with the master key copied as the operator would.
      const dataB = join(tempDir(), "restored");
      const withoutKey = cli(["restore", backupFile, "--data", join(tempDir(), "nokey"), "--json"]);
      expect(withoutKey.code, withoutKey.stderr).toBe(0);
      expect(JSON.parse(withoutKey.stdout)).toMatchObject({ masterKey: "missing" });
      expect(withoutKey.stderr).toContain("restore the master key this backup was made with");
      const restore = cli(["restore", backupFile, "--data", dataB, "--json"], { DOCVERIFY_MASTER_KEY_FILE: join(dataA, "master.key") });
      expect(restore.code, restore.stderr).toBe(0);
      expect(JSON.parse(restore.stdout)).toMatchObject({ restored: join(dataB, "docverify.db"), integrity: "ok", masterKey: "matches" });
      copyFileSync(join(dataA, "master.key"), join(dataB, "master.key"));
      expect(statSync(join(dataB, "docverify.db")).mode & 0o777).toBe(0o600);
      expect(statSync(dataB).mode & 0o777).toBe(0o700);

      const svcB = await startService({ env: { DOCVERIFY_DATA_DIR: dataB, ...ledgerEnv, ...HIGH_LIMITS } });
      const verify = async (hash: string) => {
        const res = await fetch(`${svcB.url}/v1/verifications`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ originalDocHash: hash }),
        });
        expect(res.status).toBe(200);
        return (await res.json()) as { verdict: string; matches: { recordId: string }[] };
      };
      const firstVerdicts = new Map<string, number>();
      for (const { hash, recordId } of before) {
        const v = await verify(hash);
        firstVerdicts.set(v.verdict, (firstVerdicts.get(v.verdict) ?? 0) + 1);
        expect(["verified_org", "pending_anchor"]).toContain(v.verdict);
        if (v.verdict === "verified_org") expect(v.matches.map((m) => m.recordId)).toEqual([recordId]);
      }
      // Those still pending in the backup reach consensus through the restored service.
      await waitFor(
        "every restored record to be anchored",
        async () => {
          for (const { hash } of before) if ((await verify(hash)).verdict !== "verified_org") return null;
          return true;
        },
        30_000,
        250,
      );
      for (const { hash } of later) expect((await verify(hash)).verdict).toBe("no_record");
      expect(await svcB.stop()).toBe(0);
      expect(firstVerdicts.get("verified_org") ?? 0).toBeGreaterThan(0);
    },
    120_000,
  );
});

describe("backup", () => {
  test("shows progress on a large database, and never replaces a file without --force", () => {
    const data = tempDir();
    orgWithKey(data);
    // ~150 MiB of filler so the copy takes long enough for progress lines.
    const db = new Database(join(data, "docverify.db"));
    db.run("CREATE TABLE filler (b BLOB)");
    const insert = db.prepare("INSERT INTO filler VALUES (randomblob(8000))");
    db.transaction(() => {
      for (let i = 0; i < 19_000; i++) insert.run();
    })();
    db.run("PRAGMA wal_checkpoint(TRUNCATE)");
    db.close();

    const file = join(tempDir(), "big.db");
    const r = cli(["backup", file, "--data", data, "--progress"]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr.split("\n");
    const progress = lines.filter((l) => /^backup: [\d.]+ MiB of about [\d.]+ MiB copied \(\d+%\)$/.test(l));
    expect(progress.length, r.stderr).toBeGreaterThan(0);
    expect(Number(/\((\d+)%\)/.exec(progress[0]!)![1])).toBeLessThan(100);
    expect(lines).toContainEqual(expect.stringMatching(/^backup: [\d.]+ MiB copied$/));
    expect(r.stdout).toStartWith(`backup written: ${file}`);

    // Without a terminal and without --progress: no progress lines.
    const quiet = cli(["backup", join(tempDir(), "quiet.db"), "--data", data]);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).not.toContain("MiB copied");

    // An existing file is refused without --force and left as it was; with --force it is replaced.
    const existing = join(tempDir(), "existing.db");
    writeFileSync(existing, "keep me");
    const refused = cli(["backup", existing, "--data", data]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("exists; pass --force");
    expect(readFileSync(existing, "utf8")).toBe("keep me");
    expect(readdirSync(join(existing, ".."))).toEqual(["existing.db"]);
    const forced = cli(["backup", existing, "--data", data, "--force"]);
    expect(forced.code, forced.stderr).toBe(0);
    expect(readFileSync(existing).subarray(0, 15).toString()).toBe("SQLite format 3");
  }, 60_000);

  test("refuses bad flags with exit 2 naming them, and what it cannot do with exit 1", () => {
    const data = tempDir();
    orgWithKey(data);
    const dir = tempDir();
    for (const [args, says] of [
      [["backup"], "expected 1 argument"],
      [["backup", "a.db", "b.db"], "expected 1 argument"],
      [["backup", join(dir, "x.db"), "--bogus"], "--bogus"],
      [["backup", join(dir, "x.db"), "--data"], "--data"],
      [["backup", join(dir, "x.db"), "--force=yes"], "--force"],
      [["restore"], "expected 1 argument"],
      [["restore", "x.db", "--progress"], "--progress"],
    ] as const) {
      const r = cli([...args, ...((args as readonly string[]).includes("--data") ? [] : ["--data", data])]);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(says);
    }
    const setting = cli(["backup", join(dir, "x.db"), "--data", data], { DOCVERIFY_PORT: "eighty" });
    expect(setting.code).toBe(2);
    expect(setting.stderr).toContain("DOCVERIFY_PORT");

    const noDb = cli(["backup", join(dir, "x.db"), "--data", join(dir, "empty")]);
    expect(noDb.code).toBe(1);
    expect(noDb.stderr).toBe(`docverify: no data folder at ${join(dir, "empty")} (DOCVERIFY_DATA_DIR or --data); docverify serve or org create makes one\n`);
    const noFolder = cli(["backup", join(dir, "missing", "x.db"), "--data", data]);
    expect(noFolder.code).toBe(1);
    expect(noFolder.stderr).toContain("does not exist");
    const itself = cli(["backup", join(data, "docverify.db"), "--data", data, "--force"]);
    expect(itself.code).toBe(1);
    expect(itself.stderr).toContain("live database itself");
    expect(readdirSync(dir)).toEqual([]);
  }, 30_000);
});

describe("restore refuses", () => {
  /** Runs a restore that must be refused into a fresh folder, and checks nothing appeared. */
  function refusedInto(file: string, says: string, extra: string[] = []) {
    const data = join(tempDir(), "data");
    const r = cli(["restore", file, "--data", data, ...extra]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(says);
    expect(existsSync(data)).toBe(false);
  }

  test("garbage, truncated, damaged and foreign files, and a database from a newer docverify", () => {
    const { file } = smallBackup();
    const dir = tempDir();

    const garbage = join(dir, "garbage.db");
    writeFileSync(garbage, randomBytes(64 * 1024));
    refusedInto(garbage, "is not an SQLite database");
    refusedInto(join(dir, "absent.db"), "does not exist");
    const empty = join(dir, "empty.db");
    writeFileSync(empty, "");
    refusedInto(empty, "is not an SQLite database");

    const bytes = readFileSync(file);
    const truncated = join(dir, "truncated.db");
    writeFileSync(truncated, bytes.subarray(0, Math.floor(bytes.length / 2) + 100));
    refusedInto(truncated, "is truncated");
    const pageTruncated = join(dir, "page-truncated.db");
    writeFileSync(pageTruncated, bytes.subarray(0, 4096 * 3));
    refusedInto(pageTruncated, "is truncated");

    // Pages overwritten in the middle: SQLite's integrity check catches it.
    const damaged = join(dir, "damaged.db");
    const copy = Buffer.from(bytes);
    randomBytes(4096 * 4).copy(copy, 4096 * 2);
    writeFileSync(damaged, copy);
    const d = cli(["restore", damaged, "--data", join(dir, "d")]);
    expect(d.code, d.stderr).toBe(1);
    expect(d.stderr).toMatch(/integrity check|not an intact SQLite database|cannot be opened/);
    expect(existsSync(join(dir, "d"))).toBe(false);

    const foreign = join(dir, "foreign.db");
    const f = new Database(foreign);
    f.run("CREATE TABLE notes (body TEXT)");
    f.close();
    refusedInto(foreign, "not docverify's");

    const newer = join(dir, "newer.db");
    copyFileSync(file, newer);
    const n = new Database(newer);
    n.run("INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)", ["f".repeat(64), Date.now() + 1000]);
    n.close();
    refusedInto(newer, "was written by a newer docverify");
  }, 30_000);

  test("an existing database without --force, and a service running on the embedded ledger", async () => {
    const { file } = smallBackup();
    const data = tempDir();
    orgWithKey(data);
    const db = join(data, "docverify.db");
    const before = createHash("sha256").update(readFileSync(db)).digest("hex");
    const r = cli(["restore", file, "--data", data]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("exists; pass --force");
    expect(createHash("sha256").update(readFileSync(db)).digest("hex")).toBe(before);

    const svc = await startService({ env: { DOCVERIFY_DATA_DIR: data } });
    const listing = readdirSync(data).sort();
    const busy = cli(["restore", file, "--data", data, "--force"]);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toContain(`pid ${svc.proc.pid}`);
    expect(readdirSync(data).sort()).toEqual(listing);
    expect(await svc.stop()).toBe(0);

    // Stopped, with --force: replaced, the old WAL and index gone, and it serves.
    writeFileSync(`${db}-wal`, "stale");
    const ok = cli(["restore", file, "--data", data, "--force"]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(existsSync(`${db}-wal`)).toBe(false);
    expect(readdirSync(data).filter((n) => n.startsWith("."))).toEqual([]);
    const svc2 = await startService({ env: { DOCVERIFY_DATA_DIR: data } });
    expect((await fetch(`${svc2.url}/readyz`)).status).toBe(200);
    expect(await svc2.stop()).toBe(0);
  }, 60_000);
});
