/**
 * Every program outside this repository that a test runs, with the Debian package that provides
 * it: the one list. `scripts/test-programs.ts` (which `npm test` runs before the first test)
 * installs the packages of the missing ones in one install, or stops with the one command to
 * run; a test asks for a program with `requireProgram` (test/support/programs.ts), which only looks
 * it up, and only names from this list type-check there. Node.js and npm are not here: they are
 * the prerequisite that runs everything else (README). docs/testing.md explains the whole.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

export interface Program {
  /** The command, as a test runs it. */
  readonly name: string;
  /** The Debian (12, bookworm) package that provides it. */
  readonly pkg: string;
  /**
   * Where it must be, when a test runs it from a fixed place rather than from PATH: the first
   * that exists wins. A `*` segment is any folder (PostgreSQL's version), highest version first.
   */
  readonly paths?: readonly string[];
  /** Which tests run it: so a program nobody uses any more can be taken off the list. */
  readonly usedBy: string;
}

/** PostgreSQL's server programs live in /usr/lib/postgresql/VERSION/bin, off PATH. */
const pg = (name: string): Program => ({
  name,
  pkg: "postgresql",
  paths: [`/usr/lib/postgresql/*/bin/${name}`],
  usedBy: "the PostgreSQL engine's tests (test/support/postgres.ts: a cluster of their own)",
});

export const PROGRAMS = [
  { name: "chromium", pkg: "chromium", paths: ["/usr/bin/chromium", "/usr/bin/chromium-browser"], usedBy: "the browser tests through playwright-core: the verify, receipt, enrolment and signing pages, the docs UI, the stamp printed to PDF" },
  { name: "qpdf", pkg: "qpdf", usedBy: "test/pdf/stamp.test.ts, test/app-pages/e2e.test.ts: signed PDFs checked by an independent reader" },
  { name: "pdfinfo", pkg: "poppler-utils", usedBy: "test/pdf/stamp.test.ts" },
  { name: "pdftotext", pkg: "poppler-utils", usedBy: "test/pdf/stamp.test.ts" },
  { name: "openssl", pkg: "openssl", usedBy: "test/support/test-ca.ts (the tests' own CA), test/ops/tls.test.ts" },
  // python3, not python3-minimal: examples/python needs the standard library's json and http.client (libpython3-stdlib).
  { name: "python3", pkg: "python3", paths: ["/usr/bin/python3"], usedBy: "test/ops/notify.test.ts: the sd_notify listener, an implementation not ours; test/examples/examples.test.ts: examples/python" },
  { name: "go", pkg: "golang-go", paths: ["/usr/bin/go"], usedBy: "test/examples/examples.test.ts: examples/go, run with go run (Debian 12's Go 1.19)" },
  { name: "systemd-analyze", pkg: "systemd", usedBy: "test/systemd.test.ts, test/ops/install.test.ts: the unit verified and its exposure scored" },
  { name: "tmux", pkg: "tmux", usedBy: "test/support/terminal.ts: the terminal UI driven as a person would" },
  pg("initdb"),
  pg("postgres"),
  pg("psql"),
  pg("pg_isready"),
  { name: "git", pkg: "git", usedBy: "scripts/build.ts (the commit in --version), test/readme-quickstart.test.ts (git ls-files)" },
  { name: "curl", pkg: "curl", usedBy: "test/readme-quickstart.test.ts: the README's quick start, run in bash; test/examples/examples.test.ts: examples/curl" },
  // In every Debian system (Essential or required packages), listed so the list is whole.
  { name: "setpriv", pkg: "util-linux", usedBy: "test/ops/install.test.ts (the installer as nobody), test/support/postgres.ts (the cluster as postgres)" },
  { name: "bash", pkg: "bash", usedBy: "test/readme-quickstart.test.ts, test/lib/log-stdout.test.ts, test/examples/examples.test.ts" },
  { name: "dash", pkg: "dash", usedBy: "test/ops/install.test.ts: scripts/install.sh under a strict POSIX shell" },
  { name: "sh", pkg: "dash", usedBy: "test/support/engine.ts" },
  { name: "find", pkg: "findutils", usedBy: "test/ops/install.test.ts" },
  { name: "mkfifo", pkg: "coreutils", usedBy: "test/bulk/walk.test.ts: a FIFO, which the bulk commands' walk refuses as not a regular file" },
  { name: "getent", pkg: "libc-bin", usedBy: "src/admin/actor.ts (the audit's OS user), scripts/install.sh" },
  { name: "sha256sum", pkg: "coreutils", usedBy: "test/readme-quickstart.test.ts, test/examples/examples.test.ts (examples/curl runs it), test/bulk/hash.test.ts, scripts/bench/bulk.ts" },
] as const satisfies readonly Program[];

export type ProgramName = (typeof PROGRAMS)[number]["name"];

/** The program's path, or null when it is not installed. */
export function locate(program: Program): string | null {
  if (program.paths === undefined) return Bun.which(program.name);
  for (const path of program.paths) {
    for (const candidate of expand(path)) if (existsSync(candidate)) return candidate;
  }
  return null;
}

/** `path` with its `*` segment (at most one) replaced by each existing folder, highest number first. */
function expand(path: string): string[] {
  const star = path.indexOf("/*/");
  if (star < 0) return [path];
  const parent = path.slice(0, star);
  if (!existsSync(parent)) return [];
  const rest = path.slice(star + 3);
  return readdirSync(parent)
    .sort((a, b) => b.localeCompare(a, "en", { numeric: true }))
    .map((entry) => join(parent, entry, rest));
}

/** The programs of the list that are not installed. */
export function missingPrograms(): Program[] {
  return PROGRAMS.filter((p) => locate(p) === null);
}

/** The packages to install for `programs`, each once, in the list's order. */
export function packagesOf(programs: readonly Program[]): string[] {
  return [...new Set(programs.map((p) => p.pkg))];
}
