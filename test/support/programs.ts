/**
 * Programs some tests drive as a person would (Chromium, tmux, qpdf, PostgreSQL…). A test only
 * looks its program up: `npm test` made every program of test/support/program-list.ts present
 * before the first test (scripts/test-programs.ts). A missing one fails the test with the one
 * command that installs every missing program; nothing is installed here, and a test never
 * passes by skipping.
 */
import { installCommand } from "../../scripts/test-programs.ts";
import { locate, missingPrograms, packagesOf, PROGRAMS, type ProgramName } from "./program-list.ts";

const found = new Map<ProgramName, string>();

/** The program's path; throws, naming the command to run, when it is not installed. */
export function requireProgram(name: ProgramName): string {
  const known = found.get(name);
  if (known !== undefined) return known;
  const program = PROGRAMS.find((p) => p.name === name)!;
  const path = locate(program);
  if (path === null) {
    throw new Error(
      `${name} (Debian package ${program.pkg}) is required by this test and is not installed. ` +
        `npm test installs what the tests need before the first test when run as root; otherwise run:  ${installCommand(packagesOf(missingPrograms()))}`,
    );
  }
  found.set(name, path);
  return path;
}

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
