/**
 * The HTTP suites of records, revocation, verification, the verification log and access on
 * PostgreSQL. `npm test` runs them on SQLite like every other file; this file runs the
 * same files again as a `bun test` subprocess with DOCVERIFY_TEST_ENGINE=postgres
 * (test/support/engine.ts), against the real server the run shares (test/support/postgres.ts),
 * and asserts they passed.
 *
 * A test that checks SQLite itself is registered as skipped on PostgreSQL with "[SQLite only: why]"
 * in its name (engine.ts `sqliteOnly`); any other skip, a failure, or fewer tests than expected
 * fails here, with the run's failing tail printed.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { ENGINE_VARIABLE, POSTGRES_URL_VARIABLE } from "../support/engine.ts";
import { BUN, ROOT } from "../support/env.ts";
import { sharedPostgres, type Postgres } from "../support/postgres.ts";

/** The suites, and how many of their tests run on PostgreSQL (a drop means one went missing). */
const ENGINE_SUITES: readonly string[] = [
  "test/records/create.test.ts",
  "test/records/revoke.test.ts",
  "test/routes/verifications.test.ts",
  "test/access/matrix.test.ts",
  "test/access/rate-limits-http.test.ts",
  "test/access/suspended.test.ts",
];
const AT_LEAST_PASSING = 110;

let pg: Postgres;
beforeAll(async () => {
  pg = await sharedPostgres();
}, 120_000);
afterAll(async () => {
  await pg?.destroy();
});

test(
  "the records, verification, log and access HTTP suites pass on PostgreSQL",
  async () => {
    const started = performance.now();
    const proc = Bun.spawn([BUN, "test", ...ENGINE_SUITES.map((f) => join(ROOT, f))], {
      cwd: ROOT,
      env: { ...process.env, [ENGINE_VARIABLE]: "postgres", [POSTGRES_URL_VARIABLE]: pg.url() },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    const text = out + err;
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const number = (label: string) => Number(new RegExp(`^\\s*(\\d+) ${label}$`, "m").exec(text)?.[1] ?? 0);
    const passed = number("pass");
    const failed = number("fail");
    // A skipped describe's hooks are listed too, as "> (unnamed)": not tests.
    const skipped = [...new Set(text.split("\n").filter((l) => l.startsWith("(skip)") && !l.endsWith("> (unnamed)")))];
    const unexplained = skipped.filter((l) => !l.includes("[SQLite only: "));
    console.log(`PostgreSQL: ${passed} pass, ${skipped.length} SQLite only, ${failed} fail, in ${seconds} s`);
    for (const l of skipped) console.log(`  ${l}`);
    const tail = () => {
      const lines = text.split("\n");
      const firstFailure = lines.findIndex((l) => l.startsWith("(fail)") || /^error:/.test(l));
      return lines.slice(Math.max(0, firstFailure - 40), firstFailure + 200).join("\n") || lines.slice(-120).join("\n");
    };
    if (code !== 0 || failed > 0) console.log(tail());
    expect({ code, failed, unexplained }).toEqual({ code: 0, failed: 0, unexplained: [] });
    expect(passed).toBeGreaterThanOrEqual(AT_LEAST_PASSING);
  },
  300_000,
);
