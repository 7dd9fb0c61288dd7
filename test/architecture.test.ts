/**
 * Imports go one way (../shared/style.md): capabilities never import http/ or admin/, each
 * vendor library lives in one folder, and lib/ imports nothing from src/. This test reads
 * the import lines of src/ and fails on a forbidden edge.
 */
import { expect, test } from "bun:test";
import { dirname, join, relative, resolve } from "node:path";
import { ROOT } from "./support/env.ts";

const SRC = join(ROOT, "src");
const CAPABILITIES = ["verification", "records", "anchoring", "keys", "crypto", "storage", "config", "lib"];

/** Vendor module prefix → the only src/ paths allowed to import it. */
const VENDORS: [RegExp, string[]][] = [
  [/^elysia$|^@elysiajs\//, ["http/"]],
  [/^@hashgraph\/sdk/, ["anchoring/hedera-ledger.ts"]],
  [/^@hashgraph\/proto|^@grpc\//, ["local-ledger/"]],
  [/^@noble\//, ["crypto/"]],
  [/^drizzle-orm/, ["storage/", "keys/", "records/", "verification/", "anchoring/"]],
  [/^swagger-ui-dist/, ["http/"]],
  [/^@clack\//, ["admin/"]],
];

async function sources(): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for await (const file of new Bun.Glob("**/*.ts").scan({ cwd: SRC })) files.set(file, await Bun.file(join(SRC, file)).text());
  return files;
}

function importsOf(files: Map<string, string>): { file: string; spec: string }[] {
  const edges: { file: string; spec: string }[] = [];
  for (const [file, text] of files) {
    for (const m of text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+["']([^"']+)["']|^\s*import\s+["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/gm)) {
      edges.push({ file, spec: (m[1] ?? m[2] ?? m[3])! });
    }
  }
  return edges;
}

function forbiddenEdges(files: Map<string, string>): string[] {
  const edges = importsOf(files);
  const bad: string[] = [];
  for (const { file, spec } of edges) {
    const area = file.split("/")[0]!;
    if (spec.startsWith(".")) {
      const target = relative(SRC, resolve(dirname(join(SRC, file)), spec));
      const targetArea = target.split("/")[0]!;
      if (CAPABILITIES.includes(area) && (targetArea === "http" || targetArea === "admin")) bad.push(`${file} → ${spec} (capabilities never import http/ or admin/)`);
      if (area === "lib" && targetArea !== "lib") bad.push(`${file} → ${spec} (lib/ imports nothing from src/)`);
      continue;
    }
    for (const [pattern, allowed] of VENDORS) {
      if (pattern.test(spec) && !allowed.some((a) => file === a || file.startsWith(a))) bad.push(`${file} → ${spec} (only ${allowed.join(", ")} may import it)`);
    }
  }
  return bad;
}

test("no forbidden import edge in src/", async () => {
  const files = await sources();
  expect(importsOf(files).length).toBeGreaterThan(10);
  expect(forbiddenEdges(files)).toEqual([]);
});

test("signing APIs of node:crypto are used only in crypto/", async () => {
  const offenders: string[] = [];
  for await (const file of new Bun.Glob("**/*.ts").scan({ cwd: SRC })) {
    if (file.startsWith("crypto/")) continue;
    const text = await Bun.file(join(SRC, file)).text();
    if (/import\s*\{[^}]*\b(sign|verify|generateKeyPair|generateKeyPairSync|createSign|createVerify)\b[^}]*\}\s*from\s*["']node:crypto["']/.test(text)) offenders.push(file);
  }
  expect(offenders).toEqual([]);
});

test("the checker catches each kind of forbidden edge", () => {
  const files = new Map([
    ["records/service.ts", 'import { Elysia } from "elysia";\nimport { x } from "../http/server.ts";'],
    ["keys/keys.ts", 'export { y } from "../admin/cli.ts";\nimport { ml_dsa65 } from "@noble/post-quantum/ml-dsa.js";'],
    ["lib/util.ts", 'import type { Db } from "../storage/db.ts";'],
    ["anchoring/anchorer.ts", 'const sdk = await import("@hashgraph/sdk");'],
  ]);
  expect(forbiddenEdges(files)).toEqual([
    "records/service.ts → elysia (only http/ may import it)",
    "records/service.ts → ../http/server.ts (capabilities never import http/ or admin/)",
    "keys/keys.ts → ../admin/cli.ts (capabilities never import http/ or admin/)",
    "keys/keys.ts → @noble/post-quantum/ml-dsa.js (only crypto/ may import it)",
    "lib/util.ts → ../storage/db.ts (lib/ imports nothing from src/)",
    "anchoring/anchorer.ts → @hashgraph/sdk (only anchoring/hedera-ledger.ts may import it)",
  ]);
});

/**
 * `expect(promise).rejects…` / `.resolves…` asserts nothing unless awaited (or returned): the
 * test finishes first and a failure lands nowhere. Statements that start with `expect(` and
 * reach `.rejects`/`.resolves` are the unawaited ones.
 */
export function unawaitedPromiseExpectations(text: string): number[] {
  const lines = text.split("\n");
  const found: number[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.trimStart().startsWith("expect(")) continue;
    let statement = "";
    for (let j = i; j < Math.min(lines.length, i + 12); j++) {
      statement += lines[j] + "\n";
      if (lines[j]!.trimEnd().endsWith(";")) break;
    }
    if (/\)\s*\.\s*(?:rejects|resolves)\b/.test(statement)) found.push(i + 1);
  }
  return found;
}

test("every promise expectation in test/ is awaited", async () => {
  const offenders: string[] = [];
  for await (const file of new Bun.Glob("**/*.ts").scan({ cwd: join(ROOT, "test") })) {
    for (const line of unawaitedPromiseExpectations(await Bun.file(join(ROOT, "test", file)).text())) offenders.push(`test/${file}:${line}`);
  }
  expect(offenders).toEqual([]);
  // The checker itself: one bad statement of each shape, and the awaited forms pass.
  const sample = ["  E(p).rejects.toThrow();", "  await E(p).rejects.toThrow();", "  return E(p).resolves.toBe(1);", "  E(", "    f(),", "  ).resolves.toBe(2);"].join("\n");
  expect(unawaitedPromiseExpectations(sample.replaceAll("E(", "expect("))).toEqual([1, 4]);
});
