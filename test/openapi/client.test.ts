/**
 * A typed client from the served document, as docs/clients.md tells a client developer to make
 * one: openapi-typescript (which needs TypeScript 5's compiler API, hence the `typescript5`
 * alias beside the project's TypeScript 7) generates the types, openapi-fetch calls the API.
 * The scenario (client-scenario.ts.txt) is type-checked against the generated types with
 * TypeScript 5's tsc, then run with bun against a live `docverify serve`, so that the types are
 * proven against real answers.
 */
import { afterAll, expect, test } from "bun:test";
import { readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { BUN, ROOT, cleanup, tempDir, testApp } from "../support/env.ts";
import { startServiceWithOrg } from "../support/service-with-org.ts";

afterAll(cleanup);

const NODE_ENV = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp" };

/**
 * Makes a folder as a client project would have: the served document, the generated types, and
 * node_modules (the checkout's). Generation runs openapi-typescript's own command under node
 * with a resolve hook that gives it TypeScript 5 for `typescript` (docs/clients.md).
 */
async function clientProject(): Promise<string> {
  const dir = tempDir("docverify-client-");
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  const { request } = await testApp();
  writeFileSync(join(dir, "openapi.json"), await (await request("/v1/openapi.json")).text());
  writeFileSync(
    join(dir, "typescript5.mjs"),
    `import { register } from "node:module";
register("data:text/javascript," + encodeURIComponent(\`export async function resolve(specifier, context, next) {
  return next(specifier === "typescript" ? ${JSON.stringify(pathToFileURL(join(ROOT, "node_modules", "typescript5", "lib", "typescript.js")).href)} : specifier, context);
}\`));
`,
  );
  const gen = Bun.spawnSync(["node", "--import", "./typescript5.mjs", join("node_modules", "openapi-typescript", "bin", "cli.js"), "openapi.json", "-o", "api.d.ts"], { cwd: dir, env: NODE_ENV });
  expect(gen.stderr.toString() + gen.stdout.toString()).toContain("api.d.ts");
  expect(gen.exitCode).toBe(0);
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: { target: "ES2022", module: "ESNext", moduleResolution: "bundler", lib: ["ES2022", "DOM"], types: [], strict: true, noEmit: true, skipLibCheck: true },
      files: ["scenario.ts"],
    }),
  );
  return dir;
}

function typecheck(dir: string, source: string): { code: number | null; out: string } {
  writeFileSync(join(dir, "scenario.ts"), source);
  const p = Bun.spawnSync(["node", join("node_modules", "typescript5", "bin", "tsc"), "-p", "."], { cwd: dir, env: NODE_ENV });
  return { code: p.exitCode, out: p.stdout.toString() + p.stderr.toString() };
}

test(
  "openapi-typescript generates named, exact types; a scenario type-checks against them and runs against a live service",
  async () => {
    // The service starts first: it creates the organisation's topic and announces its key on the
    // ledger (a consensus each, before the scenario's record can have its own) while the client
    // project is generated and type-checked. Consensus in a second rather than the local ledger's
    // default three: the scenario still polls several times before verified_org, and pages that
    // log two at a time.
    const service = startServiceWithOrg({ revoke: true, env: { DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: "1000" } });
    service.catch(() => {}); // awaited below; a failure meanwhile is reported there, not as unhandled
    const dir = await clientProject();
    const types = readFileSync(join(dir, "api.d.ts"), "utf8");
    for (const name of ["Verification", "VerificationSummary", "Match", "Record", "Error", "Receipt"]) expect(types).toMatch(new RegExp(`\\n\\s+${name}: \\{`));
    expect(types).toContain('verdict: "verified" | "verified_org" | "revoked" | "signature_invalid" | "pending_anchor" | "no_record"');
    expect(types).toMatch(/sequenceNumber: number;/);
    expect(types).not.toMatch(/string \| number/);
    expect(types).toMatch(/nextCursor: string \| null;/);

    const scenario = readFileSync(join(import.meta.dir, "client-scenario.ts.txt"), "utf8");
    const checked = typecheck(dir, scenario);
    expect(checked.out).toBe("");
    expect(checked.code).toBe(0);

    // The types are exact enough to refuse a wrong program: a verdict that does not exist, a
    // sequence number read as a string, a revocation reason outside the set.
    const wrong = typecheck(
      dir,
      `import type { components } from "./api";
const v: components["schemas"]["Verification"]["verdict"] = "maybe";
declare const a: components["schemas"]["MatchAnchor"];
const s: string = a.sequenceNumber;
const r: components["schemas"]["RevokeRequest"] = { reason: "because" };
export { v, s, r };
`,
    );
    expect(wrong.code).not.toBe(0);
    expect(wrong.out).toContain(`'"maybe"'`);
    expect(wrong.out).toContain("Type 'number' is not assignable to type 'string'");
    expect(wrong.out).toContain(`'"because"'`);

    // Run: the scenario as checked above (put back in place of the wrong program), with bun,
    // against `docverify serve`.
    writeFileSync(join(dir, "scenario.ts"), scenario);
    const { svc, key } = await service;
    const hash = "sha256:" + "c1".repeat(32);
    writeFileSync(
      join(dir, "run.ts"),
      `import { scenario } from "./scenario.ts";\nconsole.log(JSON.stringify(await scenario(${JSON.stringify(svc.url)}, ${JSON.stringify(key)}, ${JSON.stringify(hash)})));\n`,
    );
    const run = Bun.spawn([BUN, "run.ts"], { cwd: dir, env: NODE_ENV, stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited]);
    expect(err).toBe("");
    expect(code).toBe(0);
    const outcome = JSON.parse(out) as Record<string, any>;
    expect(outcome.created).toBe(201);
    expect(outcome.record.originalDocHash).toBe(hash);
    expect(outcome.verified).toMatchObject({ verdict: "verified_org", disclosureTier: "organisation", environment: "live", originalDocHash: hash });
    expect(outcome.verified.matches[0].anchor.sequenceNumber).toBeNumber();
    // Every poll was logged; pages of two, the last with a null cursor.
    expect(outcome.logged.length).toBeGreaterThanOrEqual(1);
    expect(outcome.pages).toBe(Math.max(1, Math.ceil(outcome.logged.length / 2)));
    expect(outcome.pages).toBeGreaterThan(1);
    expect(new Set(outcome.logged.map((l: { verificationId: string }) => l.verificationId)).size).toBe(outcome.logged.length);
    expect(outcome.revoked).toEqual({ recordId: outcome.record.recordId });
    expect(outcome.refusal).toBe("ALREADY_REVOKED");
    expect(outcome.receipt).toMatchObject({ v: 1, recordId: outcome.record.recordId, originalDocHash: hash, kind: "record_only", revocation: "SUPERSEDED" });
    expect(outcome.receipt.sequenceNumber).toBe(outcome.verified.matches[0].anchor.sequenceNumber);
    expect(outcome.after).toBe("revoked");
    await svc.stop();
  },
  180_000,
);
