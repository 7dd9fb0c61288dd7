/**
 * No test installs anything. The programs the tests run are listed once
 * (test/support/program-list.ts) and made present before the first test by
 * scripts/test-programs.ts, which `npm test` runs before `bun test`; a test only looks its
 * program up. A hook that ran apt-get raced other apt users for the package lock under a test's
 * limit (5 s for a bare `bun test`), and failed.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Glob } from "bun";
import { installCommand } from "../scripts/test-programs.ts";
import { packagesOf, PROGRAMS, type Program } from "./support/program-list.ts";
import { BUN, ROOT } from "./support/env.ts";

const PREPARATION = "scripts/test-programs.ts";
const THIS_FILE = "test/installs-nothing.test.ts";

/** A package manager named as a command: apt-get, aptitude, dpkg, or apt with an action. */
const PACKAGE_MANAGER = /\b(apt-get|aptitude|dpkg)\b|\bapt\b["'`]?[\s,]+["'`]?(install|update|upgrade|full-upgrade)\b/;

describe("the programs the tests need", () => {
  test("no file of the code, the tests or the scripts but the preparation names a package manager", async () => {
    const offenders: string[] = [];
    const files = [".ci/run"];
    for (const dir of ["src", "test", "scripts"]) {
      for await (const file of new Glob(`${dir}/**/*.{ts,js,mjs,cjs,sh}`).scan({ cwd: ROOT })) files.push(file);
    }
    expect(files).toContain(PREPARATION);
    for (const file of files) {
      if (file === PREPARATION || file === THIS_FILE) continue;
      readFileSync(join(ROOT, file), "utf8")
        .split("\n")
        .forEach((line, i) => {
          if (PACKAGE_MANAGER.test(line)) offenders.push(`${file}:${i + 1}: ${line.trim()}`);
        });
    }
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
    for (const [name, script] of Object.entries(pkg.scripts)) if (PACKAGE_MANAGER.test(script)) offenders.push(`package.json scripts.${name}: ${script}`);
    expect(offenders, `only ${PREPARATION} may install; a test asks for a program with requireProgram (test/support/programs.ts)`).toEqual([]);
  });

  test("npm test prepares them once, before type checking and the first test", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
    expect(pkg.scripts.test).toBe(`bun ${PREPARATION} && tsc -p . && bun test --timeout 20000 --parallel=2 --no-isolate`);
  });

  test("each program is listed once, and each package is a Debian package name", () => {
    const names = PROGRAMS.map((p) => p.name);
    expect(new Set(names).size).toBe(names.length);
    for (const p of PROGRAMS as readonly Program[]) expect(p.pkg).toMatch(/^[a-z0-9][a-z0-9+.-]+$/);
  });

  test("all present: the preparation says so in one line and installs nothing", () => {
    const p = Bun.spawnSync([BUN, join(ROOT, PREPARATION)], { cwd: ROOT, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    expect(p.exitCode, p.stderr.toString()).toBe(0);
    expect(p.stdout.toString()).toBe(`test programs: all ${PROGRAMS.length} present (test/support/program-list.ts)\n`);
    expect(p.stderr.toString()).toBe("");
  });

  test("some missing where nothing can be installed: it stops at once with the one command to run", () => {
    // With no PATH, every program looked up on PATH is missing, and so is apt-get: nothing runs.
    const p = Bun.spawnSync([BUN, join(ROOT, PREPARATION)], { cwd: ROOT, env: { PATH: "/nonexistent" }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const onPath = (PROGRAMS as readonly Program[]).filter((program) => program.paths === undefined);
    expect(p.exitCode).toBe(1);
    expect(p.stdout.toString()).toBe("");
    const lines = p.stderr.toString().trimEnd().split("\n");
    expect(lines.at(-1)).toBe(`  ${installCommand(packagesOf(onPath))}`);
    expect(lines[0]).toContain("the tests need programs that are not installed: ");
  });
});
