/**
 * The administration commands load what they use and nothing of `serve`: no ledger SDK, no gRPC,
 * no protobuf, no Elysia, not the anchor loop (so they start in tens of milliseconds
 * and work while the ledger is down). Each command runs as a process with a preload that lists
 * every module loaded by the time it exits (loaded-modules-probe.ts). A control run that does
 * import the ledger adapter shows the probe sees such modules.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BUN, ROOT, cleanup, tempDir } from "../support/env.ts";
import { buildReceipt, DOC_HASH, fakeMirror } from "../verifier/fixtures.ts";

afterAll(cleanup);

const PROBE = join(import.meta.dir, "loaded-modules-probe.ts");
const MAIN = join(ROOT, "src", "main.ts");

/** Packages of the ledger and of HTTP, and the terminal UI's. */
const FORBIDDEN_PACKAGES = /(?:^|\/)node_modules\/(?:@hashgraph|@hiero-ledger|@grpc|protobufjs|long|elysia|@elysiajs|swagger-ui-dist|@clack)\//;
/** Our modules that bring the loop, the SDK adapter, the ledger's set-up, HTTP or the app. */
const FORBIDDEN_SOURCES = /^src\/(?:http\/|app\.ts$|serve\.ts$|anchoring\/(?:anchorer|hedera-ledger|setup|index|load)\.ts$)/;

/** Runs `bun [--preload probe] ARGS` and returns the modules it loaded, src/ paths relative to the root. */
function loadedBy(args: string[], dir: string): { code: number | null; stderr: string; modules: string[] } {
  const out = join(dir, `modules-${Math.random().toString(36).slice(2)}.txt`);
  const p = Bun.spawnSync([BUN, "--preload", PROBE, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, USER: "tester", LOADED_MODULES_OUT: out },
    stdin: "ignore",
  });
  const modules = readFileSync(out, "utf8")
    .split("\n")
    .filter((m) => m !== "")
    .map((m) => (m.startsWith(ROOT + "/") ? m.slice(ROOT.length + 1) : m));
  return { code: p.exitCode, stderr: p.stderr.toString(), modules };
}

const forbidden = (modules: string[]) => modules.filter((m) => FORBIDDEN_PACKAGES.test(m) || FORBIDDEN_SOURCES.test(m));

describe("modules each admin command loads", () => {
  let data: string;
  let scratch: string;
  beforeAll(() => {
    data = tempDir("docverify-modules-");
    scratch = tempDir("docverify-modules-out-");
    const made = Bun.spawnSync([BUN, MAIN, "org", "create", "--name", "Acme Ltd", "--addon", "--data", data], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: scratch, USER: "tester" } });
    if (made.exitCode !== 0) throw new Error(`org create failed: ${made.stderr.toString()}`);
  });

  const cases: { name: string; args: () => string[]; loads: string[] }[] = [
    { name: "status", args: () => ["status", "--json", "--data", data], loads: ["src/app/core.ts", "src/admin/status.ts", "src/anchoring/queue.ts"] },
    { name: "org list", args: () => ["org", "list", "--json", "--data", data], loads: ["src/app/core.ts", "src/admin/cli.ts"] },
    { name: "key list", args: () => ["key", "list", "--json", "--data", data], loads: ["src/app/core.ts", "src/admin/cli.ts"] },
    { name: "backup", args: () => ["backup", join(scratch, "backup.db"), "--data", data], loads: ["src/admin/backup.ts"] },
    { name: "trust export", args: () => ["trust", "export", "--data", data], loads: ["src/app/core.ts", "src/admin/trust.ts", "src/receipts/identity.ts", "src/anchoring/links.ts"] },
  ];

  for (const c of cases) {
    test(`${c.name}: no ledger SDK, gRPC, protobuf, Elysia or anchor loop`, () => {
      const run = loadedBy([MAIN, ...c.args()], scratch);
      expect({ code: run.code, stderr: run.stderr }).toMatchObject({ code: 0 });
      // The probe saw the command run: its modules are there (the entry point itself is not listed).
      for (const m of c.loads) expect(run.modules).toContain(m);
      expect(forbidden(run.modules)).toEqual([]);
    }, 30_000);
  }

  test("verify-receipt: the verifier alone, nothing of the appliance beyond what every command loads", async () => {
    // A full, verified run against two fake mirror nodes on two hosts (test/verifier/fixtures.ts),
    // and only those: the built-in ones of the receipt's network (testnet) are not reached from here.
    const built = buildReceipt();
    const mirrors = [fakeMirror(built.ledger), fakeMirror(built.ledger)];
    const receipt = join(scratch, "receipt.json");
    await Bun.write(receipt, JSON.stringify(built.receipt));
    const args = [MAIN, "verify-receipt", receipt, "--hash", DOC_HASH, ...mirrors.flatMap((m) => ["--mirror", m.url]), "--no-builtin-mirrors"];
    // Spawned asynchronously: the fake mirrors answer from this process meanwhile.
    const out = join(scratch, "modules-verify.txt");
    const p = Bun.spawn([BUN, "--preload", PROBE, ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: scratch, USER: "tester", LOADED_MODULES_OUT: out }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const [stdout, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
    // The verdict's wording is the renderer's (test/verifier); here, that the run went all the way.
    expect({ code, verdict: stdout.split("\n")[0]!.split(" (")[0] }).toEqual({ code: 0, verdict: "Verdict: verified_org" });
    const modules = readFileSync(out, "utf8")
      .split("\n")
      .filter((m) => m !== "")
      .map((m) => (m.startsWith(ROOT + "/") ? m.slice(ROOT.length + 1) : m));
    expect(modules).toContain("src/verifier/cli.ts");
    expect(modules).toContain("src/verifier/verify.ts");
    expect(modules.some((m) => m.includes("node_modules/@noble/post-quantum/"))).toBe(true);
    expect(forbidden(modules)).toEqual([]);
    expect(modules.filter((m) => /drizzle-orm|bun:sqlite|src\/(?:storage\/db|core)\.ts$/.test(m))).toEqual([]);
    // Of src/, only what `docverify --version` loads too (main.ts's own imports), and the verifier.
    const baseline = new Set(loadedBy([MAIN, "--version"], scratch).modules);
    expect(modules.filter((m) => m.startsWith("src/") && !baseline.has(m) && !m.startsWith("src/verifier/"))).toEqual([]);
  }, 30_000);

  test("control: the probe does see the SDK and the loop when they are loaded", () => {
    const run = loadedBy(["-e", 'await import("./src/anchoring/index.ts"); await (await import("./src/anchoring/load.ts")).loadHederaLedger()'], scratch);
    expect({ code: run.code, stderr: run.stderr }).toMatchObject({ code: 0 });
    const seen = forbidden(run.modules);
    expect(seen.some((m) => m.includes("node_modules/@hashgraph/sdk/"))).toBe(true);
    expect(seen.some((m) => m.includes("node_modules/@grpc/grpc-js/"))).toBe(true);
    expect(seen.some((m) => m.includes("node_modules/elysia/"))).toBe(false); // the loop does not bring HTTP
    expect(seen).toContain("src/anchoring/anchorer.ts");
  }, 30_000);
});
