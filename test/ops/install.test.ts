/**
 * scripts/install.sh, run into a staging root (--root) so the real system is never touched:
 * the files, their modes and owners, the commented environment file, a fresh master key, the
 * operator key's drop-in, idempotency (a second run changes nothing and keeps the key), an
 * upgrade, refusals, and `systemd-analyze verify` of what was installed.
 *
 * As root (CI) the accounts are created in the staging root's /etc/passwd and /etc/group and
 * files get their owners. Not as root, the same runs go with --no-user, which the script
 * demands explicitly, and owners are not checked (the test says so; nothing is skipped silently).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, copyFileSync, existsSync, readFileSync, statSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { SETTINGS } from "../../src/config/index.ts";
import { requireProgram } from "../support/programs.ts";
import { ROOT, cleanup, tempDir } from "../support/env.ts";

afterAll(cleanup);

const SCRIPT = join(ROOT, "scripts", "install.sh");
const isRoot = process.getuid?.() === 0;
/** A strict POSIX shell when there is one (dash), to keep bashisms out. */
const SH = ["/usr/bin/dash", "/bin/dash"].find((p) => existsSync(p)) ?? "/bin/sh";

function fakeBinary(text = "v1"): string {
  const file = join(tempDir(), "docverify");
  writeFileSync(file, `#!/bin/sh\necho "docverify ${text}"\n`);
  chmodSync(file, 0o755);
  return file;
}

function install(args: string[]) {
  const p = Bun.spawnSync([SH, SCRIPT, ...args], { env: { PATH: process.env.PATH ?? "/usr/sbin:/usr/bin:/sbin:/bin" } });
  return { code: p.exitCode, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
}

const userArgs = isRoot ? [] : ["--no-user"];
const mode = (p: string) => statSync(p).mode & 0o7777;

function groupIdIn(root: string, name: string): number | null {
  const line = readFileSync(join(root, "etc", "group"), "utf8").split("\n").find((l) => l.startsWith(`${name}:`));
  return line === undefined ? null : Number(line.split(":")[2]);
}

describe("install.sh into a staging root", () => {
  test("puts every file in place with its mode, and a second run changes nothing", () => {
    if (!isRoot) console.warn("install.test: not root, so --no-user is passed and file owners are not checked");
    const root = tempDir("docverify-root-");
    const binary = fakeBinary();
    const first = install([binary, "--root", root, ...userArgs]);
    expect(first.code, first.stderr + first.stdout).toBe(0);

    const expected: [string, number][] = [
      ["usr/local/bin/docverify", 0o755],
      ["etc/docverify", 0o755],
      ["etc/docverify/docverify.env", 0o640],
      ["etc/docverify/credentials", 0o700],
      ["etc/docverify/credentials/master-key", 0o600],
      ["etc/systemd/system/docverify.service", 0o644],
      ["usr/local/share/doc/docverify/README.md", 0o644],
      ["usr/local/share/doc/docverify/operations.md", 0o644],
    ];
    for (const [path, m] of expected) expect([path, mode(join(root, path)).toString(8)]).toEqual([path, m.toString(8)]);
    expect(readFileSync(join(root, "usr/local/bin/docverify"), "utf8")).toBe(readFileSync(binary, "utf8"));
    expect(readFileSync(join(root, "etc/systemd/system/docverify.service"), "utf8")).toBe(readFileSync(join(ROOT, "systemd", "docverify.service"), "utf8"));
    expect(existsSync(join(root, "etc/systemd/system/docverify.service.d"))).toBe(false);

    // The master key: 32 random bytes as 64 hex digits, as docverify reads it.
    const key = readFileSync(join(root, "etc/docverify/credentials/master-key"), "utf8");
    expect(key).toMatch(/^[0-9a-f]{64}\n$/);

    // The environment file names every setting, each commented out, and nothing else.
    const env = readFileSync(join(root, "etc/docverify/docverify.env"), "utf8");
    const named = new Set([...env.matchAll(/^#(DOCVERIFY_[A-Z_]+)=/gm)].map((m) => m[1]!));
    expect([...named].sort()).toEqual([...SETTINGS].sort());
    expect(env.split("\n").filter((l) => l.trim() !== "" && !l.startsWith("#"))).toEqual([]);

    if (isRoot) {
      const passwd = readFileSync(join(root, "etc/passwd"), "utf8");
      expect(passwd).toMatch(/^docverify:x:\d+:\d+::\/nonexistent:\/(usr\/)?sbin\/nologin$/m);
      const gid = groupIdIn(root, "docverify")!;
      expect(gid).toBeGreaterThan(0);
      expect(Number(/^docverify:x:\d+:(\d+):/m.exec(passwd)![1])).toBe(gid);
      expect(statSync(join(root, "etc/docverify/docverify.env"))).toMatchObject({ uid: 0, gid });
      for (const path of ["usr/local/bin/docverify", "etc/docverify/credentials", "etc/docverify/credentials/master-key"]) {
        expect([path, statSync(join(root, path)).uid, statSync(join(root, path)).gid]).toEqual([path, 0, 0]);
      }
    }

    // Idempotent: nothing changes, the key stays, files keep their inode and time.
    const before = expected.map(([p]) => [p, statSync(join(root, p)).ino, statSync(join(root, p)).mtimeMs]);
    const second = install([binary, "--root", root, ...userArgs]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain("nothing to change");
    expect(second.stdout).not.toMatch(/installed|created|set to/);
    expect(readFileSync(join(root, "etc/docverify/credentials/master-key"), "utf8")).toBe(key);
    expect(expected.map(([p]) => [p, statSync(join(root, p)).ino, statSync(join(root, p)).mtimeMs])).toEqual(before);
    // Nothing left behind by the installer.
    const leftovers = Bun.spawnSync(["find", root, "-name", "*.install.*"]).stdout.toString();
    expect(leftovers).toBe("");

    // An upgrade replaces the binary (a new inode: a running service keeps the old one) and keeps the key and settings.
    writeFileSync(join(root, "etc/docverify/docverify.env"), env + "DOCVERIFY_LOG_LEVEL=debug\n");
    const upgrade = install([fakeBinary("v2"), "--root", root, ...userArgs]);
    expect(upgrade.code, upgrade.stderr).toBe(0);
    expect(upgrade.stdout).toContain(`installed ${join(root, "usr/local/bin/docverify")}`);
    expect(upgrade.stdout).toContain("1 change(s)");
    expect(readFileSync(join(root, "usr/local/bin/docverify"), "utf8")).toContain("v2");
    expect(readFileSync(join(root, "etc/docverify/credentials/master-key"), "utf8")).toBe(key);
    expect(readFileSync(join(root, "etc/docverify/docverify.env"), "utf8")).toEndWith("DOCVERIFY_LOG_LEVEL=debug\n");
  });

  test("the ledger operator key gets its LoadCredential drop-in while it exists", () => {
    const root = tempDir("docverify-root-");
    const binary = fakeBinary();
    expect(install([binary, "--root", root, ...userArgs]).code).toBe(0);
    const operatorKey = join(root, "etc/docverify/credentials/ledger-operator-key");
    writeFileSync(operatorKey, "302e020100300506032b657004220420" + "11".repeat(32) + "\n", { mode: 0o644 });
    const withKey = install([binary, "--root", root, ...userArgs]);
    expect(withKey.code, withKey.stderr).toBe(0);
    const dropin = join(root, "etc/systemd/system/docverify.service.d/ledger-operator-key.conf");
    expect(readFileSync(dropin, "utf8")).toContain("\n[Service]\nLoadCredential=ledger-operator-key:/etc/docverify/credentials/ledger-operator-key\n");
    expect(mode(operatorKey)).toBe(0o600);
    expect(install([binary, "--root", root, ...userArgs]).stdout).toContain("nothing to change");

    // systemd's own check of the installed unit with its drop-in (ExecStart pointed at the staged binary).
    const analyze = requireProgram("systemd-analyze");
    const units = tempDir();
    const unit = readFileSync(join(root, "etc/systemd/system/docverify.service"), "utf8");
    writeFileSync(join(units, "docverify.service"), unit.replace("ExecStart=/usr/local/bin/docverify", `ExecStart=${join(root, "usr/local/bin/docverify")}`));
    mkdirSync(join(units, "docverify.service.d"));
    writeFileSync(join(units, "docverify.service.d", "ledger-operator-key.conf"), readFileSync(dropin));
    const verify = Bun.spawnSync([analyze, "verify", "docverify.service"], { env: { ...process.env, SYSTEMD_UNIT_PATH: `${units}:` } });
    const said = verify.stdout.toString() + verify.stderr.toString();
    expect(said.split("\n").filter((l) => l.includes("docverify"))).toEqual([]);
    const show = Bun.spawnSync([analyze, "security", "--offline=true", join(units, "docverify.service")]).stdout.toString();
    expect(Number(/Overall exposure level for docverify\.service: (\d+\.\d)/.exec(show)?.[1])).toBeLessThanOrEqual(2.0);

    Bun.spawnSync(["rm", operatorKey]);
    const without = install([binary, "--root", root, ...userArgs]);
    expect(without.stdout).toContain("removed");
    expect(existsSync(dropin)).toBe(false);
  });

  test("the database password (several nodes on PostgreSQL) gets its LoadCredential drop-in while it exists, never the environment file", () => {
    const root = tempDir("docverify-root-");
    const binary = fakeBinary();
    expect(install([binary, "--root", root, ...userArgs]).code).toBe(0);
    const env = readFileSync(join(root, "etc/docverify/docverify.env"), "utf8");
    expect(env).toContain("#DOCVERIFY_DATABASE_URL=");
    expect(env).toContain("/etc/docverify/credentials/database-password");
    const password = join(root, "etc/docverify/credentials/database-password");
    writeFileSync(password, "correct-horse\n", { mode: 0o644 });
    const withPassword = install([binary, "--root", root, ...userArgs]);
    expect(withPassword.code, withPassword.stderr).toBe(0);
    const dropin = join(root, "etc/systemd/system/docverify.service.d/database-password.conf");
    expect(readFileSync(dropin, "utf8")).toContain("\n[Service]\nLoadCredential=database-password:/etc/docverify/credentials/database-password\n");
    expect(mode(password)).toBe(0o600);
    expect(withPassword.stdout + withPassword.stderr).not.toContain("correct-horse");
    // The ledger operator key's drop-in is not made by it.
    expect(existsSync(join(root, "etc/systemd/system/docverify.service.d/ledger-operator-key.conf"))).toBe(false);
    Bun.spawnSync(["rm", password]);
    const without = install([binary, "--root", root, ...userArgs]);
    expect(without.stdout).toContain("removed");
    expect(existsSync(dropin)).toBe(false);
  });

  test("refuses bad usage with exit 2 and impossible work with exit 1, changing nothing", () => {
    const root = tempDir("docverify-root-");
    const binary = fakeBinary();
    for (const [args, code, says] of [
      [["--bogus", "--root", root], 2, "unknown option --bogus"],
      [[binary, binary, "--root", root], 2, "unexpected argument"],
      [[binary, "--root"], 2, "--root needs a folder"],
      [[binary, "--root", root, "--enable"], 2, "--enable cannot be combined with --root"],
      [[join(root, "absent"), "--root", root], 1, "no executable at"],
      [[binary, "--root", join(root, "absent")], 1, "is not a folder"],
    ] as const) {
      const r = install([...args, ...userArgs]);
      expect([args.join(" "), r.code]).toEqual([args.join(" "), code]);
      expect(r.stderr).toContain(says);
    }
    expect(Bun.spawnSync(["find", root, "-mindepth", "1"]).stdout.toString()).toBe("");
  });

  test("without root it says what it needs instead of half-installing", () => {
    if (isRoot) {
      // Run the non-root path as nobody: the refusal must not depend on who tests.
      const setpriv = Bun.which("setpriv");
      expect(setpriv, "setpriv (util-linux) is needed to run the installer as a non-root user").not.toBeNull();
      const root = tempDir("docverify-root-");
      chmodSync(root, 0o777);
      const binary = fakeBinary();
      chmodSync(join(binary, ".."), 0o755);
      // nobody must be able to read the installer and what it installs, wherever the checkout
      // lives (a clone in a 0700 folder is not readable by nobody): run a copy in an open folder.
      const repo = tempDir("docverify-repo-");
      chmodSync(repo, 0o755);
      for (const file of ["scripts/install.sh", "systemd/docverify.service", "README.md", "docs/operations.md"]) {
        mkdirSync(join(repo, file, ".."), { recursive: true, mode: 0o755 });
        copyFileSync(join(ROOT, file), join(repo, file));
        chmodSync(join(repo, file), 0o644);
      }
      const asNobody = (args: string[]) => {
        const p = Bun.spawnSync([setpriv!, "--reuid=65534", "--regid=65534", "--clear-groups", SH, join(repo, "scripts", "install.sh"), ...args], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
        return { code: p.exitCode, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
      };
      const noRoot = asNobody([binary]);
      expect(noRoot.code).toBe(1);
      expect(noRoot.stderr).toContain("run as root");
      const noUserFlag = asNobody([binary, "--root", root]);
      expect(noUserFlag.code).toBe(1);
      expect(noUserFlag.stderr).toContain("pass --no-user");
      const staged = asNobody([binary, "--root", root, "--no-user"]);
      expect(staged.code, staged.stderr).toBe(0);
      expect(mode(join(root, "etc/docverify/credentials/master-key"))).toBe(0o600);
      expect(statSync(join(root, "etc/docverify/credentials/master-key")).uid).toBe(65534);
    } else {
      const r = install([fakeBinary()]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("run as root");
    }
  });
});
