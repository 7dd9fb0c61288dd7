/**
 * The data folder's own safety (docs/operations.md "Administration on the server"), with real
 * processes:
 *
 * - one `serve` per data folder: a second refuses to start naming the holder's pid, also when no
 *   embedded ledger would have stopped it; administration commands keep working beside the
 *   holder; a holder killed with SIGKILL leaves nothing that stops the next one;
 * - no symbolic link is followed for the database, its -wal/-shm or master.key, by any command;
 * - an existing folder open to other users is tightened to 0700, and the command says so;
 * - `backup` never writes over the master key, the database, its side files, the serve lock or
 *   the ledger's folder, however the target is spelt (links, a linked folder, the configured key).
 */
import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLocalLedger } from "../../src/local-ledger/index.ts";
import { BUN, cleanup, onCleanup, startService, tempDir } from "../support/env.ts";
import { baseEnv, cli, cliAsync, MAIN } from "./support.ts";

afterEach(cleanup);

/** A data folder with one organisation (so database and master key exist). */
function dataFolder(): string {
  const data = tempDir();
  const r = cli(["org", "create", "--name", "Acme", "--data", data]);
  expect(r.code, r.stderr).toBe(0);
  return data;
}

describe("one serve per data folder", () => {
  test("a second serve refuses naming the holder's pid; admin commands work meanwhile; SIGKILL frees the folder", async () => {
    // A ledger started elsewhere, so no embedded ledger's own lock is in the data folder: only
    // the data folder lock can stop the second serve (as on a public network).
    const ledger = await startLocalLedger({ dataDir: tempDir("docverify-ledger-"), consensusMs: 100 });
    onCleanup(() => ledger.close());
    const data = dataFolder();
    const env = { DOCVERIFY_DATA_DIR: data, DOCVERIFY_LOCAL_LEDGER_URL: ledger.mirrorUrl };
    const first = await startService({ env });

    const second = Bun.spawn([BUN, MAIN, "serve"], { env: { ...baseEnv(), ...env, DOCVERIFY_PORT: "0" }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    onCleanup(() => second.kill("SIGKILL"));
    const [code, stderr] = await Promise.all([second.exited, new Response(second.stderr).text()]);
    expect(code).toBe(1);
    expect(stderr).toContain(`data folder ${data} is in use by another docverify serve (pid ${first.proc.pid})`);

    // Administration beside the running serve.
    const created = await cliAsync(["org", "create", "--name", "Beta", "--json", "--data", data]);
    expect(created.code, created.stderr).toBe(0);
    const status = await cliAsync(["status", "--json", "--data", data], { DOCVERIFY_LOCAL_LEDGER_URL: ledger.mirrorUrl });
    expect(status.code, status.stderr).toBe(0);
    const backup = await cliAsync(["backup", join(tempDir(), "b.db"), "--data", data]);
    expect(backup.code, backup.stderr).toBe(0);
    // The first one goes on serving.
    expect((await fetch(`${first.url}/healthz`)).status).toBe(200);

    // Killed outright: the kernel drops the lock with the process, nothing stale is left.
    first.proc.kill("SIGKILL");
    await first.proc.exited;
    const third = await startService({ env });
    expect((await fetch(`${third.url}/healthz`)).status).toBe(200);
    expect(await third.stop()).toBe(0);
    // And a clean stop releases it as well.
    const fourth = await startService({ env });
    expect(await fourth.stop()).toBe(0);
  }, 60_000);
});

describe("no symbolic link is followed for the database or the master key", () => {
  for (const name of ["docverify.db", "docverify.db-wal", "docverify.db-shm", "master.key"]) {
    test(`${name} as a link out of the data folder is refused by org, key, status, backup and serve; its target is not created`, async () => {
      const data = name === "docverify.db" ? tempDir() : dataFolder();
      const outside = join(tempDir(), "elsewhere");
      rmSync(join(data, name), { force: true });
      symlinkSync(outside, join(data, name));
      const target = join(tempDir(), "b.db");
      for (const args of [["org", "create", "--name", "X"], ["org", "list"], ["key", "list"], ["status"], ["backup", target]]) {
        if (args[0] === "backup" && name === "master.key") continue; // backup never opens the master key
        if (args[0] === "status" && name === "docverify.db") continue; // status refuses earlier: no database
        const r = cli([...args, "--data", data]);
        expect({ args, code: r.code }).toEqual({ args, code: 1 });
        expect(r.stderr).toContain(`${join(data, name)} is a symbolic link`);
      }
      const serve = await cliAsync(["serve", "--data", data], { DOCVERIFY_PORT: "0" });
      expect(serve.code).toBe(1);
      expect(serve.stderr).toContain("is a symbolic link");
      expect(existsSync(outside)).toBe(false);
      expect(existsSync(target)).toBe(false);
    }, 30_000);
  }
});

describe("the data folder is owner-only", () => {
  test("an existing folder open to others is tightened to 0700 when a command opens it, and the command says so", () => {
    const data = dataFolder();
    chmodSync(data, 0o755);
    const r = cli(["org", "list", "--data", data]);
    expect(r.code, r.stderr).toBe(0);
    expect(statSync(data).mode & 0o777).toBe(0o700);
    expect(r.stderr).toContain("data folder was open to other users; tightened to 0700");
    expect(r.stderr).toContain('"mode":"0755"');
    // Already tight: nothing to say.
    const again = cli(["org", "list", "--data", data]);
    expect(again.stderr).not.toContain("tightened");
  });

  test("serve tightens it too", async () => {
    const ledger = await startLocalLedger({ dataDir: tempDir("docverify-ledger-"), consensusMs: 100 });
    onCleanup(() => ledger.close());
    const data = dataFolder();
    chmodSync(data, 0o750);
    const svc = await startService({ env: { DOCVERIFY_DATA_DIR: data, DOCVERIFY_LOCAL_LEDGER_URL: ledger.mirrorUrl } });
    expect(statSync(data).mode & 0o777).toBe(0o700);
    expect(svc.logLines().find((l) => l.msg === "data folder was open to other users; tightened to 0700")).toMatchObject({ level: "warn", dir: data, mode: "0750" });
    expect(await svc.stop()).toBe(0);
  }, 30_000);
});

describe("backup never writes over what the service lives on", () => {
  test("the master key, the database, its side files, the serve lock and the ledger's folder are refused, however spelt; nothing changes", () => {
    const data = dataFolder();
    const key = join(data, "master.key");
    const keyBefore = readFileSync(key);
    const dbBefore = readFileSync(join(data, "docverify.db"));
    writeFileSync(join(data, "serve.lock"), "");
    mkdirSync(join(data, "ledger"));
    const alias = join(tempDir(), "alias");
    symlinkSync(data, alias);
    const keyLink = join(tempDir(), "key-link");
    symlinkSync(key, keyLink);
    const cases: [string, string][] = [
      [key, "is the master key file"],
      [join(alias, "master.key"), "is the master key file"],
      [keyLink, "is the master key file"],
      [join(data, "docverify.db"), "is the live database itself"],
      [join(alias, "docverify.db"), "is the live database itself"],
      [join(data, "docverify.db-wal"), "a side file of the live database"],
      [join(alias, "docverify.db-shm"), "a side file of the live database"],
      [join(data, "serve.lock"), "is the serve lock"],
      [join(data, "ledger", "backup.db"), "in the ledger's folder"],
    ];
    for (const [target, says] of cases) {
      const r = cli(["backup", target, "--force", "--data", data]);
      expect({ target, code: r.code }).toEqual({ target, code: 1 });
      expect(r.stderr).toContain(says);
    }
    expect(readFileSync(key)).toEqual(keyBefore);
    expect(readFileSync(join(data, "docverify.db"))).toEqual(dbBefore);

    // A master key configured elsewhere is protected where it is.
    const keyDir = tempDir();
    const configured = join(keyDir, "master-key");
    writeFileSync(configured, keyBefore, { mode: 0o600 });
    const r = cli(["backup", configured, "--force", "--data", data], { DOCVERIFY_MASTER_KEY_FILE: configured });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("is the master key file");
    expect(readFileSync(configured)).toEqual(keyBefore);

    // Another file in the data folder is an ordinary target.
    const ok = cli(["backup", join(data, "backup.db"), "--data", data]);
    expect(ok.code, ok.stderr).toBe(0);
  }, 30_000);
});
