/**
 * The programs the tests run (test/support/program-list.ts), made present once, before the first
 * test: `npm test` runs this before `bun test`. When every one is installed it prints one line.
 * When some are missing and we are root (as CI is), it installs their Debian packages in one
 * `apt-get update` and one `apt-get install`, with apt's output shown and no limit but apt's own
 * lock wait; when we are not root it stops at once with the one command to run. No test installs
 * anything (test/installs-nothing.test.ts): this is the only file that runs apt-get.
 */
import { missingPrograms, packagesOf, PROGRAMS, type Program } from "../test/support/program-list.ts";

/** The one command that installs `packages`, as a person runs it. */
export function installCommand(packages: readonly string[]): string {
  return `sudo apt-get install -y ${packages.join(" ")}`;
}

/** How long apt waits for another apt or dpkg to let go of its lock: a busy machine is not a failure. */
const LOCK_WAIT_S = 600;

function describe(programs: readonly Program[]): string {
  return programs.map((p) => `${p.name} (${p.pkg})`).join(", ");
}

function apt(args: string[]): number {
  const argv = ["apt-get", "-o", `DPkg::Lock::Timeout=${LOCK_WAIT_S}`, ...args];
  console.log(`test programs: $ ${argv.join(" ")}`);
  // apt's own output goes straight to our stdout and stderr, as it comes.
  const p = Bun.spawnSync(argv, { env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" }, stdin: "ignore", stdout: "inherit", stderr: "inherit" });
  return p.exitCode ?? 1;
}

function main(): number {
  const missing = missingPrograms();
  if (missing.length === 0) {
    console.log(`test programs: all ${PROGRAMS.length} present (test/support/program-list.ts)`);
    return 0;
  }
  const packages = packagesOf(missing);
  const isRoot = process.getuid?.() === 0;
  if (!isRoot || Bun.which("apt-get") === null) {
    console.error(`test programs: the tests need programs that are not installed: ${describe(missing)}`);
    console.error(`test programs: ${isRoot ? "there is no apt-get here to install them; on Debian" : "not root, so not installing them;"} run this, then npm test again:\n  ${installCommand(packages)}`);
    return 1;
  }
  const started = performance.now();
  console.log(`test programs: installing the programs the tests need: ${packages.join(" ")} (missing: ${describe(missing)})`);
  if (apt(["update"]) !== 0 || apt(["install", "-y", ...packages]) !== 0) {
    console.error(`test programs: apt-get failed (above); install them with:\n  ${installCommand(packages)}`);
    return 1;
  }
  const still = missingPrograms();
  if (still.length > 0) {
    console.error(`test programs: still missing after apt-get install: ${describe(still)} (is test/support/program-list.ts's package right?)`);
    return 1;
  }
  console.log(`test programs: installed ${packages.join(" ")} in ${((performance.now() - started) / 1000).toFixed(0)} s; all ${PROGRAMS.length} present`);
  return 0;
}

if (import.meta.main) process.exit(main());
