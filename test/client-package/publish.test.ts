/**
 * @docverify/client as an integrator gets it: `npm pack` (which builds it), the tarball installed
 * offline into a fresh project (the package has no dependency), a strict TypeScript 5 program
 * type-checked against the published declarations (no skipLibCheck, Node's own module resolution),
 * compiled, and run under Node.js against a live `docverify serve`.
 */
import { afterAll, expect, test } from "bun:test";
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, cleanup, tempDir } from "../support/env.ts";
import { startServiceWithOrg } from "../support/service-with-org.ts";

afterAll(cleanup);

const PACKAGE = join(ROOT, "packages", "client");
const TSC5 = join(ROOT, "node_modules", "typescript5", "bin", "tsc");

/**
 * Runs a command to its end without blocking: the service starting meanwhile is watched by this
 * process's event loop (its log lines, its start deadline), which a synchronous spawn would stall.
 */
async function run(cmd: string[], cwd: string, env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  // ROOT/node_modules/.bin on PATH: `npm pack` runs the package's build, which needs bun.
  const p = Bun.spawn(cmd, { cwd, env: { PATH: `${join(ROOT, "node_modules", ".bin")}:${process.env.PATH ?? "/usr/bin:/bin"}`, HOME: env.HOME!, ...env }, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out, err };
}

function program(url: string, key: string, hash: string): string {
  return `import { createClient, DocverifyError, ERROR_CODES, type ErrorCode, type Record, type Verdict, type Verification } from "@docverify/client";

const client = createClient({ url: ${JSON.stringify(url)}, apiKey: ${JSON.stringify(key)} });
const { record, created }: { record: Record; created: boolean } = await client.createRecord({ originalDocHash: ${JSON.stringify(hash)}, filename: "invoice.pdf" });
const verified: Verification = await client.waitForVerdict(record.originalDocHash, { until: ["verified_org"], timeoutMs: 60_000 });
const { receipt, text } = await client.receipt(record.recordId, { public: true });
await client.revokeRecord(record.recordId, "SUPERSEDED");
let refusal: ErrorCode | string = "none";
try {
  await client.revokeRecord(record.recordId, "SUPERSEDED");
} catch (e) {
  if (e instanceof DocverifyError) refusal = e.code;
}
const after: Verdict = (await client.verify(record.originalDocHash)).verdict;
console.log(JSON.stringify({ created, recordId: record.recordId, verdict: verified.verdict, sequenceNumber: verified.matches[0]?.anchor.sequenceNumber, receiptRecordId: receipt.recordId, textLength: text.length, refusal, after, codes: ERROR_CODES.length }));
`;
}

test(
  "npm pack builds the package; installed offline into a fresh project it type-checks under strict TypeScript 5 and runs under Node.js",
  async () => {
    const service = startServiceWithOrg({ revoke: true, env: { DOCVERIFY_LOCAL_LEDGER_CONSENSUS_MS: "1000" } });
    service.catch(() => {}); // awaited below; a failure meanwhile is reported there
    const work = tempDir("docverify-client-pack-");
    const env = { HOME: work, npm_config_cache: join(work, "npm-cache"), npm_config_update_notifier: "false" };

    const pack = await run(["npm", "pack", "--json", "--pack-destination", work], PACKAGE, env);
    expect(pack.err).not.toContain("ERR!");
    expect(pack.code).toBe(0);
    const [packed] = JSON.parse(pack.out.slice(pack.out.indexOf("["))) as { filename: string; files: { path: string }[] }[];
    const files = packed!.files.map((f) => f.path).sort();
    expect(files).toEqual(expect.arrayContaining(["README.md", "dist/index.d.ts", "dist/index.js", "dist/openapi.d.ts", "package.json"]));
    expect(files.filter((f) => !f.startsWith("dist/") && !["README.md", "package.json"].includes(f))).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(PACKAGE, "package.json"), "utf8")) as { version: string; dependencies?: unknown };
    expect(manifest.dependencies).toBeUndefined();

    const consumer = join(work, "consumer");
    mkdirSync(consumer);
    writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
    const install = await run(["npm", "install", "--offline", "--no-audit", "--no-fund", join(work, packed!.filename)], consumer, env);
    expect(install.err).not.toContain("ERR!");
    expect(install.code).toBe(0);
    writeFileSync(
      join(consumer, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", lib: ["ES2022", "DOM"], types: [], strict: true, skipLibCheck: false, outDir: "out" },
        files: ["main.ts"],
      }),
    );

    // The types refuse a wrong program: a verdict that does not exist, a reason outside the set.
    writeFileSync(join(consumer, "main.ts"), `import { createClient, type Verdict } from "@docverify/client";\nconst v: Verdict = "maybe";\nawait createClient({ url: "http://x" }).revokeRecord("r", "because");\nexport { v };\n`);
    const wrong = await run(["node", TSC5, "-p", "."], consumer, env);
    expect(wrong.code).not.toBe(0);
    expect(wrong.out).toContain(`'"maybe"'`);
    expect(wrong.out).toContain(`'"because"'`);

    // The README's quick start, as written, type-checks in a Node.js project: @types/node (copied
    // from the checkout: offline) and no DOM lib, as the README says suffices.
    for (const dep of ["@types/node", "undici-types"]) cpSync(join(ROOT, "node_modules", dep), join(consumer, "node_modules", dep), { recursive: true });
    const readme = readFileSync(join(PACKAGE, "README.md"), "utf8");
    const quickStart = /## Quick start\n\n```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(quickStart).toContain("createClient");
    writeFileSync(join(consumer, "quick-start.ts"), quickStart!);
    writeFileSync(
      join(consumer, "tsconfig.readme.json"),
      JSON.stringify({
        compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", lib: ["ES2022"], types: ["node"], strict: true, skipLibCheck: false, noEmit: true },
        files: ["quick-start.ts"],
      }),
    );
    const quick = await run(["node", TSC5, "-p", "tsconfig.readme.json"], consumer, env);
    expect(quick.out + quick.err).toBe("");
    expect(quick.code).toBe(0);

    const { svc, key } = await service;
    const hash = "sha256:" + "b7".repeat(32);
    writeFileSync(join(consumer, "main.ts"), program(svc.url, key, hash));
    const checked = await run(["node", TSC5, "-p", "."], consumer, env);
    expect(checked.out + checked.err).toBe("");
    expect(checked.code).toBe(0);

    const ran = await run(["node", join("out", "main.js")], consumer, env);
    expect(ran.err).toBe("");
    expect(ran.code).toBe(0);
    const outcome = JSON.parse(ran.out) as Record<string, unknown>;
    expect(outcome).toMatchObject({ created: true, verdict: "verified_org", refusal: "ALREADY_REVOKED", after: "revoked", codes: 17 });
    expect(outcome.receiptRecordId).toBe(outcome.recordId);
    expect(outcome.sequenceNumber).toBeNumber();
    await svc.stop();
  },
  180_000,
);
