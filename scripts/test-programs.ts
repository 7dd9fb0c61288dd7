/**
 * The programs the tests run (test/support/program-list.ts), made present once, before the first
 * test: `npm test` runs this before `bun test`. When every one is installed it prints one line.
 * When some are missing and we are root (as CI is), it installs their Debian packages in one
 * `apt-get update` and one `apt-get install`, with apt's output shown and no limit but apt's own
 * lock wait; when we are not root it stops at once with the one command to run. No test installs
 * anything (test/installs-nothing.test.ts): this is the only file that runs apt-get.
 */
import { writeSync } from "node:fs";
import { missingPrograms, packagesOf, PROGRAMS, type Program } from "../test/support/program-list.ts";

/** The one command that installs `packages`, as a person runs it. */
export function installCommand(packages: readonly string[]): string {
  return `sudo apt-get install -y ${packages.join(" ")}`;
}

/** How long apt waits for another apt or dpkg to let go of its lock: a busy machine is not a failure. */
const LOCK_WAIT_S = 600;

/** One line of ours, on stdout or stderr, written at once: apt writes to the same descriptors between them. */
function say(line: string, fd: 1 | 2 = 1): void {
  writeSync(fd, `test programs: ${line}\n`);
}

function describe(programs: readonly Program[]): string {
  return programs.map((p) => `${p.name} (${p.pkg})`).join(", ");
}

const APT_ENV = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
const APT_OPTIONS = ["-o", `DPkg::Lock::Timeout=${LOCK_WAIT_S}`];

/** apt-get install: apt itself waits for dpkg's lock. Its output goes straight to ours, as it comes. */
function install(packages: readonly string[]): number {
  const argv = ["apt-get", ...APT_OPTIONS, "install", "-y", ...packages];
  say(`$ ${argv.join(" ")}`);
  return Bun.spawnSync(argv, { env: APT_ENV, stdin: "ignore", stdout: "inherit", stderr: "inherit" }).exitCode ?? 1;
}

/**
 * apt-get update. apt 2.6 (bookworm) waits for dpkg's lock but not for the package lists' own
 * (/var/lib/apt/lists/lock): while another apt-get update holds it, it fails at once ("Could not
 * get lock"). So that failure is waited out here, up to the same limit, and any other is final.
 * Its progress goes straight to our stdout; its errors are read, then passed on.
 */
export function updateLists(): number {
  const argv = ["apt-get", ...APT_OPTIONS, "update"];
  say(`$ ${argv.join(" ")}`);
  const deadline = performance.now() + LOCK_WAIT_S * 1000;
  let waiting = false;
  for (;;) {
    const p = Bun.spawnSync(argv, { env: APT_ENV, stdin: "ignore", stdout: "inherit", stderr: "pipe" });
    const err = p.stderr.toString();
    const locked = p.exitCode !== 0 && /Could not get lock .*lists/.test(err);
    if (!locked || performance.now() > deadline) {
      writeSync(2, err);
      return p.exitCode ?? 1;
    }
    if (!waiting) say(`the package lists are locked by another apt (${err.split("\n")[0]!.replace(/^E: /, "")}); waiting up to ${LOCK_WAIT_S} s`);
    waiting = true;
    Bun.sleepSync(2000);
  }
}

function main(): number {
  const missing = missingPrograms();
  if (missing.length === 0) {
    say(`all ${PROGRAMS.length} present (test/support/program-list.ts)`);
    return 0;
  }
  const packages = packagesOf(missing);
  const isRoot = process.getuid?.() === 0;
  if (!isRoot || Bun.which("apt-get") === null) {
    say(`the tests need programs that are not installed: ${describe(missing)}`, 2);
    say(`${isRoot ? "there is no apt-get here to install them; on Debian" : "not root, so not installing them;"} run this, then npm test again:\n  ${installCommand(packages)}`, 2);
    return 1;
  }
  const started = performance.now();
  say(`installing the programs the tests need: ${packages.join(" ")} (missing: ${describe(missing)})`);
  if (updateLists() !== 0 || install(packages) !== 0) {
    say(`apt-get failed (above); install them with:\n  ${installCommand(packages)}`, 2);
    return 1;
  }
  const still = missingPrograms();
  if (still.length > 0) {
    say(`still missing after apt-get install: ${describe(still)} (is test/support/program-list.ts's package right?)`, 2);
    return 1;
  }
  say(`installed ${packages.join(" ")} in ${((performance.now() - started) / 1000).toFixed(0)} s; all ${PROGRAMS.length} present`);
  return 0;
}

if (import.meta.main) process.exit(main());
