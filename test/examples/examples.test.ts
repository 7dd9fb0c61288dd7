/**
 * examples/ as a user runs them: each program copied into a folder of its own, pointed at a live
 * service with DOCVERIFY_URL and a live key with records:write and records:revoke, and run with
 * its own toolchain (bash and curl, Bun and Node.js, python3, go). Each must exit 0 having printed
 * every step, leave the receipt it saved, and leave the record revoked on the server; each must
 * exit 1, saying why, when the key is refused.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUN, ROOT, cleanup, tempDir } from "../support/env.ts";
import { requireProgram } from "../support/programs.ts";
import { startServiceWithOrg, type ServiceWithOrg } from "../support/service-with-org.ts";

afterAll(cleanup);

let service: ServiceWithOrg;
beforeAll(async () => {
  service = await startServiceWithOrg({ revoke: true, orgName: "Examples Ltd" });
}, 60_000);

const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";

/** The Go toolchain offline, its module and build caches in one folder for every Go run of this file. */
let goHome: string | null = null;
function goEnv(): Record<string, string> {
  goHome ??= tempDir("docverify-go-");
  return { GOPATH: join(goHome, "gopath"), GOCACHE: join(goHome, "cache"), GOFLAGS: "-mod=mod", GOPROXY: "off", GOTOOLCHAIN: "local" };
}

interface Example {
  readonly name: string;
  /** The folder of examples/ a user copies. */
  readonly folder: string;
  /** The command line in that folder, given the document argument (if any). */
  command(args: string[]): string[];
  env?(): Record<string, string>;
}

const EXAMPLES: readonly Example[] = [
  { name: "curl (bash)", folder: "curl", command: (args) => [requireProgram("bash"), "scenario.sh", ...args] },
  { name: "TypeScript on Bun", folder: "typescript", command: (args) => [BUN, "scenario.ts", ...args] },
  { name: "Python", folder: "python", command: (args) => [requireProgram("python3"), "scenario.py", ...args] },
  { name: "Go", folder: "go", command: (args) => [requireProgram("go"), "run", ".", ...args], env: goEnv },
];

/** Copies examples/FOLDER into a new folder and runs the example there, as its user would. */
async function run(example: Example, options: { args?: string[]; key?: string; cwd?: string } = {}) {
  const cwd = options.cwd ?? tempDir("docverify-example-");
  cpSync(join(ROOT, "examples", example.folder), cwd, { recursive: true });
  const proc = Bun.spawn(example.command(options.args ?? []), {
    cwd,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: cwd,
      DOCVERIFY_URL: service.svc.url,
      DOCVERIFY_API_KEY: options.key ?? service.key,
      ...example.env?.(),
    },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr, cwd };
}

/** What every successful run shows, and the state it leaves: the receipt beside it, the record revoked. */
async function expectWholeScenario(r: { code: number; stdout: string; stderr: string; cwd: string }, expectedHash?: string): Promise<void> {
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
  const out = r.stdout;
  const hash = new RegExp(`^document: (sha256:[0-9a-f]{64}) \\(`, "m").exec(out)?.[1];
  expect(hash, out).toBeDefined();
  if (expectedHash !== undefined) expect(hash).toBe(expectedHash);
  const recordId = new RegExp(`^create: 201 record (${UUID}) \\(anchorState pending\\)$`, "m").exec(out)?.[1];
  expect(recordId, out).toBeDefined();
  const verificationId = new RegExp(`^verify: verified_org \\(verification (${UUID})\\)$`, "m").exec(out)?.[1];
  expect(verificationId, out).toBeDefined();
  expect(out).toContain(`\nlog: verification ${verificationId} found on the first page\n`);
  const saved = `docverify-receipt-${recordId}.json`;
  expect(out).toMatch(new RegExp(`^receipt: saved ${saved} \\(\\d+ bytes\\)$`, "m"));
  expect(out).toMatch(/^revoke: 200 \(reason SUPERSEDED\)$/m);
  expect(out).toMatch(/^verify: revoked$/m);
  expect(out).toEndWith(`done: record ${recordId} created, verified, logged, receipted and revoked\n`);
  // The steps in their order.
  const order = ["document:", "create:", "verify: verified_org", "log:", "receipt:", "revoke:", "verify: revoked", "done:"].map((s) => out.indexOf(s));
  expect(order).toEqual([...order].sort((a, b) => a - b));

  const receipt = JSON.parse(readFileSync(join(r.cwd, saved), "utf8")) as { recordId: string; originalDocHash: string };
  expect({ recordId: receipt.recordId, originalDocHash: receipt.originalDocHash }).toEqual({ recordId: recordId!, originalDocHash: hash! });
  // On the server: anyone verifying the hash is told it is revoked.
  const res = await fetch(`${service.svc.url}/v1/verifications`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ originalDocHash: hash }) });
  expect(res.status).toBe(200);
  const verification = (await res.json()) as { verdict: string; matches: { recordId: string; revocation?: { reason: string } }[] };
  expect(verification.verdict).toBe("revoked");
  expect(verification.matches.find((m) => m.recordId === recordId)?.revocation?.reason).toBe("SUPERSEDED");
}

describe("examples/", () => {
  for (const example of EXAMPLES) {
    test(`${example.name}: create, verified_org, the log, the receipt, revoke, revoked`, async () => {
      await expectWholeScenario(await run(example));
    }, 120_000);
  }

  test("with a document as the argument, the record is of that document's hash", async () => {
    const cwd = tempDir("docverify-example-");
    const document = join(cwd, "contract.txt");
    writeFileSync(document, `a contract ${crypto.randomUUID()}\n`);
    const hash = `sha256:${new Bun.CryptoHasher("sha256").update(readFileSync(document)).digest("hex")}`;
    const r = await run(EXAMPLES[0]!, { args: [document], cwd });
    expect(r.stdout).toStartWith(`document: ${hash} (contract.txt)\n`);
    await expectWholeScenario(r, hash);
  }, 120_000);

  test("the TypeScript example runs on Node.js 20 as well (its types stripped, as tsx does)", async () => {
    const cwd = tempDir("docverify-example-");
    const js = new Bun.Transpiler({ loader: "ts" }).transformSync(readFileSync(join(ROOT, "examples", "typescript", "scenario.ts"), "utf8"));
    writeFileSync(join(cwd, "scenario.mjs"), js);
    await expectWholeScenario(await run({ name: "TypeScript on Node.js", folder: "typescript", command: () => ["node", "scenario.mjs"] }, { cwd }));
  }, 120_000);

  test("a refused key: each exits 1 and says which step got which answer, and saves nothing", async () => {
    const refused = "dv_live_" + "A".repeat(54);
    const results = await Promise.all(EXAMPLES.map((example) => run(example, { key: refused })));
    for (const [i, r] of results.entries()) {
      expect({ example: EXAMPLES[i]!.name, code: r.code }).toEqual({ example: EXAMPLES[i]!.name, code: 1 });
      expect(r.stderr).toMatch(/^error: create: HTTP 401 UNAUTHENTICATED: \S/m);
      expect(r.stderr).not.toContain(refused);
      expect(r.stdout).not.toContain("create:");
      expect(readdirSync(r.cwd).filter((f) => f.startsWith("docverify-receipt-"))).toEqual([]);
    }
  }, 120_000);
});
