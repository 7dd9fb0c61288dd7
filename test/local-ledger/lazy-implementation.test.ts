/**
 * serve's thread imports the local ledger's index.ts, keys.ts, remembered.ts and thread.ts (through
 * anchoring/setup.ts) but runs the ledger on its worker thread: importing them must not evaluate
 * the ledger's implementation (open.ts and what it imports: gRPC, the mirror, the store) nor
 * @hashgraph/proto, which would sit in serve's idle memory for nothing (docs/benchmarks.md, "Idle
 * memory"). The first start loads them. Each case runs in a fresh process, whose module registry
 * (`require.cache`, which lists ES modules too) says what was evaluated.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const SRC = join(import.meta.dir, "..", "..", "src");
/** Modules that only a started ledger needs. */
const IMPLEMENTATION = [/\/src\/local-ledger\/open\.ts$/, /\/src\/local-ledger\/grpc\.ts$/, /\/src\/local-ledger\/mirror\.ts$/, /\/src\/local-ledger\/store\.ts$/, /\/src\/local-ledger\/key-codec\.ts$/, /@hashgraph\/proto\//];

/** Runs `body` after the light imports in a fresh process; returns the evaluated modules it prints. */
async function evaluatedIn(body: string): Promise<string[]> {
  const code = `
    await import(${JSON.stringify(join(SRC, "local-ledger", "index.ts"))});
    await import(${JSON.stringify(join(SRC, "local-ledger", "keys.ts"))});
    await import(${JSON.stringify(join(SRC, "local-ledger", "remembered.ts"))});
    await import(${JSON.stringify(join(SRC, "local-ledger", "thread.ts"))});
    ${body}
    process.stdout.write(JSON.stringify(Object.keys(require.cache)));
  `;
  const proc = Bun.spawn([process.execPath, "-e", code], { cwd: join(SRC, ".."), stdout: "pipe", stderr: "pipe" });
  const [out, err, exit] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (exit !== 0) throw new Error(`the probe exited with ${exit}: ${err}`);
  return JSON.parse(out) as string[];
}

const implementationIn = (modules: string[]) => modules.filter((m) => IMPLEMENTATION.some((re) => re.test(m)));

test("importing the local ledger's entry points evaluates none of its implementation", async () => {
  const modules = await evaluatedIn("");
  // The probe sees what it imported: the check below is not vacuous.
  expect(modules.some((m) => m.endsWith("/src/local-ledger/index.ts"))).toBe(true);
  expect(modules.some((m) => m.endsWith("/src/local-ledger/remembered.ts"))).toBe(true);
  expect(implementationIn(modules)).toEqual([]);
}, 20_000);

test("the first start loads the implementation, and the ledger works", async () => {
  const dir = mkdtempSync(join(tmpdir(), "docverify-lazy-ledger-"));
  try {
    const modules = await evaluatedIn(`
      const { startLedger } = await import(${JSON.stringify(join(SRC, "local-ledger", "index.ts"))});
      const ledger = await startLedger({ dataDir: ${JSON.stringify(dir)} });
      const res = await fetch(ledger.mirrorUrl + "/api/v1/network/nodes");
      if (res.status !== 200) throw new Error("the mirror answered " + res.status);
      await res.arrayBuffer();
      await ledger.close();
    `);
    const loaded = implementationIn(modules);
    expect(loaded.some((m) => m.endsWith("/src/local-ledger/open.ts"))).toBe(true);
    expect(loaded.some((m) => /@hashgraph\/proto\//.test(m))).toBe(true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 20_000);
